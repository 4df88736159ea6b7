"""Checks for tasks of loop."""
