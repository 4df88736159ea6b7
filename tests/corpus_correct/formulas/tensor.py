"""A tiny autograd engine over numpy: the lesson's Tensor.

This one derives its rules my own way (each is an identity away from the
lesson's formula) and returns lists from the rules.
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
    old_mode = _grad_enabled
    _grad_enabled = False
    try:
        yield
    finally:
        _grad_enabled = old_mode


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape``: one np.sum over every stretched axis."""
    grad = np.asarray(grad, dtype=np.float64)
    extra = grad.ndim - len(shape)
    axes = list(range(extra))  # axes numpy added on the left
    axes += [extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1]
    summed = np.sum(grad, axis=tuple(axes), keepdims=True)
    return summed.reshape(shape)


def op(data, parents: Sequence[Tensor], backward: Callable) -> Tensor:
    """Make the result of an op, recording the graph when it is needed (given)."""
    if _grad_enabled and any(p.requires_grad for p in parents):
        return Tensor(data, requires_grad=True, parents=tuple(parents), backward=backward)
    return Tensor(data)


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)


def _spread(g, shape, axis, keepdims):
    """Undo a reduction's shape: put the reduced axes back as size 1, then copy g along them."""
    g = np.asarray(g, dtype=np.float64)
    if axis is not None and not keepdims:
        axes = axis if isinstance(axis, tuple) else (axis,)
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    return g * np.ones(shape)


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
        if not isinstance(other, Tensor):  # a constant: record only self, it is the only one to get a gradient
            x = self.data
            return op(x + other, (self,), lambda g: [unbroadcast(g, x.shape)])
        x, y = self.data, other.data

        def backward(g):
            return [unbroadcast(g, x.shape), unbroadcast(g, y.shape)]

        return op(x + y, (self, other), backward)

    def __radd__(self, other) -> Tensor:
        return _as_tensor(other) + self

    def __neg__(self) -> Tensor:
        def backward(g):
            return [0.0 - g]

        return op(-self.data, (self,), backward)

    def __sub__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            return [unbroadcast(g, x.shape), unbroadcast(0.0 - g, y.shape)]

        return op(x - y, (self, other), backward)

    def __rsub__(self, other) -> Tensor:
        return _as_tensor(other) - self

    def __mul__(self, other) -> Tensor:
        if not isinstance(other, Tensor):  # a constant factor c: d(c * x)/dx = c
            x = self.data
            return op(x * other, (self,), lambda g: [unbroadcast(g * other, x.shape)])
        x, y = self.data, other.data

        def backward(g):
            return [unbroadcast(g * y, x.shape), unbroadcast(x * g, y.shape)]

        return op(x * y, (self, other), backward)

    def __rmul__(self, other) -> Tensor:
        return _as_tensor(other) * self

    def __truediv__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data
        out = x / y

        def backward(g):
            # d(x/y)/dy = -x/y**2 = -out/y
            return [unbroadcast(g / y, x.shape), unbroadcast(-g * out / y, y.shape)]

        return op(out, (self, other), backward)

    def __rtruediv__(self, other) -> Tensor:
        return _as_tensor(other) / self

    def __pow__(self, p: float) -> Tensor:
        x = self.data
        out = x**p

        def backward(g):
            # p * x**(p-1) = p * out / x, except at x = 0 where out / x is 0/0
            with np.errstate(divide="ignore", invalid="ignore"):
                slope = np.where(x == 0, p * np.power(x, p - 1), p * out / np.where(x == 0, 1.0, x))
            return [g * slope]

        return op(out, (self,), backward)

    def __matmul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, w = self.data, other.data

        def backward(g):
            # (w @ g.T).T == g @ w.T
            return [(w @ g.T).T, (g.T @ x).T]

        return op(x @ w, (self, other), backward)

    def exp(self) -> Tensor:
        out = np.exp(self.data)

        def backward(g):
            return [g * np.exp(self.data)]

        return op(out, (self,), backward)

    def log(self) -> Tensor:
        x = self.data

        def backward(g):
            return [g * np.reciprocal(x)]

        return op(np.log(x), (self,), backward)

    def relu(self) -> Tensor:
        x = self.data

        def backward(g):
            return [g * np.heaviside(x, 0.0)]

        return op(np.maximum(x, 0.0), (self,), backward)

    def tanh(self) -> Tensor:
        out = np.tanh(self.data)

        def backward(g):
            # d tanh = sech**2 = 1 / cosh**2
            with np.errstate(over="ignore"):
                return [g / np.cosh(self.data) ** 2]

        return op(out, (self,), backward)

    def sigmoid(self) -> Tensor:
        out = 0.5 * (1.0 + np.tanh(0.5 * self.data))  # 1 / (1 + exp(-x)), without overflow

        def backward(g):
            # s'(x) = e^-x / (1 + e^-x)**2; clip so e^-x cannot overflow (s' is ~0 out there anyway)
            e = np.exp(-np.clip(self.data, -300.0, 300.0))
            return [g * e / (1.0 + e) ** 2]

        return op(out, (self,), backward)

    # ----- reductions and shapes -----
    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        shape = self.shape

        def backward(g):
            return [_spread(g, shape, axis, keepdims)]

        return op(self.data.sum(axis=axis, keepdims=keepdims), (self,), backward)

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        shape, out = self.shape, self.data.mean(axis=axis, keepdims=keepdims)

        def backward(g):
            # mean = sum / n, n = how many inputs went into each output
            n = self.data.size / np.size(out)
            return [_spread(g, shape, axis, keepdims) / n]

        return op(out, (self,), backward)

    def square_mean(self) -> Tensor:
        x = self.data

        def backward(g):
            return [(x + x) * g / np.size(x)]

        return op(np.mean(x**2), (self,), backward)

    def reshape(self, *shape) -> Tensor:
        old = self.shape

        def backward(g):
            return [np.reshape(g, old)]

        return op(self.data.reshape(*shape), (self,), backward)

    @property
    def T(self) -> Tensor:
        def backward(g):
            return [np.transpose(g, tuple(reversed(range(np.ndim(g)))))]

        return op(self.data.T, (self,), backward)

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """Backpropagate from this tensor into the ``.grad`` of every leaf."""
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad")
        if grad is None and np.size(self.data) != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        seed = np.ones(self.shape) if grad is None else np.array(getattr(grad, "data", grad), dtype=np.float64)
        if seed.shape != self.shape:
            raise ValueError(f"grad must have shape {self.shape}, got {seed.shape}")

        grads = {id(self): seed}
        for node in _users_first(self):
            g = grads.pop(id(node))
            if not node._parents:
                node.grad = np.asarray(g + 0.0 if node.grad is None else node.grad + g)
                continue
            for parent, d in zip(node._parents, node._backward(g)):
                if parent.requires_grad:
                    grads[id(parent)] = grads.get(id(parent), 0.0) + d


def _users_first(root: Tensor) -> list[Tensor]:
    """A topological order, users before the nodes they use.

    Look at the top of the stack: if some of its parents are not finished,
    push them; otherwise it is finished. Finished nodes come out in an order
    where parents precede users, which I reverse.
    """
    finished, done = [], set()
    stack = [root]
    while stack:
        node = stack[-1]
        if id(node) in done:
            stack.pop()
            continue
        todo = [p for p in node._parents if p.requires_grad and id(p) not in done]
        if todo:
            stack.extend(todo)
        else:
            stack.pop()
            done.add(id(node))
            finished.append(node)
    return finished[::-1]
