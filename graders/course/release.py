"""What students receive: the student bundle, and the ready examples for grading a class past one machine.

    autograd-lab release OUT_DIR [--course FILE] [--wheel WHERE]
                                     exercises/ (stubs, public tests, README) and .github/workflows/scorecard.yml
    autograd-lab examples OUT_DIR    a GitHub Actions matrix, a Slurm array job and a Kubernetes Indexed Job

The bundle's stubs are generated from solutions/ (the same text as exercises/);
the public tests, conftest.py, pytest.ini and the student README are copied
from the checkout's exercises/. Nothing else: no solutions, no graders, no
course secret. With a course file, the bundle covers the course's tasks only:
the README lists them with their points, the public tests of the others are
deselected (a file of theirs alone is left out), and their stubs say they are
not part of the course.

The workflow installs the graders from a wheel the instructor puts where students' CI can read it
(``WHEEL_HELP``): a release of a repository of the organization that holds nothing else (read with the
organization secret AUTOGRAD_LAB_WHEEL_TOKEN, a token that reads that repository only), or a URL.
"""

from __future__ import annotations

import re
from pathlib import Path

from graders import __version__, paths
from graders import messages as msg
from graders.course import course_file
from graders.course.templates import fill, torch_version
from graders.files import atomic_write
from graders.tasks import BY_ID, TASKS

# exercises/'s files that are not generated from solutions/.
PUBLIC_FILES = ("README.md", "HINTS.md", "hints.py", "conftest.py", "pytest.ini", "requirements.txt",
                "requirements-torch.txt")
PUBLIC_TESTS = "tests"
WORKFLOW = Path(".github") / "workflows" / "scorecard.yml"
# What a student's `git add -A` must not take: the virtual environment the README makes, caches, and what a
# grade writes.
GITIGNORE = ("# virtual environments\n.venv/\nvenv/\nenv/\n# caches\n__pycache__/\n*.py[cod]\n.pytest_cache/\n"
             ".hypothesis/\n.ipynb_checkpoints/\n# what a grade writes\nresults.json\nsummary.md\njunit.xml\n"
             "result.json\nloss.png\n")
TORCH_PIN = re.compile(r"^torch==\S+$", re.M)
WHEEL_NAME = f"autograd_lab-{__version__}-py3-none-any.whl"
# Where the students' CI finds the graders' wheel: OWNER/REPO@TAG (a release asset, read with the organization secret
# AUTOGRAD_LAB_WHEEL_TOKEN) or an https URL of the wheel; the organization variable AUTOGRAD_LAB_WHEEL overrides it.
WHEEL_WHERE = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+@[A-Za-z0-9._/+-]+|https://\S+\.whl)$")
_STUB_RAISE = re.compile(r'raise NotImplementedError\("((?:Task \d\.\d: [^";]+;? ?)+)"\)')
_TASK_ROW = re.compile(r"^\| (\d\.\d) \|.*$\n?", re.M)
EXAMPLES = {
    "github-actions-matrix.yml": "cluster/github-actions-matrix.yml",
    "slurm-array.sbatch": "cluster/slurm-array.sbatch",
    "kubernetes-indexed-job.yaml": "cluster/kubernetes-indexed-job.yaml",
}


def wheel_where(text: str) -> str:
    """``--wheel``'s value, OWNER/REPO@TAG or an https URL of a .whl; ValueError saying so otherwise."""
    if not WHEEL_WHERE.fullmatch(text.strip()):
        raise ValueError(msg.RELEASE_BAD_WHEEL.format(where=text))
    return text.strip()


