"""Does the class report tell an instructor what the class got wrong (graders/classgrade/report.py)?

A class is built from the corpus: correct students, students who each planted one known mistake (some the same
one), a malformed submission, one whose code ends the process at import and one whose tensor.py raises at import.
grade-all writes class.md and class.html; the report must say each planted mistake in words (never its id) with
the right count and the right students, a file that does not import once for its student, and the page must be one
self-contained, well-formed HTML document rendered from its template with every value escaped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from corpus import BY_NAME, WRONG, make_submission, unpin_lines
from markupsafe import escape

from graders import messages as msg
from graders.classgrade import batch, report
from graders.classgrade.gradebook import Record
from graders.paths import SOLUTIONS
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
    make_submission(subs, "kim", [("tensor.py", future, future + 'raise ValueError("half-finished")\n')])
    batch.grade_all(subs, root / "out", jobs=2, settings=batch.Settings(tasks=TASKS))
    return root / "out"


def said(mistake: str) -> str:
    """How class.md says a mistake: its sentence, as Markdown text."""
    return report.md(report.sentence(mistake))


@pytest.mark.slow
def test_the_report_names_each_planted_mistake_with_its_count_and_students(graded_class):
    """Does class.md count each planted mistake once per student who made it, naming exactly those students, under
    the task it belongs to, and count the full points of every task?"""
    text = (graded_class / "class.md").read_text()
    assert "HINT_" not in text and "HINT_" not in (graded_class / "class.html").read_text()
    for entry, (task, mistake) in EXPECTED.items():
        students = sorted(s for s, e in PLANTED.items() if e == entry)
        section = text.split(f"### {task} ", 1)[1].split("\n### ", 1)[0]
        assert f"- **{len(students)}** {said(mistake)}\n" in section, section
        named = re.search(rf"{re.escape(said(mistake))}\n  \((.*)\)", section)[1]
        assert sorted(named.split(", ")) == students
    for task in TASKS:
        lost = sum(1 for e in PLANTED.values() if e is not None and EXPECTED[e][0] == task)
        # ivy's and kim's code never imports: they have no points of tensor.py's tasks, and all of 5.2's (train.py
        # is theirs)
        crashed = 2 if task in ("1.4", "2.2") else 0
        graded = len(PLANTED) + 2
        full = graded - lost - crashed
        assert f"| {task} | " in text and f"| {full}/{graded} |" in text.split(f"| {task} | ", 1)[1].split("\n")[0]
    imports = text.split("## " + msg.CLASS_REPORT_IMPORTS, 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^- \*\*(\w+)\*\*: (.*)$", imports, re.M) == [
        ("kim", "tensor.py does not import (ValueError: half-finished): 2 task(s) lost, 1.4, 2.2")]
    for task in ("1.4", "2.2"):
        section = text.split(f"### {task} ", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        assert "kim" not in section and msg.CLASS_REPORT_NOT_IMPORTING.format(count=1) in section
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
        assert str(escape(report.sentence(mistake))) in page
    assert "HINT_" not in page


# The picture of class.html in docs/class.md: the top of the page, as the browser drew it.
DOCS_PICTURE = DOCS_CLASS.parent / "class-report.png"
PICTURE_WIDTH, PICTURE_HEIGHT, PICTURE_SCALE = 1000, 1500, 0.8
GREY = re.compile(r"rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)")
# Every colour the page's elements are drawn in: text, background, borders.
COLOURS = ("[...document.querySelectorAll('*')].flatMap(e => { const s = getComputedStyle(e); "
           "return [s.color, s.backgroundColor, s.borderTopColor, s.borderLeftColor]; })")


@pytest.mark.slow
def test_the_class_page_renders_in_a_browser_without_errors_and_reads_without_colour(graded_class):
    """Loaded in headless Chromium: no console error or warning, no exception, no request but the page itself (its
    pictures are inline), every picture decoded, a section per task that lost points; and every colour the page is
    drawn in a grey, so nothing is said by colour alone."""
    import browser

    if browser.find() is None:
        pytest.skip("no Chromium on PATH (.ci/run installs it: apt-get install chromium)")
    with browser.Browser() as chromium:
        page = chromium.open(graded_class / "class.html")
        assert page.errors == []
        assert [url for url in page.requests if not url.startswith("data:image/png;base64,")] == [
            (graded_class / "class.html").resolve().as_uri()]
        images = chromium.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)")
        assert all(images) and len(images) == len(re.findall("<img ", (graded_class / "class.html").read_text()))
        headings = chromium.evaluate("[...document.querySelectorAll('h3:not([id])')].map(h => h.textContent)")
        assert [h.split()[0] for h in headings] == sorted({task for task, _ in EXPECTED.values()} | {"1.4", "2.2"})
        colours = set(chromium.evaluate(COLOURS))
        picture = chromium.screenshot(PICTURE_WIDTH, min(PICTURE_HEIGHT, chromium.evaluate(
            "document.documentElement.scrollHeight")), scale=PICTURE_SCALE)
    if os.environ.get("AUTOGRAD_LAB_UPDATE_SNAPSHOTS") == "1":
        DOCS_PICTURE.write_bytes(picture)
    assert DOCS_PICTURE.is_file() and DOCS_PICTURE.stat().st_size < 300_000, \
        "write docs/class-report.png: AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 pytest tests/test_class_report.py -k browser"
    for colour in colours:
        r, g, b, alpha = GREY.fullmatch(colour).groups()
        assert r == g == b or alpha == "0", f"{colour}: a colour that is not a grey"


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


def test_every_named_mistake_has_its_own_sentence_of_what_the_students_did():
    """Does every mistake the reader names have a sentence in messages.CLASS_MISTAKES, or for the hint of an op's
    form that has none, one made from the op (an op added to the registry), no two the same, none an id, so that the
    page says each in words and a sentence reads back to one mistake?"""
    worded = {**msg.CLASS_MISTAKES, **report.op_rule_sentences()}
    assert set(worded) == set(mistakes.hints())
    assert not set(msg.CLASS_MISTAKES) & set(report.op_rule_sentences())
    sentences = list(worded.values())
    assert len(set(sentences)) == len(sentences)
    assert not [s for s in sentences if "HINT_" in s or not s or s[0].isupper()]
    assert all(report.sentence(mistake) == worded[mistake] for mistake in mistakes.hints())


def test_the_hint_of_an_ops_form_without_a_sentence_is_said_as_its_rule_wrong(monkeypatch):
    """Does the hint of an op's form that messages.CLASS_MISTAKES does not word (an op added to the registry) read as
    that op's rule wrong, not as its hint's text?"""
    report.op_rule_sentences.cache_clear()
    monkeypatch.delitem(msg.CLASS_MISTAKES, "HINT_TANH")
    try:
        assert report.sentence("HINT_TANH") == "got tanh's rule wrong in a way no known mistake matches"
    finally:
        report.op_rule_sentences.cache_clear()


def results_json(*tests: dict) -> str:
    return json.dumps({"score": 0.0, "tests": list(tests)})


def failed(task: str, output: str, **extra) -> dict:
    return {"number": task, "name": f"{task} {BY_ID[task].title}", "score": 0.0, "max_score": BY_ID[task].points,
            "output": output, "status": "failed", "extra_data": {"status": "failed", **extra}}


def test_a_file_that_does_not_import_is_one_line_for_its_student_and_a_wait_is_told_apart(tmp_path):
    """Fabricated results: kim's optim.py stops at import (a syntax error) and costs her 3.1 and 3.2; lee's 3.1 timed
    out without computing (the rung a waited verdict carries). Is kim one line under "Files that do not import",
    each task only counting her, and is lee's failure said to be a wait, apart from a timeout spent computing?"""
    def raised(task: str, error: str, where: str) -> str:
        return msg.lines(msg.RAISED.format(task=task, title=BY_ID[task].title, doing="calling step()", error=error),
                         msg.RAISED_AT.format(where=where))

    out = tmp_path / "out"
    files = {"kim": results_json(failed("3.1", raised("3.1", "SyntaxError: invalid syntax", "optim.py:7"),
                                        rung="errors", mistakes=[]),
                                 failed("3.2", raised("3.2", "SyntaxError: invalid syntax", "optim.py:7"),
                                        rung="errors", mistakes=[])),
             "lee": results_json(failed("3.1", f"Task 3.1 ({BY_ID['3.1'].title}): no answer within 10 s while calling "
                                               "step()", rung=report.WAITED, mistakes=[]),
                                 failed("3.2", f"Task 3.2 ({BY_ID['3.2'].title}): no answer within 10 s while calling "
                                               "step()", rung="time", mistakes=[]))}
    for student, text in files.items():
        (out / "students" / student).mkdir(parents=True)
        (out / "students" / student / "results.json").write_text(text)
    records = [Record(student, "graded", 0.0, {"3.1": 0.0, "3.2": 0.0}, 1.0) for student in files]
    data = report.build(out, records, ("3.1", "3.2"))
    assert [(f.student, f.file, f.tasks) for f in data.import_failures] == [("kim", "optim.py", ["3.1", "3.2"])]
    text = report.markdown(data)
    assert text.count("kim") == 2  # the line under the files that do not import, and the table of students
    assert msg.CLASS_REPORT_IMPORT.format(file="optim.py", reason="SyntaxError: invalid syntax", count=2,
                                          tasks="3.1, 3.2") in text
    section = text.split("### 3.1 ", 1)[1].split("\n### ", 1)[0]
    assert msg.CLASS_RUNGS[report.WAITED] in section and "timed out without computing: no answer within 10 s" in section
    other = text.split("### 3.2 ", 1)[1].split("\n## ", 1)[0]
    assert msg.CLASS_RUNGS["time"] in other and "without computing" not in other
    page = report.page(data, {})
    assert "timed out without computing: no answer within 10 s" in page and page.count("kim") == 2


