"""How the worker reports what student code returned or raised, as plain data."""

from __future__ import annotations

import numbers
import traceback

import numpy as np

MAX_TEXT = 300


def claim(value) -> dict:
    """Describe a value returned by student code: its type, and its array if it is one."""
    kind = type(value).__name__
    if isinstance(value, np.ndarray):
        return {"kind": "ndarray", "type": kind, "array": np.array(value, copy=True, subok=False)}
    if isinstance(value, np.generic):
        return {"kind": "numpy scalar", "type": kind, "array": np.asarray(value)}
    if isinstance(value, bool):
        return {"kind": "bool", "type": kind, "value": value}
    if isinstance(value, numbers.Real) and type(value) in (int, float):
        return {"kind": "number", "type": kind, "value": value}
    return {"kind": "other", "type": kind}


def claims(values) -> list[dict] | dict:
    """Describe a returned tuple or list element by element, or anything else as one claim."""
    if isinstance(values, (tuple, list)):
        return {"kind": "sequence", "type": type(values).__name__, "items": [claim(v) for v in values]}
    return claim(values)


def describe_exception(error: BaseException, package_dirs: tuple[str, ...]) -> dict:
    """Type, MRO, message and the innermost student frame of an exception."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(package_dirs)]
    text = str(error).strip().splitlines()
    if isinstance(error, RecursionError):
        # The innermost frame is wherever the limit happened to hit, and the message's tail differs between
        # Python versions: name the recursive call instead (the outermost frame of a function that calls
        # itself again), so the same submission reads the same everywhere.
        names = [f.name for f in frames]
        frames = [f for i, f in enumerate(frames) if f.name in names[i + 1:]][:1] or frames
        text = ["maximum recursion depth exceeded"]
    where = f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno} in {frames[-1].name}" if frames else None
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename.rsplit('/', 1)[-1]}:{error.lineno}"
    return {
        "type": type(error).__name__,
        "mro": [cls.__name__ for cls in type(error).__mro__],
        "message": (text[0] if text else "")[:MAX_TEXT],
        "where": where,
    }
