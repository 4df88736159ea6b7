"""Do a grade's cgroups hold the budgets that budget.py promises, and go away with the grade?"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from graders.judge import budget

pytestmark = pytest.mark.skipif(budget.version() is None, reason="no cgroup this judge can make (not root, or none)")


def _knob(b: budget.Budget, name: str) -> str:
    folder = next(f for f in b.folders if (f / name).exists())
    return (folder / name).read_text().split("\n")[0]


def test_a_grade_budget_binds_memory_processes_and_cores_then_goes():
    b = budget.Budget.make()
    try:
        assert b.active
        if budget.version() == "v1":
            assert int(_knob(b, "memory.limit_in_bytes")) == budget.MEMORY_BYTES
            assert _knob(b, "cpu.cfs_quota_us") == str(budget.CPU_CORES * budget.PERIOD_US)
        else:
            assert int(_knob(b, "memory.max")) == budget.MEMORY_BYTES
            assert _knob(b, "cpu.max") == f"{budget.CPU_CORES * budget.PERIOD_US} {budget.PERIOD_US}"
        assert _knob(b, "pids.max") == str(budget.PROCESSES)
        join, close = b.joiner()
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=join)
        close()
        assert all(str(child.pid) in path.read_text().split() for path in b.procs)
    finally:
        folders = list(b.folders)
        b.close()
    assert child.wait(timeout=10) == -9, "close() stops what is left in the grade's cgroups"
    assert not any(f.exists() for f in folders)


def test_doctor_names_the_budget():
    line = budget.describe()
    assert f"{budget.CPU_CORES} cores" in line and "512 processes" in line, line
    assert os.geteuid() == 0
