"""Does the student bundle hold what students need (exercises/, its public tests, the CI workflow) and
nothing they must not see: no solution body, no hidden check?

A solution body is the text of a ``### BEGIN SOLUTION`` region of solutions/*.py.
Lines shorter than 12 characters, and lines that solutions/ also holds outside
every region (given code), say nothing about the answer; every other line
counts. A single shared idiom (``for xb, yb in loader:``) may turn up in a
public test, so a leak is two such lines in a row, or a whole one-line body.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sample_course

from graders import paths
from graders.cli import main
from graders.course import build, release

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = ".github/workflows/scorecard.yml"
BEGIN = re.compile(r"^\s*### BEGIN SOLUTION")
END = re.compile(r"^\s*### END SOLUTION")
SHORT = 12
# Overlaps that give nothing away, each with its reason (a new one fails the tests until it is judged).
KNOWN = {
    # The public loop tests' CountingSGD (exercises/tests/_helpers.py) clears grads as SGD.zero_grad does:
    # one loop over the parameters, set to None, as the contract itself says.
    ("for p in self.params:", "p.grad = None"),
    # The optimizer state-dict round trip (np.savez into a buffer, np.load without pickle) is the contract's
    # own description, and the public test of task 3.2 does it as the hidden check does.
    ("buffer = io.BytesIO()", "np.savez(buffer, **state)"),
    ("np.savez(buffer, **state)", "buffer.seek(0)"),
    ("buffer.seek(0)", "with np.load(buffer, allow_pickle=False) as saved:"),
    # Hypothesis's own import lines, which the public property tests share with the graders' strategies.
    ("from hypothesis import strategies as st", "from hypothesis.extra import numpy as hnp"),
}
JUDGE = REPO / "graders" / "judge"
HIDDEN_CODE = [*sorted((JUDGE / "checks").glob("*.py")), *sorted((REPO / "graders" / "worker").glob("*.py")),
               JUDGE / "reference.py", JUDGE / "strategies.py"]


def regions() -> tuple[list[list[str]], set[str]]:
    """The solution regions' lines (stripped, blank lines left out) and every line given outside them."""
    bodies, given = [], set()
    for path in sorted(paths.SOLUTIONS.glob("*.py")):
        body = None
        for line in path.read_text().splitlines():
            if BEGIN.match(line):
                body = []
            elif END.match(line):
                bodies.append(body)
                body = None
            elif body is not None:
                if line.strip():
                    body.append(line.strip())
            else:
                given.add(line.strip())
    return bodies, given


def telling(lines: list[str], known: set[str]) -> list[str | None]:
    """Each line, or None where it tells nothing (short, or also in ``known``)."""
    return [line if len(line) >= SHORT and line not in known else None for line in lines]


def secrets_of(blocks: list[list[str]], known: set[str]) -> set[tuple[str, ...]]:
    """What must not appear: every pair of telling lines in a row, and every one-line body."""
    found = set()
    for block in blocks:
        marked = telling(block, known)
        if len(block) == 1 and marked[0]:
            found.add((marked[0],))
        found |= {(a, b) for a, b in zip(marked, marked[1:]) if a and b}
    return found


