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
    where = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename.startswith(package_dirs):
            where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name}"
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename.rsplit('/', 1)[-1]}:{error.lineno}"
    text = str(error).strip().splitlines()
    return {
        "type": type(error).__name__,
        "mro": [cls.__name__ for cls in type(error).__mro__],
        "message": (text[0] if text else "")[:MAX_TEXT],
        "where": where,
    }
