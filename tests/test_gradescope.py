"""Does the Gradescope autograder zip hold what Gradescope runs (every dependency pinned, the course file with its
secret), and does it grade a submission laid out as Gradescope lays it out (/autograder/source,
/autograder/submission, /autograder/results, /autograder/submission_metadata.json) with its students' key, the
course's points, visibility and late policy, and refuse to grade without a key?

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
import sample_course
from corpus import make_submission
from solution_scan import scan_zip

from graders import keys
from graders.cli import main
from graders.course import course_file, templates

REPO = Path(__file__).resolve().parent.parent


# The course of the zip: sample_course's (Adam and the PyTorch loop left out, 1.4 worth 10 points), with 5.4's test
# shown after the due date, and a due date with 10% a day.
SECRET = "ab" * 32
DUE = "2027-03-01T23:59:00+00:00"
COURSE = sample_course.text(SECRET, {"# due = 2026-03-01T23:59:00-05:00": f"due = {DUE}",
                                     '# "5.4" = "after_due_date"': '"5.4" = "after_due_date"'})
ON_TIME = {"id": 4242, "created_at": "2027-03-01T12:00:00.000000-00:00", "assignment": {"title": "lab"},
           "users": [{"email": "alice@example.edu", "id": 1234, "name": "Alice"}]}


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gradescope")
    (folder / "course.toml").write_text(COURSE)
    out = folder / "autograder.zip"
    assert main(["gradescope", str(out), "--course", str(folder / "course.toml")]) == 0
    return out


def fake_autograder(root: Path, archive: Path, metadata: dict | None = ON_TIME) -> Path:
    """Gradescope's layout: the zip unpacked into source/, run_autograder copied beside it, the submission's
    metadata."""
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(root / "source")
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    if metadata is not None:
        (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def run_autograder(root: Path) -> dict:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRAD_LAB_PYTHON": sys.executable}
    env.pop(course_file.SECRET_ENV, None)
    subprocess.run(["bash", str(root / "run_autograder")], env=env, check=False, timeout=600, cwd=root,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
def test_the_zip_holds_setup_run_autograder_every_pin_the_course_and_a_wheel_with_no_solution(autograder_zip):
    """Does the zip hold an executable setup.sh and run_autograder, every dependency pinned to the versions here
    (Hypothesis's draws depend on its version), the course file readable by root alone, and a wheel that carries
    the graders (worker, stand-ins, given code and templates included) and nothing of the reference solution?"""
    from importlib import metadata

    with zipfile.ZipFile(autograder_zip) as zf:
        names = zf.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        constraints = zf.read("constraints.txt").decode()
        course = zf.read("course.toml").decode()
        wheel = next(n for n in names if n.endswith(".whl"))
        with zf.open(wheel) as f, zipfile.ZipFile(f) as whl:
            inside = set(whl.namelist())
    assert sorted(names) == sorted(["setup.sh", "run_autograder", "constraints.txt", "course.toml", wheel])
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    assert stat.S_IMODE(modes["course.toml"]) == 0o600 and "chmod 600 course.toml" in setup
    version = templates.torch_version()
    pins = dict(line.split("==") for line in constraints.splitlines())
    assert pins["torch"] == version and pins["hypothesis"] == metadata.version("hypothesis")
    assert pins["numpy"] == metadata.version("numpy") and pins["pytest"] == metadata.version("pytest")
    assert {"nbgrader", "traitlets", "sortedcontainers"} <= set(pins)  # nbgrader's own and Hypothesis's, too
    assert f'"torch=={version}" --index-url https://download.pytorch.org/whl/cpu' in setup
    assert f"-c constraints.txt ./{wheel}" in setup and "@" not in setup  # every placeholder filled
    assert course_file.parse(course, Path("course.toml")).secret == SECRET
    assert {"graders/judge/grade.py", "graders/worker/main.py", "graders/worker/standins.py",
            "graders/judge/checks/ops.py",
            "graders/given/tensor.py", "graders/data/lesson_curve.json",
            "graders/templates/gradescope/run_autograder"} <= inside
    assert not any(name.startswith(("tests/", "exercises/", "solutions/")) for name in inside)
    assert scan_zip(autograder_zip.read_bytes()) == {}


@pytest.mark.slow
def test_run_autograder_grades_with_the_students_key_the_courses_points_and_visibility(autograder_zip, tmp_path):
    """Does run_autograder grade a correct submission (handed in as a folder holding exercises/) to full marks in
    the course (its total, one test for each of its tasks), with the key of its Gradescope user (shown as a tag),
    each test's visibility from the course, and otherwise the same results.json as `autograd-lab grade` with the same
    course and key?"""
    root = fake_autograder(tmp_path / "autograder", autograder_zip)
    make_submission(root / "submission", "exercises", [])
    results = run_autograder(root)
    assert (results["score"], results["extra_data"]["max_score"]) == (sample_course.TOTAL, sample_course.TOTAL)
    assert [t["number"] for t in results["tests"]] == list(sample_course.TASK_IDS)
    assert {t["number"]: t["visibility"] for t in results["tests"]}["5.4"] == "after_due_date"
    assert {t["visibility"] for t in results["tests"] if t["number"] != "5.4"} == {"visible"}
    key = keys.student_key(SECRET, "gradescope:1234")
    assert keys.tag(key) in results["output"] and str(key) not in json.dumps(results)
    (tmp_path / "course.toml").write_text(COURSE)
    assert main(["grade", str(REPO / "solutions"), "--course", str(tmp_path / "course.toml"), "--student",
                 "gradescope:1234", "--results", str(tmp_path / "alone.json")]) == 0
    alone = json.loads((tmp_path / "alone.json").read_text())
    for test in results["tests"]:
        del test["visibility"]
    assert results == alone


@pytest.mark.slow
def test_a_late_submission_loses_the_courses_penalty_and_says_so(autograder_zip, tmp_path):
    """Does a submission made a day and a minute after the due date lose 2 days' 10% of its total, said in the
    output, its tests' points untouched?"""
    late = {**ON_TIME, "created_at": "2027-03-03T00:00:00+00:00"}
    root = fake_autograder(tmp_path / "autograder", autograder_zip, late)
    make_submission(root / "submission", "exercises", [])
    results = run_autograder(root)
    assert results["score"] == pytest.approx(sample_course.TOTAL * 0.8)
    assert "Late: late by 2 days: -20% (10% a day, at most 50%)." in results["output"]
    assert sum(t["score"] for t in results["tests"]) == sample_course.TOTAL


@pytest.mark.slow
def test_run_autograder_gives_zero_and_the_reason_for_a_submission_it_cannot_grade(autograder_zip, tmp_path):
    """Does a submission without the exercise files still get a results.json: 0 points and what to upload?"""
    root = fake_autograder(tmp_path / "autograder", autograder_zip)
    (root / "submission" / "answers.txt").write_text("see attached\n")
    results = run_autograder(root)
    assert results["score"] == 0 and results["tests"] == []
    assert "could not grade this submission" in results["output"]
    assert "Upload the .py files of exercises/" in results["output"]


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["metadata", "secret"])
def test_a_gradescope_grade_without_a_key_is_refused_with_why(autograder_zip, tmp_path, missing):
    """Without the submission's metadata (whose key?) or without the course's secret (a course file edited, a
    zip built by hand), does the autograder grade nothing, and give 0 with a message that says why and that it is
    not the student's mistake? (Before keys, it graded every student on the same fixed inputs.)"""
    root = fake_autograder(tmp_path / "autograder", autograder_zip, None if missing == "metadata" else ON_TIME)
    if missing == "secret":
        course = root / "source" / "course.toml"
        course.write_text("\n".join(line for line in course.read_text().splitlines()
                                     if not line.startswith("secret")))
    make_submission(root / "submission", "exercises", [])
    results = run_autograder(root)
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("The autograder refused to grade this submission: no key")
    assert "This is not your mistake" in results["output"]
    assert ("submission_metadata.json" if missing == "metadata" else "has no secret") in results["output"]


def test_a_zip_built_without_a_course_file_gets_a_fresh_secret_kept_beside_it(tmp_path, capsys):
    """Does `gradescope` without --course make the default course with a fresh secret, put it in the zip and keep
    it beside the zip (readable by its owner alone), saying so; and does a course file without a secret stop it?"""
    wheel = tmp_path / "autograd_lab-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + bytes(18))
    assert main(["gradescope", str(tmp_path / "a.zip"), "--wheel", str(wheel)]) == 0
    kept = tmp_path / "a.course.toml"
    assert str(kept) in capsys.readouterr().out and stat.S_IMODE(kept.stat().st_mode) == 0o600
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        inside = course_file.parse(zf.read("course.toml").decode(), Path("course.toml"))
    assert inside.secret == course_file.load(kept).secret and inside.total == sample_course.TABLE_TOTAL
    (tmp_path / "open.toml").write_text("[tasks]\n")
    assert main(["gradescope", str(tmp_path / "b.zip"), "--wheel", str(wheel), "--course",
                 str(tmp_path / "open.toml")]) == 2
    assert "has no secret" in capsys.readouterr().err and not (tmp_path / "b.zip").exists()
