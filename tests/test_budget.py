"""Do a grade's cgroups hold the budgets that budget.py promises, and go away with the grade?"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graders.isolation import budget

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


def test_a_grade_removes_the_cgroups_a_killed_judge_left_and_no_live_ones():
    """A judge killed mid-grade (SIGKILL: grade-all's way with one past its timeout) runs no cleanup, and its
    grade's cgroups stayed, one set per kill, for the machine's life. Does the next grade's budget remove them,
    and those an older version left (empty), while a live judge's stay?"""
    made = subprocess.run(
        [sys.executable, "-c", "import os\nfrom graders.isolation import budget\n"
                               "print(*budget.Budget.make().folders, sep='\\n', flush=True)\nos._exit(0)"],
        capture_output=True, text=True, check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    left = [Path(line) for line in made.stdout.splitlines()]
    assert left and all(folder.is_dir() for folder in left), "the killed judge's cgroups are there to be swept"
    legacy = left[0].parent / "agl-0123456789ab"  # as a version before the judge's pid was in the name named it
    live = left[0].parent / f"agl-{os.getpid()}-0badcafe"
    legacy.mkdir()
    live.mkdir()
    try:
        b = budget.Budget.make()
        b.close()
        assert not any(folder.exists() for folder in [*left, legacy])
        assert live.is_dir()
    finally:
        for folder in [*left, legacy, live]:
            if folder.exists():
                folder.rmdir()
