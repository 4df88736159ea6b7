"""A seccomp filter the worker installs on itself before any student code runs: no system call of another
architecture, no kernel key rings, no System V or POSIX message queues, semaphores or shared memory segments.

Those are kernel state that outlives a process and is keyed by uid (key rings) or by a number anyone may guess
(IPC): a worker could leave data there for a later worker, the next grade, or a classmate's grade. bubblewrap
gives each worker an IPC namespace but no user namespace (so not its own key rings), and process limits alone
give neither; the filter closes both, in both isolations. The calls fail with EPERM, as on a system that
forbids them; nothing the lesson needs makes them (POSIX semaphores and shared memory are files in /dev/shm,
which are private or swept). ``install()`` says whether the filter is on; where the architecture is not one
this knows, it is not, and ``doctor`` says so.

Deny by default across architectures: a process may make the calls of another ABI its kernel also serves
(i386's ``int 0x80`` on x86_64, the x32 numbers, arm32 on aarch64), whose numbers for the same calls differ.
Every such call fails with EPERM, whatever its number: nothing Python, numpy or torch runs makes one.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

# The blocked system calls by architecture: add_key, request_key, keyctl, shmget, semget, msgget, mq_open.
SYSCALLS = {
    "x86_64": (0xC000003E, (248, 249, 250, 29, 64, 68, 240)),
    "aarch64": (0xC00000B7, (217, 218, 219, 194, 190, 186, 180)),
}
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_X32_BIT = 0x40000000
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def program(arch: int, numbers: tuple[int, ...]) -> bytes:
    """The BPF program: every call of another architecture (and x86_64's x32 numbers) and ``numbers`` get EPERM."""
    def op(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    count = len(numbers)
    body = [op(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
            op(_JEQ_K, 0, count + 3, arch),  # another architecture: on to the EPERM return
            op(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
            op(_JGE_K, count + 1, 0, _X32_BIT)]  # x86_64's x32 numbers (the same calls by another number)
    body += [op(_JEQ_K, count - i, 0, n) for i, n in enumerate(numbers)]  # a match jumps to the EPERM return
    body += [op(_RET_K, 0, 0, _RET_ALLOW), op(_RET_K, 0, 0, _RET_ERRNO | errno.EPERM)]
    return b"".join(body)


def install() -> bool:
    """Install the filter on this process (and what it starts); False where it cannot be."""
    known = SYSCALLS.get(platform.machine())
    if known is None:
        return False
    code = program(*known)
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0
