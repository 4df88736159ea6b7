"""A class's gradebook: one record per student, grades.csv, and merging the gradebooks of shards.

``OUT_DIR/<student>/grading.json`` is the record of one graded submission: its
content hash, the status, the points per task, the total and the seconds. It is
written last, after results.json, so a record always stands for finished files.
``grades.csv`` is rendered from the records: one row per student, one column
per task id, then total, status, seconds and the isolation the grade ran under.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from graders import messages as msg
from graders.files import atomic_write
from graders.isolation.sandbox import COUNTED
from graders.results.plain import safe
from graders.tasks import TASKS

RECORD = "grading.json"
CSV_NAME = "grades.csv"
FIXED_COLUMNS = ("total", "status", "seconds", "isolation")
# What a student's folder may hold; merge copies these.
STUDENT_FILES = (RECORD, "results.json", "scorecard.md", "loss.png")


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
# reason that quotes one, is written with a leading apostrophe, which spreadsheets show as text. read_csv takes
# exactly that apostrophe off again, so every name round-trips.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def _cell(text: str) -> str:
    return "'" + text if _FORMULA.match(text) else text


def _uncell(text: str) -> str:
    return text[1:] if text.startswith("'") and _FORMULA.match(text[1:]) else text


def save_record(folder: Path, record: Record) -> None:
    """Write ``record`` as grading.json into the student's folder, whole or not at all; written last, so a record always
    stands for finished files."""
    atomic_write(Path(folder) / RECORD, json.dumps(asdict(record), indent=2, sort_keys=True) + "\n")


def load_record(folder: Path) -> Record | None:
    """The record in ``folder``, or None when there is none or it cannot be read."""
    try:
        data = json.loads((Path(folder) / RECORD).read_text())
        return Record(**data)
    except (OSError, ValueError, TypeError):
        return None


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


def read_csv(path: Path) -> tuple[tuple[str, ...], list[Record]]:
    """The task ids (the columns between student and total) and the rows of a grades.csv, as records."""
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    task_ids = tuple(header[1:header.index("total")] if "total" in header else header[1:-len(FIXED_COLUMNS)])
    records = []
    for row in body:
        cells = dict(zip(header, row))
        scores = {t: float(cells[t]) for t in task_ids if cells.get(t, "") != ""}
        records.append(Record(_uncell(cells["student"]), _uncell(cells["status"]), float(cells["total"] or 0), scores,
                              float(cells["seconds"] or 0), isolation=_uncell(cells.get("isolation", ""))))
    return task_ids, records


def load_class(folder: Path) -> tuple[tuple[str, ...], list[Record]]:
    """The task ids and records of the gradebook grade-all wrote to ``folder``: each row of grades.csv, as the judge
    gave it where the student's grading.json kept it (grades.csv shows the adjustments of its run, which a reader
    applies again from the class's file: graders.classgrade.adjustments)."""
    task_ids, rows = read_csv(Path(folder) / CSV_NAME)
    records = []
    for row in rows:
        record = load_record(Path(folder) / row.student) if (Path(folder) / row.student).is_dir() else None
        records.append(record if record is not None and record.student == row.student else row)
    return task_ids, records


def task_ids_of(selected: tuple[str, ...] | None) -> tuple[str, ...]:
    """The task columns, in the task table's order."""
    return tuple(t.id for t in TASKS if selected is None or t.id in selected)


def merge(folders: list[Path], out: Path, prepare=None) -> tuple[tuple[str, ...], list[Record]]:
    """Combine the gradebooks of ``folders`` (shards' OUT_DIRs) into ``out``: grades.csv and the students' folders.
    ``prepare(task_ids, records)``, when given, makes the records grades.csv shows (the class's adjustments), and
    is called before anything is written, so that its ValueError leaves ``out`` as it was.

    Raises ValueError when a folder has no grades.csv, when the columns differ, when a student
    appears twice, or when a student was graded under an isolation no grade that counts runs under (practice's, or
    none recorded).
    """
    out = Path(out)
    if any(Path(f).resolve() == out.resolve() for f in folders):
        raise ValueError(msg.MERGE_OUT_IS_INPUT.format(out=out))
    task_ids, first, seen, records = None, None, {}, []
    for folder in map(Path, folders):
        path = folder / CSV_NAME
        if not path.is_file():
            raise ValueError(msg.MERGE_NO_CSV.format(folder=folder))
        ids, rows = load_class(folder)
        if task_ids is None:
            task_ids, first = ids, path
        elif ids != task_ids:
            raise ValueError(msg.MERGE_COLUMNS.format(path=path, got=", ".join(ids), first=first,
                                                      expected=", ".join(task_ids)))
        for record in rows:
            if record.student in seen:
                raise ValueError(msg.MERGE_DUPLICATE.format(student=record.student, first=seen[record.student],
                                                            second=folder))
            if record.graded and record.isolation not in COUNTED:
                raise ValueError(msg.MERGE_ISOLATION.format(path=path, student=record.student,
                                                            got=record.isolation or "none recorded",
                                                            expected=" or ".join(COUNTED)))
            seen[record.student] = folder
            records.append(record)
    if prepare is not None:
        records = prepare(task_ids or (), records)
    out.mkdir(parents=True, exist_ok=True)
    for record in records:
        source = seen[record.student] / record.student
        if source.is_dir():
            target = out / record.student
            target.mkdir(exist_ok=True)
            for name in STUDENT_FILES:
                (target / name).unlink(missing_ok=True)
                if (source / name).is_file():
                    shutil.copyfile(source / name, target / name)
    write_csv(out / CSV_NAME, records, task_ids or ())
    return task_ids or (), records