def shown(text: str) -> set[tuple[str, ...]]:
    """Every line and pair of lines in a row (blank lines left out) of a bundle file."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return {(line,) for line in lines} | set(zip(lines, lines[1:]))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograd-lab-student"
    assert main(["release", str(out)]) == 0
    return out


def bundle_texts(bundle: Path) -> dict[str, str]:
    return {path.relative_to(bundle).as_posix(): path.read_text() for path in sorted(bundle.rglob("*"))
            if path.is_file()}


def test_the_bundle_holds_exercises_its_public_tests_and_the_workflow_only(bundle):
    """Is the bundle exercises/ (every file exercises/ holds in the repository, generated stubs included),
    the CI workflow and a .gitignore, and nothing else?"""
    texts = bundle_texts(bundle)
    repository = {f"exercises/{p.relative_to(paths.EXERCISES).as_posix()}": p.read_text()
                  for p in sorted(paths.EXERCISES.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    assert set(texts) == set(repository) | {WORKFLOW, ".gitignore"}
    assert {name: texts[name] for name in repository} == repository
    for name, text in build.expected_exercises(paths.SOLUTIONS).items():
        assert texts[f"exercises/{name}"] == text
    assert "autograd-lab grade exercises/" in texts[WORKFLOW]
    assert not re.search(r"@[A-Z_]+@", texts[WORKFLOW])  # every placeholder filled


def test_no_solution_body_leaks_into_the_bundle(bundle):
    """Does no solution region's text (two telling lines in a row, or a whole one-line body) appear in any
    file of the bundle?"""
    bodies, given = regions()
    secrets = secrets_of(bodies, given)
    assert len(secrets) > 100  # the test has teeth: most regions yield several
    leaks = {name: sorted(secrets & shown(text) - KNOWN) for name, text in bundle_texts(bundle).items()}
    assert {name: found for name, found in leaks.items() if found} == {}


def test_no_hidden_check_code_leaks_into_the_bundle(bundle):
    """Does no code of the hidden checks, the worker, the reference computations or the strategies appear in
    the bundle, and does nothing there import the graders?"""
    _, given = regions()
    blocks = [[line.strip() for line in path.read_text().splitlines() if line.strip()] for path in HIDDEN_CODE]
    secrets = secrets_of(blocks, given)
    assert len(secrets) > 500
    texts = bundle_texts(bundle)
    leaks = {name: sorted(secrets & shown(text) - KNOWN) for name, text in texts.items()}
    assert {name: found for name, found in leaks.items() if found} == {}
    assert not [name for name, text in texts.items()
                if name.endswith(".py") and re.search(r"^\s*(from|import) (graders|solutions)\b", text, re.M)]
    assert not any(part in ("graders", "solutions") for name in texts for part in name.split("/"))


def test_the_leak_check_catches_a_pasted_solution(tmp_path):
    """Would the check notice a solution region pasted into a file (so that its silence means something)?"""
    bodies, given = regions()
    secrets = secrets_of(bodies, given)
    pasted = "\n".join(["def helper():", *bodies[3], ""])
    assert secrets & shown(pasted)


def test_release_refuses_a_folder_that_is_not_empty_unless_forced(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me\n")
    assert main(["release", str(tmp_path)]) == 2
    assert main(["release", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "mine.txt").read_text() == "keep me\n"


@pytest.mark.parametrize(("where", "said"), [
    ("ml-2027/autograd-lab-wheel@v0.1.0", "read with the organization secret AUTOGRAD_LAB_WHEEL_TOKEN"),
    ("https://example.edu/wheels/autograd_lab-0.1.0-py3-none-any.whl", "https://example.edu/wheels/"),
    (None, "the organization variable AUTOGRAD_LAB_WHEEL, which you set"),
])
def test_release_says_where_the_wheel_goes_and_the_workflow_installs_it_from_there(tmp_path, capsys, where, said):
    """Does `release --wheel` write where the students' CI gets the graders' wheel (a release of a repository of
    the organization, read with a token that reads only it, or a URL) into the workflow, and say where to put the
    wheel; without it, say which organization variable to set? Is anything else refused, with what was expected?"""
    assert main(["release", str(tmp_path / "b"), *(["--wheel", where] if where else [])]) == 0
    out = capsys.readouterr().out
    assert said in out and "autograd_lab-0.1.0-py3-none-any.whl" in out
    workflow = (tmp_path / "b" / WORKFLOW).read_text()
    assert f"vars.AUTOGRAD_LAB_WHEEL || '{where or ''}'" in workflow
    with pytest.raises(SystemExit):
        main(["release", str(tmp_path / "c"), "--wheel", "autograd-lab==0.1.0"])
    assert "got --wheel 'autograd-lab==0.1.0', expected OWNER/REPO@TAG" in capsys.readouterr().err


def test_a_courses_bundle_covers_its_tasks_only(tmp_path):
    """With a course that drops Adam (3.3) and the PyTorch loop (6.1, and 6.2 with it) and gives 1.4 10 points:
    does the README list the course's tasks and points (the table's total less the dropped tasks' points, with 1.4's
    10 for its own, in all) and not the others, do the public tests leave the dropped tasks out (their own file gone,
    their markers deselected), do the dropped stubs say they are not part of the course, and is everything else the
    default bundle's, with no secret anywhere?"""
    course = tmp_path / "course.toml"
    secret = "ab" * 32
    course.write_text(sample_course.text(secret))
    assert main(["release", str(tmp_path / "b"), "--course", str(course)]) == 0
    assert main(["release", str(tmp_path / "plain")]) == 0
    mine, plain = bundle_texts(tmp_path / "b"), bundle_texts(tmp_path / "plain")
    assert set(plain) - set(mine) == {"exercises/tests/test_task6_torch.py"} and set(mine) <= set(plain)
    readme = mine["exercises/README.md"]
    assert "| 1.4 | backward of @ | 10 |" in readme and f"({sample_course.TOTAL} in all)" in readme
    assert "| 3.3 | `optim.py` |" not in readme and "| 6.1 |" not in readme and "| 6.2 |" not in readme
    assert '-m "not (task3_3 or task6_1 or task6_2)"' in mine["exercises/pytest.ini"]
    assert 'raise NotImplementedError("Task 3.3: Adam is not part of this course' in mine["exercises/optim.py"]
    assert 'raise NotImplementedError("Task 6.1: fit_torch is not part of this course' in \
        mine["exercises/torch_loop.py"]
    changed = {name for name in mine if mine[name] != plain[name]}
    assert changed == {"exercises/README.md", "exercises/pytest.ini", "exercises/optim.py", "exercises/torch_loop.py"}
    assert not any(secret in text for text in mine.values())


