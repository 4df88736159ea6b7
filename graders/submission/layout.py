"""The scratch folder a submission is graded in, laid out by the judge.

    scratch/runtime/worker/        the worker's code (a copy of graders/worker)
    scratch/pkgs/sub_<m>/          the student's <m>.py beside the given code (the stubs) for the rest
    scratch/pkgs/sub_train/        the student's train.py beside the given code and stand-ins (STANDINS)
    scratch/pkgs/sub_all/          every student module, the stubs for the missing ones (the end-to-end check)
    scratch/pkgs/judge_<what>/     a marker: its worker may call the oracles <what> names (ORACLE_PACKAGES)
    scratch/roots/<key>/           links to the packages one worker process may import (without bubblewrap)
    scratch/work/<key>/            one worker process's working directory (without bubblewrap)
    scratch/log/                   the workers' stdout and stderr, size-capped

Each hybrid holds the given ``__init__.py``, so a broken file in one part of a
submission costs only the tasks of that file. The other modules of a hybrid are
the given code, the stubs students start from (``paths.GIVEN``), so a worker
holds no solution body: everything it can read there is public. The loop tasks
run the student's train.py over stand-ins that compute with torch
(graders/worker/standins.py) instead of an engine and an optimizer; while fit
is graded, its train_epoch and evaluate are oracles (the judge answers them),
and the student's rules of 1.2 and 1.3 run over the oracle ``unbroadcast``
(``ORACLE_PACKAGES``). Each worker process sees only the packages it serves
(``graders.isolation.worker_process``). Nothing here reads solutions/: the installed
package does not hold it.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.tasks import GRADED_MODULES, ORACLES, WHOLE_STACK, package_of

# Packages that only mark a worker process, and the oracles it may call (graders.tasks.ORACLES).
ORACLE_PACKAGES = {oracle.package: oracle.answers for oracle in ORACLES}
# Modules of a hybrid that are stand-ins in place of the given code: they re-export the worker's torch-backed
# Tensor and optimizers (graders/worker/standins.py, imported by the worker before any student code).
_STANDIN = '"""A stand-in for the loop checks: {what} computed with torch (graders/worker/standins.py)."""\n\n'
STANDINS = {"train": {
    "tensor": _STANDIN.format(what="the Tensor") +
    "from worker.standins import Tensor, is_grad_enabled, no_grad, op, unbroadcast  # noqa: F401\n",
    "optim": _STANDIN.format(what="SGD and Adam") + "from worker.standins import SGD, Adam  # noqa: F401\n",
}}
MAX_SUBMISSION_BYTES = 2 * 2**20


class SubmissionError(ValueError):
    """A submission path that cannot be graded at all."""


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
         (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder"))


def not_regular(submission: Path) -> dict[str, str]:
    """The graded modules whose ``.py`` is there but is not a regular file (found with lstat, never opened), by
    module name, each with what it is instead: a link, a FIFO, a socket, a device or a folder."""
    found = {}
    for name in GRADED_MODULES:
        mode = _lstat_mode(Path(submission) / f"{name}.py")
        kind = next((text for test, text in KINDS if test(mode)), None)
        if kind is not None:
            found[name] = kind
    return found


def student_files(submission: Path) -> dict[str, Path]:
    """The submission's top-level .py files by module name; raises SubmissionError if there is nothing to grade."""
    submission = Path(submission)
    if not submission.exists():
        raise SubmissionError(msg.SUBMISSION_MISSING.format(submission=submission))
    if not submission.is_dir():
        raise SubmissionError(msg.SUBMISSION_NOT_A_FOLDER.format(submission=submission))
    files = {p.stem: p for p in sorted(submission.glob("*.py")) if stat.S_ISREG(_lstat_mode(p))}
    if not any(name in files for name in GRADED_MODULES):
        raise SubmissionError(msg.SUBMISSION_NO_MODULE.format(
            submission=submission, files=", ".join(m + ".py" for m in GRADED_MODULES)))
    size = sum(p.stat().st_size for p in files.values())
    if size > MAX_SUBMISSION_BYTES:
        raise SubmissionError(msg.SUBMISSION_TOO_LARGE.format(submission=submission, size=size,
                                                            most=MAX_SUBMISSION_BYTES))
    return files


