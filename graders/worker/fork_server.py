"""A fork server's own side: a process that has imported what a worker imports, and forks one worker per request.

Started and spoken to by the judge's side, ``graders.isolation.fork_servers``, as root, before any student code
exists:

    python -I -B -c 'from worker.fork_server import serve_forks; serve_forks(FD, torch_too)'

It imports numpy and the worker's own modules (and, with ``torch_too``, torch and the loop's stand-ins: a cold
worker spends most of its start importing torch), then waits on its control socket. Each message is a worker to
make: a JSON spec, and the worker's descriptors passed beside it (stdin, stdout, stderr, its request and
response pipes, the grade's cgroup files). For each:

1. the server forks a first child, which joins the grade's cgroups and enters the namespaces of a sandbox the
   judge made with bubblewrap (``spec["sandbox"]``: a process inside it): mount, network, IPC, UTS, cgroup and
   pid, so that it sees bubblewrap's root, with only its own packages, and nothing else of the filesystem;
2. the first child forks a second one, a member of the sandbox's pid namespace, which forks the worker and
   exits: the worker is handed to the sandbox's first process (pid 1 there), its parent as a cold worker's is
   (the judge finds it there, ``fork_servers.Server.spawn``). The first child reports and exits;
3. the worker takes its own session, puts its descriptors in place and closes every other, sets its limits and
   environment, becomes the grade's unprivileged uid and serves exactly as a worker started cold does
   (``main.serve``). It dies with the judge as the rest of the sandbox does: bubblewrap dies with the judge,
   and the end of the first process of a pid namespace kills every other process in it.

This process holds nothing a worker may not see: the interpreter, numpy, torch and the worker's public code.
It never reads a submission, a grade or an answer, and it runs no student code: only its forks do, after
they have left it.
"""

from __future__ import annotations

import array
import atexit
import ctypes
import gc
import json
import os
import random
import resource
import socket
import sys
import traceback

NAMESPACES = ("cgroup", "ipc", "uts", "net", "pid", "mnt")  # joined in this order: the mount namespace last
MAX_MESSAGE, MAX_FDS = 64 * 1024, 16
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 4, 24, 38
_LIMITS = {"cpu_seconds": resource.RLIMIT_CPU, "address_space": resource.RLIMIT_AS,
           "file_size": resource.RLIMIT_FSIZE, "processes": resource.RLIMIT_NPROC}


def serve_forks(control_fd: int, torch_too: bool) -> None:
    """Import what every worker imports, say ready, then make a worker for each message until the judge hangs up."""
    from . import main

    _blank_start_area()
    main.verbs()  # every verb's module
    if torch_too:
        import torch  # noqa: F401

        from . import device, standins  # noqa: F401

        device.warm()  # task 6.1's device: what torch imports for its first op there, once for every fork
    # What is imported now is shared with every fork until written: the collector is kept from walking it (its
    # walk writes to every object, which would copy the whole heap into each worker).
    gc.freeze()
    control = socket.socket(fileno=control_fd)
    control.sendall(b'{"ready": true}')
    while True:
        try:
            message, fds = _receive(control)
        except OSError:
            os._exit(0)
        if not message:  # the judge hung up: leave at once (nothing to flush, and torch's teardown takes a second)
            os._exit(0)
        try:
            reply = _make(json.loads(message), fds, control_fd)
        except Exception as error:  # noqa: BLE001 - a spec this cannot follow is the judge's to hear about
            reply = {"error": f"{type(error).__name__}: {error}"[:500]}
        finally:
            for fd in fds:
                os.close(fd)
        control.sendall(json.dumps(reply).encode())


