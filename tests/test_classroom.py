"""Does GitHub Classroom's reporter read the right points from our runner result, and does the student
workflow wire the grade command, the job summary, the artifact and the reporter together?"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from graders.cli import main
from graders.judge.grade import ERROR, FAILED, NOT_ATTEMPTED, PASSED, SKIPPED, Report, TaskResult
from graders.results import classroom, scorecard
from graders.tasks import BY_ID

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / "graders" / "templates" / "student" / "autograde.yml"


def report_of(statuses: dict[str, str]) -> Report:
    results = [TaskResult(BY_ID[task], status, float(BY_ID[task].points) if status == PASSED else 0.0,
                          f"Task {task} ({BY_ID[task].title}): {status}.") for task, status in statuses.items()]
    return Report("alice", results, 1.0, "process limits", None, {"autograd-lab": "0.1.0"})


def test_the_runner_result_is_base64_json_with_the_points_classroom_adds_up():
    """Does the runner result decode to version 1, the max score and one test per graded task, so that the
    reporter's sum over the tests' scores gives "Points 9/14"?"""
    result = scorecard.results(report_of({"1.1": PASSED, "1.4": FAILED, "5.4": PASSED, "6.2": SKIPPED}))
    line = classroom.runner_result(result)
    assert line.endswith("\n") and "\n" not in line[:-1]
    data = json.loads(base64.b64decode(line))
    assert (data["version"], data["status"], data["max_score"]) == (1, "fail", 14.0)
    assert [(t["name"], t["status"], t["score"], t["max_score"]) for t in data["tests"]] == [
        ("1.1 unbroadcast", "pass", 4.0, 4.0), ("1.4 backward of @", "fail", 0.0, 5.0),
        ("5.4 fit reaches the noise floor", "pass", 5.0, 5.0)]
    assert classroom.points(line) == (9.0, 14.0)
    test = data["tests"][1]
    assert set(test) == {"name", "status", "score", "max_score", "message", "test_code", "filename", "line_no",
                         "execution_time"}
    assert (test["message"], test["filename"]) == ("Task 1.4 (backward of @): failed.", "exercises/tensor.py")
    assert test["test_code"] == "autograd-lab grade exercises/ --tasks 1.4"


@pytest.mark.parametrize(("statuses", "overall"), [
    ({"1.1": PASSED, "1.2": PASSED}, "pass"),
    ({"1.1": PASSED, "1.2": NOT_ATTEMPTED}, "fail"),
    ({"1.1": ERROR, "1.2": FAILED}, "error"),
])
def test_the_overall_status_is_pass_only_when_every_task_passed_and_error_when_the_grader_failed(statuses, overall):
    assert classroom.payload(scorecard.results(report_of(statuses)))["status"] == overall


def test_the_grade_command_writes_a_runner_result_with_the_scorecards_points(tmp_path):
    """Does `autograd-lab grade --classroom` write a runner result whose points are those of results.json?"""
    out = tmp_path / "classroom.txt"
    assert main(["grade", str(REPO / "solutions"), "--tasks", "1.1,1.8", "--classroom", str(out),
                 "--results", str(tmp_path / "results.json")]) == 0
    assert classroom.points(out.read_text()) == (7.0, 7.0)
    assert classroom.decode(out.read_text())["status"] == "pass"
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 7.0
    assert main(["grade", str(REPO / "exercises"), "--tasks", "1.1,1.8", "--classroom", str(out)]) == 0
    assert classroom.points(out.read_text()) == (0.0, 7.0)


def test_the_student_workflow_grades_summarises_uploads_and_reports_to_classroom():
    """Does the workflow run the grade command with every view, append the Markdown to the job summary,
    upload results.json, and hand the runner result to Classroom's reporter under the right variable?"""
    text = WORKFLOW.read_text()
    assert re.search(r"^name: Autograding Tests$", text, re.MULTILINE)  # the name Classroom looks for
    assert re.search(r"^  run-autograding-tests:$", text, re.MULTILINE)
    assert "autograd-lab grade exercises/ --isolation bubblewrap --results results.json --markdown summary.md \\\n" \
           "            --junit junit.xml --classroom classroom.txt" in text
    assert '>> "$GITHUB_STEP_SUMMARY"' in text
    assert 'echo "result=$(cat classroom.txt)" >> "$GITHUB_OUTPUT"' in text
    assert "uses: actions/upload-artifact@v4" in text and "            results.json\n" in text
    step_id = re.search(r"^        id: (\S+)$", text, re.MULTILINE)[1]
    runners = re.search(r"^          runners: (\S+)$", text, re.MULTILINE)[1]
    assert runners == step_id
    assert f"{runners.upper()}_RESULTS: ${{{{ steps.{step_id}.outputs.result }}}}" in text
    assert "uses: classroom-resources/autograding-grading-reporter@v1" in text
    assert "--index-url https://download.pytorch.org/whl/cpu" in text and '"torch==@TORCH_VERSION@"' in text
