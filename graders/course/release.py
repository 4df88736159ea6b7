"""What students receive: the student bundle, and the ready examples for grading a class past one machine.

    autograd-lab release OUT_DIR     exercises/ (stubs, public tests, README) and .github/workflows/autograde.yml
    autograd-lab examples OUT_DIR    a GitHub Actions matrix, a Slurm array job and a Kubernetes Indexed Job

The bundle's stubs are generated from solutions/ (the same text as exercises/);
the public tests, conftest.py, pytest.ini and the student README are copied
from the checkout's exercises/. Nothing else: no solutions, no graders.
"""

from __future__ import annotations

import re
from pathlib import Path

from graders import __version__, paths
from graders import messages as msg
from graders.course.templates import fill, torch_version
from graders.files import atomic_write

# exercises/'s files that are not generated from solutions/.
PUBLIC_FILES = ("README.md", "HINTS.md", "hints.py", "conftest.py", "pytest.ini", "requirements.txt",
                "requirements-torch.txt")
PUBLIC_TESTS = "tests"
WORKFLOW = Path(".github") / "workflows" / "autograde.yml"
# What a student's `git add -A` must not take: the virtual environment the README makes, caches, and what a
# grade writes.
GITIGNORE = ("# virtual environments\n.venv/\nvenv/\nenv/\n# caches\n__pycache__/\n*.py[cod]\n.pytest_cache/\n"
             ".hypothesis/\n.ipynb_checkpoints/\n# what a grade writes\nresults.json\nsummary.md\njunit.xml\n"
             "classroom.txt\nloss.png\n")
TORCH_PIN = re.compile(r"^torch==\S+$", re.M)
DEFAULT_PACKAGE = f"autograd-lab=={__version__}"
EXAMPLES = {
    "github-actions-matrix.yml": "cluster/github-actions-matrix.yml",
    "slurm-array.sbatch": "cluster/slurm-array.sbatch",
    "kubernetes-indexed-job.yaml": "cluster/kubernetes-indexed-job.yaml",
}


def bundle_files(package: str = DEFAULT_PACKAGE, exercises: Path | None = None) -> dict[str, str]:
    """Path in the bundle (POSIX) to the text it holds."""
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
    files[WORKFLOW.as_posix()] = fill((paths.TEMPLATES / "student" / "autograde.yml").read_text(), package=package,
                                      torch_version=torch_version())
    files[".gitignore"] = GITIGNORE
    return files


def release(out: Path, *, package: str = DEFAULT_PACKAGE, force: bool = False) -> list[str]:
    """Write the student bundle into ``out``; the files written, as paths inside it."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not force:
        raise FileExistsError(msg.RELEASE_NOT_EMPTY.format(out=out))
    files = bundle_files(package)
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

