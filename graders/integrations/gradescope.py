"""Gradescope: build the autograder zip, and grade one submission inside it.

    autograd-lab gradescope OUT.zip [--course FILE]                 (build, from a checkout)
    python -I -m graders.integrations.gradescope run SUBMISSION RESULTS_JSON --course FILE --metadata FILE \
        [--isolation bubblewrap]
                                                                    (what run_autograder calls)

The zip holds ``setup.sh`` (installs Python, torch's CPU wheel and every other
dependency pinned, and the wheel of this package built from the checkout, so no
private index is needed), ``run_autograder`` (grades ``/autograder/submission``
into ``/autograder/results/results.json``), ``constraints.txt``, the wheel and
``course.toml``: the course's tasks, points, late policy, visibility and
secret (a fresh one, also kept beside the zip, where no course file is given).
Gradescope never shows the zip to students, and setup.sh makes the course file
readable by root alone, so no worker reads the secret. Each submission is
graded with its students' key, derived from the secret and their Gradescope user
ids (submission_metadata.json); without a secret or without the metadata,
nothing is graded.

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
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.cli_options import add_isolation_option
from graders.course import course_file
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


COURSE = "course.toml"


def constraints() -> str:
    """The pins the zip installs under: every distribution the package needs, at the version installed here, as
    .ci/constraints.txt pins CI's. Hypothesis's draws depend on its version, numpy's and torch's values on theirs:
    the autograder must draw and compute with the instructor's, so that a grade here and there agree."""
    return "".join(f"{name}=={version}\n" for name, version in sorted(installed_requirements().items()))


def installed_requirements(name: str = "autograd-lab") -> dict[str, str]:
    """Every distribution ``name`` needs (its own requirements, theirs, and so on; no extras), at the version
    installed here; the package itself is left out."""
    from importlib import metadata

    from packaging.requirements import Requirement

    found: dict[str, str] = {}
    todo = [name]
    while todo:
        try:
            dist = metadata.distribution(todo.pop())
        except metadata.PackageNotFoundError:
            continue
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            key = re.sub(r"[-_.]+", "-", req.name).lower()
            if key not in found:
                try:
                    found[key] = metadata.version(req.name).split("+", 1)[0]
                except metadata.PackageNotFoundError:
                    continue
                todo.append(req.name)
    return found


def build_zip(out: Path, repo: Path, wheel: Path | None = None,
              course: course_file.Course | None = None) -> tuple[Path, str, Path | None]:
    """Write the autograder zip to ``out``; returns it, the wheel's file name and the course file made for it (None
    where ``course`` was given). The wheel is ``wheel`` when given (an installed package has no checkout to build one
    from), else built from the checkout at ``repo``. Without ``course``, the default course with a fresh secret is
    written beside the zip (``OUT.course.toml``, readable by its owner alone): the instructor's copy, to grade a
    Gradescope student again elsewhere."""
    made = None
    if course is None:
        made = out.with_name(out.stem + ".course.toml")
        course_file.init(made, force=True)
        course = course_file.load(made)
    if not course.keyed:
        raise course_file.CourseError(msg.COURSE_NO_SECRET.format(where=course.path or msg.COURSE_DEFAULT,
                                                                  env=course_file.SECRET_ENV))
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
                             wheel=wheel.name, course=COURSE),
            "run_autograder": fill((TEMPLATES / "gradescope" / "run_autograder").read_text(), course=COURSE),
            "constraints.txt": constraints(),
            COURSE: course_file.text(course, secret=True),
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, text in files.items():
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else
                                      0o600 if name == COURSE else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, text)
            zf.write(wheel, wheel.name)
        partial.replace(out)
    return out, wheel.name, made


def not_graded(why: str, max_score: float = 0.0) -> dict:
    """A results.json for a submission that could not be graded: 0 points, and why."""
    return {"score": 0.0, "output": why, "visibility": "visible", "stdout_visibility": "hidden", "tests": [],
            "extra_data": {"max_score": float(max_score), "examples": 0}}


@dataclass(frozen=True)
class Submitter:
    """Who handed a Gradescope submission in, and when (submission_metadata.json): the users' ids (the key's
    identity), e-mail addresses and student ids (for their extensions), and the submission's time."""
    ids: tuple[str, ...]
    names: tuple[str, ...]
    submitted: datetime | None

    @property
    def identity(self) -> str:
        """The identity the key is derived from: the users' Gradescope ids, sorted (a group submits together)."""
        return "gradescope:" + "+".join(sorted(self.ids))


