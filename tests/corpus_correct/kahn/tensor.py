"""A tiny autograd engine over numpy: the lesson's Tensor.

My version: the engine orders the graph with Kahn's algorithm (count how many
consumers each node has, release a node once all of them have sent their
gradient), so there is no depth-first search at all.
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
    saved = _grad_enabled
    _grad_enabled = False
    try:
        yield
    finally:
        _grad_enabled = saved  # put back whatever it was, even after an error


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape``."""
    out = np.array(grad, dtype=np.float64)
    extra = out.ndim - len(shape)
    for _ in range(extra):
        out = out.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1:
            out = out.sum(axis=i, keepdims=True)
    return out


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

        def backward(g):
            dx = unbroadcast(g, x.shape)
            dy = unbroadcast(g, y.shape)
            return dx, dy

        return op(x + y, (self, other), backward)

    def __radd__(self, other) -> Tensor:
        return _as_tensor(other) + self

    def __neg__(self) -> Tensor:
        def backward(g):
            return (-1.0 * g,)

        return op(-self.data, (self,), backward)

    def __sub__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            dx = unbroadcast(g, x.shape)
            dy = unbroadcast(-1.0 * g, y.shape)
            return dx, dy

        return op(x - y, (self, other), backward)

    def __rsub__(self, other) -> Tensor:
        return _as_tensor(other) - self

    def __mul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            dx = unbroadcast(y * g, x.shape)
            dy = unbroadcast(x * g, y.shape)
            return dx, dy

        return op(x * y, (self, other), backward)

    def __rmul__(self, other) -> Tensor:
        return _as_tensor(other) * self

    def __truediv__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            dx = unbroadcast(g / y, x.shape)
            dy = unbroadcast(-(g * x) / (y * y), y.shape)
            return dx, dy

        return op(x / y, (self, other), backward)

    def __rtruediv__(self, other) -> Tensor:
        return _as_tensor(other) / self

    def __pow__(self, p: float) -> Tensor:
        x = self.data

        def backward(g):
            return (p * np.power(x, p - 1) * g,)

        return op(x**p, (self,), backward)

    def __matmul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, w = self.data, other.data

        def backward(g):
            dx = np.matmul(g, w.transpose())
            dw = np.matmul(x.transpose(), g)
            return dx, dw

        return op(x @ w, (self, other), backward)

    def exp(self) -> Tensor:
        out = np.exp(self.data)

        def backward(g):
            return (out * g,)

        return op(out, (self,), backward)

    def log(self) -> Tensor:
        x = self.data

        def backward(g):
            return (g * (1.0 / x),)

        return op(np.log(x), (self,), backward)

    def relu(self) -> Tensor:
        x = self.data

        def backward(g):
            return (np.where(x > 0, g, 0.0),)

        return op(np.maximum(x, 0.0), (self,), backward)

    def tanh(self) -> Tensor:
        out = np.tanh(self.data)

        def backward(g):
            return (g - g * out * out,)

        return op(out, (self,), backward)

    def sigmoid(self) -> Tensor:
        out = 0.5 * (1.0 + np.tanh(0.5 * self.data))  # 1 / (1 + exp(-x)), without overflow

        def backward(g):
            return (g * (out - out * out),)

        return op(out, (self,), backward)

    # ----- reductions and shapes -----
    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        shape = self.shape

        def backward(g):
            g = _keep_reduced_axes(g, shape, axis, keepdims)
            return (g * np.ones(shape),)

        return op(self.data.sum(axis=axis, keepdims=keepdims), (self,), backward)

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        shape, out = self.shape, self.data.mean(axis=axis, keepdims=keepdims)
        count = self.data.size // max(np.size(out), 1)

        def backward(g):
            g = _keep_reduced_axes(g, shape, axis, keepdims)
            return (np.ones(shape) * (g / count),)

        return op(out, (self,), backward)

    def square_mean(self) -> Tensor:
        x = self.data

        def backward(g):
            n = x.size
            return ((2.0 / n) * x * g,)

        return op(np.mean(x**2), (self,), backward)

    def reshape(self, *shape) -> Tensor:
        old = self.shape

        def backward(g):
            return (np.reshape(g, old),)

        return op(self.data.reshape(*shape), (self,), backward)

    @property
    def T(self) -> Tensor:
        def backward(g):
            return (np.transpose(g),)

        return op(self.data.T, (self,), backward)

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """Backpropagate from this tensor into the ``.grad`` of every leaf (Kahn's algorithm)."""
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = np.ones(self.shape)
        if isinstance(grad, Tensor):
            grad = grad.data
        grad = np.array(grad, dtype=np.float64)
        if grad.shape != self.shape:
            raise ValueError(f"grad shape {grad.shape} does not match output shape {self.shape}")

        # pass 1: how many consumers (inside this graph) does each node have?
        consumers = {id(self): 0}
        todo = [self]
        while todo:
            node = todo.pop()
            for parent in node._parents:
                if not parent.requires_grad:
                    continue
                if id(parent) not in consumers:
                    consumers[id(parent)] = 0
                    todo.append(parent)
                consumers[id(parent)] += 1

        # pass 2: a node is ready once every consumer has handed over its share
        pending = {id(self): grad}
        ready = [self]
        while ready:
            node = ready.pop()
            g = pending.pop(id(node))
            if not node._parents:
                node.grad = np.array(g if node.grad is None else node.grad + g, dtype=np.float64)
                continue
            for parent, share in zip(node._parents, node._backward(g)):
                if not parent.requires_grad:
                    continue
                key = id(parent)
                pending[key] = share if key not in pending else pending[key] + share
                consumers[key] -= 1
                if consumers[key] == 0:
                    ready.append(parent)


def _keep_reduced_axes(g, shape, axis, keepdims) -> np.ndarray:
    """Given: put back the axes a reduction removed, as size 1, so g broadcasts to shape."""
    g = np.asarray(g, dtype=np.float64)
    if keepdims or axis is None and g.ndim == len(shape):
        return g
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return np.expand_dims(g, tuple(a % len(shape) for a in axes))
