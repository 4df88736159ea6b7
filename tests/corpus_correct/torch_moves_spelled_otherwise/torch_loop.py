"""fit_torch, moving to the device every other honest way."""

from __future__ import annotations

import torch


def fit_torch(model, loader, optimizer, loss_fn, epochs: int, *, device="cpu", val_loader=None) -> dict:
    model = model.to(device=device, non_blocking=True)
    dev = next(model.parameters()).device
    history = {"train_loss": [], "val_loss": []}
    for _ in range(epochs):
        model.train(True)
        total, count = 0.0, 0
        for xb, yb in loader:
            xb, yb = xb.to(dev, non_blocking=True), yb.to(device=dev)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += float(loss)
            count += 1
        history["train_loss"].append(total / count)
        if val_loader is not None:
            model.train(False)
            summed, batches = torch.zeros((), dtype=torch.float64, device=dev), 0
            with torch.inference_mode():
                for xb, yb in val_loader:
                    summed += loss_fn(model(xb.to(dev)), yb.to(dev))
                    batches += 1
            history["val_loss"].append((summed / batches).item())
    return history
