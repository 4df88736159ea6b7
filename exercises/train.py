"""The training loop (task 5): one epoch, evaluation, clipping, fit with checkpoints."""

from __future__ import annotations

import os

import numpy as np

from .tensor import no_grad


def train_epoch(model, loader, optimizer, loss_fn, *, accumulate: int = 1, clip_norm: float | None = None) -> float:
    """One pass over ``loader`` in training mode; returns the mean batch loss.

    For each batch: loss = loss_fn(model(xb), yb); (loss / accumulate).backward().
    Clear gradients before the first backward of each group of ``accumulate``
    batches; after each full group and after the last batch, clip (when
    ``clip_norm`` is set) and step. Record ``loss.item()`` (a float, before the
    division), never the Tensor, so no graph outlives its batch.
    """
    raise NotImplementedError("Task 5.1: train_epoch")


def _step(model, optimizer, clip_norm) -> None:
    """Given: clip when asked, step, and clear the gradients for the next group."""
    if clip_norm is not None:
        clip_grad_norm(model.parameters(), clip_norm)
    optimizer.step()
    optimizer.zero_grad()


def evaluate(model, loader, loss_fn) -> float:
    """Mean batch loss in eval mode under ``no_grad()``; the model's mode is
    restored afterwards (as it was: training or not), also on an exception."""
    raise NotImplementedError("Task 5.2: evaluate")


def clip_grad_norm(params, max_norm: float) -> float:
    """As ``torch.nn.utils.clip_grad_norm_``: total = sqrt(sum of every squared
    gradient entry) over parameters whose grad is not None; multiply each of
    those grads in place by min(1, max_norm / (total + 1e-6)); return total."""
    raise NotImplementedError("Task 5.3: clip_grad_norm")


def fit(model, train_loader, optimizer, loss_fn, epochs: int, *, val_loader=None, accumulate: int = 1,
        clip_norm: float | None = None, checkpoint: str | os.PathLike | None = None) -> dict:
    """Train for ``epochs`` epochs in all; returns {"train_loss": [...], "val_loss": [...]}.

    After each epoch append train_epoch's loss and, with a ``val_loader``,
    evaluate's. With ``checkpoint``: resume from that file when it exists
    (``_load_checkpoint``), and save after every epoch (``_save_checkpoint``).
    """
    raise NotImplementedError("Task 5.4: fit")


def _save_checkpoint(path, model, optimizer, epoch: int, history: dict) -> None:
    """Write the model's and optimizer's state dicts, the epoch count and the
    history to exactly ``path`` with ``np.savez`` (no pickle): prefix the keys
    ("model.", "optim."), and save through an open file so no ".npz" is added.
    Writing a temporary file and ``os.replace``-ing it keeps the old
    checkpoint whole if the run dies mid-write."""
    raise NotImplementedError("Task 5.5: save a checkpoint")


def _load_checkpoint(path, model, optimizer) -> tuple[int, dict]:
    """Restore model and optimizer from ``path``; return (epochs done, history).
    A checkpoint is data: load it with ``allow_pickle=False``, so that a
    crafted file cannot run code when it is read."""
    raise NotImplementedError("Task 5.5: load a checkpoint")
