"""gradcheck: hold a backward rule against central differences, the check you can trust while you write one.

    from exercises.gradcheck import gradcheck
    gradcheck(lambda x, w: x @ w, np.random.randn(2, 3), np.random.randn(3, 4))

``gradcheck(make, *arrays)`` makes a leaf Tensor of each array, builds ``out = make(*leaves)``, draws an
upstream gradient ``g``, and calls the rule ``out._backward(g)`` by hand (no engine needed). For each input it
then nudges every entry by ``±eps`` and measures how ``sum(g * make(...))`` changes: the numerical gradient.
It raises AssertionError naming the input and the entry that disagree most, or returns the largest error.

Central differences are accurate to about ``eps**2`` and to rounding: keep inputs away from kinks (relu at 0)
and poles (log at 0, 1/x at 0). The graders compare your rules with torch.autograd far more tightly; this is
a tool for finding a mistake, not a grade.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .tensor import Tensor


def numerical_gradient(make: Callable, arrays: list[np.ndarray], index: int, g: np.ndarray,
                       eps: float = 1e-6) -> np.ndarray:
    """d sum(g * make(*arrays)) / d arrays[index], by central differences, one entry at a time."""
    def value(nudged: np.ndarray) -> float:
        inputs = [Tensor(nudged if k == index else a) for k, a in enumerate(arrays)]
        return float(np.sum(g * make(*inputs).data))

    base = np.array(arrays[index], dtype=np.float64)
    grad = np.zeros_like(base)
    for entry in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[entry] += eps
        down[entry] -= eps
        grad[entry] = (value(up) - value(down)) / (2 * eps)
    return grad


def gradcheck(make: Callable, *arrays, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7,
              seed: int = 0) -> float:
    """Hold ``out._backward(g)`` of ``out = make(*leaves)`` against central differences; returns the largest
    absolute error, or raises AssertionError with the input and entry that disagree."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    leaves = [Tensor(a, requires_grad=True) for a in arrays]
    out = make(*leaves)
    g = np.random.default_rng(seed).uniform(-1.0, 1.0, np.shape(out.data))
    if out._backward is None:
        raise AssertionError("the result recorded no backward rule")
    analytic = out._backward(g)
    if len(analytic) != len(out._parents):
        raise AssertionError(f"the rule returned {len(analytic)} gradients for {len(out._parents)} parents")
    by_leaf = {id(parent): grad for parent, grad in zip(out._parents, analytic)}
    worst = 0.0
    for index, leaf in enumerate(leaves):
        if id(leaf) not in by_leaf:
            continue
        yours = np.asarray(by_leaf[id(leaf)], dtype=np.float64)
        numeric = numerical_gradient(make, arrays, index, g, eps)
        if yours.shape != numeric.shape:
            raise AssertionError(f"input {index}: your gradient has shape {yours.shape}, expected {numeric.shape}")
        error = np.abs(yours - numeric)
        allowed = atol + rtol * np.abs(numeric)
        if np.any(error > allowed):
            entry = np.unravel_index(np.argmax(error - allowed), error.shape)
            raise AssertionError(f"input {index}, entry {tuple(int(i) for i in entry)}: your rule gives "
                                 f"{yours[entry]:.8g}, central differences give {numeric[entry]:.8g} (both are "
                                 f"d sum(g * out) / d input, where g, the upstream gradient, is random: seed {seed}, "
                                 f"shape {g.shape})")
        worst = max(worst, float(error.max(initial=0.0)))
    return worst
