"""The course file: what a course grades, for how many points, with which secret, and when it is due.

    autograd-lab course init course.toml       every default, each with a comment, and a fresh secret
    autograd-lab grade-all subs --out out --course course.toml     (and grade, merge, export, release, nbgrader,
                                                                    gradescope, classroom50)

It is TOML (read with the standard library's ``tomllib``; ``tomli``, the same parser, before Python 3.11):

- ``secret``: the course's secret, from which each student's grading key is derived (graders.keys); without it
  in the file, ``$AUTOGRAD_LAB_SECRET``;
- ``[tasks]``: a task id and its points (``"1.4" = 10``); 0 leaves the task out of the course, a task left out
  of the table keeps its points of the task table, and the total is what the points add to;
- ``[late]``: the due date, the penalty in percent a day late with a cap, grade-all's submission times (a CSV),
  and ``[late.extensions]``, each student's own due date;
- ``[gradescope]``: each task's visibility on Gradescope.

Only the tasks, their points and the secret decide a verdict (``Course.verdict``, in grade-all's fingerprint): the
late policy, the due dates and the visibility apply to the totals and the views on every run, so changing them
never grades a submission again. A file that cannot be used is refused whole with one error that names its line
(``CourseError``).
"""

from __future__ import annotations

import csv
import math
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from graders import keys
from graders import messages as msg
from graders.tasks import BY_ID, TASKS, points_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the standard library's parser, as it was before it joined the standard library
    import tomli as tomllib

SECRET_ENV = "AUTOGRAD_LAB_SECRET"
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
# A task graded on another task's code: it cannot be in a course without that task (6.2 runs 6.1's fit_torch on CUDA).
NEEDS = {"6.2": "6.1"}
LATE_DEFAULTS = {"percent_per_day": 10.0, "cap_percent": 50.0}
TIMES_HEADER = ("student", "submitted")


class CourseError(ValueError):
    """A course file (or its submission times) that cannot be used: the one line that says where and why."""


def default_points(task_id: str) -> int:
    """A task's points in the task table: what a course gives it unless its file says otherwise. The one place the
    course reads the table's points."""
    return points_of(task_id)


@dataclass(frozen=True)
class Penalty:
    """A late submission's penalty: how many days (or parts of one) late, and the percent of its total taken."""
    days: int
    percent: float

    def text(self, course: Course) -> str:
        """The penalty in words, as the gradebook, the scorecard and the platforms show it."""
        return msg.LATE_PENALTY.format(days=self.days, s="" if self.days == 1 else "s", percent=self.percent,
                                       per_day=course.percent_per_day, cap=course.cap_percent)


