"""A class's gradebook: one record per student, grades.csv, and merging the gradebooks of shards.

``OUT_DIR/students/<student>/grading.json`` is the record of one graded
submission: its content hash, the status, the points per task, the total and
the seconds. It is written last, after results.json, so a record always stands
for finished files. ``grades.csv`` is rendered from the records: one row per
student, one column per task id, then total, status, seconds and the isolation the grade
ran under. The students'
folders live under ``students/``, never beside grade-all's own files, so that no
student's name (``grades.csv``, ``class.html``) can be one of them. A gradebook
written before that (each student's folder beside grades.csv) is still read, and
grade-all moves its folders under ``students/`` (``migrate``).

A shard's gradebook is another machine's output, so ``merge`` trusts nothing in
it: every name is one intake could have found, every value has its type and its
range, every file it copies is a regular file, and a row that is not so is
refused with its file and line before anything is written.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import stat
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from graders import messages as msg
from graders.files import atomic_write
from graders.isolation.sandbox import COUNTED
from graders.results.plain import safe
from graders.submission.intake import name_problem
from graders.tasks import BY_ID, GRADED_MODULES, TASKS

RECORD = "grading.json"
CSV_NAME = "grades.csv"
STUDENTS = "students"  # OUT_DIR/students/<student>/: every student's folder, apart from grade-all's own files
CODE = "code"  # OUT_DIR/students/<student>/code/: the .py files graded, which the similarity report compares
FIXED_COLUMNS = ("total", "status", "seconds", "isolation")
# What a student's folder may hold; merge copies these (and CODE_FILES under CODE).
STUDENT_FILES = (RECORD, "results.json", "scorecard.md", "loss.png")
CODE_FILES = tuple(f"{module}.py" for module in GRADED_MODULES)
MAX_COPIED_BYTES = 64 * 2**20  # one file merge copies from a shard: a results.json, a picture, a module


@dataclass
class Record:
    """One student's line of the gradebook (grading.json in their folder): the status, total and points per task, the
    seconds, the submission's content hash and the settings' fingerprint, which decide whether grade-all grades it
    again."""
    student: str
    status: str
    total: float = 0.0
    scores: dict[str, float] = field(default_factory=dict)  # task id -> points; empty when not graded
    seconds: float = 0.0
    hash: str = ""
    settings: str = ""
    isolation: str = ""  # the isolation the grade ran under (graders.isolation.sandbox.Isolation.level)

    @property
    def graded(self) -> bool:
        """Whether the submission was graded (whatever its score), not refused as malformed or failed by a judge."""
        return self.status.startswith(msg.BATCH_GRADED)

    def row(self, task_ids: tuple[str, ...]) -> list[str]:
        """The record as a row of grades.csv: the student, the points of each task in ``task_ids`` (empty where none),
        the total, the status, the seconds and the isolation, each cell safe for a spreadsheet."""
        cells = [_number(self.scores[t]) if t in self.scores else "" for t in task_ids]
        return [_cell(self.student), *cells, _number(self.total), _cell(safe(self.status)), f"{self.seconds:.1f}",
                _cell(self.isolation)]


def _number(value: float) -> str:
    return f"{value:g}"


# A cell a spreadsheet would read as a formula (=HYPERLINK(...), +cmd, -2+3, @SUM): a student's folder name, or a
# reason that quotes one, is written with a leading apostrophe, which spreadsheets show as text. Spreadsheets skip
# leading whitespace (a no-break space, an ideographic space, a byte-order mark) and read the full-width and other
# compatibility forms of a sign (＝＋－＠, the minus sign −) as the ASCII one, so the test reads the cell as they do:
# NFKC-normalised, its leading whitespace skipped. A tab or carriage return first counts too. read_csv takes
# exactly that apostrophe off again, so every name round-trips.
_TRIGGERS = ("=", "+", "-", "@")
# Every character str.isspace() knows, and the invisible ones spreadsheets skip too (zero-width, word joiner, BOM).
_SKIPPED = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
            "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\u200b\u2060\ufeff")


def _formula(text: str) -> bool:
    """Whether a spreadsheet would run ``text`` (less any apostrophes it starts with) as a formula."""
    body = text.lstrip("'")
    if body[:1] in ("\t", "\r"):
        return True
    read = unicodedata.normalize("NFKC", body).replace("\u2212", "-").lstrip(_SKIPPED)
    return read[:1] in _TRIGGERS


def _cell(text: str) -> str:
    return "'" + text if _formula(text) else text


def _uncell(text: str) -> str:
    return text[1:] if text.startswith("'") and _formula(text[1:]) else text


def legacy(out: Path) -> bool:
    """Whether ``out`` holds a gradebook written before the students' folders moved under students/: grades.csv with
    no students/ folder beside it, or one that is itself a student's (it holds a record)."""
    out = Path(out)
    if not (out / CSV_NAME).is_file():
        return False
    folder = out / STUDENTS
    return not folder.is_dir() or folder.is_symlink() or (folder / RECORD).is_file()


