"""The checks, one module per group of tasks; which function grades which task is the task table's ``Task.check``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from graders.tasks import TASKS


def checks() -> dict[str, Callable]:
    """Every task's check: the task id -> the function that runs its ladder, as graders/tasks.py names it
    (``module.function`` of this package). The modules import torch and Hypothesis, so they load here, when a grade
    needs them, not when graders.judge loads."""
    found = {}
    for task in TASKS:
        module, function = task.check.split(".")
        found[task.id] = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return found
