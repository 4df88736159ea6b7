"""Layers and a loss on top of the Tensor engine (given complete).

``Linear`` stores ``weight`` as (in_features, out_features) and computes
``x @ weight + bias``, the lesson's convention; PyTorch stores the transpose.
"""

from __future__ import annotations

import numpy as np

from .tensor import Tensor


class Module:
    """Base class: parameters in a fixed order, train/eval mode, state dicts."""

    training = True

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def named_parameters(self, prefix: str = "") -> list[tuple[str, Tensor]]:
        """(name, parameter) pairs, in attribute definition order, submodules included."""
        found = []
        for name, value in vars(self).items():
            if isinstance(value, Tensor) and value.requires_grad:
                found.append((prefix + name, value))
            elif isinstance(value, Module):
                found.extend(value.named_parameters(f"{prefix}{name}."))
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        found.extend(item.named_parameters(f"{prefix}{name}.{i}."))
        return found

    def parameters(self) -> list[Tensor]:
        return [p for _, p in self.named_parameters()]

    def modules(self) -> list[Module]:
        found = [self]
        for value in vars(self).values():
            items = value if isinstance(value, (list, tuple)) else (value,)
            found.extend(m for item in items if isinstance(item, Module) for m in item.modules())
        return found

    def train(self, mode: bool = True) -> Module:
        for module in self.modules():
            module.training = bool(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def state_dict(self) -> dict[str, np.ndarray]:
        return {name: p.data.copy() for name, p in self.named_parameters()}

    def load_state_dict(self, state: dict) -> None:
        params = dict(self.named_parameters())
        if set(state) != set(params):
            raise KeyError(f"state dict keys {sorted(state)} do not match parameters {sorted(params)}")
        for name, p in params.items():
            value = np.asarray(state[name], dtype=np.float64)
            if value.shape != p.shape:
                raise ValueError(f"{name}: got shape {value.shape}, expected {p.shape}")
            p.data[...] = value

    def to(self, device) -> Module:
        for p in self.parameters():
            p.to(device)
        return self


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, rng: np.random.Generator | None = None):
        rng = np.random.default_rng() if rng is None else rng
        bound = 1.0 / np.sqrt(in_features)
        self.weight = Tensor(rng.uniform(-bound, bound, (in_features, out_features)), requires_grad=True)
        self.bias = Tensor(rng.uniform(-bound, bound, (out_features,)), requires_grad=True)

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight + self.bias

    def __repr__(self) -> str:
        return f"Linear({self.weight.shape[0]}, {self.weight.shape[1]})"


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu()

    def __repr__(self) -> str:
        return "ReLU()"


class Sequential(Module):
    def __init__(self, *modules: Module):
        self.layers = list(modules)

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return x

    def __repr__(self) -> str:
        return "Sequential(" + ", ".join(map(repr, self.layers)) + ")"


class MSELoss(Module):
    def forward(self, pred: Tensor, target: Tensor) -> Tensor:
        return (pred - target).square_mean()
