"""Do an instructor's adjustments (graders/classgrade/adjustments.py) survive every run, and is a bad row refused?

An adjustment is a row of OUT_DIR/adjustments.csv: a regrade, an excused task, a late penalty. grade-all never
writes that file, and applies it on every run: after --force, after a new student arrives, and in merge.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from corpus import BY_NAME, make_submission

from graders import messages as msg
from graders.classgrade import adjustments
from graders.classgrade.gradebook import Record
from graders.cli import main

TASKS = ("1.8",)  # 3 points, a fast check


def rows(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(("student,task,points,reason", *lines)) + "\n")
    return path


@pytest.mark.parametrize(("line", "says"), [
    ("zoe,1.8,+1,regrade", "no student 'zoe'"),
    ("amy,9.9,+1,regrade", "got task '9.9'"),
    ("amy,1.8,one,regrade", "got points 'one'"),
    ("amy,1.8,+1,", "the reason is empty"),
    ("amy,1.8,+1", "3 cells, expected 4"),
])
def test_a_row_that_cannot_be_applied_is_refused_with_its_line(tmp_path, line, says):
    """Is each bad row refused with the file, its line and what is wrong (never a traceback, never half applied)?"""
    path = write(tmp_path / "adjustments.csv", "amy,total,-1,late", line)
    with pytest.raises(ValueError, match="line 3: .*" if "cells" not in says else "line 3: ") as error:
        adjustments.read(path, TASKS, {"amy", "bob"})
    assert says in str(error.value) and str(path) in str(error.value)


def test_a_file_without_the_header_is_refused(tmp_path):
    (tmp_path / "adjustments.csv").write_text("amy,1.8,+1,regrade\n")
    with pytest.raises(ValueError, match="the first row must be the header student,task,points,reason"):
        adjustments.read(tmp_path / "adjustments.csv", TASKS, None)


def test_adjustments_add_set_and_stay_within_a_tasks_points():
    """Do +N and -N add, =N set, a task's points stay within 0 and its most, and the total follow its tasks, then
    its own adjustments?"""
    records = [Record("amy", "graded", 3.0, {"1.8": 3.0, "1.4": 0.0}, 1.0),
               Record("bob", "graded", 2.0, {"1.8": 0.0, "1.4": 2.0}, 1.0), Record("cy", "graded", 1.0, {"1.8": 1.0})]
    found = [adjustments.Adjustment("amy", "1.8", 5.0, False, "regrade"),
             adjustments.Adjustment("amy", "1.4", 4.0, True, "excused"),
             adjustments.Adjustment("bob", "total", -3.0, False, "late"),
             adjustments.Adjustment("bob", "1.4", -1.0, False, "copied a line")]
    amy, bob, cy = adjustments.apply(records, found)
    assert amy.scores == {"1.8": 3.0, "1.4": 4.0} and amy.total == 7.0
    assert bob.scores["1.4"] == 1.0 and bob.total == 0.0  # 1 after the task, then -3: never below 0
    assert amy.status == "graded; adjusted: 1.8 +5 (regrade); 1.4 =4 (excused)" and amy.graded
    assert cy == records[2]


@pytest.mark.slow
def test_an_adjustment_survives_a_regrade_a_new_student_and_a_merge(tmp_path):
    """grade-all with an adjustments file, then --force, then with a new student, then two shards merged: does
    every grades.csv, and the scorecard of the student adjusted, show the adjustment each time?"""
    subs = tmp_path / "subs"
    subs.mkdir()
    make_submission(subs, "amy", [])
    make_submission(subs, "bob", [BY_NAME["reshape_returns_g"]])
    out = tmp_path / "out"
    out.mkdir()
    write(out / "adjustments.csv", "amy,total,-1,late by a day", "bob,1.8,=2,regrade: the shape was right in spirit")

    def check(folder: Path) -> None:
        gradebook = rows(folder / "grades.csv")
        assert (gradebook["amy"]["1.8"], gradebook["amy"]["total"]) == ("3", "2")
        assert gradebook["amy"]["status"] == "graded; adjusted: total -1 (late by a day)"
        assert (gradebook["bob"]["1.8"], gradebook["bob"]["total"]) == ("2", "2")
        card = (folder / "students" / "bob" / "scorecard.md").read_text()
        assert msg.SCORECARD_ADJUSTED_TITLE in card and "1.8 =2 (regrade: the shape was right in spirit)" in card
        assert "Your total after these adjustments: 2." in card

    args = ["grade-all", str(subs), "--out", str(out), "--tasks", ",".join(TASKS), "--jobs", "2", "--unkeyed"]
    assert main(args) == 0
    check(out)
    assert main([*args, "--force"]) == 0
    check(out)
    make_submission(subs, "cy", [])
    assert main(args) == 0
    check(out)
    assert rows(out / "grades.csv")["cy"]["status"] == "graded"
    shards = [tmp_path / f"shard{i}" for i in (1, 2)]
    for i, shard in enumerate(shards, start=1):
        assert main(["grade-all", str(subs), "--out", str(shard), "--tasks", ",".join(TASKS), "--unkeyed",
                     "--shard", f"{i}/2", "--adjustments", str(out / "adjustments.csv")]) == 0
    merged = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "--out", str(merged), "--adjustments", str(out / "adjustments.csv")]) == 0
    check(merged)
    assert (out / "adjustments.csv").read_text().count("\n") == 3  # never written by autograd-lab


def test_grade_all_refuses_a_missing_or_bad_adjustments_file_before_grading(tmp_path, capsys):
    """Does grade-all stop with exit 2 and one line, grading nothing, for an adjustments file named but missing,
    or one naming a student who is not in the class?"""
    subs = tmp_path / "subs"
    subs.mkdir()
    make_submission(subs, "amy", [])
    out = tmp_path / "out"
    assert main(["grade-all", str(subs), "--out", str(out), "--unkeyed", "--adjustments",
                 str(tmp_path / "none.csv")]) == 2
    assert "no such adjustments file" in capsys.readouterr().err
    bad = write(tmp_path / "bad.csv", "zed,total,+1,bonus")
    assert main(["grade-all", str(subs), "--out", str(out), "--unkeyed", "--adjustments", str(bad)]) == 2
    assert "no student 'zed' in this class" in capsys.readouterr().err
    assert not (out / "students" / "amy").exists()
