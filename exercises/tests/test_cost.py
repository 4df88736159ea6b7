"""Task 1: each backward rule's cost on a large input, timed as the graders time it.

The graded run times every rule of every op on inputs of about 300 x 300 against
numpy's own op on the same inputs, and allows a fixed multiple of it (each op's
``cost.limit`` in op_table.py). A rule with a Python loop over the elements,
finite differences or a complex step per entry gives the right values but costs
tens to thousands of times the op: the graded run fails it. These tests time
your rule the same way, on your machine (its fastest of a few rounds, against
numpy's middle one), so that a slow rule shows here first. A rule with a loop
over one axis is fine. A machine busy with something else can make a rule look
slower: run the test again.
"""

import time

import numpy as np
import pytest

from ..tensor import Tensor, unbroadcast
from ._helpers import gradients
from .op_table import OPS, UNBROADCAST_LIMIT

ROUNDS, CALLS = 5, 5
ATTEMPTS = 3  # timings of a rule over its limit before it fails, as the graded run's cost rung retries
_RNG = np.random.default_rng(0)
BIG = np.round(_RNG.uniform(-1.0, 1.0, (300, 300)), 2)
SQUARE = _RNG.standard_normal((160, 160))
LAYERS = np.round(_RNG.uniform(-1.0, 1.0, (2, 160, 160)), 2)
ADVICE = ("write the rule with numpy operations over whole arrays: no Python loop over the elements, and no finite "
          "differences or complex step per entry")


def _seconds(call, rounds: int = ROUNDS) -> list[float]:
    """CPU seconds of CALLS calls of ``call``, in each of ``rounds`` rounds."""
    spent = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(CALLS):
            call()
        spent.append(time.process_time() - start)
    return spent


def assert_cheap(limit: float, what: str, rule, numpy_op, shapes: str) -> None:
    """Fail with one line unless ``rule`` costs at most ``limit`` x ``numpy_op``. A rule over the limit is
    timed again, with numpy's op, up to ATTEMPTS times in all, and its best ratio counts, as in the graded run:
    a machine busy for a moment slows one timing, while a slow rule is slow every time."""
    rule()  # once first: a stub's NotImplementedError, or a wrong shape, is said before any timing
    best = None
    for _ in range(ATTEMPTS):
        base = max(float(np.median(_seconds(numpy_op))), 1e-6)
        spent = min(_seconds(rule, rounds=3))
        if best is None or spent / base < best[0] / best[1]:
            best = spent, base
        if spent <= limit * base:
            return
    spent, base = best
    pytest.fail(f"{what} on {shapes} took {spent / base:.0f} times numpy's own op on the same inputs, at best of "
                f"{ATTEMPTS} timings ({spent / CALLS * 1e3:.2f} ms a call against {base / CALLS * 1e3:.3f} ms); "
                f"the graded run allows {limit:g} times: {ADVICE}. (A machine busy with other work slows "
                "every timing: if your rule has no such loop, run the test again on a quieter machine.)",
                pytrace=False)


def leaf(values) -> Tensor:
    return Tensor(values, requires_grad=True)


def rule_of(out: Tensor, g: np.ndarray):
    """A call of the rule ``out`` recorded, by hand, as the graded run makes it."""
    return lambda: gradients(out, g)


def large(cost) -> list:
    """The large input of an op's cost, as the graded run makes it without a key: BIG's values moved into each
    operand's range, a row of them, or SQUARE and its transpose."""
    operands = []
    for position, operand in enumerate(cost.operands):
        if operand.shape == "nn":
            operands.append(SQUARE if position == 0 else SQUARE.T.copy())
            continue
        values = BIG if (operand.low, operand.high) == (-1.0, 1.0) else \
            np.round(operand.low + (BIG + 1.0) / 2.0 * (operand.high - operand.low), 2)
        operands.append(values if operand.shape == "rc" else values[0])
    return operands


@pytest.mark.task1_1
def test_unbroadcast_costs_about_a_sum():
    assert_cheap(UNBROADCAST_LIMIT, "unbroadcast", lambda: unbroadcast(LAYERS, (160, 160)),
                 lambda: np.sum(LAYERS, axis=0), "a gradient of shape (2, 160, 160) to (160, 160)")


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name, marks=getattr(pytest.mark, op.marker)) for op in OPS])
def test_each_rule_costs_about_numpys_own_op(op):
    """Does the rule of each op, on a large input, cost at most the graded run's multiple of numpy's own op?"""
    operands, kwargs = large(op.cost), op.cost.kwargs
    out = op.forward(*(leaf(value) for value in operands), **kwargs)
    shapes = " and ".join(str(value.shape) for value in operands)
    assert_cheap(op.cost.limit, f"the rule of {op.cost.text}", rule_of(out, np.ones(out.shape)),
                 lambda: op.cost.numpy(*operands, **kwargs), f"inputs of shape {shapes}")
