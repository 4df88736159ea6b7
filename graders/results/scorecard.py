"""The canonical result (Gradescope's results.json schema) and every view rendered from it.

The results dict holds nothing that varies between runs (no timings), so the
same submission always gives byte-identical files.
"""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree as ET

from graders import messages as msg
from graders.judge.grade import FAILED, PASSED, SKIPPED, Report
from graders.results import mistakes
from graders.results.plain import safe, safe_result


def results(report: Report) -> dict:
    """Gradescope's schema: top-level score; tests with name, number, score, max_score, status, output."""
    tests = []
    for r in report.results:
        test = {"name": f"{r.task.id} {r.task.title}", "number": r.task.id, "score": r.score,
                "max_score": r.max_score, "output": safe(r.message), "extra_data": {"status": r.status}}
        if r.status == FAILED:  # what the message says went wrong, for the class report (graders.results.mistakes)
            reading = mistakes.read(r.message)
            test["extra_data"].update(rung=reading.rung, mistakes=list(reading.mistakes))
        if r.status != SKIPPED:
            test["status"] = "passed" if r.status == PASSED else "failed"
        tests.append(test)
    versions = " · ".join(f"{k} {v}" for k, v in report.versions.items())
    key = "derandomized" if report.key is None else report.key_shown or f"key {report.key}"
    return {
        "score": report.score,
        "output": f"{versions} · examples: {key} · isolation: {report.isolation}",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"max_score": report.max_score, "examples": report.examples, "isolation": report.level},
    }


def dumps(result: dict) -> str:
    """results.json's text: every string in it ``safe`` (a JSON parser may refuse an escaped lone surrogate)."""
    return json.dumps(safe_result(result), indent=2, sort_keys=True) + "\n"


def _reason(test: dict) -> str:
    """The message's first line without its "Task X.Y (title): " head (a title may hold "): " itself, as
    "backward(): ..." does)."""
    first = test["output"].splitlines()[0] if test["output"] else ""
    title = test["name"].split(" ", 1)[1] if " " in test["name"] else ""
    for head in (f"Task {test['number']} ({title}): ", f"Task {test['number']}: ", f"Task {test['number']} "):
        if first.startswith(head):
            first = first[len(head):]
            break
    return first.removeprefix("not attempted yet: ")


def _not_graded(test: dict) -> str:
    """What a passed task's message says was not graded, here or anywhere (its lines after the first), or ""."""
    lines = test["output"].splitlines()[1:] if test["output"] else []
    return "; ".join(line.strip() for line in lines)


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at a space (never inside a word), with "…" where cut."""
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:(") + "…"


def _status(test: dict) -> str:
    return test.get("extra_data", {}).get("status", test.get("status", ""))


def _noted(test: dict) -> bool:
    """Whether a view shows the task's whole message below its table: every failure, and a pass that says what was
    not graded (the table's column has room for a clipped line of it only)."""
    return _status(test) in ("failed", "grader error") or (_status(test) == PASSED and bool(_not_graded(test)))


def table(result: dict, *, seconds: float | None = None) -> str:
    """The terminal scorecard: one line per task, the total, then the full message of each failure and of each pass
    that says what was not graded."""
    result = safe_result(result)
    rows = [f"{'task':<5} {'title':<50} {'points':>7}  {'status':<14} reason"]
    for test in result["tests"]:
        title = test["name"].split(" ", 1)[1]
        points = f"{test['score']:g}/{test['max_score']:g}"
        status = _status(test)
        reason = _not_graded(test) if status == PASSED else _reason(test)
        rows.append(f"{test['number']:<5} {clip(title, 50):<50} {points:>7}  {status:<14} {clip(reason, 70)}")
    extra = result.get("extra_data", {})
    timing = f", {seconds:.1f} s" if seconds is not None else ""
    rows.append(msg.TOTAL.format(score=result["score"], max_score=extra.get("max_score", 100),
                                 examples=extra.get("examples", 0), timing=timing))
    details = [test["output"] for test in result["tests"] if _noted(test)]
    return "\n".join([result["output"], "", *rows] + (["", *"\n\n".join(details).splitlines()] if details else []))


def markdown(result: dict) -> str:
    """A CI job summary: the table, then each failure's message (and each pass's note of what was not graded) in a
    collapsed block."""
    result = safe_result(result)
    extra = result.get("extra_data", {})
    out = [f"## autograd-lab: {result['score']:g}/{extra.get('max_score', 100):g}", "",
           "| task | title | points | status |", "| --- | --- | ---: | --- |"]
    for test in result["tests"]:
        icon = {"passed": "✅", "failed": "❌", "not attempted": "⬜", "skipped": "⏭️"}.get(_status(test), "⚠️")
        out.append(f"| {test['number']} | {test['name'].split(' ', 1)[1]} | {test['score']:g}/{test['max_score']:g} "
                   f"| {icon} {_status(test)} |")
    for test in result["tests"]:
        if _status(test) not in (PASSED, SKIPPED) or _noted(test):
            fence = _fence(test["output"])
            out += ["", f"<details><summary>{test['name']}</summary>", "", fence, test["output"], fence, "",
                    "</details>"]
    out += ["", f"<sub>{result['output']}</sub>", ""]
    return "\n".join(out)


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text`` (CommonMark closes a fence only with at least
    as many), so text from student code can never close it and write Markdown of its own."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def junit(result: dict) -> str:
    """JUnit XML for any CI: one testcase per task."""
    tests = safe_result(result)["tests"]
    failures = sum(_status(t) not in (PASSED, SKIPPED) for t in tests)
    suite = ET.Element("testsuite", name="autograd-lab", tests=str(len(tests)), failures=str(failures),
                       skipped=str(sum(_status(t) == SKIPPED for t in tests)))
    for test in tests:
        case = ET.SubElement(suite, "testcase", classname=f"task{test['number'].replace('.', '_')}",
                             name=test["name"])
        status = _status(test)
        if status == SKIPPED:
            ET.SubElement(case, "skipped", message=_reason(test))
        elif status != PASSED:
            failure = ET.SubElement(case, "failure", message=_reason(test), type=status)
            failure.text = test["output"]
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
