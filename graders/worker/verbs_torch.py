"""Requests about the PyTorch loop (task 6): fit_torch on a probed model and watched batches.

torch is imported on the first request, not when the worker starts. The probe
model notes its mode, torch's grad mode and the loader being read at each
forward, and every ``.to()`` call; each batch is a torch.Tensor subclass that
notes its own ``.to()`` (and ``.cuda()``, ``.cpu()``) calls. The same request
serves 6.1 (the judge's device, ``device.py``: ``meta``, simulated on the CPU)
and 6.2 (cuda): only the device differs. On the judge's device a tensor left on
the CPU fails as on a GPU, and the probe adds ``DEVICE_SHIFT`` to its output
when its input is there, so a run that moved nothing shows in the numbers.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from . import device as judges_device
from .claims import claim, describe_exception
from .verbs import Serving, module
from .verbs_loop import attach_ballast, history_claim, weighted_loss

# What the probe model adds to the network's output in training mode, while grad mode is on and when it computes on
# the judge's device: small, so that the known mistakes' runs (a loss called with its arguments swapped) stay
# finite, and binary fractions.
TRAINING_SHIFT, GRAD_SHIFT, DEVICE_SHIFT = 0.125, 0.25, 0.0625


def _device_of(args, kwargs) -> str | None:
    """The device a ``.to(...)`` call names, as torch spells it, or None (a dtype only, or a batch the loader
    yielded: ``xb.to(xb)`` "moves" to where the loader's batches sit, which is a move on no device)."""
    import torch

    for value in (kwargs.get("device"), *args):
        if isinstance(value, int) and not isinstance(value, bool):
            return f"cuda:{value}"
        if isinstance(value, (str, torch.device)):
            return str(torch.device(value))
        if isinstance(value, torch.Tensor):
            return None if hasattr(value, "_watch") else str(value.device)
    return None


@functools.cache
def _kit():
    """The watched classes, built once torch is imported."""
    import torch

    class Batch(torch.Tensor):
        """A batch that notes each ``.to()`` (and ``.cuda()``, ``.cpu()``); what it computes is a plain tensor."""

        __torch_function__ = torch._C._disabled_torch_function_impl

        def to(self, *args, **kwargs):
            self._watch["moves"].append([self._number, _device_of(args, kwargs)])
            return super().to(*args, **kwargs)

        def cuda(self, *args, **kwargs):
            self._watch["moves"].append([self._number, "cuda"])
            return super().cuda(*args, **kwargs)

        def cpu(self, *args, **kwargs):
            self._watch["moves"].append([self._number, "cpu"])
            return super().cpu(*args, **kwargs)

    class Batches:
        """A loader over fixed (x, y) slices, yielding fresh Batch pairs every epoch."""

        def __init__(self, pairs, phase, watch):
            self.pairs, self.phase, self.watch, self.passes = pairs, phase, watch, 0

        def __len__(self):
            return len(self.pairs)

        def __iter__(self):
            self.passes += 1
            for index, (x, y) in enumerate(self.pairs):
                self.watch["phase"] = self.phase
                where = f"batch {index + 1} in pass {self.passes} over the {self.phase} loader"
                yield self._batch(x, f"the inputs of {where}"), self._batch(y, f"the targets of {where}")

        def _batch(self, value, label):
            batch = torch.Tensor._make_subclass(Batch, torch.from_numpy(value))
            batch._watch, batch._number = self.watch, len(self.watch["yielded"])
            self.watch["yielded"].append(label)
            return batch

    class Shift(torch.nn.Module):
        """Adds TRAINING_SHIFT in training mode, GRAD_SHIFT while grad mode is on and DEVICE_SHIFT when its input is on
        the judge's device: a child module, so that only a mode set on every module (model.train(), model.eval())
        shows, and shows in the numbers the judge reads."""

        def forward(self, x):
            return x + (TRAINING_SHIFT * bool(self.training) + GRAD_SHIFT * bool(torch.is_grad_enabled())
                        + DEVICE_SHIFT * judges_device.is_on(x))

    class Probe(torch.nn.Module):
        """Runs ``net`` and its ``Shift``, and notes (loader, training?, grad on?) at each forward and each
        ``.to()``."""

        def __init__(self, net, watch):
            super().__init__()
            self.net, self.shift = net, Shift()
            self._watch = watch

        def forward(self, x):
            self._watch["forwards"].append([self._watch["phase"], bool(self.training), torch.is_grad_enabled()])
            return self.shift(self.net(x))

        def to(self, *args, **kwargs):
            self._watch["model_to"].append(_device_of(args, kwargs))
            return super().to(*args, **kwargs)

    return Batches, Probe


class SGD:
    """torch.optim.SGD's arithmetic (no dampening, no weight decay, no Nesterov), without torch.optim:
    building a torch.optim optimizer first imports torch._dynamo, about 2 s. The judge runs the
    reference with this class too, and a test holds it to torch.optim.SGD. ``params``: the parameters, or a
    function that gives the model's current ones (a torch that cannot swap a Parameter's contents in place gives
    a model moved to the judge's device new Parameter objects); the momentum buffers are kept by position."""

    def __init__(self, params, lr, momentum):
        self._params = params if callable(params) else list(params)
        self.lr, self.momentum = lr, momentum
        self.buffers = {}

    @property
    def param_groups(self) -> list[dict]:
        """One group, as torch.optim's, over the parameters as they are now."""
        params = list(self._params()) if callable(self._params) else self._params
        return [{"params": params, "lr": self.lr, "momentum": self.momentum}]

    def zero_grad(self, set_to_none=True):
        """Clear the parameters' grads: set them to None (torch's default) or zero them in place."""
        for p in self.param_groups[0]["params"]:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.detach_().zero_()

    def step(self, closure=None):
        """One step of torch.optim.SGD's update (momentum, no dampening): parameters without a grad are skipped;
        ``closure``, when given, is called first and its loss returned."""
        import torch

        loss = None if closure is None else closure()
        with torch.no_grad():
            for index, p in enumerate(self.param_groups[0]["params"]):
                if p.grad is None:
                    continue
                d_p = p.grad
                if self.momentum:
                    buf = self.buffers.get(index)
                    if buf is None:
                        buf = self.buffers[index] = torch.clone(d_p).detach()
                    else:
                        buf.mul_(self.momentum).add_(d_p)
                    d_p = buf
                p.add_(d_p, alpha=-self.lr)
        return loss


def _weighted_loss(ballast: int = 0):
    """verbs_loop.weighted_loss as a torch Module, as MSELoss is one; with ``ballast``, each loss's graph node holds
    that many bytes (verbs_loop.attach_ballast)."""
    import torch

    class WeightedLoss(torch.nn.Module):
        def forward(self, input, target):
            value = weighted_loss(input, target)
            if ballast:
                attach_ballast(value.grad_fn, ballast)
            return value

    return WeightedLoss()


def _pairs(X, Y, batch_size):
    return [(X[i:i + batch_size], Y[i:i + batch_size]) for i in range(0, len(X), batch_size)]


def fit_torch_watched(package, task, state, X, Y, val, batch_size, lr, momentum, epochs, device, ballast=0):
    """fit_torch of a float64 MLP holding the judge's weights (torch's layout), on ``device``; with ``ballast``, each
    training loss's graph holds that many bytes (the judge reads the worker's memory). On the judge's device what
    fit_torch raised comes back with the notes (which name what it left on the CPU), in place of an error."""
    import torch

    Batches, Probe = _kit()
    watch = {"phase": None, "forwards": [], "model_to": [], "moves": [], "yielded": []}
    hidden = state["0.weight"].shape[0]
    net = torch.nn.Sequential(torch.nn.Linear(1, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)).double()
    net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
    model = Probe(net, watch)
    optimizer = SGD(model.parameters, lr, momentum)
    train = Batches(_pairs(X, Y, batch_size), "training", watch)
    valid = Batches(_pairs(val[0], val[1], batch_size), "validation", watch)
    fit_torch = module(package, "torch_loop").fit_torch
    simulated = device == judges_device.NAME
    notes = {"forwards": watch["forwards"], "model_to": watch["model_to"], "moves": watch["moves"],
             "yielded": watch["yielded"]}
    try:
        with judges_device.simulated() if simulated else contextlib.nullcontext():
            history = fit_torch(model, train, optimizer, _weighted_loss(ballast), epochs, device=device,
                                val_loader=valid)
    except NotImplementedError as error:
        text = str(error)
        if task != "6.1" and text.startswith("Task 6.1"):  # the same function: 6.1's stub is this task's too
            raise NotImplementedError(f"Task {task}" + text[len("Task 6.1"):]) from None
        raise
    except Exception as error:  # noqa: BLE001 - on the judge's device, what was left on the CPU names the mistake
        if not simulated:
            raise
        return {**notes, "raised": describe_exception(error, (Serving.package_root,))}
    params = [claim(p.detach().cpu().numpy()) for p in net.parameters()]
    return {"history": history_claim(history), "params": params, **notes,
            "param_devices": sorted({str(p.device) for p in net.parameters()})}
