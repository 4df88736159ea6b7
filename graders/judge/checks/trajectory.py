"""Expected values of the loop tasks (5 and 6), computed with torch in float64.

A ``Run`` is a ReLU network given as its weights, trained by torch.optim's SGD update (its functional
form, ``torch.optim.sgd.sgd``) on gradients from ``torch.autograd`` and clipped by
``torch.nn.utils.clip_grad_norm_``: what docs/contract.md asks of ``train_epoch``, ``evaluate`` and ``fit``,
written over torch. Its options model the known mistakes the messages name (a step that never clears
the gradients, a loss not divided by ``accumulate``, ...). The judge also answers the worker's
``train_epoch`` and ``evaluate`` with it while a student's ``fit`` is graded, in a helper process of its own
(graders.judge.oracles), so that fit is graded on its own.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.optim.sgd import sgd as sgd_update  # torch.optim's SGD arithmetic, functional


def weighted_loss(pred, target):
    """The weighted loss graders/messages/loop.py's LOSS_WEIGHTED defines, on torch tensors; the worker computes its own
    (graders/worker/verbs_loop.py): the judge and the worker share no code, and tests/test_checks_loop.py holds
    both to that text."""
    return ((pred - target) ** 2 * (target * target + 1.0)).mean()


def mse(pred, target):
    """The mean squared error on torch tensors, the loss the loop checks use unless they ask for the weighted one."""
    diff = pred - target
    return (diff * diff).mean()


LOSSES = {"mse": mse, "weighted": weighted_loss}


def mean_loss(losses: list[float], batches, by_examples: bool = False) -> float:
    """The mean of the batch losses, as the contract asks; ``by_examples``: each weighted by its batch's size (the mean
    over the examples), a known mistake."""
    if by_examples:
        return float(np.average(losses, weights=[len(x) for x, _ in batches]))
    return float(np.mean(losses))


class Run:
    """A network of Linear layers with ReLU between them: ``x @ W + b`` per layer (``layout="lesson"``, the
    contract's Linear) or ``x @ W.T + b`` (``layout="torch"``, torch.nn.Linear's)."""

    def __init__(self, weights, *, lr: float, momentum: float, layout: str = "lesson", device: str = "cpu",
                 state: dict | None = None, grads: float | None = None, offset: float = 0.0,
                 eval_offset: float | None = None):
        self.device, self.layout = device, layout
        # added to the output: the probe models of 5.1-5.3 and 6.x add one by the modes they run in; evaluate's
        # forwards add ``eval_offset`` (when given), the modes of a validation pass
        self.offset, self.eval_offset = offset, offset if eval_offset is None else eval_offset
        self.params = [torch.tensor(np.asarray(w, dtype=np.float64), device=device, requires_grad=True)
                       for w in weights]
        self.lr, self.momentum = lr, momentum
        self.buffers = [None] * len(self.params)  # the momentum buffers, as torch.optim.SGD keeps them
        self.clears = 0  # how many times the gradients were cleared (or, in a modelled mistake, were not)
        if state:
            self.load_state(state)
        if grads is not None:  # gradients left over from before (train_epoch must clear them)
            for p in self.params:
                p.grad = torch.full_like(p, grads)

    def forward(self, x: torch.Tensor, offset: float | None = None) -> torch.Tensor:
        """The network's output on ``x``, plus the offset the probe model adds in the modes it models (``offset``, or
        this run's)."""
        for i in range(0, len(self.params), 2):
            if i:
                x = x.relu()
            W, b = self.params[i], self.params[i + 1]
            x = x @ (W.T if self.layout == "torch" else W) + b
        offset = self.offset if offset is None else offset
        return x + offset if offset else x

    def _tensor(self, array) -> torch.Tensor:
        return torch.as_tensor(np.asarray(array, dtype=np.float64), device=self.device)

    def _loss(self, loss: str, pred, target, swapped: bool):
        return LOSSES[loss](target, pred) if swapped else LOSSES[loss](pred, target)

    def _clear(self, zero_grad: str, start: bool = False) -> None:
        """Clear the gradients, or, modelling a mistake, don't: "never", "late" (not the first time), or "epoch"
        (only as an epoch starts, ``start``)."""
        self.clears += 1
        if zero_grad == "each" or (zero_grad == "late" and self.clears > 1) or (zero_grad == "epoch" and start):
            for p in self.params:  # torch's zero_grad(set_to_none=True), without its first call's torch._dynamo import
                p.grad = None

    def epoch(self, batches, loss: str = "mse", *, accumulate: int = 1, clip_norm: float | None = None,
              zero_grad: str = "each", scale: float = 1.0, swapped: bool = False, by_examples: bool = False) -> float:
        """One pass over ``batches`` ((x, y) arrays); the mean of the batch losses (``by_examples``: weighted by the
        batches' sizes, a known mistake)."""
        losses, pending = [], 0
        self._clear(zero_grad, start=True)
        for x, y in batches:
            value = self._loss(loss, self.forward(self._tensor(x)), self._tensor(y), swapped)
            if scale != 1.0:
                value = value * scale
            (value / accumulate).backward()
            losses.append(value.item())
            pending += 1
            if pending == accumulate or len(losses) == len(batches):
                if clip_norm is not None:
                    torch.nn.utils.clip_grad_norm_(self.params, clip_norm)
                self.step()
                self._clear(zero_grad)
                pending = 0
        return mean_loss(losses, batches, by_examples)

    def step(self) -> None:
        """torch.optim's SGD update of every parameter with a grad (the class costs a second's imports at its first
        construction; its step calls this same function)."""
        have = [i for i, p in enumerate(self.params) if p.grad is not None]
        buffers = [self.buffers[i] for i in have]
        with torch.no_grad():
            sgd_update([self.params[i] for i in have], [self.params[i].grad for i in have], buffers,
                                weight_decay=0.0, momentum=self.momentum, lr=self.lr, dampening=0.0,
                                nesterov=False, maximize=False)
        for i, buffer in zip(have, buffers):
            self.buffers[i] = buffer

    def forget_state(self) -> None:
        """A fresh optimizer over the same weights: no momentum buffers."""
        self.buffers = [None] * len(self.params)

    def evaluate(self, batches, loss: str = "mse", *, swapped: bool = False, by_examples: bool = False) -> float:
        """The mean loss over ``batches`` under no_grad, with evaluate's offset: what the contract's evaluate returns
        (``swapped``: loss_fn(target, prediction), and ``by_examples``: weighted by the batches' sizes, known
        mistakes)."""
        with torch.no_grad():
            values = [self._loss(loss, self.forward(self._tensor(x), self.eval_offset), self._tensor(y),
                                 swapped).item()
                      for x, y in batches]
        return mean_loss(values, batches, by_examples)

    def fit(self, epochs_of_batches, loss: str = "mse", *, val=None, **options) -> dict[str, list[float]]:
        """One epoch per item of ``epochs_of_batches``, then evaluate on ``val`` (batches) when given."""
        history = {key: [] for key in ("train_loss", "val_loss")}
        for batches in epochs_of_batches:
            history["train_loss"].append(self.epoch(batches, loss, **options))
            if val is not None:
                history["val_loss"].append(self.evaluate(val, loss, swapped=options.get("swapped", False),
                                                         by_examples=options.get("by_examples", False)))
        return history

    def weights(self) -> list[np.ndarray]:
        """The parameters as float64 arrays on the CPU, to compare with what the worker sends back."""
        return [p.detach().cpu().numpy().copy() for p in self.params]

    def state(self) -> dict[str, np.ndarray]:
        """The momentum buffers, keyed ``momentum_buffer.<index>`` as the worker's stand-in SGD keys them."""
        return {f"momentum_buffer.{i}": b.detach().cpu().numpy().copy()
                for i, b in enumerate(self.buffers) if b is not None}

    def load_state(self, state: dict) -> None:
        """Set the momentum buffers from a state keyed as ``state()`` gives it, as a checkpoint resumes them."""
        for key, value in state.items():
            # a copy (torch.tensor), as the weights are taken: a kept expected value is a read-only array
            self.buffers[int(key.rpartition(".")[2])] = torch.tensor(np.asarray(value, dtype=np.float64),
                                                                     device=self.device)
