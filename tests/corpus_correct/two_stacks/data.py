"""Mini-batches: the DataLoader (task 4) and the lesson's data (given)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .tensor import Tensor


def make_sine_data(n: int = 256, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The lesson's data (given): x ~ U(-2, 2), y = sin(2x) + N(0, noise**2), both (n, 1)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 1))
    y = np.sin(2.0 * x) + rng.normal(0.0, noise, size=(n, 1))
    return x, y


class DataLoader:
    """Mini-batches of (X, Y) as Tensor pairs, like ``torch.utils.data.DataLoader``.

    Every ``iter()`` is one epoch: each example exactly once, in batches of
    ``batch_size`` and a last, smaller batch unless ``drop_last``. With
    ``shuffle=True`` each epoch draws a fresh permutation from ``rng``
    (``rng.permutation(n)``), so two loaders given generators with the same
    seed yield the same batches; with ``shuffle=False`` the data's order.
    """

    def __init__(self, X, Y, batch_size: int = 32, shuffle: bool = True,
                 drop_last: bool = False, rng: np.random.Generator | None = None):
        self.X = np.asarray(X, dtype=np.float64)
        self.Y = np.asarray(Y, dtype=np.float64)
        if len(self.X) != len(self.Y):
            raise ValueError(f"X and Y differ in length: got {len(self.X)} and {len(self.Y)}")
        if batch_size < 1:
            raise ValueError(f"got {batch_size=}, expected batch_size >= 1")
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng() if rng is None else rng

    def __len__(self) -> int:
        """The number of batches in one epoch: n / batch_size rounded down with
        ``drop_last``, up without."""
        ### BEGIN SOLUTION (Task 4.1: DataLoader length)
        n, b = len(self.X), self.batch_size
        return n // b if self.drop_last else -(-n // b)
        ### END SOLUTION

    def __iter__(self) -> Iterator[tuple[Tensor, Tensor]]:
        """Yield ``(Tensor(X[idx]), Tensor(Y[idx]))`` for consecutive slices
        ``idx`` of an index order: ``rng.permutation(n)`` drawn anew each epoch
        when shuffling, ``0..n-1`` otherwise. ``len(self)`` batches in all."""
        ### BEGIN SOLUTION (Task 4.1: DataLoader iteration)
        n = len(self.X)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            idx = order[start:start + self.batch_size]
            yield Tensor(self.X[idx]), Tensor(self.Y[idx])
        ### END SOLUTION
