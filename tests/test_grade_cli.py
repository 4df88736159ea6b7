"""The grade command end to end: scorecards, exit codes, determinism, and a judge that never imports student code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hostile import UNTRUSTED_TEXT

from graders.cli import main
from graders.judge.grade import grade
from graders.results import scorecard
from graders.tasks import BY_ID, TASKS, TOTAL_POINTS

REPO = Path(__file__).resolve().parent.parent
SOME = ("1.1", "1.4", "2.3", "3.1", "4.1", "5.2")


def submission(tmp_path: Path, name: str = "alice", source: Path = REPO / "solutions") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for path in source.glob("*.py"):
        shutil.copy(path, folder / path.name)
    return folder


def test_the_reference_solution_scores_full_marks_and_the_stubs_zero():
    """Do solutions/ get full marks (every point of the task table) and exercises/ none, with every task 'not
    attempted'?"""
    reference, stubs = grade(REPO / "solutions"), grade(REPO / "exercises")
    assert reference.score == reference.max_score == TOTAL_POINTS
    assert stubs.score == 0
    # 6.2 is graded (and so "not attempted") only where the machine has CUDA; elsewhere it is skipped.
    skipped = {r.task.id for r in stubs.results if r.status == "skipped"}
    assert skipped <= {"6.2"}
    assert {r.task.id for r in stubs.results if r.status == "not attempted"} == {t.id for t in TASKS} - skipped


def test_grading_twice_gives_byte_identical_results_files(tmp_path):
    """Does the same submission always give the same results.json, byte for byte?"""
    alice = submission(tmp_path)
    tensor = alice / "tensor.py"
    tensor.write_text(tensor.read_text().replace("return g @ w.T, x.T @ g", "return g @ w.T, g.T @ x"))
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    for out in (first, second):
        assert main(["grade", str(alice), "--tasks", ",".join(SOME), "--results", str(out)]) == 0
    assert first.read_bytes() == second.read_bytes()
    result = json.loads(first.read_text())
    assert [t["number"] for t in result["tests"]] == list(SOME)
    assert result["score"] == sum(t["score"] for t in result["tests"]) == sum(BY_ID[t].points for t in SOME) - 5


