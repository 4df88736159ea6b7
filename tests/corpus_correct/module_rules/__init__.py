"""The lesson's tiny autograd engine and training loop.

``torch_loop`` is not imported here, so importing the package never imports torch.
"""

from .data import DataLoader, make_sine_data
from .nn import Linear, Module, MSELoss, ReLU, Sequential
from .optim import SGD, Adam
from .tensor import Tensor, is_grad_enabled, no_grad, op, unbroadcast
from .train import clip_grad_norm, evaluate, fit, train_epoch

__all__ = [
    "Tensor", "op", "unbroadcast", "no_grad", "is_grad_enabled",
    "Module", "Linear", "ReLU", "Sequential", "MSELoss",
    "SGD", "Adam",
    "DataLoader", "make_sine_data",
    "train_epoch", "evaluate", "clip_grad_norm", "fit",
]