def test_a_message_is_read_back_by_the_templates_that_made_it():
    """Does the reader find the rung and the named mistake of a message made of a head and a hint template, and
    report an unknown message as "other" with no mistake?"""
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
    rows = ["| id | what the students did, as the class report says it | the hint it names |", "| --- | --- | --- |"]
    def cell(text: str) -> str:
        return text.replace("|", "&#124;")

    rows += [f"| `{name}` | {cell(report.sentence(name))} | {cell(report.meaning(name))} |"
             for name in mistakes.hints()]
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


# ----- the whole corpus as one class -----

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
CLASS_TABLE = SNAPSHOTS / "class_mistakes.tsv"
CORRECT = Path(__file__).resolve().parent / "corpus_correct"
UNRECOGNISED = "unrecognised"
TABLE_HEAD = ("# What the class report must name for each task a corpus entry (tests/corpus.py) loses: the mistake\n"
              "# id its pinned message (tests/snapshots/<entry>__<task>.txt) holds, or unrecognised. Rewrite with\n"
              "# AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 pytest tests/test_class_report.py -k table, then review the diff.\n")


def pinned(entry: str, task: str) -> str:
    """The message ``entry`` got on ``task``, as its snapshot pins it, read back as a grade's message."""
    return unpin_lines((SNAPSHOTS / f"{entry}__{task}.txt").read_text())


