"""Generate the student's stubs from solutions/ (nbgrader's marker rules).

Each region between ``### BEGIN SOLUTION (Task 1.4: backward of @)`` and
``### END SOLUTION`` becomes one line at the marker's indentation:
``raise NotImplementedError("Task 1.4: backward of @")``. Everything else,
docstrings with the math included, is copied as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

BEGIN = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION \((?P<label>Task \d\.\d.*)\)[ \t]*$")
END = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")
ANY_MARKER = re.compile(r"###\s*(BEGIN|END) SOLUTION")


class MarkerError(ValueError):
    """A solution file whose markers do not pair up or carry no task id."""


def stub_source(text: str, filename: str = "<source>") -> str:
    """The stub version of one solution file's text."""
    out, region_start = [], None
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if region_start is None and begin:
            region_start = number
            out.append(f'{begin["indent"]}raise NotImplementedError("{begin["label"]}")\n')
        elif region_start is not None and end:
            region_start = None
        elif ANY_MARKER.search(line):
            raise MarkerError(f"{filename}:{number}: unexpected or malformed marker: {line.strip()!r} "
                              "(expected '### BEGIN SOLUTION (Task X.Y: title)' ... '### END SOLUTION')")
        elif region_start is None:
            out.append(line)
    if region_start is not None:
        raise MarkerError(f"{filename}:{region_start}: BEGIN SOLUTION without END SOLUTION")
    return "".join(out)


def expected_exercises(solutions_dir: Path) -> dict[str, str]:
    """File name to the text exercises/ must hold for it."""
    return {path.name: stub_source(path.read_text(), str(path))
            for path in sorted(Path(solutions_dir).glob("*.py"))}


def build_exercises(solutions_dir: Path, out_dir: Path) -> list[str]:
    """Write the stubs into ``out_dir``; returns the names of the files that changed."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in expected_exercises(solutions_dir).items():
        target = out_dir / name
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
            changed.append(name)
    return changed


def out_of_sync(solutions_dir: Path, exercises_dir: Path) -> list[str]:
    """Names of the generated files that regenerating would change."""
    exercises_dir = Path(exercises_dir)
    return [name for name, text in expected_exercises(solutions_dir).items()
            if not (exercises_dir / name).exists() or (exercises_dir / name).read_text() != text]
