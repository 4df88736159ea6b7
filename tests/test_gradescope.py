"""Does the Gradescope autograder zip hold what Gradescope runs, and does it grade a submission laid out as
Gradescope lays it out (/autograder/source, /autograder/submission, /autograder/results)?

The test imitates Gradescope in a temporary folder (AUTOGRADER_ROOT) and runs
run_autograder with bash; setup.sh's installs are not run (the package is
already installed here), only read.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from corpus import make_submission
from solution_scan import scan_zip

from graders.cli import main
from graders.course import templates
from graders.tasks import TASKS, TOTAL_POINTS

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    assert main(["gradescope", str(out)]) == 0
    return out


def fake_autograder(root: Path, archive: Path) -> Path:
    """Gradescope's layout: the zip unpacked into source/, run_autograder copied beside it."""
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(root / "source")
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    return root


def run_autograder(root: Path) -> dict:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRAD_LAB_PYTHON": sys.executable}
    subprocess.run(["bash", str(root / "run_autograder")], env=env, check=False, timeout=600, cwd=root,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
def test_the_zip_holds_setup_run_autograder_and_a_wheel_with_the_graders_and_no_solution(autograder_zip):
    """Does the zip hold an executable setup.sh and run_autograder, a torch pin, and a wheel that carries the
    graders (worker, stand-ins, given code and templates included) and nothing of the reference solution?"""
    with zipfile.ZipFile(autograder_zip) as zf:
        names = zf.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        constraints = zf.read("constraints.txt").decode()
        wheel = next(n for n in names if n.endswith(".whl"))
        with zf.open(wheel) as f, zipfile.ZipFile(f) as whl:
            inside = set(whl.namelist())
    assert sorted(names) == sorted(["setup.sh", "run_autograder", "constraints.txt", wheel])
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    version = templates.torch_version()
    assert constraints == f"torch=={version}\n"
    assert f'"torch=={version}" --index-url https://download.pytorch.org/whl/cpu' in setup
    assert f"-c constraints.txt ./{wheel}" in setup and "@" not in setup  # every placeholder filled
    assert {"graders/judge/grade.py", "graders/worker/main.py", "graders/worker/standins.py",
            "graders/judge/checks/ops.py",
            "graders/given/tensor.py", "graders/data/lesson_curve.json",
            "graders/templates/gradescope/run_autograder"} <= inside
    assert not any(name.startswith(("tests/", "exercises/", "solutions/")) for name in inside)
    assert scan_zip(autograder_zip.read_bytes()) == {}


@pytest.mark.slow
def test_run_autograder_grades_the_submission_folder_into_results_json(autograder_zip, tmp_path):
    """Does run_autograder grade a correct submission (handed in as a folder holding exercises/) to full marks,
    with the same results.json as `autograd-lab grade`?"""
    root = fake_autograder(tmp_path / "autograder", autograder_zip)
    make_submission(root / "submission", "exercises", [])
    results = run_autograder(root)
    assert results["score"] == TOTAL_POINTS
    assert len(results["tests"]) == len(TASKS)
    assert main(["grade", str(REPO / "solutions"), "--results", str(tmp_path / "alone.json")]) == 0
    assert (root / "results" / "results.json").read_text() == (tmp_path / "alone.json").read_text()


@pytest.mark.slow
def test_run_autograder_gives_zero_and_the_reason_for_a_submission_it_cannot_grade(autograder_zip, tmp_path):
    """Does a submission without the exercise files still get a results.json: 0 points and what to upload?"""
    root = fake_autograder(tmp_path / "autograder", autograder_zip)
    (root / "submission" / "answers.txt").write_text("see attached\n")
    results = run_autograder(root)
    assert results["score"] == 0 and results["tests"] == []
    assert "could not grade this submission" in results["output"]
    assert "Upload the .py files of exercises/" in results["output"]
