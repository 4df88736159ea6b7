"""Is the cost rungs' yardstick (graders/judge/yardstick.py) numpy's own op, timed in a process of the judge's?"""

from __future__ import annotations

import numpy as np
import pytest

from graders.judge import oracles, yardstick
from graders.judge.checks import ops


def test_the_yardstick_is_measured_once_per_inputs_in_a_process_of_its_own(monkeypatch):
    """Is a figure measured by a fresh process (not this one), positive, and kept for the same inputs?"""
    x = np.random.default_rng(0).uniform(-1.0, 1.0, (50, 50))
    runs = []
    run = yardstick._run
    monkeypatch.setattr(yardstick, "_run", lambda *args: runs.append(args) or run(*args))
    monkeypatch.setattr(yardstick, "_measured", {})
    first = yardstick.measure("tanh", [[x]], {}, 3)
    assert first > 0 and yardstick.measure("tanh", [[x.copy()]], {}, 3) == first
    assert len(runs) == 1
    yardstick.measure("tanh", [[x + 1.0]], {}, 3)
    assert len(runs) == 2


def test_an_op_without_a_yardstick_is_the_graders_error():
    with pytest.raises(ValueError, match="no yardstick for 'conv'"):
        yardstick._run("conv", [], {}, 1)


def test_every_timed_op_has_a_yardstick_that_computes_its_forward():
    """Does each cost rung's yardstick compute what its op's forward (or the judge's unbroadcast) computes?"""
    assert {cost.op for cost in ops.COSTS.values()} | {"unbroadcast"} == set(yardstick.OPS)
    for cost in ops.COSTS.values():
        case = ops.CASES_BY_OP[cost.op]
        kwargs = ops._tuples(cost.kwargs)
        expected = case.torch(*(_torch(v) for v in cost.operands), **kwargs).numpy()
        ours = yardstick.OPS[cost.op](*cost.operands, **cost.kwargs)
        np.testing.assert_allclose(np.reshape(ours, expected.shape), expected, rtol=1e-12)


@pytest.mark.parametrize(("shape", "target"), [((300, 300), (1, 300)), ((2, 80, 80), (80, 80)), ((3, 4), ()),
                                               ((4, 2, 3), (2, 1)), ((5,), (5,))])
def test_unbroadcasts_yardstick_sums_as_the_judge_does(shape, target):
    grad = np.random.default_rng(1).uniform(-1.0, 1.0, shape)
    np.testing.assert_allclose(yardstick.OPS["unbroadcast"](grad, list(target)),
                               oracles.unbroadcast(grad, list(target)), rtol=1e-12, atol=1e-12)


def _torch(value):
    import torch

    return torch.from_numpy(value) if isinstance(value, np.ndarray) else value
