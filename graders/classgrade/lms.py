"""The class's totals as a file an LMS gradebook imports: Canvas's or Moodle's CSV, matched through the LMS's roster.

A student's folder is named by a login the LMS may not know (a GitHub user name), while an LMS matches an imported
row by its own identifiers. So the instructor exports the roster from the LMS (Canvas: Grades > Export; Moodle:
Grade administration > Export > Plain text file), names the roster column that holds the folders' names
(``--match``, a column they may add), and gets back the import file:

- Canvas: ``Student, ID, SIS User ID, SIS Login ID, Section`` copied from the roster, then one assignment column;
  the second row is ``Points Possible``. A column named like one of the roster's assignments (``Autograd lab``
  for ``Autograd lab (1234)``) takes that assignment's header, so Canvas fills it; another name makes a new one.
- Moodle: the roster's identifier column (``--id``: Email address, ID number or Username, which Moodle's import
  maps to a user) and one grade item column.

Both are UTF-8 (no byte-order mark), comma-separated, one header row, RFC 4180 line ends, and the points written
as plain decimals with a dot (``97.5``, never ``9.75e+01``). The totals are the adjusted ones, as grades.csv shows
them. A gradebook student the roster lacks, and a roster student without a submission, are named in the notes,
never dropped silently; a roster that cannot be read is refused with its line.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from graders import messages as msg
from graders.classgrade.gradebook import Record, _cell
from graders.results.plain import safe
from graders.tasks import BY_ID

CANVAS, MOODLE = "canvas", "moodle"
LMS = (CANVAS, MOODLE)
# The columns Canvas's gradebook import reads to find a student, in the order of its exports.
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_REQUIRED = ("Student", "ID", "SIS Login ID", "Section")
CANVAS_POINTS_ROW = "Points Possible"
# The user columns Moodle's CSV import can map to a user ("Identify user by"), by preference.
MOODLE_IDS = ("Email address", "ID number", "Username")
MISSING_SKIP, MISSING_ZERO = "skip", "zero"


@dataclass
class Roster:
    """The LMS's roster: its header and its student rows (cells by column), each with its line in the file."""
    path: Path
    header: list[str]
    rows: list[tuple[int, dict[str, str]]]


@dataclass
class Export:
    """The import file's text and what the instructor must hear: students on one side only, students not graded."""
    text: str
    rows: int
    not_on_roster: list[str] = field(default_factory=list)
    no_submission: list[str] = field(default_factory=list)
    not_graded: list[str] = field(default_factory=list)


