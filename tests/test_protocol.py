"""Frames between the judge and a worker: what a worker can send is data, and a malformed frame is the worker's
failure (ProtocolError, so WorkerDied), never the grader's (a RecursionError or MemoryError in the judge)."""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np
import pytest

from graders.worker import protocol


def decode(frame: bytes):
    return protocol.decode(io.BytesIO(frame).read)


def frame_with_array(blob: bytes, shape=(1,), dtype: str = "<f8") -> bytes:
    header = json.dumps({"a": {"__npy__": 0, "dtype": dtype, "shape": list(shape)}}).encode()
    return struct.pack(">I", len(header)) + header + struct.pack(">I", 1) + struct.pack(">Q", len(blob)) + blob


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
    """Is an array claiming 2**55 float64 entries refused, not a MemoryError (or a 256 PiB allocation)?"""
    with pytest.raises(protocol.ProtocolError, match="claims shape"):
        decode(frame_with_array(b"\0" * 8, shape=(2**55,)))


@pytest.mark.parametrize("dtype", ["|O", "O", "V8", "(2,)<f8", "[('a', '<f8')]", "M8[s]", "not a dtype"])
def test_an_array_of_objects_or_of_records_is_refused(dtype):
    """Is an object array (a pickle), a record, a sub-array or a date refused from its header, never built?"""
    with pytest.raises(protocol.ProtocolError, match="malformed frame"):
        decode(frame_with_array(b"\x80\x04N.\0\0\0", dtype=dtype))


@pytest.mark.parametrize("shape", [[-1], [1.5], "8", [1] * 40])
def test_an_array_of_a_malformed_shape_is_refused(shape):
    with pytest.raises(protocol.ProtocolError, match="malformed frame"):
        decode(frame_with_array(b"\0" * 8, shape=shape))


def test_an_array_object_cannot_be_sent():
    """The sender refuses an object array too (the worker then answers 'could not encode')."""
    with pytest.raises(ValueError, match="plain dtypes"):
        protocol.encode({"a": np.array([object()])})


def test_arrays_come_back_writable_and_in_c_order():
    """A received array is the receiver's own: a transposed (Fortran-order) one is sent by value, and it can be
    written to, as an array from np.load could."""
    back = decode(protocol.encode({"a": np.arange(6.0).reshape(2, 3).T}))["a"]
    np.testing.assert_array_equal(back, np.arange(6.0).reshape(2, 3).T)
    back[0, 0] = 7.0


def test_a_reader_keeps_what_it_read_ahead_for_the_next_frame():
    """Two frames in one pipe, read in 64 KiB gulps: each decode gets exactly its own frame."""
    first, second = protocol.encode({"x": np.ones(3)}), protocol.encode({"y": [1, 2]})
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, first + second)
        read = protocol.fd_reader(read_end)
        assert protocol.decode(read)["x"].tolist() == [1.0, 1.0, 1.0]
        assert protocol.decode(read) == {"y": [1, 2]}
    finally:
        os.close(read_end)
        os.close(write_end)
