"""Classroom 50: an assignment's autograder, and grading one student's checkout with it.

    autograd-lab classroom50 DIR [--assignment SLUG] [--course FILE] [--wheel FILE] [--unkeyed]
    python -I -m graders.integrations.classroom50 run [--course FILE] [--unkeyed]     (what autograder.py runs)

``DIR`` is a classroom's folder in the course's ``classroom50`` repository. The builder writes
``DIR/autograders/<assignment>/``: ``autograder.py`` (installs the graders, then runs ``run``), the graders' wheel
beside it (it holds no solution and no secret: Classroom 50 publishes the folder with the assignment's bundle),
``course.toml`` (the course's tasks, points, late policy: no secret), ``constraints.txt`` (every dependency pinned
to the instructor's versions, so Hypothesis draws what it draws for the instructor) and ``runtime.json``, the
assignment's runtime block.

Classroom 50's grade job runs in the student's own repository, and nothing in its folder or its Pages site is
hidden from the student. So the course's secret is never written there: the runner's environment gives it
(``$AUTOGRAD_LAB_SECRET``), which only a self-hosted runner the instructor keeps can do (the secret in the runner's
``.env``, the runner in a group that only Classroom 50's runner workflow may use; runtime.json asks for it by its
labels, and for a GPU where the course gives task 6.2 points). Each student's key is derived from it and the
repository's owner. Without the secret, ``run`` refuses (an error status, no grade), unless the autograder was
written with ``--unkeyed``: then every student is graded on the same fixed inputs, and the instructor said so.
"""

from __future__ import annotations

if __name__ == "__main__":  # before any import the working folder could shadow: graders.entry says why
    from graders.entry import guard

    guard("graders.integrations.classroom50")

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.course import course_file
from graders.course.templates import fill, torch_version
from graders.files import atomic_write

DEFAULT_ASSIGNMENT = "autograd-lab"
SLUG = r"[a-z0-9][a-z0-9-]{1,38}"  # Classroom 50's assignment slugs
RUNNER_LABELS = ("self-hosted", "autograd-lab")  # the runner that holds the secret
GPU_LABEL = "gpu"
# A GitHub-hosted runner, for an autograder written with --unkeyed: Python 3.11 (the graders' CI) and bubblewrap.
HOSTED = {"runs-on": "ubuntu-latest", "python": "3.11", "apt": ["bubblewrap"]}
GPU_TASK = "6.2"


@dataclass(frozen=True)
class Built:
    """What the builder wrote: the autograder's folder, its files' names, the wheel's and the runtime block."""
    folder: Path
    files: list[str]
    wheel: str
    runtime: dict


def runtime(course: course_file.Course, unkeyed: bool) -> dict:
    """The assignment's runtime block: the instructor's self-hosted runner, which holds the secret (with a GPU where
    the course gives 6.2 points), or, for an autograder written with --unkeyed, a GitHub-hosted one."""
    if unkeyed and course.points(GPU_TASK) == 0:
        return dict(HOSTED)
    labels = [*RUNNER_LABELS, *([GPU_LABEL] if course.points(GPU_TASK) > 0 else [])]
    return {"runs-on": labels}


def build(folder: Path, *, assignment: str = DEFAULT_ASSIGNMENT, course: course_file.Course = course_file.DEFAULT,
          wheel: Path | None = None, unkeyed: bool = False, repo: Path = paths.REPO) -> Built:
    """Write the autograder of ``assignment`` into ``folder/autograders/<assignment>/``; the wheel is ``wheel`` when
    given, else built from the checkout at ``repo``. ValueError for a slug Classroom 50 would refuse."""
    import re

    from graders.integrations import gradescope

    if not re.fullmatch(SLUG, assignment):
        raise ValueError(msg.CLASSROOM50_BAD_SLUG.format(assignment=assignment, pattern=SLUG))
    out = Path(folder) / "autograders" / assignment
    with tempfile.TemporaryDirectory(prefix="agl-classroom50-") as tmp:
        if wheel is not None:
            if not (Path(wheel).is_file() and Path(wheel).name.startswith("autograd_lab-")
                    and Path(wheel).suffix == ".whl"):
                raise FileNotFoundError(msg.GRADESCOPE_NO_WHEEL.format(wheel=wheel))
        else:
            wheel = gradescope.build_wheel(repo, Path(tmp))
        block = runtime(course, unkeyed)
        files = {
            "autograder.py": fill((paths.TEMPLATES / "classroom50" / "autograder.py.in").read_text(),
                                  wheel=wheel.name, torch_version=torch_version(), unkeyed=str(unkeyed)),
            "course.toml": course_file.text(course, secret=False),
            "constraints.txt": gradescope.constraints(),
            "runtime.json": json.dumps(block, indent=2) + "\n",
        }
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("autograd_lab-*.whl"):  # one wheel: the one autograder.py names
            old.unlink()
        for name, text in files.items():
            atomic_write(out / name, text)
        (out / "autograder.py").chmod(0o755)
        shutil.copyfile(wheel, out / wheel.name)
    return Built(out, [*files, wheel.name], wheel.name, block)


