"""A worker's working folder, read and written by the judge from outside the worker.

What a worker says about its own files is its word: student code shares its
process and can rewrite the reply. So where a task is about a file (5.5's
checkpoint, at exactly the path given), the judge looks for itself. Without
bubblewrap the folder is ``scratch/work/<key>/`` on the judge's own
filesystem; with it, it is a tmpfs that only the sandbox's mount namespace
holds, which the judge reaches through ``/proc/<pid>/root`` of a process in
that namespace.

Every name is opened relative to the folder with ``O_NOFOLLOW``: beyond
``/proc/<pid>/root`` an absolute symbolic link would resolve in the *judge's*
root, so a worker that left a link at the checkpoint's path could otherwise
have the judge read (or write) one of its own files. A FIFO is never waited
on (``O_NONBLOCK``), and a file is read up to ``MAX_FILE_BYTES`` only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

MAX_FILE_BYTES = 16 * 2**20  # a checkpoint of the checks' runs is a few KB
MAX_NAMES = 200  # names listed of a folder (a worker may fill its own with thousands)
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Unreachable(Exception):
    """The judge cannot open the worker's folder from outside (the process ended, or this machine refuses
    ``/proc/<pid>/root``)."""


class Ended(Unreachable):
    """The worker process has ended, and its folder with it (under bubblewrap, a tmpfs of its sandbox)."""


class NotAFile(Exception):
    """The name is there but is no regular file (a link, a folder, a FIFO...), or is too large to read."""


KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
         (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def _kind(mode: int) -> str:
    return next((text for test, text in KINDS if test(mode)), "not a regular file")


@contextlib.contextmanager
def opened(path: Path, below: tuple[str, ...] = ()):
    """A descriptor of the folder ``path``/``below``..., each name of ``below`` opened without following a
    link (``path`` is the judge's own: followed); Unreachable when any of it cannot be opened."""
    fds = []
    try:
        try:
            fds.append(os.open(path, _DIRECTORY & ~os.O_NOFOLLOW))  # /proc/<pid>/root is a link to follow
            for name in below:
                fds.append(os.open(name, _DIRECTORY, dir_fd=fds[-1]))
        except OSError as error:
            raise Unreachable(f"{path}: {error.strerror or error}") from None
        yield fds[-1]
    finally:
        for fd in fds:
            os.close(fd)


def names(folder: int) -> list[str]:
    """The folder's names, sorted, at most MAX_NAMES of them."""
    return sorted(os.listdir(folder))[:MAX_NAMES]


def read(folder: int, name: str, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file ``name`` in the folder, or None where there is no such name; NotAFile
    where it is something else, or larger than ``limit`` bytes (MAX_FILE_BYTES unless given)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC,
                     dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError:  # ELOOP for a link, ENXIO for a socket...: say what the name is
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        raise NotAFile(_kind(mode)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(_kind(info.st_mode))
        if info.st_size > limit:
            raise NotAFile(f"a file of {info.st_size} bytes (the judge reads at most {limit})")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while it was read
            raise NotAFile(f"a file of more than {limit} bytes")
        return data
    finally:
        os.close(fd)


def write(folder: int, name: str, data: bytes, owner: int | None) -> None:
    """``name`` in the folder made a new regular file of ``data``, owned by ``owner`` (the worker's uid, so that
    the worker may replace it in its sticky folder); whatever was at that name is unlinked first, and the new
    file is created exclusively, so a link put there meanwhile is never followed."""
    remove(folder, [name])
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder)
    try:
        if owner is not None:
            os.fchown(fd, owner, owner)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def remove(folder: int, remove_names) -> None:
    """Unlink each name in the folder that is not a folder itself (there or not)."""
    for name in remove_names:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            os.unlink(name, dir_fd=folder)