def test_the_cluster_examples_run_the_same_grade_all_command_per_shard_then_merge(tmp_path):
    """Does `autograd-lab examples` write the GitHub Actions matrix, the Slurm array and the Kubernetes Job,
    each running grade-all with --shard I/N and then merge?"""
    assert main(["examples", str(tmp_path)]) == 0
    texts = {name: (tmp_path / name).read_text() for name in release.EXAMPLES}
    assert "--shard ${{ matrix.shard }}/4" in texts["github-actions-matrix.yml"]
    assert "autograd-lab merge shards/* --out grades" in texts["github-actions-matrix.yml"]
    assert '--shard "$I/$N"' in texts["slurm-array.sbatch"]
    assert "autograd-lab merge out/shard-* --out grades" in texts["slurm-array.sbatch"]
    assert "--shard $I/8" in texts["kubernetes-indexed-job.yaml"]
    assert all("@TORCH_VERSION@" not in text for text in texts.values())
    assert main(["examples", str(tmp_path)]) == 2  # they exist now
    assert main(["examples", str(tmp_path), "--force"]) == 0


def test_torch_for_task_6_is_the_graders_cpu_build_from_the_cpu_index_alone(bundle):
    """Does requirements-torch.txt pin the torch the graders run (the CI constraints' pin in the repository, the
    installed one in the bundle, as the workflow does) and take it from PyTorch's CPU index with --index-url, never
    --extra-index-url (pip then takes the newest torch of either index: the default one's CUDA build)?"""
    from graders.course.templates import torch_version

    pinned = re.search(r"^torch==(\S+)$", (REPO / ".ci" / "constraints.txt").read_text(), re.M).group(1)
    for text, version in (((paths.EXERCISES / "requirements-torch.txt").read_text(), pinned),
                          ((bundle / "exercises" / "requirements-torch.txt").read_text(), torch_version())):
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert lines == ["--index-url https://download.pytorch.org/whl/cpu", f"torch=={version}"]
        assert "--extra-index-url" not in text
    workflow = (bundle / WORKFLOW).read_text()
    assert f'"torch=={torch_version()}" --index-url https://download.pytorch.org/whl/cpu' in workflow


