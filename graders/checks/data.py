"""Checks for tasks of data."""
