"""Stand-ins the loop checks (task 5) run the student's train.py over: a Tensor and an SGD whose arithmetic is
torch's, behind the contract's interface.

The worker of the loop tasks holds no engine, optimizer or DataLoader written in numpy, so nothing in it
answers tasks 1 to 4: an op's forward is a torch function, ``backward()`` is ``torch.autograd.grad`` over
the leaves the output was computed from, and ``SGD.step`` is ``torch.optim.SGD``'s. What train.py sees is
the contract's: ``data`` and ``grad`` are float64 ndarrays (``grad`` None until a backward pass reaches a
leaf, then summed over uses and over calls), ``backward()`` seeds a one-element output with ones,
``no_grad()`` stops recording and ``is_grad_enabled()`` tells the mode. No graph is kept beyond what
torch keeps (``_parents`` is always empty), so these are no use as a numpy answer: they are torch.

Student modules still may not ``import torch`` (docs/contract.md); the worker refuses that import to them
(``worker.main``), while these stand-ins, imported first, use it.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch
from torch.optim.sgd import sgd as sgd_update  # torch.optim's SGD arithmetic, functional

_grad_enabled = [True]


def is_grad_enabled() -> bool:
    """Whether grad mode is on, as the contract's is_grad_enabled() says (no_grad() turns it off)."""
    return _grad_enabled[0]


@contextlib.contextmanager
def no_grad():
    """The contract's no_grad(): nothing computed inside is recorded for backward; the mode before is restored on the
    way out, by an exception too."""
    previous, _grad_enabled[0] = _grad_enabled[0], False
    try:
        yield
    finally:
        _grad_enabled[0] = previous


def op(data, parents=(), backward=None):
    """A new leaf holding ``data``: the stand-in records no graph of its own."""
    return Tensor(data)


def unbroadcast(grad, shape):
    """Refused: the loop checks never need it, and a stand-in engine that had one would answer task 1.1."""
    raise NotImplementedError("the loop checks' stand-in engine has no unbroadcast")


def _input(value) -> tuple[torch.Tensor, dict]:
    """A value as an op's torch input, and the leaves (by the torch tensor standing for each use) it brings."""
    if isinstance(value, Tensor):
        return value._as_input()
    return torch.from_numpy(np.array(value, dtype=np.float64)), {}


def _apply(function, *values) -> Tensor:
    inputs, uses = [], {}
    for value in values:
        tensor, used = _input(value)
        inputs.append(tensor)
        uses.update(used)
    record = _grad_enabled[0] and bool(uses)
    with torch.set_grad_enabled(record):
        out = function(*inputs)
    result = Tensor(out.detach().numpy())
    if record:
        result.requires_grad, result._torch, result._uses = True, out, uses
    return result


def _axes(axis, ndim: int):
    if axis is None:
        return tuple(range(ndim))
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


