"""Requests about the optimizers: the student's SGD or Adam stepping reference Tensors.

The judge sends the starting values and, for every step, one gradient per
parameter (or None); the worker reports each step's ``p.data`` as claims,
whether it is still the array the parameter started with, and each ``p.grad``
after the step (which step() must leave as it was given).
"""

from __future__ import annotations

import io
import numbers

import numpy as np

from .claims import claim
from .verbs import module


def _feed(p, g) -> None:
    """Give ``p`` the gradient ``g`` as a training loop would: written into the grad array it
    already has (as an engine that accumulates in place does), else a new array; None clears it."""
    if g is None:
        p.grad = None
    elif (type(p.grad) is np.ndarray and p.grad.shape == g.shape and p.grad.dtype == np.float64
          and p.grad.flags.writeable and not (isinstance(p.data, np.ndarray) and np.shares_memory(p.grad, p.data))):
        p.grad[...] = g
    else:
        p.grad = g.copy()


def _optimizer(package, kind, hyper, params):
    options = {key: tuple(value) if isinstance(value, list) else value for key, value in hyper.items()}
    return getattr(module(package, "optim"), kind)(params, **options)


def _plain(value) -> bool:
    return isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.dtype != object)


def _through_npz(state) -> dict:
    """``state`` written with np.savez and read back with np.load(allow_pickle=False), as a checkpoint is."""
    try:
        buffer = io.BytesIO()
        np.savez(buffer, **state)
        buffer.seek(0)
        with np.load(buffer, allow_pickle=False) as saved:
            return {"state": {key: saved[key] for key in saved.files}}
    except Exception as error:  # noqa: BLE001 - any failure here is the answer
        entries = [[str(key)[:40], type(value).__name__] for key, value in state.items()
                   if not _plain(value)][:4] if isinstance(state, dict) else None
        return {"error": f"{type(error).__name__}: {error}"[:200], "type": type(state).__name__, "entries": entries}


def optimizer_run(package, kind, hyper, start, grads, save_after=None, zero_grad=False):
    """Step the student's ``kind`` over reference Tensors made from ``start``, once per entry of
    ``grads``. After ``save_after`` steps its state dict goes through np.savez into a new optimizer
    over the same parameters, and its entries are reported. With ``zero_grad``, every parameter then
    gets a grad and zero_grad() is called; the grads it leaves are reported."""
    T = module(package, "tensor")
    params = [T.Tensor(x, requires_grad=True) for x in start]
    arrays = [p.data for p in params]
    optimizer = _optimizer(package, kind, hyper, params)
    answer = {"steps": [], "in_place": [], "grads_after": []}
    for k, step in enumerate(grads):
        if k == save_after:
            saved = _through_npz(optimizer.state_dict())
            if "error" in saved:
                answer["state_error"] = saved
                return answer
            answer["state_keys"] = [str(key)[:40] for key in list(saved["state"])[:20]]
            answer["state"] = {str(key)[:40]: claim(value) for key, value in list(saved["state"].items())[:20]}
            optimizer = _optimizer(package, kind, hyper, params)
            optimizer.load_state_dict(saved["state"])
        for p, g in zip(params, step):
            _feed(p, g)
        optimizer.step()
        answer["steps"].append([claim(p.data) for p in params])
        answer["in_place"].append([claim(a) for a in arrays])  # whoever holds the first arrays sees the step
        answer["grads_after"].append([claim(p.grad) for p in params])  # as given: torch's step() never changes it
    if zero_grad:
        for p, x in zip(params, start):
            _feed(p, np.ones_like(x))
        optimizer.zero_grad()
        answer["grads"] = [claim(p.grad) for p in params]
    return answer
