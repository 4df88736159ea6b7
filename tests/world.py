"""A world of the test's own making for a grade run as a subprocess: a mount namespace in which every folder a
user of this machine could have filled (every top-level folder of / but the system's, /var/tmp and /dev/shm) is
an empty tmpfs, with only what the test names mounted back (the checkout, the interpreter, the test's own folder).

Without bubblewrap a worker reads what any user can read. A test that asserts "the worker found no copy of the
solution" would then depend on what strangers keep on the machine (another clone in /tmp, a colleague's checkout
under /home): in this world there is none but the copies the test made itself, which the judge must hide.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from graders import paths
from graders.isolation import bubblewrap, sandbox
from graders.judge import examples_cache

# The system's folders (only root writes there); everything else at the top of / is covered.
SYSTEM_TOPS = frozenset({"proc", "sys", "dev", "run", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
                         "etc", "boot", "var", "snap", "lost+found"})
ALSO_COVERED = ("/var/tmp", "/dev/shm")
_CLONE_NEWNS, _MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x00020000, 2, 4, 4096, 16384, 1 << 18


def works() -> bool:
    """Whether this machine lets the test build such a world (root with mount namespaces)."""
    return sandbox.namespaces_work()


def needed(*extra: Path) -> list[str]:
    """What a grade needs of the real machine: the checkout, the interpreter, the examples cache, and ``extra``."""
    cache = examples_cache.folder()
    kept = [str(paths.REPO), *bubblewrap.interpreter_paths(), *(str(p) for p in extra)]
    if cache is not None:
        kept.append(str(cache))
    return [os.path.realpath(p) for p in kept if os.path.exists(p)]


def covered() -> list[str]:
    tops = [entry.path for entry in os.scandir("/") if entry.name not in SYSTEM_TOPS
            and entry.is_dir(follow_symlinks=False)]
    return [*tops, *(f for f in ALSO_COVERED if os.path.isdir(f) and not os.path.islink(f))]


def preexec(keep: list[str], also: tuple[tuple[str, str], ...] = ()):
    """The ``preexec_fn`` that builds the world in the child before it execs; ``also``: (source, target) folders of
    the real machine bound at another place of the world (a second torch where a stranger could have installed one).
    Everything is worked out here, before the fork: the child makes system calls only."""
    libc = ctypes.CDLL(None, use_errno=True)
    covers = covered()
    kept = [(path, cover) for cover in covers for path in keep if path.startswith(cover + os.sep)]
    kept += [(path, path) for path in keep if path in covers]  # a kept folder that is itself a top: left alone
    covers = [c for c in covers if c not in keep]
    calls = [(libc.unshare, (_CLONE_NEWNS,)), (libc.mount, (b"none", b"/", None, _MS_REC | _MS_PRIVATE, None))]
    opened: list[int] = []

    def run() -> None:
        for function, args in calls:
            if function(*args) != 0:
                raise OSError(ctypes.get_errno(), f"building the test's world: {function.__name__}{args[:2]}")
        for path, _ in kept:
            opened.append(os.open(path, os.O_PATH | os.O_DIRECTORY))
        for cover in covers:
            if libc.mount(b"tmpfs", os.fsencode(cover), b"tmpfs", _MS_NOSUID | _MS_NODEV,
                          b"size=1g,mode=1777") != 0:
                raise OSError(ctypes.get_errno(), f"building the test's world: tmpfs on {cover}")
        for (path, cover), handle in zip(kept, opened):
            if path == cover:
                continue
            os.makedirs(path, 0o755, exist_ok=True)
            if libc.mount(os.fsencode(f"/proc/self/fd/{handle}"), os.fsencode(path), None, _MS_BIND | _MS_REC,
                          None) != 0:
                raise OSError(ctypes.get_errno(), f"building the test's world: bind {path}")
            os.close(handle)
        for source, target in also:
            os.makedirs(target, 0o755, exist_ok=True)
            if libc.mount(os.fsencode(source), os.fsencode(target), None, _MS_BIND | _MS_REC, None) != 0:
                raise OSError(ctypes.get_errno(), f"building the test's world: bind {source} at {target}")

    return run