def test_results_follow_gradescopes_schema(tmp_path):
    """Does results.json carry Gradescope's fields: a top-level score, and per test name, number, score,
    max_score, status and output?"""
    out = tmp_path / "results.json"
    assert main(["grade", str(REPO / "exercises"), "--tasks", "1.1,6.2", "--results", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["score"] == 0
    first, cuda = result["tests"]
    assert first["number"] == "1.1" and first["max_score"] == 4 and first["status"] == "failed"
    assert first["output"].startswith("Task 1.1 not attempted yet")
    assert cuda["max_score"] == 0 and cuda["extra_data"]["status"] in ("skipped", "not attempted")


def test_markdown_and_junit_views_are_rendered_from_the_same_result(tmp_path):
    """Do the Markdown summary and the JUnit file agree with results.json?"""
    md, xml = tmp_path / "s.md", tmp_path / "j.xml"
    assert main(["grade", str(REPO / "exercises"), "--tasks", "1.1,1.2", "--markdown", str(md),
                 "--junit", str(xml)]) == 0
    assert md.read_text().startswith("## autograd-lab: 0/8")
    suite = ET.parse(xml).getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "2"


@pytest.mark.parametrize("bad", ["missing", "a_file.txt", "empty"])
def test_a_path_that_cannot_be_graded_is_a_clear_error_with_exit_2(tmp_path, capsys, bad):
    """Does a missing folder, a file, or a folder without the contract's files get one line and exit 2?"""
    (tmp_path / "a_file.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    assert main(["grade", str(tmp_path / bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autograd-lab grade: ") and len(err.strip().splitlines()) == 1


def test_a_broken_file_costs_only_its_own_tasks(tmp_path):
    """Does a syntax error in train.py leave the tensor and optimizer tasks their points?"""
    alice = submission(tmp_path)
    (alice / "train.py").write_text("def train_epoch(:\n")
    report = grade(alice, task_ids=("1.1", "3.1", "5.1"))
    status = {r.task.id: r.status for r in report.results}
    assert status == {"1.1": "passed", "3.1": "passed", "5.1": "failed"}
    assert "SyntaxError" in report.results[-1].message


def test_the_judge_never_imports_the_submission(tmp_path):
    """After grading, does the judge's process hold no module of the submission, even one that imports itself
    at import time?"""
    alice = submission(tmp_path)
    marker = tmp_path / "imported-in"
    (alice / "tensor.py").write_text((alice / "tensor.py").read_text() + (
        f"\nimport os\nopen({str(marker)!r} + str(os.getpid()), 'w').close()\n"))
    before = set(sys.modules)
    grade(alice, task_ids=("1.1",), isolation="limits")
    assert not [m for m in set(sys.modules) - before if "tensor" in m and "torch" not in m]
    assert not (tmp_path / f"imported-in{__import__('os').getpid()}").exists()


def test_python_dash_m_graders_is_the_same_command(tmp_path):
    """Does `python -I -m graders` run the same command line as `autograd-lab`?"""
    out = subprocess.run([sys.executable, "-I", "-m", "graders", "--version"], capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.startswith("autograd-lab ")


@pytest.mark.parametrize("isolated", [False, True])
def test_python_dash_m_graders_refuses_a_judge_under_the_working_folder(isolated):
    """From a folder that holds the graders package (a checkout here; a submission carrying a copy of graders/ in
    the hostile corpus), does `python -m graders` refuse with one line that names the safe commands, and exit 2?"""
    flags = ["-I"] if isolated else []
    out = subprocess.run([sys.executable, *flags, "-m", "graders", "--version"], capture_output=True, text=True,
                         cwd=REPO)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("autograd-lab: refusing to run the judge from ") and len(out.stderr.splitlines()) == 1
    assert "python -I -m graders --version" in out.stderr and "autograd-lab" in out.stderr


def test_the_table_shows_each_task_and_the_total():
    """Does the terminal scorecard give one line per task, then the total?"""
    text = scorecard.table(scorecard.results(grade(REPO / "exercises", task_ids=("1.1", "1.2"))))
    lines = text.splitlines()
    assert lines[3].startswith("1.1   unbroadcast") and "not attempted" in lines[3]
    assert lines[5] == "total 0/8 (0 Hypothesis examples)"


def test_a_private_scratch_folder_is_not_blamed_on_the_student(tmp_path, monkeypatch):
    """In limits mode as root without a root of its own (no mount namespace), a worker's uid must search every folder
    above its code: is a grade asked to lay out under a private folder (pytest's tmp_path, a TMPDIR of mode 0700)
    moved to a shared temp folder it can reach, while one that is reachable, or any grade under bubblewrap, in a root
    of its own or run as the judge's own uid, stays where asked?"""
    from graders.isolation import sandbox

    if sandbox.namespaces_work():
        dropped = sandbox.Isolation(bubblewrap=False, drop=True, reads_all=False)
        assert sandbox.scratch_parent(dropped, tmp_path) == tmp_path  # bound into its root by root
    monkeypatch.setattr(sandbox, "namespaces_work", lambda: False)

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    shared = Path(tempfile.mkdtemp())
    shared.chmod(0o755)
    try:
        dropped = sandbox.Isolation(bubblewrap=False, drop=True, reads_all=False)
        moved = sandbox.scratch_parent(dropped, private / "inside")
        assert moved != private / "inside" and sandbox._reachable_by_others(moved)
        if sandbox._reachable_by_others(shared):
            assert sandbox.scratch_parent(dropped, shared) == shared
        for kept in (sandbox.Isolation(bubblewrap=True, drop=True), sandbox.Isolation(bubblewrap=False, drop=False),
                     sandbox.Isolation(bubblewrap=False, drop=True, reads_all=True)):
            assert sandbox.scratch_parent(kept, private) == private
    finally:
        shutil.rmtree(shared)


def test_text_from_student_code_reaches_every_view_capped_and_plain(tmp_path):
    """An exception whose class name and message hold escape sequences, control characters, a lone surrogate and
    thousands of characters: are results.json, the Markdown and the JUnit file still written, small, valid and
    free of them?"""
    alice = submission(tmp_path)
    (alice / "tensor.py").write_text((alice / "tensor.py").read_text() + UNTRUSTED_TEXT)
    out = {name: tmp_path / name for name in ("results.json", "summary.md", "junit.xml")}
    assert main(["grade", str(alice), "--tasks", "1.1", "--results", str(out["results.json"]),
                 "--markdown", str(out["summary.md"]), "--junit", str(out["junit.xml"])]) == 0
    result = json.loads(out["results.json"].read_text())
    [test] = result["tests"]
    assert test["status"] == "failed" and "Boom" in test["output"]
    for path in out.values():
        text = path.read_text(encoding="utf-8")
        assert len(text) < 20_000, f"{path.name} holds {len(text)} characters"
        assert not any(ch in text for ch in "\x1b\x07\x00"), path.name
    ET.parse(out["junit.xml"])
    # The message's own backticks cannot close the block it is shown in (its fence is longer), and nothing of
    # it starts a line of its own.
    lines = out["summary.md"].read_text().splitlines()
    fences = [i for i, line in enumerate(lines) if line and set(line) == {"`"}]
    shown = next(i for i, line in enumerate(lines) if "a fence ````" in line)
    assert len(fences) == 2 and fences[0] < shown < fences[1] and len(lines[fences[0]]) == 5, "\n".join(lines)
    assert not any(line.startswith("# 100/100") for line in lines)


@pytest.mark.parametrize(("command", "option", "value", "expected"), [
    ("grade", "--tasks", "9.9", "expected task ids of the task table, comma-separated: 1.1, 1.2,"),
    ("grade", "--tasks", "1.1,", "expected task ids of the task table"),
    ("grade", "--isolation", "x", "expected auto, bubblewrap or limits"),
    ("grade-all", "--tasks", "1.4,7.1", "expected task ids of the task table"),
    ("grade-all", "--isolation", "sandbox", "expected auto, bubblewrap or limits"),
])
def test_a_bad_grading_option_stops_with_exit_2_echoing_the_call(tmp_path, capsys, command, option, value, expected):
    """Does grade (or grade-all) given --tasks or --isolation that cannot work stop before grading, with exit
    status 2 and one line that says what it got and what it expected (not a grade of nothing)?"""
    args = [command, str(tmp_path)] + (["--out", str(tmp_path / "out")] if command == "grade-all" else [])
    with pytest.raises(SystemExit) as stop:
        main([*args, option, value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"autograd-lab {command}: got {option} {value!r}, {expected}"), err
    assert err.count("\n") == 1, err


def test_grade_takes_a_zip_and_the_folder_above_the_package_as_grade_all_and_gradescope_do(tmp_path):
    """One pipeline for every entry point: does `autograd-lab grade` of alice.zip, of alice/exercises/ handed in
    as alice/, and of a folder holding only the .zip (as Gradescope keeps an upload) write results.json
    byte-identical to grading the package folder itself?"""
    import zipfile

    package = tmp_path / "alice" / "exercises"
    shutil.copytree(REPO / "solutions", package, ignore=shutil.ignore_patterns("__pycache__"))
    with zipfile.ZipFile(tmp_path / "alice.zip", "w") as archive:
        for path in sorted(package.glob("*.py")):
            archive.write(path, f"exercises/{path.name}")
    (tmp_path / "upload").mkdir()
    shutil.copy(tmp_path / "alice.zip", tmp_path / "upload" / "alice.zip")
    results = {}
    for name, path in {"package": package, "above": tmp_path / "alice", "zip": tmp_path / "alice.zip",
                       "upload": tmp_path / "upload"}.items():
        out = tmp_path / f"{name}.json"
        assert main(["grade", str(path), "--tasks", "1.1,3.1", "--results", str(out)]) == 0, name
        results[name] = out.read_bytes()
    assert json.loads(results["package"])["score"] == 8.0
    assert {name: data == results["package"] for name, data in results.items()} == dict.fromkeys(results, True)


def test_a_bug_of_the_graders_costs_its_task_with_a_plain_line_and_leaves_the_trace_on_stderr(monkeypatch, capsys):
    """A check that raises (a bug of ours, here planted): does its task score 0 with a line that says it is not
    the student's mistake, the other tasks keep their scores, and does stderr carry the traceback an instructor
    reports?"""
    from graders.judge import checks as checks_module

    table = checks_module.checks()

    def broken(ctx):
        raise KeyError("planted")

    monkeypatch.setattr("graders.judge.grade.checks", lambda: {**table, "1.2": broken})
    report = grade(REPO / "solutions", task_ids=("1.1", "1.2"))
    one, two = report.results
    assert (one.score, two.score, two.status) == (4.0, 0.0, "grader error")
    assert two.message == ("Task 1.2 (backward of +, - and unary -): the grader itself failed (KeyError: 'planted'). "
                           "This is not your mistake: please tell your instructor.")
    said = capsys.readouterr().err
    assert "the grader itself failed on task 1.2" in said and "in broken" in said and "KeyError: 'planted'" in said
