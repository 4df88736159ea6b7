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


# The graders' modules whose text decides no verdict, relative to graders/ (a folder ends with "/"): the sentences,
# the views of a result other than the result itself, the class's gradebook, report and exports, the course
# builders and the course file (its tasks, points and secret are fingerprinted apart: batch.Settings), the
# integrations and the command line. Every other module, one added later included, counts.
NOT_VERDICT = ("messages/", "cli.py", "cli_class.py", "__main__.py", "results/outputs.py", "results/pictures.py",
               "results/classroom.py", "results/mistakes.py", "results/plain.py", "course/", "integrations/",
               "classgrade/report.py", "classgrade/gradebook.py", "classgrade/adjustments.py", "classgrade/lms.py",
               "classgrade/progress.py")


def graders_fingerprint(root: Path = HERE, given: Path | None = None) -> str:
    """sha256 of what decides a verdict: the graders' source but NOT_VERDICT, and the given code. A fixed grader bug
    means a regrade and fresh draws; a message reworded, a view or a course builder changed means neither.
    ``root`` and ``given``: another copy of graders/ and of the given code (the tests')."""
    given = GIVEN if given is None else given
    digest = hashlib.sha256()
    files = sorted({*root.rglob("*.py"), *(given / name for name in given_modules())})
    for path in files:
        inside = path.relative_to(root).as_posix() if path.is_relative_to(root) else None
        if "__pycache__" in path.parts or (inside is not None and inside.startswith(NOT_VERDICT)):
            continue
        digest.update((inside or path.name).encode() + b"\0" + path.read_bytes() + b"\0")
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