def test_git_add_all_in_a_fresh_bundle_with_its_venv_stages_only_the_exercises(bundle, tmp_path):
    """The README makes .venv inside the bundle, and pytest, Hypothesis and a grade leave caches and results:
    does `git add -A` there stage the bundle's own files and nothing else?"""
    import shutil
    import subprocess

    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    made = [".venv/bin/python", ".venv/lib/python3.11/site-packages/torch/__init__.py", "venv/pyvenv.cfg",
            "exercises/__pycache__/tensor.cpython-311.pyc", ".pytest_cache/v/cache/lastfailed",
            ".hypothesis/examples/00/01", "exercises/tests/__pycache__/x.pyc", "results.json", "summary.md",
            "junit.xml", "loss.png"]
    for name in made:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text("")
    git = ["git", "-c", "user.name=s", "-c", "user.email=s@example.edu", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=copy, check=True)
    subprocess.run([*git, "add", "-A"], cwd=copy, check=True)
    staged = subprocess.run([*git, "diff", "--cached", "--name-only"], cwd=copy, check=True, capture_output=True,
                            text=True).stdout.split()
    assert sorted(staged) == sorted(bundle_texts(bundle))


def test_pytest_says_when_torch_is_the_cuda_build_on_a_machine_without_a_gpu(monkeypatch):
    """exercises/conftest.py's header line: the CUDA build (NVIDIA packages beside a torch without +cpu) and no
    /dev/nvidia device gets one line that says how to swap; the CPU build, or no torch, gets none."""
    import glob
    from importlib import metadata

    from exercises import conftest

    class Dist:
        def __init__(self, name):
            self.metadata = {"Name": name}

    installed = {"torch": "2.13.0"}
    monkeypatch.setattr(metadata, "version", lambda name: installed[name] if name in installed else
                        (_ for _ in ()).throw(metadata.PackageNotFoundError(name)))
    monkeypatch.setattr(metadata, "distributions", lambda: [Dist("torch"), Dist("nvidia-cublas-cu12"),
                                                            Dist("nvidia-cudnn-cu12"), Dist("numpy")])
    monkeypatch.setattr(glob, "glob", lambda pattern: [])
    warning = conftest.cuda_build_unasked()
    assert warning.startswith("Note: torch 2.13.0 here is the CUDA build (2 NVIDIA packages")
    assert "pip uninstall -y torch nvidia-cublas-cu12 nvidia-cudnn-cu12 && pip install -r " in warning
    installed["torch"] = "2.13.0+cpu"
    assert conftest.cuda_build_unasked() is None
    del installed["torch"]
    assert conftest.cuda_build_unasked() is None


def test_hints_come_one_step_at_a_time_and_no_file_shows_a_formula(bundle):
    """HINTS.md and hints.py hold no hint in clear (a terminal folds no <details>): is each step printed only
    when asked for, the nudge without the formula, with the command for the next step?"""
    import subprocess
    import sys

    script = bundle / "exercises" / "hints.py"
    for name in ("HINTS.md", "hints.py"):
        text = (bundle / "exercises" / name).read_text()
        assert "g @ w.T" not in text and "1 - out**2" not in text and "<details>" not in text, name

    def hint(*args: str) -> str:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, check=True,
                              cwd=bundle).stdout

    nudge, idea, formula = hint("1.4"), hint("1.4", "2"), hint("1.4", "3")
    assert nudge.startswith("Task 1.4 (matmul), hint 1 of 3, the nudge:") and "g @ w.T" not in nudge
    assert "python exercises/hints.py 1.4 2" in nudge and "g @ w.T" not in idea
    assert "(g @ w.T, x.T @ g)" in formula and "the last step" in formula
    assert hint("2.3").startswith("Task 2.x (the engine), hint 1 of 2")
    assert "specified in their docstrings" in hint("3.1")
    assert "1.8  reshape, T (2 steps)" in hint()
