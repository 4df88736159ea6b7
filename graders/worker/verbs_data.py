"""Requests about the DataLoader: what its epochs hold, and its length.

Each batch comes back as plain data: whether it is a pair, whether each side
is a Tensor, its ``requires_grad`` and its array, all as claims.
"""

from __future__ import annotations

import itertools

import numpy as np

from .claims import claim
from .verbs import module


def _side(T, value) -> dict:
    if not isinstance(value, T.Tensor):
        return {"tensor": False, "type": type(value).__name__}
    return {"tensor": True, "requires_grad": claim(value.requires_grad), "data": claim(value.data)}


def _batch(T, item) -> dict:
    if not (isinstance(item, (tuple, list)) and len(item) == 2):
        return {"pair": False, "type": type(item).__name__}
    return {"pair": True, "x": _side(T, item[0]), "y": _side(T, item[1])}


def _epoch(T, loader, limit: int) -> dict:
    """One ``iter()`` of the loader, stopped after ``limit`` + 1 batches: the judge counts them (one more than
    ``limit`` is a loader that yields too many, or never ends)."""
    return {"batches": [_batch(T, item) for item in itertools.islice(iter(loader), limit + 1)]}


def loader_epochs(package, X, Y, batch_size, shuffle, drop_last, epochs, seeds=(None,), global_seeds=None,
                  length=False):
    """One loader per entry of ``seeds`` (a seed for np.random.default_rng, or None: no rng
    argument), ``epochs`` passes over each, the loaders taking turns. Before each pass numpy's
    global generator is seeded with the matching entry of ``global_seeds``, so a loader that
    shuffles with np.random's global functions instead of its rng gives itself away. With
    ``length``, then len() of the first loader, and whether X and Y were still as given after every pass
    (a loader that shuffles its caller's arrays in place changes them)."""
    T, D = module(package, "tensor"), module(package, "data")
    given = X.copy(), Y.copy()
    loaders = []
    for seed in seeds:
        rng = {} if seed is None else {"rng": np.random.default_rng(seed)}
        loaders.append(D.DataLoader(X, Y, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, **rng))
    passes = [[] for _ in loaders]
    for e in range(epochs):
        for j, loader in enumerate(loaders):
            if global_seeds:
                np.random.seed(global_seeds[j][e])
            passes[j].append(_epoch(T, loader, limit=len(X)))
    return {"loaders": passes, "length": claim(len(loaders[0])) if length else None,
            "data_kept": bool(np.array_equal(X, given[0]) and np.array_equal(Y, given[1]))}
