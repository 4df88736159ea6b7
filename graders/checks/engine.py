"""Checks for tasks of engine."""