@dataclass(frozen=True)
class Course:
    """A course: its tasks with their points (in the task table's order), its secret, its late policy and its
    Gradescope visibility. ``Course()`` is the default course: every task with the table's points, no secret, no due
    date."""
    points_by_task: dict[str, int] = field(default_factory=lambda: {t.id: default_points(t.id) for t in TASKS})
    secret: str | None = None
    due: datetime | None = None
    percent_per_day: float = LATE_DEFAULTS["percent_per_day"]
    cap_percent: float = LATE_DEFAULTS["cap_percent"]
    extensions: dict[str, datetime] = field(default_factory=dict)  # identity (keys.identity) -> the student's due
    times: Path | None = None  # grade-all's submission times (a CSV), resolved against the course file's folder
    visibility: str = "visible"
    task_visibility: dict[str, str] = field(default_factory=dict)
    path: Path | None = None  # the file it was read from

    @property
    def tasks(self) -> tuple[str, ...]:
        """The ids of the course's tasks, in the task table's order."""
        return tuple(self.points_by_task)

    def points(self, task_id: str) -> int:
        """The points of ``task_id`` in this course (0 for a task not in it)."""
        return self.points_by_task.get(task_id, 0)

    @property
    def total(self) -> int:
        """What the course's points add to."""
        return sum(self.points_by_task.values())

    @property
    def keyed(self) -> bool:
        """Whether the course has a secret to derive its students' keys from."""
        return self.secret is not None

    def key_for(self, student: str) -> int:
        """The grading key of ``student`` (their identity on the platform that grades); CourseError without a
        secret."""
        if self.secret is None:
            raise CourseError(msg.COURSE_NO_SECRET.format(where=self.path or msg.COURSE_DEFAULT, env=SECRET_ENV))
        return keys.student_key(self.secret, student)

    def verdict(self) -> dict:
        """What of the course decides a verdict, for grade-all's fingerprint: the tasks, their points and the secret's
        commitment (never the secret). The late policy, the due dates and the visibility are not in it."""
        return {"points": self.points_by_task,
                "secret": keys.commitment(self.secret) if self.secret is not None else None}

    def due_for(self, identities: Iterable[str]) -> datetime | None:
        """The due date of the student known by any of ``identities``: their extension, else the course's."""
        for name in identities:
            if keys.identity(name) in self.extensions:
                return self.extensions[keys.identity(name)]
        return self.due

    def penalty(self, submitted: datetime | None, identities: Iterable[str]) -> Penalty | None:
        """The late penalty of a submission made at ``submitted`` by the student known by ``identities``: None when
        it is on time, or when there is no due date or no submission time."""
        due = self.due_for(identities)
        if due is None or submitted is None or submitted <= due:
            return None
        days = math.ceil((submitted - due) / timedelta(days=1))
        return Penalty(days, min(self.cap_percent, days * self.percent_per_day))

    def visibility_of(self, task_id: str) -> str:
        """The Gradescope visibility of ``task_id``'s test."""
        return self.task_visibility.get(task_id, self.visibility)


DEFAULT = Course()


def grading(course: Course, student: str | None, *, key: int | None = None,
            tasks: tuple[str, ...] | None = None) -> dict:
    """What a grade of ``student`` in ``course`` takes: pipeline.grade_submission's ``key``, ``tasks``, ``points`` and
    ``key_shown``, as JSON (a judge's job carries them). The tasks are the course's (those of ``tasks`` only, when
    given: CourseError for one the course leaves out), with the course's points. The key is ``key`` when given (an
    instructor's own, shown on the scorecard), else the student's, derived from the course's secret (the scorecard
    shows its tag, never the key), else none (derandomized)."""
    if tasks:
        left_out = [t for t in tasks if t not in course.points_by_task]
        if left_out:
            raise CourseError(msg.COURSE_TASKS_LEFT_OUT.format(tasks=", ".join(left_out),
                                                               where=course.path or msg.COURSE_DEFAULT))
    chosen = [t for t in course.tasks if not tasks or t in tasks]
    shown = None
    if key is None and course.keyed and student is not None:
        key = course.key_for(student)
        shown = msg.EXAMPLES_STUDENT_KEY.format(tag=keys.tag(key))
    return {"key": key, "tasks": chosen, "points": {t: course.points(t) for t in chosen}, "key_shown": shown}


def from_environment(course: Course) -> Course:
    """``course`` with ``$AUTOGRAD_LAB_SECRET`` as its secret where its file gives none (a runner's or a CI's
    secret store keeps it then)."""
    from dataclasses import replace

    secret = os.environ.get(SECRET_ENV, "").strip()
    if course.secret is not None or not secret:
        return course
    if len(secret) < keys.MIN_SECRET_CHARS:
        raise CourseError(msg.COURSE_SHORT_SECRET_ENV.format(env=SECRET_ENV, chars=keys.MIN_SECRET_CHARS))
    return replace(course, secret=secret)


