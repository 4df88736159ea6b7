"""Checks for tasks of torch_loop."""
