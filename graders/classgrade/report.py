"""What a class got wrong: the class report, from the gradebook's records and each student's results.json.

Per task: how many students have its full points, the recognised mistakes (graders.results.mistakes: the hint
templates the messages name) with their counts and students, the failures no hint names grouped by their
message's first line, and the rungs that failed; then the distribution of totals, the time per student and the
students whose submission was not graded. Written as class.md (Markdown) and class.html (one self-contained page:
its pictures inline, no script, no network, readable without colour). Student names and messages come from
students: every one is escaped for the format it lands in.
"""

from __future__ import annotations

import base64
import html
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from graders import messages as msg
from graders.classgrade.gradebook import Record
from graders.results import mistakes
from graders.results.plain import safe
from graders.tasks import BY_ID

MAX_REASON = 140  # characters of a message's first line kept to group unrecognised failures
MAX_NAMES = 30  # students named per line of the report; the count says how many more
BINS = 10  # bars of the distribution of totals


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


@dataclass
class ClassReport:
    """The whole report's data: what class.md and class.html show."""
    students: int
    graded: list[Record]
    not_graded: list[Record]
    tasks: list[TaskSummary]
    max_score: float


def _reason(task: str, test: dict) -> str:
    """A failed test's message's first line without its "Task X.Y (title): " head, capped."""
    first = (test.get("output") or "").splitlines()[0] if test.get("output") else ""
    first = first.removeprefix(f"Task {task} ({BY_ID[task].title}): ")
    return first if len(first) <= MAX_REASON else first[:MAX_REASON - 1] + "…"


