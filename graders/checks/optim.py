"""Checks for tasks of optim."""
