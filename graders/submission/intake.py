"""A class's submissions as they arrive: folders and .zip files, found, hashed and safely unpacked.

A submission is an entry of the class folder: a folder laid out like exercises/
or a .zip of one (``alice/`` or ``alice.zip``; the student is ``alice``). Its
content hash decides whether ``grade-all`` grades it again: the hash of what
grading reads, the package's .py files (or the .zip's bytes), found by a search
of bounded depth and breadth, so that no tree a student hands in (a chain of a
thousand folders, a million files) can stop or stall the class. A .zip is
unpacked without trusting it: no absolute paths, no ``..``, no links, a cap on
files and on bytes (counted as they are written, not as the archive claims).
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
SEARCH_ENTRIES = 20_000  # entries locate looks at, over its levels, before it gives up on a submission


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a student's (a submission's entry in the class folder, and a folder of grade-all's
    OUT_DIR/students/), or None: discover never finds an empty or hidden name, one it ignores, one with a path
    separator or a NUL; any other text is a name (its bytes round-trip)."""
    if not isinstance(name, str) or not name:
        return msg.NAME_EMPTY
    if "/" in name or "\0" in name or (os.altsep and os.altsep in name):
        return msg.NAME_SEPARATOR
    if name.startswith(".") or name in IGNORED:
        return msg.NAME_HIDDEN
    return None


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
                     if name_problem(p.name) is None and p.resolve() not in excluded)
    folders = {p.name for p in entries if p.is_dir()}
    found = []
    for path in entries:
        if path.is_dir():
            found.append(Submission(path.name, path))
        elif path.is_file() and path.suffix.lower() == ".zip":
            found.append(Submission(path.name if path.stem in folders else path.stem, path))
    return sorted(found, key=lambda s: s.student)


def refusal(submission: Submission) -> str | None:
    """Why ``submission`` is not graded at all, before any judge sees it, or None: an entry of the class folder that
    is a symbolic link (it would grade whatever it points to: a classmate's folder, a file of the machine)."""
    if submission.path.is_symlink():
        return msg.SUBMISSION_LINK.format(name=submission.student)
    return None


def content_hash(submission: Submission) -> str:
    """sha256 of what grading reads of the submission: a .zip's bytes (a folder holding one .zip and nothing else
    counts as that .zip), or the place of the folder laid out like exercises/ and its .py files' names and contents.

    Nothing else of the folder is read, so no tree can stop the hash: the package is found by ``locate``'s bounded
    search, a submission it refuses hashes as that refusal (the judge then refuses it the same way), and a file that
    cannot be read counts by its name. Only regular files are opened (found with lstat): a FIFO, a device or a
    socket would hang or never end, so only its name and kind count, and a file past HASH_FILE_BYTES (too big to
    grade; perhaps a sparse file of terabytes) counts by its name, size and modification time, never read.
    """
    digest = hashlib.sha256()
    try:
        archive = submission.path if submission.is_zip else _only_zip(submission.path)
        if archive is not None:
            digest.update(b"zip\0")
            _update_file(digest, archive)
            return digest.hexdigest()
        package = locate(submission.path, name=submission.student)
        digest.update(b"folder\0" + os.fsencode(package.relative_to(submission.path).as_posix()) + b"\0")
        for path in sorted(package.glob("*.py")):
            relative = os.fsencode(path.name)
            if path.is_symlink():
                digest.update(b"link\0" + relative + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
            else:
                digest.update(b"file\0" + relative + b"\0")
                _update_file(digest, path)
    except (SubmissionError, OSError) as error:
        digest.update(b"refused\0" + os.fsencode(str(error)))
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
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as error:
        digest.update(b"unreadable %d %d\0" % (error.errno or 0, info.st_mtime_ns))
        return
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
    entries = []
    for entry in _entries(folder, name=folder.name):
        if not entry.name.startswith("."):
            entries.append(entry)
            if len(entries) > 1:
                return None
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
    def there(path: Path) -> bool:
        try:
            return path.is_file()
        except OSError:  # a folder that cannot be searched (its mode, a name too long): nothing found there
            return False

    return any(there(folder / f"{module}.py") for module in GRADED_MODULES)


def _entries(folder: Path, *, name: str):
    """The entries of ``folder``; SubmissionError where it cannot be read."""
    try:
        yield from folder.iterdir()
    except OSError as error:
        raise SubmissionError(msg.SUBMISSION_UNREADABLE.format(name=name, error=error.strerror or error)) from None


def locate(folder: Path, *, name: str) -> Path:
    """The folder laid out like exercises/: ``folder`` itself, or the one such folder below it.

    Students often hand in the folder above (``alice/exercises/tensor.py``) or a .zip of it.
    Returns ``folder`` when nothing is found, so that grading says what is missing.
    """
    if not folder.is_dir() or holds_package(folder):
        return folder
    level, seen = [folder], 0
    for _ in range(SEARCH_DEPTH):
        children = []
        for parent in level:
            for child in _entries(parent, name=name):
                seen += 1
                if seen > SEARCH_ENTRIES:
                    raise SubmissionError(msg.SUBMISSION_TOO_MANY.format(name=name, limit=SEARCH_ENTRIES,
                                                                         depth=SEARCH_DEPTH))
                if not child.name.startswith(".") and child.name not in IGNORED and _is_folder(child):
                    children.append(child)
        level = sorted(children)
        found = [child for child in level if holds_package(child)]
        if len(found) == 1:
            return found[0]
        if found:
            shown = ", ".join(f"{p.relative_to(folder).as_posix()}/" for p in found)
            raise SubmissionError(msg.SEVERAL_PACKAGES.format(name=name, found=shown))
    return folder


def _is_folder(path: Path) -> bool:
    """A real folder (never a link to one), found with lstat."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
