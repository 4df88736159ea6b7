"""The judge's device for task 6.1: a device of its choosing on a machine without a GPU, on which a tensor left on
the CPU fails as it does on a GPU.

A tensor on it is a torch.Tensor subclass that reports torch's ``meta`` device and holds a CPU tensor, on which
every op computes, so its values are the CPU's to the last bit. An op that meets one of its tensors and a CPU tensor
of one or more axes raises torch's own error for tensors on two devices (a 0-d CPU tensor may meet it, as a Python
number may, and as on CUDA); a copy between the two (``copy_``) is a move, as on CUDA. While ``simulated()`` holds,
what moves to ``meta`` lands there: ``.to(device)`` in every spelling (``device=``, ``non_blocking=True``, another
tensor's device), ``model.to(device)`` (keeping the model's Parameter objects, as a move to CUDA does), and tensors
made with ``device=`` (``torch.zeros(..., device=device)``, ``torch.tensor(0.0, device=device)``); ``.cpu()`` and
``.to("cpu")`` bring one back. torch is imported when ``simulated()`` is first entered.
"""

from __future__ import annotations

import contextlib
import functools

NAME = "meta"  # the device type its tensors report: the one a CPU-only torch has besides the CPU
# torch's own words for an op given tensors on two devices (at::TensorIterator's check)
MIXED = "Expected all tensors to be on the same device, but found at least two devices, {a} and {b}!"
# Tensor factories whose device= torch resolves without dispatching a copy (torch.tensor copies in C++)
FACTORIES = ("tensor", "as_tensor", "asarray")


def is_on(tensor) -> bool:
    """Whether ``tensor`` is on the judge's device."""
    return getattr(getattr(tensor, "device", None), "type", None) == NAME


@functools.cache
def _kit():
    """The device's tensor class and the two modes that send moves to it, built once torch is imported."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten, tree_map

    aten = torch.ops.aten
    cpu = torch.device("cpu")

    def names(device) -> str | None:
        """The type of the device ``device`` names (a string, a torch.device, an index), or None."""
        if device is None:
            return None
        return torch.device(device).type if isinstance(device, (str, torch.device)) else "cuda"

    class OnDevice(torch.Tensor):
        """A tensor on the judge's device: reports ``meta``, computes on the CPU tensor it holds (``held``)."""

        held: torch.Tensor

        @staticmethod
        def __new__(cls, held, requires_grad=False):
            tensor = torch.Tensor._make_wrapper_subclass(
                cls, held.size(), strides=held.stride(), storage_offset=held.storage_offset(), dtype=held.dtype,
                layout=held.layout, device=torch.device(NAME), requires_grad=requires_grad)
            tensor.held = held
            return tensor

        def __repr__(self, *, tensor_contents=None):
            return f"{self.held!r} on the judge's device ({NAME})"

        def __format__(self, spec):  # f"{loss:.4f}", as a CUDA tensor formats
            return self.held.__format__(spec)

        def tolist(self):
            """Its values as Python numbers, as a CUDA tensor's .tolist() gives them."""
            return self.held.tolist()

        def numpy(self, *, force=False):
            """Refused without ``force``, in torch's words for a CUDA tensor: numpy reads host memory only."""
            if force:
                return self.held.detach().numpy(force=True)
            raise TypeError(f"can't convert {NAME} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return run(func, args, kwargs or {})

    def run(func, args, kwargs):
        """``func`` on the CPU tensors the device's tensors hold; its tensors on the device when an input was, or when
        ``device=`` names it; torch's error for a device's tensor meeting a CPU one."""
        target = names(kwargs.get("device"))
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        ours = [t for t in tensors if isinstance(t, OnDevice)]
        if not ours and target != NAME:
            return func(*args, **kwargs)
        if ours and func not in (aten.copy_.default, aten._to_copy.default):
            if any(not isinstance(t, OnDevice) and t.device.type == "cpu" and t.dim() > 0 for t in tensors):
                raise RuntimeError(MIXED.format(a=NAME, b="cpu"))
        holders = {id(t.held): t for t in ours}
        args, kwargs = tree_map(lambda t: t.held if isinstance(t, OnDevice) else t, (args, kwargs))
        if target == NAME:
            kwargs = {**kwargs, "device": cpu}
        out = func(*args, **kwargs)
        if target == "cpu":
            return out  # moved back: a CPU tensor
        return tree_map(lambda t: on_device(t, holders) if isinstance(t, torch.Tensor) else t, out)

    def on_device(tensor, holders):
        """``tensor``, an op's output, on the device: an input's own tensor where the op returned that input's (in
        place: add_, copy_), else a new one."""
        holder = holders.get(id(tensor))
        return OnDevice(tensor) if holder is None else holder

    class Moves(TorchDispatchMode):
        """Every op below autograd while fit_torch runs: a CPU tensor moved to ``meta`` (``_to_copy``) or made there
        lands on the judge's device."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return run(func, args, kwargs or {})

    class Factories(TorchFunctionMode):
        """torch.tensor(..., device=device) and its siblings, which copy in C++ without dispatching a move."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__name__", None) in FACTORIES and names(kwargs.get("device")) == NAME:
                made = func(*args, **{**kwargs, "device": cpu})
                return OnDevice(made.detach(), requires_grad=made.requires_grad)
            return func(*args, **kwargs)

    return torch, OnDevice, Moves, Factories


@contextlib.contextmanager
def simulated():
    """While inside, moves to ``meta`` land on the judge's device, and a model's move keeps its Parameter objects
    (swapped in place, torch's module conversion for a tensor subclass; a torch without it makes new ones, which the
    judge's optimizer follows)."""
    torch, _, Moves, Factories = _kit()
    swap = getattr(torch.__future__, "set_swap_module_params_on_conversion", None)
    swapped = torch.__future__.get_swap_module_params_on_conversion() if swap else None
    if swap:
        swap(True)
    try:
        with Factories(), Moves():
            yield
    finally:
        if swap:
            swap(swapped)


def warm() -> None:
    """Make one tensor on the device and drop it: torch's first op on a tensor subclass imports what it needs (sympy
    among it: a second of CPU). The torch fork server calls this before its first fork, so that no worker pays it."""
    import torch

    with simulated():
        torch.zeros(1, device=NAME)


def to_cpu(tensor):
    """A tensor on the judge's device as the CPU tensor it holds (any other as it is)."""
    _, OnDevice, _, _ = _kit()
    return tensor.held if isinstance(tensor, OnDevice) else tensor
