"""Every view of a scorecard is valid in its own grammar, whatever code points a message holds.

A message quotes student code (an exception's text, a class name) and reaches results.json, the terminal, the
Markdown job summary, JUnit XML, GitHub Classroom's runner result, grades.csv and nbgrader's feedback. The worker's
answers pass ``untrusted()`` on their way in, but a view must not rely on it: here arbitrary text (every code point,
lone surrogates, U+FFFE and U+FFFF, controls, escapes, fences) goes into a result both through
``scorecard.results`` and straight into a result dict (as a merged shard's results.json could hold it), and each
view is written as its file would be and parsed back.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

import nbformat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_notebook

from graders.classgrade import gradebook
from graders.integrations import nbgrader_judge
from graders.judge.grade import ERROR, PASSED, Report, TaskResult
from graders.results import classroom, scorecard
from graders.tasks import BY_ID

# Every code point, surrogates included (Hypothesis leaves out category Cs unless told), with the troublesome ones
# drawn often.
ANY_CHARACTER = st.one_of(st.characters(exclude_categories=()), st.sampled_from(
    "\x00\x07\x08\x0b\x0c\x0d\x1b\x7f\x85\x9b\u2028\u202e\ufeff\ufffe\uffff\ud800\udfff`#<>&\"'\n\t"))
ANY_TEXT = st.text(ANY_CHARACTER, max_size=200) | st.builds(
    lambda head, fence, tail: f"{head}\n{fence}\n# 100/100\n{tail}", st.text(ANY_CHARACTER, max_size=20),
    st.sampled_from(["```", "````", "   ```", "~~~", "</details>", "]]>", "<!--"]), st.text(ANY_CHARACTER, max_size=20))
# What the spec of each grammar forbids (XML 1.0's Char production, and the controls a terminal acts on).
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
VIEWS = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])


def _result(message: str, straight: bool) -> dict:
    """A scorecard of three tasks whose failure says ``message``: made by scorecard.results, or (``straight``) with
    the message put into the dict afterwards, past whatever results() does to it."""
    report = Report("alice", [TaskResult(BY_ID["1.1"], PASSED, 4.0, "passed"),
                              TaskResult(BY_ID["1.4"], "failed", 0.0, "Task 1.4 (backward of @): " + message),
                              TaskResult(BY_ID["2.1"], ERROR, 0.0, message)], 1.0, "process limits", None)
    result = scorecard.results(report)
    if straight:
        result["tests"][1]["output"] = "Task 1.4 (backward of @): " + message
        result["tests"][2]["output"] = message
    return result


def _written(text: str) -> str:
    """``text`` as a view's file holds it: UTF-8, strictly (a lone surrogate cannot be written)."""
    return text.encode("utf-8").decode("utf-8")


@VIEWS
@given(message=ANY_TEXT, straight=st.booleans())
def test_every_view_parses_whatever_the_message_holds(message, straight):
    result = _result(message, straight)

    loaded = json.loads(_written(scorecard.dumps(result)))  # results.json
    assert loaded["tests"][1]["output"] == scorecard.safe(result["tests"][1]["output"])
    assert not NOT_XML.search(loaded["tests"][2]["output"])

    junit = ET.fromstring(_written(scorecard.junit(result)).encode("utf-8"))  # expat: XML 1.0, well-formed
    assert len(junit.findall("testcase")) == 3 and len(junit.findall("testcase/failure")) == 2

    terminal = _written(scorecard.table(result))
    assert not TERMINAL_CONTROL.search(terminal) and not NOT_XML.search(terminal)

    markdown = _written(scorecard.markdown(result))
    for test in loaded["tests"][1:]:  # each message inside a fence that none of its lines can close
        fence = scorecard._fence(test["output"])
        assert f"\n{fence}\n{test['output']}\n{fence}\n" in markdown
        assert not any(line.lstrip(" ").startswith(fence) for line in test["output"].splitlines())
    assert sum(line.startswith("## ") for line in markdown.splitlines()) == 1

    who = classroom.identity({"OWNER": "alice", "CLASSROOM": "c", "ASSIGNMENT": "a", "SUBMISSION_TAG": "submit/x"})
    runner = json.loads(_written(scorecard.dumps(classroom.result_v1(result, who, datetime.now(timezone.utc)))))
    assert [t["output"] for t in runner["tests"]][1:] == [t["output"] for t in loaded["tests"][1:]]

    notebook = new_notebook(cells=[new_code_cell("", metadata={"nbgrader": {"grade_id": f"task_{task}"}})
                                   for task in ("1_1", "1_4", "2_1")])
    nbgrader_judge.JudgeScores().preprocess(notebook, {nbgrader_judge.RESOURCE: result})
    feedback = nbformat.reads(_written(nbformat.writes(notebook)), as_version=4)  # nbgrader's feedback source
    nbformat.validate(feedback)
    assert not NOT_XML.search(feedback.cells[1].outputs[0]["text"])


# A folder name is bytes (no NUL, no slash); the gradebook keeps it as os.fsdecode gives it.
FOLDER_NAMES = st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b and b"/" not in b
                                                         and b not in (b".", b".."))


@VIEWS
@given(name=FOLDER_NAMES, status=ANY_TEXT)
def test_grades_csv_parses_back_whatever_the_names_and_reasons(tmp_path_factory, name, status):
    """grades.csv, written as grade-all writes it, read back: the same student (byte for byte) and a status that
    is the one written, made safe."""
    import os

    path = tmp_path_factory.mktemp("csv") / gradebook.CSV_NAME
    record = gradebook.Record(os.fsdecode(name), status, 4.0, {"1.1": 4.0}, 1.5)
    gradebook.write_csv(path, [record], ("1.1",))
    task_ids, [back] = gradebook.read_csv(path)
    assert task_ids == ("1.1",) and os.fsencode(back.student) == name
    assert back.status == scorecard.safe(status) and back.scores == {"1.1": 4.0}


def test_a_pass_that_says_what_was_not_graded_is_shown_whole_in_the_terminal_and_the_summary():
    """6.2's pass says at length what was not graded: the terminal's reason column clips it, so is its whole text
    printed below the table and in the job summary's blocks, while a plain pass adds nothing?"""
    note = ("not graded: whether fit_torch computed on the GPU (its float64 results agree on both devices, so no "
            "number shows where it ran); the notes on .to() can only cost the task")
    report = Report("alice", [TaskResult(BY_ID["1.1"], PASSED, 4.0, "passed"),
                              TaskResult(BY_ID["6.2"], PASSED, BY_ID["6.2"].points, f"Task 6.2: passed\n  {note}")],
                    1.0, "process limits", None)
    result = scorecard.results(report)
    terminal, summary = scorecard.table(result), scorecard.markdown(result)
    assert "…" in terminal.split("\n6.2 ", 1)[1].splitlines()[0]  # the column still holds a clipped line of it
    assert note in terminal and note in summary
    assert "Task 1.1" not in terminal and "1.1 " + BY_ID["1.1"].title not in summary.split("<details>", 1)[-1]