def load(path: Path | str | None) -> Course:
    """The course of the file at ``path`` (the default course when None), its secret from the environment where the
    file has none; CourseError, naming the line, for a file that cannot be used."""
    if path is None:
        return from_environment(DEFAULT)
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CourseError(msg.COURSE_UNREADABLE.format(path=path, error=error.strerror or error)) from None
    except UnicodeDecodeError:
        raise CourseError(msg.COURSE_NOT_UTF8.format(path=path)) from None
    return from_environment(parse(text, path))


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def parse(text: str, path: Path) -> Course:
    """The course ``text`` holds (read from ``path``, which errors name); CourseError naming the line otherwise."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = _TOML_AT.search(str(error))
        line = int(found[1]) if found else 1
        raise CourseError(msg.COURSE_AT.format(path=path, line=line, what=msg.COURSE_NOT_TOML.format(
            error=_TOML_AT.sub("", str(error)).strip()))) from None
    lines = _Lines(text)

    def fail(table: str, key: str | None, what: str):
        raise CourseError(msg.COURSE_AT.format(path=path, line=lines.of(table, key), what=what))

    _known(data, ("secret", "tasks", "late", "gradescope"), "", fail)
    secret = data.get("secret")
    if secret is not None and (not isinstance(secret, str) or len(secret.strip()) < keys.MIN_SECRET_CHARS):
        fail("", "secret", msg.COURSE_SHORT_SECRET.format(chars=keys.MIN_SECRET_CHARS))
    points = _points(_table(data, "tasks", fail), fail)
    late = _table(data, "late", fail)
    _known(late, ("due", "percent_per_day", "cap_percent", "times", "extensions"), "late", fail)
    rates = {}
    for name, default in LATE_DEFAULTS.items():
        value = late.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
            fail("late", name, msg.COURSE_BAD_PERCENT.format(name=name, value=value))
        rates[name] = float(value)
    times = late.get("times")
    if times is not None and (not isinstance(times, str) or not times.strip()):
        fail("late", "times", msg.COURSE_BAD_TIMES.format(value=times))
    extensions = {}
    for student, when in _table(late, "extensions", fail, "late.").items():
        extensions[keys.identity(student)] = _date(when, lambda what, s=student: fail("late.extensions", s, what))
    gradescope = _table(data, "gradescope", fail)
    _known(gradescope, ("visibility", "tasks"), "gradescope", fail)
    visibility = gradescope.get("visibility", "visible")
    if visibility not in VISIBILITIES:
        fail("gradescope", "visibility", msg.COURSE_BAD_VISIBILITY.format(value=visibility,
                                                                          known=", ".join(VISIBILITIES)))
    by_task = _table(gradescope, "tasks", fail, "gradescope.")
    for task_id, value in by_task.items():
        if task_id not in BY_ID:
            fail("gradescope.tasks", task_id, msg.COURSE_UNKNOWN_TASK.format(task=task_id, known=", ".join(BY_ID)))
        if value not in VISIBILITIES:
            fail("gradescope.tasks", task_id, msg.COURSE_BAD_VISIBILITY.format(value=value,
                                                                               known=", ".join(VISIBILITIES)))
    due = late.get("due")
    return Course(points_by_task=points, secret=secret.strip() if secret is not None else None,
                  due=None if due is None else _date(due, lambda what: fail("late", "due", what)),
                  percent_per_day=rates["percent_per_day"], cap_percent=rates["cap_percent"],
                  extensions=extensions, times=(path.parent / times) if times else None, visibility=visibility,
                  task_visibility=dict(by_task), path=path)


def _table(data: dict, name: str, fail, prefix: str = "") -> dict:
    value = data.get(name, {})
    if not isinstance(value, dict):
        fail(prefix.rstrip("."), name, msg.COURSE_NOT_A_TABLE.format(name=prefix + name))
    return value


def _known(data: dict, names: tuple[str, ...], table: str, fail) -> None:
    for name in data:
        if name not in names:
            fail(table, name, msg.COURSE_UNKNOWN_KEY.format(key=f"{table}.{name}" if table else name,
                                                            known=", ".join(names)))


def _points(given: dict, fail) -> dict[str, int]:
    """The course's points by task, in the task table's order: each given one checked, the rest the table's."""
    for task_id, value in given.items():
        if task_id not in BY_ID:
            fail("tasks", task_id, msg.COURSE_UNKNOWN_TASK.format(task=task_id, known=", ".join(BY_ID)))
        if isinstance(value, bool) or not isinstance(value, int):
            fail("tasks", task_id, msg.COURSE_POINTS_NOT_WHOLE.format(task=task_id, value=value))
        if value < 0:
            fail("tasks", task_id, msg.COURSE_NEGATIVE_POINTS.format(task=task_id, value=value))
    points = {}
    for task in TASKS:
        value = given.get(task.id, default_points(task.id))
        needed = NEEDS.get(task.id)
        if needed is not None and given.get(needed, default_points(needed)) == 0:
            if given.get(task.id, 0) > 0:
                fail("tasks", task.id, msg.COURSE_NEEDS_TASK.format(task=task.id, needed=needed))
            continue
        # 0 leaves a task out; a task the table gives no points (6.2) stays in, for none, unless the file says 0
        if value > 0 or (task.id not in given and default_points(task.id) == 0):
            points[task.id] = value
    if not any(points.values()):
        fail("tasks", None, msg.COURSE_NO_POINTS)
    return points


