"""What a class got wrong: the class report, from the gradebook's records and each student's results.json.

Per task: how many students have its full points, the recognised mistakes (graders.results.mistakes: the hint
templates the messages name), each said as what the students did, with their counts and students; the failures no
hint names grouped by their message's first line, and the rungs that failed, in words. A file that does not import
is one line for its student, not one per task it holds. Then the pairs of students whose code is similar
(graders.classgrade.similarity: a list to look at, never a grade), the distribution of totals, the time per
student and the students whose submission was not graded. Rendered by Jinja templates (graders/templates/report/)
as class.md (Markdown) and class.html (one self-contained page: its pictures inline, no script, no network,
readable without colour). Student names, messages and code come from students: the HTML template escapes every
value (Jinja's autoescape), the Markdown one every value but the code blocks made here, whose fences no line of
the code can close.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from graders import messages as msg
from graders import ops
from graders.classgrade import similarity
from graders.classgrade.gradebook import CODE, Record, student_dir
from graders.paths import TEMPLATES
from graders.results import mistakes
from graders.results.plain import safe
from graders.tasks import BY_ID

MAX_REASON = 140  # characters of a message's first line kept to group unrecognised failures
MAX_NAMES = 30  # students named per line of the report; the count says how many more
BINS = 10  # bars of the distribution of totals
MAX_RESULT_BYTES = 4 * 2**20  # a results.json read for the report
MAX_PAIRS_SHOWN = 10  # similar pairs shown side by side; the others are listed
MAX_FILES_SHOWN = 2  # files of a pair shown side by side: those with the most of their own code shared
SIMILARITY_CACHE = ".similarity.json"  # in OUT_DIR: the pairs of the code compared last (graders.classgrade.similarity)
# The rung of a timeout where the worker waited without computing (it slept, or blocked on a read): a verdict of wall
# time alone, which the report says in those words, apart from a timeout spent computing.
WAITED = mistakes.IDLE


@dataclass
class TaskSummary:
    """One task across the class: who has its points, which mistakes were made, and by whom."""
    task: str
    graded: int = 0
    full: int = 0
    partial: list[str] = field(default_factory=list)
    not_attempted: list[str] = field(default_factory=list)
    mistakes: dict[str, list[str]] = field(default_factory=dict)  # mistake id -> students
    unrecognised: dict[str, list[str]] = field(default_factory=dict)  # first line of the message -> students
    rungs: Counter = field(default_factory=Counter)
    not_importing: list[str] = field(default_factory=list)  # students whose file of this task does not import


@dataclass
class ImportFailure:
    """A student's file that does not import: the file, the first line of why, and the tasks it cost them."""
    student: str
    file: str
    reason: str
    tasks: list[str] = field(default_factory=list)


@dataclass
class ClassReport:
    """The whole report's data: what class.md and class.html show."""
    students: int
    graded: list[Record]
    not_graded: list[Record]
    tasks: list[TaskSummary]
    max_score: float
    import_failures: list[ImportFailure] = field(default_factory=list)
    pairs: list[similarity.Pair] = field(default_factory=list)
    compared: int = 0  # students whose code the similarity report compared
    skipped: str = ""  # why the similarity report was not made, where it was not


def _reason(task: str, output: str) -> str:
    """A failed test's message's first line without its "Task X.Y (title): " head, capped."""
    first = output.splitlines()[0] if output else ""
    first = first.removeprefix(f"Task {task} ({BY_ID[task].title}): ")
    return first if len(first) <= MAX_REASON else first[:MAX_REASON - 1] + "…"


