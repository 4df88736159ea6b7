"""The judge's side of its fork servers: starting them, asking each for a worker forked into a bubblewrap sandbox,
and the handle on such a worker. The server's own side, the process that forks, is ``graders.worker.fork_server``.

A worker started cold is a fresh interpreter that imports numpy and, for the loop's workers, torch: most of a
class's CPU went there (three torch imports a submission, about 2 s of CPU each). Instead, where the judge runs
as root with bubblewrap, it keeps two fork servers, started once per judge process and kept for every grade after:
one has imported numpy and the worker's code, the other torch and the loop's stand-ins as well. A worker is then

- a sandbox made by bubblewrap with the very command a cold worker's is made with (its mounts, no network, a
  private pid namespace that dies with the judge, only the packages it serves; torch hidden from the numpy
  tasks' workers), holding nothing but a placeholder as its first process (pid 1 there);
- a fork of the server that enters those namespaces, becomes the worker's leased uid and serves; its parent is
  the placeholder, as a cold worker's is bubblewrap's first process.

What each server holds is what every worker holds anyway (the interpreter, numpy, torch, the worker's public
code): never a submission, an answer or any of the judge's state. The numpy tasks' workers are forked from
the server without torch, so that torch is neither loaded in them nor visible on their filesystem.
``tests/test_fork_servers.py`` holds a forked worker to a cold one: the same identity and privileges, files,
environment, interpreter, limits and namespaces, and a grade's results.json byte for byte.

``Forked`` is the judge's handle on such a worker, in the shape of ``subprocess.Popen``. Where a server cannot
start or fork (no root, no bubblewrap, a kernel that refuses ``setns``), or where ``AUTOGRAD_LAB_FORKSERVER=off``,
workers start cold, as before; nothing about a grade depends on which.
"""

from __future__ import annotations

import array
import atexit
import ctypes
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.isolation.processes import (
    KEPT_ENV,
    MALLOC_ENV,
    PR_SET_PDEATHSIG,
    THREADS_ENV,
    WORKER_PATH,
    children,
    kill_tree,
)

SWITCH_ENV = "AUTOGRAD_LAB_FORKSERVER"  # "off": every worker starts cold
READY_TIMEOUT = 120.0  # seconds a server may take to import torch on a loaded machine
SPAWN_TIMEOUT = 30.0  # seconds to make one worker (a fork and a few system calls; a loaded machine)
SANDBOX_READY_TIMEOUT = 30.0
MAX_REPLY = 4096
# The placeholder that holds a sandbox's namespaces: it says when bubblewrap has made the sandbox (a byte on the
# descriptor named), then sleeps until the worker is stopped.
PLACEHOLDER = ("/bin/sh", "-c", "printf . >/dev/fd/{fd} && exec sleep infinity")


class Unavailable(Exception):
    """No forked worker here: start a cold one."""


class Forked:
    """A worker forked by a server, as the judge sees it: what ``Worker`` uses of ``subprocess.Popen``. Its parent is
    the sandbox's first process, not the judge: its end is seen through a pidfd, and its status is not known
    (``returncode`` -1 once it has ended)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(pid) if pid > 0 else None
        except ProcessLookupError:
            pass
        if self._pidfd is None:  # ended already (its set-up failed)
            self.returncode = -1

    @classmethod
    def ended(cls) -> Forked:
        """A worker that ended before the judge could look (its set-up failed): the next request says it died."""
        return cls(0)

    def poll(self) -> int | None:
        """The worker's status if it has ended (-1: ended, its status unknown), else None, without waiting: what
        ``Worker`` asks of a Popen."""
        return self.wait(0)

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait up to ``timeout`` seconds (None: for ever) for the worker to end, through its pidfd; -1 once it has,
        else None."""
        if self.returncode is None and select.select([self._pidfd], [], [], timeout)[0]:
            self.returncode = -1
        return self.returncode

    def close(self) -> None:
        """Close the pidfd (the worker is not the judge's child, so no wait reaps it)."""
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class Server:
    """One fork server: its process, its control socket, and the folder its copy of the worker's code is in."""

    def __init__(self, torch_too: bool):
        self.torch_too = torch_too
        self.lock = threading.Lock()
        self.folder = Path(tempfile.mkdtemp(prefix="agl-fork-server-"))  # 0700: the server runs as root
        shutil.copytree(paths.WORKER, self.folder / "worker", ignore=shutil.ignore_patterns("__pycache__"))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
        env.update(THREADS_ENV | MALLOC_ENV, PATH=WORKER_PATH, PYTHONHASHSEED="0", MPLBACKEND="Agg",
                   AGL_FORK_SERVER_RUNTIME=str(self.folder))
        code = ("import os, sys; sys.path.insert(0, os.environ.pop('AGL_FORK_SERVER_RUNTIME')); "
                f"from worker.fork_server import serve_forks; serve_forks({theirs.fileno()}, {torch_too!r})")
        prctl = ctypes.CDLL(None).prctl
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, cwd=self.folder, pass_fds=(theirs.fileno(),),
                start_new_session=True, preexec_fn=lambda: prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0))
        except BaseException:
            ours.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        finally:
            theirs.close()
        self.control = ours
        self.ready = False

    def wait_ready(self, timeout: float) -> bool:
        """True once the server has imported what it preloads; False if it has not within ``timeout``."""
        if not self.ready and self._readable(timeout):
            self.ready = self.control.recv(MAX_REPLY) == b'{"ready": true}'
            if not self.ready:
                raise Unavailable("the fork server did not start")
        return self.ready

    def _readable(self, timeout: float) -> bool:
        return bool(select.select([self.control], [], [], max(0.0, timeout))[0])

    def spawn(self, spec: dict, fds: list[int], sandbox: Sandbox) -> Forked:
        """Fork a worker into ``sandbox`` (``spec["sandbox"]`` names its placeholder) with the descriptors ``fds``."""
        with self.lock:
            if not self.wait_ready(READY_TIMEOUT):
                raise Unavailable("the fork server did not get ready in time")
            self.control.sendmsg([json.dumps(spec).encode()],
                                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())])
            if not self._readable(SPAWN_TIMEOUT):
                raise Unavailable("the fork server did not answer in time")
            reply = json.loads(self.control.recv(MAX_REPLY) or b'{"error": "the fork server exited"}')
        if not reply.get("forked"):
            raise Unavailable(reply.get("error", "the fork server made no worker"))
        # The worker is the placeholder's only child (the second child the server forked exited, handing it over),
        # and runs no student code before its first request.
        found = children(sandbox.placeholder)
        if len(found) > 1:
            raise Unavailable(f"the sandbox holds {len(found)} processes beside the placeholder, not one")
        return Forked(found[0]) if found else Forked.ended()

    def close(self) -> None:
        """Stop the server (it leaves when its control socket closes; killed after 5 s) and remove its copy of the
        worker's code."""
        self.control.close()  # the server reads EOF and leaves
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_servers: dict[bool, Server] = {}
_broken: list[str] = []  # why workers are not forked for the rest of this process
_lock = threading.Lock()


