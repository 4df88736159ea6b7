"""The judge's handle on one worker subprocess: start it with limits, ask, time, kill.

The worker is ``python -I`` in its own session (so its whole process group can
be killed), stdin from /dev/null, stdout and stderr to size-capped files, a
scratch working directory and a scrubbed environment. Requests and answers
travel over two pipes (``graders.worker.protocol``). A worker that dies or
misses its deadline is killed; the next request starts a fresh one.
"""

from __future__ import annotations

import glob
import os
import resource
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from . import sandbox
from .layout import Layout
from .worker import protocol

KEPT_ENV = ("PATH", "LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            # CUDA's driver and runtime (task 6.2) read these where a GPU is present.
            "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
THREADS_ENV = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
LOG_LIMIT = 1 << 20


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 120
    address_space: int = 8 * 2**30
    file_size: int = 64 * 2**20
    processes: int = 256

    @classmethod
    def for_this_machine(cls) -> Limits:
        """The default limits; where CUDA is present the address-space cap is lifted, since
        CUDA reserves far more virtual memory than it uses (memory is still bounded by the GPU's)."""
        if not glob.glob("/dev/nvidia*"):  # no GPU: don't import torch just to ask
            return cls()
        from . import reference

        return cls(address_space=resource.RLIM_INFINITY) if reference.cuda_available() else cls()


class WorkerDied(Exception):
    """The worker exited or broke the protocol before answering."""


class WorkerTimedOut(Exception):
    """The worker did not answer within the request's deadline."""


def _launcher(runtime, packages, request_fd: int, response_fd: int, preload: tuple[str, ...]) -> list[str]:
    code = (f"import sys; sys.path.insert(0, {str(runtime)!r}); "
            f"from worker.main import serve; serve({request_fd}, {response_fd}, {str(packages)!r}, {preload!r})")
    return [sys.executable, "-I", "-c", code]


def _become_subreaper() -> bool:
    """Have orphaned descendants (a worker's setsid daemons) reparent to this process, so they can be found."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    found[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return found


def _children(pid: int) -> list[int]:
    return [child for child, parent in _parents().items() if parent == pid]


def _descendants(pid: int) -> list[int]:
    parents = _parents()
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found += children
        todo += children
    return found


class Worker:
    def __init__(self, layout: Layout, limits: Limits | None = None, isolation: sandbox.Isolation | None = None,
                 preload: tuple[str, ...] = ()):
        self.layout, self.limits = layout, limits or Limits.for_this_machine()
        self.preload = preload
        self.isolation = isolation or sandbox.Isolation(bubblewrap=False, uid=None)
        sandbox.prepare(layout, self.isolation)
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self.last_cpu_seconds = 0.0
        self._subreaper = _become_subreaper()

    # ----- life cycle -----
    def start(self) -> None:
        request_read, request_write = os.pipe()
        response_read, response_write = os.pipe()
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
        iso = self.isolation
        env.update(THREADS_ENV, HOME=str(iso.work(self.layout)), PYTHONHASHSEED="0", MPLBACKEND="Agg")
        preload = self.preload if self.starts == 0 else ()  # a restarted worker imports only what it is asked
        argv = sandbox.wrap(_launcher(iso.runtime(self.layout), iso.packages(self.layout), request_read,
                                      response_write, preload), self.layout, iso)
        self._drop = sandbox.drop_privileges(iso)
        self._before = set(_children(os.getpid()))
        with open(self.layout.log / "stdout", "ab") as out, open(self.layout.log / "stderr", "ab") as err:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=self.layout.work, env=env,
                pass_fds=(request_read, response_write), start_new_session=True,
                preexec_fn=self._apply_limits,
            )
        os.close(request_read)
        os.close(response_write)
        self._to_worker, self._from_worker = request_write, response_read
        self.starts += 1

    def _apply_limits(self) -> None:
        limits = self.limits
        for which, value in ((resource.RLIMIT_CPU, limits.cpu_seconds), (resource.RLIMIT_AS, limits.address_space),
                             (resource.RLIMIT_FSIZE, limits.file_size), (resource.RLIMIT_NPROC, limits.processes),
                             (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))
        self._drop()

    def stop(self) -> None:
        """Kill the worker's whole process group, anything it left behind, and close the pipes."""
        if self.process is None:
            return
        leftovers = _descendants(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._kill(leftovers)
        self.process.wait()
        self._reap_orphans()
        for fd in (self._to_worker, self._from_worker):
            os.close(fd)
        self.process = None

    @staticmethod
    def _kill(pids) -> None:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _reap_orphans(self) -> None:
        """Kill and reap processes that a dead worker left (a setsid daemon reparents to us, the subreaper)."""
        if not self._subreaper:
            return
        for _ in range(100):
            orphans = [pid for pid in _children(os.getpid()) if pid not in self._before]
            if not orphans:
                return
            for pid in orphans:
                self._kill([pid])
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ----- requests -----
    def request(self, verb: str, args: dict, timeout: float, *, measure_cpu: bool = False) -> dict:
        """Send one request; the worker's reply ({"ok": ...} or {"error": ...}).

        With ``measure_cpu``, ``last_cpu_seconds`` is the CPU time the worker's
        processes spent on it, read from the kernel. Raises WorkerDied or
        WorkerTimedOut; either way the worker is stopped and the next request
        starts a fresh one.
        """
        if self.process is None:
            self.start()
        deadline = time.monotonic() + timeout
        cpu_before = self._cpu_seconds() if measure_cpu else 0.0
        try:
            protocol.write_all(self._to_worker, protocol.encode({"verb": verb, "args": args}))
            reply = protocol.decode(self._reader(deadline))
        except WorkerTimedOut:
            self.stop()
            raise
        except (EOFError, BrokenPipeError, protocol.ProtocolError) as error:
            self.stop()
            raise WorkerDied(str(error)) from None
        self.last_cpu_seconds = self._cpu_seconds() - cpu_before if measure_cpu else 0.0
        if not isinstance(reply, dict) or not ({"ok"} == set(reply) or {"error"} == set(reply)):
            self.stop()
            raise WorkerDied("the worker answered with a malformed reply")
        return reply

    def _reader(self, deadline: float):
        fd = self._from_worker

        def read_exactly(n: int) -> bytes:
            chunks, left = [], n
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                    raise WorkerTimedOut()
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    raise EOFError("the worker exited")
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)

        return read_exactly

    def _cpu_seconds(self) -> float:
        """CPU time the worker's process tree has used, from the kernel (not from the worker's word)."""
        if self.process is None:
            return 0.0
        pids = [self.process.pid] + (_descendants(self.process.pid) if self.isolation.bubblewrap else [])
        total = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return total / 1e9

    def last_words(self) -> str:
        """The last line the worker wrote to stderr, for a crash message (at most 200 characters)."""
        try:
            with open(self.layout.log / "stderr", "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
                lines = f.read().decode(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1][:200] if lines else ""
