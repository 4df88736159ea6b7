"""The lesson's tiny autograd engine and training loop.

``torch_loop`` is not imported here, so importing the package never imports torch. The names below are
imported from their module when first used (PEP 562), so that a mistake in one file (a syntax error in
optim.py, say) does not stop the others from importing: the tests of the other tasks still run.
"""

from importlib import import_module

_HOME = {
    "Tensor": "tensor", "op": "tensor", "unbroadcast": "tensor", "no_grad": "tensor", "is_grad_enabled": "tensor",
    "Module": "nn", "Linear": "nn", "ReLU": "nn", "Sequential": "nn", "MSELoss": "nn",
    "SGD": "optim", "Adam": "optim",
    "DataLoader": "data", "make_sine_data": "data",
    "train_epoch": "train", "evaluate": "train", "clip_grad_norm": "train", "fit": "train",
}
__all__ = list(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
