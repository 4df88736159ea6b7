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
    ### BEGIN SOLUTION (Task 6.1: fit_torch)
    device = torch.device(device)
    model.to(device)
    history = {"train_loss": [], "val_loss": []}
    for _ in range(epochs):
        model.train()
        losses = []
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        history["train_loss"].append(sum(losses) / len(losses))
        if val_loader is not None:
            model.eval()
            with torch.no_grad():
                val = [loss_fn(model(xb.to(device)), yb.to(device)).item() for xb, yb in val_loader]
            history["val_loss"].append(sum(val) / len(val))
    return history
    ### END SOLUTION
