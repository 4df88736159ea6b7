"""The processes a grade starts, seen from the kernel: every process's parent (from /proc), a process's
descendants, a process's peak memory, and the environment that keeps each on one thread."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys

from graders.isolation import uids

# BLAS and OpenMP on one thread each: a grade's numbers must not depend on how many cores the machine has, and
# a class's judges share the cores between them.
THREADS_ENV = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
# glibc's malloc keeps freed arrays of up to 32 MiB for the next allocation instead of handing them back to the
# kernel: otherwise a rule that holds two large temporaries at once pays a page fault per page for every new one
# (20 times the arithmetic, measured on 300 x 300 arrays), and a cost rung would time the allocator, not the rule.
# Workers, fork servers and the cost rungs' numpy baseline (graders.judge.numpy_baseline) run with it alike.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(256 * 2**20)}
# What a worker (and a fork server) keeps of the judge's environment, and the PATH it gets: never the judge's
# PATH, which names the judge's folders.
KEPT_ENV = ("LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# A folder where each grade writes where its CPU went (graders.judge.profile): the speed benchmark's, never a user's.
PROFILE_ENV = "AGL_PROFILE"
WORKER_PATH = "/usr/local/bin:/usr/bin:/bin"
PR_SET_PDEATHSIG = 1  # prctl: the signal a process gets when the thread that started it ends


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # /proc's unit of CPU time


def stat_cpu(pid: int, *, waited: bool = False) -> float:
    """The CPU seconds /proc/<pid>/stat gives ``pid`` (utime + stime), with ``waited`` those of the children it
    waited for too (cutime + cstime); 0 for a process that has ended or cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return sum(int(v) for v in fields[11:15 if waited else 13]) / CLOCK_TICKS
    except (OSError, ValueError, IndexError):
        return 0.0


def usage(pids) -> dict[int, tuple[float, float]]:
    """Each live process of ``pids`` with its CPU seconds (``stat_cpu``: its own, ended threads included) and the
    seconds its live threads have waited on a run queue for a CPU (``/proc/<pid>/task/*/schedstat``'s second field;
    0 where the kernel keeps none): what a process tree ran, and what a busy machine kept it from running."""
    found = {}
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        delay = 0.0
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    delay += int(f.read().split()[1]) / 1e9
            except (OSError, ValueError, IndexError):
                pass
        found[pid] = (stat_cpu(pid), delay)
    return found


def reset_peak_memory(pid: int) -> int | None:
    """Reset the peak resident memory the kernel keeps for ``pid`` (``/proc/<pid>/clear_refs``, "5": VmHWM back to
    VmRSS) and return its resident memory now, in bytes; None where this judge may not (a process not its own, a
    kernel without the file) or the process has ended."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return _status_bytes(pid, "VmRSS")


def peak_memory_growth(pid: int, before: int | None) -> int | None:
    """How far ``pid``'s peak resident memory (VmHWM) rose above ``before`` (``reset_peak_memory``'s reading), in
    bytes; None without a reading."""
    peak = _status_bytes(pid, "VmHWM") if before is not None else None
    return None if peak is None else max(0, peak - before)


def _status_bytes(pid: int, field: str) -> int | None:
    """A memory field of /proc/<pid>/status ("VmRSS", "VmHWM"), in bytes."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024  # the kernel writes kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def parents() -> dict[int, int]:
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


def children(pid: int) -> list[int]:
    """The children of ``pid``: from the kernel's list of each of its threads' children
    (``/proc/<pid>/task/<tid>/children``), or from the whole process table where the kernel keeps no such list."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(child) for child in f.read().split()]
        except FileNotFoundError:
            if os.path.isdir(f"/proc/{pid}/task/{tid}"):  # the thread is there, its list is not: none kept
                return [child for child, parent in parents().items() if parent == pid]
        except (OSError, ValueError):
            pass  # the thread ended meanwhile
    return found


def descendants(pid: int, of: dict[int, int] | None = None) -> list[int]:
    """Every process below ``pid``, nearest first; ``of``: a table from parents() taken already."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        below = children(current) if of is None else [child for child, parent in of.items() if parent == current]
        found += below
        todo += below
    return found


def signal_tree(popen: subprocess.Popen) -> list[int]:
    """SIGKILL to a process the judge started and to everything below it; what was below (to reap: those below
    are handed to the judge, a child subreaper, as their parents die)."""
    below = descendants(popen.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)
    for pid in below:
        uids.signal_if_uid(pid, None, signal.SIGKILL)
    return below


def kill_tree(popen: subprocess.Popen, below: list[int] | None = None) -> None:
    """Kill a process the judge started and everything below it, and wait for them; ``below``: what
    ``signal_tree`` signalled already."""
    below = (below or []) + (signal_tree(popen) if popen.poll() is None else [])
    popen.wait()
    for pid in dict.fromkeys(below):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def exit_without_teardown(code: int) -> None:
    """End the process without Python's finalization of its modules: with torch and matplotlib loaded it takes
    longer than some commands do (0.6 s after a grade, measured, and 1.2 s in a judge). The exit handlers run and
    the streams are flushed first, so nothing written is lost and nothing started is left (temporary folders, live
    workers, the fork servers)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            pass
    os._exit(code)
