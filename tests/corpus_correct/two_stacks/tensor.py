"""A tiny autograd engine over numpy: the lesson's Tensor.

Rules as one-line lambdas; the engine finds a postorder with two parallel
stacks (the path being explored and, for each node on it, the index of the
next parent to look at) and keeps the gradients on the Tensors themselves,
like micrograd.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np

_grad_enabled = True


def is_grad_enabled() -> bool:
    """True unless inside a ``no_grad()`` block (given)."""
    return _grad_enabled


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Stop recording graphs inside the block, as ``torch.no_grad()``."""
    global _grad_enabled
    was = _grad_enabled
    _grad_enabled = False
    try:
        yield
    finally:
        _grad_enabled = was


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape``, matching axes from the right as numpy does."""
    grad = np.asarray(grad, dtype=np.float64)
    for axis in range(-1, -grad.ndim - 1, -1):
        if -axis > len(shape):  # an axis numpy added in front: sum it away completely
            grad = grad.sum(axis=axis, keepdims=True)
        elif shape[axis] == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.reshape(shape)


def op(data, parents: Sequence[Tensor], backward: Callable) -> Tensor:
    """Make the result of an op, recording the graph when it is needed (given)."""
    if _grad_enabled and any(p.requires_grad for p in parents):
        return Tensor(data, requires_grad=True, parents=tuple(parents), backward=backward)
    return Tensor(data)


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)


class Tensor:
    """An n-dimensional float64 array that records how it was computed."""

    def __init__(self, data, requires_grad: bool = False, parents=(), backward=None):
        self.data = np.array(data, dtype=np.float64)
        self.grad: np.ndarray | None = None
        self.requires_grad = bool(requires_grad)
        self._parents = tuple(parents)
        self._backward = backward

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
        x, y = self.data, other.data
        return op(x + y, (self, other), lambda g: (unbroadcast(g, x.shape), unbroadcast(g, y.shape)))

    def __radd__(self, other) -> Tensor:
        return _as_tensor(other) + self

    def __neg__(self) -> Tensor:
        return op(-self.data, (self,), lambda g: (-g,))

    def __sub__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data
        return op(x - y, (self, other), lambda g: (unbroadcast(g, x.shape), unbroadcast(-g, y.shape)))

    def __rsub__(self, other) -> Tensor:
        return _as_tensor(other) - self

    def __mul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data
        return op(x * y, (self, other), lambda g: (unbroadcast(g * y, x.shape), unbroadcast(g * x, y.shape)))

    def __rmul__(self, other) -> Tensor:
        return _as_tensor(other) * self

    def __truediv__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data
        return op(x / y, (self, other),
                  lambda g: (unbroadcast(g / y, x.shape), unbroadcast(-g * x / (y * y), y.shape)))

    def __rtruediv__(self, other) -> Tensor:
        return _as_tensor(other) / self

    def __pow__(self, p: float) -> Tensor:
        x = self.data
        return op(x**p, (self,), lambda g: (p * g * x ** (p - 1),))

    def __matmul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, w = self.data, other.data
        return op(x @ w, (self, other), lambda g: (g @ np.swapaxes(w, 0, 1), np.swapaxes(x, 0, 1) @ g))

    def exp(self) -> Tensor:
        out = np.exp(self.data)
        return op(out, (self,), lambda g: (g * out,))

    def log(self) -> Tensor:
        x = self.data
        return op(np.log(x), (self,), lambda g: (g / x,))

    def relu(self) -> Tensor:
        x = self.data
        return op(np.maximum(x, 0.0), (self,), lambda g: (np.where(x <= 0, 0.0, g),))

    def tanh(self) -> Tensor:
        out = np.tanh(self.data)
        return op(out, (self,), lambda g: (g * (1 - out) * (1 + out),))

    def sigmoid(self) -> Tensor:
        out = 0.5 * (1.0 + np.tanh(0.5 * self.data))  # 1 / (1 + exp(-x)), without overflow
        return op(out, (self,), lambda g: (g * out * (1.0 - out),))

    # ----- reductions and shapes -----
    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        shape = self.shape
        return op(self.data.sum(axis=axis, keepdims=keepdims), (self,),
                  lambda g: (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) + 0.0,))

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        shape, out = self.shape, self.data.mean(axis=axis, keepdims=keepdims)
        count = self.data.size // max(np.size(out), 1)
        return op(out, (self,),
                  lambda g: (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims) / count, shape).copy(),))

    def square_mean(self) -> Tensor:
        x = self.data
        return op(np.mean(x**2), (self,), lambda g: (2.0 * g * x / x.size,))

    def reshape(self, *shape) -> Tensor:
        old = self.shape
        return op(self.data.reshape(*shape), (self,), lambda g: (g.reshape(old),))

    @property
    def T(self) -> Tensor:
        return op(self.data.T, (self,), lambda g: (g.T,))

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """Backpropagate from this tensor into the ``.grad`` of every leaf."""
        if not self.requires_grad:
            raise RuntimeError("cannot call backward() on a tensor that does not require grad")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = np.ones(self.data.shape)
        grad = np.array(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)
        if grad.shape != self.data.shape:
            raise ValueError(f"gradient shape {grad.shape} != tensor shape {self.data.shape}")

        order = _postorder(self)[::-1]  # users before the nodes they use
        for node in order:
            if node._parents:
                node.grad = None  # intermediate gradients start fresh on every call
        self.grad = grad.copy() if self.grad is None else np.asarray(self.grad + grad)
        for node in order:
            if not node._parents:
                continue
            for parent, d in zip(node._parents, node._backward(node.grad)):
                if parent.requires_grad:
                    parent.grad = np.array(d, dtype=np.float64) if parent.grad is None else np.asarray(parent.grad + d)


def _postorder(root: Tensor) -> list[Tensor]:
    """Every node that requires grad, each after all of its parents, without recursion."""
    path, next_parent = [root], [0]
    seen, out = {id(root)}, []
    while path:
        node, i = path[-1], next_parent[-1]
        if i < len(node._parents):
            next_parent[-1] = i + 1
            parent = node._parents[i]
            if parent.requires_grad and id(parent) not in seen:
                seen.add(id(parent))
                path.append(parent)
                next_parent.append(0)
        else:
            path.pop()
            next_parent.pop()
            out.append(node)
    return out


def _keep_reduced_axes(g, shape, axis, keepdims) -> np.ndarray:
    """Given: put back the axes a reduction removed, as size 1, so g broadcasts to shape."""
    g = np.asarray(g, dtype=np.float64)
    if keepdims or axis is None and g.ndim == len(shape):
        return g
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return np.expand_dims(g, tuple(a % len(shape) for a in axes))
