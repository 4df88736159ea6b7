"""Requests for the loop checks."""

from .main import module, verb  # noqa: F401
