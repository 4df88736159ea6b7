"""The class report of an nbgrader course, from what ``nbgrader autograde`` left: ``autograd-lab nbgrader-report``.

``JudgeScores`` writes each student's scorecard beside their autograded notebook (``RESULTS_FILE``, after
``JudgeGrades`` removed any file of that name that came with the submission). This module reads those, names the
students who are in the course's gradebook but submitted nothing and those who submitted but were not autograded,
and writes what ``grade-all`` writes for a class: OUT/<student>/results.json, grades.csv, class.md and class.html.
The scorecards' numbers are the judge's; a file that is not one (unreadable, too large, a link) leaves its student
out of the graded, said so, never read as a score.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from graders import messages as msg
from graders.classgrade import batch, gradebook
from graders.classgrade.gradebook import Record
from graders.course import course_file
from graders.integrations.nbgrader_course import COURSE_FILE
from graders.integrations.nbgrader_judge import RESULTS_FILE
from graders.isolation import work_files
from graders.results.scorecard import dumps
from graders.submission.intake import name_problem

MAX_BYTES = 4 << 20  # a scorecard is a few kB; a larger file is not one
SECONDS = "autograd_lab_seconds"  # the grade's seconds, which JudgeScores adds to the scorecard it keeps


def _read(path: Path) -> dict | None:
    """The JSON object at ``path``: a regular file (a link is not followed, a FIFO not waited on) of at most
    MAX_BYTES, read as the judge reads a worker's files (graders.isolation.work_files); None otherwise."""
    try:
        with work_files.opened(path.parent) as folder:
            data = work_files.read(folder, path.name, limit=MAX_BYTES)
    except (work_files.Unreachable, work_files.NotAFile, OSError):
        return None
    try:
        value = json.loads(data.decode("utf-8", errors="replace")) if data is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _scores(result: dict, course: course_file.Course) -> dict[str, float] | None:
    """The points per task of a scorecard, each within its points in ``course``, or None where it is not one (no
    tests, a task the course leaves out, or a score that is no number)."""
    tests = result.get("tests")
    if not isinstance(tests, list):
        return None
    scores = {}
    for test in tests:
        number, score = (test.get("number"), test.get("score")) if isinstance(test, dict) else (None, None)
        if number not in course.points_by_task or isinstance(score, bool) or not isinstance(score, (int, float)):
            return None
        scores[number] = min(max(float(score), 0.0), course.points(number))
    return scores


def _enrolled(course: Path) -> set[str]:
    """The students of the course's gradebook (``nbgrader db student add``), where it has one."""
    database = course / "gradebook.db"
    if not database.is_file():
        return set()
    from nbgrader.api import Gradebook  # nbgrader's own reader of its database, imported only here

    with Gradebook(f"sqlite:///{database}") as book:
        return {student.id for student in book.students}


def _folders(parent: Path) -> set[str]:
    with contextlib.suppress(OSError):
        return {p.name for p in parent.iterdir() if p.is_dir() and not p.is_symlink()}
    return set()


def record_of(course: Path, assignment: str, student: str,
              graded_in: course_file.Course = course_file.DEFAULT) -> tuple[Record, dict | None]:
    """A student's record and scorecard: graded from their kept scorecard (in the course ``graded_in``), else why
    not."""
    submitted = (course / "submitted" / student / assignment).is_dir()
    autograded = course / "autograded" / student / assignment
    if not autograded.is_dir():
        why = msg.NB_REPORT_NOT_AUTOGRADED if submitted else msg.NB_REPORT_NOT_SUBMITTED
        return Record(student, why), None
    result = _read(autograded / RESULTS_FILE)
    if result is None:
        return Record(student, msg.NB_REPORT_NO_RESULT.format(file=RESULTS_FILE)), None
    if "error" in result:
        first = str(result["error"]).strip().splitlines()[0] if str(result["error"]).strip() else ""
        return Record(student, msg.BATCH_CRASHED.format(reason=first[:200])), None
    scores = _scores(result, graded_in)
    if scores is None:
        return Record(student, msg.NB_REPORT_NO_RESULT.format(file=RESULTS_FILE)), None
    seconds = result.pop(SECONDS, 0.0)
    seconds = float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0
    extra = result.get("extra_data")
    isolation = extra.get("isolation") if isinstance(extra, dict) else None
    return Record(student, msg.BATCH_GRADED, sum(scores.values()), scores, seconds,
                  isolation=isolation if isinstance(isolation, str) else ""), result


def report(course: Path, assignment: str, out: Path, course_path: Path | None = None) -> tuple[list[Record], list[str]]:
    """Write OUT's class report of ``assignment`` in ``course`` (graded in the course file ``course_path``, else the
    course directory's own where it has one): the records, and notes for the user."""
    course, out = Path(course), Path(out)
    if not (course / "autograded").is_dir() and not (course / "submitted").is_dir():
        raise ValueError(msg.NB_REPORT_NO_COURSE.format(course=course))
    if course_path is None and (course / COURSE_FILE).is_file():
        course_path = course / COURSE_FILE
    graded_in = course_file.load(course_path)
    students = sorted(_enrolled(course) | _folders(course / "submitted") | _folders(course / "autograded"))
    task_ids = graded_in.tasks
    records = []
    out.mkdir(parents=True, exist_ok=True)
    for student in students:
        record, result = record_of(course, assignment, student, graded_in)
        records.append(record)
        if result is not None and name_problem(student) is None:  # a folder of its own, under OUT/students/
            gradebook.atomic_write(out / gradebook.STUDENTS / student / "results.json", dumps(result))
    gradebook.write_csv(out / "grades.csv", records, task_ids)
    return records, batch.class_views(out, records, task_ids, graded_in.points_by_task)
