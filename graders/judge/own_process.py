"""A process of the judge's own, where no student code ever runs: the oracles' helper (graders.judge.oracles) and the
cost rungs' numpy baseline (graders.judge.numpy_baseline) are each one.

Each is a fresh ``python -I -B`` that imports the graders from the folder they were loaded from (never the working
folder) and runs ``serve(READ_FD, WRITE_FD, ...)`` of its module, which answers frames (graders.worker.protocol) on
two pipes until the judge closes them. It starts in a session of its own, at / and with only the environment the
workers get (``KEPT_ENV``, ``WORKER_PATH``, a fixed hash seed, one thread each for BLAS and torch), writes no core
file, and dies with the judge (``PR_SET_PDEATHSIG``: the thread that started it, the grade's).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys

from graders import paths
from graders.isolation.processes import KEPT_ENV, PR_SET_PDEATHSIG, THREADS_ENV, WORKER_PATH

ROOT_ENV = "AGL_JUDGE_ROOT"  # where the graders are, for the process's first import (popped at once)


class OwnProcess:
    """One such process as the judge sees it: ``process``, the pipe it reads (``to_process``) and the one it answers on
    (``from_process``)."""

    def __init__(self, module: str, arguments: str = "", env: dict[str, str] | None = None):
        """Start ``module``'s ``serve(read_fd, write_fd, <arguments>)``; ``env`` adds to the workers' environment."""
        to_read, self.to_process = os.pipe()
        self.from_process, from_write = os.pipe()
        environment = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
        environment.update(THREADS_ENV, **(env or {}), PATH=WORKER_PATH, PYTHONHASHSEED="0",
                           **{ROOT_ENV: str(paths.HERE.parent)})
        more = f", {arguments}" if arguments else ""
        code = (f"import os, sys; sys.path.insert(0, os.environ.pop({ROOT_ENV!r})); "
                f"from {module} import serve; serve({to_read}, {from_write}{more})")
        prctl = ctypes.CDLL(None).prctl  # looked up before the fork: the child only makes system calls

        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the judge

        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=environment, cwd="/", pass_fds=(to_read, from_write),
                start_new_session=True, preexec_fn=limits)
        except BaseException:
            os.close(self.to_process)
            os.close(self.from_process)
            raise
        finally:
            os.close(to_read)
            os.close(from_write)

    def running(self) -> bool:
        """Whether the process is alive, so that a dead one is replaced before the next request."""
        return self.process.poll() is None

    def stop(self) -> int | None:
        """Kill the process (its session) where it still runs, reap it and close its pipes; its exit status where it
        had exited by itself, else None."""
        status = self.process.poll()
        if status is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        for fd in (self.to_process, self.from_process):
            if fd != -1:
                os.close(fd)
        self.to_process = self.from_process = -1
        return status