def not_graded(course: course_file.Course, why: str) -> dict:
    """A canonical result for a checkout that holds nothing to grade: every task of the course at 0, saying why (so
    that Classroom 50 shows a failure, not the pass of an empty test list)."""
    from graders.tasks import BY_ID

    return {"score": 0.0, "output": why, "extra_data": {"max_score": float(course.total), "examples": 0}, "tests": [
        {"name": f"{t} {BY_ID[t].title}", "number": t, "score": 0.0, "max_score": float(course.points(t)),
         "output": why, "extra_data": {"status": "failed"}, "status": "failed"} for t in course.tasks]}


def run(checkout: Path, out: Path, course_path: Path | None = None, *, unkeyed: bool = False,
        environ=None) -> int:
    """Grade the student's ``checkout`` into ``out``/result.json and release-body.md, in the course of
    ``course_path`` with the key of the repository's owner; 0 once written. Without a key (no secret, unless
    ``unkeyed``), without an owner, or where the isolation cannot be had, nothing is graded: 1, and why on stderr
    (Classroom 50's runner then posts an error status)."""
    from graders import pipeline
    from graders.results import classroom, outputs, scorecard
    from graders.submission import layout

    environ = os.environ if environ is None else environ
    who = classroom.identity(environ)
    try:
        course = course_file.load(course_path)
        if not who.owner:
            raise ValueError(msg.CLASSROOM50_NO_OWNER)
        if not course.keyed and not unkeyed:
            raise ValueError(msg.CLASSROOM50_NO_SECRET.format(env=course_file.SECRET_ENV))
        how = course_file.grading(course, who.owner)
        try:
            result = pipeline.grade_submission(checkout, name=who.owner, key=how["key"], tasks=tuple(how["tasks"]),
                                               points=how["points"], key_shown=how["key_shown"]).result
        except layout.SubmissionError as error:
            result = not_graded(course, msg.CLASSROOM50_NOT_GRADED.format(why=error))
    except (ValueError, RuntimeError) as error:
        print(msg.CLASSROOM50_REFUSED.format(why=error), file=sys.stderr)
        return 1
    when = classroom.commit_time(checkout) or datetime.now(timezone.utc)
    penalty = course.penalty(when, [who.owner])
    payload = classroom.result_v1(result, who, when, late_percent=penalty.percent if penalty else 0.0)
    body = outputs.markdown(result)
    if penalty is not None:
        body += "\n" + msg.CLASSROOM50_LATE.format(penalty=penalty.text(course), score=payload["score"],
                                                   most=payload["max-score"]) + "\n"
    atomic_write(Path(out) / "result.json", scorecard.dumps(payload))
    atomic_write(Path(out) / "release-body.md", body)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m graders.integrations.classroom50 run [--course FILE] [--unkeyed]``, what autograder.py runs in the
    student's checkout; the exit status of ``run``."""
    parser = argparse.ArgumentParser(prog="python -m graders.integrations.classroom50")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade the checkout in the working folder into ./result.json")
    r.add_argument("--course", type=Path, help="the course file (autograder.py's sibling course.toml)")
    r.add_argument("--unkeyed", action="store_true", help="grade without a key where no secret is given")
    r.add_argument("--checkout", type=Path, default=Path("."), help="the student's checkout (default: here)")
    args = parser.parse_args(argv)
    return run(args.checkout, args.checkout, args.course, unkeyed=args.unkeyed)


if __name__ == "__main__":
    raise SystemExit(main())