def students_dir(out: Path) -> Path:
    """Where the students' folders of the gradebook in ``out`` are: OUT_DIR/students/, or OUT_DIR itself for a
    gradebook of the older layout (``legacy``)."""
    return Path(out) if legacy(out) else Path(out) / STUDENTS


def student_dir(out: Path, student: str) -> Path:
    """The folder of ``student`` in the gradebook written to ``out``."""
    return students_dir(out) / student


def migrate(out: Path) -> list[str]:
    """Move the students' folders of an older gradebook in ``out`` (beside grades.csv) under students/, so that a run
    of grade-all goes on from it; the students moved. Only folders that hold a record and are named by a row of
    grades.csv move, by a rename each (nothing is copied)."""
    out = Path(out)
    if not legacy(out):
        return []
    moving = out / ".students-moving"
    moving.mkdir(exist_ok=True)
    moved = []
    for record in _rows_or_none(out / CSV_NAME):
        folder = out / record.student
        if name_problem(record.student) is None and not folder.is_symlink() and (folder / RECORD).is_file():
            os.replace(folder, moving / record.student)
            moved.append(record.student)
    os.replace(moving, out / STUDENTS)
    return moved


def _rows_or_none(path: Path) -> list[Record]:
    try:
        return read_csv(path)[1]
    except (OSError, ValueError, KeyError, IndexError):
        return []


def save_record(folder: Path, record: Record) -> None:
    """Write ``record`` as grading.json into the student's folder, whole or not at all; written last, so a record always
    stands for finished files."""
    atomic_write(Path(folder) / RECORD, json.dumps(asdict(record), indent=2, sort_keys=True) + "\n")


