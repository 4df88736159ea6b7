"""GitHub Classroom's runner result, rendered from the canonical results dict.

Classroom's reporter (``classroom-resources/autograding-grading-reporter``)
reads, for each runner id listed in its ``runners`` input, the environment
variable ``<RUNNER_ID>_RESULTS`` (the id in capitals): base64 of a JSON object
with ``version``, ``status`` ("pass", "fail" or "error"), ``max_score`` and
``tests`` (each with ``name``, ``status``, ``score``, ``max_score``, ``message``,
...). It adds up the tests' scores against ``max_score`` and shows
"Points X/Y". The student workflow writes this module's output to the grading
step's ``result`` output.
"""

from __future__ import annotations

import base64
import json

from graders import messages as msg
from graders.judge.grade import ERROR, PASSED, SKIPPED
from graders.results.plain import safe_result
from graders.tasks import BY_ID

VERSION = 1


def _status(test: dict) -> str:
    return test.get("extra_data", {}).get("status", test.get("status", ""))


def payload(result: dict) -> dict:
    """The runner result as a dict; skipped tasks (6.2 without CUDA) are left out, as they carry no points."""
    result = safe_result(result)
    tests = []
    for test in result["tests"]:
        status = _status(test)
        if status == SKIPPED:
            continue
        task = BY_ID.get(test["number"])
        tests.append({
            "name": test["name"],
            "status": "pass" if status == PASSED else "error" if status == ERROR else "fail",
            "score": test["score"],
            "max_score": test["max_score"],
            "message": test["output"],
            "test_code": msg.CLASSROOM_TEST_CODE.format(task=test["number"]),
            "filename": f"exercises/{task.module}.py" if task else "",
            "line_no": None,
            "execution_time": None,  # the canonical result holds no timings, so this output is reproducible
        })
    statuses = {t["status"] for t in tests}
    overall = "error" if "error" in statuses else "fail" if "fail" in statuses else "pass"
    max_score = result.get("extra_data", {}).get("max_score", sum(t["max_score"] for t in tests))
    return {"version": VERSION, "status": overall, "max_score": max_score, "tests": tests}


def runner_result(result: dict) -> str:
    """One line: the base64 of the runner result's JSON, for ``echo "result=$(cat FILE)" >> $GITHUB_OUTPUT``."""
    text = json.dumps(payload(result), sort_keys=True, separators=(",", ":"))
    return base64.b64encode(text.encode()).decode() + "\n"


def decode(line: str) -> dict:
    """What the reporter reads back from a runner result."""
    return json.loads(base64.b64decode(line.strip()))


def points(line: str) -> tuple[float, float]:
    """The reporter's "Points X/Y": the sum of the tests' scores and the max_score."""
    data = decode(line)
    return sum(t["score"] for t in data["tests"]), data["max_score"]
