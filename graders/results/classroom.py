"""Classroom 50's result, ``./result.json`` in the ``classroom50/result/v1`` contract, from the canonical result.

Classroom 50 runs a course's ``autograders/<assignment>/autograder.py`` in the student's checkout; the runner reads
``result.json`` from there and publishes it with the submission's Release. The contract (Classroom 50's
``schemas/result-v1.schema.json``): ``schema``, ``classroom``, ``assignment``, ``assignment_type``, ``owner``,
``submission``, ``commit``, ``release``, ``review`` (from the runner's environment: ``Identity``), ``datetime`` (the
graded commit's committer date in UTC, the same on every regrade, so late marking never changes), ``graded_at``,
``score`` and ``max-score`` (whole numbers), and ``tests``: ``test-name``, ``passed``, ``score`` and ``max-score``
(whole numbers), with extra fields of ours (``output``, the task's whole message). One test per task graded: a task
skipped here (6.2 without CUDA) is left out, as it carries no points. A score with a fraction (a course's points
give some) is rounded down, never up; a late penalty is taken from the total.
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from graders.judge.grade import PASSED, SKIPPED
from graders.results.plain import safe_result

SCHEMA = "classroom50/result/v1"
TIME = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class Identity:
    """What the runner's environment says of a submission: the classroom, the assignment and its type, the
    repository's owner (the student), the submission's tag and the links to its commit, Release and review."""
    classroom: str
    assignment: str
    assignment_type: str
    owner: str
    submission: str
    commit: str
    release: str
    review: str


def owner_from(environ) -> str:
    """The repository's owner, the student: ``OWNER`` (or ``USERNAME``), else the ``<username>`` of a repository named
    ``<classroom>-<assignment>-<username>``, as Classroom 50's runner derives it, else the pusher; "" without any."""
    owner = (environ.get("OWNER") or environ.get("USERNAME") or "").strip()
    if owner:
        return owner
    repository = environ.get("GITHUB_REPOSITORY", "").split("/", 1)[-1]
    prefix = f"{environ.get('CLASSROOM', '')}-{environ.get('ASSIGNMENT', '')}-".lower()
    if prefix != "--" and repository.lower().startswith(prefix):
        return repository[len(prefix):]
    return environ.get("GITHUB_ACTOR", "").strip()


def identity(environ=None) -> Identity:
    """The submission's identity from the runner's environment (``os.environ`` by default)."""
    environ = os.environ if environ is None else environ
    commit = environ.get("COMMIT_URL", "")
    return Identity(environ.get("CLASSROOM", ""), environ.get("ASSIGNMENT", ""),
                    environ.get("ASSIGNMENT_TYPE", "") or "individual", owner_from(environ),
                    environ.get("SUBMISSION_TAG", ""), commit, environ.get("RELEASE_URL", ""),
                    environ.get("REVIEW_URL", "") or commit)


def commit_time(folder: Path) -> datetime | None:
    """The committer date of the commit checked out in ``folder`` (its HEAD), in UTC; None where git cannot tell."""
    try:
        done = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(folder), "log", "-1", "--format=%ct", "HEAD"],
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    if done.returncode != 0 or not text.isdigit():
        return None
    return datetime.fromtimestamp(int(text), tz=timezone.utc)


def _whole(value: float) -> int:
    """Points as the contract's whole number: rounded down (a hundredth's float error forgiven), never up."""
    return max(0, math.floor(float(value) + 1e-6))


def result_v1(result: dict, who: Identity, when: datetime, *, late_percent: float = 0.0,
              graded_at: datetime | None = None) -> dict:
    """Classroom 50's result.json for the canonical ``result`` of the submission ``who`` made at ``when`` (the graded
    commit's time), ``late_percent`` of its total taken for lateness."""
    result = safe_result(result)
    tests = []
    for test in result["tests"]:
        status = test.get("extra_data", {}).get("status", test.get("status", ""))
        if status == SKIPPED:
            continue
        tests.append({"test-name": test["name"], "passed": status == PASSED, "score": _whole(test["score"]),
                      "max-score": _whole(test["max_score"]), "output": test["output"]})
    exact = sum(float(test["score"]) for test in result["tests"])
    most = sum(test["max-score"] for test in tests)
    return {
        "schema": SCHEMA,
        "classroom": who.classroom,
        "assignment": who.assignment,
        "assignment_type": who.assignment_type,
        "owner": who.owner,
        "submission": who.submission,
        "commit": who.commit,
        "release": who.release,
        "review": who.review,
        "datetime": when.astimezone(timezone.utc).strftime(TIME),
        "graded_at": (graded_at or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime(TIME),
        "score": min(most, _whole(exact * (1 - late_percent / 100))),
        "max-score": most,
        "tests": tests,
    }
