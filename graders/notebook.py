"""What a graded cell of the nbgrader notebook calls: one task's score for the files beside it.

The hidden part of every graded cell is this one line::

    from graders.notebook import task; task("1.4")

The first call in a kernel grades the whole submission (the notebook's folder)
once, through the same judge and worker as ``autograd-lab grade``, run as a
subprocess: the judge never shares a process with the student's code, which
the notebook's visible checks have imported into the kernel, and whatever the
judge writes on stderr stays out of the cell (nbgrader zeroes a cell with any
stderr). The scorecard is kept, keyed by a hash of the files, so the other
cells only look their task up. Neither torch nor the judge is imported into the kernel.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from . import messages as msg

# The longest a whole grading may take; nbgrader_config.py gives each cell more (nbgrader_course.CELL_TIMEOUT).
GRADE_TIMEOUT = 600

_scorecards: dict[str, dict] = {}


def files_hash(folder: Path) -> str:
    """A hash of the top-level .py files' names and contents: the files the judge grades."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob("*.py")):
        if path.is_file() and not path.is_symlink():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def scorecard(folder: Path | str | None = None) -> dict:
    """The results dict (Gradescope's schema) of the .py files in ``folder`` (default: the working
    directory, the notebook's folder), graded once per kernel and content; ``{"error": text}`` when
    the judge could not grade them."""
    folder = Path.cwd() if folder is None else Path(folder).resolve()
    key = files_hash(folder)
    if key not in _scorecards:
        _scorecards[key] = _grade(folder)
    return _scorecards[key]


def _grade(folder: Path) -> dict:
    """Run ``python -m graders grade FOLDER --results FILE`` from an empty working directory (so no
    student file can shadow a module the judge imports) and read the results file it writes."""
    with tempfile.TemporaryDirectory(prefix="agl-nb-") as scratch:
        results = Path(scratch) / "results.json"
        command = [sys.executable, "-m", "graders", "grade", str(folder), "--results", str(results)]
        try:
            run = subprocess.run(command, cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=GRADE_TIMEOUT)
        except subprocess.TimeoutExpired:
            return {"error": msg.NOTEBOOK_JUDGE_TIMEOUT.format(seconds=GRADE_TIMEOUT)}
        if results.exists():
            return json.loads(results.read_text())
        said = (run.stderr.strip() or run.stdout.strip()).splitlines()
        why = said[-1] if said else f"exit status {run.returncode}"
        return {"error": msg.NOTEBOOK_NOT_GRADED.format(folder=folder, why=why)}


def task(task_id: str, folder: Path | str | None = None) -> float:
    """Print task ``task_id``'s message and return its points (the cell's last expression: nbgrader's
    partial credit)."""
    result = scorecard(folder)
    if "error" in result:
        print(result["error"])
        return 0.0
    test = next((t for t in result["tests"] if t["number"] == task_id), None)
    if test is None:
        print(msg.NOTEBOOK_NO_SUCH_TASK.format(task=task_id))
        return 0.0
    print(test["output"])
    return float(test["score"])