class Tensor:
    """The contract's Tensor, computed by torch (see the module's docstring)."""

    def __init__(self, data, requires_grad: bool = False, parents=(), backward=None):
        self.data = np.array(data.data if isinstance(data, Tensor) else data, dtype=np.float64)
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self._parents, self._backward = (), None
        self._torch, self._uses = None, {}  # set on results recorded by torch

    def _as_input(self) -> tuple[torch.Tensor, dict]:
        if self._torch is not None:
            return self._torch, self._uses
        leaf = torch.from_numpy(np.ascontiguousarray(self.data))
        if self.requires_grad and _grad_enabled[0]:
            leaf.requires_grad_(True)  # a torch leaf of its own for this use; backward sums over the uses
            return leaf, {id(leaf): (self, leaf)}
        return leaf, {}

    # ----- plain array behaviour -----
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of ``data``, as the contract's Tensor gives it."""
        return self.data.shape

    @property
    def ndim(self) -> int:
        """The number of axes of ``data``."""
        return self.data.ndim

    def item(self) -> float:
        """The value of a one-element tensor as a Python float, how train.py reads a loss."""
        return float(self.data.item())

    def numpy(self) -> np.ndarray:
        """The float64 array the tensor holds (not a copy), as the contract's Tensor gives it."""
        return self.data

    def detach(self) -> Tensor:
        """A new leaf holding the same data, recorded by nothing."""
        return Tensor(self.data)

    def to(self, device) -> Tensor:
        """Itself, for device 'cpu'; any other device raises, as the numpy engine does (these stand-ins stand for
        it)."""
        if str(device) != "cpu":
            raise ValueError(f"this engine runs on numpy only: got device={device!r}, expected 'cpu'")
        return self

    def __repr__(self) -> str:
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({np.array2string(self.data, precision=4)}{flag})"

    # ----- operations -----
    def __add__(self, other):
        return _apply(torch.add, self, other)

    def __radd__(self, other):
        return _apply(torch.add, other, self)

    def __sub__(self, other):
        return _apply(torch.sub, self, other)

    def __rsub__(self, other):
        return _apply(torch.sub, other, self)

    def __neg__(self):
        return _apply(torch.neg, self)

    def __mul__(self, other):
        return _apply(torch.mul, self, other)

    def __rmul__(self, other):
        return _apply(torch.mul, other, self)

    def __truediv__(self, other):
        return _apply(torch.div, self, other)

    def __rtruediv__(self, other):
        return _apply(torch.div, other, self)

    def __pow__(self, p):
        return _apply(lambda x: x ** float(p), self)

    def __matmul__(self, other):
        return _apply(torch.matmul, self, other)

    def exp(self):
        """exp, computed and recorded by torch."""
        return _apply(torch.exp, self)

    def log(self):
        """The natural log, computed and recorded by torch."""
        return _apply(torch.log, self)

    def relu(self):
        """relu, computed and recorded by torch."""
        return _apply(torch.relu, self)

    def tanh(self):
        """tanh, computed and recorded by torch."""
        return _apply(torch.tanh, self)

    def sigmoid(self):
        """The logistic sigmoid, computed and recorded by torch."""
        return _apply(torch.sigmoid, self)

    def sum(self, axis=None, keepdims: bool = False):
        """The sum over ``axis`` (all axes when None), keeping them when ``keepdims``, by torch."""
        return _apply(lambda x: x.sum(dim=_axes(axis, x.ndim), keepdim=keepdims) if x.ndim else x, self)

    def mean(self, axis=None, keepdims: bool = False):
        """The mean over ``axis`` (all axes when None), keeping them when ``keepdims``, by torch."""
        return _apply(lambda x: x.mean(dim=_axes(axis, x.ndim), keepdim=keepdims) if x.ndim else x, self)

    def square_mean(self):
        """The mean of the squares, the contract's square_mean, by torch."""
        return _apply(lambda x: (x * x).mean(), self)

    def reshape(self, *shape):
        """The data in a new shape (given as one tuple or as several numbers), by torch."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return _apply(lambda x: x.reshape(shape), self)

    @property
    def T(self):
        """The tensor with its axes reversed, as numpy's .T, by torch."""
        return _apply(lambda x: x.permute(*reversed(range(x.ndim))), self)

    # ----- the engine -----
    def backward(self, grad=None) -> None:
        """The contract's backward(): the gradient of this output against ``grad`` (ones for a one-element output),
        added to the .grad of every leaf it was computed from, by torch.autograd; the same errors as the contract's for
        a tensor that does not require grad or a grad of the wrong shape."""
        if not self.requires_grad:
            raise RuntimeError("backward() of a tensor that does not require grad")
        if grad is None:
            if self.data.size != 1:
                refused = "grad can be implicitly created only for scalar outputs"  # torch's words for it
                raise RuntimeError(refused)
            seed = np.ones(self.shape)
        else:
            seed = np.array(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)
            if seed.shape != self.shape:
                raise ValueError(f"grad of shape {seed.shape} for an output of shape {self.shape}")
        if self._torch is None:  # a leaf: its own gradient is the seed
            _accumulate(self, seed)
            return
        pairs = list(self._uses.values())
        # <out, seed> differentiated: the same vector-Jacobian product, without the shape check of grad_outputs
        # (which imports sympy, a quarter of a second at the first backward)
        scalar = (self._torch * torch.from_numpy(seed)).sum()
        grads = torch.autograd.grad(scalar, [leaf for _, leaf in pairs], retain_graph=True, allow_unused=True)
        for (tensor, _), g in zip(pairs, grads):
            if g is not None:
                _accumulate(tensor, g.numpy())


def _accumulate(tensor: Tensor, g: np.ndarray) -> None:
    tensor.grad = np.array(g, dtype=np.float64) if tensor.grad is None else np.asarray(tensor.grad + g)


class _TorchOptimizer:
    """An optimizer over the stand-in parameters whose arithmetic is torch.optim's: each step hands torch their
    data (shared, so that it is updated in place) and their grads; ``state_dict()`` holds plain arrays keyed
    ``<name>.<index>``."""

    def __init__(self, params, **options):
        self.params = list(params)
        self._tensors = [torch.from_numpy(p.data) for p in self.params]
        self.__dict__.update(options)

    def zero_grad(self) -> None:
        """The torch tensors' grads set to None, as torch's zero_grad(set_to_none=True) does, and so the
        parameters'."""
        for p, tensor in zip(self.params, self._tensors):
            tensor.grad = None
            p.grad = tensor.grad

    def _hand_over(self) -> None:
        """Give torch the parameters' data (shared, followed if an array was replaced) and their grads."""
        for p, tensor in zip(self.params, self._tensors):
            if tensor.data_ptr() != p.data.ctypes.data:
                p.data = np.ascontiguousarray(p.data, dtype=np.float64)
                tensor.set_(torch.from_numpy(p.data))
            tensor.grad = None if p.grad is None else torch.from_numpy(np.array(p.grad, dtype=np.float64))


