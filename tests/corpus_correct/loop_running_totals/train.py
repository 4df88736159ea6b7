"""The training loop, with running totals of floats."""

from __future__ import annotations

import os

import numpy as np

from .tensor import no_grad


def train_epoch(model, loader, optimizer, loss_fn, *, accumulate: int = 1, clip_norm: float | None = None) -> float:
    model.train()
    total, batches = 0.0, 0
    for index, (xb, yb) in enumerate(loader):
        if index % accumulate == 0:
            if index:
                _clip_and_step(model, optimizer, clip_norm)
            optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        (loss / accumulate).backward()
        total += loss.item()
        batches += 1
    if batches:
        _clip_and_step(model, optimizer, clip_norm)
    optimizer.zero_grad()
    return total / batches


def _clip_and_step(model, optimizer, clip_norm) -> None:
    if clip_norm is not None:
        clip_grad_norm(model.parameters(), clip_norm)
    optimizer.step()


def evaluate(model, loader, loss_fn) -> float:
    previous = model.training
    model.eval()
    total, batches = 0.0, 0
    try:
        with no_grad():
            for xb, yb in loader:
                total += float(loss_fn(model(xb), yb).data)
                batches += 1
    finally:
        model.train(previous)
    return total / batches


def _step(model, optimizer, clip_norm) -> None:
    _clip_and_step(model, optimizer, clip_norm)
    optimizer.zero_grad()


def clip_grad_norm(params, max_norm: float) -> float:
    """As ``torch.nn.utils.clip_grad_norm_``: total = sqrt(sum of every squared
    gradient entry) over parameters whose grad is not None; multiply each of
    those grads in place by min(1, max_norm / (total + 1e-6)); return total."""
    grads = [p.grad for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(g * g) for g in grads)))
    scale = min(1.0, max_norm / (total + 1e-6))
    for g in grads:
        g *= scale
    return total


def fit(model, train_loader, optimizer, loss_fn, epochs: int, *, val_loader=None, accumulate: int = 1,
        clip_norm: float | None = None, checkpoint: str | os.PathLike | None = None) -> dict:
    """Train for ``epochs`` epochs in all; returns {"train_loss": [...], "val_loss": [...]}.

    After each epoch append train_epoch's loss and, with a ``val_loader``,
    evaluate's. With ``checkpoint``: resume from that file when it exists
    (``_load_checkpoint``), and save after every epoch (``_save_checkpoint``).
    """
    history = {"train_loss": [], "val_loss": []}
    done = 0
    if checkpoint is not None and os.path.exists(checkpoint):
        done, history = _load_checkpoint(checkpoint, model, optimizer)
    for epoch in range(done, epochs):
        history["train_loss"].append(train_epoch(model, train_loader, optimizer, loss_fn,
                                                 accumulate=accumulate, clip_norm=clip_norm))
        if val_loader is not None:
            history["val_loss"].append(evaluate(model, val_loader, loss_fn))
        if checkpoint is not None:
            _save_checkpoint(checkpoint, model, optimizer, epoch + 1, history)
    return history


def _save_checkpoint(path, model, optimizer, epoch: int, history: dict) -> None:
    """Write the model's and optimizer's state dicts, the epoch count and the
    history to exactly ``path`` with ``np.savez`` (no pickle): prefix the keys
    ("model.", "optim."), and save through an open file so no ".npz" is added.
    Writing a temporary file and ``os.replace``-ing it keeps the old
    checkpoint whole if the run dies mid-write."""
    arrays = {f"model.{k}": v for k, v in model.state_dict().items()}
    arrays.update({f"optim.{k}": v for k, v in optimizer.state_dict().items()})
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "wb") as f:
        np.savez(f, epoch=epoch, train_loss=np.array(history["train_loss"], dtype=np.float64),
                 val_loss=np.array(history["val_loss"], dtype=np.float64), **arrays)
    os.replace(tmp, path)


def _load_checkpoint(path, model, optimizer) -> tuple[int, dict]:
    """Restore model and optimizer from ``path``; return (epochs done, history).
    A checkpoint is data: load it with ``allow_pickle=False``, so that a
    crafted file cannot run code when it is read."""
    with np.load(path, allow_pickle=False) as saved:
        model.load_state_dict({k[6:]: saved[k] for k in saved.files if k.startswith("model.")})
        optimizer.load_state_dict({k[6:]: saved[k] for k in saved.files if k.startswith("optim.")})
        history = {"train_loss": saved["train_loss"].tolist(), "val_loss": saved["val_loss"].tolist()}
        return int(saved["epoch"]), history
