"""The judge's handle on the worker subprocesses: start them with limits, ask, time, kill.

A worker is ``python -I`` in its own session (so its whole process group can
be killed), stdin from /dev/null, stdout and stderr to size-capped files, a
working directory of its own and a scrubbed environment (no CI variables, no
judge paths). Requests and answers travel over two pipes
(``graders.worker.protocol``). A worker that dies or misses its deadline is
killed, with everything it started; the next request starts a fresh one.

One ``Worker`` runs one process per *group*: the package a request names (a
hybrid of ``graders.submission.layout``) and the marker of the oracles its
student code may ask, if any. A process sees and imports only the packages of
its group, so student code never shares a process with the packages of the
other tasks. Run as root, each process runs as an unprivileged uid of its own
(``uids.lease_uid``); when it stops, every process of that uid is killed and
what it left in /tmp and the like removed.

The handle knows no verb and no oracle: the judge hands it, as functions, the
group each request goes to (``route``) and the answers to the oracle calls a
request's student code makes (``calls``), both ``graders.judge.routing``'s.
Nothing here imports the judge's grading, or torch.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from graders import messages as msg
from graders.isolation import bubblewrap, budget, fork_servers, sandbox, uids, work_files
from graders.isolation.processes import (
    CLOCK_TICKS,
    KEPT_ENV,
    MALLOC_ENV,
    PR_SET_PDEATHSIG,
    PROFILE_ENV,
    THREADS_ENV,
    WORKER_PATH,
    children,
    descendants,
    kill_tree,
    peak_memory_growth,
    reset_peak_memory,
    signal_tree,
    stat_cpu,
)
from graders.submission.layout import STANDINS, Layout
from graders.tasks import TORCH_MODULES, package_of
from graders.worker import protocol

# CUDA's driver and runtime (task 6.2) read these where a GPU is present.
GPU_ENV = ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
RUNTIME_ENV, PACKAGES_ENV = "AGL_WORKER_RUNTIME", "AGL_WORKER_PACKAGES"
POLL_SECONDS = 0.2  # how often a judge waiting for an answer reads the worker's CPU and checks that it still runs
# A request's wall-clock backstop: the seconds its worker may spend without computing (neither running nor waiting
# for a CPU: asleep, blocked on a pipe or a lock) before it is stopped. Time waiting for a CPU on a busy machine is
# never counted, nor time waiting for the judge's own answers (Calls), so no load of the machine comes near it.
IDLE_SECONDS = 20.0
ANSWER_SECONDS = 60.0  # the judge's answer to one oracle call (its own time, never the request's): a backstop
# The packages whose student module may import torch (docs/contract.md); every other worker refuses it.
TORCH_PACKAGES = tuple(package_of(module) for module in TORCH_MODULES)
# Packages whose stand-ins compute with torch (graders.submission.layout.STANDINS): their worker sees torch and
# imports the stand-ins before any student code, and still refuses the student's modules a plain ``import torch``.
STANDIN_PRELOAD = {package_of(module): ("worker.standins",) for module in STANDINS}
# Where a request goes: its verb and arguments -> the packages of the process that answers it (the judge's: the task
# table's routes, graders.judge.routing.group_of).
Route = Callable[[str, dict], tuple[str, ...]]


class Calls(Protocol):
    """The judge's answers to the oracle calls of one request (graders.judge.routing.Calls): made for the packages of
    the process that answers it, once whatever computes them is ready. Their time is the judge's: never on the
    request's clock, in CPU (another process computes them) or in time waited without computing."""

    failure: str | None  # why a call of this request was refused or failed: the request fails with it

    def __call__(self, call, deadline: float) -> dict:
        """The answer to a worker's ask_judge, by ``deadline`` (time.monotonic(): ``ANSWER_SECONDS`` from the call,
        a backstop): {"value": ...} or {"refused": why}. Raises protocol.ProtocolError for a call the process is not
        offered, WorkerTimedOut for one whose answer missed the deadline."""


@dataclass(frozen=True)
class Limits:
    """The limits each worker process gets (setrlimit): CPU seconds, address space, the size of every file it writes,
    and processes. They bind one process each; budget.py bounds the whole tree where the machine allows."""
    cpu_seconds: int = 120
    address_space: int = 4 * 2**30  # a worker that imports torch peaks below 1 GiB
    file_size: int = 16 * 2**20  # every file it writes, its stdout and stderr included
    processes: int = 256  # per worker uid (as root) or per uid (otherwise)

    @classmethod
    def for_this_machine(cls, cuda_available: Callable[[], bool]) -> Limits:
        """The default limits; where CUDA is present (``cuda_available``: the judge's, which asks torch) the
        address-space cap is lifted, since CUDA reserves far more virtual memory than it uses (memory is still
        bounded by the GPU's)."""
        if not glob.glob("/dev/nvidia*"):  # no GPU: don't import torch just to ask
            return cls()
        return cls(address_space=resource.RLIM_INFINITY) if cuda_available() else cls()


