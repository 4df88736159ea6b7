"""Does a class graded in a course take its tasks, points and each student's own key, apply its late policy on every
run without grading anyone again, refuse to grade without a key, and grade only again what decides a verdict?"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import sample_course
from corpus import make_submission

from graders import keys, paths
from graders.classgrade import batch
from graders.cli import main
from graders.course import course_file

# One xdist worker for the module: its graded class (a module fixture) is graded once. Its course is sample_course's.
pytestmark = pytest.mark.xdist_group("course-class")
SECRET = "ab" * 32


def write_course(path: Path, changes: dict[str, str] | None = None) -> Path:
    path.write_text(sample_course.text(SECRET, changes))
    return path


def rows(path: Path) -> dict[str, dict]:
    with open(path, newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def test_grade_all_without_a_key_refuses_and_says_how_to_get_one(tmp_path, capsys):
    """Does grade-all refuse, grading nobody, both without a course secret (saying how to make one, and that
    --unkeyed grades on fixed shared inputs) and with one --key for the whole class?"""
    subs = tmp_path / "subs"
    make_submission(subs, "alice", [])
    out = tmp_path / "out"
    assert main(["grade-all", str(subs), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no key to grade with: give --course FILE" in err and "autograd-lab course init FILE" in err
    assert "--unkeyed" in err
    assert main(["grade-all", str(subs), "--out", str(out), "--key", "7"]) == 2
    assert "one key for a whole class gives every student the same inputs" in capsys.readouterr().err
    open_course = tmp_path / "open.toml"
    open_course.write_text("[tasks]\n")
    assert main(["grade-all", str(subs), "--out", str(out), "--course", str(open_course)]) == 2
    assert not out.exists()


def test_only_what_decides_a_verdict_is_in_the_gradebooks_fingerprint(tmp_path):
    """Does a new wording of a message, a view or a course builder leave the graders' fingerprint (so grade-all grades
    nobody again), while a change to a check changes it; and does the course's due date, late policy or visibility
    leave the settings' fingerprint, while its points or secret change it?"""
    copy = tmp_path / "graders"
    shutil.copytree(paths.HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "given"))
    before = paths.graders_fingerprint(copy, paths.GIVEN)
    messages = copy / "messages" / "checks.py"
    messages.write_text(messages.read_text().replace("HINT_RECURSION = \"find", "HINT_RECURSION = \"look for"))
    for edited in ("messages/class_mistakes.py", "results/pictures.py", "course/release.py",
                   "integrations/gradescope.py"):
        with open(copy / edited, "a") as f:
            f.write("# reworded\n")
    assert paths.graders_fingerprint(copy, paths.GIVEN) == before
    with open(copy / "judge" / "checks" / "ops.py", "a") as f:
        f.write("# a check changed\n")
    assert paths.graders_fingerprint(copy, paths.GIVEN) != before

    def fingerprint(changes):
        return batch.Settings(course=course_file.load(write_course(tmp_path / "c.toml", changes))).fingerprint()

    plain = fingerprint({})
    assert fingerprint({"# due = 2026-03-01T23:59:00-05:00": "due = 2026-03-01T23:59:00-05:00",
                        "percent_per_day = 10": "percent_per_day = 25",
                        '# "5.4" = "after_due_date"': '"5.4" = "hidden"'}) == plain
    assert fingerprint({'"2.1" = 8': '"2.1" = 9'}) != plain
    assert fingerprint({f'secret = "{SECRET}"': f'secret = "{"cd" * 32}"'}) != plain


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """A class of two graded in the course on 1.4 and 2.1: alice the reference, bob late."""
    root = tmp_path_factory.mktemp("course-class")
    subs = root / "subs"
    for name in ("alice", "bob"):
        make_submission(subs, name, [])
    (root / "times.csv").write_text("student,submitted\nalice,2027-03-01T12:00:00Z\nbob,2027-03-03T00:00:00Z\n")
    course = write_course(root / "course.toml", {"# due = 2026-03-01T23:59:00-05:00": "due = 2027-03-01T23:59:00Z",
                                                 '# times = "submitted.csv"': 'times = "times.csv"'})
    out = root / "out"
    assert main(["grade-all", str(subs), "--out", str(out), "--course", str(course), "--tasks", "1.4,2.1",
                 "--jobs", "2"]) == 0
    return root, subs, course, out


@pytest.mark.slow
def test_each_student_of_the_course_is_graded_with_their_own_key_and_the_courses_points(graded_course, tmp_path):
    """Does grade-all give each student the key derived from their folder's name (shown as a tag: `grade --course`
    of the same folder gives the same results.json), two students different keys, and the course's points?"""
    root, subs, course, out = graded_course
    results = {name: json.loads((out / "students" / name / "results.json").read_text()) for name in ("alice", "bob")}
    tags = {name: keys.tag(keys.student_key(SECRET, name)) for name in results}
    assert tags["alice"] != tags["bob"]
    for name, result in results.items():
        assert f"#{tags[name]}" in result["output"]
        assert [(t["number"], t["score"], t["max_score"]) for t in result["tests"]] == [("1.4", 10, 10), ("2.1", 8, 8)]
    assert main(["grade", str(subs / "alice"), "--course", str(course), "--tasks", "1.4,2.1", "--results",
                 str(tmp_path / "alone.json")]) == 0
    assert (tmp_path / "alone.json").read_bytes() == (out / "students" / "alice" / "results.json").read_bytes()


