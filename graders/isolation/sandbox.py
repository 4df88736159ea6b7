"""How the worker is isolated: process limits always, bubblewrap where it exists.

- Always: CPU seconds, address space, file size, process count, no core
  files, a session of its own, stdin from /dev/null, a scrubbed environment.
- Run as root, every worker process runs as an unprivileged uid of its own,
  leased for its lifetime (limits on processes do not bind root, and a uid of
  its own means that everything it left behind can be found and killed by
  uid). Without bubblewrap it gets a mount namespace of its own whose root
  holds only what graders.isolation.listing lists (the system's libraries,
  the standard library, numpy, and torch only where the worker computes with
  it), its own code and packages and its working folder (``Root``). Where no
  mount namespace can be made and the interpreter is not reachable by others
  (a pyenv under /root), that uid keeps one capability, CAP_DAC_READ_SEARCH:
  it can read every other file, and write none of the judge's. Its command
  line names no folder.
- With bubblewrap: no network, a private pid namespace that dies with the
  judge, the same list read-only, only the packages the worker serves, a small
  private tmpfs for its working folder and /tmp, and nothing else of the
  filesystem.

A grade that counts (grade-all, Gradescope, nbgrader, the pytest plugin, the
workflows and cluster templates, which ask for bubblewrap by name) gets the
isolation it asks for or none (``Unavailable``): ``auto`` is bubblewrap there,
and ``limits`` a dropped uid in a root of its own. Only a student's own
``autograd-lab grade`` (``practice``) takes less, and says so (``fallback_note``).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.isolation import bubblewrap, listing
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

    @property
    def level(self) -> str:
        """The isolation's short name, which results.json and grades.csv record: "bubblewrap", "limits" (an
        unprivileged uid in a root of its own), or, for practice only, "limits-no-namespace" (an unprivileged uid
        that sees the machine) and "judge-uid" (the judge's own uid)."""
        if self.bubblewrap:
            return "bubblewrap"
        if self.drop:
            return "limits" if namespaces_work() else "limits-no-namespace"
        return "judge-uid"

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


class Unavailable(RuntimeError):
    """The isolation a grade was set up for cannot be had on this machine: the grade is refused, and the message says
    what is missing and the fix."""


# Isolations a grade that counts may run under (Isolation.level): the others are for practice only.
COUNTED = ("bubblewrap", "limits")
_CAP_SYS_ADMIN = 21
APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


@functools.cache
def bubblewrap_problem() -> str | None:
    """None when bwrap is installed and can make a sandbox on this machine; else why not, in one line (bwrap's own
    last line where it ran)."""
    if shutil.which(bubblewrap.BWRAP) is None:
        return msg.ISOLATION_BWRAP_MISSING
    try:
        probe = subprocess.run([bubblewrap.BWRAP, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid",
                                "--die-with-parent", "--proc", "/proc", "--dev", "/dev", "true"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return msg.ISOLATION_BWRAP_FAILED.format(error=f"{type(error).__name__}: {error}"[:200])
    if probe.returncode == 0:
        return None
    said = probe.stderr.decode(errors="replace").strip().splitlines()
    return msg.ISOLATION_BWRAP_FAILED.format(error=(said[-1] if said else f"exit status {probe.returncode}")[:200])


def bubblewrap_works() -> bool:
    """True when bwrap is installed and can make a sandbox on this machine."""
    return bubblewrap_problem() is None


def _has_sys_admin() -> bool:
    """Whether this process holds CAP_SYS_ADMIN (a container may run root without it)."""
    try:
        with open("/proc/self/status") as f:
            effective = next(line for line in f if line.startswith("CapEff:")).split()[1]
        return bool(int(effective, 16) >> _CAP_SYS_ADMIN & 1)
    except (OSError, StopIteration, ValueError, IndexError):
        return False


def _apparmor_refuses_userns() -> bool:
    try:
        with open(APPARMOR_USERNS) as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def bubblewrap_fix() -> str:
    """What makes bubblewrap work here, for the refusal: install it, let it make namespaces (Ubuntu 24.04's AppArmor
    setting, a container's CAP_SYS_ADMIN), or the general advice."""
    if shutil.which(bubblewrap.BWRAP) is None:
        return msg.ISOLATION_FIX_INSTALL
    if os.geteuid() != 0 and _apparmor_refuses_userns():
        return msg.ISOLATION_FIX_APPARMOR.format(setting=APPARMOR_USERNS)
    if os.geteuid() == 0 and not _has_sys_admin():
        return msg.ISOLATION_FIX_CONTAINER
    return msg.ISOLATION_FIX_OTHER


def limits_problem() -> str | None:
    """None when process limits can isolate a grade that counts here (the judge is root and may make mount
    namespaces: each worker an unprivileged uid in a root of its own); else what is missing and the fix."""
    if os.geteuid() != 0:
        return msg.ISOLATION_LIMITS_NOT_ROOT
    if not namespaces_work():
        return msg.ISOLATION_LIMITS_NO_NAMESPACE
    return None


def fallback_note(mode: str) -> str | None:
    """The line a practice grade prints where ``mode`` "auto" settles below bubblewrap here: why, what the grade runs
    with instead, and that a grade that counts would refuse. None where nothing falls back."""
    if mode != "auto" or bubblewrap_works():
        return None
    chosen = choose("limits", practice=True)
    return msg.ISOLATION_PRACTICE_FALLBACK.format(why=bubblewrap_problem(), isolation=chosen.describe(),
                                                  fix=bubblewrap_fix())


def _reachable_by_others(path: Path) -> bool:
    """Can an unprivileged uid read ``path`` (every folder above it searchable by others)?"""
    path = path.resolve()
    for folder in [path, *path.parents]:
        if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
            return False
    return True


def choose(mode: str = "auto", *, practice: bool = False) -> Isolation:
    """The isolation to use: ``mode`` is "auto" (bubblewrap where it works), "bubblewrap" or "limits".

    A grade that counts (``practice`` off: every caller but a student's own ``autograd-lab grade``) never settles
    below what it asked for: "auto" and "bubblewrap" mean bubblewrap, "limits" an unprivileged uid in a root of its
    own; where that cannot be had here it raises ``Unavailable``, saying what is missing and the fix. A practice
    grade falls back from "auto" to process limits (``fallback_note`` says so)."""
    if mode not in ("auto", "bubblewrap", "limits"):
        raise ValueError(f"got sandbox={mode!r}, expected 'auto', 'bubblewrap' or 'limits'")
    use_bwrap = mode != "limits" and bubblewrap_works()
    if mode == "bubblewrap" and not use_bwrap:
        raise Unavailable(msg.ISOLATION_NO_BUBBLEWRAP.format(why=bubblewrap_problem(), fix=bubblewrap_fix()))
    if mode == "auto" and not use_bwrap and not practice:
        raise Unavailable(msg.ISOLATION_AUTO_REFUSED.format(
            why=bubblewrap_problem(), fix=bubblewrap_fix(),
            limits=msg.ISOLATION_OR_LIMITS if limits_problem() is None else ""))
    if mode == "limits" and not practice and limits_problem() is not None:
        raise Unavailable(msg.ISOLATION_NO_LIMITS.format(why=limits_problem()))
    drop = os.geteuid() == 0
    # Everything the interpreter needs: a venv's python is often a link into a prefix under /root. A root of the
    # worker's own makes it reachable (``Root``); where none can be made, the worker's uid must read everything.
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
    container that drops it), and chroot into it: then a worker without bubblewrap still gets a root of its own
    (``Root``)."""
    if os.geteuid() != 0:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    with tempfile.TemporaryDirectory(prefix="agl-probe-") as folder:
        pid = os.fork()
        if pid == 0:  # the child only makes system calls, then leaves
            ok = (libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET) == 0
                  and libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) == 0
                  and libc.mount(b"tmpfs", os.fsencode(folder), b"tmpfs", 0, b"size=4k") == 0
                  and libc.chroot(os.fsencode(folder)) == 0)
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def scratch_parent(isolation: Isolation, wanted: Path | None) -> Path | None:
    """Where to lay out a grade: ``wanted`` (None: the temp folder), unless a worker uid could not reach it.

    Without bubblewrap and without a root of its own (``Root``: its folders are bound into it by root, whatever
    the folders above them), a worker runs the judge's copy of its code in place, as an unprivileged uid that must
    search every folder above it. A folder under a private one (pytest's tmp_path, a TMPDIR of mode 0700)
    would make every worker fail to start, which would read as the student's failure; the grade is then laid
    out under the first shared temp folder that every user can search.
    """
    if not isolation.drop or isolation.bubblewrap or namespaces_work():
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
    (layout.root / ROOT_MOUNT).mkdir(mode=0o700, exist_ok=True)
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


# ----- a root of its own without bubblewrap: a mount namespace of the worker's own (as root only) -----

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
ROOT_MOUNT = "newroot"  # the empty folder of a grade's scratch folder a worker's root is mounted on, in its namespace
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")  # what bubblewrap's --dev holds too
DEVICE_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                ("stderr", "/proc/self/fd/2"))


def folders_to_cover(extra, keep: list[str]) -> list[str]:
    """The folders nbgrader's kernel must not see inside the interpreter's folders it is shown whole
    (graders.integrations.kernel_jail): in a checkout every folder of it (solutions/, and the tests' corpus and .git
    hold solutions too), the judge's code and ``extra``; but none that holds a path of ``keep`` (the interpreter, a
    .venv in the clone), and none inside another one of them."""
    checkout = sorted(p for p in paths.REPO.iterdir() if p.is_dir()) if paths.in_checkout() else []
    folders = [f for f in dict.fromkeys(os.path.realpath(f) for f in (*checkout, paths.HERE, *extra))
               if f != "/" and os.path.isdir(f) and not any(p == f or p.startswith(f + os.sep) for p in keep)]
    return outermost(folders)


def outermost(folders) -> list[str]:
    """``folders`` without repeats and without any that lies inside another of them (covering it is covered)."""
    folders = list(dict.fromkeys(folders))
    return [f for f in folders if not any(f.startswith(other + os.sep) for other in folders)]


@dataclass(frozen=True)
class Root:
    """The filesystem of a worker started without bubblewrap, as root: in a mount namespace of its own, a tmpfs
    mounted on ``mount_point`` becomes its root (chroot), holding what graders.isolation.listing lists (read-only,
    each at its own path), ``readable`` (its code and packages, read-only), ``writable`` (its working folder), a
    private /tmp and /dev/shm, /dev's few devices and the machine's /proc. Nothing else of the machine is there: not
    another virtual environment, not torch for the numpy tasks, not the checkout, other grades or the class. Only
    root can make mount namespaces: without them nothing is hidden (``Isolation.describe`` says so)."""

    mount_point: str
    entries: tuple = ()  # listing.Entry
    readable: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    network: bool = False  # keep the network namespace

    @classmethod
    def of(cls, layout: Layout, isolation: Isolation, packages: tuple[str, ...], key: str,
           torch_too: bool) -> Root | None:
        """The root of the worker process ``key`` serving ``packages`` under ``isolation``: None under bubblewrap (it
        makes its own) and where no mount namespace can be made."""
        if isolation.bubblewrap or not isolation.drop or not namespaces_work():
            return None
        root = layout.package_root(packages)
        readable = [str(layout.runtime), str(root), *(str(layout.packages / name) for name in packages)]
        return cls(str(layout.root / ROOT_MOUNT), listing.worker(torch_too), tuple(readable),
                   (str(isolation.work(layout, key)),))

    def mounts(self):
        """The calls the child makes, prepared before the fork: (function, arguments, what) in order, ending with
        the chroot."""
        libc = ctypes.CDLL(None, use_errno=True)
        new = self.mount_point
        # Its own IPC and network namespaces too: no network, and no System V IPC or abstract unix socket that
        # another worker could reach.
        spaces = _CLONE_NEWNS | _CLONE_NEWIPC | (0 if self.network else _CLONE_NEWNET)
        calls = [(libc.unshare, (spaces,), "unshare(NEWNS|NEWIPC[|NEWNET])"),
                 (libc.mount, (b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /"),
                 *_tmpfs(libc, new, "size=1m,mode=0755")]
        # /tmp first: the grade's folders usually lie in it, and are bound into it.
        calls += _tmpfs(libc, new + "/tmp", f"size={bubblewrap.TMP_TMPFS_BYTES},mode=1777")
        calls += _tmpfs(libc, new + "/dev", "size=64k,mode=0755", devices=True)
        for device in [*(f"/dev/{name}" for name in DEVICES), *sorted(glob.glob("/dev/nvidia*"))]:
            if os.path.exists(device):
                calls += _bind(libc, device, new + device, read_only=False, devices=True)
        calls += [(os.symlink, (target, f"{new}/dev/{name}"), f"ln -s {target} /dev/{name}")
                  for name, target in DEVICE_LINKS]
        calls += _tmpfs(libc, new + "/dev/shm", f"size={bubblewrap.TMP_TMPFS_BYTES},mode=1777")
        calls += [(_folder, (new + "/proc",), "mkdir /proc"),
                  (libc.mount, (b"/proc", os.fsencode(new + "/proc"), None, _MS_BIND | _MS_REC, None),
                   "mount --rbind /proc")]
        for entry in self.entries:
            if entry.kind == "link":
                calls += [(_parent_of, (new + entry.path,), f"mkdir {entry.path}'s folder"),
                          (os.symlink, (entry.target, new + entry.path), f"ln -s {entry.target} {entry.path}")]
            elif entry.kind == "cover":
                calls += _tmpfs(libc, new + entry.path, "size=4k,mode=0555")
            elif entry.kind == "dir":
                calls.append((_folder, (new + entry.path,), f"mkdir {entry.path}"))
            else:
                calls += _bind(libc, entry.path, new + entry.path, read_only=True)
        for path in self.readable:
            calls += _bind(libc, path, new + path, read_only=True)
        for path in self.writable:
            calls += _bind(libc, path, new + path, read_only=False)
        calls.append((os.chroot, (new,), f"chroot {new}"))
        return calls


def _folder(path: str) -> None:
    """``path`` and the folders above it made where missing, each searchable by anyone (whatever the umask)."""
    if not os.path.isdir(path):
        _folder(os.path.dirname(path))
        os.mkdir(path)
        os.chmod(path, 0o755)


def _parent_of(path: str) -> None:
    _folder(os.path.dirname(path))


def _file(path: str) -> None:
    _parent_of(path)
    if not os.path.lexists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o644))


def _tmpfs(libc, target: str, options: str, devices: bool = False) -> list:
    flags = _MS_NOSUID | (0 if devices else _MS_NODEV)
    return [(_folder, (target,), f"mkdir {target}"),
            (libc.mount, (b"tmpfs", os.fsencode(target), b"tmpfs", flags, options.encode()), f"tmpfs on {target}")]


def _bind(libc, source: str, target: str, *, read_only: bool, devices: bool = False) -> list:
    """The calls that bind ``source`` at ``target`` (made first: a folder, or an empty file), then make it read-only
    where asked, never setuid, and without devices but where they are the point."""
    make = _folder if os.path.isdir(source) else _file
    flags = _MS_REMOUNT | _MS_BIND | _MS_NOSUID | (_MS_RDONLY if read_only else 0) | (0 if devices else _MS_NODEV)
    return [(make, (target,), f"mkdir {target}"),
            (libc.mount, (os.fsencode(source), os.fsencode(target), None, _MS_BIND | _MS_REC, None),
             f"mount --bind {source}"),
            (libc.mount, (None, os.fsencode(target), None, flags, None), f"remount {target}")]


def _call(function, args, what: str) -> None:
    result = function(*args)
    if result not in (None, 0):
        raise OSError(ctypes.get_errno(), f"making the worker's root: {what}")


def drop_privileges(isolation: Isolation, uid: int | None, root: Root | None = None):
    """What the child runs before exec when no sandbox drops it: the mounts of ``root`` and the chroot into it, then
    setgid/setuid to the worker's uid (keeping CAP_DAC_READ_SEARCH, as an ambient capability, where no root of its own
    can be made and the interpreter is unreachable otherwise).

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

    mounts = root.mounts() if root is not None else []
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
