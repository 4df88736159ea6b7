"""Grading under pytest (graders.integrations.pytest_plugin): one item per task, the scores of `autograd-lab grade`,
and nothing of the submission (its conftest.py, its pytest.ini) that can touch the run.

Every run is a pytest of its own, in a subprocess, from a class folder holding the submissions, as an instructor
runs it; each grades only a task or two of a module, to stay quick."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from graders import messages as msg
from graders import paths, pipeline
from graders.tasks import BY_ID, TASKS

pytestmark = pytest.mark.xdist_group("pytest_plugin")

PLUGIN = ["-p", "graders.integrations.pytest_plugin"]
# What docs/grading.md shows, less the submission: no configuration file, the plugin, and (for the tests) no cache.
INVOCATION = ["-c", os.devnull, *PLUGIN, "-p", "no:cacheprovider"]
# A student's conftest.py that would make every test pass, and say that it ran.
SABOTAGE_CONFTEST = '''
import pathlib
import pytest

here = pathlib.Path(__file__).resolve().parent
(here.parent / f"SABOTAGED-{here.name}").write_text("conftest.py ran")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
'''
# A student's pytest.ini that would only collect (nothing would run, nothing would fail).
SABOTAGE_INI = "[pytest]\naddopts = --co\npython_files = *.py\n"


def run_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PYTEST_", "PYTHONBREAKPOINT"))}  # nothing of the outer run (xdist, addopts)
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def class_folder(tmp_path_factory) -> Path:
    """A class folder: alice/ (the reference solution, but optim.py still the stub: 1.1 passes, 3.1 is not
    attempted) and test_bob/ (a folder pytest reads a conftest.py from when run here), both sabotaged."""
    root = tmp_path_factory.mktemp("class")
    alice = root / "alice"
    shutil.copytree(paths.SOLUTIONS, alice, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(paths.EXERCISES / "optim.py", alice / "optim.py")
    (root / "test_bob").mkdir()
    for folder in (alice, root / "test_bob"):
        (folder / "conftest.py").write_text(SABOTAGE_CONFTEST)
        (folder / "pytest.ini").write_text(SABOTAGE_INI)
    return root


def sabotage_ran(root: Path) -> list[str]:
    return sorted(path.name for path in root.glob("SABOTAGED-*"))


def test_a_plain_pytest_run_from_the_class_folder_would_run_the_sabotage(class_folder, tmp_path):
    """Can the sabotage below fire at all: does pytest, run plainly in a class folder, import the students'
    conftest.py files there, and does a student's pytest.ini configure a run that names a path in the student's
    folder?"""
    scratch = tmp_path / "class"
    shutil.copytree(class_folder, scratch)
    run_pytest("--co", "-q", "-p", "no:cacheprovider", cwd=scratch)
    assert sabotage_ran(scratch) == ["SABOTAGED-alice", "SABOTAGED-test_bob"]
    result = run_pytest("alice/pytest.ini", "-p", "no:cacheprovider", cwd=scratch)  # any path in alice/ will do
    assert re.search(r"^rootdir: \S*/alice\nconfigfile: pytest.ini$", result.stdout, flags=re.M), result.stdout


@pytest.fixture(scope="module")
def graded_run(class_folder) -> tuple[subprocess.CompletedProcess, ET.Element]:
    result = run_pytest(*INVOCATION, "--autograd-lab-submission=alice", "-m", "task1_1 or task3_1", "-rA",
                        "--junitxml=alice.xml", cwd=class_folder)
    return result, ET.parse(class_folder / "alice.xml").getroot()


@pytest.mark.slow
def test_a_submissions_conftest_and_pytest_ini_have_no_effect(class_folder, graded_run):
    """Graded under pytest, does alice's task 1.1 pass and 3.1 fail as not attempted, with neither her conftest.py
    (which would pass every test) nor her pytest.ini (which would only collect) nor test_bob's conftest.py run?"""
    result, _ = graded_run
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(rf"\b1 failed, 1 passed, {len(TASKS) - 2} deselected\b", result.stdout), result.stdout
    assert "PASSED autograd-lab::tensor::1.1 unbroadcast" in result.stdout
    assert "FAILED autograd-lab::optim::3.1 SGD: zero_grad and step" in result.stdout
    assert f"\n{msg.NOT_ATTEMPTED.format(task='3.1', what='SGD step', file='optim.py')}\n" in result.stdout
    assert re.search(r"^configfile: \S*/dev/null$", result.stdout, flags=re.M), result.stdout
    assert sabotage_ran(class_folder) == []
    assert "autograd-lab: 4/8 points (2 tasks)" in result.stdout


@pytest.mark.slow
def test_the_junit_xml_carries_each_tasks_points(graded_run):
    """Does --junitxml give each task's testcase its task id, the points it earned and the most it could earn?"""
    _, xml = graded_run
    cases = {case.get("name"): case for case in xml.iter("testcase")}
    assert sorted(cases) == ["1.1 unbroadcast", "3.1 SGD: zero_grad and step"]

    def properties(case):
        return {p.get("name"): p.get("value") for p in case.iter("property")}

    assert properties(cases["1.1 unbroadcast"]) == {"task": "1.1", "score": "4.0", "max_score": "4.0"}
    assert properties(cases["3.1 SGD: zero_grad and step"]) == {"task": "3.1", "score": "0.0", "max_score": "4.0"}
    assert cases["1.1 unbroadcast"].get("classname") == "autograd-lab.tensor"
    assert cases["3.1 SGD: zero_grad and step"].find("failure") is not None


