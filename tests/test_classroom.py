"""Does Classroom 50's autograder grade a student's checkout into a result.json that keeps the classroom50/result/v1
contract (the identity from the runner's environment, the graded commit's time, whole points, one test per task),
with the key of the repository's owner, and refuse without the course's secret? And does the students' own
workflow install the graders from where the instructor put them, without GitHub Classroom's retired reporter?"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import sample_course

from graders import keys
from graders.cli import main
from graders.course import course_file
from graders.integrations import classroom50
from graders.judge.grade import ERROR, FAILED, NOT_ATTEMPTED, PASSED, SKIPPED, Report, TaskResult
from graders.results import classroom, scorecard
from graders.tasks import BY_ID

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / "graders" / "templates" / "student" / "scorecard.yml"
SECRET = "ab" * 32
ENVIRONMENT = {"CLASSROOM": "ml-2027", "ASSIGNMENT": "autograd-lab", "ASSIGNMENT_TYPE": "individual",
               "OWNER": "alice", "SUBMISSION_TAG": "submit/2027-03-01T14-32-05Z-a1b2c3d",
               "COMMIT_URL": "https://github.com/ml-2027/ml-2027-autograd-lab-alice/commit/a1b2c3d",
               "RELEASE_URL": "https://github.com/ml-2027/ml-2027-autograd-lab-alice/releases/tag/submit%2F...",
               "GITHUB_REPOSITORY": "ml-2027/ml-2027-autograd-lab-alice"}
STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$")


def v1_problems(data: dict, owner: str) -> list[str]:
    """What Classroom 50's runner and collector would refuse in ``data`` (their validate_result, and the schema's
    fields: schemas/result-v1.schema.json): an empty list for a result.json they take."""
    problems = []
    allowed = {"schema", "classroom", "assignment", "assignment_type", "owner", "submission", "commit", "release",
               "review", "datetime", "graded_at", "score", "max-score", "tests", "submitted_by"}
    problems += [f"unknown field {name}" for name in set(data) - allowed]
    problems += [f"missing {name}" for name in allowed - {"graded_at", "submitted_by"} if name not in data]
    if data.get("schema") != "classroom50/result/v1":
        problems.append("schema")
    if data.get("owner", "").lower() != owner.lower() or data.get("assignment_type") not in ("individual", "group"):
        problems.append("identity")
    if not str(data.get("submission", "")).startswith("submit/"):
        problems.append("submission")
    if not all(STAMP.match(str(data.get(name, ""))) for name in ("datetime", "graded_at")):
        problems.append("datetime")
    whole = [data.get("score"), data.get("max-score")] + [t.get(k) for t in data.get("tests", []) for k in
                                                          ("score", "max-score")]
    if not all(type(v) is int and v >= 0 for v in whole):
        problems.append("points that are not whole numbers of at least 0")
    elif data["score"] > data["max-score"] or any(t["score"] > t["max-score"] for t in data["tests"]):
        problems.append("a score above its most")
    for test in data.get("tests", []):
        if not (isinstance(test.get("test-name"), str) and test["test-name"] and type(test.get("passed")) is bool):
            problems.append(f"test {test!r}")
    return problems


def report_of(statuses: dict[str, str], points: dict[str, float] | None = None) -> Report:
    results = []
    for task, status in statuses.items():
        most = (points or {}).get(task, BY_ID[task].points)
        score = {PASSED: most, FAILED: most / 3}.get(status, 0.0)
        results.append(TaskResult(BY_ID[task], status, score, f"Task {task} ({BY_ID[task].title}): {status}.",
                                  points=most))
    return Report("alice", results, 1.0, "process limits", None, {"autograd-lab": "0.1.0"})


def test_the_result_keeps_the_v1_contract_with_the_runners_identity_and_whole_points():
    """Does result.json hold the schema, the identity the runner's environment gives, the commit's time, one test per
    task graded (a task skipped here left out), each with whole points rounded down, and a total within its most?"""
    result = scorecard.results(report_of({"1.1": PASSED, "1.4": FAILED, "5.4": PASSED, "6.2": SKIPPED},
                                         {"1.4": 10}))
    when = datetime(2027, 3, 1, 9, 30, 5, tzinfo=timezone.utc)
    data = classroom.result_v1(result, classroom.identity(ENVIRONMENT), when)
    assert v1_problems(data, "alice") == []
    assert (data["classroom"], data["assignment"], data["owner"]) == ("ml-2027", "autograd-lab", "alice")
    assert data["review"] == data["commit"] == ENVIRONMENT["COMMIT_URL"] and data["datetime"] == "2027-03-01T09:30:05Z"
    assert [(t["test-name"], t["passed"], t["score"], t["max-score"]) for t in data["tests"]] == [
        ("1.1 unbroadcast", True, 4, 4), ("1.4 backward of @", False, 3, 10),
        ("5.4 fit reaches the noise floor", True, 5, 5)]
    assert data["tests"][1]["output"] == "Task 1.4 (backward of @): failed."
    assert (data["score"], data["max-score"]) == (12, 19)  # 4 + 3.33 + 5, rounded down
    late = classroom.result_v1(result, classroom.identity(ENVIRONMENT), when, late_percent=50)
    assert late["score"] == 6 and late["tests"] == data["tests"]


def test_the_owner_comes_from_the_environment_or_the_repositorys_name():
    """Is the student the OWNER the runner sets, else USERNAME, else the tail of <classroom>-<assignment>-<user>?"""
    assert classroom.owner_from({**ENVIRONMENT, "OWNER": ""}) == "alice"
    assert classroom.owner_from({**ENVIRONMENT, "OWNER": "", "USERNAME": "bob"}) == "bob"
    assert classroom.owner_from({"GITHUB_ACTOR": "carol"}) == "carol"


@pytest.mark.parametrize(("statuses", "passed"), [
    ({"1.1": PASSED, "1.2": PASSED}, [True, True]),
    ({"1.1": PASSED, "1.2": NOT_ATTEMPTED}, [True, False]),
    ({"1.1": ERROR, "1.2": FAILED}, [False, False]),
])
def test_a_test_passes_only_where_its_task_passed(statuses, passed):
    data = classroom.result_v1(scorecard.results(report_of(statuses)), classroom.identity(ENVIRONMENT),
                               datetime.now(timezone.utc))
    assert [t["passed"] for t in data["tests"]] == passed


def git_checkout(folder: Path, when: str) -> None:
    """``folder`` as a student's checkout: one commit, committed at ``when``."""
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": "a",
           "GIT_AUTHOR_EMAIL": "a@example.edu", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.edu"}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "work"]):
        subprocess.run(["git", "-C", str(folder), *command], env=env, check=True, capture_output=True)


