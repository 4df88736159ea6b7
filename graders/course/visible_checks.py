"""The visible part of each graded cell of the nbgrader notebook: the body of the task's check in
cells/visible.py (VISIBLE_CHECKS), inside ``with visible_check("1.4") as lab:``."""

from __future__ import annotations

from graders.course.cell_source import body_of
from graders.course.cells.visible import VISIBLE_CHECKS


def visible_part(task_id: str) -> str:
    """The cell's visible code: the check's body inside ``with visible_check(task_id) as lab:``."""
    indented = "\n".join("    " + line if line else "" for line in body_of(VISIBLE_CHECKS[task_id]).splitlines())
    return f'with visible_check("{task_id}") as lab:\n{indented}\n'
