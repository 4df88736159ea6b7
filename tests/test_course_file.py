"""Does the course file say what a course grades, for how many points and with which secret, refuse a file that
cannot be used with one line naming where, and derive each student's key from the secret alone?"""

from __future__ import annotations

import re
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
import sample_course

from graders import keys
from graders.cli import main
from graders.course import course_file
from graders.course.course_file import CourseError
from graders.judge.checks import cost
from graders.ops import BY_NAME
from graders.tasks import BY_ID, TASKS


def course_text(changes: dict[str, str] | None = None, secret: str = "ab" * 32) -> str:
    return sample_course.edited(secret, changes or {})


def written(tmp_path: Path, text: str, name: str = "course.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_course_init_writes_every_default_with_a_comment_and_a_fresh_private_secret(tmp_path):
    """Does `course init` write a file that loads as the default course (every task with the table's points, the
    table's total in all), comments every setting, holds a fresh 64-digit secret, and is readable by its owner
    alone?"""
    path = tmp_path / "course.toml"
    assert main(["course", "init", str(path)]) == 0
    course = course_file.load(path)
    assert course.points_by_task == {t.id: t.points for t in TASKS} and course.total == sample_course.TABLE_TOTAL
    assert re.fullmatch(r"[0-9a-f]{64}", course.secret)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    for task in TASKS:  # every task, each with its title beside it (6.2's line commented out: left out, it stays)
        assert re.search(rf'^(# )?"{re.escape(task.id)}" = {task.points}\b', text, re.M), task.id
        assert task.title in text
    for setting in ("secret =", "percent_per_day =", "cap_percent =", "# due =", "# times =", "visibility ="):
        number = line_of(text, setting)
        assert text.splitlines()[number - 2].startswith("#"), f"{setting} has no comment above it"
    other = tmp_path / "other.toml"
    assert main(["course", "init", str(other)]) == 0
    assert course_file.load(other).secret != course.secret
    assert main(["course", "init", str(path)]) == 2  # never over a course file (its secret) unless --force


def test_a_course_that_drops_adam_and_the_torch_loop_and_weighs_matmul_double_totals_what_its_points_add_to(tmp_path):
    """Do 0 points leave a task out (6.2, which grades 6.1's code, goes with 6.1), does a task left out of the
    table keep its points, and is the total what the points add to?"""
    course = course_file.load(written(tmp_path, course_text(sample_course.DROPS)))
    assert "3.3" not in course.tasks and "6.1" not in course.tasks and "6.2" not in course.tasks
    assert course.points("1.4") == 10 and course.points("2.1") == 8 and course.total == sample_course.TOTAL
    assert course.tasks == sample_course.TASK_IDS
    kept = course_file.load(written(tmp_path, course_text({'"1.1" = 4': ""}), "kept.toml"))
    assert kept.points("1.1") == 4 and "6.2" in kept.tasks and kept.points("6.2") == 0


@pytest.mark.parametrize(("change", "needle", "says"), [
    ({'"1.1" = 4': '"9.9" = 4'}, '"9.9"', "got task '9.9', expected a task id"),
    ({'"1.4" = 5': '"1.4" = -3'}, '"1.4"', "got 1.4 = -3, expected points of at least 0"),
    ({'"1.4" = 5': '"1.4" = 2.5'}, '"1.4"', "expected a whole number of points"),
    ({"# due = 2026-03-01T23:59:00-05:00": "due = 2026-02-30T23:59:00-05:00"}, "due =", "not TOML"),
    ({"# due = 2026-03-01T23:59:00-05:00": 'due = "next friday"'}, "due =", "expected a date and time with its"),
    ({"# due = 2026-03-01T23:59:00-05:00": "due = 2026-03-01T23:59:00"}, "due =", "without its UTC offset"),
    ({'# "alice" = 2026-03-04T23:59:00-05:00': '"alice" = 2026-03-04'}, '"alice"', "expected a date and time"),
    ({"cap_percent = 50": "cap_percent = 150"}, "cap_percent", "percent from 0 to 100"),
    ({"cap_percent = 50": "cap_percent = 50\ncap = 3"}, "cap = 3", "got 'late.cap', expected one of"),
    ({'visibility = "visible"': 'visibility = "secret"'}, "visibility =", "got 'secret', expected one of visible"),
    ({'# "5.4" = "after_due_date"': '"5.4" = "later"'}, '"5.4" = "later"', "got 'later'"),
    ({'"6.1" = 4': '"6.1" = 0\n"6.2" = 2'}, '"6.2" = 2', "6.2 grades 6.1's code"),
    ({"[tasks]": "[tasks\n"}, "[tasks", "not TOML"),
])
def test_a_course_file_that_cannot_be_used_is_refused_with_one_line_naming_where(tmp_path, change, needle, says):
    """Is every unusable setting (an unknown task id, negative or fractional points, a bad date, a date without its
    offset, an unknown key, a bad percent or visibility, 6.2 without 6.1, a TOML syntax error) refused with one
    line: the file, the line where it is written, and what was expected?"""
    text = course_text(change)
    path = written(tmp_path, text)
    with pytest.raises(CourseError) as refused:
        course_file.load(path)
    error = str(refused.value)
    assert error.startswith(f"{path}, line {line_of(text, needle)}: "), error
    assert says in error and "\n" not in error


def test_the_commands_say_a_bad_course_file_in_one_line_and_stop_before_grading(tmp_path, capsys):
    """Does every command that reads the course file stop with exit status 2 and the file's line, never a
    traceback, before it grades or writes anything?"""
    path = written(tmp_path, course_text({'"1.4" = 5': '"1.4" = -1'}))
    (tmp_path / "subs").mkdir()
    commands = [["grade", str(tmp_path), "--course", str(path)],
                ["grade-all", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--course", str(path)],
                ["merge", str(tmp_path / "subs"), "--out", str(tmp_path / "merged"), "--course", str(path)],
                ["release", str(tmp_path / "bundle"), "--course", str(path)],
                ["nbgrader", str(tmp_path / "nb"), "--course", str(path)],
                ["gradescope", str(tmp_path / "a.zip"), "--course", str(path)],
                ["classroom50", str(tmp_path / "c50"), "--course", str(path)]]
    for command in commands:
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert f"{path}, line {line_of(path.read_text(), '1.4')}: got 1.4 = -1" in err and "Traceback" not in err
    assert not any((tmp_path / name).exists() for name in ("out", "merged", "bundle", "nb", "a.zip", "c50"))


def test_rotate_gives_a_fresh_secret_and_keeps_everything_else(tmp_path):
    """Does `course rotate` change the secret line alone (every student's key with it), keeping the points and
    comments as the instructor wrote them?"""
    path = written(tmp_path, course_text(sample_course.DROPS))
    before = path.read_text()
    assert main(["course", "rotate", str(path)]) == 0
    after = path.read_text()
    assert course_file.load(path).secret != course_file.load(written(tmp_path, before, "old.toml")).secret
    assert [line for line in after.splitlines() if not line.startswith("secret")] == \
        [line for line in before.splitlines() if not line.startswith("secret")]
    assert course_file.load(path).key_for("alice") != keys.student_key("ab" * 32, "alice")


def test_the_public_copy_of_a_course_holds_no_secret_and_reads_back_the_same(tmp_path, monkeypatch):
    """Does the copy of a course that others may read (Classroom 50's bundle) leave the secret out, and read back as
    the same tasks, points, late policy and visibility; and does $AUTOGRAD_LAB_SECRET then give the secret?"""
    changes = {**sample_course.DROPS, "# due = 2026-03-01T23:59:00-05:00": "due = 2026-03-01T23:59:00-05:00",
               '# "alice" = 2026-03-04T23:59:00-05:00': '"Alice" = 2026-03-04T23:59:00-05:00',
               '# "5.4" = "after_due_date"': '"5.4" = "after_due_date"'}
    course = course_file.load(written(tmp_path, course_text(changes)))
    public = course_file.text(course, secret=False)
    assert course.secret not in public and "secret =" not in public
    monkeypatch.delenv(course_file.SECRET_ENV, raising=False)
    again = course_file.load(written(tmp_path, public, "public.toml"))
    assert not again.keyed
    for field in ("points_by_task", "due", "percent_per_day", "cap_percent", "extensions", "visibility",
                  "task_visibility"):
        assert getattr(again, field) == getattr(course, field), field
    monkeypatch.setenv(course_file.SECRET_ENV, "cd" * 32)
    assert course_file.load(tmp_path / "public.toml").secret == "cd" * 32
    monkeypatch.setenv(course_file.SECRET_ENV, "short")
    with pytest.raises(CourseError, match="at least 32 characters"):
        course_file.load(tmp_path / "public.toml")


def test_a_late_submission_loses_its_percent_a_day_up_to_the_cap_and_an_extension_moves_its_due_date(tmp_path):
    """Is a submission on time or before its due date not late, each day or part of one after it the percent a day,
    never past the cap, and does a student's extension (by identity, whatever the case) move their due date?"""
    changes = {"# due = 2026-03-01T23:59:00-05:00": "due = 2026-03-01T23:59:00-05:00", "percent_per_day = 10":
               "percent_per_day = 15", '# "alice" = 2026-03-04T23:59:00-05:00': '"Alice" = 2026-03-04T23:59:00-05:00'}
    course = course_file.load(written(tmp_path, course_text(changes)))
    due = datetime(2026, 3, 1, 23, 59, tzinfo=timezone(timedelta(hours=-5)))
    assert course.penalty(due, ["bob"]) is None and course.penalty(None, ["bob"]) is None
    assert course.penalty(due + timedelta(minutes=1), ["bob"]).days == 1
    assert course.penalty(due + timedelta(days=1, seconds=1), ["bob"]) == course_file.Penalty(2, 30.0)
    assert course.penalty(due + timedelta(days=30), ["bob"]).percent == 50.0
    assert course.penalty(due + timedelta(days=2), ["ALICE"]) is None
    assert course.penalty(due + timedelta(days=3, hours=1), ["alice@example.edu", "alice"]).days == 1
    assert "late by 2 days: -30% (15% a day, at most 50%)" == course_file.Penalty(2, 30.0).text(course)


def test_submission_times_are_read_with_their_offsets_and_a_bad_row_is_refused_with_its_line(tmp_path):
    """Does grade-all's times CSV give each student's time, and is a row without a time zone refused with its
    line?"""
    path = written(tmp_path, "student,submitted\nAlice,2026-03-02T01:00:00Z\nbob,2026-03-01T12:00:00-05:00\n",
                   "times.csv")
    times = course_file.read_times(path)
    assert course_file.submitted_at(times, "alice") == datetime(2026, 3, 2, 1, tzinfo=timezone.utc)
    assert course_file.submitted_at(times, "carol") is None
    written(tmp_path, "student,submitted\nalice,2026-03-02T01:00:00Z\nbob,2026-03-01 12:00\n", "times.csv")
    with pytest.raises(CourseError, match=r"times.csv, line 3: got 2026-03-01T12:00:00, a time without its UTC"):
        course_file.read_times(path)


def test_each_students_key_comes_from_the_secret_and_their_identity_alone():
    """Does the same student get the same key on every grade (whatever the case and spaces of their name), do two
    students, or two courses, give different keys, and does nothing a gradebook or scorecard shows give the secret
    or the key away?"""
    secret = "ab" * 32
    alice = keys.student_key(secret, "alice")
    assert alice == keys.student_key(secret, " Alice ") == keys.student_key(secret, "ALICE")
    assert alice != keys.student_key(secret, "bob") and alice != keys.student_key("cd" * 32, "alice")
    assert 0 <= alice < 2**63
    keyed = {keys.student_key(secret, f"student{i}") for i in range(1000)}
    assert len(keyed) == 1000
    assert secret not in keys.commitment(secret) and keys.commitment(secret) != keys.commitment("cd" * 32)
    assert str(alice) not in keys.tag(alice)


def test_a_grade_of_the_course_takes_its_tasks_points_and_the_students_key_never_shown(tmp_path):
    """Does a grade in a course take the course's tasks and points, the student's key (shown as a tag, never the
    key), an instructor's own --key as given, and refuse --tasks the course leaves out?"""
    course = course_file.load(written(tmp_path, course_text(sample_course.DROPS)))
    how = course_file.grading(course, "alice")
    assert how["key"] == course.key_for("alice") and str(how["key"]) not in how["key_shown"]
    assert how["tasks"] == list(course.tasks) and how["points"]["1.4"] == 10
    assert course_file.grading(course, "alice", key=7) == {**how, "key": 7, "key_shown": None}
    assert course_file.grading(course, "alice", tasks=("1.4", "2.1"))["tasks"] == ["1.4", "2.1"]
    with pytest.raises(CourseError, match="got --tasks 3.3, which .* leaves out"):
        course_file.grading(course, "alice", tasks=("1.4", "3.3"))
    assert course_file.grading(course_file.DEFAULT, "alice")["key"] is None


def test_two_students_of_a_course_are_timed_on_different_inputs():
    """Does the cost rung of 1.4 time different inputs for two students of one course, the same for one student
    graded twice: what a classmate saw is no use?"""
    secret = "ab" * 32

    def timed(student: str):
        ctx = SimpleNamespace(key=keys.student_key(secret, student), task=BY_ID["1.4"])
        return [operand.shape for operand in cost.cost_operands(ctx, BY_NAME["matmul"])[1]]

    assert timed("alice") == timed("alice")
    assert timed("alice") != timed("mallory")


@pytest.mark.slow
def test_a_correct_stack_passes_5_4_on_a_keys_points_where_the_lessons_run_misses_the_bar():
    """With a key of its own for every student, some students' points are harder: on this key's, the lesson's own
    run ends at an MSE of 0.0151, above the bar of 0.015. Does the reference still pass 5.4 there (the bar is then
    what the lesson's own run reaches, and a tenth more), and does the bar stay that tight?"""
    from graders import lesson
    from graders.judge.checks import loop
    from graders.judge.grade import PASSED, grade
    from graders.paths import SOLUTIONS

    key = keys.student_key("ab" * 32, "gradescope:1234")
    (result,) = grade(SOLUTIONS, key=key, task_ids=("5.4",)).results
    assert result.status == PASSED, result.message
    X, Y = lesson.task_data(key)
    assert 0.015 < loop.reachable_bar(X, Y, lesson.data_seed(key)) < 0.0175
