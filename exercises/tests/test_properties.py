"""Property tests: each backward rule against central differences (gradcheck.py) on inputs Hypothesis draws.

When one fails, Hypothesis shrinks the inputs to a small example and prints it ("Falsifying example"): start
from that. The graders draw their own inputs and compare with torch.autograd far more tightly.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ..gradcheck import gradcheck

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


SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, max_side=3)
BROADCAST = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3)


@pytest.mark.task1_2
@given(BROADCAST.flatmap(lambda s: st.tuples(arrays(s.input_shapes[0]), arrays(s.input_shapes[1]))))
def test_add_and_sub_match_central_differences_with_broadcasting(pair):
    gradcheck(lambda x, y: x + y, *pair)
    gradcheck(lambda x, y: x - y, *pair)
    gradcheck(lambda x: -x, pair[0])


@pytest.mark.task1_3
@given(BROADCAST.flatmap(lambda s: st.tuples(arrays(s.input_shapes[0]),
                                             arrays(s.input_shapes[1], away_from_zero()))))
def test_mul_and_div_match_central_differences_with_broadcasting(pair):
    gradcheck(lambda x, y: x * y, *pair)
    gradcheck(lambda x, y: x / y, *pair)


@pytest.mark.task1_4
@given(st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).flatmap(
    lambda n: st.tuples(arrays((n[0], n[1])), arrays((n[1], n[2])))))
def test_matmul_matches_central_differences(pair):
    gradcheck(lambda x, w: x @ w, *pair)


@pytest.mark.task1_5
@given(SHAPES.flatmap(lambda shape: arrays(shape, st.floats(0.5, 2.0))), st.sampled_from((2, 3, 0.5, -1)))
def test_pow_exp_and_log_match_central_differences(x, p):
    gradcheck(lambda x: x ** p, x)
    gradcheck(lambda x: x.exp(), x)
    gradcheck(lambda x: x.log(), x)


@pytest.mark.task1_6
@given(SHAPES.flatmap(lambda shape: arrays(shape, away_from_zero())))
def test_relu_tanh_and_sigmoid_match_central_differences(x):
    gradcheck(lambda x: x.relu(), x)
    gradcheck(lambda x: x.tanh(), x)
    gradcheck(lambda x: x.sigmoid(), x)


@pytest.mark.task1_7
@given(SHAPES.flatmap(arrays), st.data())
def test_sum_and_mean_match_central_differences(x, data):
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    gradcheck(lambda x: x.sum(axis=axis, keepdims=keepdims), x)
    gradcheck(lambda x: x.mean(axis=axis, keepdims=keepdims), x)
    gradcheck(lambda x: x.square_mean(), x)


@pytest.mark.task1_8
@given(SHAPES.flatmap(arrays))
def test_reshape_and_transpose_match_central_differences(x):
    gradcheck(lambda x: x.reshape(-1), x)
    gradcheck(lambda x: x.T, x)