def test_the_grade_command_writes_classroom_50s_result_with_the_commits_time(tmp_path, monkeypatch):
    """Does `autograd-lab grade --classroom` write a v1 result.json whose points are results.json's and whose
    datetime is the graded commit's committer date, the same on a regrade an hour later?"""
    shutil.copytree(REPO / "solutions", tmp_path / "checkout" / "exercises",
                    ignore=shutil.ignore_patterns("__pycache__"))
    git_checkout(tmp_path / "checkout", "2027-03-01T10:00:00+01:00")
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "result.json"
    assert main(["grade", str(tmp_path / "checkout"), "--tasks", "1.1,1.8", "--classroom", str(out),
                 "--results", str(tmp_path / "results.json")]) == 0
    data = json.loads(out.read_text())
    assert v1_problems(data, "alice") == []
    assert data["datetime"] == "2027-03-01T09:00:00Z" and (data["score"], data["max-score"]) == (7, 7)
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 7.0


def test_the_autograder_folder_holds_the_wheel_the_course_without_its_secret_and_the_runtime_block(tmp_path,
                                                                                                 monkeypatch, capsys):
    """Does `autograd-lab classroom50` write autograders/<assignment>/autograder.py (valid Python) beside the wheel,
    course.toml (the course's points, no secret), every dependency's pin and runtime.json (the course's self-hosted
    runner, a GPU label where 6.2 has points; GitHub's hosted runner for --unkeyed), and say where the wheel goes?"""
    course = tmp_path / "course.toml"
    course.write_text(course_file.template(SECRET).replace('"1.4" = 5', '"1.4" = 10'))
    wheel = built_wheel(tmp_path)
    assert main(["classroom50", str(tmp_path / "ml-2027"), "--course", str(course), "--wheel", str(wheel)]) == 0
    folder = tmp_path / "ml-2027" / "autograders" / "autograd-lab"
    assert sorted(p.name for p in folder.iterdir()) == sorted(["autograder.py", "course.toml", "constraints.txt",
                                                               "runtime.json", wheel.name])
    text = (folder / "autograder.py").read_text()
    compile(text, "autograder.py", "exec")
    assert "@" not in re.sub(r"[\w.-]+@[\w.-]+", "", text) and wheel.name in text and "UNKEYED = False" in text
    assert SECRET not in "".join(p.read_text(errors="replace") for p in folder.iterdir() if p.suffix != ".whl")
    assert course_file.load(folder / "course.toml").points("1.4") == 10
    assert re.search(r"^hypothesis==\S+$", (folder / "constraints.txt").read_text(), re.M)
    assert json.loads((folder / "runtime.json").read_text()) == {"runs-on": ["self-hosted", "autograd-lab"]}
    course.write_text(course.read_text().replace('# "6.2" = 0', '"6.2" = 2'))
    assert main(["classroom50", str(tmp_path / "ml-2027"), "--course", str(course), "--wheel", str(wheel)]) == 0
    assert json.loads((folder / "runtime.json").read_text())["runs-on"][-1] == "gpu"
    assert main(["classroom50", str(tmp_path / "ml-2027"), "--course", str(course), "--wheel", str(wheel),
                 "--assignment", "Bad Slug"]) == 2
    course.write_text(course_file.template(SECRET))
    assert main(["classroom50", str(tmp_path / "hosted"), "--unkeyed", "--wheel", str(wheel)]) == 0
    hosted = tmp_path / "hosted" / "autograders" / "autograd-lab"
    assert json.loads((hosted / "runtime.json").read_text())["runs-on"] == "ubuntu-latest"
    assert "UNKEYED = True" in (hosted / "autograder.py").read_text()
    monkeypatch.chdir(tmp_path)  # without a course file: one is made here, outside the published folder
    monkeypatch.delenv(course_file.SECRET_ENV, raising=False)
    capsys.readouterr()
    assert main(["classroom50", "made", "--wheel", str(wheel)]) == 0
    made = tmp_path / "autograd-lab.course.toml"
    assert "autograd-lab.course.toml: the course file of the assignment, with its secret" in capsys.readouterr().out
    assert course_file.load(made).keyed and oct(made.stat().st_mode)[-3:] == "600"
    assert course_file.load(made).secret not in (tmp_path / "made" / "autograders" / "autograd-lab" /
                                                 "course.toml").read_text()


