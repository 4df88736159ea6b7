"""The workers' uids, as root: one unprivileged uid leased to each worker process for its lifetime, and, after
it, everything of that uid killed, what it left in the folders anyone may write to removed, and any kernel key
it holds invalidated. (A uid of its own is what makes "everything a worker left behind" findable: by uid.)"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import shutil
import signal
import socket
import stat
import threading
import time

WORKER_UID_BASE, WORKER_UID_COUNT = 61000, 4000
# Folders anyone may write to: files the worker's uid left there are removed after it (without bubblewrap).
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/dev/mqueue")

_leases: dict[int, socket.socket] = {}
_lease_lock = threading.Lock()
_next = [0]


def uids_of_processes(zombies: bool = False) -> dict[int, int]:
    """Every process's real uid, from /proc (zombies, which hold nothing but a pid, only when asked)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as f:
                    status = dict(line.split(":", 1) for line in f if line.startswith(("State:", "Uid:")))
                if zombies or status["State"].split()[0] not in ("Z", "X"):
                    found[int(entry)] = int(status["Uid"].split()[0])
            except (OSError, ValueError, IndexError, KeyError):
                pass
    return found


def processes_of(uid: int) -> list[int]:
    """The live (not zombie) processes whose real uid is ``uid``."""
    return [pid for pid, owner in uids_of_processes().items() if owner == uid]


def lease_uid() -> int:
    """An unprivileged uid no other worker on this machine holds, held until ``release_uid``.

    The lease is an abstract unix socket named after the uid: exclusive on the
    machine, and released by the kernel when the judge dies. A uid with a
    passwd entry or with live processes (left by a judge that crashed) is skipped.
    First, what worker uids no judge holds left in the shared folders is removed
    (``sweep_orphans``): a judge killed before its own sweep leaves a worker's files
    there, readable by every worker after it.
    """
    sweep_orphans()
    with _lease_lock:
        _next[0] += 1
        start = (os.getpid() * 131 + _next[0] * 17) % WORKER_UID_COUNT
    for i in range(WORKER_UID_COUNT):
        uid = WORKER_UID_BASE + (start + i) % WORKER_UID_COUNT
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        lease = _try_lease(uid)
        if lease is None:
            continue
        if processes_of(uid) or not clear_keys(uid):  # left by a judge that crashed
            lease.close()
            continue
        with _lease_lock:
            _leases[uid] = lease
        return uid
    raise RuntimeError(f"no free worker uid in {WORKER_UID_BASE}-{WORKER_UID_BASE + WORKER_UID_COUNT - 1}")


def _try_lease(uid: int) -> socket.socket | None:
    """The lease of ``uid``, or None where a live judge holds it."""
    lease = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        lease.bind(f"\0autograd-lab-worker-uid-{uid}")
    except OSError:
        lease.close()
        return None
    return lease


def release_uid(uid: int) -> None:
    """End the lease of ``uid``, after its processes are dead: first any kernel key of the uid is invalidated."""
    clear_keys(uid)
    with _lease_lock:
        lease = _leases.pop(uid, None)
    if lease is not None:
        lease.close()


QUIET_SCANS = 3  # a process forked while its parent was being killed shows up a scan later


def kill_uid(uid: int, rounds: int = 200, quiet_scans: int = QUIET_SCANS) -> bool:
    """SIGKILL every process whose real uid is ``uid`` until none is left; True when none is.

    Done only after ``quiet_scans`` scans in a row find none: a child forked (a
    setsid daemon's double fork) while its parent was being killed can appear
    after one empty scan. (Once a worker's pid namespace is gone, nothing of its
    uid can fork any more: one scan, to confirm, is enough; a process found
    starts the count again.) Each process is signalled through a pidfd opened
    before its uid is read again, so a pid reused by another process is never
    signalled.
    """
    quiet, seen = 0, False
    for _ in range(rounds):
        pids = processes_of(uid)
        seen = seen or bool(pids)
        quiet = 0 if pids else quiet + 1
        if quiet >= (QUIET_SCANS if seen else quiet_scans):
            return True
        for pid in pids:
            signal_if_uid(pid, uid, signal.SIGKILL)
        time.sleep(0.005)
    return not processes_of(uid)


