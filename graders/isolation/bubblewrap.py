"""The bubblewrap command a worker runs under: no network, a private pid namespace that dies with the judge, what
graders.isolation.listing lists read-only (the system's libraries, the interpreter's standard library, numpy, and torch
only for the workers that compute with it), only the packages the worker serves, a small private tmpfs for its working
folder and /tmp, and nothing else of the filesystem.

nbgrader's kernel jail (graders.integrations.kernel_jail) starts from ``interpreter_args``: the kernel runs the
notebook's own code with the environment's packages (ipykernel and the rest), so it sees the interpreter's folders
whole, never a worker's list."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

from graders.isolation import listing
from graders.submission.layout import Layout

BWRAP = "bwrap"
SANDBOX = Path("/sandbox")
# Inside bubblewrap the working folder and /tmp are memory: bounded so that writing them is no memory bomb.
WORK_TMPFS_BYTES, TMP_TMPFS_BYTES = 128 * 2**20, 32 * 2**20
# The system's files nbgrader's kernel sees (its jail's), read-only: a worker's are listing.system()'s.
SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/alternatives")
# Autodiff libraries no module but torch_loop.py may import (docs/contract.md, "A submission").
AUTODIFF = ("torch", "functorch", "torchgen", "torchvision", "torchaudio", "jax", "jaxlib", "autograd",
            "tensorflow", "keras", "mxnet", "cupy", "chainer")


def interpreter_paths() -> list[str]:
    """The folders the interpreter lives in (the environment, the base installation, the executable's folder), each once
    and none inside another: what a sandbox mounts read-only so that Python runs in it."""
    found = []
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))):
        if path and not any(path == p or path.startswith(p + os.sep) for p in found):
            found.append(path)
    return found


def interpreter_args() -> list[str]:
    """bubblewrap's arguments that show the system's libraries and the interpreter, read-only, and nothing around
    them: a worker's and nbgrader's kernel's filesystem start from these."""
    argv = []
    for system in SYSTEM:
        argv += ["--ro-bind-try", system, system]
    for path in interpreter_paths():
        # Folders above the interpreter (such as /root) are made searchable, so the dropped uid reaches it.
        argv += searchable_parents(path) + ["--ro-bind", path, path]
    return argv


def searchable_parents(path: str) -> list[str]:
    """bubblewrap's arguments that make every folder above ``path`` an empty folder anyone can search."""
    argv = []
    for folder in reversed(Path(path).parents[:-1]):
        argv += ["--perms", "0755", "--dir", str(folder)]
    return argv


def covers(folders) -> list[str]:
    """bubblewrap's arguments that cover each of ``folders`` lying inside the bound interpreter paths (the only
    ones there is anything to cover in) by an empty read-only folder."""
    bound = interpreter_paths()
    argv = []
    for folder in folders:
        if any(folder == b or folder.startswith(b + os.sep) for b in bound):
            argv += ["--size", "4096", "--perms", "0555", "--tmpfs", folder]
    return argv


def listed(entries) -> list[str]:
    """bubblewrap's arguments that show ``entries`` (graders.isolation.listing), in order."""
    argv = []
    for entry in entries:
        if entry.kind == "link":
            argv += ["--symlink", entry.target, entry.path]
        elif entry.kind == "cover":
            argv += ["--size", "4096", "--perms", "0555", "--tmpfs", entry.path]
        elif entry.kind == "dir":
            argv += ["--perms", "0755", "--dir", entry.path]
        else:
            argv += ["--ro-bind", entry.path, entry.path]
    return argv


def command(layout: Layout, packages: tuple[str, ...], block_autodiff: bool) -> list[str]:
    """bubblewrap's part of a worker's command line, up to the command it runs: what the worker sees, the list of
    graders.isolation.listing (torch's files only where ``block_autodiff`` is off) and its own folders."""
    argv = [BWRAP, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--proc", "/proc", "--dev", "/dev",
            "--size", str(TMP_TMPFS_BYTES), "--perms", "1777", "--tmpfs", "/tmp"]
    for device in sorted(glob.glob("/dev/nvidia*")):  # the GPU, where there is one (task 6.2)
        argv += ["--dev-bind-try", device, device]
    argv += listed(listing.worker(torch_too=not block_autodiff))
    argv += ["--perms", "0755", "--dir", str(SANDBOX), "--perms", "0755", "--dir", str(SANDBOX / "pkgs"),
             "--ro-bind", str(layout.runtime), str(SANDBOX / "runtime")]
    for name in packages:
        argv += ["--ro-bind", str(layout.packages / name), str(SANDBOX / "pkgs" / name)]
    argv += ["--size", str(WORK_TMPFS_BYTES), "--perms", "1777", "--tmpfs", str(SANDBOX / "work"),
             "--chdir", str(SANDBOX / "work"), "--setenv", "HOME", str(SANDBOX / "work"),
             "--setenv", "TMPDIR", str(SANDBOX / "work")]
    return argv


def as_uid_inside(argv: list[str], uid: int) -> list[str]:
    """The end of a bubblewrap command (run as root) that runs ``argv`` as ``uid``: the two capabilities it takes
    to switch, then a Python that switches and execs."""
    drop = (f"import os; os.setgroups([]); os.setgid({uid}); os.setuid({uid}); "
            f"os.execv({argv[0]!r}, {argv!r})")
    return ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", sys.executable, "-I", "-S", "-c", drop]
