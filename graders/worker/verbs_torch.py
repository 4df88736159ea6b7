"""Requests about the PyTorch loop (task 6)."""

from .main import module, verb  # noqa: F401
