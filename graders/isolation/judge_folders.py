"""grade-all's judges' scratch folders, and the sweep of those a killed run left.

Each judge of grade-all's pool (graders.classgrade.pool) lays its grades out in a folder of its own in the scratch base
(``agl-judge-*`` in ``<tmp>/agl-scratch``), which holds the copy of the submission it is grading. A run killed at once,
judges and all (SIGKILL, the OOM killer, a lost node), runs no cleanup; the next run removes what no process holds, as
budget.sweep_stale removes the cgroups of judges that are gone.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import stat
import time
from pathlib import Path

from graders.isolation.sandbox import scratch_base

# Beside each folder, its lock (``<folder>.lock``), made and locked before the folder exists.
JUDGE_PREFIX, LOCK_SUFFIX = "agl-judge-", ".lock"
LEGACY_GRACE = 60.0  # seconds an older version's judge folder may be without a process working in it: starting


def claim(base: Path | None = None) -> tuple[Path, int]:
    """A fresh scratch folder for one of grade-all's judges (``agl-judge-*`` in the scratch base), and a descriptor that
    holds its lock (an flock on the file beside it, taken before the folder exists): every process holding a copy of
    it (the pool, and the judge started with it) keeps the folder in use; once all are gone, however they ended, the
    next ``sweep`` removes it."""
    base = scratch_base() if base is None else base
    while True:
        folder = base / f"{JUDGE_PREFIX}{secrets.token_hex(6)}"
        try:
            fd = os.open(f"{folder}{LOCK_SUFFIX}", os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            os.unlink(f"{folder}{LOCK_SUFFIX}")
            os.close(fd)
            continue
        return folder, fd


def sweep(base: Path | None = None) -> list[Path]:
    """Remove the judges' scratch folders in the scratch base that no judge uses any more (a grade-all killed with
    SIGKILL, a lost node: no cleanup ran), as budget.sweep_stale removes their cgroups: those whose lock no process
    holds, and those an older version made without a lock where no process has its working folder (and that are not
    being made this minute: its judge may be starting). A folder in use is never removed. Returns the folders
    removed."""
    base = scratch_base() if base is None else base
    try:
        names = {e.name for e in os.scandir(base) if e.name.startswith(JUDGE_PREFIX)}
    except OSError:
        return []
    removed, working = [], None
    for name in sorted(n for n in names if not n.endswith(LOCK_SUFFIX) or n.removesuffix(LOCK_SUFFIX) not in names):
        folder = base / name.removesuffix(LOCK_SUFFIX)
        try:
            fd = os.open(f"{folder}{LOCK_SUFFIX}", os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:  # an older version's folder: in use while a process works in it, or just made
            working = _working_folders() if working is None else working
            if not _in_use(folder, working):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
            os.unlink(f"{folder}{LOCK_SUFFIX}")
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def _in_use(folder: Path, working: list[str]) -> bool:
    """Whether an older version's judge folder (no lock beside it) may be in use: a process works in it, or it was
    made this minute; or it is not a folder of its own (a link) or is gone."""
    try:
        info = folder.lstat()
    except OSError:
        return True
    return not stat.S_ISDIR(info.st_mode) or time.time() - info.st_mtime < LEGACY_GRACE or any(
        w == str(folder) or w.startswith(f"{folder}{os.sep}") for w in working)


def _working_folders() -> list[str]:
    """The working folder of every process this judge may look at (/proc/<pid>/cwd)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                found.append(os.readlink(f"/proc/{pid}/cwd"))
            except OSError:
                pass
    return found
