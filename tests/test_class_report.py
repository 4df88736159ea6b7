"""Does the class report tell an instructor what the class got wrong (graders/classgrade/report.py)?

A class is built from the corpus: correct students, students who each planted one known mistake (some the same
one), a malformed submission and one whose code ends the process at import. grade-all writes class.md and
class.html; the report must name each planted mistake with the right count and the right students, and the page
must be one self-contained, well-formed HTML document.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from corpus import BY_NAME, make_submission

from graders.classgrade import batch, report
from graders.classgrade.gradebook import Record
from graders.results import mistakes
from graders.tasks import BY_ID

TASKS = ("1.4", "2.2", "5.2")
DOCS_CLASS = Path(__file__).resolve().parents[1] / "docs" / "class.md"
PLANTED = {  # student -> the corpus entry they made (None: correct)
    "ana": None, "ben": "matmul_grads_swapped", "cai": "matmul_grads_swapped", "dee": "engine_leaf_root_refused",
    "eli": "evaluate_without_finally", "fay": "evaluate_without_finally", "gus": "evaluate_without_finally",
}
EXPECTED = {  # the mistake each planted entry is named by (its snapshot's hint)
    "matmul_grads_swapped": ("1.4", "HINT_SHAPE_REVERSED"), "engine_leaf_root_refused": ("2.2", "HINT_LEAF_ROOT"),
    "evaluate_without_finally": ("5.2", "HINT_RESTORE_ON_ERROR"),
}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("class")
    subs = root / "submissions"
    subs.mkdir()
    for student, entry in PLANTED.items():
        make_submission(subs, student, [] if entry is None else [BY_NAME[entry]])
    (subs / "hal").mkdir()
    (subs / "hal" / "notes.txt").write_text("no code, sorry\n")
    future = "from __future__ import annotations\n"
    make_submission(subs, "ivy", [("tensor.py", future, future + "import os; os._exit(3)\n")])
    batch.grade_all(subs, root / "out", jobs=2, settings=batch.Settings(tasks=TASKS))
    return root / "out"


@pytest.mark.slow
def test_the_report_names_each_planted_mistake_with_its_count_and_students(graded_class):
    """Does class.md count each planted mistake once per student who made it, naming exactly those students, under
    the task it belongs to, and count the full points of every task?"""
    text = (graded_class / "class.md").read_text()
    for entry, (task, mistake) in EXPECTED.items():
        students = sorted(s for s, e in PLANTED.items() if e == entry)
        section = text.split(f"### {task} ", 1)[1].split("\n### ", 1)[0]
        assert f"- **{len(students)}** `{mistake}`: " in section, section
        named = re.search(rf"`{mistake}`: .*\n  \((.*)\)", section)[1]
        assert sorted(named.split(", ")) == students
    for task in TASKS:
        lost = sum(1 for e in PLANTED.values() if e is not None and EXPECTED[e][0] == task)
        # ivy's code never imports: she has no points of tensor.py's tasks, and all of 5.2's (train.py is hers)
        crashed = task in ("1.4", "2.2")
        graded = len(PLANTED) + 1
        full = graded - lost - crashed
        assert f"| {task} | " in text and f"| {full}/{graded} |" in text.split(f"| {task} | ", 1)[1].split("\n")[0]
    assert "hal" in text.split("## Students", 1)[1] and "malformed" in text.split("## Students", 1)[1]
    sample = re.search(r"<!-- class-report-sample:start -->\n```markdown\n(.*?)```", DOCS_CLASS.read_text(), re.S)[1]
    parts = ("\n" + sample).split("\n### ")[1:]
    assert len(parts) >= 2, "docs/class.md lost its sample of the class report"
    for part in parts:
        assert "### " + part in text, f"docs/class.md: the report sample is not what grade-all writes:\n{part}"


@pytest.mark.slow
def test_the_class_page_is_one_well_formed_self_contained_document(graded_class):
    """Is class.html well-formed (every tag closed in order), free of scripts and outside resources, its pictures
    inline, and does it say what class.md says of each mistake?"""
    page = (graded_class / "class.html").read_text()
    checker = WellFormed()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.open == []
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert all(src.startswith("data:image/png;base64,") for src in checker.sources)
    for _, mistake in EXPECTED.values():
        assert f"<code>{mistake}</code>" in page


def test_a_name_or_message_from_a_student_is_text_in_both_formats():
    """A student folder named like markup, with a failure message holding markup: is each shown as text, in
    Markdown (every punctuation escaped) and in HTML (entities), never as a link, tag or table cell?"""
    name = "<img src=x onerror=alert(1)>|[x](javascript:1)"
    record = Record(name, "graded", 0.0, {"1.4": 0.0}, 1.0)
    summary = report.TaskSummary("1.4", graded=1, unrecognised={"wrong <b>value</b> | `x`": [name]})
    summary.rungs["values"] = 1
    data = report.ClassReport(1, [record], [], [summary], BY_ID["1.4"].points)
    text = report.markdown(data)
    students = text.split("## Students", 1)[1]
    assert "\\<img src=x onerror=alert(1)\\>\\|\\[x\\](javascript:1)" in students
    assert not re.search(r"(?<!\\)<img", text) and not re.search(r"(?<!\\)\]\(javascript", text)
    page = report.page(data, {})
    assert "<img" not in page and "<b>" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_message_is_read_back_by_the_templates_that_made_it():
    """Does the reader find the rung and the named mistake of a message made of a head and a hint template, and
    report an unknown message as "other" with no mistake?"""
    from graders import messages as msg

    text = msg.lines(msg.WRONG_VALUE_HEAD.format(what="grad of x", task="1.4", title="backward of @"),
                     msg.HINT.format(hint=msg.HINT_SHAPE_REVERSED))
    reading = mistakes.read(text)
    assert (reading.rung, reading.mistake) == ("values", "HINT_SHAPE_REVERSED")
    assert mistakes.read("something no template says") == mistakes.Reading("other")


class WellFormed(HTMLParser):
    """Tags closed in the order they opened (void elements aside); image sources collected."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.open, self.errors, self.sources = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources.append(dict(attrs).get("src", ""))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


MISTAKES_BLOCK = re.compile(r"(<!-- mistakes:start -->\n)(.*?)(<!-- mistakes:end -->)", re.S)


def mistakes_table() -> str:
    """The table of named mistakes docs/class.md holds: every id the reader knows, with what it means."""
    rows = ["| id | the hint it names |", "| --- | --- |"]
    rows += [f"| `{name}` | {report.meaning(name).replace('|', '&#124;')} |" for name in mistakes.hints()]
    return "\n".join(rows) + "\n"


def test_the_docs_list_every_named_mistake():
    """Does docs/class.md list exactly the mistakes the reader names, each with its hint's text? (Rewrite the table
    with AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 after a hint is added, renamed or reworded.)"""
    import os

    page = Path(__file__).resolve().parents[1] / "docs" / "class.md"
    text = page.read_text()
    found = MISTAKES_BLOCK.search(text)
    assert found, "docs/class.md lost its <!-- mistakes:start --> ... <!-- mistakes:end --> block"
    if os.environ.get("AUTOGRAD_LAB_UPDATE_SNAPSHOTS") == "1":
        page.write_text(MISTAKES_BLOCK.sub(lambda m: m[1] + mistakes_table() + m[3], text))
        text = page.read_text()
        found = MISTAKES_BLOCK.search(text)
    assert found[2] == mistakes_table()
