"""A class's submissions as they arrive: folders and .zip files, found, hashed and safely unpacked.

A submission is an entry of the class folder: a folder laid out like exercises/
or a .zip of one (``alice/`` or ``alice.zip``; the student is ``alice``). Its
content hash decides whether ``grade-all`` grades it again. A .zip is unpacked
without trusting it: no absolute paths, no ``..``, no links, a cap on files and
on bytes (counted as they are written, not as the archive claims).
"""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from graders import messages as msg
from graders.submission.layout import SubmissionError
from graders.tasks import GRADED_MODULES

ZIP_MAX_BYTES = 20 * 2**20
ZIP_MAX_FILES = 2000
# Never part of a submission: editors', operating systems' and Python's leftovers.
IGNORED = frozenset({"__MACOSX", "__pycache__", ".git", ".DS_Store", ".ipynb_checkpoints", ".pytest_cache",
                     ".hypothesis"})
SEARCH_DEPTH = 3


@dataclass(frozen=True)
class Submission:
    """One student's submission as found in the class folder: the student's name (the entry's, less a .zip suffix) and
    the folder or .zip it is in."""
    student: str
    path: Path

    @property
    def is_zip(self) -> bool:
        """Whether the submission is a .zip file to unpack (safely) rather than a folder."""
        return self.path.suffix.lower() == ".zip" and not self.path.is_dir()


def name_of(path: Path) -> str:
    """The student's name for the submission at ``path``, as grade-all names an entry of a class folder: a folder's
    name, a .zip's without its suffix (``.`` is the working folder's name)."""
    path = Path(os.path.abspath(path))
    return path.stem if path.suffix.lower() == ".zip" and not path.is_dir() else path.name


def discover(folder: Path, *, exclude: tuple[Path, ...] = ()) -> list[Submission]:
    """Every submission in ``folder``, sorted by student name; hidden entries and other files are left out.

    When both ``alice/`` and ``alice.zip`` exist, the .zip keeps its suffix as its name (``alice.zip``).
    """
    excluded = {p.resolve() for p in exclude}
    entries = sorted(p for p in Path(folder).iterdir()
                     if not p.name.startswith(".") and p.name not in IGNORED and p.resolve() not in excluded)
    folders = {p.name for p in entries if p.is_dir()}
    found = []
    for path in entries:
        if path.is_dir():
            found.append(Submission(path.name, path))
        elif path.is_file() and path.suffix.lower() == ".zip":
            found.append(Submission(path.name if path.stem in folders else path.stem, path))
    return sorted(found, key=lambda s: s.student)


def content_hash(submission: Submission) -> str:
    """sha256 of what the submission holds: a .zip's bytes, or a folder's file names and contents.

    Only regular files are opened (found with lstat): a FIFO, a device or a socket would hang or never end, so
    only its name and kind count, and a file past HASH_FILE_BYTES (too big to grade; perhaps a sparse file
    of terabytes) counts by its name, size and modification time, never read.
    """
    digest = hashlib.sha256()
    if submission.is_zip:
        digest.update(b"zip\0")
        _update_file(digest, submission.path)
        return digest.hexdigest()
    digest.update(b"folder\0")
    root = submission.path
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in IGNORED)
        for name in sorted(files):
            if name in IGNORED or name.endswith(".pyc"):
                continue
            path = Path(folder, name)
            relative = os.fsencode(path.relative_to(root).as_posix())
            if path.is_symlink():
                digest.update(b"link\0" + relative + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
            else:
                digest.update(b"file\0" + relative + b"\0")
                _update_file(digest, path)
    return digest.hexdigest()


HASH_FILE_BYTES = 64 * 2**20


def _update_file(digest, path: Path) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        digest.update(b"gone\0")
        return
    if not stat.S_ISREG(info.st_mode):
        digest.update(b"special %o\0" % stat.S_IFMT(info.st_mode))
        return
    if info.st_size > HASH_FILE_BYTES:
        digest.update(b"large %d %d\0" % (info.st_size, info.st_mtime_ns))
        return
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    digest.update(b"\0")


def unpack(submission: Submission, scratch: Path) -> Path:
    """The folder to grade: a .zip unpacked into ``scratch`` (also the one .zip a folder holds and nothing else,
    as Gradescope keeps an upload), then the package found inside (``locate``)."""
    archive = submission.path if submission.is_zip else _only_zip(submission.path)
    if archive is None:
        return locate(submission.path, name=submission.student)
    folder = Path(scratch) / "unpacked"
    extract_zip(archive, folder, name=submission.student if submission.is_zip else archive.name)
    return locate(folder, name=submission.student)


def _only_zip(folder: Path) -> Path | None:
    """The .zip that ``folder`` holds and nothing else (hidden entries aside), if that is what it holds."""
    if not folder.is_dir() or holds_package(folder):
        return None
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].suffix.lower() == ".zip" and stat.S_ISREG(os.lstat(entries[0]).st_mode):
        return entries[0]
    return None


