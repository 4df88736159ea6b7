"""The course of the end-to-end tests: Adam (3.3) and the PyTorch loop (6.1, and 6.2, which grades 6.1's code,
with it) left out, and 1.4 worth 10 points. Its tasks and total are read from the task table, so that a task added
to the table (an op, say) changes no test: the total is the table's, less the points of the tasks left out, with
1.4's 10 in place of the table's.
"""

from __future__ import annotations

from graders.course import course_file
from graders.tasks import BY_ID, TASKS

# The course file's edits of `course_file.template`: each line the template writes, and the line put in its place.
DROPS = {'"3.3" = 5': '"3.3" = 0', '"6.1" = 4': '"6.1" = 0', '"1.4" = 5': '"1.4" = 10'}
LEFT_OUT = ("3.3", "6.1", "6.2")
MATMUL_POINTS = 10
TASK_IDS = tuple(task.id for task in TASKS if task.id not in LEFT_OUT)
TABLE_TOTAL = sum(task.points for task in TASKS)
TOTAL = TABLE_TOTAL - sum(BY_ID[task].points for task in (*LEFT_OUT, "1.4")) + MATMUL_POINTS


def edited(secret: str, changes: dict[str, str]) -> str:
    """``course_file.template(secret)`` with each of ``changes`` (a line it writes, and the line in its place)."""
    written = course_file.template(secret)
    for old, new in changes.items():
        assert old in written, old
        written = written.replace(old, new)
    return written


def text(secret: str, changes: dict[str, str] | None = None) -> str:
    """The course file with ``secret``: the template with DROPS, then ``changes``."""
    return edited(secret, {**DROPS, **(changes or {})})