def _blank_start_area() -> None:
    """Overwrite the memory that /proc/<pid>/environ and /proc/<pid>/cmdline read (the strings the kernel laid out
    at exec, which every fork inherits): the environment with zeros, the command line with the interpreter and the
    flags a worker is started with. A forked worker's /proc/self shows then nothing of this server's start (its
    copy of the worker's code in a judge's temporary folder, the serve_forks call), and a worker's own environment
    lives in os.environ alone. Python read both long ago (sys.argv, os.environ); C code that reads an environment
    variable later reads the worker's, which os.environ sets."""
    with open("/proc/self/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    arg_start, arg_end, env_start, env_end = (int(fields[n - 3]) for n in (48, 49, 50, 51))
    ctypes.memset(env_start, 0, env_end - env_start)
    shown = b"\0".join([os.fsencode(sys.executable), b"-I", b"-B"]) + b"\0"
    size = arg_end - arg_start
    ctypes.memmove(arg_start, shown[:size].ljust(size, b"\0"), size)


def _receive(control: socket.socket) -> tuple[bytes, list[int]]:
    fds = array.array("i")
    message, ancillary, _, _ = control.recvmsg(MAX_MESSAGE, socket.CMSG_LEN(MAX_FDS * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    return message, list(fds)


def _make(spec: dict, fds: list[int], control_fd: int) -> dict:
    """Fork the first child, and wait for its word: the worker forked, or why there is none."""
    sys.stdout.flush()
    sys.stderr.flush()
    report_read, report_write = os.pipe()
    first = os.fork()
    if first == 0:
        try:
            os.close(report_read)
            os.close(control_fd)
            _first_child(spec, fds, report_write)
        except BaseException as error:  # noqa: BLE001 - said to the judge, never raised into the server's loop
            _write(report_write, {"error": f"{type(error).__name__}: {error}"[:500]})
        os._exit(1)
    os.close(report_write)
    chunks = []
    while chunk := os.read(report_read, 4096):
        chunks.append(chunk)
    os.close(report_read)
    os.waitpid(first, 0)
    return json.loads(b"".join(chunks) or b'{"error": "the first child said nothing"}')


def _write(fd: int, value: dict) -> None:
    data = json.dumps(value).encode()
    while data:
        data = data[os.write(fd, data):]


def _first_child(spec: dict, fds: list[int], report: int) -> None:
    stdio, pipes, cgroups = fds[:3], fds[3:5], fds[5:]
    for fd in cgroups:  # the grade's budgets, while root; the worker forked below is in them too
        os.write(fd, str(os.getpid()).encode())
    libc = ctypes.CDLL(None, use_errno=True)
    sandbox = int(spec["sandbox"])
    for name in NAMESPACES:
        ours, theirs = f"/proc/self/ns/{name}", f"/proc/{sandbox}/ns/{name}"
        if not os.path.exists(theirs) or os.stat(ours).st_ino == os.stat(theirs).st_ino:
            continue
        fd = os.open(theirs, os.O_RDONLY | os.O_CLOEXEC)
        try:
            if libc.setns(fd, 0) != 0:
                raise OSError(ctypes.get_errno(), f"setns into the sandbox's {name} namespace")
        finally:
            os.close(fd)
    middle = os.fork()  # a member of the sandbox's pid namespace (setns names it for the children)
    if middle == 0:
        status = 1
        try:
            if os.fork() == 0:
                os.close(report)
                try:
                    _worker(spec, stdio, pipes, libc)
                except BaseException:  # noqa: BLE001 - the worker's stderr is the grade's log
                    traceback.print_exc()
                    sys.stderr.flush()
                os._exit(1)
            status = 0
        finally:
            # The worker, orphaned, is handed to the sandbox's first process: its parent, as a cold worker's is
            # (getppid() is 1 for both).
            os._exit(status)
    _, status = os.waitpid(middle, 0)
    _write(report, {"forked": True} if status == 0 else {"error": f"the worker's fork failed (status {status})"})
    os._exit(0)


def _worker(spec: dict, stdio: list[int], pipes: list[int], libc) -> None:
    """The worker: the same process state as a worker started cold."""
    os.setsid()
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
    request_fd, response_fd = pipes
    keep = sorted({0, 1, 2, request_fd, response_fd})
    for low, high in zip(keep, [*keep[1:], resource.getrlimit(resource.RLIMIT_NOFILE)[0]]):
        os.closerange(low + 1, high)
    for name, value in spec["limits"].items():
        resource.setrlimit(_LIMITS[name], (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(spec["cwd"])
    os.environ.clear()
    os.environ.update(spec["env"])
    for capability in range(_last_capability() + 1):  # as bubblewrap leaves its command: no capability to regain
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {capability})")
    uid = int(spec["uid"])
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # A cold worker's exec makes it dumpable (its own /proc files its own) and bubblewrap sets no_new_privs.
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE)")
    _as_if_started_here(spec["runtime"])
    from . import main

    main.serve(request_fd, response_fd, spec["packages"], tuple(spec["preload"]), spec["refuse"])
    _leave(0)


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40  # CAP_CHECKPOINT_RESTORE, the last in Linux 6.x


def _as_if_started_here(runtime: str) -> None:
    """What differs between a fork of this server and a fresh interpreter in the sandbox: the worker's code is
    found where the sandbox has it, the temporary folder is looked up again, and the random generators that
    were seeded when this server started are seeded anew, as each cold worker's were."""
    import tempfile

    import numpy as np

    sys.path[0] = runtime
    sys.modules["worker"].__path__ = [os.path.join(runtime, "worker")]
    tempfile.tempdir = None
    random.seed()
    np.random.seed()


def _leave(status: int) -> None:
    """Exit as an interpreter does at the end of its program (exit handlers, streams flushed), without returning
    into the server's loop."""
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)
