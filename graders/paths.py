"""Where the reference solution and the generated exercises live."""

from __future__ import annotations

from pathlib import Path

import solutions

SOLUTIONS = Path(solutions.__file__).resolve().parent
REPO = SOLUTIONS.parent
EXERCISES = REPO / "exercises"
# The modules a submission holds, in the contract's order (lesson.py is given extra).
STUDENT_MODULES = ("__init__", "tensor", "nn", "optim", "data", "train", "torch_loop")