BATCH = "batch"  # the worker's verb for many requests in one round trip (worker.main)
STOP_WAIT = 5.0  # seconds a stopped worker forked into a sandbox is given to be gone with it
# A process's start, before its first request's clock: the CPU seconds it may take to serve (torch's import, the
# stand-ins'), and the seconds it may wait without computing (reading them from a cold disk).
READY_TIMEOUT = 60.0
MAX_UNTRUSTED_TEXT = 300
# Terminal escape sequences (CSI, OSC), then what is left of control and invisible formatting characters.
_ESCAPE_SEQUENCES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


_PLAIN = frozenset({int, float, bool, type(None), np.ndarray})  # what holds no text: as it came


def untrusted(value):
    """A worker's answer with every string in it (dict keys too) made plain text: no lone surrogates (they
    would stop the results file from being written), no escape sequences or control characters (they would
    repaint a terminal or break XML), and at most MAX_UNTRUSTED_TEXT characters. Views escape for their own
    syntax on top of this."""
    kind = type(value)
    if kind is str and len(value) <= MAX_UNTRUSTED_TEXT and value.isascii() and value.isprintable():
        return value  # nothing to take out (the common case: a name, a verb, a short message)
    if kind is dict:
        return {untrusted(key): item if type(item) in _PLAIN else untrusted(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _PLAIN else untrusted(item) for item in value]
    if isinstance(value, str):
        text = value.encode("utf-8", "replace").decode("utf-8")
        text = _CONTROL.sub(" ", _ESCAPE_SEQUENCES.sub("", text))
        return text if len(text) <= MAX_UNTRUSTED_TEXT else text[:MAX_UNTRUSTED_TEXT - 1] + "…"
    if isinstance(value, dict):
        return {untrusted(key): untrusted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [untrusted(item) for item in value]
    return value


def refused(packages: tuple[str, ...]) -> dict[str, str]:
    """What a process serving ``packages`` may not import, and why."""
    names = dict.fromkeys(sandbox.JUDGE_PACKAGES, msg.IMPORT_REFUSED_GRADERS)
    if not set(packages) & set(TORCH_PACKAGES):
        names.update(dict.fromkeys(bubblewrap.AUTODIFF, msg.IMPORT_REFUSED_AUTODIFF))
    return names


class WorkerDied(Exception):
    """The worker exited or broke the protocol before answering."""


class WorkerTimedOut(Exception):
    """The worker did not answer within the request's limits: it used ``seconds`` of CPU time, or, ``idle``, it
    waited ``seconds`` without using the CPU (the backstop for a worker that does not compute)."""

    def __init__(self, seconds: float = 0.0, *, idle: bool = False):
        super().__init__(f"{'waited' if idle else 'used'} {seconds:g} s")
        self.seconds, self.idle = seconds, idle


def _cpu_spent(before: tuple[float, float], after: tuple[float, float]) -> float:
    """The CPU seconds between two ``Worker._cpu_seconds``: the precise count of live threads, unless the tick
    count grew by more than its own granularity beyond it (work done in a thread or a child that has ended)."""
    live, ended = after[0] - before[0], after[1] - before[1]
    return ended if ended > live + 2 / CLOCK_TICKS else live


class _Clock:
    """One request's limits, read from the kernel while the judge waits for its answer (``read``, every
    POLL_SECONDS): the CPU seconds the worker's process tree spends on it (``spent``), up to ``cpu``; and, the
    backstop for a worker that does not compute, the seconds it waits without using the CPU (``idle``), up to
    ``idle_limit``. Waiting is wall time less what the tree ran or waited to run: the kernel counts a thread's
    time on a run queue (``schedstat``'s run delay, a cgroup's throttling included), so a worker slowed down by a
    busy machine computes all along, and waits not at all. Only what passes while the judge waits for the worker
    is counted (``pause`` ends a stretch): never the judge's own time, writing a request or answering a call."""

    def __init__(self, handle: Worker, process: _Process, cpu: float, idle: float):
        self.handle, self.process, self.cpu, self.idle_limit = handle, process, cpu, idle
        self.before = handle._usage(process)
        self.spent = self.idle = 0.0
        self.last: tuple[float, float, float] | None = None  # (time, spent, run delay) at the stretch's last read

    def check(self) -> None:
        """WorkerTimedOut when nothing is left of a limit: then no answer, however fast, is waited for."""
        if self.cpu <= 0:
            raise WorkerTimedOut(0.0)
        if self.idle_limit <= 0:
            raise WorkerTimedOut(0.0, idle=True)

    def read(self) -> None:
        """Read the tree's CPU and run delay; WorkerTimedOut once either limit is reached."""
        live, ended, delay = self.handle._usage(self.process)
        now = time.monotonic()
        self.spent = max(self.spent, _cpu_spent(self.before[:2], (live, ended)))
        if self.last is not None:
            then, spent, delayed = self.last
            self.idle += max(0.0, (now - then) - (self.spent - spent) - max(0.0, delay - delayed))
        self.last = (now, self.spent, delay)
        if self.spent >= self.cpu:
            raise WorkerTimedOut(self.cpu)
        if self.idle >= self.idle_limit:
            raise WorkerTimedOut(self.idle_limit, idle=True)

    def pause(self) -> None:
        """End the stretch of waiting: what passes until the next ``read`` is not the worker's."""
        self.last = None


def _launcher(request_fd: int, response_fd: int, preload: tuple[str, ...], refuse: dict[str, str]) -> list[str]:
    """The worker's command line. It names no folder: every process can read a command line, so the worker's code
    and packages are named in its environment (RUNTIME_ENV, PACKAGES_ENV), which only its own uid can read."""
    code = (f"import os, sys; sys.path.insert(0, os.environ.pop({RUNTIME_ENV!r})); from worker.main import serve; "
            f"serve({request_fd}, {response_fd}, os.environ.pop({PACKAGES_ENV!r}), {preload!r}, {refuse!r})")
    return [sys.executable, "-I", "-B", "-c", code]


def _uid_of(pid: int) -> int | None:
    """The real uid of ``pid`` (a zombie's too), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Uid:")), None)
    except (OSError, ValueError, IndexError):
        return None


def _finish(steps):
    """Run a generator to its end; its return value."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def _become_subreaper() -> bool:
    """Have orphaned descendants (a worker's setsid daemons) reparent to this process, so they can be found."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


# Every live worker process of this judge (any Worker, any thread): never mistaken for an orphan.
_live: set[int] = set()
_live_lock = threading.Lock()


def _preexec(limits: Limits, drop, join=lambda: None):
    values = [(resource.RLIMIT_CPU, limits.cpu_seconds), (resource.RLIMIT_AS, limits.address_space),
              (resource.RLIMIT_FSIZE, limits.file_size), (resource.RLIMIT_NPROC, limits.processes),
              (resource.RLIMIT_CORE, 0)]

    import ctypes

    prctl = ctypes.CDLL(None).prctl  # looked up before the fork: the child only makes system calls

    def run() -> None:
        for which, value in values:
            resource.setrlimit(which, (value, value))
        join()  # the grade's cgroups (budget.Budget), while still root
        drop()
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the judge (after the uid change clears it)

    return run


@dataclass
class _Process:
    """One worker process: the packages it serves, its pipes, its uid. ``popen`` is the process the judge
    started (the worker, or bubblewrap holding the sandbox of a forked worker); ``worker`` the one that answers
    (``popen`` itself, or the worker forked into that sandbox, ``fork_servers.Forked``)."""

    key: str
    packages: tuple[str, ...]
    popen: subprocess.Popen
    to_worker: int
    from_worker: int
    uid: int | None
    before: set[int] = field(default_factory=set)
    worker: subprocess.Popen | fork_servers.Forked | None = None
    ready: bool = False  # it has answered once: its imports are done, and a request's clock may start

    def __post_init__(self):
        self.worker = self.worker or self.popen


class Worker:
    """The judge's handle on one grade's worker processes: starts each in its sandbox under its limits and budgets,
    sends it requests and reads the answers, answers its oracle calls, times and kills it, and sweeps what it leaves.
    One handle serves every task of a grade."""
    def __init__(self, layout: Layout, *, route: Route, calls: Callable[[tuple[str, ...]], Calls],
                 limits: Limits | None = None, isolation: sandbox.Isolation | None = None,
                 preload: tuple[str, ...] = ()):
        """``route`` and ``calls``: the judge's, where each request goes and the answers to one request's oracle calls
        (graders.judge.routing). Without bubblewrap, as root, each process gets a root of its own that lists what it
        sees (``sandbox.Root``)."""
        self.layout, self.limits = layout, limits or Limits()
        self.route, self.calls = route, calls
        self.preload = preload
        self.isolation = isolation or sandbox.Isolation(bubblewrap=False)
        sandbox.prepare(layout, self.isolation)
        # Budgets over the whole tree of this grade's workers (cgroups; as root only, where the machine allows).
        self.budget = budget.Budget.make() if self.isolation.drop else budget.Budget()
        self.peak_memory: int | None = None
        self._processes: dict[str, _Process] = {}
        self._current: str | None = None
        self._started: set[str] = set()
        self.starts = 0
        self.round_trips = 0  # requests sent (a batch is one), for the speed benchmark's breakdown
        self.last_cpu_seconds = 0.0
        # What the requests so far have cost, the whole grade's budget (graders.judge.checks.base.Context): the CPU
        # seconds of the workers' processes, and the seconds they waited without computing. A start is not counted.
        self.cpu_used = 0.0
        self.idle_used = 0.0
        self.last_memory_growth: int | None = None  # bytes the last measured request's worker peaked above its start
        # The speed benchmark's accounting ($AGL_PROFILE, graders.judge.profile): each worker process's CPU as last
        # read, by its worker's pid, ended ones included (``account``). Off, nothing reads or keeps it.
        self.profiling = bool(os.environ.get(PROFILE_ENV))
        self._cpu_seen: dict[int, tuple[float, float, float]] = {}
        self.swept: list[str] = []  # what workers left in /tmp and the like, removed
        self._subreaper = _become_subreaper()
        # Why the last request's oracle calls were refused or failed (``Calls.failure``), in the student's terms: that
        # request failed with it, whatever its code did with the refusal.
        self.oracle_failure: str | None = None

    @property
    def process(self) -> subprocess.Popen | None:
        """The process that answered (or failed) the last request; None once it was stopped."""
        current = self._processes.get(self._current)
        return current.worker if current else None

    # ----- life cycle -----
    def start(self, packages: tuple[str, ...] | None = None, *,
              groups: tuple[tuple[str, ...], ...] = ()) -> list[tuple[str, ...]]:
        """Start the process for ``packages`` now; by default the one that preloads torch, if any, and those of
        ``groups`` (the checks' to come: graders.tasks.Task.worker_groups), so that they start while the judge is
        busy. The groups whose processes run now (those started, and those that ran already)."""
        wanted = [packages] if packages is not None else [TORCH_PACKAGES[:1]] if self.preload else []
        for group in groups if packages is None else ():
            if group not in wanted:
                wanted.append(group)
        if fork_servers.usable(self.isolation):
            # Forked workers: the servers import while the judge works; a group whose server is still importing
            # torch is started at its first request instead (in a moment, and never inside a request's time).
            fork_servers.start(torch_too=any(self._needs_torch(group) for group in wanted))
            wanted = [group for group in wanted if not self._needs_torch(group) or fork_servers.ready(torch_too=True)]
        todo = [group for group in dict.fromkeys(wanted) if ("+".join(group) or "none") not in self._processes]
        # Each forked worker's sandbox is made while the others' are: start them all, then finish each.
        steps = [self._starting(group) for group in todo]
        try:
            for step in steps:
                next(step, None)
            for step in steps:
                _finish(step)
        except BaseException:
            for step in steps:
                step.close()  # a sandbox made for a worker not started is stopped, its uid released
            raise
        return wanted

    @staticmethod
    def _needs_torch(packages: tuple[str, ...]) -> bool:
        """Whether the process serving ``packages`` sees torch: the torch_loop's, and those with stand-ins."""
        return any(package in TORCH_PACKAGES or package in STANDIN_PRELOAD for package in packages)

    def _start(self, packages: tuple[str, ...]) -> _Process:
        return _finish(self._starting(packages))

    def _starting(self, packages: tuple[str, ...]):
        """Start the process for ``packages``: a generator that yields once, where a forked worker's sandbox is
        being made (``start`` makes several at once), and returns the ``_Process``."""
        key = "+".join(packages) or "none"
        iso, layout = self.isolation, self.layout
        uid = uids.lease_uid() if iso.drop else None
        launching = popen = worker = None
        try:
            if not iso.bubblewrap:
                sandbox.prepare_work(iso.work(layout, key), uid)
            may_torch = bool(set(packages) & set(TORCH_PACKAGES))
            standins = tuple(name for package in packages for name in STANDIN_PRELOAD.get(package, ()))
            # A restarted worker imports only what it is asked; only the torch_loop package preloads torch.
            preload = standins + (self.preload if may_torch and key not in self._started else ())
            request_read, request_write = os.pipe()
            response_read, response_write = os.pipe()
            env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
            if glob.glob("/dev/nvidia*"):
                env.update({k: os.environ[k] for k in GPU_ENV if k in os.environ})
            work = str(iso.work(layout, key))
            env.update(THREADS_ENV | MALLOC_ENV, PATH=WORKER_PATH, HOME=work, TMPDIR=work, PYTHONHASHSEED="0",
                       MPLBACKEND="Agg")
            env.update({RUNTIME_ENV: str(iso.runtime(layout)), PACKAGES_ENV: str(iso.packages(layout, packages))})
            if self.profiling:
                env[protocol.PROFILE_ENV] = "1"
            block_autodiff = not (may_torch or standins)
            join, release = self.budget.joiner()
            before: set[int] = set()
            with open(layout.log / f"{key}.stdout", "wb") as out, open(layout.log / f"{key}.stderr", "wb") as err:
                try:
                    if fork_servers.usable(iso):
                        launching = self._launch_sandbox(packages, env, (out, err), block_autodiff)
                    if launching is not None:
                        yield
                        popen, worker = self._fork_into(launching, packages, uid, preload, env, (out, err),
                                                        (request_read, response_write))
                    if popen is None:
                        argv = sandbox.wrap(_launcher(request_read, response_write, preload, refused(packages)),
                                            layout, iso, packages, uid, block_autodiff)
                        root = sandbox.Root.of(layout, iso, packages, key, torch_too=not block_autodiff)
                        preexec = _preexec(self.limits, sandbox.drop_privileges(iso, uid, root), join)
                        with _live_lock:
                            before = set(children(os.getpid()))
                            popen = subprocess.Popen(
                                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                cwd=layout.work if iso.bubblewrap else work, env=env,
                                pass_fds=(request_read, response_write), start_new_session=True, preexec_fn=preexec)
                            _live.add(popen.pid)
                    else:
                        with _live_lock:
                            _live.update({popen.pid, worker.pid})
                finally:
                    os.close(request_read)
                    os.close(response_write)
                    release()
        except BaseException:
            if launching is not None and popen is None:
                launching.stop()
                launching.close()
            if uid is not None:
                uids.release_uid(uid)
            raise
        process = _Process(key, packages, popen, request_write, response_read, uid, before, worker)
        self._processes[key] = process
        self._started.add(key)
        self.starts += 1
        return process

    def _launch_sandbox(self, packages, env, logs, block_autodiff) -> fork_servers.Launching | None:
        """bubblewrap making the sandbox a cold worker would run in, for a worker to be forked into; None where
        no fork server can be had (the worker starts cold, and so does every later one of this process)."""
        try:
            fork_servers.server(torch_too=self._needs_torch(packages))
            # No preexec_fn, so that Python may vfork: the limits and the cgroups are the forked worker's to take
            # (graders.worker.fork_server), and bubblewrap dies with the judge (--die-with-parent).
            return fork_servers.Launching(
                bubblewrap.command(self.layout, packages, block_autodiff), stdin=subprocess.DEVNULL, stdout=logs[0],
                stderr=logs[1], cwd=self.layout.work, env=env, start_new_session=True)
        except (fork_servers.Unavailable, OSError, ValueError) as error:
            fork_servers.give_up(f"{type(error).__name__}: {error}")
            return None

    def _fork_into(self, launching: fork_servers.Launching, packages, uid, preload, env, logs, pipes):
        """The fork server of the worker's kind forks it into the sandbox ``launching`` makes: (bubblewrap's
        process, the worker), or (None, None) where that cannot be had (the sandbox is stopped, the worker
        starts cold, and so does every later one of this process)."""
        iso, layout = self.isolation, self.layout
        try:
            made = launching.wait()
            limits = {"cpu_seconds": self.limits.cpu_seconds, "address_space": self.limits.address_space,
                      "file_size": self.limits.file_size, "processes": self.limits.processes}
            spec = {"sandbox": made.placeholder, "uid": uid, "cwd": str(iso.work(layout, "")), "limits": limits,
                    "runtime": str(iso.runtime(layout)), "packages": str(iso.packages(layout, packages)),
                    "preload": list(preload), "refuse": refused(packages),
                    "env": {**{k: v for k, v in env.items() if k not in (RUNTIME_ENV, PACKAGES_ENV)},
                            "PWD": str(iso.work(layout, ""))}}  # as bubblewrap's --chdir sets it
            cgroups = self.budget.procs_fds()
            try:
                with open(os.devnull, "rb") as null:
                    fds = [null.fileno(), logs[0].fileno(), logs[1].fileno(), *pipes, *cgroups]
                    return made.process, fork_servers.server(self._needs_torch(packages)).spawn(spec, fds, made)
            finally:
                for fd in cgroups:
                    os.close(fd)
        except (fork_servers.Unavailable, OSError, ValueError) as error:
            fork_servers.give_up(f"{type(error).__name__}: {error}")
            launching.stop()
            return None, None

    @contextlib.contextmanager
    def work_folder(self, verb: str, args: dict):
        """A descriptor of the working folder of the process that answers ``verb`` with ``args``, opened by the
        judge from outside it (graders.isolation.work_files); Unreachable where there is none or it cannot be
        opened. With bubblewrap the folder is the sandbox's tmpfs, reached through ``/proc/<pid>/root`` of a
        process inside: the forked worker, or one below bubblewrap's first process."""
        key = "+".join(self._group(verb, args)) or "none"
        process = self._processes.get(key)
        if process is None or process.popen.poll() is not None or process.worker.poll() is not None:
            raise work_files.Ended("the worker process has ended")
        if not self.isolation.bubblewrap:
            with work_files.opened(self.layout.work / key) as folder:
                yield folder
            return
        inside = [process.worker.pid] if process.worker is not process.popen else descendants(process.popen.pid)
        if not inside:
            raise work_files.Ended("no process is left inside the sandbox")
        below = bubblewrap.SANDBOX.relative_to("/").parts + ("work",)
        with work_files.opened(Path(f"/proc/{inside[0]}/root"), below) as folder:
            yield folder

    def owner(self, verb: str, args: dict) -> int | None:
        """The uid of the process that answers ``verb`` with ``args`` (None: the judge's own)."""
        process = self._processes.get("+".join(self._group(verb, args)) or "none")
        return process.uid if process else None

    def stop(self) -> None:
        """Stop every worker process: kill each whole process group, anything it left behind, and close the pipes.
        Every process is signalled first, so that their ends (a pid namespace's, bubblewrap's) overlap."""
        if self.profiling:
            self.account()  # the CPU of each, before they end
        signalled = {key: signal_tree(process.popen) for key, process in self._processes.items()
                     if process.popen.poll() is None}
        for key in list(self._processes):
            self._stop(key, signalled.get(key))

    def _stop(self, key: str, signalled: list[int] | None = None) -> None:
        process = self._processes.get(key)
        if process is None:
            return
        if self.profiling:
            self._seen(process)  # its CPU, before it ends
        del self._processes[key]
        pid = process.popen.pid
        if process.popen.poll() is None or signalled:  # not reaped yet, so its pid (and group id) is still its own
            # bubblewrap's own second process among those below (root, in our group), and a forked worker
            kill_tree(process.popen, signalled)
        process.popen.wait()
        if isinstance(process.worker, fork_servers.Forked):
            process.worker.wait(STOP_WAIT)  # gone with its sandbox's pid namespace (and by uid below, if not)
            process.worker.close()
        with _live_lock:
            _live.difference_update({pid, process.worker.pid})
        if process.uid is not None:
            # Under bubblewrap the worker's pid namespace went with its first process (kill_tree waited for it):
            # nothing of its uid is left to fork, and no orphan of it can be handed to the judge.
            uids.kill_uid(process.uid, quiet_scans=1 if self.isolation.bubblewrap else uids.QUIET_SCANS)
        if not self.isolation.bubblewrap:
            self._reap_orphans(process)
        for fd in (process.to_worker, process.from_worker):
            os.close(fd)
        if process.uid is not None:
            if not self.isolation.bubblewrap:
                self.swept += uids.sweep(process.uid)
            uids.release_uid(process.uid)

    def _reap_orphans(self, process: _Process) -> None:
        """Kill and reap processes that a dead worker left (a setsid daemon reparents to us, the subreaper):
        with a worker uid, the judge's children of that uid; else its children that are no worker's and
        were not there before this one started."""
        if not self._subreaper:
            return
        for _ in range(100):
            orphans = self._orphans(process)
            if not orphans:
                return
            for pid in orphans:
                uids.signal_if_uid(pid, process.uid, signal.SIGKILL)
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass

    def _orphans(self, process: _Process) -> list[int]:
        """The judge's children that ``process`` left (a setsid daemon reparents to us, the subreaper), zombies
        included: with a worker uid, those of that uid; else those that are no worker's and were not there before
        it started. None under bubblewrap, where they stay in the worker's pid namespace, below its sandbox."""
        if not self._subreaper or self.isolation.bubblewrap:
            return []
        with _live_lock:
            ours = children(os.getpid())  # read while a request waits: the judge's own children, not all of /proc
            if process.uid is not None:
                return [pid for pid in ours if _uid_of(pid) == process.uid]
            return [pid for pid in ours if pid not in process.before and pid not in _live]

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        self.peak_memory = self.budget.peak_memory()
        self.budget.close()

    # ----- requests -----
    def request(self, verb: str, args: dict, timeout: float, *, idle: float = IDLE_SECONDS,
                measure_cpu: bool = False, measure_memory: bool = False) -> dict:
        """Send one request to the process of its group; the worker's reply ({"ok": ...} or {"error": ...}).

        ``timeout`` is CPU seconds: what the worker's processes may spend on the request, read from the kernel while
        the judge waits, so that a busy machine, which slows the worker down, never stops it. ``idle`` is the
        backstop for a worker that does not compute: the seconds it may wait without using the CPU (``_Clock``).
        The clock starts once the process serves: a process started for the request is waited for first
        (``_ready``). With ``measure_cpu``, ``last_cpu_seconds`` is the CPU time the request took; with
        ``measure_memory``, ``last_memory_growth`` how far the worker's peak resident memory rose over it (None where
        it cannot be read). Raises WorkerDied or WorkerTimedOut; either way that process is stopped and the next
        request starts a fresh one.
        """
        packages = self._group(verb, args)
        key = "+".join(packages) or "none"
        self._current = key
        self.oracle_failure = None
        process = self._processes.get(key) or self._start(packages)
        if not process.ready:
            self._ready(process)
        calls = self.calls(packages)  # what answers them ready: never a request's time
        memory_before = reset_peak_memory(process.worker.pid) if measure_memory else None
        self.round_trips += 1
        clock = _Clock(self, process, timeout, idle)
        try:
            reply = self._exchange(process, {"verb": verb, "args": args}, clock, calls)
        finally:
            self.cpu_used += clock.spent
            self.idle_used += clock.idle
        self.last_cpu_seconds = clock.spent if measure_cpu else 0.0
        self.last_memory_growth = peak_memory_growth(process.worker.pid, memory_before)
        return reply

    def _exchange(self, process: _Process, message: dict, clock: _Clock, calls: Calls | None = None) -> dict:
        """Send ``message`` to ``process`` and read its reply, answering its oracle calls meanwhile, within
        ``clock``'s limits; ``clock.spent`` is then the CPU time it took. On any failure the process is stopped."""
        try:
            clock.check()
            protocol.write_all(process.to_worker, protocol.encode(message))
            reader = self._reader(process.from_worker, clock, process.worker)
            reply = protocol.decode(reader)
            while calls is not None and isinstance(reply, dict) and set(reply) == {"call"}:
                try:
                    answer = calls(reply["call"], time.monotonic() + ANSWER_SECONDS)
                finally:
                    self.oracle_failure = calls.failure
                clock.pause()  # the judge's time, not the worker's
                protocol.write_all(process.to_worker, protocol.encode(answer))
                reply = protocol.decode(reader)
            clock.read()
        except WorkerTimedOut:
            self._stop(process.key)
            raise
        except (EOFError, OSError, protocol.ProtocolError) as error:
            self._stop(process.key)
            raise WorkerDied(str(error)) from None
        if not isinstance(reply, dict) or not ({"ok"} == set(reply) or {"error"} == set(reply)):
            self._stop(process.key)
            raise WorkerDied("the worker answered with a malformed reply")
        return untrusted(reply)

    def _ready(self, process: _Process) -> None:
        """Wait until ``process`` serves (its imports done, torch among them: it answers an empty batch), within
        READY_TIMEOUT of CPU time and of waiting, never on a request's clock or the grade's budget. A process that
        does not get there is stopped: WorkerDied, the next request's failure (its start runs no student code)."""
        try:
            self._exchange(process, {"verb": BATCH, "args": {"requests": []}},
                           _Clock(self, process, READY_TIMEOUT, READY_TIMEOUT))
        except WorkerTimedOut as error:
            raise WorkerDied(f"the worker did not start: it {error}") from None
        process.ready = True

    def request_batch(self, requests: list[tuple[str, dict]], timeout: float, *,
                      idle: float = IDLE_SECONDS) -> list[dict] | None:
        """The worker's replies to many requests of one group, asked in one round trip, in order; None when the
        batch could not be answered whole (the worker died, ran past ``timeout`` or ``idle`` or answered out of
        shape: then that process is stopped, and each request is to be asked alone, so that the one that failed
        fails the way it would have alone)."""
        groups = {self._group(verb, args) for verb, args in requests}
        if len(groups) != 1:
            raise ValueError(f"a batch is asked of one group of packages, not {sorted(groups)}")
        try:
            reply = self.request(BATCH, {"requests": [{"verb": verb, "args": args} for verb, args in requests]},
                                 timeout, idle=idle)
        except (WorkerDied, WorkerTimedOut):
            return self._restarted(groups.pop())
        if self.oracle_failure is not None:  # asked alone, the request that made it fails with it
            return None
        replies = reply.get("ok")
        if not (isinstance(replies, list) and len(replies) == len(requests) and all(
                isinstance(one, dict) and set(one) in ({"ok"}, {"error"}) for one in replies)):
            self._stop(self._current)
            return self._restarted(groups.pop())
        return replies

    def _restarted(self, packages: tuple[str, ...]) -> None:
        """Start a fresh process for ``packages`` and wait until it serves: the requests of the batch that stopped
        the last one are now asked one at a time, and a start that fails is the next request's to report."""
        try:
            self._ready(self._start(packages))
        except (WorkerDied, WorkerTimedOut):
            pass
        return None

    def _group(self, verb: str, args: dict) -> tuple[str, ...]:
        """The packages of the process that answers ``verb`` with ``args``: the judge's ``route``; for a batch, that
        of its requests (``request_batch`` keeps them to one group)."""
        if verb != BATCH:
            return self.route(verb, args)
        first = args["requests"][0]
        return self.route(first["verb"], first["args"])

    @staticmethod
    def _reader(fd: int, clock: _Clock, popen: subprocess.Popen):
        """``read_exactly`` over the response pipe, within ``clock``'s limits, read every POLL_SECONDS while nothing
        comes. A worker that exited counts as gone at once, even while something it started still holds the pipe
        open (no EOF would ever come)."""

        def wait_readable() -> None:
            while True:
                if select.select([fd], [], [], POLL_SECONDS)[0]:
                    clock.pause()  # the worker answers: what comes next is a new wait
                    return
                if popen.poll() is not None and not select.select([fd], [], [], 0)[0]:
                    raise EOFError(f"the worker exited (status {popen.returncode})")
                clock.read()

        return protocol.fd_reader(fd, wait=wait_readable, closed="the worker exited")

    def _cpu_seconds(self, process: _Process) -> tuple[float, float]:
        """CPU time the worker's process tree has used, from the kernel (``_usage``): (live, ended)."""
        return self._usage(process)[:2]

    def _usage(self, process: _Process) -> tuple[float, float, float]:
        """What the worker's process tree has used, from the kernel (not from the worker's word): its CPU time,
        every thread of every process in nanoseconds while they live (``/proc/<pid>/task/*/schedstat``), and, in
        clock ticks, with what ended threads and waited-for children spent (``/proc/<pid>/stat``); and the time
        its live threads waited on a run queue for a CPU (schedstat's second field; 0 where the kernel keeps
        none). The tree includes what the worker left to the judge, a setsid daemon that does the work
        (``_orphans``): while it lives, and once it has ended, as a zombie the judge has not reaped. Only those of
        the worker's own uid: without one, a process of another grade's could be counted."""
        live = ended = delay = 0.0
        left = self._orphans(process) if process.uid is not None else []
        roots = dict.fromkeys((process.worker.pid, process.popen.pid, *left))
        trees = dict.fromkeys(pid for root in roots for pid in (root, *descendants(root)))
        for pid in trees:
            for stat in glob.glob(f"/proc/{pid}/task/*/schedstat"):
                try:
                    with open(stat) as f:
                        fields = f.read().split()
                    live += int(fields[0]) / 1e9
                    delay += int(fields[1]) / 1e9
                except (OSError, ValueError, IndexError):
                    pass
            ended += stat_cpu(pid, waited=True)
        return live, ended, delay

    # ----- the speed benchmark's accounting -----
    def account(self) -> dict[str, float]:
        """What every worker process of this handle has spent so far, ended ones included, in CPU seconds: all of it
        (``worker``: read by the judge from /proc) and the shares the workers say went to the student's code and to
        the stand-ins (graders.worker.profiling's: their word, for the benchmark only). Only with ``profiling``."""
        for process in self._processes.values():
            self._seen(process)
        totals = [sum(seen[i] for seen in self._cpu_seen.values()) for i in range(3)]
        return {"worker": totals[0], "student": totals[1], "standins": totals[2], "round_trips": self.round_trips,
                "starts": self.starts}

    def _seen(self, process: _Process) -> None:
        """Read ``process``'s worker's CPU (/proc) and its last totals (its stdout log) into ``_cpu_seen``. A process
        that cannot be read any more keeps its last reading."""
        pid = process.worker.pid
        cpu, student, standins = self._cpu_seen.get(pid, (0.0, 0.0, 0.0))
        cpu = max(cpu, *self._cpu_seconds(process))  # the tree's, as the cost rungs read it
        try:
            with open(self.layout.log / f"{process.key}.stdout", "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 65536))
                tail = f.read()
            line = tail[tail.rindex(protocol.PROFILE_MARK) + len(protocol.PROFILE_MARK):].split(b"\n", 1)[0].split()
            student, standins = float(line[0]), float(line[1])
        except (OSError, ValueError, IndexError):
            pass
        self._cpu_seen[pid] = (cpu, student, standins)

    def last_words(self) -> str:
        """The last line the last-asked worker wrote to stderr, for a crash message (at most 200 characters)."""
        try:
            with open(self.layout.log / f"{self._current}.stderr", "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
                lines = f.read(4096).decode(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1][:200] if lines else ""