def submitter(metadata: Path) -> Submitter:
    """Who and when, from Gradescope's ``submission_metadata.json``; ValueError where it names nobody."""
    try:
        data = json.loads(Path(metadata).read_text())
        users = data["users"]
        ids = tuple(str(user["id"]) for user in users)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(msg.GRADESCOPE_NO_METADATA.format(path=metadata, error=error)) from None
    if not ids:
        raise ValueError(msg.GRADESCOPE_NO_METADATA.format(path=metadata, error="no users"))
    names = tuple(str(user[field]) for user in users for field in ("email", "sid") if user.get(field))
    try:
        submitted = datetime.fromisoformat(str(data["created_at"]).replace("Z", "+00:00"))
    except (KeyError, ValueError):
        submitted = None
    return Submitter(ids, names, submitted)


def for_gradescope(result: dict, course: course_file.Course, who: Submitter) -> dict:
    """The canonical result as Gradescope shows it for ``course``: each test's visibility, and the late penalty
    taken from the total, said in the output."""
    result = dict(result, tests=[dict(test, visibility=course.visibility_of(test["number"]))
                                 for test in result["tests"]])
    penalty = course.penalty(who.submitted, who.names)
    if penalty is not None:
        result["score"] = round(result["score"] * (1 - penalty.percent / 100), 2)
        result["output"] = result["output"] + "\n" + msg.GRADESCOPE_LATE.format(penalty=penalty.text(course))
    return result


def run(submission: Path, results: Path, course_path: Path | None = None, metadata: Path | None = None,
        isolation: str = "auto") -> int:
    """Grade ``submission`` (the student's files, or a folder or .zip of them) into ``results``, in the course of
    ``course_path`` with the key of the students ``metadata`` names; always writes it. Without a course secret or
    the metadata nothing is graded: a grade that counts never runs without a key. 1 where it could not grade: the
    grader failed, or ``isolation`` cannot be had here."""
    from graders import pipeline
    from graders.isolation import sandbox
    from graders.results import scorecard
    from graders.submission import layout

    total = 0.0
    try:
        try:
            course = course_file.load(course_path)
            total = course.total
            if not course.keyed:
                raise ValueError(msg.GRADESCOPE_NO_KEY.format(why=msg.COURSE_NO_SECRET.format(
                    where=course.path or msg.COURSE_DEFAULT, env=course_file.SECRET_ENV)))
            if metadata is None:
                raise ValueError(msg.GRADESCOPE_NO_KEY.format(why=msg.GRADESCOPE_METADATA_NOT_GIVEN))
            try:
                who = submitter(metadata)
            except ValueError as error:
                raise ValueError(msg.GRADESCOPE_NO_KEY.format(why=error)) from None
            how = course_file.grading(course, who.identity)
            result = pipeline.grade_submission(submission, key=how["key"], tasks=tuple(how["tasks"]),
                                               points=how["points"], key_shown=how["key_shown"],
                                               isolation=isolation).result
            result = for_gradescope(result, course, who)
        except layout.SubmissionError as error:
            result = not_graded(msg.GRADESCOPE_NOT_GRADED.format(why=error), total)
        except sandbox.Unavailable as error:
            print(error, file=sys.stderr)  # the autograder's log, for the instructor
            atomic_write(results, scorecard.dumps(not_graded(msg.GRADESCOPE_NO_SANDBOX.format(why=error), total)))
            return 1
        except ValueError as error:  # no key, no course, no metadata: refused, said so
            result = not_graded(msg.GRADESCOPE_REFUSED.format(why=error), total)
    except Exception as error:  # noqa: BLE001 - Gradescope must get a results.json whatever happens
        why = msg.GRADESCOPE_CRASHED.format(error=f"{type(error).__name__}: {error}")
        atomic_write(results, scorecard.dumps(not_graded(why, total)))
        return 1
    atomic_write(results, scorecard.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m graders.integrations.gradescope run SUBMISSION RESULTS --course FILE --metadata FILE``, what the
    zip's run_autograder calls; the exit status of ``run``."""
    parser = argparse.ArgumentParser(prog="python -m graders.integrations.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade a submission into a results.json (what run_autograder calls)")
    r.add_argument("submission", type=Path)
    r.add_argument("results", type=Path)
    r.add_argument("--course", type=Path, help="the course file (the zip's course.toml)")
    r.add_argument("--metadata", type=Path, help="Gradescope's submission_metadata.json")
    add_isolation_option(r)
    args = parser.parse_args(argv)
    return run(args.submission, args.results, args.course, args.metadata, args.isolation)


if __name__ == "__main__":
    raise SystemExit(main())