def usable(isolation) -> bool:
    """Whether workers of ``isolation`` can be forked here: bubblewrap's sandbox, as root."""
    return isolation.bubblewrap and isolation.drop and not _broken and os.environ.get(SWITCH_ENV) != "off"


def server(torch_too: bool) -> Server:
    """This process's fork server of that kind, started on first use."""
    with _lock:
        if _broken:
            raise Unavailable(_broken[0])
        found = _servers.get(torch_too)
        if found is None or found.process.poll() is not None:
            if found is not None:
                found.close()
            try:
                found = _servers[torch_too] = Server(torch_too)
            except OSError as error:
                _broken.append(f"the fork server could not start: {error}")
                raise Unavailable(_broken[0]) from None
        return found


def start(torch_too: bool) -> None:
    """Start the servers a grade will fork from, so that they import while the judge works."""
    try:
        server(False)
        if torch_too:
            server(True)
    except Unavailable:
        pass


def ready(torch_too: bool) -> bool:
    """Whether that server has imported what it preloads (never waits)."""
    try:
        return server(torch_too).wait_ready(0)
    except Unavailable:
        return False


def describe(isolation) -> str:
    """One line for doctor: how this machine's workers start."""
    if os.environ.get(SWITCH_ENV) == "off":
        return msg.WORKERS_COLD_SWITCH.format(switch=SWITCH_ENV)
    if not (isolation.bubblewrap and isolation.drop):
        return msg.WORKERS_COLD
    return msg.WORKERS_FORKED


def pids() -> set[int]:
    """The servers' processes: the judge's own, never a worker's leftovers."""
    return {found.process.pid for found in _servers.values() if found.process.poll() is None}


def give_up(why: str) -> None:
    """Workers start cold from now on in this process (a sandbox that would not take a fork, say)."""
    _broken.append(why)


@atexit.register
def close_all() -> None:
    """Stop every fork server when the judge exits, so that no server (root, holding imported torch) outlives it."""
    with _lock:
        for found in _servers.values():
            found.close()
        _servers.clear()


@dataclass(frozen=True)
class Sandbox:
    """A sandbox bubblewrap made: bubblewrap's process, and the placeholder, the first process inside (pid 1 there:
    bubblewrap's ``--as-pid-1``, so that, as for a cold worker, the worker's parent is pid 1 and no other process of
    the sandbox is there for it to see)."""

    process: subprocess.Popen
    placeholder: int


class Launching:
    """bubblewrap making a sandbox for a placeholder: started, not waited for (a grade makes its sandboxes at once,
    then waits for each)."""

    def __init__(self, bwrap_prefix: list[str], **popen):
        self._ready, ready_write = os.pipe()
        try:
            placeholder = [*PLACEHOLDER[:-1], PLACEHOLDER[-1].format(fd=ready_write)]
            self.process = subprocess.Popen([*bwrap_prefix, "--as-pid-1", "--", *placeholder],
                                            pass_fds=(ready_write,), **popen)
        except BaseException:
            os.close(self._ready)
            raise
        finally:
            os.close(ready_write)

    def wait(self) -> Sandbox:
        """The sandbox, once bubblewrap has made it; raises Unavailable (and stops bubblewrap) if it does not."""
        try:
            if not select.select([self._ready], [], [], SANDBOX_READY_TIMEOUT)[0]:
                raise Unavailable("bubblewrap did not make the sandbox in time")
            if os.read(self._ready, 1) != b".":
                raise Unavailable(f"bubblewrap could not make the sandbox (status {self.process.wait()})")
            inner = children(self.process.pid)
            if len(inner) != 1:
                raise Unavailable(f"the sandbox holds {len(inner)} placeholders, not one")
            return Sandbox(self.process, inner[0])
        except BaseException:
            self.stop()
            raise
        finally:
            self.close()

    def stop(self) -> None:
        """Kill bubblewrap and its placeholder if they still run: a sandbox that was not made must leave nothing
        behind."""
        if self.process.poll() is None:
            kill_tree(self.process)

    def close(self) -> None:
        """Close the descriptor the placeholder says it is ready on; once only."""
        if self._ready != -1:
            os.close(self._ready)
            self._ready = -1
