"""Do the limits that decide a verdict count CPU time, so that a busy machine never changes a grade?

A request's limit is its worker's CPU time, read from the kernel while the judge waits; a worker that waits
without computing is stopped by a backstop that no time spent waiting for a CPU counts toward; a process's start
is not on its first request's clock; grade-all's bound on a judge is its process tree's CPU time, with the same
backstop. The busy machine is made here on one core: what is measured is pinned to it beside three busy loops
(each in a session of its own, at the same priority), so it gets about a quarter of the core, as on a machine
oversubscribed four times.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from corpus import make_submission

from graders import messages
from graders.classgrade import batch_judge, pool
from graders.isolation import sandbox
from graders.isolation.worker_process import WorkerTimedOut
from graders.judge import routing
from graders.judge.checks import base
from graders.results import mistakes
from graders.submission import layout
from graders.tasks import BY_ID

ISOLATIONS = [pytest.param("bubblewrap", marks=pytest.mark.skipif(not sandbox.bubblewrap_works(),
                                                                  reason="bubblewrap cannot make a sandbox here")),
              "limits"]
LOOPS = 3  # busy loops beside what is measured, on its core: it gets about a quarter of it
BURN = 1.0  # CPU seconds the slow unbroadcast spends before its answer
# unbroadcast by the rows of its gradient: 5 sleeps, 6 loops for ever, 7 spends BURN seconds of CPU, and then answers
MODES = f'''
import time as _time

_unbroadcast = unbroadcast


def unbroadcast(grad, shape):
    rows = grad.shape[0] if grad.ndim else 0
    if rows == 5:
        _time.sleep(3600)
    while rows == 6:
        pass
    start = _time.process_time()
    while rows == 7 and _time.process_time() - start < {BURN}:
        pass
    return _unbroadcast(grad, shape)
'''
SLEEPS, LOOPS_FOR_EVER, SLOW = 5, 6, 7


def one_core() -> int:
    return min(os.sched_getaffinity(0))


def pin(pids, core: int) -> None:
    """Every thread of every process of ``pids`` on ``core``."""
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(tid), {core})


@contextlib.contextmanager
def busy_core(core: int, loops: int = LOOPS):
    """``loops`` busy loops on ``core``, each in a session of its own, at this process's priority."""
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True,
                                preexec_fn=lambda: os.sched_setaffinity(0, {core})) for _ in range(loops)]
    try:
        yield
    finally:
        for loop in started:
            loop.kill()
            loop.wait()


@contextlib.contextmanager
def handle(tmp_path, isolation: str):
    """The worker handle of a grade of the reference whose unbroadcast behaves by MODES."""
    folder = make_submission(tmp_path / "submissions", "modes", [])
    with open(folder / "tensor.py", "a") as f:
        f.write(MODES)
    chosen = sandbox.choose(isolation)
    laid = layout.lay_out(folder, sandbox.scratch_parent(chosen, None))
    try:
        with routing.worker(laid, chosen) as worker:
            yield worker
    finally:
        laid.cleanup()


def unbroadcast(rows: int) -> tuple[str, dict]:
    return "unbroadcast", {"package": BY_ID["1.1"].route.package, "grad": np.ones((rows, 3)), "shape": [3]}


def tree(worker) -> list[int]:
    from graders.isolation.processes import descendants

    process = worker._processes[worker._current]
    return [process.popen.pid, *descendants(process.popen.pid)]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_worker_kept_waiting_for_the_cpu_answers_within_its_cpu_limit(isolation, tmp_path):
    """Does a request that needs 1 s of CPU, made on a core four processes share (4 s or more of wall time), get
    its answer within a limit of 3 s, without any of it counted as waiting?"""
    with handle(tmp_path, isolation) as worker:
        assert "ok" in worker.request(*unbroadcast(2), timeout=10.0)  # the process serves
        core = one_core()
        pin(tree(worker), core)
        with busy_core(core):
            began = time.monotonic()
            reply = worker.request(*unbroadcast(SLOW), timeout=3.0, measure_cpu=True)
            seconds = time.monotonic() - began
        assert "ok" in reply, reply
        assert worker.last_cpu_seconds >= BURN
        print(f"\n{worker.last_cpu_seconds:.2f} s of CPU in {seconds:.2f} s on a shared core")
        assert worker.idle_used < BURN / 2, "time kept waiting for a CPU was counted as waiting"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_worker_that_sleeps_is_stopped_by_the_backstop_and_says_so(isolation, tmp_path):
    """Is a request whose worker sleeps stopped once it has waited its backstop without computing (not at its CPU
    limit, which it never reaches), and its process stopped?"""
    with handle(tmp_path, isolation) as worker:
        with pytest.raises(WorkerTimedOut) as stopped:
            worker.request(*unbroadcast(SLEEPS), timeout=10.0, idle=1.0)
        assert (stopped.value.idle, stopped.value.seconds) == (True, 1.0)
        assert worker.process is None
        assert worker.idle_used >= 1.0 and worker.cpu_used < 1.0


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_busy_loop_is_stopped_at_its_cpu_limit(isolation, tmp_path):
    """Is a request whose worker loops for ever stopped at its CPU limit, as using the CPU, not as waiting?"""
    with handle(tmp_path, isolation) as worker:
        with pytest.raises(WorkerTimedOut) as stopped:
            worker.request(*unbroadcast(LOOPS_FOR_EVER), timeout=0.5, idle=30.0)
        assert (stopped.value.idle, stopped.value.seconds) == (False, 0.5)
        assert worker.cpu_used >= 0.5
        assert "ok" in worker.request(*unbroadcast(2), timeout=10.0)  # a fresh process answers the next one


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_workers_start_is_not_on_its_first_requests_clock(isolation, tmp_path):
    """Does a process started for a request (cold under process limits: an interpreter and numpy, more CPU than the
    request's limit) on a core four processes share serve it within a limit of 0.2 s, its start waited for first?
    On a busy machine a worker's start (torch's import, for the loop tasks) once took a request's whole clock."""
    with handle(tmp_path, isolation) as worker:
        core = one_core()
        mine = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {core})  # the judge, and the process it starts, on the busy core
        try:
            with busy_core(core):
                reply = worker.request(*unbroadcast(2), timeout=0.2)
        finally:
            os.sched_setaffinity(0, mine)
        assert "ok" in reply, reply
        assert worker.starts == 1


