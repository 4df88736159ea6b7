"""Where the given code lives, and, in a checkout of the repository, the reference solution.

The installed package holds no solution. ``GIVEN`` is the student's starting code (the stubs, the given
modules, the public tests and README of exercises/), shipped in the wheel as ``graders/given``; in a
checkout it is exercises/ itself. ``SOLUTIONS`` exists only in a checkout: build-exercises and the
package's own tests read it, and nothing that grades does.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"
GIVEN = HERE / "given" if (HERE / "given").is_dir() else EXERCISES
WORKER = HERE / "worker"  # the untrusted side, copied into every grade's runtime folder
TEMPLATES = HERE / "templates"  # workflow, cluster and Gradescope templates
# The examples cache (graders/judge/examples_cache.py): the grader's draws and expected values, the instructor's.
CACHE_ENV, CACHE_OFF = "AUTOGRAD_LAB_CACHE", ("off", "0", "none", "no")
# The modules generated from solutions/ (stubs where graded, as they are where given): a submission's, in the
# contract's order, then the lesson and the gradient check that are given extra.
GIVEN_MODULES = ("__init__", "tensor", "nn", "optim", "data", "train", "torch_loop", "lesson", "gradcheck")


def in_checkout() -> bool:
    """Whether the reference solution is here: a git checkout, not an installed wheel."""
    return (SOLUTIONS / "__init__.py").is_file() and (REPO / "pyproject.toml").is_file()


def given_modules() -> dict[str, str]:
    """File name to text of the given modules: what the student starts from, stubs included."""
    return {f"{name}.py": (GIVEN / f"{name}.py").read_text() for name in sorted(GIVEN_MODULES)}


def graders_fingerprint() -> str:
    """sha256 of the graders' source and the given code: a fixed grader bug means a regrade, and fresh draws."""
    digest = hashlib.sha256()
    files = sorted({*HERE.rglob("*.py"), *(GIVEN / name for name in given_modules())})
    for path in files:
        if "__pycache__" not in path.parts:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def examples_cache() -> Path | None:
    """Where the examples cache keeps its draws, or None when it is off: ``AUTOGRAD_LAB_CACHE``, else
    ``$XDG_CACHE_HOME/autograd-lab/examples`` (``~/.cache`` without it). Here, not in the cache's module, so that
    nbgrader's kernel jail can hide it without importing numpy and Hypothesis."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() in CACHE_OFF:
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "autograd-lab" / "examples"
