"""An instructor's adjustments: a regrade, an excused task, a late penalty, that every run applies again.

``OUT_DIR/adjustments.csv`` (or the file given with ``--adjustments``) is the instructor's, never written by
autograd-lab: one row per adjustment, ``student,task,points,reason``. ``task`` is a task id of the gradebook or
``total``; ``points`` is ``+1.5`` or ``-2`` (added) or ``=4`` (set); ``reason`` says why, and is required. The
students' records (``grading.json``) keep what the judge gave; grades.csv, the class report and each student's
scorecard.md show the adjusted points, and the adjustments beside them, on every run of grade-all and merge, so a
regrade never loses one. A row for an unknown student or task, or points that cannot be read, stops the run
with the file's line number before anything is graded.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from pathlib import Path

from graders import messages as msg
from graders.classgrade.gradebook import Record
from graders.tasks import BY_ID

FILE_NAME = "adjustments.csv"
HEADER = ("student", "task", "points", "reason")
TOTAL = "total"
_POINTS = re.compile(r"^([+\-=])\s*(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class Adjustment:
    """One row of adjustments.csv: ``points`` added to (``sets`` False) or set as (``sets`` True) the student's
    points for ``task`` (a task id, or TOTAL)."""
    student: str
    task: str
    points: float
    sets: bool
    reason: str

    def text(self) -> str:
        """The adjustment as grades.csv and the scorecard show it: "1.4 +1 (regrade request)"."""
        sign = "=" if self.sets else "+" if self.points >= 0 else "-"
        return msg.ADJUSTMENT.format(task=self.task, sign=sign, points=abs(self.points), reason=self.reason)


def path_for(out: Path, given: Path | None) -> Path:
    """The adjustments file of the class written to ``out``: ``given``, else OUT_DIR/adjustments.csv."""
    return Path(given) if given is not None else Path(out) / FILE_NAME


def read(path: Path, task_ids: tuple[str, ...], students: set[str] | None) -> list[Adjustment]:
    """The adjustments in ``path`` (none when there is no such file, unless it was asked for by name: then the
    caller checks); ValueError naming the line for a row that cannot be applied. ``students``: the names that may be
    adjusted (None: any)."""
    path = Path(path)
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") as f:
        rows = list(csv.reader(f))
    if not rows or tuple(cell.strip().lower() for cell in rows[0]) != HEADER:
        raise ValueError(msg.ADJUST_HEADER.format(path=path, header=",".join(HEADER)))
    found = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(HEADER):
            raise ValueError(msg.ADJUST_CELLS.format(path=path, line=line, cells=len(row), header=",".join(HEADER)))
        student, task, points, reason = (cell.strip() for cell in row)
        if students is not None and student not in students:
            raise ValueError(msg.ADJUST_STUDENT.format(path=path, line=line, student=student))
        if task != TOTAL and task not in task_ids:
            raise ValueError(msg.ADJUST_TASK.format(path=path, line=line, task=task, tasks=", ".join(task_ids)))
        match = _POINTS.match(points)
        if match is None:
            raise ValueError(msg.ADJUST_POINTS.format(path=path, line=line, points=points))
        if not reason:
            raise ValueError(msg.ADJUST_REASON.format(path=path, line=line))
        value = float(match[2]) * (-1 if match[1] == "-" else 1)
        found.append(Adjustment(student, task, value, match[1] == "=", reason))
    return found


def _adjusted(value: float, adjustment: Adjustment, most: float | None) -> float:
    new = adjustment.points if adjustment.sets else value + adjustment.points
    return max(0.0, new if most is None else min(most, new))


def apply(records: list[Record], adjustments: list[Adjustment], points: dict[str, int] | None = None) -> list[Record]:
    """``records`` with their adjustments applied, in the file's order: a task's points within 0 and its most (its
    points in ``points``, the course's; the task table's without), the total the sum of the tasks' then its own
    adjustments (at least 0), and the adjustments named in the status. Records without one come back as they
    were."""
    mine: dict[str, list[Adjustment]] = {}
    for adjustment in adjustments:
        mine.setdefault(adjustment.student, []).append(adjustment)
    out = []
    for record in records:
        own = mine.get(record.student)
        if not own:
            out.append(record)
            continue
        scores = dict(record.scores)
        for adjustment in own:
            if adjustment.task != TOTAL:
                most = points[adjustment.task] if points and adjustment.task in points \
                    else BY_ID[adjustment.task].points
                scores[adjustment.task] = _adjusted(scores.get(adjustment.task, 0.0), adjustment, float(most))
        total = sum(scores.values()) if any(a.task != TOTAL for a in own) else record.total
        for adjustment in own:
            if adjustment.task == TOTAL:
                total = _adjusted(total, adjustment, None)
        status = msg.ADJUSTED_STATUS.format(status=record.status, adjustments="; ".join(a.text() for a in own))
        out.append(replace(record, scores=scores, total=total, status=status))
    return out


def of(student: str, adjustments: list[Adjustment]) -> list[Adjustment]:
    """The adjustments of one student, in the file's order."""
    return [a for a in adjustments if a.student == student]
