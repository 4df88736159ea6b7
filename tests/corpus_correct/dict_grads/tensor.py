"""A tiny autograd engine over numpy: the lesson's Tensor.

Solved with a gradient table: backward() keeps every node's gradient in a
dict keyed by id(node) while it walks, and at the end hands each node its
total, so intermediate tensors keep a .grad too (handy for debugging).
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
    mode_before = is_grad_enabled()
    try:
        _grad_enabled = False
        yield
    finally:
        _grad_enabled = mode_before


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape``."""
    grad = np.asarray(grad, dtype=np.float64)
    lead = grad.ndim - len(shape)
    if lead > 0:
        grad = grad.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] > 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return np.asarray(grad).reshape(shape)


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

        def backward(upstream):
            return unbroadcast(upstream, x.shape), unbroadcast(upstream, y.shape)

        return op(x + y, (self, other), backward)

    def __radd__(self, other) -> Tensor:
        return _as_tensor(other) + self

    def __neg__(self) -> Tensor:
        def backward(upstream):
            return (np.negative(upstream),)

        return op(-self.data, (self,), backward)

    def __sub__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(upstream):
            return unbroadcast(upstream, x.shape), -unbroadcast(upstream, y.shape)

        return op(x - y, (self, other), backward)

    def __rsub__(self, other) -> Tensor:
        return _as_tensor(other) - self

    def __mul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(upstream):
            return unbroadcast(np.multiply(upstream, y), x.shape), unbroadcast(np.multiply(upstream, x), y.shape)

        return op(x * y, (self, other), backward)

    def __rmul__(self, other) -> Tensor:
        return _as_tensor(other) * self

    def __truediv__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(upstream):
            q = upstream / y
            return unbroadcast(q, x.shape), unbroadcast(-q * x / y, y.shape)

        return op(x / y, (self, other), backward)

    def __rtruediv__(self, other) -> Tensor:
        return _as_tensor(other) / self

    def __pow__(self, p: float) -> Tensor:
        x = self.data

        def backward(upstream):
            return (upstream * (p * x ** (p - 1.0)),)

        return op(x**p, (self,), backward)

    def __matmul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, w = self.data, other.data

        def backward(upstream):
            return upstream @ w.T, x.T @ upstream

        return op(x @ w, (self, other), backward)

    def exp(self) -> Tensor:
        out = np.exp(self.data)

        def backward(upstream):
            return (upstream * out,)

        return op(out, (self,), backward)

    def log(self) -> Tensor:
        x = self.data

        def backward(upstream):
            return (np.divide(upstream, x),)

        return op(np.log(x), (self,), backward)

    def relu(self) -> Tensor:
        x = self.data

        def backward(upstream):
            mask = (x > 0).astype(np.float64)
            return (upstream * mask,)

        return op(np.maximum(x, 0.0), (self,), backward)

    def tanh(self) -> Tensor:
        out = np.tanh(self.data)

        def backward(upstream):
            return (upstream * (1.0 - np.square(out)),)

        return op(out, (self,), backward)

    def sigmoid(self) -> Tensor:
        out = 0.5 * (1.0 + np.tanh(0.5 * self.data))  # 1 / (1 + exp(-x)), without overflow

        def backward(upstream):
            return (upstream * out * (1.0 - out),)

        return op(out, (self,), backward)

    # ----- reductions and shapes -----
    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        shape = self.shape

        def backward(upstream):
            return (np.broadcast_to(_keep_reduced_axes(upstream, shape, axis, keepdims), shape).copy(),)

        return op(self.data.sum(axis=axis, keepdims=keepdims), (self,), backward)

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        shape, out = self.shape, self.data.mean(axis=axis, keepdims=keepdims)
        count = self.data.size // max(np.size(out), 1)

        def backward(upstream):
            spread = np.broadcast_to(_keep_reduced_axes(upstream, shape, axis, keepdims), shape)
            return (spread * (1.0 / count),)

        return op(out, (self,), backward)

    def square_mean(self) -> Tensor:
        x = self.data

        def backward(upstream):
            return (upstream * x * (2.0 / x.size),)

        return op(np.mean(x**2), (self,), backward)

    def reshape(self, *shape) -> Tensor:
        old = self.shape

        def backward(upstream):
            return (upstream.reshape(old),)

        return op(self.data.reshape(*shape), (self,), backward)

    @property
    def T(self) -> Tensor:
        def backward(upstream):
            return (upstream.transpose(),)

        return op(self.data.T, (self,), backward)

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """Backpropagate from this tensor into the ``.grad`` of every leaf."""
        if not self.requires_grad:
            raise RuntimeError("this tensor does not require grad, so there is nothing to backpropagate")
        if grad is None:
            if self.data.size > 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = np.ones_like(self.data)
        grad = np.asarray(getattr(grad, "data", grad), dtype=np.float64)
        if grad.shape != self.data.shape:
            raise ValueError(f"expected a grad of shape {self.data.shape}, got {grad.shape}")

        table = {id(self): grad}
        order = _reverse_topological_order(self)
        for node in order:
            if node._parents:
                for parent, part in zip(node._parents, node._backward(table[id(node)])):
                    if parent.requires_grad:
                        table[id(parent)] = table[id(parent)] + part if id(parent) in table else part
        for node in order:
            total = table[id(node)]
            if node._parents:
                node.grad = total  # intermediate: this pass's gradient only
            elif node.grad is None:
                node.grad = np.array(total, dtype=np.float64)
            else:
                node.grad = np.asarray(node.grad + total)  # leaf: accumulate (numpy's 0-d sums are scalars)


def _reverse_topological_order(root: Tensor) -> list[Tensor]:
    """Every node that requires grad, each one after all of its users.

    Iterative DFS that pushes a node twice: once to open it (push its parents)
    and once, underneath them, to close it (emit it after all its parents).
    """
    emitted, opened = [], set()
    stack = [(root, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            emitted.append(node)
            continue
        if id(node) in opened:
            continue
        opened.add(id(node))
        stack.append((node, True))
        for parent in node._parents:
            if parent.requires_grad and id(parent) not in opened:
                stack.append((parent, False))
    emitted.reverse()
    return emitted


def _keep_reduced_axes(g, shape, axis, keepdims) -> np.ndarray:
    """Given: put back the axes a reduction removed, as size 1, so g broadcasts to shape."""
    g = np.asarray(g, dtype=np.float64)
    if keepdims or axis is None and g.ndim == len(shape):
        return g
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return np.expand_dims(g, tuple(a % len(shape) for a in axes))
