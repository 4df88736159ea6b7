"""Gradescope: build the autograder zip, and grade one submission inside it.

    autograd-lab gradescope OUT.zip                                 (build, from a checkout)
    python -I -m graders.integrations.gradescope run SUBMISSION RESULTS_JSON [--isolation bubblewrap]
                                                                    (what run_autograder calls)

The zip holds ``setup.sh`` (installs Python, torch's CPU wheel pinned, and the
wheel of this package built from the checkout, so no private index is needed),
``run_autograder`` (grades ``/autograder/submission`` into
``/autograder/results/results.json``), ``constraints.txt`` and the wheel.
Whatever happens, ``run`` writes a results.json: a submission that cannot be
graded, or a grader that fails, scores 0 with a message that says why. So does one
that the container cannot sandbox: a Gradescope grade counts, so it runs in bubblewrap
or not at all (graders.isolation.sandbox.choose), and the message names the fix.
"""

from __future__ import annotations

if __name__ == "__main__":  # before any import the working folder could shadow: graders.entry says why
    from graders.entry import guard

    guard("graders.integrations.gradescope")

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.cli_options import add_isolation_option
from graders.course.templates import fill, torch_version
from graders.files import atomic_write

TEMPLATES = paths.TEMPLATES
SOURCE_PARTS = ("pyproject.toml", "README.md", "graders", "exercises")  # never solutions/: the wheel holds none


def build_wheel(repo: Path, into: Path) -> Path:
    """The package's wheel, built from a clean copy of the checkout at ``repo`` (no build folders left in it)."""
    for part in SOURCE_PARTS:
        if not (repo / part).exists():
            raise FileNotFoundError(msg.NEEDS_CHECKOUT.format(command="autograd-lab gradescope", path=repo / part)
                                    + msg.GRADESCOPE_OR_WHEEL)
    with tempfile.TemporaryDirectory(prefix="agl-wheel-") as tmp:
        source = Path(tmp) / "autograd-lab"
        source.mkdir()
        for part in SOURCE_PARTS:
            if (repo / part).is_dir():
                shutil.copytree(repo / part, source / part,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
            else:
                shutil.copyfile(repo / part, source / part)
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                               "--wheel-dir", str(into), str(source)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(msg.GRADESCOPE_BUILD_FAILED.format(code=done.returncode,
                                                                  output=(done.stdout + done.stderr)[-2000:]))
    return next(Path(into).glob("autograd_lab-*.whl"))


def build_zip(out: Path, repo: Path, wheel: Path | None = None) -> tuple[Path, str]:
    """Write the autograder zip to ``out``; returns it and the wheel's file name. The wheel is ``wheel`` when
    given (an installed package has no checkout to build one from), else built from the checkout at ``repo``."""
    version = torch_version()
    with tempfile.TemporaryDirectory(prefix="agl-gradescope-") as tmp:
        if wheel is not None:
            if not (Path(wheel).is_file() and Path(wheel).name.startswith("autograd_lab-")
                    and Path(wheel).suffix == ".whl"):
                raise FileNotFoundError(msg.GRADESCOPE_NO_WHEEL.format(wheel=wheel))
        else:
            wheel = build_wheel(repo, Path(tmp))
        files = {
            "setup.sh": fill((TEMPLATES / "gradescope" / "setup.sh").read_text(), torch_version=version,
                             wheel=wheel.name),
            "run_autograder": (TEMPLATES / "gradescope" / "run_autograder").read_text(),
            "constraints.txt": f"torch=={version}\n",
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, text in files.items():
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, text)
            zf.write(wheel, wheel.name)
        partial.replace(out)
    return out, wheel.name


def not_graded(why: str) -> dict:
    """A results.json for a submission that could not be graded: 0 points, and why."""
    from graders.tasks import TOTAL_POINTS

    return {"score": 0.0, "output": why, "visibility": "visible", "stdout_visibility": "hidden", "tests": [],
            "extra_data": {"max_score": float(TOTAL_POINTS), "examples": 0}}


def run(submission: Path, results: Path, isolation: str = "auto") -> int:
    """Grade ``submission`` (the student's files, or a folder or .zip of them) into ``results``; always writes it.
    1 where it could not grade: the grader failed, or ``isolation`` cannot be had here."""
    from graders import pipeline
    from graders.isolation import sandbox
    from graders.results import scorecard
    from graders.submission import layout

    try:
        try:
            result = pipeline.grade_submission(submission, isolation=isolation).result
        except layout.SubmissionError as error:
            result = not_graded(msg.GRADESCOPE_NOT_GRADED.format(why=error))
        except sandbox.Unavailable as error:
            print(error, file=sys.stderr)  # the autograder's log, for the instructor
            atomic_write(results, scorecard.dumps(not_graded(msg.GRADESCOPE_REFUSED.format(why=error))))
            return 1
    except Exception as error:  # noqa: BLE001 - Gradescope must get a results.json whatever happens
        why = msg.GRADESCOPE_CRASHED.format(error=f"{type(error).__name__}: {error}")
        atomic_write(results, scorecard.dumps(not_graded(why)))
        return 1
    atomic_write(results, scorecard.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m graders.integrations.gradescope run SUBMISSION RESULTS``, what the zip's run_autograder calls; the
    exit status of ``run``."""
    parser = argparse.ArgumentParser(prog="python -m graders.integrations.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade a submission into a results.json (what run_autograder calls)")
    r.add_argument("submission", type=Path)
    r.add_argument("results", type=Path)
    add_isolation_option(r)
    args = parser.parse_args(argv)
    return run(args.submission, args.results, args.isolation)


if __name__ == "__main__":
    raise SystemExit(main())