def bundle_files(wheel: str = "", exercises: Path | None = None,
                 course: course_file.Course = course_file.DEFAULT) -> dict[str, str]:
    """Path in the bundle (POSIX) to the text it holds: the course's (``course``) tasks only, and a workflow that
    installs the graders from ``wheel`` (OWNER/REPO@TAG or a URL; "": the organization variable alone)."""
    exercises = Path(exercises or paths.GIVEN)
    needed = [exercises / name for name in PUBLIC_FILES] + [exercises / PUBLIC_TESTS]
    for path in needed:
        if not path.exists():
            raise FileNotFoundError(msg.NEEDS_CHECKOUT.format(command="autograd-lab release", path=path))
    files = {f"exercises/{name}": (exercises / name).read_text() for name in paths.given_modules()}
    for name in PUBLIC_FILES:
        files[f"exercises/{name}"] = (exercises / name).read_text()
    # The torch the graders run: the same pin as the workflow's.
    files["exercises/requirements-torch.txt"] = TORCH_PIN.sub(f"torch=={torch_version()}",
                                                             files["exercises/requirements-torch.txt"])
    for path in sorted((exercises / PUBLIC_TESTS).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[f"exercises/{path.relative_to(exercises).as_posix()}"] = path.read_text()
    files[WORKFLOW.as_posix()] = fill((paths.TEMPLATES / "student" / "scorecard.yml").read_text(), wheel=wheel,
                                      torch_version=torch_version())
    files[".gitignore"] = GITIGNORE
    return for_course(files, course)


def for_course(files: dict[str, str], course: course_file.Course) -> dict[str, str]:
    """The bundle ``files`` for ``course``: its tasks' public tests only (the others' deselected in pytest.ini, a test
    file of theirs alone left out), the README's table of its tasks only, with their points, and the stubs of the
    tasks it leaves out saying so."""
    dropped = [t.id for t in TASKS if t.id not in course.points_by_task]
    if not dropped and course.points_by_task == course_file.DEFAULT.points_by_task:
        return files
    markers = {BY_ID[t].marker for t in dropped}
    out = {}
    for name, text in files.items():
        if name.startswith(f"exercises/{PUBLIC_TESTS}/") and name.endswith(".py"):
            used = set(re.findall(r"\btask\d_\d\b", text))
            if used and used <= markers:
                continue
        elif name == "exercises/pytest.ini" and markers:
            text = re.sub(r"^(addopts = .*)$", lambda m: m[1] + ' -m "not (' + " or ".join(sorted(markers)) + ')"',
                          text, count=1, flags=re.M)
        elif name == "exercises/README.md":
            text = _TASK_ROW.sub(lambda m: "" if m[1] in dropped else m[0], text)
            text = text.replace(README_TASKS_AT, course_table(course) + README_TASKS_AT, 1)
        elif name.startswith("exercises/") and name.count("/") == 1 and name.endswith(".py"):
            text = _STUB_RAISE.sub(lambda m: _not_in_course(m, dropped), text)
        out[name] = text
    return out


README_TASKS_AT = "## What to write, in order"


def course_table(course: course_file.Course) -> str:
    """The README's section on this course: its tasks with their points and the total, and the due date."""
    rows = [f"| {t} | {BY_ID[t].title} | {course.points(t)} |" for t in course.tasks]
    due = msg.RELEASE_COURSE_DUE.format(due=course.due.isoformat(), per_day=course.percent_per_day,
                                         cap=course.cap_percent) if course.due is not None else ""
    return msg.RELEASE_COURSE_SECTION.format(rows="\n".join(rows), total=course.total, due=due)


def _not_in_course(match: re.Match, dropped: list[str]) -> str:
    """A stub's raise whose every task the course leaves out, saying so; any other as it was."""
    named = re.findall(r"Task (\d\.\d): ([^;]+)", match[1])
    if not named or any(task not in dropped for task, _ in named):
        return match[0]
    return 'raise NotImplementedError("' + "; ".join(msg.RELEASE_NOT_IN_COURSE.format(task=task, title=title.strip())
                                                    for task, title in named) + '")'


def release(out: Path, *, wheel: str = "", force: bool = False,
            course: course_file.Course = course_file.DEFAULT) -> list[str]:
    """Write the student bundle of ``course`` into ``out``, its workflow installing the graders from ``wheel``; the
    files written, as paths inside it."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not force:
        raise FileExistsError(msg.RELEASE_NOT_EMPTY.format(out=out))
    files = bundle_files(wheel, course=course)
    for name, text in files.items():
        atomic_write(out / name, text)
    return sorted(files)


def examples(out: Path, *, force: bool = False) -> list[str]:
    """Write the cluster examples into ``out``; the names written."""
    out = Path(out)
    for name in EXAMPLES:
        if (out / name).exists() and not force:
            raise FileExistsError(msg.EXAMPLES_EXIST.format(path=out / name))
    version = torch_version()
    for name, template in EXAMPLES.items():
        atomic_write(out / name, fill((paths.TEMPLATES / template).read_text(), torch_version=version))
        if name.endswith(".sbatch"):
            (out / name).chmod(0o755)
    return list(EXAMPLES)