@pytest.mark.slow
def test_the_late_policy_applies_to_the_totals_on_every_run_and_changing_it_grades_nobody_again(graded_course,
                                                                                               tmp_path, capsys):
    """Is bob, a day and a minute late at 10% a day, 2 days late (-20%) in grades.csv, his scorecard and the LMS's
    import file, alice not; and does a new policy (25% a day, an extension for bob) change the totals on the next
    run while grading nobody again?"""
    root, subs, course, out = graded_course
    graded = rows(out / "grades.csv")
    assert graded["alice"]["total"] == "18" and graded["alice"]["status"] == "graded"
    assert graded["bob"]["total"] == "14.4" and "late by 2 days: -20% (10% a day, at most 50%)" in \
        graded["bob"]["status"]
    assert "late by 2 days" in (out / "students" / "bob" / "scorecard.md").read_text()
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\nAlice,1,a1,alice,S\nBob,2,b2,bob,S\n")
    assert main(["export", str(out), "--lms", "canvas", "--roster", str(roster), "--match", "SIS Login ID",
                 "--course", str(course), "--to", str(tmp_path / "canvas.csv")]) == 0
    exported = list(csv.reader((tmp_path / "canvas.csv").read_text().splitlines()))
    assert exported[1][-1] == "18" and exported[2][-1] == "18" and exported[3][-1] == "14.4"  # most, alice, bob

    again = write_course(tmp_path / "course.toml", {
        "# due = 2026-03-01T23:59:00-05:00": "due = 2027-03-01T23:59:00Z", "percent_per_day = 10":
        "percent_per_day = 25", '# times = "submitted.csv"': f'times = "{root / "times.csv"}"'})
    capsys.readouterr()
    assert main(["grade-all", str(subs), "--out", str(out), "--course", str(again), "--tasks", "1.4,2.1"]) == 0
    assert "0 graded, 2 unchanged" in capsys.readouterr().out
    assert rows(out / "grades.csv")["bob"]["total"] == "9"  # -50%: 2 days at 25%
    extended = write_course(tmp_path / "course.toml", {
        "# due = 2026-03-01T23:59:00-05:00": "due = 2027-03-01T23:59:00Z",
        '# times = "submitted.csv"': f'times = "{root / "times.csv"}"',
        '# "alice" = 2026-03-04T23:59:00-05:00': '"bob" = 2027-03-04T23:59:00Z'})
    assert main(["grade-all", str(subs), "--out", str(out), "--course", str(extended), "--tasks", "1.4,2.1"]) == 0
    assert rows(out / "grades.csv")["bob"] == {**rows(out / "grades.csv")["bob"], "total": "18", "status": "graded"}
    assert "late by" not in (out / "students" / "bob" / "scorecard.md").read_text()


@pytest.mark.slow
def test_merge_takes_the_course_and_refuses_one_whose_tasks_the_shards_do_not_have(graded_course, tmp_path, capsys):
    """Does merge apply the course's late penalties as grade-all does, and refuse, writing nothing, a course file
    whose tasks are not the gradebook's columns (another course's, or none given where one was used)?"""
    root, subs, course, out = graded_course
    assert main(["merge", str(out), "--out", str(tmp_path / "merged"), "--course", str(course)]) == 0
    assert rows(tmp_path / "merged" / "grades.csv")["bob"]["total"] == "14.4"
    narrower = write_course(tmp_path / "narrow.toml", {'"2.1" = 8': '"2.1" = 0'})
    assert main(["merge", str(out), "--out", str(tmp_path / "refused"), "--course", str(narrower)]) == 2
    assert "its gradebook's task columns are 1.4, 2.1, and the course file" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()


@pytest.mark.slow
def test_the_reference_scores_full_marks_in_grade_and_grade_all_of_a_course(tmp_path):
    """The course drops Adam (3.3) and the PyTorch loop (6.1) and gives 1.4 10 points: do grade and grade-all give
    the reference full marks, the course's total, on each of the course's tasks?"""
    course = write_course(tmp_path / "course.toml")
    subs = tmp_path / "subs"
    make_submission(subs, "alice", [])
    assert main(["grade-all", str(subs), "--out", str(tmp_path / "out"), "--course", str(course)]) == 0
    row = rows(tmp_path / "out" / "grades.csv")["alice"]
    assert (row["total"], row["status"]) == (str(sample_course.TOTAL), "graded")
    assert "3.3" not in row and "6.1" not in row
    assert main(["grade", str(subs / "alice"), "--course", str(course), "--results", str(tmp_path / "r.json")]) == 0
    result = json.loads((tmp_path / "r.json").read_text())
    assert (result["score"], result["extra_data"]["max_score"]) == (sample_course.TOTAL, sample_course.TOTAL)
    assert [test["number"] for test in result["tests"]] == list(sample_course.TASK_IDS)
