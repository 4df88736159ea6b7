"""Kernel state that outlives a process: the worker's seccomp filter refuses it on every architecture the kernel
serves, and the judge checks, when a worker uid's lease ends or starts, that the uid holds no kernel key.

The hostile corpus's ``kernel_state`` and ``kernel_state_other_abi`` entries try the same through a real grade;
these tests hold the two parts on their own, in a forked child, in a fraction of a second.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct  # noqa: F401  (the probe imports it once the child is a uid that may not reach the venv)
import traceback

import pytest
from hostile import KERNEL_STATE_OTHER_ABI

from graders.isolation import uids
from graders.worker import seccomp

needs_x86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="the other ABIs probed are x86_64's")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="becoming a worker uid takes root")


def _in_a_child(body) -> int:
    """Run ``body`` in a forked child; its return value (0-255) as the child's exit code."""
    pid = os.fork()
    if pid == 0:
        code = 255
        try:
            code = body()
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _as_a_worker(uid: int | None) -> None:
    """In the probe's child: an IPC namespace and a worker uid of its own where the test runs as root, so a
    filter that lets a call through leaves nothing in the test's (the lease's release clears the uid's keys)."""
    if uid is None:
        return
    assert ctypes.CDLL(None, use_errno=True).unshare(0x08000000) == 0  # CLONE_NEWIPC
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _holds_behind_the_filter(check) -> bool:
    """Whether ``check()`` is true in a forked child, as a worker would run it: behind the seccomp filter, and
    (as root) in an IPC namespace and a leased worker uid of its own, released after."""
    uid = uids.lease_uid() if os.geteuid() == 0 else None

    def probe() -> int:
        _as_a_worker(uid)
        assert seccomp.install()
        return 0 if check() else 1

    try:
        return _in_a_child(probe) == 0
    finally:
        if uid is not None:
            uids.release_uid(uid)


@needs_x86_64
def test_the_filter_refuses_every_call_of_another_abi():
    """Behind the filter, does every i386 call (getpid too) and every x32 number fail with EPERM, while the
    native calls the worker needs still work? Without the filter the same probe opens each channel."""
    namespace: dict = {}
    exec(KERNEL_STATE_OTHER_ABI, namespace)  # the corpus's own probe, run in a child

    def refused() -> bool:
        channels = namespace["_other_abis"]().split(": ", 1)[1].split()
        return os.getpid() > 0 and bool(channels) and all(c.endswith("=EPERM") for c in channels)

    assert _holds_behind_the_filter(refused)


def test_the_filter_refuses_the_native_key_and_ipc_calls():
    """keyctl and shmget by the machine's own numbers: EPERM behind the filter."""
    known = seccomp.SYSCALLS.get(platform.machine())
    if known is None:
        pytest.skip("no filter for this architecture")
    add_key, _, keyctl, shmget = known[1][:4]

    def refused() -> bool:
        libc = ctypes.CDLL(None, use_errno=True)
        answers = []
        for number, args in ((add_key, (b"user", b"agl-test", b"x", 1, -4)), (keyctl, (0, -4, 0)),
                             (shmget, (0x41474C, 4096, 0o1000 | 0o600))):
            ctypes.set_errno(0)
            answers.append(libc.syscall(number, *args) == -1 and ctypes.get_errno() == errno.EPERM)
        return all(answers)

    assert _holds_behind_the_filter(refused)


def _leave_a_key(uid: int) -> None:
    """A process of ``uid``, with no filter, stores a key in its user key ring and leaves."""
    def store() -> int:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        libc = ctypes.CDLL(None, use_errno=True)
        number = {"x86_64": 248, "aarch64": 217}[platform.machine()]
        return 0 if libc.syscall(number, b"user", b"agl-relay", b"tensor.py", 9, -4) > 0 else 1

    assert _in_a_child(store) == 0


@needs_root
def test_a_uid_leaves_its_lease_with_no_kernel_key():
    """A worker uid that holds a key when its lease ends (something got past the filter): is every key of the
    uid gone once release_uid returns, so the next holder of the uid finds nothing?"""
    if not os.path.exists(uids.KEY_USERS) or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("no kernel keys here")
    uid = uids.lease_uid()
    try:
        _leave_a_key(uid)
        assert uids.keys_of(uid) > 0
    finally:
        uids.release_uid(uid)
    assert uids.keys_of(uid) == 0


@needs_root
def test_a_uid_with_keys_left_by_a_crashed_judge_is_cleared_before_its_lease():
    """Keys left on a free uid (a judge killed before it released it): the next lease of that uid clears them
    first."""
    if not os.path.exists(uids.KEY_USERS) or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("no kernel keys here")
    uid = uids.lease_uid()
    uids.release_uid(uid)
    _leave_a_key(uid)
    assert uids.keys_of(uid) > 0
    # The lease's first candidate is (pid * 131 + n * 17) mod the count for the n-th lease: make it this uid.
    target = (uid - uids.WORKER_UID_BASE - os.getpid() * 131) * pow(17, -1, uids.WORKER_UID_COUNT)
    uids._next[0] = target % uids.WORKER_UID_COUNT - 1
    leased = uids.lease_uid()
    uids.release_uid(leased)
    assert leased == uid
    assert uids.keys_of(uid) == 0
