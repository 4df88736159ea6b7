"""Does every op's backward rule in solutions/ agree with torch.autograd?

Each row of ``OPS`` is one op: our expression, the inputs it is drawn over, and
(when the spelling differs) the same expression in torch. One helper,
``assert_grads_match_torch``, runs both in float64 with the same upstream
gradient and compares the forward value and every input's gradient.
Inputs keep clear of kinks and poles: relu away from 0 (tested exactly at 0 on
its own), log and fractional powers on positive bases, divisors away from 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solutions import Tensor, unbroadcast

RTOL, ATOL = 1e-10, 1e-12

reference = settings(derandomize=True, database=None, deadline=None, max_examples=20)


# ----- strategies -----
def shapes(*, min_dims: int = 0, max_dims: int = 3, max_side: int = 4):
    """Array shapes with every side at least 1."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def values(shape, *, low: float = -3.0, high: float = 3.0, clear_of_zero: float = 0.0):
    """float64 arrays of ``shape`` with entries in [low, high] and |x| >= clear_of_zero."""
    if not clear_of_zero:
        elements = st.floats(low, high)
    else:  # each side of zero, kept clear of it
        elements = st.floats(max(low, clear_of_zero), high)
        if low < 0:
            elements |= st.floats(low, -clear_of_zero)
    return hnp.arrays(np.float64, shape, elements=elements)


def single_inputs(*, shape=None, min_dims: int = 0, max_dims: int = 3, **bounds):
    """One-element tuples ``(a,)``: one array of ``shape``, or of a drawn shape."""
    drawn_shapes = st.just(shape) if shape is not None else shapes(min_dims=min_dims, max_dims=max_dims)
    return drawn_shapes.flatmap(lambda s: values(s, **bounds)).map(lambda a: (a,))


# Both directions on purpose: the left operand broadcast, the right one, and both at once.
BROADCAST_EXAMPLES = [((2, 3), (3,)), ((3,), (2, 3)), ((3, 1), (1, 4)), ((), (2, 2)), ((2, 1, 3), (4, 1))]


def broadcast_pairs(*, b_clear_of_zero: float = 0.0):
    """Pairs ``(a, b)`` whose shapes broadcast together, either one (or both) stretched."""
    shape_pairs = st.sampled_from(BROADCAST_EXAMPLES) | hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, max_side=4).map(lambda bs: bs.input_shapes)
    return shape_pairs.flatmap(lambda s: st.tuples(values(s[0]), values(s[1], clear_of_zero=b_clear_of_zero)))


def matrix_pairs():
    """Pairs ``(a, b)`` of shapes (n, k) and (k, m), for ``a @ b``."""
    sides = st.integers(1, 4)
    return st.tuples(sides, sides, sides).flatmap(lambda nkm: st.tuples(values(nkm[:2]), values(nkm[1:])))


# ----- the table -----
class Op(NamedTuple):
    name: str
    ours: object  # a function of our Tensors
    inputs: object  # a strategy of tuples of arrays
    theirs: object = None  # the same function in torch, where it is spelled differently


def reverse_axes(t):
    return t.permute(tuple(range(t.ndim))[::-1])  # torch's .T warns on tensors that are not 2-D


POSITIVE = {"low": 0.1, "high": 3.0}
NONZERO = {"clear_of_zero": 0.1}

