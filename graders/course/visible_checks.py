"""The visible part of each graded cell of the nbgrader notebook: the body of the task's check in cells/visible.py
(the function named after the task's cell, ``task_1_4`` for 1.4), inside ``with visible_check("1.4") as lab:``. An
op task without a check of its own there gets one from the op registry (graders/ops.py): each form's rule at its
friendly example, against central differences (the student's gradcheck.py)."""

from __future__ import annotations

from types import FunctionType

import numpy as np

from graders import ops
from graders.course.cell_source import body_of
from graders.course.cells import visible


def cell_name(task_id: str) -> str:
    """The name of a task's graded cell, and of its check's function in cells/visible.py: ``task_1_4``."""
    return "task_" + task_id.replace(".", "_")


def written_check(task_id: str) -> FunctionType | None:
    """The check of cells/visible.py for task ``task_id``, or None where none is written there."""
    check = getattr(visible, cell_name(task_id), None)
    return check if isinstance(check, FunctionType) and check.__module__ == visible.__name__ else None


def _value(value) -> str:
    return f"np.array({np.asarray(value).tolist()!r})" if isinstance(value, np.ndarray) else repr(value)


def op_check(task_id: str) -> str:
    """The visible check of an op task, from the registry: gradcheck on each form at its friendly example."""
    lines = ["from lab.gradcheck import gradcheck", ""]
    for op in ops.of_task(task_id):
        lines.append(f"forward = {op.forward}")
        code = op.function.__code__
        parameters = code.co_varnames[:code.co_argcount]  # the operands' names, then the keyword arguments'
        for form in op.forms:
            operands, kwargs = form.example
            names = [parameters[i] for i, value in enumerate(operands) if isinstance(value, np.ndarray)]
            call = ", ".join([parameters[i] if isinstance(value, np.ndarray) else repr(value)
                              for i, value in enumerate(operands)]
                             + [f"{key}={value!r}" for key, value in kwargs.items()])
            arrays = ", ".join(_value(value) for value in operands if isinstance(value, np.ndarray))
            lines.append(f"gradcheck(lambda {', '.join(names)}: forward({call}), {arrays})  # {form.text}")
    return "\n".join(lines) + "\n"


def visible_part(task_id: str) -> str:
    """The cell's visible code: the check's body inside ``with visible_check(task_id) as lab:``."""
    check = written_check(task_id)
    if check is None and not ops.of_task(task_id):
        raise LookupError(f"task {task_id} has no visible check: write {cell_name(task_id)}(lab) in "
                          "graders/course/cells/visible.py")
    body = body_of(check) if check is not None else op_check(task_id)
    indented = "\n".join("    " + line if line else "" for line in body.splitlines())
    return f'with visible_check("{task_id}") as lab:\n{indented}\n'