def built_wheel(tmp_path: Path) -> Path:
    """A stand-in for the graders' wheel: the builder copies it and names it, nothing more."""
    wheel = tmp_path / "autograd_lab-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + bytes(18))
    return wheel


def run_autograder(folder: Path, checkout: Path, **env: str) -> subprocess.CompletedProcess:
    """autograder.py as Classroom 50's runner runs it: in the checkout, with the runner's environment (the graders
    already installed: AUTOGRAD_LAB_PYTHON)."""
    environ = {k: v for k, v in os.environ.items() if k != course_file.SECRET_ENV}
    environ.update(ENVIRONMENT, AUTOGRAD_LAB_PYTHON=sys.executable, **env)
    return subprocess.run([sys.executable, str(folder / "autograder.py")], cwd=checkout, env=environ,
                          capture_output=True, text=True, timeout=900)


def test_without_the_secret_the_autograder_refuses_and_says_how_to_give_it(tmp_path):
    """Does the autograder exit with an error (Classroom 50 posts an error status and publishes no grade) and say on
    its ::error:: line that the runner lacks $AUTOGRAD_LAB_SECRET, writing no result.json?"""
    built = classroom50.build(tmp_path / "c", course=course_file.DEFAULT, wheel=built_wheel(tmp_path))
    (tmp_path / "checkout").mkdir()
    done = run_autograder(built.folder, tmp_path / "checkout")
    assert done.returncode == 1 and not (tmp_path / "checkout" / "result.json").exists()
    assert "::error::autograd-lab refused to grade" in done.stderr and "AUTOGRAD_LAB_SECRET" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("source", "full_marks"), [("solutions", True), ("exercises", False)],
                         ids=["solutions", "exercises"])
