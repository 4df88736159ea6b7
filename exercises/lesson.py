"""The lesson's result, reproduced: ``python -m solutions.lesson`` (or ``exercises.lesson``).

A 1-32-1 ReLU network on y = sin(2x) + noise (256 points, noise 0.1, so a
noise floor of 0.01), SGD with lr=0.02, batches of 32, 300 epochs: once with
this package's engine and ``fit``, once in PyTorch with ``fit_torch``.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

from . import SGD, DataLoader, Linear, MSELoss, ReLU, Sequential, fit, make_sine_data

EPOCHS, LR, BATCH, REPORT = 300, 0.02, 32, (1, 10, 50, 100, 300)


def lesson_network(seed: int = 0) -> Sequential:
    rng = np.random.default_rng(seed)
    return Sequential(Linear(1, 32, rng=rng), ReLU(), Linear(32, 1, rng=rng))


def run_numpy(seed: int = 0, epochs: int = EPOCHS) -> list[float]:
    """Training MSE per epoch (the mean batch loss) of the lesson's run on this engine."""
    X, Y = make_sine_data()
    model = lesson_network(seed)
    loader = DataLoader(X, Y, batch_size=BATCH, shuffle=True, rng=np.random.default_rng(seed + 1))
    return fit(model, loader, SGD(model.parameters(), lr=LR), MSELoss(), epochs)["train_loss"]


def run_torch(seed: int = 0, epochs: int = EPOCHS, device: str = "cpu") -> list[float]:
    """The same run in PyTorch, float64, through ``fit_torch``."""
    import torch

    from .torch_loop import fit_torch

    torch.manual_seed(seed)
    X, Y = (torch.from_numpy(a) for a in make_sine_data())
    model = torch.nn.Sequential(torch.nn.Linear(1, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).double()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=BATCH, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed + 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    return fit_torch(model, loader, optimizer, torch.nn.MSELoss(), epochs, device=device)["train_loss"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="device for the PyTorch run (cpu, cuda)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch run")
    args = parser.parse_args(argv)

    runs = {"this engine": run_numpy}
    if not args.no_torch and importlib.util.find_spec("torch") is None:
        print("torch is not installed: the PyTorch column is left out "
              "(pip install -r exercises/requirements-torch.txt adds it)")
    elif not args.no_torch:
        runs["PyTorch (fit_torch)"] = lambda seed: run_torch(seed, device=args.device)
    curves, seconds = {}, {}
    for name, run in runs.items():
        start = time.perf_counter()
        try:
            curves[name] = run(args.seed)
        except NotImplementedError as stub:  # a stub still in place: say which, not a traceback
            raise SystemExit(f"{stub} is not written yet: the lesson runs once tasks 1 to 5 (and 6.1 for "
                             "PyTorch) are done") from None
        seconds[name] = time.perf_counter() - start
    print(f"1-32-1 ReLU on sin(2x) + noise, SGD lr={LR}, batch {BATCH}, {EPOCHS} epochs; noise floor 0.0100")
    print("epoch  " + "  ".join(f"{name:>20}" for name in runs))
    for epoch in REPORT:
        print(f"{epoch:>5}  " + "  ".join(f"{curves[name][epoch - 1]:>20.4f}" for name in runs))
    print("secs   " + "  ".join(f"{seconds[name]:>20.1f}" for name in runs))


if __name__ == "__main__":
    main()