def _tests(out: Path, student: str) -> list[dict]:
    """The tests of a student's results.json (none where it is missing or unreadable)."""
    try:
        result = json.loads((out / student / "results.json").read_text())
    except (OSError, ValueError):
        return []
    tests = result.get("tests") if isinstance(result, dict) else None
    return [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []


def build(out: Path, records: list[Record], task_ids: tuple[str, ...],
          course_points: dict[str, int] | None = None) -> ClassReport:
    """The report of the class whose records are ``records``, each student's results.json read from ``out``;
    ``course_points``: each task's points in the course (None: the task table's)."""
    def most(task: str) -> int:
        return course_points[task] if course_points and task in course_points else BY_ID[task].points

    graded = [r for r in records if r.graded]
    summaries = {t: TaskSummary(t) for t in task_ids if most(t) > 0}
    for record in graded:
        tests = {str(t.get("number")): t for t in _tests(out, record.student)}
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
            reading = mistakes.Reading(extra["rung"], tuple(extra.get("mistakes", ()))) if "rung" in extra \
                else mistakes.read(test.get("output") or "")
            summary.rungs[reading.rung] += 1
            if reading.mistake is not None:
                summary.mistakes.setdefault(reading.mistake, []).append(record.student)
            else:
                summary.unrecognised.setdefault(_reason(task, test) or extra.get("status", "no result"), []).append(
                    record.student)
    max_score = sum(most(t) for t in task_ids)
    return ClassReport(len(records), graded, [r for r in records if not r.graded], list(summaries.values()),
                       max_score)


def meaning(mistake: str) -> str:
    """What a mistake id means: its hint's text, each blank of the template shown as an ellipsis."""
    return re.sub(r"\{[^{}]*\}", "…", mistakes.templates().get(mistake, mistake))


def distribution(report: ClassReport) -> list[tuple[str, int]]:
    """The totals of the graded students in BINS equal ranges of the maximum: (range, count)."""
    width = report.max_score / BINS if report.max_score else 1.0
    counts = [0] * BINS
    for record in report.graded:
        counts[min(BINS - 1, int(record.total // width))] += 1
    return [(f"{i * width:g}-{(i + 1) * width:g}", n) for i, n in enumerate(counts)]


def _names(students: list[str]) -> list[str]:
    more = len(students) - MAX_NAMES
    return students[:MAX_NAMES] + ([f"and {more} more"] if more > 0 else [])


# ----- Markdown -----

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>~&])")


def md(text: str) -> str:
    """Text from a student (a name, a message) as Markdown that shows it as it is, inside a line (never at its
    start): one line, and each character that could open emphasis, a link, a tag, an entity, a table cell or a
    code span backslash-escaped (CommonMark); the rest (a dot, a bracket) means nothing there."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(safe(text).split()))


def markdown(report: ClassReport, pictures: dict[str, str] | None = None) -> str:
    """class.md: the report in Markdown, linking ``pictures`` (file name beside class.md -> title)."""
    seconds = [r.seconds for r in report.graded]
    lines = [msg.CLASS_REPORT_TITLE, "", msg.CLASS_SUMMARY.format(students=report.students, graded=len(report.graded),
                                                                   others=len(report.not_graded)), ""]
    if seconds:
        lines += [msg.CLASS_REPORT_TIME.format(median=statistics.median(seconds), most=max(seconds)), ""]
    for name, title in (pictures or {}).items():
        lines += [f"![{title}]({name})", ""]
    lines += ["## " + msg.CLASS_REPORT_TASKS, "", "| task | title | full points | partial | not attempted | failed |",
              "| --- | --- | ---: | ---: | ---: | ---: |"]
    for s in report.tasks:
        failed = sum(s.rungs.values())
        lines.append(f"| {s.task} | {md(BY_ID[s.task].title)} | {s.full}/{s.graded} | {len(s.partial)} | "
                     f"{len(s.not_attempted)} | {failed} |")
    for s in report.tasks:
        if not (s.mistakes or s.unrecognised):
            continue
        lines += ["", f"### {s.task} {md(BY_ID[s.task].title)}", "",
                  msg.CLASS_REPORT_RUNGS.format(rungs=", ".join(f"{rung} {n}" for rung, n in s.rungs.most_common()))]
        for mistake, students in sorted(s.mistakes.items(), key=lambda item: (-len(item[1]), item[0])):
            lines += ["", f"- **{len(students)}** `{mistake}`: {md(meaning(mistake))}",
                      f"  ({', '.join(md(name) for name in _names(students))})"]
        for reason, students in sorted(s.unrecognised.items(), key=lambda item: (-len(item[1]), item[0])):
            lines += ["", f"- **{len(students)}** {msg.CLASS_REPORT_UNRECOGNISED}: {md(reason)}",
                      f"  ({', '.join(md(name) for name in _names(students))})"]
    lines += ["", "## " + msg.CLASS_REPORT_TOTALS, "", "| total | students |", "| --- | ---: |"]
    lines += [f"| {span} | {n} |" for span, n in distribution(report)]
    lines += ["", "## " + msg.CLASS_REPORT_STUDENTS, "", "| student | total | status | seconds |",
              "| --- | ---: | --- | ---: |"]
    for r in sorted(report.graded + report.not_graded, key=lambda r: r.student):
        lines.append(f"| {md(r.student)} | {r.total:g} | {md(r.status)} | {r.seconds:.1f} |")
    return "\n".join(lines) + "\n"


# ----- HTML -----

STYLE = ("body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#111}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #888;padding:.2em .6em;text-align:left}"
         "td.n{text-align:right}code{font-size:90%}img{max-width:100%}")


def _h(text: str) -> str:
    return html.escape(safe(str(text)), quote=True)


def _row(cells, numeric=()) -> str:
    return "<tr>" + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
                            for i, c in enumerate(cells)) + "</tr>"


def page(report: ClassReport, pictures: dict[str, bytes]) -> str:
    """class.html: the report as one page, ``pictures`` (title -> PNG bytes) inline as data: URLs."""
    seconds = [r.seconds for r in report.graded]
    title = _h(msg.CLASS_REPORT_TITLE.lstrip("# "))
    summary = msg.CLASS_SUMMARY.format(students=report.students, graded=len(report.graded),
                                       others=len(report.not_graded))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{title}</title><style>{STYLE}</style></head><body>", f"<h1>{title}</h1>", f"<p>{_h(summary)}</p>"]
    if seconds:
        out.append(f"<p>{_h(msg.CLASS_REPORT_TIME.format(median=statistics.median(seconds), most=max(seconds)))}</p>")
    for title, png in pictures.items():
        out.append(f'<figure><img alt="{_h(title)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
                   f"<figcaption>{_h(title)}</figcaption></figure>")
    out += [f"<h2>{_h(msg.CLASS_REPORT_TASKS)}</h2>", "<table><thead><tr><th>task</th><th>title</th>"
            "<th>full points</th><th>partial</th><th>not attempted</th><th>failed</th></tr></thead><tbody>"]
    for s in report.tasks:
        out.append(_row([_h(s.task), _h(BY_ID[s.task].title), f"{s.full}/{s.graded}", len(s.partial),
                         len(s.not_attempted), sum(s.rungs.values())], numeric=(2, 3, 4, 5)))
    out.append("</tbody></table>")
    for s in report.tasks:
        if not (s.mistakes or s.unrecognised):
            continue
        rungs = ", ".join(f"{rung} {n}" for rung, n in s.rungs.most_common())
        out += [f"<h3>{_h(s.task)} {_h(BY_ID[s.task].title)}</h3>",
                f"<p>{_h(msg.CLASS_REPORT_RUNGS.format(rungs=rungs))}</p>", "<ul>"]
        for mistake, students in sorted(s.mistakes.items(), key=lambda item: (-len(item[1]), item[0])):
            out.append(f"<li><strong>{len(students)}</strong> <code>{_h(mistake)}</code>: {_h(meaning(mistake))}"
                       f"<br>{_h(', '.join(_names(students)))}</li>")
        for reason, students in sorted(s.unrecognised.items(), key=lambda item: (-len(item[1]), item[0])):
            out.append(f"<li><strong>{len(students)}</strong> {_h(msg.CLASS_REPORT_UNRECOGNISED)}: {_h(reason)}"
                       f"<br>{_h(', '.join(_names(students)))}</li>")
        out.append("</ul>")
    out += [f"<h2>{_h(msg.CLASS_REPORT_TOTALS)}</h2>",
            "<table><thead><tr><th>total</th><th>students</th></tr></thead><tbody>"]
    out += [_row([_h(span), n], numeric=(1,)) for span, n in distribution(report)]
    out += ["</tbody></table>", f"<h2>{_h(msg.CLASS_REPORT_STUDENTS)}</h2>",
            "<table><thead><tr><th>student</th><th>total</th><th>status</th><th>seconds</th></tr></thead><tbody>"]
    for r in sorted(report.graded + report.not_graded, key=lambda r: r.student):
        out.append(_row([_h(r.student), f"{r.total:g}", _h(r.status), f"{r.seconds:.1f}"], numeric=(1, 3)))
    out += ["</tbody></table>", "</body></html>", ""]
    return "\n".join(out)
