"""Does `autograd-lab nbgrader-report` read only the judge's scorecards, and say why a student was not graded?

The course is a folder laid out as nbgrader leaves it (submitted/, autograded/), with scorecards written as
JudgeScores writes them; tests/test_nbgrader_course.py runs the whole of nbgrader once. Here each way a kept
scorecard can be missing or not one (a link, a FIFO, malformed JSON, a score that is no number, the judge's
error) is its own student.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
import sample_course

from graders import messages as msg
from graders.cli import main
from graders.integrations import nbgrader_report
from graders.integrations.nbgrader_judge import RESULTS_FILE
from graders.tasks import BY_ID, TASKS

ASSIGNMENT = "autograd_lab"


def scorecard(score_of=lambda task: task.points, seconds=4.2) -> dict:
    tests = [{"number": t.id, "name": f"{t.id} {t.title}", "score": score_of(t), "max_score": t.points,
              "output": f"Task {t.id} ({t.title}): passed", "extra_data": {"status": "passed"}} for t in TASKS]
    return {"score": sum(t["score"] for t in tests if isinstance(t["score"], (int, float))), "tests": tests,
            "autograd_lab_seconds": seconds}


def autograded(course: Path, student: str) -> Path:
    folder = course / "autograded" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (course / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
    return folder


@pytest.fixture
def course(tmp_path) -> Path:
    course = tmp_path / "course"
    (autograded(course, "ana") / RESULTS_FILE).write_text(json.dumps(scorecard()))
    (autograded(course, "ben") / RESULTS_FILE).write_text(json.dumps(scorecard(
        lambda t: 0.0 if t.id == "1.4" else t.points)))
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(scorecard()))
    (autograded(course, "cal") / RESULTS_FILE).symlink_to(elsewhere)  # a link to a perfect scorecard
    os.mkfifo(autograded(course, "dot") / RESULTS_FILE)
    (autograded(course, "eve") / RESULTS_FILE).write_text("{not json")
    (autograded(course, "fay") / RESULTS_FILE).write_text(json.dumps(scorecard(lambda t: "all")))
    (autograded(course, "gil") / RESULTS_FILE).write_text(json.dumps({"error": "The grader could not grade it\n"}))
    autograded(course, "hal")  # autograded by a config without autograd-lab's steps: no scorecard
    (course / "submitted" / "ida" / ASSIGNMENT).mkdir(parents=True)  # submitted, never autograded
    return course


def test_each_student_is_graded_from_the_judges_scorecard_or_said_why_not(course, tmp_path):
    records, notes = nbgrader_report.report(course, ASSIGNMENT, tmp_path / "out")
    by_name = {r.student: r for r in records}
    full, without_matmul = sample_course.TABLE_TOTAL, sample_course.TABLE_TOTAL - BY_ID["1.4"].points
    assert by_name["ana"].graded and by_name["ana"].total == full and by_name["ana"].seconds == pytest.approx(4.2)
    assert by_name["ben"].graded and by_name["ben"].scores["1.4"] == 0 and by_name["ben"].total == without_matmul
    no_result = msg.NB_REPORT_NO_RESULT.format(file=RESULTS_FILE)
    for student in ("cal", "dot", "eve", "fay", "hal"):
        assert by_name[student].status == no_result and not by_name[student].graded, student
    assert by_name["gil"].status == msg.BATCH_CRASHED.format(reason="The grader could not grade it")
    assert by_name["ida"].status == msg.NB_REPORT_NOT_AUTOGRADED
    out = tmp_path / "out"
    assert sorted(p.name for p in (out / "students").iterdir() if p.is_dir()) == ["ana", "ben"]
    kept = json.loads((out / "students" / "ben" / "results.json").read_text())
    assert "autograd_lab_seconds" not in kept and kept["score"] == without_matmul
    text = (out / "class.md").read_text()
    assert "ben" in text.split("### 1.4 ", 1)[1].split("\n### ", 1)[0]
    with open(out / "grades.csv", newline="") as f:
        assert {row["student"] for row in csv.DictReader(f)} == set(by_name)


def test_the_command_writes_the_report_and_refuses_a_folder_that_is_no_course(course, tmp_path, capsys):
    assert main(["nbgrader-report", str(course), "--out", str(tmp_path / "out")]) == 0
    assert "2 of 9 student(s) graded" in capsys.readouterr().out
    assert (tmp_path / "out" / "class.html").is_file()
    assert main(["nbgrader-report", str(tmp_path / "nothing"), "--out", str(tmp_path / "out2")]) == 2
    err = capsys.readouterr().err
    assert "expected an nbgrader course directory" in err and "Traceback" not in err
