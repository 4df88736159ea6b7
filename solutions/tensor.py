"""A tiny autograd engine over numpy: the lesson's Tensor.

Every operation makes a new Tensor that remembers its parents and a backward
rule. The rule takes the gradient of the loss with respect to the result,
``g`` (the upstream gradient, of the result's shape), and returns one gradient
per parent, each of that parent's shape. ``backward()`` walks the recorded
graph from the loss to the leaves and applies the chain rule.

Where this file does not say otherwise it follows PyTorch's semantics.
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
    """Stop recording graphs inside the block, as ``torch.no_grad()``.

    Inside, every op makes a plain leaf (no parents, ``requires_grad=False``).
    Blocks nest, and on exit the mode is what it was before the block, also
    when an exception leaves it. Set the module's ``_grad_enabled`` flag.
    """
    ### BEGIN SOLUTION (Task 2.3: no_grad)
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, False
    try:
        yield
    finally:
        _grad_enabled = previous
    ### END SOLUTION


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The gradient for an input of shape ``shape`` that numpy broadcast up to ``grad``'s shape.

    numpy broadcasting adds leading axes and stretches size-1 axes, so one entry
    of the input is used in many places of the result. Return an array of shape
    ``shape``. Example: grad of shape (4, 2, 3) for an input of shape (2, 1)
    gives an array of shape (2, 1). HINTS.md has hints, if you want them.
    """
    ### BEGIN SOLUTION (Task 1.1: unbroadcast)
    grad = np.asarray(grad, dtype=np.float64)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.reshape(shape)
    ### END SOLUTION


