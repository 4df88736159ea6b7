"""Finding the reference solution where it must not be: each graded body of solutions/, and its lines that
occur nowhere else (not in the given code, not in the graders), so that even a piece of one shows."""

from __future__ import annotations

import functools
import html
import io
import zipfile
from pathlib import Path

from graders import paths
from graders.course import build

DISTINCTIVE = 30  # characters: shorter body lines (``return total``) also occur in honest code


@functools.cache
def solution_bodies() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each graded body of solutions/ as (where, its stripped non-empty lines)."""
    bodies = []
    for path in sorted(paths.SOLUTIONS.glob("*.py")):
        region, start = None, 0
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if build.BEGIN.match(line):
                region, start = [], number
            elif build.END.match(line):
                bodies.append((f"{path.name}:{start}", tuple(text.strip() for text in region if text.strip())))
                region = None
            elif region is not None:
                region.append(line)
    return tuple(bodies)


@functools.cache
def distinctive_lines() -> frozenset[str]:
    """Body lines of at least DISTINCTIVE characters that the given code does not hold (the stubs' docstrings say
    some of it in words: ``(loss / accumulate).backward()``)."""
    return frozenset(line for _, body in solution_bodies() for line in body
                     if len(line) >= DISTINCTIVE and line not in given_text())


@functools.cache
def given_text() -> str:
    """All of the given code: the stubs, the given modules and the public tests (exercises/)."""
    return "\n".join(path.read_text() for path in sorted(paths.GIVEN.rglob("*.py")))


@functools.cache
def secret_bodies() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The graded bodies of more than one line that the given code does not hold already."""
    return tuple((where, body) for where, body in solution_bodies() if len(body) > 1 and not holds(given_text(), body))


def holds(text: str, body) -> bool:
    """Whether ``body``'s lines occur in ``text``, one after another (indentation aside)."""
    body = list(body)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return any(lines[i:i + len(body)] == body for i in range(len(lines) - len(body) + 1))


def found(text: str) -> list[str]:
    """What of the solution ``text`` holds: whole bodies (by where they are) and distinctive lines. Text escaped
    for HTML or XML is read unescaped too."""
    hits = []
    for version in dict.fromkeys((text, html.unescape(text))):
        hits += [where for where, body in secret_bodies() if holds(version, body)]
        hits += [line for line in distinctive_lines() if line in version]
    return sorted(set(hits))


def scan_zip(data: bytes, name: str = "") -> dict[str, list[str]]:
    """Every text file of a zip (and of the zips inside it), by name, with what of the solution it holds."""
    hits = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for member in archive.namelist():
            content = archive.read(member)
            if member.endswith((".zip", ".whl")):
                hits.update(scan_zip(content, f"{name}{member}!"))
                continue
            text = content.decode("utf-8", errors="replace")
            if found(text):
                hits[f"{name}{member}"] = found(text)
    return hits


def scan_tree(folder: Path) -> dict[str, list[str]]:
    hits = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            if found(text):
                hits[str(path)] = found(text)
    return hits


SYSTEM = ("/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/boot", "/run",
          "/var/lib", "/var/cache", "/snap")
MODULE_NAMES = ("tensor.py", "optim.py", "data.py", "train.py", "nn.py", "torch_loop.py", "lesson.py", "__init__.py")
