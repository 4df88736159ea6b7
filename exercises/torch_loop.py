"""The same training loop in PyTorch (task 6), on any device."""

from __future__ import annotations

import torch


def fit_torch(model, loader, optimizer, loss_fn, epochs: int, *, device="cpu", val_loader=None) -> dict:
    """Train a ``torch.nn.Module``; returns {"train_loss": [...], "val_loss": [...]}.

    Move the model to ``device`` once (a string or ``torch.device``) and every
    batch to it. Each epoch: ``model.train()``; per batch zero_grad, forward,
    loss, backward, step, and record ``loss.item()``; append the mean. With a
    ``val_loader``: ``model.eval()`` and ``torch.no_grad()``, append the mean
    validation loss.
    """
    raise NotImplementedError("Task 6.1: fit_torch")