OPS = [
    Op("a + b", lambda a, b: a + b, broadcast_pairs()),
    Op("a + 2.5", lambda a: a + 2.5, single_inputs()),
    Op("2.5 + a", lambda a: 2.5 + a, single_inputs()),
    Op("a - b", lambda a, b: a - b, broadcast_pairs()),
    Op("a - 2.5", lambda a: a - 2.5, single_inputs()),
    Op("2.5 - a", lambda a: 2.5 - a, single_inputs()),
    Op("-a", lambda a: -a, single_inputs()),
    Op("a * b", lambda a, b: a * b, broadcast_pairs()),
    Op("a * 3", lambda a: a * 3, single_inputs()),
    Op("3 * a", lambda a: 3 * a, single_inputs()),
    Op("a / b", lambda a, b: a / b, broadcast_pairs(b_clear_of_zero=0.1)),
    Op("a / 2", lambda a: a / 2, single_inputs()),
    Op("2 / a", lambda a: 2 / a, single_inputs(**NONZERO)),
    Op("a ** 2", lambda a: a**2, single_inputs()),
    Op("a ** 3", lambda a: a**3, single_inputs()),
    Op("a ** 1", lambda a: a**1, single_inputs()),
    Op("a ** 0", lambda a: a**0, single_inputs(**POSITIVE)),
    Op("a ** 0.5", lambda a: a**0.5, single_inputs(**POSITIVE)),
    Op("a ** -1", lambda a: a**-1, single_inputs(**POSITIVE)),
    Op("a ** -2.5", lambda a: a**-2.5, single_inputs(**POSITIVE)),
    Op("a ** 1.7", lambda a: a**1.7, single_inputs(**POSITIVE)),
    Op("a @ b", lambda a, b: a @ b, matrix_pairs()),
    Op("relu", lambda a: a.relu(), single_inputs(**NONZERO)),
    Op("exp", lambda a: a.exp(), single_inputs()),
    Op("log", lambda a: a.log(), single_inputs(**POSITIVE)),
    Op("tanh", lambda a: a.tanh(), single_inputs()),
    Op("sigmoid", lambda a: a.sigmoid(), single_inputs(low=-8.0, high=8.0)),
    Op("sum()", lambda a: a.sum(), single_inputs()),
    Op("sum(axis=None, keepdims=True)", lambda a: a.sum(axis=None, keepdims=True), single_inputs()),
    Op("sum(axis=0)", lambda a: a.sum(axis=0), single_inputs(min_dims=1)),
    Op("sum(axis=1, keepdims=True)", lambda a: a.sum(axis=1, keepdims=True), single_inputs(min_dims=2)),
    Op("sum(axis=-1)", lambda a: a.sum(axis=-1), single_inputs(min_dims=1)),
    Op("sum(axis=-2, keepdims=True)", lambda a: a.sum(axis=-2, keepdims=True), single_inputs(min_dims=2)),
    Op("sum(axis=(0, -1))", lambda a: a.sum(axis=(0, -1)), single_inputs(min_dims=2)),
    Op("sum(axis=(-1, 0), keepdims=True)", lambda a: a.sum(axis=(-1, 0), keepdims=True), single_inputs(min_dims=2)),
    Op("mean()", lambda a: a.mean(), single_inputs()),
    Op("mean(axis=None, keepdims=True)", lambda a: a.mean(axis=None, keepdims=True), single_inputs()),
    Op("mean(axis=0)", lambda a: a.mean(axis=0), single_inputs(min_dims=1)),
    Op("mean(axis=1, keepdims=True)", lambda a: a.mean(axis=1, keepdims=True), single_inputs(min_dims=2)),
    Op("mean(axis=-1)", lambda a: a.mean(axis=-1), single_inputs(min_dims=1)),
    Op("mean(axis=-2, keepdims=True)", lambda a: a.mean(axis=-2, keepdims=True), single_inputs(min_dims=2)),
    Op("mean(axis=(0, -1))", lambda a: a.mean(axis=(0, -1)), single_inputs(min_dims=2)),
    Op("mean(axis=(-1, 0), keepdims=True)", lambda a: a.mean(axis=(-1, 0), keepdims=True), single_inputs(min_dims=2)),
    Op("square_mean", lambda a: a.square_mean(), single_inputs(), theirs=lambda a: (a**2).mean()),
    Op("reshape(-1)", lambda a: a.reshape(-1), single_inputs()),
    Op("reshape(1, -1)", lambda a: a.reshape(1, -1), single_inputs()),
    Op("reshape(3, 4) of (2, 6)", lambda a: a.reshape(3, 4), single_inputs(shape=(2, 6))),
    Op("reshape((4, 1, 3)) of (2, 6)", lambda a: a.reshape((4, 1, 3)), single_inputs(shape=(2, 6))),
    Op(".T", lambda a: a.T, single_inputs(), theirs=reverse_axes),
]