def op(data, parents: Sequence[Tensor], backward: Callable) -> Tensor:
    """Make the result of an op, recording the graph when it is needed (given).

    The result requires grad iff grad mode is on and any parent requires it
    (PyTorch's rule); only then does it keep its parents and backward rule.
    """
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

    # ----- arithmetic: forward given, backward rules are the exercises -----
    def __add__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            """out = x + y (numpy broadcasting). Return (dL/dx, dL/dy), each unbroadcast to its input's shape."""
            ### BEGIN SOLUTION (op add: backward of +)
            return unbroadcast(g, x.shape), unbroadcast(g, y.shape)
            ### END SOLUTION

        return op(x + y, (self, other), backward)

    def __radd__(self, other) -> Tensor:
        return _as_tensor(other) + self

    def __neg__(self) -> Tensor:
        def backward(g):
            """out = -x. Return (dL/dx,)."""
            ### BEGIN SOLUTION (op neg: backward of unary -)
            return (-g,)
            ### END SOLUTION

        return op(-self.data, (self,), backward)

    def __sub__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            """out = x - y (numpy broadcasting). Return (dL/dx, dL/dy), each unbroadcast to its input's shape."""
            ### BEGIN SOLUTION (op sub: backward of -)
            return unbroadcast(g, x.shape), unbroadcast(-g, y.shape)
            ### END SOLUTION

        return op(x - y, (self, other), backward)

    def __rsub__(self, other) -> Tensor:
        return _as_tensor(other) - self

    def __mul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            """out = x * y (numpy broadcasting). Return (dL/dx, dL/dy), each unbroadcast to its input's shape."""
            ### BEGIN SOLUTION (op mul: backward of *)
            return unbroadcast(g * y, x.shape), unbroadcast(g * x, y.shape)
            ### END SOLUTION

        return op(x * y, (self, other), backward)

    def __rmul__(self, other) -> Tensor:
        return _as_tensor(other) * self

    def __truediv__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, y = self.data, other.data

        def backward(g):
            """out = x / y (numpy broadcasting). Return (dL/dx, dL/dy), each unbroadcast to its input's shape."""
            ### BEGIN SOLUTION (op div: backward of /)
            return unbroadcast(g / y, x.shape), unbroadcast(-g * x / y**2, y.shape)
            ### END SOLUTION

        return op(x / y, (self, other), backward)

    def __rtruediv__(self, other) -> Tensor:
        return _as_tensor(other) / self

    def __pow__(self, p: float) -> Tensor:
        x = self.data

        def backward(g):
            """out = x ** p, p a Python number (a constant: it gets no gradient), for x > 0. Return (dL/dx,)."""
            ### BEGIN SOLUTION (op pow: backward of **)
            return (g * p * x ** (p - 1),)
            ### END SOLUTION

        return op(x**p, (self,), backward)

    def __matmul__(self, other) -> Tensor:
        other = _as_tensor(other)
        x, w = self.data, other.data

        def backward(g):
            """out = x @ w, x of shape (n, k) and w of shape (k, m). Return (dL/dx, dL/dw), shaped as x and w."""
            ### BEGIN SOLUTION (op matmul: backward of @)
            return g @ w.T, x.T @ g
            ### END SOLUTION

        return op(x @ w, (self, other), backward)

    def exp(self) -> Tensor:
        out = np.exp(self.data)

        def backward(g):
            """out = exp(x), elementwise. Return (dL/dx,); the forward's ``out`` is at hand."""
            ### BEGIN SOLUTION (op exp: backward of exp)
            return (g * out,)
            ### END SOLUTION

        return op(out, (self,), backward)

    def log(self) -> Tensor:
        x = self.data

        def backward(g):
            """out = log(x), elementwise (x > 0). Return (dL/dx,)."""
            ### BEGIN SOLUTION (op log: backward of log)
            return (g / x,)
            ### END SOLUTION

        return op(np.log(x), (self,), backward)

    def relu(self) -> Tensor:
        x = self.data

        def backward(g):
            """out = max(x, 0), elementwise. Return (dL/dx,); at exactly x = 0 take the slope as 0, as
            PyTorch does."""
            ### BEGIN SOLUTION (op relu: backward of relu)
            return (g * (x > 0),)
            ### END SOLUTION

        return op(np.maximum(x, 0.0), (self,), backward)

    def tanh(self) -> Tensor:
        out = np.tanh(self.data)

        def backward(g):
            """out = tanh(x), elementwise. Return (dL/dx,); the forward's ``out`` is at hand."""
            ### BEGIN SOLUTION (op tanh: backward of tanh)
            return (g * (1.0 - out**2),)
            ### END SOLUTION

        return op(out, (self,), backward)

    def sigmoid(self) -> Tensor:
        e = np.exp(-np.abs(self.data))  # 1 / (1 + exp(-x)), stable for large |x| of either sign
        out = np.where(self.data >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

        def backward(g):
            """out = 1 / (1 + exp(-x)), elementwise. Return (dL/dx,); the forward's ``out`` is at hand."""
            ### BEGIN SOLUTION (op sigmoid: backward of sigmoid)
            return (g * out * (1.0 - out),)
            ### END SOLUTION

        return op(out, (self,), backward)

    # ----- reductions and shapes -----
    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        shape = self.shape

        def backward(g):
            """out = x.sum(axis, keepdims). Return (dL/dx,), of x's shape. The given
            _keep_reduced_axes(g, shape, axis, keepdims) puts the summed axes back as size 1."""
            ### BEGIN SOLUTION (op sum: backward of sum)
            return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape).copy(),)
            ### END SOLUTION

        return op(self.data.sum(axis=axis, keepdims=keepdims), (self,), backward)

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        shape, out = self.shape, self.data.mean(axis=axis, keepdims=keepdims)
        count = self.data.size // max(np.size(out), 1)

        def backward(g):
            """out = x.mean(axis, keepdims): each output averages ``count`` elements of x.
            Return (dL/dx,), of x's shape."""
            ### BEGIN SOLUTION (op mean: backward of mean)
            return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) / count,)
            ### END SOLUTION

        return op(out, (self,), backward)

    def square_mean(self) -> Tensor:
        x = self.data

        def backward(g):
            """out = mean(x**2) over all of x's elements (a 0-d result). Return (dL/dx,)."""
            ### BEGIN SOLUTION (op square_mean: backward of square_mean)
            return (g * 2.0 * x / x.size,)
            ### END SOLUTION

        return op(np.mean(x**2), (self,), backward)

    def reshape(self, *shape) -> Tensor:
        old = self.shape

        def backward(g):
            """out = x.reshape(shape). Return (dL/dx,), of x's shape."""
            ### BEGIN SOLUTION (op reshape: backward of reshape)
            return (g.reshape(old),)
            ### END SOLUTION

        return op(self.data.reshape(*shape), (self,), backward)

    @property
    def T(self) -> Tensor:
        def backward(g):
            """out = x.T (all axes reversed). Return (dL/dx,), of x's shape."""
            ### BEGIN SOLUTION (op T: backward of .T)
            return (g.T,)
            ### END SOLUTION

        return op(self.data.T, (self,), backward)

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """Backpropagate from this tensor into the ``.grad`` of every leaf.

        1. Errors, as PyTorch: ``RuntimeError`` if this tensor does not require
           grad; ``RuntimeError`` if ``grad`` is None and this tensor has more
           than one element (otherwise seed with ones); ``ValueError`` if a
           given ``grad`` does not have this tensor's shape. A given ``grad``
           may be a Tensor (as PyTorch takes it) or anything numpy reads as an
           array (an ndarray, a list, integers): the gradients are float64.
        2. Order the graph so every node comes after all nodes that use it (a
           reverse topological order), iteratively: a chain of 10,000 ops must
           not hit Python's recursion limit.
        3. Walk that order with a dict from node to its gradient: call each
           node's ``_backward(g)`` and add each returned gradient into its
           parent's entry (a tensor used twice gets both contributions).
        4. Add (never assign) into ``.grad`` of every leaf that requires grad,
           so separate backward calls accumulate. A ``.grad`` is an ndarray of
           the leaf's shape, a 0-d one for a 0-d leaf.
        5. Keep the graph: a second backward() through ops an earlier call
           walked adds the sum of both. (PyTorch frees them without
           ``retain_graph`` and raises RuntimeError then, which is allowed;
           silently stopping at a walked node is not.)
        """
        ### BEGIN SOLUTION (Task 2.1: backward, the engine)
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = np.ones_like(self.data)
        grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)
        if grad.shape != self.shape:
            raise ValueError(f"grad has shape {grad.shape}, expected this tensor's shape {self.shape}")

        grads = {id(self): grad}
        for node in _reverse_topological_order(self):
            g = grads.pop(id(node))
            if not node._parents:
                if node.requires_grad:
                    node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)
                continue
            for parent, pg in zip(node._parents, node._backward(g)):
                if parent.requires_grad:
                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg
        ### END SOLUTION


def _reverse_topological_order(root: Tensor) -> list[Tensor]:
    """``root`` and every node it depends on that requires grad, each node
    after all the nodes that use it (so a node's gradient is complete when it
    is reached). Use an explicit stack, not recursion (task 2.4): a
    depth-first search that appends a node once all its parents are done
    gives the opposite order; reverse it at the end."""
    ### BEGIN SOLUTION (Task 2.1: topological order)
    order, visited = [], {id(root)}
    stack = [(root, iter(root._parents))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            if parent.requires_grad and id(parent) not in visited:
                visited.add(id(parent))
                stack.append((parent, iter(parent._parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]
    ### END SOLUTION


def _keep_reduced_axes(g, shape, axis, keepdims) -> np.ndarray:
    """Given: put back the axes a reduction removed, as size 1, so g broadcasts to shape."""
    g = np.asarray(g, dtype=np.float64)
    if keepdims or axis is None and g.ndim == len(shape):
        return g
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return np.expand_dims(g, tuple(a % len(shape) for a in axes))
