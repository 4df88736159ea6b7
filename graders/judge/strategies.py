"""Hypothesis strategies for the checks: shapes, values clear of kinks and poles, operands.

Plural nouns with keyword-only bounds, as Hypothesis's own API style asks.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def shapes(*, min_dims: int = 0, max_dims: int = 3, max_side: int = 4) -> st.SearchStrategy[tuple[int, ...]]:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def values(*, low: float = -3.0, high: float = 3.0, away_from_zero: float = 0.0) -> st.SearchStrategy[float]:
    """Floats in [low, high], at least ``away_from_zero`` from 0 (for relu's kink and divisors)."""
    plain = st.floats(low, high, allow_nan=False, allow_infinity=False)
    if away_from_zero <= 0:
        return plain
    return plain.filter(lambda v: abs(v) >= away_from_zero)


def arrays(shape, *, low: float = -3.0, high: float = 3.0, away_from_zero: float = 0.0):
    """float64 arrays of ``shape`` with values in [low, high] rounded to 2 decimals (readable in
    messages), each at least ``away_from_zero`` from 0. The values come from a numpy generator
    seeded by one drawn integer, which keeps Hypothesis's cost per example low."""
    return st.integers(0, 2**32 - 1).map(lambda seed: _values_array(seed, shape, low, high, away_from_zero))


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