def _tests(out: Path, student: str) -> list[dict]:
    """The tests of a student's results.json (none where it is missing, unreadable or not one)."""
    try:
        with open(student_dir(out, student) / "results.json", "rb") as f:
            result = json.loads(f.read(MAX_RESULT_BYTES))
    except (OSError, ValueError, RecursionError):
        return []
    tests = result.get("tests") if isinstance(result, dict) else None
    return [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []


def check_result(path: Path) -> None:
    """Refuse (ValueError naming ``path`` and the test) a results.json that is not what grade-all writes: a JSON object
    whose tests each have a task id, a number for a score, text for an output, and extra_data whose status and rung
    are text and whose mistakes are a list of text. merge calls it on every shard's student."""
    def refuse(problem: str) -> ValueError:
        return ValueError(msg.MERGE_BAD_FILE.format(path=path, problem=msg.MERGE_RESULT.format(problem=problem)))

    try:
        with open(path, "rb") as f:
            result = json.loads(f.read(MAX_RESULT_BYTES + 1))
    except (OSError, ValueError, RecursionError) as error:
        raise refuse(str(error)[:200]) from None
    if not isinstance(result, dict) or not isinstance(result.get("tests", []), list):
        raise refuse(msg.MERGE_RESULT_SHAPE)
    for index, test in enumerate(result.get("tests", [])):
        problem = _test_problem(test)
        if problem is not None:
            raise refuse(msg.MERGE_RESULT_TEST.format(index=index, problem=problem))


def _test_problem(test) -> str | None:
    """What is wrong with one test of a results.json, or None."""
    if not isinstance(test, dict):
        return "not an object"
    if not isinstance(test.get("number"), str) or test["number"] not in BY_ID:
        return "its number is not a task id"
    if not isinstance(test.get("score", 0), (int, float)) or isinstance(test.get("score"), bool):
        return "its score is not a number"
    if not isinstance(test.get("output", ""), str):
        return "its output is not text"
    extra = test.get("extra_data", {})
    if not isinstance(extra, dict):
        return "its extra_data is not an object"
    for name in ("status", "rung"):
        if name in extra and not isinstance(extra[name], str):
            return f"its extra_data's {name} is not text"
    if "mistakes" in extra and not (isinstance(extra["mistakes"], list)
                                    and all(isinstance(m, str) for m in extra["mistakes"])):
        return "its extra_data's mistakes are not a list of text"
    return None


def _reading(test: dict) -> mistakes.Reading:
    """The rung and mistakes of a failed test: its extra_data's where they have their types, else read back from
    its message (a results.json of an older version, or one a shard crafted)."""
    extra = test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}
    rung, named = extra.get("rung"), extra.get("mistakes", [])
    if isinstance(rung, str) and isinstance(named, list) and all(isinstance(m, str) for m in named):
        return mistakes.Reading(rung[:40], tuple(m for m in named if m in mistakes.hints()))
    output = test.get("output")
    return mistakes.read(output if isinstance(output, str) else "")


def build(out: Path, records: list[Record], task_ids: tuple[str, ...], course_points: dict[str, int] | None = None,
          *, compare: bool = True) -> ClassReport:
    """The report of the class whose records are ``records``, each student's results.json read from ``out`` (and,
    with ``compare``, their code kept in code/ compared for similarity); ``course_points``: each task's points in the
    course (None: the task table's)."""
    def most(task: str) -> int:
        return course_points[task] if course_points and task in course_points else BY_ID[task].points

    graded = [r for r in records if r.graded]
    summaries = {t: TaskSummary(t) for t in task_ids if most(t) > 0}
    failures: list[ImportFailure] = []
    for record in graded:
        tests = {str(t.get("number")): t for t in _tests(out, record.student)}
        mine: dict[str, ImportFailure] = {}
        for task, summary in summaries.items():
            points, score = most(task), record.scores.get(task, 0.0)
            summary.graded += 1
            if score >= points:
                summary.full += 1
                continue
            test = tests.get(task, {})
            extra = test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}
            if extra.get("status") == "not attempted":
                summary.not_attempted.append(record.student)
                continue
            if score > 0:
                summary.partial.append(record.student)
            output = test.get("output") if isinstance(test.get("output"), str) else ""
            broken = mistakes.import_failure(output)
            if broken is not None:  # one line for the student under their file, not one per task
                file, why = broken
                mine.setdefault(file, ImportFailure(record.student, file, why[:MAX_REASON])).tasks.append(task)
                summary.not_importing.append(record.student)
                summary.rungs["import"] += 1
                continue
            reading = _reading(test)
            summary.rungs[reading.rung] += 1
            if reading.mistake is not None:
                summary.mistakes.setdefault(reading.mistake, []).append(record.student)
            else:
                reason = _reason(task, output) or (extra.get("status") if isinstance(extra.get("status"), str)
                                                   else "") or msg.CLASS_REPORT_NO_RESULT
                if reading.rung == WAITED:  # a verdict of wall time alone, never taken for a slow loop
                    reason = msg.CLASS_REPORT_WAITED.format(reason=reason)
                summary.unrecognised.setdefault(reason, []).append(record.student)
        failures += mine.values()
    max_score = sum(most(t) for t in task_ids)
    report = ClassReport(len(records), graded, [r for r in records if not r.graded], list(summaries.values()),
                         max_score, failures)
    if compare:
        code = {r.student: similarity.read_code(student_dir(out, r.student) / CODE) for r in graded}
        code = {student: files for student, files in code.items() if files}
        report.compared = len(code)
        try:
            report.pairs = similarity.similar_pairs(code, cache=Path(out) / SIMILARITY_CACHE)
        except ImportError as error:  # an install without copydetect (or its matplotlib): the rest of the report
            report.compared, report.skipped = 0, msg.CLASS_SIMILAR_SKIPPED.format(error=error)
    return report


