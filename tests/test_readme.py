"""The README's set-up commands are the ones CI runs."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAIN_JOB = 'python -m pip install -c .ci/constraints.txt -e . && autograd-lab grade exercises/'
TEST_JOB = 'python -m pip install -c .ci/constraints.txt -e ".[dev]" && python -m pytest'


def test_readme_gives_exactly_the_two_setup_commands():
    """Does the README's set-up section give the main job and the test job as single commands?"""
    setup = (REPO / "README.md").read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = [line for line in setup.splitlines() if line.startswith("python -m pip install")]
    assert commands == [MAIN_JOB, TEST_JOB]


def test_ci_runs_the_readme_test_command():
    """Does .ci/run end with the README's test command, so CI tests what a new user would run?"""
    lines = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[-1] == TEST_JOB


def test_ci_builds_a_virtual_environment_of_its_own_before_installing():
    """Does .ci/run make a fresh venv without the system's packages and install into it, so that what a machine
    already has can never hide a missing pin or install step?"""
    lines = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    venv = next(i for i, line in enumerate(lines) if " -m venv " in line)
    assert "--system-site-packages" not in lines[venv] and "--clear" in lines[venv]
    activate = next(i for i, line in enumerate(lines) if line.startswith(". ") and "bin/activate" in line)
    first_install = next(i for i, line in enumerate(lines) if "pip install" in line)
    assert venv < activate < first_install


def test_ci_runs_the_suites_the_default_run_leaves_out():
    """Does .ci/run also run every marker that pyproject's addopts deselects (nbgrader, load, long)?"""
    addopts = (REPO / "pyproject.toml").read_text().split("addopts = ", 1)[1]
    left_out = addopts.split('-m "', 1)[1].split('"', 1)[0]
    markers = {word for word in left_out.split() if word not in ("not", "and")}
    run = (REPO / ".ci" / "run").read_text()
    selected = re.findall(r'^python -m pytest -m "?([a-z ]+?)"?$', run, flags=re.M)
    assert markers == {word for words in selected for word in words.split() if word != "or"}


def test_ci_pins_the_cpu_build_of_torch():
    """Does CI pin torch, so a fresh machine does not download a multi-GB CUDA build?"""
    assert "torch==2.13.0" in (REPO / ".ci" / "constraints.txt").read_text()
