"""A submission's budgets over its whole process tree: memory, processes and a fair share of the CPU (cgroups).

Process limits (``worker_process.Limits``) bind one process each: four children of 1.5 GiB hold 6 GiB, and
forty busy children take forty shares of the CPU from a classmate graded at the same time. Where the judge
runs as root and the machine lets it make cgroups, every worker process of one grade joins one cgroup of
the grade's own, made under the judge's own cgroup (so the machine's limits on the judge still hold):

- memory: ``MEMORY_BYTES`` for all of the grade's workers together (the reference's peak is under 1 GiB);
  past it the kernel stops the grade's largest process, which reads as that worker dying;
- processes: ``PROCESSES`` at once, across the tree;
- CPU: one share, whatever the number of processes, against the other grades' cgroups, and at most
  ``CPU_CORES`` cores' worth at any moment (a CFS quota): forty busy children on a large machine take two
  cores, not forty. With the grade's wall-clock deadline, that bounds the CPU seconds of the whole tree.

cgroup v2 is used where it is mounted at /sys/fs/cgroup with the memory and pids controllers; else the
v1 hierarchies of those controllers (and cpu). Elsewhere there is no budget over the tree, and ``doctor``
says so (``describe``).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders import messages as msg

ROOT = Path("/sys/fs/cgroup")
MEMORY_BYTES = 4 * 2**30
PROCESSES = 512
CPU_CORES = 2
PERIOD_US = 100_000


def _own(controller: str, proc_cgroup: str) -> str | None:
    """The judge's own cgroup path in ``controller``'s v1 hierarchy ("" for v2's), from /proc/self/cgroup."""
    for line in proc_cgroup.splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(",") or (controller == "" and names == ""):
            return path
    return None


def version(root: Path = ROOT) -> str | None:
    """"v2", "v1", or None: which cgroups this judge can make with the memory and pids controllers."""
    if os.geteuid() != 0:
        return None
    if (root / "cgroup.controllers").is_file():
        controllers = (root / "cgroup.controllers").read_text().split()
        return "v2" if {"memory", "pids"} <= set(controllers) and os.access(root, os.W_OK) else None
    if all((root / c).is_dir() and os.access(root / c, os.W_OK) for c in ("memory", "pids")):
        return "v1"
    return None


@dataclass
class Budget:
    """One grade's cgroups: the folders made, and the ``cgroup.procs`` files a worker writes its pid into."""

    folders: list[Path] = field(default_factory=list)
    procs: list[Path] = field(default_factory=list)
    peak_file: Path | None = None

    @classmethod
    def make(cls, root: Path = ROOT) -> Budget:
        """The grade's cgroups, or an empty Budget (no budget over the tree) where none can be made. Those a dead
        judge left beside them go first (``sweep_stale``)."""
        kind = version(root)
        name = f"agl-{os.getpid()}-{secrets.token_hex(4)}"
        proc_cgroup = Path("/proc/self/cgroup").read_text()
        budget = cls()
        try:
            if kind == "v2":
                parent = root / _own("", proc_cgroup).lstrip("/")
                with contextlib.suppress(OSError):  # needed once per parent; refused where already set
                    (parent / "cgroup.subtree_control").write_text("+memory +pids +cpu")
                limits = {"memory.max": MEMORY_BYTES, "memory.swap.max": 0, "pids.max": PROCESSES,
                          "cpu.max": f"{CPU_CORES * PERIOD_US} {PERIOD_US}"}
                sweep_stale(parent)
                budget._folder(parent / name, limits, peak="memory.peak")
            elif kind == "v1":
                for controller, limits, peak in (
                        ("memory", {"memory.limit_in_bytes": MEMORY_BYTES}, "memory.max_usage_in_bytes"),
                        ("pids", {"pids.max": PROCESSES}, None),
                        ("cpu", {"cpu.cfs_period_us": PERIOD_US, "cpu.cfs_quota_us": CPU_CORES * PERIOD_US}, None)):
                    own = _own(controller, proc_cgroup)
                    if own is not None and (root / controller).is_dir():
                        sweep_stale(root / controller / own.lstrip("/"))
                        budget._folder(root / controller / own.lstrip("/") / name, limits, peak=peak)
        except OSError:
            budget.close()
            return cls()
        return budget

    def _folder(self, folder: Path, limits: dict, peak: str | None) -> None:
        folder.mkdir(mode=0o755)
        self.folders.append(folder)
        for knob, value in limits.items():
            if (folder / knob).exists():
                (folder / knob).write_text(str(value))
        self.procs.append(folder / "cgroup.procs")
        if peak and (folder / peak).exists():
            self.peak_file = folder / peak

    @property
    def active(self) -> bool:
        """Whether any cgroup was made: False where this machine allows none, and no budget then binds the process
        tree."""
        return bool(self.procs)

    def procs_fds(self) -> list[int]:
        """Every cgroup's ``cgroup.procs``, open for writing: a process joins by writing its pid (the caller
        closes them)."""
        return [os.open(path, os.O_WRONLY | os.O_CLOEXEC) for path in self.procs]

    def joiner(self):
        """What a worker's child runs before exec (as root, before dropping privileges): join every cgroup. The
        files are opened here, before the fork; the child only writes its pid."""
        fds = self.procs_fds()

        def join() -> None:
            pid = str(os.getpid()).encode()
            for fd in fds:
                os.write(fd, pid)

        def close() -> None:
            for fd in fds:
                os.close(fd)

        return join, close

    def peak_memory(self) -> int | None:
        """The most memory the grade's workers held together, in bytes, where the cgroup records it; None elsewhere.
        Reported with the worker's death, so a student sees a memory limit was hit."""
        try:
            return int(self.peak_file.read_text()) if self.peak_file else None
        except (OSError, ValueError):
            return None

    def close(self, seconds: float = 5.0) -> None:
        """Stop whatever is left in the grade's cgroups, then remove them."""
        deadline = time.monotonic() + seconds
        for folder in reversed(self.folders):
            while time.monotonic() < deadline:
                try:
                    pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                except (OSError, ValueError):
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.02)
            with contextlib.suppress(OSError):
                folder.rmdir()
        self.folders, self.procs = [], []


# A grade's cgroup is named after its judge's pid; the name an older version gave (a token alone) says no pid.
_NAMED = re.compile(r"agl-(?:(?P<pid>[0-9]+)-[0-9a-f]{8}|[0-9a-f]{12})")


def sweep_stale(parent: Path) -> list[Path]:
    """Remove the grade cgroups in ``parent`` that a judge killed mid-grade left (SIGKILL runs no cleanup: grade-all
    stops a judge past its timeout that way): those named after a pid that no longer runs, and those of an older
    version, named without one, when empty. A cgroup with a process in it is never removed (the kernel refuses),
    so a live grade keeps its own. Returns the folders removed."""
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        found = _NAMED.fullmatch(entry.name)
        if found is None or not entry.is_dir(follow_symlinks=False):
            continue
        if found["pid"] is not None and _runs(int(found["pid"])):
            continue
        with contextlib.suppress(OSError):  # busy (a process, a child cgroup) or gone meanwhile: left as it is
            os.rmdir(entry.path)
            removed.append(Path(entry.path))
    return removed


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe() -> str:
    """One line for doctor: what budgets bind a submission's whole process tree here."""
    kind = version()
    if kind is None:
        return msg.BUDGETS_NONE
    return msg.BUDGETS_CGROUP.format(kind=kind, gib=MEMORY_BYTES // 2**30, processes=PROCESSES, cores=CPU_CORES)
