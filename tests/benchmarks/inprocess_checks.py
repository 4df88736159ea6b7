"""A plain in-process pytest run of the graders' checks (run by bench_grade.py, not by CI).

    AUTOGRAD_LAB_SUBMISSION=solutions python -m pytest tests/benchmarks/inprocess_checks.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from graders.judge.checks import checks
from graders.judge.checks.base import Context
from graders.submission import layout
from graders.tasks import TASKS

sys.path.insert(0, str(Path(__file__).parent))
from inprocess import InProcessWorker  # noqa: E402

CHECKS = checks()


@pytest.fixture(scope="module")
def worker():
    lay = layout.lay_out(os.environ.get("AUTOGRAD_LAB_SUBMISSION", "solutions"))
    worker = InProcessWorker(lay)
    yield worker, lay
    worker.stop()
    lay.cleanup()


@pytest.mark.parametrize("task", [t for t in TASKS if t.id != "6.2"], ids=lambda t: t.id)
def test_task(task, worker):
    """Does the submission pass this task's checks, run in this process?"""
    w, lay = worker
    CHECKS[task.id](Context(task=task, worker=w, missing=lay.missing))
