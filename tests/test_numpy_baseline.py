"""Is the cost rungs' numpy baseline (graders/judge/numpy_baseline.py) numpy's own op, timed in a process of the
judge's?"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from graders import ops as registry
from graders.judge import numpy_baseline, oracles, profile, routing
from graders.judge.checks import cost, ops
from graders.tasks import BY_ID, TASKS


@pytest.fixture
def fresh(monkeypatch):
    """No numpy baseline process and no kept figure before the test, none left after it; the processes it starts are
    counted (``fresh.started``)."""
    numpy_baseline.close()
    monkeypatch.setattr(numpy_baseline, "_measured", {})
    started = []

    class Counted(numpy_baseline.Process):
        def __init__(self):
            super().__init__()
            started.append(self.process.pid)

    monkeypatch.setattr(numpy_baseline, "Process", Counted)
    yield started
    numpy_baseline.close()


def _inputs(seed: int) -> list[list]:
    return [[np.random.default_rng(seed).uniform(-1.0, 1.0, (60, 60))]]


def test_the_numpy_baseline_is_measured_once_per_inputs_in_a_process_of_its_own(monkeypatch):
    """Is a figure measured by a fresh process (not this one), positive, and kept for the same inputs?"""
    x = np.random.default_rng(0).uniform(-1.0, 1.0, (50, 50))
    runs = []
    run = numpy_baseline._run
    monkeypatch.setattr(numpy_baseline, "_run", lambda *args: runs.append(args) or run(*args))
    monkeypatch.setattr(numpy_baseline, "_measured", {})
    first = numpy_baseline.measure("tanh", [[x]], {}, 3)
    assert first > 0 and numpy_baseline.measure("tanh", [[x.copy()]], {}, 3) == first
    assert len(runs) == 1
    numpy_baseline.measure("tanh", [[x + 1.0]], {}, 3)
    assert len(runs) == 2


def test_one_process_answers_every_measurement_of_a_judge(fresh):
    """Are two measurements of different inputs answered by one process of the judge's (not this one), with no
    second interpreter started?"""
    first = numpy_baseline.measure("tanh", _inputs(1), {}, 3)
    (pid,) = numpy_baseline.pids()
    second = numpy_baseline.measure("exp", _inputs(2), {}, 3)
    assert first > 0 and second > 0 and numpy_baseline.pids() == {pid} != {os.getpid()}
    assert fresh == [pid] and numpy_baseline._process.answered == 2


def test_a_killed_numpy_baseline_is_replaced_for_the_next_measurement(fresh, monkeypatch):
    """A numpy baseline killed between two measurements is replaced, whether it is seen dead before the next one or only
    when that one asks it (asked again once, in a fresh process)."""
    numpy_baseline.measure("tanh", _inputs(1), {}, 3)
    (first,) = fresh
    os.kill(first, signal.SIGKILL)
    numpy_baseline._process.process.wait()
    assert numpy_baseline.measure("tanh", _inputs(2), {}, 3) > 0
    (second,) = numpy_baseline.pids()
    os.kill(second, signal.SIGKILL)
    numpy_baseline._process.process.wait()
    looked = []

    def running(self) -> bool:  # the second looks alive once, as if killed just after it was looked at
        if self.process.pid == second and not looked:
            looked.append(second)
            return True
        return self.process.poll() is None

    monkeypatch.setattr(numpy_baseline.Process, "running", running)
    assert numpy_baseline.measure("tanh", _inputs(3), {}, 3) > 0
    assert looked == [second] and len(fresh) == 3 and numpy_baseline._process.process.pid == fresh[2]


def test_a_numpy_baseline_past_its_timeout_is_killed_and_the_graders_error(fresh, monkeypatch):
    """A measurement past TIMEOUT is the grader's error, kills its process, and never hangs: the next one is
    answered by a fresh process."""
    monkeypatch.setattr(numpy_baseline, "TIMEOUT", 0.001)  # numpy's import alone takes longer
    with pytest.raises(RuntimeError, match="numpy baseline for tanh could not be measured: no answer within 0.001 s"):
        numpy_baseline.measure("tanh", _inputs(1), {}, 3)
    assert numpy_baseline.pids() == set() and numpy_baseline._process.process.returncode == -signal.SIGKILL
    monkeypatch.setattr(numpy_baseline, "TIMEOUT", 60.0)
    assert numpy_baseline.measure("tanh", _inputs(1), {}, 3) > 0 and len(fresh) == 2


class _Handle:
    """A worker handle that starts nothing (routing.start asks it for its processes)."""

    def start(self, groups):
        return ()


def test_a_grade_with_cost_rungs_starts_the_numpy_baseline_and_no_other_grade_does(fresh):
    """routing.start starts the numpy baseline with the tasks that time against it (1.1 and every op task), and only
    with them."""
    assert {task.id for task in TASKS if set(task.verbs) & set(numpy_baseline.TIMED_VERBS)} == {
        "1.1", *(registry.task_of(op) for op in registry.OPS)}
    routing.start(_Handle(), [BY_ID["2.1"], BY_ID["3.1"]])
    assert fresh == []
    routing.start(_Handle(), [BY_ID["2.1"], BY_ID["1.4"]])
    assert len(fresh) == 1 and numpy_baseline.pids() == set(fresh)


def test_the_profile_counts_the_numpy_baseline_as_starts(fresh, tmp_path):
    """The numpy baseline is never waited for while the judge lives: the profile reads its CPU from /proc, as starts."""
    grade = profile.Profile(tmp_path, "submission")
    figure = numpy_baseline.measure("tanh", [[np.random.default_rng(4).uniform(-1.0, 1.0, (300, 300))]], {}, 200)
    grade._row("1.6")
    # 1 + ROUNDS rounds of at least ``figure`` each (over 0.1 s in all), less two clock ticks of rounding
    assert grade.rows[-1]["starts"] >= (1 + numpy_baseline.ROUNDS) * figure - 0.02 > 0.05


def test_an_op_without_a_numpy_baseline_is_the_graders_error():
    with pytest.raises(ValueError, match="no numpy baseline for 'conv'"):
        numpy_baseline._run("conv", [], {}, 1)


@pytest.mark.parametrize("op", registry.OPS, ids=lambda op: op.name)
def test_every_timed_op_has_a_numpy_baseline_that_computes_its_forward(op):
    """Does each op's numpy baseline, numpy's own op of the registry, compute what torch's op computes on the rung's
    large input, the one it is timed on?"""
    operands = cost.large_operands(op.cost, None)
    expected = op.torch_function(*(_torch(v) for v in operands), **ops._tuples(op.cost.kwargs)).numpy()
    ours = numpy_baseline.numpy_op(op.name)(*operands, **op.cost.kwargs)
    np.testing.assert_allclose(np.reshape(ours, expected.shape), expected, rtol=1e-12)


@pytest.mark.parametrize(("shape", "target"), [((300, 300), (1, 300)), ((2, 80, 80), (80, 80)), ((3, 4), ()),
                                               ((4, 2, 3), (2, 1)), ((5,), (5,))])
def test_unbroadcasts_numpy_baseline_sums_as_the_judge_does(shape, target):
    grad = np.random.default_rng(1).uniform(-1.0, 1.0, shape)
    np.testing.assert_allclose(numpy_baseline.numpy_op("unbroadcast")(grad, list(target)),
                               oracles.unbroadcast(grad, list(target)), rtol=1e-12, atol=1e-12)


def _torch(value):
    import torch

    return torch.from_numpy(value) if isinstance(value, np.ndarray) else value
