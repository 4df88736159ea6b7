"""Task 1: each backward rule's cost on a large input, timed as the graders time it.

The graded run times every rule on inputs of about 300 x 300 against numpy's own
op on the same inputs, and allows a fixed multiple of it (``LIMITS``, below). A
rule with a Python loop over the elements, finite differences or a complex step
per entry gives the right values but costs hundreds to thousands of times the
op: the graded run fails it. These tests time your rule the same way, on your
machine (its fastest of a few rounds, against numpy's middle one), so that a
slow rule shows here first. A rule with a loop over one axis is fine. A machine
busy with something else can make a rule look slower: run the test again.
"""

import time

import numpy as np
import pytest

from ..tensor import Tensor, unbroadcast
from ._helpers import gradients

# Times numpy's own op that each task's rule may take, as in the graded run.
LIMITS = {"1.1": 50, "1.2": 200, "1.3": 200, "1.4": 100, "1.5": 70, "1.6": 45, "1.7": 80, "1.8": 60}
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


def assert_cheap(task: str, what: str, rule, numpy_op, shapes: str) -> None:
    """Fail with one line unless ``rule`` costs at most LIMITS[task] x ``numpy_op``. A rule over the limit is
    timed again, with numpy's op, up to ATTEMPTS times in all, and its best ratio counts, as in the graded run:
    a machine busy for a moment slows one timing, while a slow rule is slow every time."""
    rule()  # once first: a stub's NotImplementedError, or a wrong shape, is said before any timing
    best = None
    for _ in range(ATTEMPTS):
        base = max(float(np.median(_seconds(numpy_op))), 1e-6)
        spent = min(_seconds(rule, rounds=3))
        if best is None or spent / base < best[0] / best[1]:
            best = spent, base
        if spent <= LIMITS[task] * base:
            return
    spent, base = best
    pytest.fail(f"{what} on {shapes} took {spent / base:.0f} times numpy's own op on the same inputs, at best of "
                f"{ATTEMPTS} timings ({spent / CALLS * 1e3:.2f} ms a call against {base / CALLS * 1e3:.3f} ms); "
                f"the graded run allows {LIMITS[task]} times: {ADVICE}. (A machine busy with other work slows "
                "every timing: if your rule has no such loop, run the test again on a quieter machine.)",
                pytrace=False)


def leaf(values) -> Tensor:
    return Tensor(values, requires_grad=True)


def rule_of(out: Tensor, g: np.ndarray):
    """A call of the rule ``out`` recorded, by hand, as the graded run makes it."""
    return lambda: gradients(out, g)


@pytest.mark.task1_1
def test_unbroadcast_costs_about_a_sum():
    assert_cheap("1.1", "unbroadcast", lambda: unbroadcast(LAYERS, (160, 160)), lambda: np.sum(LAYERS, axis=0),
                 "a gradient of shape (2, 160, 160) to (160, 160)")


@pytest.mark.task1_2
def test_the_rule_of_add_costs_about_an_add():
    x, y = leaf(BIG), leaf(BIG[0])
    assert_cheap("1.2", "the rule of x + y", rule_of(x + y, BIG), lambda: BIG + BIG[0], "(300, 300) + (300,)")


@pytest.mark.task1_3
def test_the_rule_of_mul_costs_about_a_mul():
    x, y = leaf(BIG), leaf(BIG.T.copy())
    assert_cheap("1.3", "the rule of x * y", rule_of(x * y, BIG), lambda: BIG * BIG.T, "(300, 300) * (300, 300)")


@pytest.mark.task1_4
def test_the_rule_of_matmul_costs_about_a_matmul():
    x, w = leaf(SQUARE), leaf(SQUARE.T.copy())
    assert_cheap("1.4", "the rule of x @ w", rule_of(x @ w, SQUARE), lambda: SQUARE @ SQUARE.T,
                 "(160, 160) @ (160, 160)")


@pytest.mark.task1_5
def test_the_rule_of_exp_costs_about_an_exp():
    x = leaf(BIG)
    assert_cheap("1.5", "the rule of x.exp()", rule_of(x.exp(), BIG), lambda: np.exp(BIG), "a (300, 300) input")


@pytest.mark.task1_6
def test_the_rule_of_tanh_costs_about_a_tanh():
    x = leaf(BIG)
    assert_cheap("1.6", "the rule of x.tanh()", rule_of(x.tanh(), BIG), lambda: np.tanh(BIG), "a (300, 300) input")


@pytest.mark.task1_7
def test_the_rule_of_sum_costs_about_a_sum():
    x = leaf(BIG)
    assert_cheap("1.7", "the rule of x.sum(axis=0)", rule_of(x.sum(axis=0), BIG[0]), lambda: np.sum(BIG, axis=0),
                 "a (300, 300) input")


@pytest.mark.task1_8
def test_the_rule_of_reshape_costs_about_a_copy():
    x = leaf(BIG)
    assert_cheap("1.8", "the rule of x.reshape(-1)", rule_of(x.reshape(-1), BIG.reshape(-1)), lambda: BIG.copy(),
                 "a (300, 300) input")