class SGD(_TorchOptimizer):
    """torch.optim's SGD update (its functional form, ``torch.optim.sgd.sgd``: the class costs a second's imports
    at its first construction), with the momentum buffers kept here."""

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
        self._buffers = [None] * len(self.params)

    def step(self) -> None:
        """One SGD step over the parameters that have a grad, by torch.optim's own update, keeping the momentum
        buffers."""
        self._hand_over()
        have = [i for i, tensor in enumerate(self._tensors) if tensor.grad is not None]
        buffers = [self._buffers[i] for i in have]
        with torch.no_grad():
            sgd_update([self._tensors[i] for i in have], [self._tensors[i].grad for i in have], buffers,
                                weight_decay=self.weight_decay, momentum=self.momentum, lr=self.lr, dampening=0.0,
                                nesterov=False, maximize=False)
        for i, buffer in zip(have, buffers):
            self._buffers[i] = buffer

    def state_dict(self) -> dict[str, np.ndarray]:
        """The momentum buffers as float64 arrays, keyed momentum_buffer.<parameter index>: what a checkpoint saves with
        np.savez."""
        return {f"momentum_buffer.{i}": np.array(b.numpy(), dtype=np.float64)
                for i, b in enumerate(self._buffers) if b is not None}

    def load_state_dict(self, state: dict) -> None:
        """Only what state_dict() writes: momentum_buffer.<i> for a parameter i, of its shape (torch.optim refuses
        a state dict whose keys are not its own, and a momentum buffer of another shape fails its next step)."""
        values = _checked_state(self, state, {"momentum_buffer": False})
        self._buffers = [None] * len(self.params)
        for (_, index), value in values.items():
            self._buffers[index] = torch.tensor(value)


class Adam(_TorchOptimizer):
    """torch.optim.Adam over the stand-in parameters (the loop checks train with SGD; this is for completeness)."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        self._optimizer = torch.optim.Adam(self._tensors, lr=lr, betas=tuple(betas), eps=eps,
                                           weight_decay=weight_decay)

    def step(self) -> None:
        """One Adam step over the parameters, by torch.optim.Adam."""
        self._hand_over()
        self._optimizer.step()

    def state_dict(self) -> dict[str, np.ndarray]:
        """Adam's state as float64 arrays, keyed <name>.<parameter index> (step, exp_avg, exp_avg_sq): what a checkpoint
        saves with np.savez."""
        return {f"{name}.{i}": np.array(value.numpy(), dtype=np.float64)
                for i, tensor in enumerate(self._tensors)
                for name, value in self._optimizer.state.get(tensor, {}).items()}

    def load_state_dict(self, state: dict) -> None:
        """Only what state_dict() writes: step.<i>, exp_avg.<i> and exp_avg_sq.<i>, all three for a parameter i,
        the averages of its shape (torch.optim.Adam's step needs all three, each of its parameter's shape)."""
        values = _checked_state(self, state, {"step": True, "exp_avg": False, "exp_avg_sq": False})
        for index in {i for _, i in values}:
            missing = [name for name in ADAM_STATE if (name, index) not in values]
            if missing:
                raise KeyError(f"the optimizer's state dict holds {', '.join(ADAM_STATE)} for each parameter it "
                               f"steps, but lacks {missing[0]}.{index}")
        self._optimizer.state.clear()
        for (name, index), value in values.items():
            self._optimizer.state[self._tensors[index]][name] = torch.tensor(
                value, dtype=torch.float32 if name == "step" else None)


ADAM_STATE = ("step", "exp_avg", "exp_avg_sq")


def _checked_state(optimizer: _TorchOptimizer, state, names: dict[str, bool]) -> dict[tuple[str, int], np.ndarray]:
    """``state`` as {(name, parameter index): float64 array}, refusing what the torch optimizer would: a key other
    than <name>.<index> for one of ``names`` (True: a 0-d count) and a parameter it has, a value of another shape,
    a value that is not a real number."""
    if not isinstance(state, dict):
        raise TypeError(f"load_state_dict takes a dict, not a {type(state).__name__}")
    own = {f"{name}.{i}": (name, i) for name in names for i in range(len(optimizer.params))}
    values = {}
    for key, value in state.items():
        if key not in own:
            raise KeyError(f"unexpected key {str(key)[:40]!r} in the optimizer's state dict: "
                           f"{type(optimizer).__name__} keeps {', '.join(f'{n}.<i>' for n in names)}, "
                           f"i from 0 to {len(optimizer.params) - 1}")
        name, index = own[key]
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"{key} holds an array of dtype {array.dtype}, expected real numbers")
        shape = () if names[name] else optimizer.params[index].shape
        if array.shape != shape:
            raise ValueError(f"{key} has shape {array.shape}, expected {shape}")
        values[(name, index)] = np.array(array, dtype=np.float64)
    return values