def sentence(mistake: str) -> str:
    """What the students who made ``mistake`` did, in the course's words: its sentence of messages.CLASS_MISTAKES, or
    for the hint of an op's form (graders/ops.py) that has none, that the op's rule was wrong; else its hint's text
    (each blank of the template an ellipsis); never its id."""
    said = msg.CLASS_MISTAKES.get(mistake) or op_rule_sentences().get(mistake)
    if said is not None:
        return said
    return msg.CLASS_MISTAKE_HINT.format(hint=meaning(mistake))


@functools.cache
def op_rule_sentences() -> dict[str, str]:
    """The sentence of each hint of an op's form that messages.CLASS_MISTAKES does not word (an op added to the
    registry needs none of its own): the op's rule wrong in a way no known mistake matches."""
    by_text = {text: mistake for mistake, text in mistakes.templates().items()}
    found: dict[str, str] = {}
    for op in ops.OPS:
        for form in op.forms:
            mistake = by_text.get(form.hint)
            if mistake is not None and mistake not in msg.CLASS_MISTAKES:
                found.setdefault(mistake, msg.CLASS_OP_RULE.format(op=op.name))
    return found


def meaning(mistake: str) -> str:
    """What a mistake id means: its hint's text, each blank of the template shown as an ellipsis."""
    return re.sub(r"\{[^{}]*\}", "…", mistakes.templates().get(mistake, mistake))


def rung_words(rung: str) -> str:
    """A rung as the report says it (messages.CLASS_RUNGS), an unknown one as it is."""
    return msg.CLASS_RUNGS.get(rung, rung)


