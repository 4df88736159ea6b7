"""The processes a grade starts, seen from the kernel: every process's parent (from /proc), a process's
descendants, and the environment that keeps each on one thread."""

from __future__ import annotations

import os

# BLAS and OpenMP on one thread each: a grade's numbers must not depend on how many cores the machine has, and
# a class's judges share the cores between them.
THREADS_ENV = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def parents() -> dict[int, int]:
    """Every process's parent, from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    found[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return found


def children(pid: int) -> list[int]:
    return [child for child, parent in parents().items() if parent == pid]


def descendants(pid: int, of: dict[int, int] | None = None) -> list[int]:
    """Every process below ``pid``, nearest first; ``of``: a table from parents() taken already."""
    of = parents() if of is None else of
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        below = [child for child, parent in of.items() if parent == current]
        found += below
        todo += below
    return found