def _decode(path: Path) -> str:
    """The roster's text: UTF-8, with or without the byte-order mark spreadsheets write; ValueError naming the line
    of the first byte that is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(msg.LMS_ROSTER_ENCODING.format(path=path, line=data[:error.start].count(b"\n") + 1)) from None


def read_roster(path: Path, lms: str) -> Roster:
    """The roster exported from ``lms``: its header and its students, a Canvas export's ``Points Possible`` and
    posting-policy rows (no student ID) left out. ValueError for an empty file, a header that repeats a column or
    lacks what the import needs, or a row whose cells do not match the header, naming its line."""
    path = Path(path)
    rows = list(csv.reader(io.StringIO(_decode(path), newline="")))
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise ValueError(msg.LMS_ROSTER_EMPTY.format(path=path))
    header = [cell.strip() for cell in rows[0]]
    repeated = sorted({c for c in header if c and header.count(c) > 1})
    if repeated:
        raise ValueError(msg.LMS_ROSTER_REPEATED.format(path=path, columns=", ".join(repeated)))
    if lms == CANVAS:
        lacking = [c for c in CANVAS_REQUIRED if c not in header]
        if lacking:
            raise ValueError(msg.LMS_ROSTER_CANVAS.format(path=path, lacking=", ".join(lacking),
                                                          columns=", ".join(CANVAS_IDENTITY)))
    students = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ValueError(msg.LMS_ROSTER_CELLS.format(path=path, line=line, cells=len(row), columns=len(header)))
        cells = dict(zip(header, (cell.strip() for cell in row)))
        if lms == CANVAS and (cells["Student"] == CANVAS_POINTS_ROW or not any(
                cells.get(c) for c in ("ID", "SIS User ID", "SIS Login ID"))):
            continue  # "Points Possible", "Manual Posting": rows of Canvas's export that name no student
        students.append((line, cells))
    return Roster(path, header, students)


def _key(text: str) -> str:
    return text.strip().casefold()


def _points(value: float) -> str:
    """A number as both importers read it: a plain decimal with a dot, at most two places, no exponent."""
    return f"{round(value, 2):.2f}".rstrip("0").rstrip(".")


def canvas_column(roster: Roster, column: str) -> str:
    """The assignment column's header: the roster's own ``column (id)`` header where it has one for ``column``
    (Canvas then fills that assignment), else ``column`` (a new assignment)."""
    if column in roster.header:
        return column
    pattern = re.compile(re.escape(column) + r" \(\d+\)")
    found = [h for h in roster.header if pattern.fullmatch(h)]
    return found[0] if len(found) == 1 else column


def moodle_id(roster: Roster, given: str | None) -> str:
    """The identifier column of a Moodle import: ``given``, else the first of MOODLE_IDS the roster has."""
    if given is not None:
        if given not in roster.header:
            raise ValueError(msg.LMS_NO_COLUMN.format(path=roster.path, column=given, header=", ".join(roster.header)))
        return given
    found = next((c for c in MOODLE_IDS if c in roster.header), None)
    if found is None:
        raise ValueError(msg.LMS_MOODLE_ID.format(path=roster.path, columns=", ".join(MOODLE_IDS),
                                                  header=", ".join(roster.header)))
    return found


Pair = tuple[int, dict[str, str], "Record | None"]  # a roster student's line and cells, and their record


def match(roster: Roster, records: list[Record], column: str) -> tuple[list[Pair], list[Record]]:
    """Each roster student with their gradebook record (None: no submission), in the roster's order, and the
    gradebook's students the roster lacks. Names match without regard to case or surrounding spaces; ValueError for
    a missing match column, or a name found on two roster lines."""
    if column not in roster.header:
        raise ValueError(msg.LMS_NO_COLUMN.format(path=roster.path, column=column, header=", ".join(roster.header)))
    by_name: dict[str, Record] = {}
    for record in records:
        other = by_name.setdefault(_key(record.student), record)
        if other is not record:  # folders "Ada" and "ada": the roster's "ada" cannot tell them apart
            raise ValueError(msg.LMS_CASE_TWICE.format(first=safe(other.student), second=safe(record.student)))
    seen: dict[str, int] = {}
    pairs = []
    for line, cells in roster.rows:
        key = _key(cells[column])
        if key and key in seen:
            raise ValueError(msg.LMS_ROSTER_TWICE.format(path=roster.path, name=cells[column], first=seen[key],
                                                         line=line, column=column))
        if key:
            seen[key] = line
        pairs.append((line, cells, by_name.get(key) if key else None))
    return pairs, [r for r in records if _key(r.student) not in seen]


def export(lms: str, roster: Roster, records: list[Record], task_ids: tuple[str, ...], *, column: str,
           match_column: str, id_column: str | None = None, missing: str = MISSING_SKIP,
           points: dict[str, int] | None = None) -> Export:
    """The import file of ``lms`` for ``records`` (adjusted), one row per roster student with a submission (and,
    with ``missing`` "zero", one with 0 for each without); ``points``: each task's in the course (None: the task
    table's)."""
    pairs, not_on_roster = match(roster, records, match_column)
    most = sum(points[t] if points and t in points else BY_ID[t].points for t in task_ids)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    if lms == CANVAS:
        writer.writerow([*CANVAS_IDENTITY, canvas_column(roster, column)])
        writer.writerow([CANVAS_POINTS_ROW, "", "", "", "", _points(most)])
    else:
        ident = moodle_id(roster, id_column)
        writer.writerow([ident, column])
    result = Export("", 0, not_on_roster=sorted(safe(r.student) for r in not_on_roster))
    for line, cells, record in pairs:
        if record is None:
            result.no_submission.append(safe(cells[match_column] or cells.get("Student", "")) or
                                        msg.LMS_ROSTER_LINE.format(line=line))
            if missing != MISSING_ZERO:
                continue
        elif not record.graded:
            result.not_graded.append(safe(f"{record.student} ({record.status})"))
        total = _points(record.total if record is not None else 0.0)
        if lms == CANVAS:
            writer.writerow([*(_cell(cells.get(c, "")) for c in CANVAS_IDENTITY), total])
        else:
            writer.writerow([_cell(cells[ident]), total])
        result.rows += 1
    result.text = out.getvalue()
    return result


def notes(result: Export, missing: str) -> list[str]:
    """What the instructor must hear about an export: who is on one side only, who was not graded."""
    found = []
    if result.not_on_roster:
        found.append(msg.LMS_NOT_ON_ROSTER.format(count=len(result.not_on_roster),
                                                  names=", ".join(result.not_on_roster)))
    if result.no_submission:
        template = msg.LMS_NO_SUBMISSION_ZERO if missing == MISSING_ZERO else msg.LMS_NO_SUBMISSION
        found.append(template.format(count=len(result.no_submission), names=", ".join(result.no_submission)))
    if result.not_graded:
        found.append(msg.LMS_NOT_GRADED.format(count=len(result.not_graded), names="; ".join(result.not_graded)))
    return found


def write(out: Path, lms: str, roster_path: Path, *, column: str, match_column: str, id_column: str | None = None,
          missing: str = MISSING_SKIP, adjustments: Path | None = None, to: Path | None = None,
          course=None) -> tuple[Path, Export]:
    """Write the import file of ``lms`` for the gradebook in ``out`` (grade-all's or merge's OUT_DIR), its totals
    adjusted as grades.csv's are (the instructor's adjustments, then the late penalties of ``course``, a course
    file's: graders.course.course_file): to ``to``, else OUT_DIR/<lms>-import.csv. Everything is read and checked
    before the file is written."""
    from graders.classgrade.batch import Late, check_columns, read_adjustments
    from graders.classgrade.gradebook import CSV_NAME, load_class
    from graders.course import course_file
    from graders.files import atomic_write

    out, course = Path(out), course or course_file.DEFAULT
    if not (out / CSV_NAME).is_file():
        raise ValueError(msg.MERGE_NO_CSV.format(folder=out))
    if not Path(roster_path).is_file():
        raise ValueError(msg.LMS_ROSTER_MISSING.format(path=roster_path))
    task_ids, records = load_class(out, points=course.points_by_task)
    check_columns(out, task_ids, course)
    students, points = {r.student for r in records}, {t: course.points(t) for t in task_ids}
    records = Late(course, students).adjusted(records, read_adjustments(out, adjustments, task_ids, students), points)
    result = export(lms, read_roster(roster_path, lms), records, task_ids, column=column, match_column=match_column,
                    id_column=id_column, missing=missing, points=points)
    path = Path(to) if to is not None else out / f"{lms}-import.csv"
    atomic_write(path, result.text)
    return path, result