def distribution(report: ClassReport) -> list[tuple[str, int]]:
    """The totals of the graded students in BINS equal ranges of the maximum: (range, count)."""
    width = report.max_score / BINS if report.max_score else 1.0
    counts = [0] * BINS
    for record in report.graded:
        counts[min(BINS - 1, int(record.total // width))] += 1
    return [(f"{i * width:g}-{(i + 1) * width:g}", n) for i, n in enumerate(counts)]


def _names(students: list[str]) -> list[str]:
    more = len(students) - MAX_NAMES
    return students[:MAX_NAMES] + ([msg.CLASS_REPORT_MORE.format(count=more)] if more > 0 else [])


def _items(summary: TaskSummary) -> list[dict]:
    """The failures of a task, as the templates list them: the named mistakes (their sentence), then the unnamed
    (their message's first line), each with its count and students, the most common first."""
    items = [{"count": len(students), "text": sentence(mistake), "named": True,
              "students": ", ".join(_names(students))}
             for mistake, students in sorted(summary.mistakes.items(), key=lambda item: (-len(item[1]), item[0]))]
    items += [{"count": len(students), "text": reason, "named": False, "students": ", ".join(_names(students))}
              for reason, students in sorted(summary.unrecognised.items(), key=lambda item: (-len(item[1]), item[0]))]
    return items


def _context(report: ClassReport) -> dict:
    """What both templates show, computed once: every value a template prints is here or in ``msg``."""
    seconds = [r.seconds for r in report.graded]
    tasks = [{"id": s.task, "title": BY_ID[s.task].title, "full": s.full, "graded": s.graded,
              "partial": len(s.partial), "not_attempted": len(s.not_attempted), "failed": sum(s.rungs.values()),
              "rungs": msg.CLASS_REPORT_RUNGS.format(rungs=", ".join(
                  f"{rung_words(rung)} {n}" for rung, n in s.rungs.most_common())),
              "items": _items(s),
              "not_importing": msg.CLASS_REPORT_NOT_IMPORTING.format(count=len(s.not_importing))
              if s.not_importing else ""}
             for s in report.tasks]
    return {
        "words": {"tasks": msg.CLASS_REPORT_TASKS, "unrecognised": msg.CLASS_REPORT_UNRECOGNISED,
                  "imports": msg.CLASS_REPORT_IMPORTS, "imports_intro": msg.CLASS_REPORT_IMPORTS_INTRO,
                  "similar": msg.CLASS_SIMILAR_TITLE, "totals": msg.CLASS_REPORT_TOTALS,
                  "students": msg.CLASS_REPORT_STUDENTS},
        "summary": msg.CLASS_SUMMARY.format(students=report.students, graded=len(report.graded),
                                            others=len(report.not_graded)),
        "time": msg.CLASS_REPORT_TIME.format(median=statistics.median(seconds), most=max(seconds)) if seconds else "",
        "tasks": tasks,
        "sections": [t for t in tasks if t["items"] or t["not_importing"]],
        "imports": [{"student": f.student, "text": msg.CLASS_REPORT_IMPORT.format(
            file=f.file, reason=f.reason, count=len(f.tasks), tasks=", ".join(f.tasks))}
            for f in sorted(report.import_failures, key=lambda f: (f.file, f.student))],
        "similar": _similar(report),
        "distribution": distribution(report),
        "students": [{"name": r.student, "total": f"{r.total:g}", "status": r.status, "seconds": f"{r.seconds:.1f}"}
                     for r in sorted(report.graded + report.not_graded, key=lambda r: r.student)],
    }


def _similar(report: ClassReport) -> dict:
    """The similarity section: the sentence above it, every pair flagged (the students, the fractions, the files),
    and the side-by-side view of each file of the first MAX_PAIRS_SHOWN."""
    pairs = []
    for number, pair in enumerate(report.pairs, start=1):
        files = []
        telling = sorted(pair.files, key=lambda m: -max(m.fractions))[:MAX_FILES_SHOWN]
        for match in telling if number <= MAX_PAIRS_SHOWN else ():
            first, second = match.sides()
            files.append({"module": f"{match.module}.py", "first": first, "second": second,
                          "first_lines": _span(first), "second_lines": _span(second),
                          "first_code": _fenced(first), "second_code": _fenced(second)})
        pairs.append({"anchor": f"pair-{number}", "first": pair.first, "second": pair.second,
                      "fractions": f"{pair.fractions[0]:.0%} · {pair.fractions[1]:.0%}",
                      "modules": ", ".join(f"{m.module}.py" for m in pair.files),
                      "text": msg.CLASS_SIMILAR_PAIR.format(first=pair.fractions[0], second=pair.fractions[1],
                                                            files=", ".join(f"{m.module}.py" for m in pair.files)),
                      "files": files})
    more = len(report.pairs) - MAX_PAIRS_SHOWN
    intro = report.skipped or msg.CLASS_SIMILAR_INTRO.format(compared=report.compared, flagged=len(report.pairs),
                                                             fraction=similarity.FLAGGED)
    return {"intro": intro,
            "more": msg.CLASS_SIMILAR_MORE.format(shown=MAX_PAIRS_SHOWN, count=more) if more > 0 else "",
            "pairs": pairs}


def _span(side: similarity.Side) -> str:
    return msg.CLASS_SIMILAR_LINES.format(first=side.first, last=side.last)


class Code(str):
    """Markdown made here, not text from a student: the Markdown template prints it as it is."""


def _fenced(side: similarity.Side) -> Code:
    """The shown lines of one side as a fenced code block, its fence longer than any run of backticks in them (so
    no line of the student's can close it), a gap of lines left out as an ellipsis line."""
    lines = ["…" if line is None else f"{line[0]:>4}  " + "".join(text for text, _ in line[1])
             for line in side.lines]
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return Code("\n".join([fence + "python", *lines, fence]))


# ----- Markdown -----

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>~&])")


def md(text: str) -> str:
    """Text from a student (a name, a message) as Markdown that shows it as it is, inside a line (never at its
    start): one line, and each character that could open emphasis, a link, a tag, an entity, a table cell
    or a code span backslash-escaped (CommonMark); the rest (a dot, a bracket) means nothing there."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(safe(text).split()))


def _markdown_value(value) -> str:
    """How the Markdown template prints a value: code blocks made here as they are, every other value as text."""
    if isinstance(value, Code):
        return value
    return md(str(value))


def _html_value(value):
    """How the page prints a value before Jinja escapes it: text made ``safe`` (no character a browser may not show);
    what Jinja has escaped already (a filter's Markup) as it is."""
    from markupsafe import Markup

    return safe(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _environment(kind: str):
    import jinja2

    if kind == "html":
        return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES / "report"), autoescape=True,
                                  finalize=_html_value, undefined=jinja2.StrictUndefined, trim_blocks=True,
                                  lstrip_blocks=True)
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES / "report"), autoescape=False,
                              finalize=_markdown_value, undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)


def markdown(report: ClassReport, pictures: dict[str, str] | None = None) -> str:
    """class.md: the report in Markdown, linking ``pictures`` (file name beside class.md -> title)."""
    template = _environment("markdown").get_template("class.md.j2")
    linked = [(Code(name), title) for name, title in (pictures or {}).items()]
    return template.render(**_context(report), pictures=linked, title=Code(msg.CLASS_REPORT_TITLE))


# ----- HTML -----

STYLE = ("body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#111}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #888;padding:.2em .6em;text-align:left}"
         "td.n{text-align:right}code{font-size:90%}img{max-width:100%}"
         "table.code{table-layout:fixed;width:100%}table.code td{vertical-align:top;width:50%}"
         "pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-size:85%}"
         "mark{background:#ddd;color:#000;font-weight:bold}a{color:#111}")


def page(report: ClassReport, pictures: dict[str, bytes]) -> str:
    """class.html: the report as one page, ``pictures`` (title -> PNG bytes) inline as data: URLs."""
    template = _environment("html").get_template("class.html.j2")
    inline = [(title, "data:image/png;base64," + base64.b64encode(png).decode()) for title, png in pictures.items()]
    return template.render(**_context(report), pictures=inline, style=STYLE,
                           title=msg.CLASS_REPORT_TITLE.lstrip("# "))