def class_table() -> str:
    """The table read from the pinned messages: one line per (entry, task it loses), tab-separated."""
    lines = [TABLE_HEAD.rstrip("\n"), "entry\ttask\tmistake"]
    for entry in WRONG:
        for task in entry.loses:
            reading = mistakes.read(pinned(entry.name, task))
            lines.append(f"{entry.name}\t{task}\t{reading.mistake or UNRECOGNISED}")
    return "\n".join(lines) + "\n"


def read_class_table() -> dict[tuple[str, str], str]:
    """(entry, task) -> the mistake id, or UNRECOGNISED, from the checked-in table."""
    rows = [line.split("\t") for line in CLASS_TABLE.read_text().splitlines() if line and not line.startswith("#")]
    return {(entry, task): mistake for entry, task, mistake in rows[1:]}


def test_the_class_table_is_what_each_entrys_pinned_message_names():
    """Does tests/snapshots/class_mistakes.tsv hold, for every task every corpus entry loses, the mistake its pinned
    message names? (It is what the whole-corpus class test expects the report to say; rewrite it with
    AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 when an entry or a message changes, and review the diff.)"""
    if os.environ.get("AUTOGRAD_LAB_UPDATE_SNAPSHOTS") == "1":
        CLASS_TABLE.write_text(class_table())
    assert CLASS_TABLE.read_text() == class_table()
    assert len(read_class_table()) == sum(len(e.loses) for e in WRONG)


# Entries handed in by two students each, so that a count above one is checked.
TWICE = ("mean_forgets_to_divide", "no_grad_without_finally", "engine_breadth_first")
# The tasks graded: every task some entry loses (a whole-stack task among them: it runs the student's own engine,
# so a tensor.py that cannot be imported loses it too).
CLASS_TASKS = tuple(dict.fromkeys(t for t in BY_ID if any(t in e.loses for e in WRONG)))
ENTRIES = {entry.name: entry for entry in WRONG}
CRASHED = "zz-crashed"


def student_of(entry: str, copy: int = 1) -> str:
    """The folder name of a student who made ``entry`` (dashes: nothing Markdown escapes)."""
    return entry.replace("_", "-") + ("" if copy == 1 else f"-{copy}")


def planted_class(subs: Path) -> dict[str, str | None]:
    """The class in ``subs``: student -> the entry they made (None: a correct style). Besides them, a student who
    handed in only a note (nothing to grade) and one whose tensor.py ends its process at import."""
    planted: dict[str, str | None] = {}
    for style in sorted(p for p in CORRECT.iterdir() if (p / "STYLE.txt").is_file())[:3]:
        folder = subs / f"style-{style.name.replace('_', '-')}"
        folder.mkdir(parents=True)
        for path in [*SOLUTIONS.glob("*.py"), *style.glob("*.py")]:
            shutil.copy(path, folder / path.name)
        planted[folder.name] = None
    for entry in WRONG:
        for copy in range(1, 3 if entry.name in TWICE else 2):
            make_submission(subs, student_of(entry.name, copy), [entry])
            planted[student_of(entry.name, copy)] = entry.name
    (subs / "zz-no-code").mkdir()
    (subs / "zz-no-code" / "notes.txt").write_text("I did not get to it\n")
    future = "from __future__ import annotations\n"
    make_submission(subs, CRASHED, [("tensor.py", future, future + "import os; os._exit(3)\n")])
    return planted