def assert_grads_match_torch(ours, theirs, inputs, upstream) -> None:
    """Run ``ours`` on our Tensors and ``theirs`` on torch's, backpropagate ``upstream``
    through both, and compare the forward value and each input's gradient."""
    leaves = [Tensor(x, requires_grad=True) for x in inputs]
    out = ours(*leaves)
    out.backward(upstream)

    torch_leaves = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
    torch_out = theirs(*torch_leaves)
    expected = torch.autograd.grad(torch_out, torch_leaves, torch.from_numpy(upstream))

    np.testing.assert_allclose(out.data, torch_out.detach().numpy(), rtol=RTOL, atol=ATOL, err_msg="forward value")
    for i, (leaf, grad) in enumerate(zip(leaves, expected, strict=True)):
        assert leaf.grad is not None, f"input {i} got no gradient"
        assert leaf.grad.shape == leaf.shape, f"input {i}: gradient of shape {leaf.grad.shape}, expected {leaf.shape}"
        np.testing.assert_allclose(leaf.grad, grad.numpy(), rtol=RTOL, atol=ATOL, err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
@reference
@given(data=st.data())
def test_each_op_has_torchs_gradient(op, data):
    """Does each op's backward give torch.autograd's gradient, for every input and a drawn upstream gradient?"""
    inputs = data.draw(op.inputs, label="inputs")
    out_shape = op.ours(*map(Tensor, inputs)).shape
    upstream = data.draw(values(out_shape), label="upstream gradient")
    assert_grads_match_torch(op.ours, op.theirs or op.ours, inputs, upstream)


def test_relu_has_gradient_zero_exactly_at_zero():
    """Is relu's gradient at exactly 0 equal to 0, as PyTorch's?"""
    x = Tensor([-1.0, 0.0, -0.0, 2.0], requires_grad=True)
    x.relu().sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0, 1.0])
    assert_grads_match_torch(lambda a: a.relu(), lambda a: a.relu(), [np.zeros((2, 3))], np.ones((2, 3)))


def test_sigmoid_stays_relatively_accurate_deep_in_its_negative_tail():
    """Does sigmoid keep torch's relative accuracy (1e-10) for large negative inputs, where its value is tiny?"""
    x = np.array([-15.0, -20.0, -30.0])
    ours = Tensor(x, requires_grad=True)
    out = ours.sigmoid()
    out.backward(np.ones(3))
    theirs = torch.tensor(x, requires_grad=True)
    expected = torch.autograd.grad(theirs.sigmoid(), theirs, torch.ones(3, dtype=torch.float64))[0]
    np.testing.assert_allclose(out.data, torch.sigmoid(torch.from_numpy(x)).numpy(), rtol=RTOL, atol=0)
    np.testing.assert_allclose(ours.grad, expected.numpy(), rtol=RTOL, atol=0)


@st.composite
def broadcasts(draw):
    """Pairs ``(small, full)``: ``small`` broadcasts to ``full`` (leading axes dropped, sides set to 1)."""
    full = draw(shapes(min_dims=0, max_dims=4))
    dropped = draw(st.integers(0, len(full)))
    small = tuple(1 if draw(st.booleans()) else side for side in full[dropped:])
    return small, full


@reference
@given(data=st.data())
def test_unbroadcast_equals_summing_a_broadcast_by_hand(data):
    """Does unbroadcast add every entry of the broadcast gradient into the input entry it was copied from?"""
    small, full = data.draw(broadcasts(), label="(shape, broadcast shape)")
    grad = data.draw(values(full), label="grad")
    expected = np.zeros(small)
    for index in np.ndindex(*full):
        tail = index[len(full) - len(small):]
        expected[tuple(0 if side == 1 else i for side, i in zip(small, tail, strict=True))] += grad[index]
    got = unbroadcast(grad, small)
    assert got.shape == small and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def composite(a, b, c):
    """An expression that uses most ops at once: a (3, 4), b (4, 2), c (2,) in [-1, 1]."""
    h = (a @ b - c).tanh() * (c / 2.0 + 1.5).log()
    s = (h.sigmoid() * h).mean(axis=0, keepdims=True)
    return (s.T.reshape(-1) ** 2).sum() + (a.exp() / 3.0).square_mean() - (b.T * 0.5).mean() + (2.0 - c).sum(axis=0)


@settings(derandomize=True, database=None, deadline=None, max_examples=10)
@given(inputs=st.tuples(values((3, 4), low=-1, high=1), values((4, 2), low=-1, high=1), values((2,), low=-1, high=1)))
def test_central_differences_agree_with_the_engine_on_a_composite_expression(inputs):
    """Do float64 central differences, an independent witness, agree with the engine's gradients?"""
    leaves = [Tensor(x, requires_grad=True) for x in inputs]
    composite(*leaves).backward()
    h = 1e-6
    for i, leaf in enumerate(leaves):
        numeric = np.zeros_like(inputs[i])
        for index in np.ndindex(*inputs[i].shape):
            shifted = [x.copy() for x in inputs], [x.copy() for x in inputs]
            shifted[0][i][index] += h
            shifted[1][i][index] -= h
            up, down = (composite(*map(Tensor, arrays)).item() for arrays in shifted)
            numeric[index] = (up - down) / (2 * h)
        np.testing.assert_allclose(leaf.grad, numeric, rtol=1e-6, atol=1e-8, err_msg=f"gradient of input {i}")
