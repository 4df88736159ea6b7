"""Property tests: each backward rule against central differences (gradcheck.py) on inputs Hypothesis draws, for
every form of every op of op_table.py.

When one fails, Hypothesis shrinks the inputs to a small example and prints it ("Falsifying example"): start
from that. The graders draw their own inputs and compare with torch.autograd far more tightly.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ..gradcheck import gradcheck
from .op_table import OPS

# One failure a test, its smallest example, no reproduction blob and no "Explanation" of covered lines: a short
# block to read, not a group of tracebacks (report_multiple_bugs would show every distinct failure at once).
settings.register_profile("exercises", max_examples=25, deadline=None, derandomize=True, report_multiple_bugs=False,
                          print_blob=False, phases=[phase for phase in Phase if phase is not Phase.explain],
                          suppress_health_check=list(HealthCheck))
settings.load_profile("exercises")


def values(low=-2.0, high=2.0):
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def arrays(shape, elements=None):
    return hnp.arrays(np.float64, shape, elements=values() if elements is None else elements)


def away_from_zero():
    """Magnitudes in [0.5, 2], either sign: clear of the pole of 1/x and the kink of relu."""
    return st.tuples(st.floats(0.5, 2.0), st.sampled_from((-1.0, 1.0))).map(lambda p: p[0] * p[1])


def axes(ndim):
    """A reduction's ``axis`` for an array of ``ndim`` >= 1 axes: None, an int (negative too) or a tuple of ints."""
    some = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(lambda a: tuple(sorted(a)))
    return st.none() | st.integers(-ndim, ndim - 1) | some


# ----- the inputs drawn for each form of an op (op_table.py names the kind, as the graders' strategies do) -----

def shapes(min_dims=0):
    return hnp.array_shapes(min_dims=min_dims, max_dims=3, max_side=3)


def operand_pairs(divisor=False):
    """Two arrays whose shapes broadcast together, either way; the second clear of 0 when it divides."""
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3).flatmap(
        lambda s: st.tuples(arrays(s.input_shapes[0]), arrays(s.input_shapes[1], away_from_zero() if divisor else None))
    ).map(lambda pair: (list(pair), {}))


def operands_with_constants(left, divisor=False):
    """A Python number and an array, the number on the left or the right; the array clear of 0 when it divides."""
    array = shapes().flatmap(lambda shape: arrays(shape, away_from_zero() if divisor else None))
    return st.tuples(away_from_zero(), array).map(lambda ca: ([ca[0], ca[1]] if left else [ca[1], ca[0]], {}))


def single_operands(min_value=-2.0, max_value=2.0, away_from_zero=0.0, min_dims=0):
    """One array, for the elementwise ops (and the reductions and shapes that take nothing more)."""
    elements = values(min_value, max_value)
    if away_from_zero:
        elements = elements.filter(lambda v: abs(v) >= away_from_zero)
    return shapes(min_dims).flatmap(lambda shape: arrays(shape, elements)).map(lambda a: ([a], {}))


def matmul_operands():
    """x of shape (n, k) and w of shape (k, m)."""
    return st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).flatmap(
        lambda n: st.tuples(arrays((n[0], n[1])), arrays((n[1], n[2])))).map(lambda pair: (list(pair), {}))


def power_operands():
    """A positive array and a Python number p."""
    return st.tuples(shapes().flatmap(lambda shape: arrays(shape, st.floats(0.5, 2.0))),
                     st.sampled_from((2.0, 3.0, 0.5, -1.0))).map(lambda xp: ([xp[0]], {"p": xp[1]}))


def reduction_operands():
    """An array of at least one axis, an axis (None, an int or a tuple) and keepdims."""
    return shapes(min_dims=1).flatmap(arrays).flatmap(
        lambda x: st.tuples(st.just(x), axes(x.ndim), st.booleans())).map(
        lambda xak: ([xak[0]], {"axis": xak[1], "keepdims": xak[2]}))


def reshape_operands():
    """An array and a new shape of as many elements."""
    return shapes().flatmap(arrays).flatmap(
        lambda x: st.tuples(st.just(x), st.sampled_from(((-1,), (1, -1), (-1, 1), (x.size,))))).map(
        lambda xs: ([xs[0]], {"shape": xs[1]}))


DOMAINS = {f.__name__: f for f in (operand_pairs, operands_with_constants, single_operands, matmul_operands,
                                   power_operands, reduction_operands, reshape_operands)}
FORMS = [pytest.param(op, form, id=f"{op.name}: {form.text}", marks=getattr(pytest.mark, op.marker))
         for op in OPS for form in op.forms]


@pytest.mark.parametrize("op, form", FORMS)
@given(data=st.data())
def test_each_rule_matches_central_differences(op, form, data):
    """Does the rule of each form of each op (x + y, x + 2.5, 2.5 + y, ...) give the gradient central differences
    give, for every array operand, on inputs Hypothesis draws (broadcasting, size-1 axes, 0-d arrays)?"""
    operands, kwargs = data.draw(DOMAINS[form.domain](**form.bounds), label=form.text)
    arrays = [value for value in operands if isinstance(value, np.ndarray)]

    def make(*tensors):
        given = iter(tensors)
        return op.forward(*[next(given) if isinstance(v, np.ndarray) else v for v in operands], **kwargs)

    gradcheck(make, *arrays)
