"""Optimizers: SGD (tasks 3.1, 3.2) and Adam (task 3.3), as torch.optim.

Each updates ``p.data`` in place (never rebinds a parameter) and skips
parameters whose ``grad`` is None. ``state_dict()`` holds only plain arrays and
numbers, keyed ``"<name>.<index of the parameter>"``.
"""

from __future__ import annotations

import numpy as np


class Optimizer:
    """Given: holds the parameters and clears their gradients."""

    def __init__(self, params):
        self.params = list(params)
        self.state: dict[str, object] = {}

    def zero_grad(self) -> None:
        """Set every parameter's ``grad`` to None, as PyTorch's default."""
        raise NotImplementedError("Task 3.1: zero_grad")

    def state_dict(self) -> dict[str, object]:
        """A copy of ``self.state``: arrays and numbers only, so ``np.savez`` can store it."""
        return {key: np.copy(value) if np.ndim(value) else value for key, value in self.state.items()}

    def load_state_dict(self, state: dict) -> None:
        """Continue from a ``state_dict()``, also one read back with ``np.load``: whole numbers
        (step counts) come back as ints, everything else as float64 arrays (0-d ones included)."""
        self.state = {key: int(value) if np.issubdtype(np.asarray(value).dtype, np.integer)
                      else np.array(value, dtype=np.float64) for key, value in state.items()}


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD`` (no dampening, no Nesterov)."""

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params)
        if lr < 0:
            raise ValueError(f"got {lr=}, expected lr >= 0")
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay

    def step(self) -> None:
        """For each parameter p with a grad:
        d = grad + weight_decay * p (a new array: p.grad stays as it was);
        with momentum: buf = d on the first step, then buf = momentum * buf + d,
        and d = buf (keep buf, torch's buffer with no lr in it, in
        ``self.state[f"momentum_buffer.{i}"]``); finally p.data -= lr * d, in place."""
        raise NotImplementedError("Task 3.1: SGD step; Task 3.2: momentum and weight decay")


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (L2 weight decay added to the gradient, no AMSGrad)."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        super().__init__(params)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"got {betas=}, expected each beta in [0, 1)")
        self.lr, self.betas, self.eps, self.weight_decay = lr, tuple(betas), eps, weight_decay

    def step(self) -> None:
        """For each parameter p with a grad, with t its own step count (+1 now):
        g = grad + weight_decay * p;  m = b1 * m + (1 - b1) * g;
        v = b2 * v + (1 - b2) * g**2;  m_hat = m / (1 - b1**t);
        v_hat = v / (1 - b2**t);  p.data -= lr * m_hat / (sqrt(v_hat) + eps).
        m and v start at zero; keep t, m, v in ``self.state``."""
        raise NotImplementedError("Task 3.3: Adam")