@pytest.mark.slow
def test_each_tasks_result_and_the_total_equal_autograd_lab_grade(class_folder, graded_run):
    """Does each item end as `autograd-lab grade --tasks 1.1,3.1` grades its task (its points, its status, its
    whole message), and the summary line give that grade's total?"""
    result, xml = graded_run
    graded = pipeline.grade_submission(class_folder / "alice", tasks=("1.1", "3.1"))
    cases = {case.find("properties/property[@name='task']").get("value"): case for case in xml.iter("testcase")}
    for test in graded.result["tests"]:
        case = cases[test["number"]]
        points = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert (float(points["score"]), float(points["max_score"])) == (test["score"], test["max_score"])
        failure = case.find("failure")
        if test["extra_data"]["status"] == "passed":
            assert failure is None
        else:
            assert failure.text == test["output"]
    total = msg.PYTEST_TOTAL.format(score=graded.result["score"], max_score=graded.result["extra_data"]["max_score"],
                                    tasks=2, s="s")
    assert total in result.stdout


@pytest.mark.slow
def test_the_stubs_fail_as_not_attempted_and_a_title_word_selects_a_task(tmp_path):
    """Graded under pytest, do the stubs of exercises/ (with their own conftest.py and pytest.ini) fail tasks 1.4
    and 3.3, chosen by `-k "1.4 or Adam"`, with the judge's "not attempted" line and no traceback?"""
    result = run_pytest(*INVOCATION, f"--autograd-lab-submission={paths.EXERCISES}", "-k", "1.4 or Adam",
                        cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"2 failed, {len(TASKS) - 2} deselected" in result.stdout
    for task in ("1.4", "3.3"):
        assert f"Task {task} not attempted yet: {BY_ID[task].title}" in result.stdout
    assert "Traceback" not in result.stdout and "pytest_plugin.py" not in result.stdout
    assert "autograd-lab: 0/10 points (2 tasks)" in result.stdout


@pytest.mark.slow
def test_under_xdist_a_modules_tasks_run_on_one_worker_and_the_points_add_up(tmp_path):
    """With `-n 2 --dist loadscope`, do the two tensor tasks run on one worker (graded there at once), and does
    the controller's summary line add up the points the workers reported?"""
    pytest.importorskip("xdist")
    result = run_pytest(*INVOCATION, f"--autograd-lab-submission={paths.EXERCISES}", "-n", "2", "--dist", "loadscope",
                        "-m", "task1_1 or task1_4 or task3_1", "-v", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    tensor = re.findall(r"\[(gw\d)\] \[\s*\d+%\] FAILED autograd-lab::tensor::", result.stdout)
    assert len(tensor) == 2 and len(set(tensor)) == 1, result.stdout
    assert "autograd-lab: 0/13 points (3 tasks)" in result.stdout


@pytest.mark.slow
def test_a_submission_that_cannot_be_graded_fails_its_items_with_one_line_and_x_stops_at_the_first(tmp_path):
    """With no such folder, does the first item fail with the one line that `autograd-lab grade` gives, and -x
    stop the run there?"""
    result = run_pytest(*INVOCATION, "--autograd-lab-submission=nowhere", "-x", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed in" in result.stdout and "stopping after 1 failures" in result.stdout
    assert "\nautograd-lab: nowhere: no such folder\n" in result.stdout  # `autograd-lab grade nowhere` says so too
    assert "autograd-lab: 0/4 points (1 task)" in result.stdout


@pytest.mark.parametrize("where, args", [("alice", ["--autograd-lab-submission=."]),
                                         (".", ["--autograd-lab-submission", "alice"])],
                         ids=["run-inside-the-submission", "option-value-as-a-separate-word-without-c"])
def test_pytest_refuses_to_start_where_the_submission_could_configure_it(class_folder, tmp_path, where, args):
    """Run from inside the submission, or with the submission as a separate word and no -c (pytest then takes it
    for a path to look for a configuration file in, and finds alice/pytest.ini), does the plugin stop pytest with
    a usage error before any conftest.py is read?"""
    scratch = tmp_path / "class"
    shutil.copytree(class_folder, scratch, ignore=shutil.ignore_patterns("*.xml"))
    result = run_pytest(*PLUGIN, "-p", "no:cacheprovider", *args, cwd=scratch / where)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert "lies inside the submission" in result.stderr
    assert sabotage_ran(scratch) == []


def test_the_items_are_the_task_table_named_by_id_and_title_with_the_tasks_markers(tmp_path):
    """Does the plugin collect one item per task, in the table's order, as autograd-lab::module::id title, and
    select them by marker (-m task1_4) as the public tests do, without grading anything?"""
    result = run_pytest(*INVOCATION, "--autograd-lab-submission=alice", "--co", "-q", cwd=tmp_path)
    assert result.stdout.splitlines()[:len(TASKS)] == [f"autograd-lab::{t.module}::{t.id} {t.title}" for t in TASKS]
    result = run_pytest(*INVOCATION, "--autograd-lab-submission=alice", "--co", "-q", "-m", "task1_4 or task6_2",
                        cwd=tmp_path)
    assert result.stdout.splitlines()[:2] == ["autograd-lab::tensor::1.4 backward of @",
                                              "autograd-lab::torch_loop::6.2 fit_torch on CUDA"]


def test_without_a_submission_the_plugin_collects_nothing_and_no_entry_point_loads_it(tmp_path):
    """Is the plugin inert unless --autograd-lab-submission is given, and never registered as a pytest11 entry
    point, so it joins no student's run and none of the package's own?"""
    result = run_pytest(*INVOCATION, "--co", "-q", cwd=tmp_path)
    assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout + result.stderr
    plugins = [entry.value for entry in importlib.metadata.entry_points(group="pytest11")]
    assert not [value for value in plugins if value.startswith("graders")]
