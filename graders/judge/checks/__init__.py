"""The checks, one module per group of tasks; each registers its tasks in CHECKS."""

from graders.judge.checks.base import CHECKS


def load_all() -> None:
    """Import every check module, so that each registers its tasks."""
    from graders.judge.checks import data, engine, loop, ops, optim, torch_loop  # noqa: F401


__all__ = ["CHECKS", "load_all"]