def signal_if_uid(pid: int, uid: int | None, sig: int) -> None:
    """Send ``sig`` to ``pid``, if it still runs as ``uid`` (any uid when None), race-free with a pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return
    try:
        if uid is not None:
            with open(f"/proc/{pid}/status") as f:
                owner = next((int(line.split()[1]) for line in f if line.startswith("Uid:")), None)
            if owner != uid:
                return
        signal.pidfd_send_signal(fd, sig)
    except (OSError, ValueError):
        pass
    finally:
        os.close(fd)


def sweep(uid: int) -> list[str]:
    """Remove what ``uid`` left in the folders anyone may write to (/tmp and the like); the paths removed.

    Run after every process of the uid is dead. Only folders the uid could
    write to are entered: its own, and those writable by others.
    """
    removed: list[str] = []
    for top in SHARED_FOLDERS:
        for entry, info in _shared_entries(top, lambda owner: owner == uid):
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
            removed.append(entry.path)
    return removed


def sweep_orphans() -> list[str]:
    """Remove what worker uids that no judge holds left in the shared folders; the paths removed.

    A judge killed before a worker's end (SIGKILL, the out-of-memory killer, a batch's timeout) never sweeps
    that worker's uid, and its files (a student's code, mode 0666) wait in /dev/shm for every later worker, of
    any uid. Each owner found in the worker range is leased for the moment of its sweep, so a uid that a live
    judge holds is left to that judge; one with live processes (left running by the dead judge) too.
    """
    owners = {info.st_uid for top in SHARED_FOLDERS for _, info in _shared_entries(top, _is_worker_uid)}
    removed: list[str] = []
    for uid in sorted(owners):
        lease = _try_lease(uid)
        if lease is None:
            continue
        try:
            if not processes_of(uid):
                removed += sweep(uid)
        finally:
            lease.close()
    return removed


def _is_worker_uid(uid: int) -> bool:
    return WORKER_UID_BASE <= uid < WORKER_UID_BASE + WORKER_UID_COUNT


def _shared_entries(folder: str, owned, depth: int = 0):
    """The entries under ``folder`` whose owner ``owned`` accepts, with their stat, not followed into: folders
    are entered only where others may write (where a worker could have put something), to a depth of six."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if owned(info.st_uid):
            yield entry, info
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH and depth < 6:
            yield from _shared_entries(entry.path, owned, depth + 1)


# ----- kernel keys: state that outlives every process of a uid -----

KEY_USERS = "/proc/key-users"
_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_SETPERM, _KEYCTL_INVALIDATE = 5, 21
_KEY_ALL_TO_OWNER = 0x3F3F0000  # possessor and owner: every permission (invalidating takes "search")


def keys_of(uid: int) -> int:
    """How many kernel keys ``uid`` holds (its user key rings included), from /proc/key-users; 0 where the
    kernel has no key support."""
    try:
        with open(KEY_USERS) as f:
            for line in f:
                owner, _, rest = line.partition(":")
                if owner.strip() == str(uid):
                    return int(rest.split()[1].split("/")[0])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def clear_keys(uid: int, wait: float = 2.0) -> bool:
    """Invalidate every kernel key ``uid`` owns; True once /proc/key-users shows none.

    A worker's seccomp filter refuses the key calls of every architecture, so a worker should never hold one;
    this is the check that it does not, and the clean-up where something did (a key is state that outlives
    every process of the uid: a relay to whoever leases the uid next). Root cannot see another uid's keys, so a
    child becomes the uid (nothing of it runs any more), lists them in /proc/keys, gives itself every permission
    (an owner may) and invalidates each. The kernel collects invalidated keys a moment later.
    """
    if keys_of(uid) == 0:
        return True
    number = _KEYCTL.get(os.uname().machine)
    if number is None:
        return False
    pid = os.fork()
    if pid == 0:  # only system calls and a read of /proc/keys, then leave
        code = 1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            with open("/proc/keys") as f:
                mine = [int(line.split()[0], 16) for line in f if len(line.split()) > 5
                        and line.split()[5] == str(uid)]
            for key in mine:
                libc.syscall(number, _KEYCTL_SETPERM, key, _KEY_ALL_TO_OWNER)
                libc.syscall(number, _KEYCTL_INVALIDATE, key)
            code = 0
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    end = time.monotonic() + wait
    while keys_of(uid) and time.monotonic() < end:
        time.sleep(0.01)
    return keys_of(uid) == 0
