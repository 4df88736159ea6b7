"""How the worker is isolated: process limits always, bubblewrap where it exists.

- Always: CPU seconds, address space, file size, process count, no core
  files, a session of its own, stdin from /dev/null, a scrubbed environment.
- Run as root, every worker process runs as an unprivileged uid of its own,
  leased for its lifetime (limits on processes do not bind root, and a uid of
  its own means that everything it left behind can be found and killed by
  uid). Without bubblewrap it gets a mount namespace of its own in which
  other grades, the folder of the submissions, the checkout's solutions/,
  the judge's code and (but for torch_loop.py's) torch are covered by empty
  folders (``Hiding``); where the
  interpreter is not reachable by others (a pyenv under /root), that uid
  keeps one capability, CAP_DAC_READ_SEARCH: it can read every other file,
  and write none of the judge's. Its command line names no folder.
- With bubblewrap: no network, a private pid namespace that dies with the
  judge, the interpreter read-only (torch hidden from the workers of the numpy
  tasks; graders/ and solutions/ hidden where they are installed beside it),
  only the packages the worker serves, a small private tmpfs for its working
  folder and /tmp, and nothing else of the filesystem.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.isolation import bubblewrap
from graders.submission.layout import Layout

# The judge's own packages.
JUDGE_PACKAGES = ("graders", "solutions", "exercises")


@dataclass(frozen=True)
class Isolation:
    """How the workers of a grade are isolated here: bubblewrap or not, dropped to an unprivileged uid or not (the judge
    is root), and whether that uid can still read every file. Chosen once per grade (``choose``), described on the
    scorecard and by doctor."""
    bubblewrap: bool
    drop: bool = False  # the judge is root: each worker process runs as an unprivileged uid of its own
    reads_all: bool = False  # dropped without bubblewrap, interpreter unreachable: the uid keeps CAP_DAC_READ_SEARCH

    def describe(self) -> str:
        """One line for the scorecard: what the worker could and could not do (no uid: results stay identical)."""
        parts = ["limits"]
        if self.bubblewrap:
            parts.append("bubblewrap")
        if self.drop and self.reads_all:
            parts.append("reads_all")
        elif self.drop and not self.bubblewrap and namespaces_work():
            parts.append("namespace")
        elif self.drop:
            parts.append("uid")
        elif os.geteuid() == 0:
            parts.append("root")
        elif not self.bubblewrap:
            parts.append("judge_uid")
        return ", ".join(msg.ISOLATION_PARTS[part] for part in parts)

    # ----- paths as the worker sees them -----
    def runtime(self, layout: Layout) -> Path:
        """The worker's code folder as the worker sees it: the sandbox's mount under bubblewrap, the scratch folder's
        otherwise."""
        return bubblewrap.SANDBOX / "runtime" if self.bubblewrap else layout.runtime

    def packages(self, layout: Layout, packages: tuple[str, ...]) -> Path:
        """The import root of a worker serving ``packages``, as it sees it: the sandbox's pkgs under bubblewrap, else a
        folder of links to those packages alone."""
        return bubblewrap.SANDBOX / "pkgs" if self.bubblewrap else layout.package_root(packages)

    def work(self, layout: Layout, key: str) -> Path:
        """The working folder of the worker process ``key``, as it sees it: the sandbox's private one under bubblewrap,
        else its own folder in the scratch folder."""
        return bubblewrap.SANDBOX / "work" if self.bubblewrap else layout.work / key


@functools.cache
def bubblewrap_works() -> bool:
    """True when bwrap is installed and can make a sandbox on this machine."""
    if shutil.which(bubblewrap.BWRAP) is None:
        return False
    try:
        probe = subprocess.run([bubblewrap.BWRAP, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid",
                                "--die-with-parent", "--proc", "/proc", "--dev", "/dev", "true"],
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
        raise RuntimeError(msg.ISOLATION_NO_BUBBLEWRAP)
    drop = os.geteuid() == 0
    # Everything the interpreter needs: a venv's python is often a link into a prefix under /root. A mount
    # namespace makes it reachable (``Hiding``); where none can be made, the worker's uid must read everything.
    reads_all = drop and not use_bwrap and not namespaces_work() and not all(
        _reachable_by_others(Path(p)) for p in bubblewrap.interpreter_paths())
    return Isolation(use_bwrap, drop, reads_all)


SCRATCH_BASE = "agl-scratch"


def scratch_base(under: Path | None = None) -> Path:
    """The judge's folder for grades (``<tmp>/agl-scratch``, searchable by the workers' uids, not listable), or
    ``under`` itself when it lies in one already (a judge of grade-all). Without bubblewrap a worker sees none of it
    but its own grade (``Hiding``). A folder of that name that is not the judge's own (a link, another owner's) is
    left alone for a fresh one."""
    here = Path(under or tempfile.gettempdir())
    if any(p.name.startswith(SCRATCH_BASE) for p in [here, *here.parents]):
        return here
    base = here / SCRATCH_BASE
    try:
        base.mkdir(mode=0o711)
    except FileExistsError:
        pass
    info = base.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        base = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_BASE}-", dir=here))
    base.chmod(0o711)
    return base


@functools.cache
def namespaces_work() -> bool:
    """True when this process may make a mount namespace and mount in it (root, with CAP_SYS_ADMIN: not in a
    container that drops it): then a worker without bubblewrap still has folders hidden from it (``Hiding``)."""
    if os.geteuid() != 0:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    with tempfile.TemporaryDirectory(prefix="agl-probe-") as folder:
        pid = os.fork()
        if pid == 0:  # the child only makes system calls, then leaves
            ok = (libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET) == 0
                  and libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) == 0
                  and libc.mount(b"tmpfs", os.fsencode(folder), b"tmpfs", 0, b"size=4k") == 0)
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def scratch_parent(isolation: Isolation, wanted: Path | None) -> Path | None:
    """Where to lay out a grade: ``wanted`` (None: the temp folder; without bubblewrap, as root, the judge's scratch
    base, ``scratch_base``, which each worker has covered but for its own grade), unless a worker uid could not
    reach it.

    Without bubblewrap a worker runs the judge's copy of its code in place, as an unprivileged uid that must
    search every folder above it. A folder under a private one (pytest's tmp_path, a TMPDIR of mode 0700)
    would make every worker fail to start, which would read as the student's failure; the grade is then laid
    out under the first shared temp folder that every user can search.
    """
    if not isolation.drop or isolation.bubblewrap:
        return wanted
    if isolation.reads_all or _reachable_by_others(Path(wanted or tempfile.gettempdir())):
        return wanted if wanted is not None else scratch_base()
    for shared in ("/tmp", "/var/tmp", "/dev/shm"):
        if Path(shared).is_dir() and _reachable_by_others(Path(shared)) and os.access(shared, os.W_OK):
            return scratch_base(Path(shared))
    raise RuntimeError(msg.ISOLATION_NO_SCRATCH.format(folder=wanted or tempfile.gettempdir()))


def prepare(layout: Layout, isolation: Isolation) -> None:
    """Let a worker uid read the worker's code and the hybrids, and nothing else of the scratch folder."""
    if not isolation.drop:
        return
    layout.root.chmod(0o711)
    for folder in (layout.runtime, layout.packages):
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    layout.packages.chmod(0o711)  # not listable: the links of a package root name only their own packages
    for folder in (layout.roots, layout.work):
        folder.chmod(0o711)


def prepare_work(folder: Path, uid: int | None) -> None:
    """A fresh working folder for one worker process, owned by its uid."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700)
    if uid is not None:
        os.chown(folder, uid, uid)


def wrap(argv: list[str], layout: Layout, isolation: Isolation, packages: tuple[str, ...], uid: int | None,
         block_autodiff: bool) -> list[str]:
    """The command that starts ``argv`` (a Python command) under ``isolation``, seeing only ``packages``."""
    if not isolation.bubblewrap:
        return argv
    prefix = bubblewrap.command(layout, packages, block_autodiff)
    if uid is None:
        return [*prefix, "--", *argv]
    # bubblewrap runs as root; inside, drop to the worker's uid before any student code exists.
    return [*prefix, *bubblewrap.as_uid_inside(argv, uid)]



# ----- dropping privileges without bubblewrap -----

_PR_SET_KEEPCAPS, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE = 8, 38, 47, 2
_CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


# ----- hiding folders without bubblewrap: a mount namespace of the worker's own (as root only) -----

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 4096, 16384, 1 << 18


def folders_to_cover(extra, keep: list[str]) -> list[str]:
    """The folders that untrusted code must not see: in a checkout every folder of it (solutions/, and the tests'
    corpus and .git hold solutions too), the judge's code and ``extra``; but none that holds a path of ``keep``
    (the interpreter, a .venv in the clone, the grade's own folder), and none inside another one of them."""
    checkout = sorted(p for p in paths.REPO.iterdir() if p.is_dir()) if paths.in_checkout() else []
    folders = [f for f in dict.fromkeys(os.path.realpath(f) for f in (*checkout, paths.HERE, *extra))
               if f != "/" and os.path.isdir(f) and not any(p == f or p.startswith(f + os.sep) for p in keep)]
    return outermost(folders)


def outermost(folders) -> list[str]:
    """``folders`` without repeats and without any that lies inside another of them (covering it is covered)."""
    folders = list(dict.fromkeys(folders))
    return [f for f in folders if not any(f.startswith(other + os.sep) for other in folders)]


def reach(needed: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For Hiding.reach: each topmost folder that keeps another user from ``needed`` (/root, 0700, above a
    pyenv), with the paths under it to mount back into the searchable tmpfs that covers it."""
    blocked: dict[str, list[str]] = {}
    for path in needed:
        closed = [str(f) for f in Path(path).parents if str(f) != "/" and f.is_dir()
                  and not f.stat().st_mode & stat.S_IXOTH]
        if closed:
            blocked.setdefault(closed[-1], []).append(path)
    return tuple((cover, tuple(kept)) for cover, kept in blocked.items())


@dataclass(frozen=True)
class Hiding:
    """What a worker started without bubblewrap must not see, covered by an empty read-only tmpfs in a mount
    namespace of its own: ``folders`` (the folders of the checkout, solutions/ and .git among them, the judge's
    code, the folder of the students' submissions), and ``parent``, the folder grades are laid out in (other
    students' grades), where only this grade's folder, ``root``, is mounted back. Only root can make mount
    namespaces: without root nothing is hidden (``Isolation.describe`` says so)."""

    folders: tuple[str, ...] = ()
    parent: str | None = None  # the judge's scratch base (or the grade's parent folder): covered, root mounted back
    root: str | None = None
    # Folders that keep the worker's uid from the interpreter (/root, 0700): covered by a searchable tmpfs into
    # which the interpreter's folders are mounted back, each by itself.
    reach: tuple[tuple[str, tuple[str, ...]], ...] = ()
    network: bool = False  # keep the network namespace (a notebook kernel talks to nbgrader over localhost)

    @classmethod
    def of(cls, layout: Layout, isolation: Isolation, beside: tuple[Path, ...] = ()) -> Hiding:
        """What the workers of ``layout`` must not see under ``isolation``: nothing to hide under bubblewrap (it lists
        what it shows), and nothing can be hidden without root or mount namespaces; else the checkout's folders, the
        judge's code, ``beside`` and the other grades."""
        if isolation.bubblewrap or not isolation.drop or not namespaces_work():
            return cls()
        needed = bubblewrap.interpreter_paths()
        root = os.path.realpath(layout.root)
        folders = folders_to_cover(beside, keep=[*needed, root])
        bases = [str(p) for p in Path(root).parents if p.name.startswith(SCRATCH_BASE)]
        parent = bases[-1] if bases else os.path.dirname(root)
        holds_interpreter = any(p == parent or p.startswith(parent + os.sep) for p in needed)
        return cls(tuple(folders), None if holds_interpreter or parent == "/" else parent, root, reach(needed))

    def mounts(self):
        """The calls the child makes, prepared before the fork: (function, arguments, what) in order. The grade's
        folder is held open (an O_PATH handle, in the new namespace) while its parent is covered, and mounted back
        from that handle."""
        libc = ctypes.CDLL(None, use_errno=True)
        # Its own IPC and network namespaces too: no network, and no System V IPC or abstract unix socket that
        # another worker could reach.
        spaces = _CLONE_NEWNS | _CLONE_NEWIPC | (0 if self.network else _CLONE_NEWNET)
        calls = [(libc.unshare, (spaces,), "unshare(NEWNS|NEWIPC[|NEWNET])"),
                 (libc.mount, (b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")]
        kept = [(self.root, self.parent)] if self.parent is not None else []
        kept += [(path, cover) for cover, paths_ in self.reach for path in paths_]
        for path, _ in kept:
            calls.append((os.open, (path, os.O_PATH | os.O_DIRECTORY), f"open {path}"))
        for folder in self.folders:
            calls.append((libc.mount, (b"tmpfs", os.fsencode(folder), b"tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV,
                                       b"size=4k,mode=0555"), f"mount tmpfs on {folder}"))
        for cover in dict.fromkeys(cover for _, cover in kept):
            calls.append((libc.mount, (b"tmpfs", os.fsencode(cover), b"tmpfs", _MS_NOSUID | _MS_NODEV,
                                       b"size=64k,mode=0711"), f"mount tmpfs on {cover}"))
        for index, (path, _) in enumerate(kept):
            calls += [(os.makedirs, (os.fsencode(path), 0o711, True), f"mkdir {path}"),
                      (_bind_from_handle, (libc, index, os.fsencode(path)), f"mount --bind {path}")]
        return calls

    def without_autodiff(self) -> Hiding:
        """The same, with the autodiff libraries' folders covered too: for every worker but torch_loop.py's, so
        that removing the worker's import refusal finds no torch to import."""
        if not self.any:
            return self
        return replace(self, folders=tuple(outermost([*self.folders, *bubblewrap.autodiff_folders()])))

    @property
    def any(self) -> bool:
        """Whether anything is to be hidden, so a worker without it makes no mount namespace at all."""
        return bool(self.folders or self.parent or self.reach)


_HANDLES = []  # in the child: the folders kept, opened before the folders above them are covered


def _bind_from_handle(libc, index: int, target: bytes) -> int:
    handle = _HANDLES[index]
    try:
        return libc.mount(os.fsencode(f"/proc/self/fd/{handle}"), target, None, _MS_BIND | _MS_REC, None)
    finally:
        os.close(handle)


def _call(function, args, what: str) -> None:
    result = function(*args)
    if function is os.open:
        _HANDLES.append(result)
    elif result not in (None, 0):
        raise OSError(ctypes.get_errno(), f"hiding folders from the worker: {what}")


def drop_privileges(isolation: Isolation, uid: int | None, hiding: Hiding = Hiding()):
    """What the child runs before exec when no sandbox drops it: the mounts of ``hiding``, then setgid/setuid to
    the worker's uid (keeping CAP_DAC_READ_SEARCH, as an ambient capability, where the interpreter is unreachable
    otherwise: the folders hidden are then all it cannot read).

    Everything is prepared here, before the fork: the child only makes system calls.
    """
    if isolation.bubblewrap or uid is None:
        return lambda: None
    libc = ctypes.CDLL(None, use_errno=True)
    prctl, capset = libc.prctl, libc.capset
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    keep = 1 << _CAP_DAC_READ_SEARCH
    data[0].effective = data[0].permitted = data[0].inheritable = keep

    mounts = hiding.mounts() if hiding.any else []
    work = os.getcwd  # looked up now: the child calls it, then goes back into its folder under the new mounts

    def drop() -> None:
        if mounts:
            here = work()
            for function, args, what in mounts:
                _call(function, args, what)
            os.chdir(here)
        if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if isolation.reads_all and prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_KEEPCAPS)")
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if isolation.reads_all:
            if capset(ctypes.byref(header), data) != 0:
                raise OSError(ctypes.get_errno(), "capset")
            if prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE, _CAP_DAC_READ_SEARCH, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAP_AMBIENT_RAISE)")

    return drop
