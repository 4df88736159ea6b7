"""What a worker asks the judge for instead of holding it: the reference's answer, never its code."""

from __future__ import annotations

import numpy as np

from .main import ask_judge


def unbroadcast(grad, shape):
    """``grad`` summed down to ``shape`` by the judge: the student's rules of 1.2 and 1.3 call this in place of
    their own unbroadcast, so a mistake in task 1.1 costs its points once."""
    return ask_judge("unbroadcast", grad=np.asarray(grad, dtype=np.float64), shape=[int(n) for n in shape])
