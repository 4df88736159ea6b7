"""How the worker is isolated: process limits always, bubblewrap where it exists.

- Always: CPU seconds, address space, file size, process count, no core
  files, a session of its own, stdin from /dev/null, a scrubbed environment.
- Run as root, the worker is dropped to an unprivileged uid of its own
  (limits on processes do not bind root), where the interpreter is reachable.
- With bubblewrap: no network, a private pid namespace that dies with the
  judge, the interpreter read-only, the submission's hybrids read-only, a
  writable scratch folder, and nothing else of the filesystem.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .layout import Layout

BWRAP = "bwrap"
WORKER_UID_BASE = 61000
SANDBOX = Path("/sandbox")


@dataclass(frozen=True)
class Isolation:
    bubblewrap: bool
    uid: int | None  # the uid the worker runs as, when dropped from root

    @property
    def name(self) -> str:
        return "bubblewrap" if self.bubblewrap else "process limits"

    def describe(self) -> str:
        parts = ["process limits"]
        if self.bubblewrap:
            parts.append("bubblewrap (no network, private pid namespace, read-only interpreter)")
        if self.uid is not None:
            parts.append("an unprivileged uid")
        elif os.geteuid() == 0:
            parts.append("running as root (the process-count limit does not bind)")
        return ", ".join(parts)

    # ----- paths as the worker sees them -----
    def runtime(self, layout: Layout) -> Path:
        return SANDBOX / "runtime" if self.bubblewrap else layout.runtime

    def packages(self, layout: Layout) -> Path:
        return SANDBOX / "pkgs" if self.bubblewrap else layout.packages

    def work(self, layout: Layout) -> Path:
        return SANDBOX / "work" if self.bubblewrap else layout.work


@functools.cache
def bubblewrap_works() -> bool:
    """True when bwrap is installed and can make a sandbox on this machine."""
    if shutil.which(BWRAP) is None:
        return False
    try:
        probe = subprocess.run([BWRAP, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent",
                                "--proc", "/proc", "--dev", "/dev", "true"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _reachable_by_others(path: Path) -> bool:
    """Can an unprivileged uid read ``path`` (every folder above it searchable by others)?"""
    path = path.resolve()
    for folder in [path, *path.parents]:
        if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
            return False
    return True


def choose(mode: str = "auto") -> Isolation:
    """The isolation to use: ``mode`` is "auto" (bubblewrap where it works), "bubblewrap" or "limits"."""
    if mode not in ("auto", "bubblewrap", "limits"):
        raise ValueError(f"got sandbox={mode!r}, expected 'auto', 'bubblewrap' or 'limits'")
    use_bwrap = mode != "limits" and bubblewrap_works()
    if mode == "bubblewrap" and not use_bwrap:
        raise RuntimeError("bubblewrap was asked for, but `bwrap` is missing or cannot make a sandbox here "
                           "(Debian/Ubuntu: apt-get install bubblewrap)")
    uid = None
    if os.geteuid() == 0 and (use_bwrap or _reachable_by_others(Path(sys.executable).parent)):
        uid = WORKER_UID_BASE + os.getpid() % 4000
    return Isolation(use_bwrap, uid)


def prepare(layout: Layout, isolation: Isolation) -> None:
    """Let the worker's uid read the hybrids and write its scratch folder."""
    if isolation.uid is None:
        return
    layout.root.chmod(0o711)
    for folder in (layout.runtime, layout.packages):
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    os.chown(layout.work, isolation.uid, isolation.uid)


def _interpreter_paths() -> list[str]:
    found = []
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))):
        if path and not any(path == p or path.startswith(p + os.sep) for p in found):
            found.append(path)
    return found


def _bubblewrap_prefix(layout: Layout) -> list[str]:
    argv = [BWRAP, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for system in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/alternatives"):
        argv += ["--ro-bind-try", system, system]
    for device in sorted(glob.glob("/dev/nvidia*")):  # the GPU, where there is one (task 6.2)
        argv += ["--dev-bind-try", device, device]
    for path in _interpreter_paths():
        # Folders above the interpreter (such as /root) are made searchable, so the dropped uid reaches it.
        for folder in reversed(Path(path).parents[:-1]):
            argv += ["--perms", "0755", "--dir", str(folder)]
        argv += ["--ro-bind", path, path]
    argv += ["--perms", "0755", "--dir", str(SANDBOX),
             "--ro-bind", str(layout.runtime), str(SANDBOX / "runtime"),
             "--ro-bind", str(layout.packages), str(SANDBOX / "pkgs"),
             "--bind", str(layout.work), str(SANDBOX / "work"),
             "--chdir", str(SANDBOX / "work"), "--setenv", "HOME", str(SANDBOX / "work")]
    return argv


def wrap(argv: list[str], layout: Layout, isolation: Isolation) -> list[str]:
    """The command that starts ``argv`` (a Python command) under ``isolation``."""
    if not isolation.bubblewrap:
        return argv
    prefix = _bubblewrap_prefix(layout)
    if isolation.uid is None:
        return [*prefix, "--", *argv]
    # bubblewrap runs as root; inside, drop to the worker's uid before any student code exists.
    drop = (f"import os; os.setgroups([]); os.setgid({isolation.uid}); os.setuid({isolation.uid}); "
            f"os.execv({argv[0]!r}, {argv!r})")
    return [*prefix, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", sys.executable, "-I", "-S", "-c", drop]


def drop_privileges(isolation: Isolation):
    """What the child runs before exec when no sandbox drops it: setgid/setuid to the worker's uid."""
    if isolation.bubblewrap or isolation.uid is None:
        return lambda: None

    def drop() -> None:
        os.setgroups([])
        os.setgid(isolation.uid)
        os.setuid(isolation.uid)

    return drop
