"""Frames between the judge and the worker: JSON plus ``.npy`` bytes, never pickle.

A frame is a 4-byte length and a JSON header, a 4-byte count of arrays, then
each array as an 8-byte length and its ``.npy`` bytes. In the JSON, an array
stands as ``{"__npy__": i}``. Arrays are read with ``allow_pickle=False``,
so an object array or a pickled payload is refused, not executed.
Both sides use this module: the worker from its own copy in the sandbox.
"""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np

MAX_FRAME_BYTES = 64 * 2**20


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed frame."""


def _pack(value, blobs: list[bytes]):
    if isinstance(value, np.ndarray):
        buffer = io.BytesIO()
        np.save(buffer, np.array(value, copy=True, subok=False), allow_pickle=False)
        blobs.append(buffer.getvalue())
        return {"__npy__": len(blobs) - 1}
    if isinstance(value, dict):
        return {str(k): _pack(v, blobs) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_pack(v, blobs) for v in value]
    return value


def _unpack(value, arrays: list[np.ndarray]):
    if isinstance(value, dict):
        if set(value) == {"__npy__"}:
            index = value["__npy__"]
            if not isinstance(index, int) or not 0 <= index < len(arrays):
                raise ProtocolError(f"frame names array {index!r}, which it does not hold")
            return arrays[index]
        return {k: _unpack(v, arrays) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpack(v, arrays) for v in value]
    return value


def encode(message) -> bytes:
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
        arrays = []
        for _ in range(count):
            (length,) = struct.unpack(">Q", take(8))
            arrays.append(_load_array(take(length)))
        return _unpack(header, arrays)
    except RecursionError:
        raise ProtocolError("malformed frame: nested too deeply") from None
    except (ValueError, OSError, struct.error) as error:
        raise ProtocolError(f"malformed frame: {error}") from None


def _load_array(blob: bytes) -> np.ndarray:
    """One ``.npy`` array, its header checked before anything is allocated: no objects (no pickle), and no more
    elements than the bytes that follow the header hold."""
    buffer = io.BytesIO(blob)
    version = np.lib.format.read_magic(buffer)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"npy version {version}")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(buffer)
    if dtype.hasobject:
        raise ValueError("an array of objects")
    elements = 1
    for side in shape:
        elements *= side
    if elements * dtype.itemsize > len(blob) - buffer.tell():
        raise ValueError(f"an array header claims shape {shape}, more than its {len(blob)} bytes hold")
    buffer.seek(0)
    return np.load(buffer, allow_pickle=False)


def fd_reader(fd: int, *, wait=lambda: None, closed: str = "the other side closed the channel"):
    """``read_exactly`` over a file descriptor; raises EOFError(``closed``) when the other side is gone. ``wait``
    runs before each read (the judge's waits for its deadline and for the worker's death there)."""

    def read_exactly(n: int) -> bytes:
        chunks, left = [], n
        while left:
            wait()
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                raise EOFError(closed)
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    return read_exactly


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