def test_a_judge_kept_waiting_for_the_cpu_is_not_waiting():
    """Does grade-all's clock on a judge count a busy loop on a core four processes share as using the CPU, a
    quarter of its wall time, and never as waiting?"""
    core = one_core()
    with busy_core(core):
        loop = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                preexec_fn=lambda: os.sched_setaffinity(0, {core}))
        try:
            clock = pool.Clock([loop.pid], 60.0)
            time.sleep(2.0)
            assert clock.look([loop.pid]) is None
        finally:
            loop.kill()
            loop.wait()
    assert 0.1 < clock.spent < 1.5 and clock.idle < 0.5, (clock.spent, clock.idle)


def test_a_judge_that_sleeps_runs_out_of_waiting_and_one_that_loops_out_of_cpu():
    """Does grade-all's clock stop a judge whose tree sleeps at its bound in time waited, and one whose tree
    computes at its bound in CPU time?"""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    looper = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        clocks = {"idle": (pool.Clock([sleeper.pid], 0.5), sleeper), "cpu": (pool.Clock([looper.pid], 0.5), looper)}
        seen = {}
        for _ in range(200):
            time.sleep(0.05)
            for kind, (clock, process) in clocks.items():
                seen.setdefault(kind, clock.look([process.pid]))
                if seen[kind] is None:
                    del seen[kind]
            if len(seen) == 2:
                break
        assert seen == {"idle": "idle", "cpu": "cpu"}
    finally:
        for process in (sleeper, looper):
            process.kill()
            process.wait()


def test_a_task_that_waited_without_computing_reads_so_for_the_class_page_and_grade_alls_row(tmp_path, monkeypatch):
    """Does a task stopped by the backstop read as "timed out without computing", with its named mistake, in
    results.json, and does grade-all's row say so, so that an instructor can tell it from a slow loop?"""
    monkeypatch.setattr(base, "IDLE_SECONDS", 1.0)
    folder = make_submission(tmp_path / "submissions", "sleeper", [])
    with open(folder / "tensor.py", "a") as f:
        f.write(MODES.replace("rows == 5", "True"))
    answer = batch_judge.grade_job({"student": "sleeper", "path": str(folder), "out": str(tmp_path / "out"),
                                    "tasks": ["1.1", "3.1"], "isolation": "limits"})
    assert answer["status"] == messages.BATCH_GRADED_IDLE.format(tasks="1.1")
    assert answer["scores"] == {"1.1": 0.0, "3.1": 4.0}
    import json

    test = json.loads((tmp_path / "out" / "results.json").read_text())["tests"][0]
    assert test["extra_data"] == {"status": "failed", "rung": mistakes.IDLE, "mistakes": ["HINT_NOT_COMPUTING"]}
    assert "timed out without computing: waited 1 s without using the CPU" in test["output"]


def test_grade_all_says_when_the_machine_was_busier_than_its_cores():
    """Does grade-all's last note say the machine's load stayed above its cores (the run took longer, the grades are
    a quiet machine's), and say nothing where it did not?"""
    from graders.classgrade import batch

    cores = len(os.sched_getaffinity(0))
    assert batch.loaded([cores * 4.0, cores * 3.0]) == [messages.BATCH_LOADED.format(load=cores * 3.5, cores=cores)]
    assert batch.loaded([cores * 0.5, cores * 1.0]) == []
    assert batch.loaded([]) == []
