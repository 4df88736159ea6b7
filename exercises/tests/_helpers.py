"""Small helpers the public tests share: a compact comparison, calling one
backward rule by hand, and a plain-numpy reference for the loop tests."""

import numpy as np
import pytest


def _show(a: np.ndarray) -> str:
    return " ".join(np.array2string(a, precision=6, threshold=12, edgeitems=2).split())


NOT_FINITE = ("{what} holds {bad} where {expected} was expected: {why}")
WHY_NOT_FINITE = {"nan": "nan comes from 0/0, inf - inf or 0 * inf", "inf": "inf comes from a division by zero or "
                  "an overflow"}


def assert_close(got, expected, what: str, *, rtol: float = 1e-7, atol: float = 1e-10, hint: str = "") -> None:
    """Fail with one line (what, expected, got, shape) unless ``got`` is close to ``expected``; nan and inf are
    named as such, with where they come from (and ``hint``, the likeliest cause in this test)."""
    expected = np.asarray(expected, dtype=np.float64)
    if got is None:
        pytest.fail(f"{what}: expected {_show(expected)}, got None", pytrace=False)
    try:
        got_array = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        got_array = None  # fail below, outside the except block, so the report is one line
    if got_array is None:
        pytest.fail(f"{what}: expected an array like {_show(expected)}, got {type(got).__name__}", pytrace=False)
    if got_array.shape != expected.shape:
        pytest.fail(f"{what}: expected shape {expected.shape}, got shape {got_array.shape}: {_show(got_array)}",
                    pytrace=False)
    if np.all(np.isfinite(expected)) and not np.all(np.isfinite(got_array)):
        kinds = [kind for kind, found in (("nan", np.isnan(got_array)), ("inf", np.isinf(got_array))) if found.any()]
        why = "; ".join(WHY_NOT_FINITE[kind] for kind in kinds) + (f". {hint}" if hint else "")
        pytest.fail(NOT_FINITE.format(what=what, bad=" and ".join(kinds) + f" ({_show(got_array)})",
                                      expected=_show(expected), why=why), pytrace=False)
    if not np.allclose(got_array, expected, rtol=rtol, atol=atol):
        pytest.fail(f"{what}: expected {_show(expected)}, got {_show(got_array)} (shape {expected.shape})",
                    pytrace=False)


def gradients(out, g) -> tuple:
    """Call the backward rule ``out`` recorded, by hand (no engine): one gradient per parent."""
    if out._backward is None:
        pytest.fail("the result recorded no backward rule: do its inputs have requires_grad=True?", pytrace=False)
    grads, expected = out._backward(np.asarray(g, dtype=np.float64)), len(out._parents)
    if not isinstance(grads, (tuple, list)):
        pytest.fail(f"the backward rule returned a {type(grads).__name__}, expected a tuple of {expected} "
                    "gradient(s), one per parent", pytrace=False)
    if len(grads) != expected:
        pytest.fail(f"the backward rule returned {len(grads)} gradient(s), expected {expected}, one per parent",
                    pytrace=False)
    return tuple(grads)


class CountingSGD:
    """Plain SGD (p.data -= lr * p.grad) that counts its calls, so the loop tests need no Task 3 code."""

    def __init__(self, params, lr: float):
        self.params, self.lr = list(params), lr
        self.steps = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.steps += 1
        for p in self.params:
            if p.grad is not None:
                p.data -= self.lr * p.grad

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state) -> None:
        pass


def numpy_linear_epoch(weight, bias, batches, lr: float, accumulate: int = 1):
    """One epoch of plain SGD on ``x @ weight + bias`` under mean squared error, in numpy.

    Returns the new weight and bias and the mean batch loss: what ``train_epoch``
    must give for a ``Linear`` model.
    """
    weight, bias = weight.copy(), bias.copy()
    grad_w, grad_b, losses = 0.0, 0.0, []
    for i, (x, y) in enumerate(batches, start=1):
        residual = x @ weight + bias - y
        losses.append(np.mean(residual**2))
        d_pred = 2 * residual / residual.size / accumulate
        grad_w, grad_b = grad_w + x.T @ d_pred, grad_b + d_pred.sum(axis=0)
        if i % accumulate == 0 or i == len(batches):
            weight, bias = weight - lr * grad_w, bias - lr * grad_b
            grad_w, grad_b = 0.0, 0.0
    return weight, bias, float(np.mean(losses))


def numpy_mse(weight, bias, batches) -> float:
    """The mean over batches of each batch's mean squared error of ``x @ weight + bias``."""
    return float(np.mean([np.mean((x @ weight + bias - y) ** 2) for x, y in batches]))
