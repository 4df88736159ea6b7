"""The files and parts of files derived from the task table (graders/tasks.py) and the op registry (graders/ops.py),
written out where nothing may import the graders, or where a reader reads them:

- ``graders/worker/op_forwards.py``: each op's forward as the student's Tensor computes it (the worker imports
  nothing of the graders);
- ``exercises/tests/op_table.py``: the ops as the public tests use them (a student's copy has no graders);
- the public tests' markers in ``exercises/pytest.ini``, one per task;
- the tables of tasks and of the op tasks' forms in ``docs/contract.md``.

``autograd-lab build-exercises`` writes them with the stubs, ``--check`` holds them, and
tests/test_exercises_sync.py fails when one is stale, so that a task's id or an op is written by hand once.
"""

from __future__ import annotations

import re
from pathlib import Path

from graders import ops, paths
from graders.tasks import BY_ID, TASKS

GENERATED = "generated from graders/tasks.py and graders/ops.py by `autograd-lab build-exercises`: do not edit"
WORKER_FORWARDS = paths.WORKER / "op_forwards.py"
PUBLIC_TABLE = Path("tests") / "op_table.py"  # in exercises/
PYTEST_INI = Path("pytest.ini")  # in exercises/
CONTRACT = paths.REPO / "docs/contract.md"
MARKERS = "markers ="
CONTRACT_MARKER = "    contract: the rules every graded file must keep (no autodiff library, float64)"


def _py(value) -> str:
    """``value`` as Python source, strings in double quotes (as the repository writes them)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_py(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def worker_forwards() -> str:
    """The text of graders/worker/op_forwards.py."""
    rows = "".join(f"    {_py(op.name)}: {op.forward},\n" for op in ops.OPS)
    return (f'"""The forward of every op whose backward rule a task grades, as the student\'s Tensor computes it, by '
            f'name:\n{GENERATED}\n(graders/course/tables.py). The worker imports nothing of the graders, so their op '
            f'registry is written\nout here."""\n\nFORWARDS = {{\n{rows}}}\n')


def _large(large: ops.Large) -> str:
    return f"Large({_py(large.shape)}, {large.low!r}, {large.high!r}, {large.normal!r})"


def _public_op(op: ops.Op) -> str:
    task = BY_ID[ops.task_of(op)]
    forms = "".join(f"        Form({_py(form.text)}, {_py(form.domain.name)}, {_py(form.domain.bounds)}),\n"
                    for form in op.forms)
    cost = op.cost
    large = ", ".join(_large(large) for large in cost.operands) + ("," if len(cost.operands) == 1 else "")
    return (f"    Op({_py(op.name)}, {_py(task.id)}, {_py(task.marker)}, {op.forward}, (\n{forms}"
            f"    ), Cost({_py(cost.text)}, {cost.numpy}, {cost.limit:g},\n"
            f"            ({large}), {_py(cost.kwargs)})),\n")


def public_op_table() -> str:
    """The text of exercises/tests/op_table.py."""
    return f'''"""The ops whose backward rules the op tasks grade, as the public tests use them:
{GENERATED}.

Each op: its name, its task and that task's marker, its forward (how your Tensor computes it), the forms its rule is
checked in (how each reads, and the kind of inputs drawn for it: tests/test_properties.py), and its cost as the graded
run times it (tests/test_cost.py): numpy's own op, the large input's operands and keyword arguments, and how many
times numpy's op the rule may take.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Form(NamedTuple):
    text: str
    domain: str
    bounds: dict


class Large(NamedTuple):
    shape: str  # "rc": (rows, cols), "c": (cols,), "nn": (n, n)
    low: float
    high: float
    normal: bool


class Cost(NamedTuple):
    text: str
    numpy: Callable
    limit: float
    operands: tuple
    kwargs: dict


class Op(NamedTuple):
    name: str
    task: str
    marker: str
    forward: Callable
    forms: tuple
    cost: Cost


UNBROADCAST_LIMIT = {ops.UNBROADCAST_COST:g}
OPS = (
{"".join(_public_op(op) for op in ops.OPS)})
'''


def pytest_ini(text: str) -> str:
    """exercises/pytest.ini's ``text`` with its markers (everything after the ``markers =`` line) the task table's:
    ``taskX_Y: Task X.Y, title``, and a note written after the title kept (6.2's "(skipped without a GPU)")."""
    head, found, markers = text.partition(f"\n{MARKERS}\n")
    if not found:
        raise ValueError(f"exercises/pytest.ini has no line {MARKERS!r}, expected its markers after one")
    notes = {}
    for line in markers.splitlines():
        name, _, said = line.strip().partition(": ")
        notes[name] = said
    lines = [CONTRACT_MARKER]
    for task in TASKS:
        title = f"Task {task.id}, {task.title}"
        note = notes.get(task.marker, "").removeprefix(title) if notes.get(task.marker, "").startswith(title) else ""
        lines.append(f"    {task.marker}: {title}{note}")
    return f"{head}\n{MARKERS}\n" + "\n".join(lines) + "\n"


def _block(text: str, name: str, body: str, where: str) -> str:
    """``text`` with the lines between ``<!-- name: begin -->`` and ``<!-- name: end -->`` replaced by ``body``."""
    begin, end = f"<!-- {name}: begin ({GENERATED}) -->", f"<!-- {name}: end -->"
    found = re.search(f"{re.escape(begin)}\n(.*?){re.escape(end)}", text, re.DOTALL)
    if not found:
        raise ValueError(f"{where} lacks the lines {begin} ... {end}")
    return text[:found.start(1)] + body + text[found.end(1):]


def contract(text: str) -> str:
    """docs/contract.md's ``text`` with its table of tasks and its table of the op tasks' forms generated."""
    tasks = "| id | title | file | points |\n| --- | --- | --- | ---: |\n" + "".join(
        f"| {task.id} | {task.title} | {task.module}.py | {task.points} |\n" for task in TASKS)
    rows = []
    for task in TASKS:
        task_ops = ops.of_task(task.id)
        if task_ops:
            forms = ", ".join(f"`{form.text}`" for op in task_ops for form in op.forms)
            timed = ", ".join(f"`{op.cost.text}` ({op.cost.limit:g} times)" for op in task_ops)
            rows.append(f"| {task.id} | {forms} | {timed} |\n")
    forms = "| task | forms graded | each rule timed on a large input, at most |\n| --- | --- | --- |\n" + "".join(rows)
    text = _block(text, "task table", tasks, "docs/contract.md")
    return _block(text, "op table", forms, "docs/contract.md")


def expected() -> dict[Path, str]:
    """Every derived file of the checkout, at its path, with the text it must hold."""
    return {
        WORKER_FORWARDS: worker_forwards(),
        paths.EXERCISES / PUBLIC_TABLE: public_op_table(),
        paths.EXERCISES / PYTEST_INI: pytest_ini((paths.EXERCISES / PYTEST_INI).read_text()),
        CONTRACT: contract(CONTRACT.read_text()),
    }


def out_of_date() -> list[str]:
    """The derived files (relative to the checkout) that regenerating would change."""
    return [path.relative_to(paths.REPO).as_posix() for path, text in expected().items()
            if not path.exists() or path.read_text() != text]


def write() -> list[str]:
    """Write every derived file that would change; their names (relative to the checkout)."""
    changed = []
    for path, text in expected().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(path.relative_to(paths.REPO).as_posix())
    return changed