def _date(value, fail) -> datetime:
    """A due date: a TOML date-time with an offset, or such a date-time as ISO 8601 text; ``fail`` otherwise."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            fail(msg.COURSE_BAD_DATE.format(value=repr(value)))
    if not isinstance(value, datetime):
        fail(msg.COURSE_BAD_DATE.format(value=value))
    if value.tzinfo is None or value.utcoffset() is None:
        fail(msg.COURSE_DATE_NO_OFFSET.format(value=value.isoformat()))
    return value


class _Lines:
    """Where a key of a table is written in the file's text, for errors that name its line."""

    _HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
    _KEY = re.compile(r"""^\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*=""")

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def of(self, table: str, key: str | None) -> int:
        """The line (from 1) of ``key`` in ``table`` ("" for the top level, "late.extensions" for a sub-table), else
        the table's header, else 1."""
        current, header = "", None
        for number, line in enumerate(self.lines, start=1):
            found = self._HEADER.match(line)
            if found:
                current = ".".join(part.strip().strip("\"'") for part in found[1].split("."))
                if current == table:
                    header = number
                continue
            if current != table or key is None:
                continue
            found = self._KEY.match(line)
            if found and next(g for g in found.groups() if g is not None) == key:
                return number
        return header or 1


def read_times(path: Path, course_path: Path | None = None) -> dict[str, datetime]:
    """grade-all's submission times: a CSV with the header ``student,submitted`` and one row per student (the
    submission's folder name, an ISO 8601 date-time with its offset). CourseError naming the line otherwise; rows
    of students who did not submit are harmless."""
    where = Path(path)
    try:
        with open(where, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except OSError as error:
        raise CourseError(msg.COURSE_TIMES_UNREADABLE.format(path=where, course=course_path or "",
                                                              error=error.strerror or error)) from None
    if not rows or tuple(cell.strip().lower() for cell in rows[0][:2]) != TIMES_HEADER:
        raise CourseError(msg.COURSE_AT.format(path=where, line=1, what=msg.COURSE_TIMES_HEADER.format(
            header=",".join(TIMES_HEADER))))
    times = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue

        def fail(what, line=line):
            raise CourseError(msg.COURSE_AT.format(path=where, line=line, what=what))

        if len(row) < 2 or not row[0].strip():
            fail(msg.COURSE_TIMES_ROW.format(header=",".join(TIMES_HEADER)))
        times[keys.identity(row[0])] = _date(row[1], fail)
    return times


def submitted_at(times: dict[str, datetime], student: str) -> datetime | None:
    """A student's submission time in ``times`` (read_times), or None."""
    return times.get(keys.identity(student))


# ----- writing a course file: `autograd-lab course init` and `course rotate` -----


def template(secret: str) -> str:
    """The text of a new course file: every default, each with a comment, and ``secret``."""
    rows = []
    for task in TASKS:
        line = f'"{task.id}" = {task.points}'
        if task.points == 0:
            rows.append(msg.COURSE_TEMPLATE_NO_POINTS.format(title=task.title, line=line))
        else:
            rows.append(f"{line:<12}  # {task.title}")
    return msg.COURSE_TEMPLATE.format(secret=secret, tasks="\n".join(rows), total=sum(t.points for t in TASKS),
                                      env=SECRET_ENV, per_day=f"{LATE_DEFAULTS['percent_per_day']:g}",
                                      cap=f"{LATE_DEFAULTS['cap_percent']:g}", visibilities=", ".join(VISIBILITIES))


def init(path: Path, *, force: bool = False) -> Path:
    """Write a new course file at ``path`` (private: mode 0600), with a fresh secret; FileExistsError where one is
    there, unless ``force``."""
    path = Path(path)
    if path.exists() and not force:
        raise FileExistsError(msg.COURSE_FILE_EXISTS.format(path=path))
    _write_private(path, template(keys.new_secret()))
    return path


_SECRET_LINE = re.compile(r'^(\s*secret\s*=\s*)(["\']).*?\2(.*)$', re.M)


def rotate(path: Path) -> Path:
    """Give the course file at ``path`` a fresh secret, everything else kept as written; CourseError for a file that
    cannot be read as a course or has no secret line."""
    path = Path(path)
    course = load(path) if path.is_file() else None
    if course is None:
        raise CourseError(msg.COURSE_UNREADABLE.format(path=path, error="no such file"))
    text = path.read_text(encoding="utf-8")
    new, count = _SECRET_LINE.subn(lambda m: f'{m[1]}"{keys.new_secret()}"{m[3]}', text, count=1)
    if count == 0:
        raise CourseError(msg.COURSE_NO_SECRET_LINE.format(path=path))
    parse(new, path)
    _write_private(path, new)
    return path


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole, readable by its owner only (it holds the secret)."""
    from graders.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    path.chmod(0o600)


def text(course: Course, *, secret: bool) -> str:
    """The course as a file of its own: its tasks, late policy and visibility, and its secret where ``secret``
    (Gradescope's zip, which students never see) or not (Classroom 50's autograder, which others can read: the
    runner gives the secret). grade-all's submission times are not in it."""
    if secret and course.secret is None:
        raise CourseError(msg.COURSE_NO_SECRET.format(where=course.path or msg.COURSE_DEFAULT, env=SECRET_ENV))
    lines = [msg.COURSE_COPY_HEAD if secret else msg.COURSE_PUBLIC_HEAD.format(env=SECRET_ENV), ""]
    if secret:
        lines += [f'secret = "{_toml_text(course.secret)}"', ""]
    lines.append("[tasks]")
    for task in TASKS:
        if task.id not in course.points_by_task:
            lines.append(f'"{task.id}" = 0')
        elif course.points(task.id) > 0 or default_points(task.id) > 0:  # a task in it for no points is left out
            lines.append(f'"{task.id}" = {course.points(task.id)}')
    lines += ["", "[late]", f"percent_per_day = {course.percent_per_day:g}", f"cap_percent = {course.cap_percent:g}"]
    if course.due is not None:
        lines.append(f"due = {course.due.isoformat()}")
    if course.extensions:
        lines += ["", "[late.extensions]"]
        lines += [f'"{_toml_text(name)}" = {when.isoformat()}' for name, when in sorted(course.extensions.items())]
    lines += ["", "[gradescope]", f'visibility = "{course.visibility}"']
    if course.task_visibility:
        lines += ["", "[gradescope.tasks]"]
        lines += [f'"{task_id}" = "{value}"' for task_id, value in sorted(course.task_visibility.items())]
    return "\n".join(lines) + "\n"


def _toml_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
