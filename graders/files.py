"""Writing a file so that no reader ever sees half of it: the scorecards, the gradebook, the bundle."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, then a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as f:
            # surrogateescape: a student's folder name that is not UTF-8 goes back out as the bytes it came in as
            f.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        os.chmod(temporary, 0o666 & ~_umask())  # as open() would have made it (mkstemp makes it 0600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
