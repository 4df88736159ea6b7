"""Frames between the judge and the worker: JSON plus raw array bytes, never pickle.

A frame is a 4-byte length and a JSON header, a 4-byte count of arrays, then
each array's bytes after an 8-byte length. In the JSON, an array stands as
``{"__npy__": i, "dtype": "<f8", "shape": [2, 3]}``. Only plain dtypes (bool,
integers, floats, complex, strings) are read, and only when the bytes hold
exactly the shape claimed: an object array or a pickled payload is refused,
not executed. Both sides use this module: the worker from its own copy in the
sandbox.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

# The speed benchmark's breakdown (graders.worker.profiling), part of the wire: the environment variable that turns
# a worker's sampler on, and the mark of its lines on stdout (MARK, then the student's, the stand-ins' and all CPU
# seconds of the process). The worker's word, read by no check.
PROFILE_ENV = "AGL_WORKER_PROFILE"
PROFILE_MARK = b"\x1eagl-profile"

MAX_FRAME_BYTES = 64 * 2**20
MAX_DIMS = 32
PLAIN_KINDS = "biufcUS"  # bool, int, uint, float, complex, str, bytes: what a claim's arrays may hold
_ARRAY_KEYS = {"__npy__", "dtype", "shape"}


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed frame."""


def _pack(value, blobs: list[bytes]):
    if isinstance(value, np.ndarray):
        array = value  # tobytes() writes C order whatever the array's layout
        if array.dtype.kind not in PLAIN_KINDS or array.dtype.fields is not None:
            raise ValueError(f"an array of dtype {array.dtype} cannot be sent (plain dtypes only)")
        blobs.append(array.tobytes())
        return {"__npy__": len(blobs) - 1, "dtype": array.dtype.str, "shape": list(array.shape)}
    if isinstance(value, dict):
        return {str(k): _pack(v, blobs) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_pack(v, blobs) for v in value]
    return value


def _unpack(value, blobs: list[bytes]):
    if isinstance(value, dict):
        if set(value) == _ARRAY_KEYS:
            return _load_array(value, blobs)
        return {k: _unpack(v, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpack(v, blobs) for v in value]
    return value


def encode(message) -> bytes:
    """One frame holding ``message``: its JSON header, with each array replaced by a reference, then the arrays' raw
    bytes. Arrays never go through pickle, so reading a frame runs no code."""
    blobs: list[bytes] = []
    header = json.dumps(_pack(message, blobs)).encode()
    parts = [struct.pack(">I", len(header)), header, struct.pack(">I", len(blobs))]
    for blob in blobs:
        parts += [struct.pack(">Q", len(blob)), blob]
    return b"".join(parts)


def decode(read_exactly) -> object:
    """Read one frame with ``read_exactly(n) -> bytes``; refuses oversized or malformed frames."""
    total = 0

    def take(n: int) -> bytes:
        nonlocal total
        total += n
        if total > MAX_FRAME_BYTES:
            raise ProtocolError(f"frame larger than {MAX_FRAME_BYTES} bytes")
        return read_exactly(n)

    (size,) = struct.unpack(">I", take(4))
    try:
        header = json.loads(take(size))
        (count,) = struct.unpack(">I", take(4))
        blobs = []
        for _ in range(count):
            (length,) = struct.unpack(">Q", take(8))
            blobs.append(take(length))
        return _unpack(header, blobs)
    except RecursionError:
        raise ProtocolError("malformed frame: nested too deeply") from None
    except (ValueError, TypeError, OSError, struct.error) as error:
        raise ProtocolError(f"malformed frame: {error}") from None


def decode_bytes(data: bytes) -> object:
    """The one frame ``data`` holds (``decode``'s checks); ProtocolError where it holds less, or more."""
    offset = 0

    def read_exactly(n: int) -> bytes:
        nonlocal offset
        if offset + n > len(data):
            raise ProtocolError("malformed frame: cut short")
        offset += n
        return data[offset - n:offset]

    value = decode(read_exactly)
    if offset != len(data):
        raise ProtocolError("malformed frame: bytes after its end")
    return value


def _load_array(placeholder: dict, blobs: list[bytes]) -> np.ndarray:
    """One array of the frame: a plain dtype, and exactly as many bytes as its shape needs (checked before
    anything is allocated). A writable copy, as ``np.load`` gave."""
    index, shape = placeholder["__npy__"], placeholder["shape"]
    if not isinstance(index, int) or not 0 <= index < len(blobs):
        raise ProtocolError(f"frame names array {index!r}, which it does not hold")
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMS and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"an array's shape must be a list of sizes, not {str(shape)[:80]}")
    if not isinstance(placeholder["dtype"], str):
        raise ValueError("an array's dtype must be named")
    dtype = np.dtype(placeholder["dtype"])
    if dtype.hasobject or dtype.kind not in PLAIN_KINDS or dtype.fields is not None or dtype.shape != ():
        raise ValueError(f"an array of dtype {dtype} (plain dtypes only)")
    elements = 1
    for side in shape:
        elements *= side
    blob = blobs[index]
    if elements * dtype.itemsize != len(blob):
        raise ValueError(f"an array claims shape {tuple(shape)} of {dtype}, which its {len(blob)} bytes do not hold")
    return np.frombuffer(blob, dtype=dtype).reshape(tuple(shape)).copy()


def fd_reader(fd: int, *, wait=lambda: None, closed: str = "the other side closed the channel"):
    """``read_exactly`` over a file descriptor; raises EOFError(``closed``) when the other side is gone. ``wait``
    runs before each read (the judge's waits for its deadline and for the worker's death there). It reads what
    the pipe holds, up to 64 KiB at a time, and keeps what it read ahead for the next call: a frame of many
    small arrays costs a few reads, not several per array."""
    ahead, offset = b"", 0

    def read_exactly(n: int) -> bytes:
        nonlocal ahead, offset
        if len(ahead) - offset >= n:
            offset += n
            return ahead[offset - n:offset]
        chunks, have = [ahead[offset:]], len(ahead) - offset
        while have < n:
            wait()
            chunk = os.read(fd, max(n - have, 1 << 16))
            if not chunk:
                raise EOFError(closed)
            chunks.append(chunk)
            have += len(chunk)
        ahead, offset = b"".join(chunks), n
        return ahead[:n]

    return read_exactly


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``, however many writes a pipe takes, so a frame is never cut short."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
