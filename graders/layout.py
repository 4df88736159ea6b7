"""The scratch folder a submission is graded in, laid out by the judge.

    scratch/runtime/worker/   the worker's code (a copy of graders/worker)
    scratch/pkgs/ref/         the reference solution
    scratch/pkgs/sub_<m>/     the student's <m>.py beside the reference for the rest
    scratch/pkgs/sub_all/     every student module (the end-to-end check)
    scratch/work/             the worker's working directory
    scratch/log/              the worker's stdout and stderr, size-capped

Each hybrid holds the reference ``__init__.py``, so a broken file in one part
of a submission costs only the tasks of that file.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import paths

GRADED_MODULES = ("tensor", "optim", "data", "train", "torch_loop")
MAX_SUBMISSION_BYTES = 2 * 2**20


class SubmissionError(ValueError):
    """A submission path that cannot be graded at all."""


def student_files(submission: Path) -> dict[str, Path]:
    """The submission's top-level .py files by module name; raises SubmissionError if there is nothing to grade."""
    submission = Path(submission)
    if not submission.exists():
        raise SubmissionError(f"{submission}: no such folder")
    if not submission.is_dir():
        raise SubmissionError(f"{submission}: not a folder (expected a folder laid out like exercises/)")
    files = {p.stem: p for p in sorted(submission.glob("*.py")) if p.is_file() and not p.is_symlink()}
    if not any(name in files for name in GRADED_MODULES):
        raise SubmissionError(f"{submission}: holds none of {', '.join(m + '.py' for m in GRADED_MODULES)}; "
                              "expected a folder laid out like exercises/")
    size = sum(p.stat().st_size for p in files.values())
    if size > MAX_SUBMISSION_BYTES:
        raise SubmissionError(f"{submission}: its .py files hold {size} bytes, more than {MAX_SUBMISSION_BYTES}")
    return files


@dataclass
class Layout:
    root: Path
    missing: tuple[str, ...]

    @property
    def runtime(self) -> Path:
        return self.root / "runtime"

    @property
    def packages(self) -> Path:
        return self.root / "pkgs"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def log(self) -> Path:
        return self.root / "log"

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def lay_out(submission: Path, scratch_parent: Path | None = None) -> Layout:
    files = student_files(submission)
    root = Path(tempfile.mkdtemp(prefix="agl-", dir=scratch_parent))
    try:
        shutil.copytree(Path(__file__).parent / "worker", root / "runtime" / "worker",
                        ignore=shutil.ignore_patterns("__pycache__"))
        reference = {p.stem: p for p in paths.SOLUTIONS.glob("*.py")}
        extras = {name: p for name, p in files.items() if name not in reference}
        _package(root / "pkgs" / "ref", reference)
        for name in GRADED_MODULES:
            _package(root / "pkgs" / f"sub_{name}", {**reference, **extras, **_pick(files, name)})
        _package(root / "pkgs" / "sub_all", {**reference, **extras,
                                              **{n: p for n, p in files.items() if n != "__init__"}})
        for folder in ("work", "log"):
            (root / folder).mkdir()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return Layout(root, tuple(m for m in GRADED_MODULES if m not in files))


def _pick(files: dict[str, Path], name: str) -> dict[str, Path]:
    return {name: files[name]} if name in files else {}


def _package(folder: Path, files: dict[str, Path]) -> None:
    folder.mkdir(parents=True)
    for name, source in files.items():
        shutil.copyfile(source, folder / f"{name}.py")
