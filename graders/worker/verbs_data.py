"""Requests for the data checks."""

from .main import module, verb  # noqa: F401