ITEM = re.compile(r"^- \*\*(\d+)\*\* (.*)\n  \((.*)\)$", re.M)


def named(text: str, task: str) -> dict[str, list[str]]:
    """What class.md names under ``task``: mistake id (or UNRECOGNISED) -> the students, over all its lines (a
    sentence read back to its id: each id has its own sentence)."""
    ids = {said(mistake): mistake for mistake in mistakes.hints()}
    found: dict[str, list[str]] = {}
    if f"\n### {task} " not in text:
        return found
    section = text.split(f"\n### {task} ", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    for count, line, names in ITEM.findall(section):
        students = names.split(", ")
        assert len(students) == int(count), f"{task}: {count} students counted, {len(students)} named"
        mistake = UNRECOGNISED if line.startswith(msg.CLASS_REPORT_UNRECOGNISED + ": ") else ids[line]
        found.setdefault(mistake, []).extend(students)
    return found


@pytest.mark.long
def test_a_class_of_the_whole_corpus_gets_each_planted_mistake_named_with_its_students(tmp_path):
    """Three correct styles, every known-wrong entry (three of them by two students), a student with nothing to
    grade and one whose code ends its process, graded by grade-all --jobs 2: does class.md name, under each task,
    each mistake of tests/snapshots/class_mistakes.tsv with exactly the students who made it (and the unrecognised
    ones under "no named mistake"), and nothing else (but, under a task whose lesson's run uses the whole stack, the
    students whose mistake in another file surfaced there, with no named mistake); say each entry whose file does not
    import once, under the
    files that do not import, rather than under its tasks; and list the student with nothing to grade as not
    graded?"""
    planted = planted_class(tmp_path / "subs")
    table = read_class_table()
    broken = {entry for (entry, task), mistake in table.items() if mistake == UNRECOGNISED
              and mistakes.import_failure(pinned(entry, task)) is not None}
    start = time.monotonic()
    summary = batch.grade_all(tmp_path / "subs", tmp_path / "out", jobs=2, settings=batch.Settings(tasks=CLASS_TASKS))
    seconds = time.monotonic() - start
    print(f"graded {len(planted) + 2} students on {len(CLASS_TASKS)} tasks in {seconds:.0f} s")
    assert summary.failed == 1  # the note: nothing to grade
    text = (tmp_path / "out" / "class.md").read_text()
    tensor = set(TASKS_OF_TENSOR)
    for task in CLASS_TASKS:
        expected: dict[str, list[str]] = {}
        for student, entry in planted.items():
            if entry is not None and (entry, task) in table and entry not in broken:
                expected.setdefault(table[entry, task], []).append(student)
        if task in tensor or BY_ID[task].whole_stack:  # the crashed student loses every task that runs tensor.py
            expected.setdefault(UNRECOGNISED, []).append(CRASHED)
        got = named(text, task)
        if BY_ID[task].whole_stack:  # the lesson's run uses every file: another file's mistake may surface here too
            others = {student for student, entry in planted.items()
                      if entry is not None and ENTRIES[entry].file != f"{BY_ID[task].module}.py"}
            surfaced = [s for s in got.get(UNRECOGNISED, []) if s in others and s not in expected.get(UNRECOGNISED, [])]
            got[UNRECOGNISED] = [s for s in got.get(UNRECOGNISED, []) if s not in surfaced]
            got = {k: v for k, v in got.items() if v}
        assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in expected.items()}, task
    assert broken, "the corpus has no entry whose file does not import: this test no longer checks that part"
    imports = text.split("## " + msg.CLASS_REPORT_IMPORTS, 1)[1].split("\n## ", 1)[0]
    said = re.findall(r"^- \*\*([^*]+)\*\*: ", imports, re.M)
    assert sorted(said) == sorted(student for student, entry in planted.items() if entry in broken)
    students = text.split("## " + msg.CLASS_REPORT_STUDENTS, 1)[1]
    assert re.search(r"^\| zz-no-code \| 0 \| malformed: ", students, re.M)
    assert f"{len(planted) + 2} student(s): {len(planted) + 1} graded, 1 not graded" in text  # + the crashed one


TASKS_OF_TENSOR = tuple(t.id for t in BY_ID.values() if t.module == "tensor")