def test_the_autograder_grades_the_reference_to_full_marks_and_the_stubs_to_zero(tmp_path, source, full_marks):
    """Does autograder.py, run in a student's checkout with the course's secret on the runner, write a v1
    result.json for the owner: the reference full marks in a course without Adam and the PyTorch loop and with 1.4
    worth 10, the stubs 0, one test per task, the commit's time, the scorecard in release-body.md, and the owner's
    key, never the key itself?"""
    course = tmp_path / "course.toml"
    course.write_text(sample_course.text(SECRET))
    total = sample_course.TOTAL
    score = total if full_marks else 0
    built = classroom50.build(tmp_path / "c", course=course_file.load(course), wheel=built_wheel(tmp_path))
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / source, checkout / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    git_checkout(checkout, "2027-03-01T10:00:00Z")
    done = run_autograder(built.folder, checkout, AUTOGRAD_LAB_SECRET=SECRET)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads((checkout / "result.json").read_text())
    assert v1_problems(data, "alice") == []
    assert (data["score"], data["max-score"], data["datetime"]) == (score, total, "2027-03-01T10:00:00Z")
    assert [t["test-name"].split()[0] for t in data["tests"]] == list(course_file.load(course).tasks)
    body = (checkout / "release-body.md").read_text()
    assert f"{score}/{total}" in body
    key = keys.student_key(SECRET, "alice")
    assert str(key) not in (checkout / "result.json").read_text() and keys.tag(key) in body


def test_the_student_workflow_installs_the_graders_from_where_the_instructor_put_them():
    """Does the students' workflow grade with every view and the job summary, install the graders from
    AUTOGRAD_LAB_WHEEL (a release read with AUTOGRAD_LAB_WHEEL_TOKEN, or a URL), stop with an error that says what to
    set when neither is there, and leave GitHub Classroom's retired reporter out?"""
    text = WORKFLOW.read_text()
    assert "autograd-lab grade exercises/ --results results.json --markdown summary.md --junit junit.xml" in text
    assert '>> "$GITHUB_STEP_SUMMARY"' in text and "uses: actions/upload-artifact@v4" in text
    assert "classroom-resources" not in text and "autograding-grading-reporter" not in text
    assert "vars.AUTOGRAD_LAB_WHEEL || '@WHEEL@'" in text and "secrets.AUTOGRAD_LAB_WHEEL_TOKEN" in text
    assert 'gh release download "${AUTOGRAD_LAB_WHEEL#*@}" --repo "${AUTOGRAD_LAB_WHEEL%%@*}"' in text
    assert "::error::No graders to install" in text
    assert "sudo apt-get install -y -q bubblewrap" in text
    assert "--index-url https://download.pytorch.org/whl/cpu" in text and '"torch==@TORCH_VERSION@"' in text
