"""A tiny autograd engine over numpy: the lesson's Tensor.

Written differently on purpose:

* every backward rule is a small named function at module level, bound to
  its saved values with functools.partial (no closures);
* no_grad is a class with __enter__/__exit__ and a stack of saved modes;
* each Tensor knows its generation (1 + its newest parent's), and backward()
  visits nodes newest generation first with a heap, as DeZero does: a node's
  users always have a larger generation, so they all come before it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

_grad_enabled = True
_saved_modes: list[bool] = []


def is_grad_enabled() -> bool:
    """True unless inside a ``no_grad()`` block (given)."""
    return _grad_enabled


class no_grad:
    """Stop recording graphs inside the block, as ``torch.no_grad()``."""

    def __enter__(self) -> no_grad:
        global _grad_enabled
        _saved_modes.append(_grad_enabled)
        _grad_enabled = False
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        global _grad_enabled
        _grad_enabled = _saved_modes.pop()
        return False  # never swallow the exception


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape``."""
    grad = np.asarray(grad, dtype=np.float64)
    shape = tuple(shape)
    padded = (1,) * (grad.ndim - len(shape)) + shape  # the target as numpy saw it
    axes = tuple(i for i, (want, have) in enumerate(zip(padded, grad.shape)) if want == 1 and have != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


def op(data, parents: Sequence[Tensor], backward: Callable) -> Tensor:
    """Make the result of an op, recording the graph when it is needed (given)."""
    if _grad_enabled and any(p.requires_grad for p in parents):
        return Tensor(data, requires_grad=True, parents=tuple(parents), backward=backward)
    return Tensor(data)


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)


# ----- backward rules: the saved values first, the upstream gradient g last -----
def add_rule(x_shape, y_shape, g):
    return unbroadcast(g, x_shape), unbroadcast(g, y_shape)


def neg_rule(g):
    return (-g,)


def sub_rule(x_shape, y_shape, g):
    return unbroadcast(g, x_shape), unbroadcast(-g, y_shape)


def mul_rule(x, y, g):
    return unbroadcast(g * y, x.shape), unbroadcast(g * x, y.shape)


def div_rule(x, y, g):
    return unbroadcast(g / y, x.shape), unbroadcast(-g * x / y**2, y.shape)


def pow_rule(x, p, g):
    return (g * p * x ** (p - 1),)


def matmul_rule(x, w, g):
    return g @ w.T, x.T @ g


def exp_rule(out, g):
    return (g * out,)


def log_rule(x, g):
    return (g / x,)


def relu_rule(x, g):
    return (g * (x > 0),)


def tanh_rule(out, g):
    return (g * (1.0 - out**2),)


def sigmoid_rule(out, g):
    return (g * out * (1.0 - out),)


def reduce_rule(shape, axis, keepdims, count, g):
    """sum (count 1) and mean (count = inputs per output): spread g back over the reduced axes."""
    g = np.asarray(g, dtype=np.float64)
    if not keepdims and axis is not None:
        axes = (axis,) if isinstance(axis, int) else axis
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    return (np.broadcast_to(g / count, shape).copy(),)


def square_mean_rule(x, g):
    return (g * 2.0 * x / x.size,)


def reshape_rule(old_shape, g):
    return (np.reshape(g, old_shape),)


def transpose_rule(g):
    return (np.transpose(g),)


