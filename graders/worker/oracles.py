"""The oracles, as the student's code calls them in a worker: functions of the student's API that the judge
answers instead of the worker holding them (the reference's answer, never its code)."""

from __future__ import annotations

import numpy as np

from .verbs import ask_judge


def unbroadcast(grad, shape):
    """``grad`` summed down to ``shape`` by the judge: the student's rules of 1.2 and 1.3 call this in place of
    their own unbroadcast, so a mistake in task 1.1 costs its points once. A gradient of the input's own shape
    needs no sum: a copy of it comes back without a round trip to the judge (the cost rungs of 1.2 and 1.3 time
    the rules with what this costs in the worker)."""
    grad, shape = np.asarray(grad, dtype=np.float64), [int(n) for n in shape]
    if list(grad.shape) == shape:
        return grad.copy()
    return ask_judge("unbroadcast", grad=grad, shape=shape)


def _kind(loss_fn) -> str:
    kind = getattr(loss_fn, "kind", None)
    if kind not in ("mse", "weighted"):
        raise TypeError("train_epoch and evaluate were given a loss_fn other than the one fit was given")
    return kind


def _batches(loader) -> list:
    return [[np.asarray(xb.data, dtype=np.float64), np.asarray(yb.data, dtype=np.float64)] for xb, yb in loader]


def _weights(model) -> list:
    return [np.asarray(p.data, dtype=np.float64) for p in model.parameters()]


def train_epoch(model, loader, optimizer, loss_fn, *, accumulate: int = 1, clip_norm: float | None = None) -> float:
    """One epoch as the judge computes it (with torch), in place of the student's train_epoch while their fit is
    graded, so that a mistake in train_epoch costs task 5.1 only. The model's weights and the optimizer's
    momentum buffers come back from the judge; the gradients are cleared, as after a step."""
    answer = ask_judge("train_epoch", params=_weights(model), state=optimizer.state_dict(),
                       lr=float(optimizer.lr), momentum=float(optimizer.momentum), loss=_kind(loss_fn),
                       batches=_batches(loader), accumulate=int(accumulate),
                       clip_norm=None if clip_norm is None else float(clip_norm))
    model.train()
    for p, value in zip(model.parameters(), answer["params"]):
        p.data[...] = value
        p.grad = None
    optimizer.load_state_dict(answer["state"])
    return answer["loss"]


def evaluate(model, loader, loss_fn) -> float:
    """The mean batch loss as the judge computes it, in place of the student's evaluate while their fit is graded."""
    return ask_judge("evaluate", params=_weights(model), loss=_kind(loss_fn), batches=_batches(loader))