def extract_zip(archive: Path, dest: Path, *, name: str) -> None:
    """Unpack ``archive`` into ``dest``, refusing anything unsafe; raises SubmissionError with the reason."""
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > ZIP_MAX_FILES:
                raise SubmissionError(msg.ZIP_TOO_MANY.format(name=name, limit=ZIP_MAX_FILES))
            dest.mkdir(parents=True, exist_ok=True)
            budget = ZIP_MAX_BYTES
            for member in members:
                target = _member_path(member, dest, name)
                if target is None:
                    continue
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                budget = _copy_member(zf, member, target, budget, name)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as error:
        raise SubmissionError(msg.ZIP_UNREADABLE.format(name=name, error=error)) from None


def _member_path(member: zipfile.ZipInfo, dest: Path, name: str) -> Path | None:
    """Where ``member`` goes under ``dest``; None for leftovers to skip; SubmissionError for anything unsafe."""
    raw = member.filename.replace("\\", "/")
    parts = PurePosixPath(raw).parts
    if raw.startswith("/") or (parts and ":" in parts[0]) or ".." in parts:
        raise SubmissionError(msg.ZIP_UNSAFE.format(name=name, member=member.filename))
    if stat.S_ISLNK(member.external_attr >> 16):
        raise SubmissionError(msg.ZIP_LINK.format(name=name, member=member.filename))
    if member.flag_bits & 0x1:
        raise SubmissionError(msg.ZIP_ENCRYPTED.format(name=name, member=member.filename))
    parts = tuple(p for p in parts if p not in ("", "."))
    if not parts or any(p in IGNORED for p in parts) or parts[-1].startswith("._"):
        return None
    return dest.joinpath(*parts)


def _copy_member(zf: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, budget: int, name: str) -> int:
    """Copy one member, counting the bytes really written against ``budget``; returns what is left."""
    with zf.open(member) as source, open(target, "wb") as out:
        for chunk in iter(lambda: source.read(1 << 16), b""):
            budget -= len(chunk)
            if budget < 0:
                raise SubmissionError(msg.ZIP_TOO_BIG.format(name=name, limit=ZIP_MAX_BYTES))
            out.write(chunk)
    return budget


def holds_package(folder: Path) -> bool:
    """Whether ``folder`` holds at least one graded module's .py: the folder laid out like exercises/ that intake looks
    for."""
    return any((folder / f"{module}.py").is_file() for module in GRADED_MODULES)


def locate(folder: Path, *, name: str) -> Path:
    """The folder laid out like exercises/: ``folder`` itself, or the one such folder below it.

    Students often hand in the folder above (``alice/exercises/tensor.py``) or a .zip of it.
    Returns ``folder`` when nothing is found, so that grading says what is missing.
    """
    if not folder.is_dir() or holds_package(folder):
        return folder
    level = [folder]
    for _ in range(SEARCH_DEPTH):
        level = sorted(child for parent in level for child in parent.iterdir()
                       if child.is_dir() and not child.is_symlink() and child.name not in IGNORED
                       and not child.name.startswith("."))
        found = [child for child in level if holds_package(child)]
        if len(found) == 1:
            return found[0]
        if found:
            shown = ", ".join(f"{p.relative_to(folder).as_posix()}/" for p in found)
            raise SubmissionError(msg.SEVERAL_PACKAGES.format(name=name, found=shown))
    return folder
