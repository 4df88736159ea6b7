"""Hypothesis strategies for the checks: shapes, values clear of kinks and poles, and the operands of each op.

Plural nouns with keyword-only bounds (``min_value``, ``max_value``), as Hypothesis's own API style asks. The
strategies that draw a check's own objects (graphs, a DataLoader's setups, an optimizer's runs) sit beside the
types they build, in their check modules.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def shapes(*, min_dims: int = 0, max_dims: int = 3, max_side: int = 4) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes of ``min_dims`` to ``max_dims`` axes, each of 1 to ``max_side``: small enough for a message to print
    the arrays."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def values(*, min_value: float = -3.0, max_value: float = 3.0, away_from_zero: float = 0.0) -> st.SearchStrategy[float]:
    """Floats in [min_value, max_value], at least ``away_from_zero`` from 0 (for relu's kink and divisors)."""
    plain = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False)
    if away_from_zero <= 0:
        return plain
    return plain.filter(lambda v: abs(v) >= away_from_zero)


def arrays(shape, *, min_value: float = -3.0, max_value: float = 3.0, away_from_zero: float = 0.0):
    """float64 arrays of ``shape`` with values in [min_value, max_value] rounded to 2 decimals (readable in
    messages), each at least ``away_from_zero`` from 0. The values come from a numpy generator
    seeded by one drawn integer, which keeps Hypothesis's cost per example low."""
    return st.integers(0, 2**32 - 1).map(lambda seed: _values_array(seed, shape, min_value, max_value, away_from_zero))


def _values_array(seed: int, shape, low: float, high: float, away: float) -> np.ndarray:
    values = np.round(np.random.default_rng(seed).uniform(low, high, shape), 2)
    if away > 0:
        values = np.where(np.abs(values) < away, np.where(values < 0, -away, away), values)
    return np.asarray(values, dtype=np.float64)


def broadcast_pairs(*, min_dims: int = 0, max_dims: int = 3):
    """Two shapes that broadcast together, either way round (size-1 axes and missing axes)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=min_dims, max_dims=max_dims, max_side=4) \
        .map(lambda result: result.input_shapes)


@st.composite
def broadcast_targets(draw):
    """(gradient shape, target shape) where the target broadcasts up to the gradient's shape."""
    target = draw(shapes(max_dims=3))
    stretched = tuple(draw(st.integers(1, 4)) if size == 1 else size for size in target)
    leading = draw(st.lists(st.integers(1, 4), max_size=2))
    return tuple(leading) + stretched, target


@st.composite
def axes(draw, ndim: int):
    """An ``axis`` argument for a reduction over ``ndim`` axes: None, an int (maybe negative) or a tuple."""
    if ndim == 0:
        return None
    choice = draw(st.sampled_from(("none", "int", "tuple")))
    if choice == "none":
        return None
    if choice == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(sorted(picked))


@st.composite
def reshapes(draw, shape: tuple[int, ...]):
    """A new shape with the same number of elements, sometimes with a -1."""
    size = int(np.prod(shape))
    factors = [d for d in range(1, size + 1) if size % d == 0]
    first = draw(st.sampled_from(factors))
    new = draw(st.sampled_from([(size,), (first, size // first), (size // first, 1, first), (1, size)]))
    if draw(st.booleans()):
        new = tuple(-1 if i == 0 else d for i, d in enumerate(new))
    return new


# ----- the operands of each op: (operands, kwargs), an operand an ndarray or a float constant -----

def operand_pairs(*, min_value: float = -3.0, max_value: float = 3.0, divisor: bool = False):
    """Two arrays whose shapes broadcast together; the second clear of 0 when it divides."""
    return broadcast_pairs().flatmap(lambda shapes: st.tuples(
        arrays(shapes[0], min_value=min_value, max_value=max_value),
        arrays(shapes[1], min_value=min_value, max_value=max_value, away_from_zero=0.5 if divisor else 0.0),
    ).map(lambda ab: (list(ab), {})))


def operands_with_constants(*, left: bool, divisor: bool = False):
    """A float constant and an array, the constant on the ``left`` or the right; the array clear of 0 when it
    divides."""
    constant = values(min_value=-3.0, max_value=3.0, away_from_zero=0.5)
    tensor = shapes().flatmap(lambda shape: arrays(shape, away_from_zero=0.5 if divisor else 0.0))
    return st.tuples(constant, tensor).map(lambda ct: ([ct[0], ct[1]] if left else [ct[1], ct[0]], {}))


def single_operands(*, min_value: float = -3.0, max_value: float = 3.0, away_from_zero: float = 0.0,
                    min_dims: int = 0):
    """One array, for the elementwise ops."""
    return shapes(min_dims=min_dims).flatmap(
        lambda shape: arrays(shape, min_value=min_value, max_value=max_value, away_from_zero=away_from_zero)
    ).map(lambda a: ([a], {}))


def matmul_operands():
    """x of shape (n, k) and w of shape (k, m), each side 1 to 4."""
    sizes = st.tuples(*[st.integers(1, 4)] * 3)
    return sizes.flatmap(lambda nkm: st.tuples(arrays((nkm[0], nkm[1])), arrays((nkm[1], nkm[2])))) \
        .map(lambda ab: (list(ab), {}))


def power_operands():
    """A positive array and an exponent ``p`` among a few integers and halves."""
    exponent = st.sampled_from([-2.0, -1.0, -0.5, 0.5, 1.5, 2.0, 3.0])
    base = shapes().flatmap(lambda shape: arrays(shape, min_value=0.5, max_value=2.5))
    return st.tuples(base, exponent).map(lambda bp: ([bp[0]], {"p": bp[1]}))


def reduction_operands():
    """An array of at least one axis, an ``axis`` for it and ``keepdims``."""
    return shapes(min_dims=1).flatmap(lambda shape: st.tuples(
        arrays(shape), axes(len(shape)), st.booleans(),
    )).map(lambda a: ([a[0]], {"axis": a[1], "keepdims": a[2]}))


def reshape_operands():
    """An array of at least one axis and a new ``shape`` of as many elements."""
    return shapes(min_dims=1).flatmap(lambda shape: st.tuples(arrays(shape), reshapes(shape))) \
        .map(lambda a: ([a[0]], {"shape": a[1]}))