class Tensor:
    """An n-dimensional float64 array that records how it was computed."""

    def __init__(self, data, requires_grad: bool = False, parents=(), backward=None):
        self.data = np.array(data, dtype=np.float64)
        self.grad: np.ndarray | None = None
        self.requires_grad = bool(requires_grad)
        self._parents = tuple(parents)
        self._backward = backward
        self.generation = 1 + max((p.generation for p in self._parents), default=-1)

    # ----- plain array behaviour (given) -----
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def item(self) -> float:
        return float(self.data.item())

    def numpy(self) -> np.ndarray:
        return self.data

    def detach(self) -> Tensor:
        return Tensor(self.data)

    def to(self, device) -> Tensor:
        if str(device) != "cpu":
            raise ValueError(f"this engine runs on numpy only: got device={device!r}, expected 'cpu'")
        return self

    def __repr__(self) -> str:
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({np.array2string(self.data, precision=4)}{flag})"

    # ----- arithmetic -----
    def __add__(self, other) -> Tensor:
        other = _as_tensor(other)
        return op(self.data + other.data, (self, other), partial(add_rule, self.shape, other.shape))

    def __radd__(self, other) -> Tensor:
        return _as_tensor(other) + self

    def __neg__(self) -> Tensor:
        return op(-self.data, (self,), neg_rule)

    def __sub__(self, other) -> Tensor:
        other = _as_tensor(other)
        return op(self.data - other.data, (self, other), partial(sub_rule, self.shape, other.shape))

    def __rsub__(self, other) -> Tensor:
        return _as_tensor(other) - self

    def __mul__(self, other) -> Tensor:
        other = _as_tensor(other)
        return op(self.data * other.data, (self, other), partial(mul_rule, self.data, other.data))

    def __rmul__(self, other) -> Tensor:
        return _as_tensor(other) * self

    def __truediv__(self, other) -> Tensor:
        other = _as_tensor(other)
        return op(self.data / other.data, (self, other), partial(div_rule, self.data, other.data))

    def __rtruediv__(self, other) -> Tensor:
        return _as_tensor(other) / self

    def __pow__(self, p: float) -> Tensor:
        return op(self.data**p, (self,), partial(pow_rule, self.data, p))

    def __matmul__(self, other) -> Tensor:
        other = _as_tensor(other)
        return op(self.data @ other.data, (self, other), partial(matmul_rule, self.data, other.data))

    def exp(self) -> Tensor:
        out = np.exp(self.data)
        return op(out, (self,), partial(exp_rule, out))

    def log(self) -> Tensor:
        return op(np.log(self.data), (self,), partial(log_rule, self.data))

    def relu(self) -> Tensor:
        return op(np.maximum(self.data, 0.0), (self,), partial(relu_rule, self.data))

    def tanh(self) -> Tensor:
        out = np.tanh(self.data)
        return op(out, (self,), partial(tanh_rule, out))

    def sigmoid(self) -> Tensor:
        out = 0.5 * (1.0 + np.tanh(0.5 * self.data))  # 1 / (1 + exp(-x)), without overflow
        return op(out, (self,), partial(sigmoid_rule, out))

    # ----- reductions and shapes -----
    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        return op(self.data.sum(axis=axis, keepdims=keepdims), (self,),
                  partial(reduce_rule, self.shape, axis, keepdims, 1))

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        out = self.data.mean(axis=axis, keepdims=keepdims)
        count = self.data.size // max(np.size(out), 1)
        return op(out, (self,), partial(reduce_rule, self.shape, axis, keepdims, count))

    def square_mean(self) -> Tensor:
        return op(np.mean(self.data**2), (self,), partial(square_mean_rule, self.data))

    def reshape(self, *shape) -> Tensor:
        return op(self.data.reshape(*shape), (self,), partial(reshape_rule, self.shape))

    @property
    def T(self) -> Tensor:
        return op(self.data.T, (self,), transpose_rule)

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """Backpropagate from this tensor into the ``.grad`` of every leaf, newest generation first."""
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = np.ones_like(self.data)
        grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)
        if grad.shape != self.shape:
            raise ValueError(f"grad has shape {grad.shape}, but the output has shape {self.shape}")

        tiebreak = itertools.count()
        heap = [(-self.generation, next(tiebreak), self)]
        pending = {id(self): grad}
        while heap:
            _, _, node = heapq.heappop(heap)
            g = pending.pop(id(node))
            if not node._parents:
                if node.grad is None:
                    node.grad = np.array(g, dtype=np.float64)
                else:
                    node.grad += g  # our own array: safe to add into in place
                continue
            for parent, part in zip(node._parents, node._backward(g)):
                if not parent.requires_grad:
                    continue
                if id(parent) in pending:
                    pending[id(parent)] = pending[id(parent)] + part
                else:
                    pending[id(parent)] = part
                    heapq.heappush(heap, (-parent.generation, next(tiebreak), parent))
