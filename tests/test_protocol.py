"""Frames between the judge and a worker: what a worker can send is data, and a malformed frame is the worker's
failure (ProtocolError, so WorkerDied), never the grader's (a RecursionError or MemoryError in the judge)."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from graders.worker import protocol


def decode(frame: bytes):
    return protocol.decode(io.BytesIO(frame).read)


def frame_with_array(blob: bytes) -> bytes:
    header = b'{"a": {"__npy__": 0}}'
    return struct.pack(">I", len(header)) + header + struct.pack(">I", 1) + struct.pack(">Q", len(blob)) + blob


def npy_header(shape, descr: str = "<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def test_a_frame_round_trips_arrays_and_json():
    """Do arrays of every shape (0-d, empty) and plain JSON come back as they went?"""
    message = {"a": np.arange(6.0).reshape(2, 3), "b": [np.array(3.0), np.zeros((2, 0))], "c": {"d": "text"}}
    back = decode(protocol.encode(message))
    np.testing.assert_array_equal(back["a"], message["a"])
    assert back["b"][0].shape == () and back["b"][1].shape == (2, 0) and back["c"] == {"d": "text"}


def test_a_deeply_nested_frame_is_the_senders_failure():
    """Is JSON nested 100,000 deep refused as a malformed frame, not a RecursionError in the judge?"""
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
        decode(struct.pack(">I", len(deep)) + deep + struct.pack(">I", 0))


def test_an_array_header_that_claims_more_than_its_bytes_is_refused_before_allocating():
    """Is a .npy header claiming 2**55 float64 entries refused, not a MemoryError (or a 256 PiB allocation)?"""
    with pytest.raises(protocol.ProtocolError, match="claims shape"):
        decode(frame_with_array(npy_header((2**55,))))


def test_an_array_of_objects_is_refused():
    """Is an object array (a pickle) refused from its header, never unpickled?"""
    with pytest.raises(protocol.ProtocolError, match="objects"):
        decode(frame_with_array(npy_header((1,), descr="|O") + b"\x80\x04N."))
