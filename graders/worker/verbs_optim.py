"""Requests for the optim checks."""

from .main import module, verb  # noqa: F401