def load_record(folder: Path) -> Record | None:
    """The record in ``folder``, or None when there is none, it cannot be read or it is not a record's shape."""
    try:
        return record_from(json.loads((Path(folder) / RECORD).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def record_from(data) -> Record:
    """The record ``data`` (grading.json's object) holds; ValueError saying what is wrong where it is not one."""
    if not isinstance(data, dict):
        raise ValueError(msg.MERGE_RECORD_NOT_OBJECT)
    fields = {"student": str, "status": str, "total": float, "scores": dict, "seconds": float, "hash": str,
              "settings": str, "isolation": str}
    unknown = sorted(set(data) - set(fields))
    if unknown or "student" not in data or "status" not in data:
        raise ValueError(msg.MERGE_RECORD_FIELDS.format(fields=", ".join(fields)))
    for name, kind in fields.items():
        if name in data and not (_is_number(data[name]) if kind is float else isinstance(data[name], kind)):
            raise ValueError(msg.MERGE_RECORD_TYPE.format(field=name, got=type(data[name]).__name__))
    scores = data.get("scores", {})
    if not all(isinstance(k, str) and _is_number(v) for k, v in scores.items()):
        raise ValueError(msg.MERGE_RECORD_TYPE.format(field="scores", got="a table of other than task ids to numbers"))
    return Record(**{**data, "scores": {k: float(v) for k, v in scores.items()}})


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def columns(task_ids: tuple[str, ...]) -> list[str]:
    """The header of grades.csv: the student, one column per task, then total, status, seconds and isolation."""
    return ["student", *task_ids, *FIXED_COLUMNS]


def render_csv(records: list[Record], task_ids: tuple[str, ...]) -> str:
    """grades.csv's text: the header and one row per record, in the students' order, with RFC 4180's line ends."""
    out = io.StringIO()
    # RFC 4180's line ends: the writer quotes a field holding any of them, so a name with a carriage return (a
    # folder may be named so) stays one field of one row.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns(task_ids))
    for record in sorted(records, key=lambda r: r.student):
        writer.writerow(record.row(task_ids))
    return out.getvalue()


def write_csv(path: Path, records: list[Record], task_ids: tuple[str, ...]) -> None:
    """Write grades.csv to ``path``, whole or not at all."""
    atomic_write(path, render_csv(records, task_ids))


def read_csv(path: Path, points: dict[str, float] | None = None) -> tuple[tuple[str, ...], list[Record]]:
    """The task ids (the columns between student and total) and the rows of a grades.csv, as records. ValueError
    naming the file and the line for a header that is not grades.csv's, or a row whose student is no folder's name
    or whose values are not numbers within their task's points (``points``: the course's, else the task table's)."""
    try:
        with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
            rows = list(csv.reader(f))
    except csv.Error as error:  # a field past the csv module's limit, a NUL: nothing grade-all writes
        raise ValueError(msg.MERGE_BAD_FILE.format(path=path, problem=error)) from None
    if not rows:
        raise ValueError(msg.MERGE_BAD_HEADER.format(path=path, expected=", ".join(columns(("1.1", "...")))))
    header, body = rows[0], rows[1:]
    # The columns after the tasks: grade-all's, or an older version's, which recorded no isolation.
    fixed = next((tail for tail in (FIXED_COLUMNS, FIXED_COLUMNS[:-1]) if tuple(header[-len(tail):]) == tail), ())
    task_ids = tuple(header[1:-len(fixed)]) if fixed else ()
    if not fixed or header[:1] != ["student"] or len(header) < 1 + len(fixed) \
            or any(t not in BY_ID for t in task_ids) or len(set(task_ids)) != len(task_ids):
        raise ValueError(msg.MERGE_BAD_HEADER.format(path=path, expected=", ".join(columns(("1.1", "...")))))
    records = []
    for line, row in enumerate(body, start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise ValueError(msg.MERGE_BAD_ROW.format(path=path, line=line, problem=msg.MERGE_CELLS.format(
                cells=len(row), columns=len(header))))
        cells = dict(zip(header, row))
        student = _uncell(cells["student"])
        problem = name_problem(student)
        if problem is not None:
            raise ValueError(msg.MERGE_BAD_ROW.format(path=path, line=line, problem=msg.MERGE_BAD_NAME.format(
                name=safe(student)[:80], problem=problem)))
        scores = {t: _value(path, line, t, cells[t], _most(t, points)) for t in task_ids if cells[t] != ""}
        records.append(Record(student, _uncell(cells["status"]), _value(path, line, "total", cells["total"] or "0"),
                              scores, _value(path, line, "seconds", cells["seconds"] or "0"),
                              isolation=_uncell(cells.get("isolation", ""))))
    return task_ids, records


def _value(path: Path, line: int, column: str, text: str, most: float | None = None) -> float:
    """A cell of grades.csv as the number it must be: finite, at least 0 and at most ``most``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (most is not None and value > most):
        expected = msg.MERGE_NUMBER_UP_TO.format(most=most) if most is not None else msg.MERGE_NUMBER
        raise ValueError(msg.MERGE_BAD_ROW.format(path=path, line=line, problem=msg.MERGE_BAD_VALUE.format(
            column=column, value=safe(text)[:40], expected=expected)))
    return value


def load_class(folder: Path, *, strict: bool = False,
               points: dict[str, float] | None = None) -> tuple[tuple[str, ...], list[Record]]:
    """The task ids and records of the gradebook grade-all wrote to ``folder``: each row of grades.csv, as the judge
    gave it where the student's grading.json kept it (grades.csv shows the adjustments of its run, which a reader
    applies again from the class's file: graders.classgrade.adjustments). ``strict`` (a shard to merge): a
    grading.json that is not a record of that row's student is refused, naming the file, rather than passed over."""
    task_ids, rows = read_csv(Path(folder) / CSV_NAME, points)
    records = []
    for row in rows:
        home = student_dir(folder, row.student)
        record = load_record(home) if home.is_dir() and not home.is_symlink() else None
        if strict and record is None and _regular(home / RECORD):
            try:
                record_from(json.loads((home / RECORD).read_bytes()))
            except (ValueError, TypeError) as error:
                raise ValueError(msg.MERGE_BAD_FILE.format(path=home / RECORD, problem=error)) from None
        if record is not None and record.student != row.student:
            if strict:
                raise ValueError(msg.MERGE_BAD_FILE.format(path=home / RECORD, problem=msg.MERGE_RECORD_OTHER.format(
                    student=safe(record.student)[:80], row=safe(row.student)[:80])))
            record = None
        if strict and record is not None:
            _check_scores(home / RECORD, record, task_ids, points)
        records.append(record if record is not None else row)
    return task_ids, records


def _check_scores(path: Path, record: Record, task_ids: tuple[str, ...],
                  points: dict[str, float] | None = None) -> None:
    """A record's points: each a task of the gradebook, within its points (``points``: the course's, else the task
    table's); ValueError naming the file."""
    for task, score in record.scores.items():
        if task not in task_ids or not 0 <= score <= _most(task, points):
            raise ValueError(msg.MERGE_BAD_FILE.format(path=path, problem=msg.MERGE_RECORD_SCORE.format(
                task=safe(task)[:20], points=score)))
    if record.total < 0 or record.seconds < 0:
        raise ValueError(msg.MERGE_BAD_FILE.format(path=path, problem=msg.MERGE_RECORD_TYPE.format(
            field="total", got="a negative number")))


def _most(task: str, points: dict[str, float] | None) -> float:
    """The most points ``task`` can score: the course's where ``points`` gives them, else the task table's."""
    return points[task] if points is not None and task in points else BY_ID[task].points


def _regular(path: Path) -> bool:
    """A regular file (never a link, a FIFO or a device), found with lstat."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def task_ids_of(selected: tuple[str, ...] | None) -> tuple[str, ...]:
    """The task columns, in the task table's order."""
    return tuple(t.id for t in TASKS if selected is None or t.id in selected)


def merge(folders: list[Path], out: Path, prepare=None, check=None,
          points: dict[str, float] | None = None) -> tuple[tuple[str, ...], list[Record]]:
    """Combine the gradebooks of ``folders`` (shards' OUT_DIRs) into ``out``: grades.csv and the students' folders.
    ``prepare(task_ids, records)``, when given, makes the records grades.csv shows (the class's adjustments), and
    is called before anything is written, so that its ValueError leaves ``out`` as it was. ``check(path)``, when
    given, refuses (ValueError) a student's results.json that is not one (graders.classgrade.report).

    Raises ValueError when a folder has no grades.csv, when the columns differ, when a student appears twice, when a
    student was graded under an isolation no grade that counts runs under (practice's, or none recorded), or when a
    shard's file is not what grade-all writes (each naming the file, and the line of a row).
    """
    out = Path(out)
    if any(Path(f).resolve() == out.resolve() for f in folders):
        raise ValueError(msg.MERGE_OUT_IS_INPUT.format(out=out))
    task_ids, first, seen, records = None, None, {}, []
    for folder in map(Path, folders):
        path = folder / CSV_NAME
        if not _regular(path):
            raise ValueError(msg.MERGE_NO_CSV.format(folder=folder))
        ids, rows = load_class(folder, strict=True, points=points)
        if task_ids is None:
            task_ids, first = ids, path
        elif ids != task_ids:
            raise ValueError(msg.MERGE_COLUMNS.format(path=path, got=", ".join(ids), first=first,
                                                      expected=", ".join(task_ids)))
        for record in rows:
            if record.student in seen:
                raise ValueError(msg.MERGE_DUPLICATE.format(student=safe(record.student),
                                                            first=seen[record.student], second=folder))
            if record.graded and record.isolation not in COUNTED:
                raise ValueError(msg.MERGE_ISOLATION.format(path=path, student=safe(record.student)[:80],
                                                            got=safe(record.isolation)[:40] or "none recorded",
                                                            expected=" or ".join(COUNTED)))
            seen[record.student] = folder
            records.append(record)
            if check is not None and _regular(student_dir(folder, record.student) / "results.json"):
                check(student_dir(folder, record.student) / "results.json")
    if prepare is not None:
        records = prepare(task_ids or (), records)
    out.mkdir(parents=True, exist_ok=True)
    root = out / STUDENTS
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise ValueError(msg.MERGE_OUT_TAKEN.format(path=root))
    root.mkdir(exist_ok=True)
    for record in records:
        source = student_dir(seen[record.student], record.student)
        if source.is_dir() and not source.is_symlink():
            target = root / record.student  # a name that read_csv checked: one folder, right under students/
            target.mkdir(exist_ok=True)
            _copy_files(source, target, STUDENT_FILES)
            if (source / CODE).is_dir() and not (source / CODE).is_symlink():
                (target / CODE).mkdir(exist_ok=True)
                _copy_files(source / CODE, target / CODE, CODE_FILES)
    write_csv(out / CSV_NAME, records, task_ids or ())
    return task_ids or (), records


def _copy_files(source: Path, target: Path, names: tuple[str, ...]) -> None:
    """Copy the regular files ``names`` of ``source`` into ``target`` (each within MAX_COPIED_BYTES), removing what
    ``target`` had under those names: a link, a FIFO or a device in a shard is never followed."""
    for name in names:
        (target / name).unlink(missing_ok=True)
        if not _regular(source / name) or os.lstat(source / name).st_size > MAX_COPIED_BYTES:
            continue
        try:
            handle = os.open(source / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(handle, "rb") as f:
            atomic_write(target / name, f.read(MAX_COPIED_BYTES))