@dataclass
class Layout:
    """A submission laid out in its scratch folder: where everything is (see the module's docstring), the graded modules
    it lacks and those whose .py is not a regular file, which their tasks report instead of grading."""
    root: Path
    missing: tuple[str, ...]
    not_regular: dict[str, str] = field(default_factory=dict)  # missing modules whose .py is a link, a FIFO, ...

    @property
    def runtime(self) -> Path:
        """The folder that holds the worker's code (runtime/worker), the one import root every worker gets."""
        return self.root / "runtime"

    @property
    def packages(self) -> Path:
        """The folder of the hybrid packages (pkgs/sub_*) and the oracle markers (pkgs/judge_*)."""
        return self.root / "pkgs"

    @property
    def roots(self) -> Path:
        """The folder of each worker's import root (links to the packages it may import) where no sandbox hides the
        rest."""
        return self.root / "roots"

    @property
    def work(self) -> Path:
        """The folder of each worker process's working directory where no sandbox gives it a private one."""
        return self.root / "work"

    @property
    def log(self) -> Path:
        """The folder of the workers' size-capped stdout and stderr."""
        return self.root / "log"

    def package_root(self, packages: tuple[str, ...]) -> Path:
        """A folder holding links to ``packages`` only: a worker's import root when no sandbox hides the rest."""
        root = self.roots / ("+".join(packages) or "none")
        if not root.exists():
            root.mkdir(mode=0o755)
            for name in packages:
                (root / name).symlink_to(self.packages / name, target_is_directory=True)
        return root

    def cleanup(self) -> None:
        """Remove the whole scratch folder: the student's copies, the workers' files and logs."""
        shutil.rmtree(self.root, ignore_errors=True)


def lay_out(submission: Path, scratch_parent: Path | None = None) -> Layout:
    """Copy ``submission``'s files into a fresh scratch folder (under ``scratch_parent``) as the workers' packages,
    beside a copy of the worker's code; nothing is left behind when this fails. The judge grades only this copy: the
    submission's own folder is read once, here."""
    files = student_files(submission)
    root = Path(tempfile.mkdtemp(prefix="agl-", dir=scratch_parent))
    try:
        shutil.copytree(paths.WORKER, root / "runtime" / "worker",
                        ignore=shutil.ignore_patterns("__pycache__"))
        given = {Path(name).stem: text for name, text in paths.given_modules().items()}
        extras = {name: p for name, p in files.items() if name not in given}
        for name, oracles in ORACLE_PACKAGES.items():
            (root / "pkgs" / name).mkdir(parents=True)
            (root / "pkgs" / name / "__init__.py").write_text(
                f'"""A marker: this worker may ask the judge for {", ".join(oracles)} (its answers, never code)."""\n')
        for name in GRADED_MODULES:
            _package(root / "pkgs" / package_of(name),
                     {**given, **STANDINS.get(name, {}), **extras, **_pick(files, name)})
        _package(root / "pkgs" / WHOLE_STACK,
                 {**given, **extras, **{n: p for n, p in files.items() if n != "__init__"}})
        for folder in ("roots", "work", "log"):
            (root / folder).mkdir()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return Layout(root, tuple(m for m in GRADED_MODULES if m not in files), not_regular(submission))


def _pick(files: dict[str, Path], name: str) -> dict[str, Path]:
    return {name: files[name]} if name in files else {}


def _package(folder: Path, files: dict[str, Path | str]) -> None:
    """A package of ``files``: module name to a file to copy, or to the module's text."""
    folder.mkdir(parents=True)
    for name, source in files.items():
        if isinstance(source, str):
            (folder / f"{name}.py").write_text(source)
        else:
            shutil.copyfile(source, folder / f"{name}.py")
