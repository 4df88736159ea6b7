"""Grade a class: every submission in a folder, by a pool of judge processes, into one gradebook.

    autograd-lab grade-all SUBMISSIONS_DIR --out OUT_DIR [--jobs N] [--shard I/N] [--force] [--timeout S]

Each submission is graded by one judge of the pool (``graders.classgrade.batch_judge``),
exactly as ``autograd-lab grade`` grades it alone; the judge writes
``OUT_DIR/<student>/results.json`` (and the scorecard and its picture), then
this process writes the student's record (``grading.json``, with the content
hash) and rewrites ``grades.csv``, each atomically, as soon as the student is
done. So an interrupted batch loses nothing finished, and the next run skips
every submission whose content and grading settings are unchanged. A judge
that outlives the per-submission bound is stopped (with its worker), its row
says so, and a fresh judge takes the next submission.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graders import __version__
from graders import messages as msg
from graders.classgrade import adjustments as adjust
from graders.classgrade import gradebook, report
from graders.classgrade.gradebook import Record
from graders.classgrade.pool import DEFAULT_TIMEOUT, run_pool
from graders.classgrade.progress import Progress
from graders.isolation import sandbox
from graders.paths import graders_fingerprint
from graders.results import outputs, pictures
from graders.submission import intake

LOGS = ".logs"
STALE = ("results.json", "scorecard.md", pictures.LOSS_PNG)


@dataclass(frozen=True)
class Settings:
    """What grading depends on besides the submission: a change of any of them grades everyone again."""

    key: int | None = None
    tasks: tuple[str, ...] | None = None
    isolation: str = "auto"

    def fingerprint(self) -> str:
        """A digest of the settings, the package's version and the graders' code: a submission whose record holds
        another is graded again."""
        text = json.dumps({"key": self.key, "tasks": self.tasks, "isolation": self.isolation,
                           "version": __version__, "graders": graders_fingerprint()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4); raises ValueError for anything but I/N with 1 <= I <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(msg.BATCH_BAD_SHARD.format(text=text)) from None
    if not 1 <= index <= count:
        raise ValueError(msg.BATCH_BAD_SHARD.format(text=text))
    return index, count


def shard(submissions: list, index: int, count: int) -> list:
    """The index-th of count slices (1-based): every count-th submission in name order, from the index-th."""
    return sorted(submissions, key=lambda s: s.student)[index - 1::count]


@dataclass
class Summary:
    """What grade-all did: every record of the run (or shard), the task ids of its columns, the counts graded, skipped
    as unchanged and failed, the seconds, and notes for the instructor."""
    records: list[Record]
    task_ids: tuple[str, ...]
    graded: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def grade_all(submissions_dir: Path, out: Path, *, jobs: int | None = None, shard_of: tuple[int, int] | None = None,
              force: bool = False, timeout: float = DEFAULT_TIMEOUT, settings: Settings = Settings(),
              progress: Callable[[str, bool], None] | None = None, adjustments: Path | None = None) -> Summary:
    """Grade every submission in ``submissions_dir`` (or the shard ``shard_of``) into ``out``.

    ``progress(line, final)`` hears a progress line after each submission. Raises ValueError
    for arguments that cannot work (no such folder, --jobs 0, ...).
    """
    start = time.monotonic()
    submissions_dir, out = Path(submissions_dir), Path(out)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if not submissions_dir.is_dir():
        raise ValueError(msg.BATCH_NOT_A_FOLDER.format(folder=submissions_dir))
    if jobs < 1:
        raise ValueError(msg.BATCH_BAD_JOBS.format(jobs=jobs))
    if not timeout > 0:
        raise ValueError(msg.BATCH_BAD_TIMEOUT.format(seconds=timeout))
    if out.resolve() == submissions_dir.resolve():
        raise ValueError(msg.BATCH_OUT_INSIDE.format(out=out, folder=submissions_dir))
    sandbox.choose(settings.isolation)  # RuntimeError now, not once per submission, when it cannot work
    everyone = intake.discover(submissions_dir, exclude=(out,))
    if not everyone:
        raise ValueError(msg.BATCH_EMPTY.format(folder=submissions_dir))
    mine = shard(everyone, *shard_of) if shard_of else everyone
    fingerprint = settings.fingerprint()
    task_ids = gradebook.task_ids_of(settings.tasks)
    found = read_adjustments(out, adjustments, task_ids, {s.student for s in everyone})  # before any grading
    out.mkdir(parents=True, exist_ok=True)
    summary = Summary([], task_ids)
    records: dict[str, Record] = {}
    todo = []
    for submission in mine:
        digest = intake.content_hash(submission)
        record = None if force else gradebook.load_record(out / submission.student)
        if record is not None and record.hash == digest and record.settings == fingerprint \
                and (not record.graded or (out / submission.student / "results.json").is_file()):
            records[submission.student] = record
            summary.skipped += 1
        else:
            todo.append({"student": submission.student, "path": str(submission.path.resolve()),
                         "out": str((out / submission.student).resolve()), "hash": digest, "key": settings.key,
                         "tasks": list(settings.tasks) if settings.tasks else None,
                         "isolation": settings.isolation})
    gradebook.write_csv(out / gradebook.CSV_NAME, adjust.apply(list(records.values()), found), task_ids)
    judges = min(jobs, len(todo))
    if progress is not None:
        part = msg.BATCH_START_SHARD.format(index=shard_of[0], count=shard_of[1], total=len(everyone)) \
            if shard_of else ""
        progress(msg.BATCH_START.format(todo=len(todo), skipped=summary.skipped, mine=len(mine), shard=part,
                                        folder=submissions_dir, judges=judges), True)
    meter = Progress(len(mine), summary.skipped, progress)

    def finish(job: dict, answer: dict, seconds: float) -> None:
        folder = Path(job["out"])
        folder.mkdir(parents=True, exist_ok=True)
        record = Record(job["student"], answer["status"], float(answer.get("total", 0.0)),
                        {k: float(v) for k, v in answer.get("scores", {}).items()}, round(seconds, 1),
                        job["hash"], fingerprint, str(answer.get("isolation", "")))
        if not record.graded:
            for name in STALE:
                (folder / name).unlink(missing_ok=True)
            summary.failed += 1
        else:
            summary.graded += 1
        for note in answer.get("notes", ()):
            if note not in summary.notes:
                summary.notes.append(note)
        gradebook.save_record(folder, record)
        records[record.student] = record
        gradebook.write_csv(out / gradebook.CSV_NAME, adjust.apply(list(records.values()), found), task_ids)
        meter.done(record)

    if todo:
        (out / LOGS).mkdir(exist_ok=True)
        run_pool(todo, judges, timeout, out / LOGS, finish)
    summary.records = adjust.apply(sorted(records.values(), key=lambda r: r.student), found)
    show_adjustments(out, summary.records, found)
    summary.notes += class_views(out, summary.records, task_ids)
    summary.seconds = time.monotonic() - start
    return summary


def read_adjustments(out: Path, given: Path | None, task_ids: tuple[str, ...], students: set[str]):
    """The class's adjustments (graders.classgrade.adjustments): ``given``, else OUT_DIR/adjustments.csv if there
    is one; ValueError for a file asked for by name that is not there, or a row that cannot be applied."""
    path = adjust.path_for(out, given)
    if given is not None and not path.is_file():
        raise ValueError(msg.ADJUST_MISSING.format(path=path))
    return adjust.read(path, task_ids, students)


def merge(folders: list[Path], out: Path, given: Path | None = None) -> tuple[tuple[str, ...], list[Record]]:
    """gradebook.merge with the merged class's adjustments: read (and refused, with their line) before anything is
    written, applied to grades.csv, and shown in each adjusted student's scorecard."""
    found = []

    def prepare(task_ids: tuple[str, ...], records: list[Record]) -> list[Record]:
        found.extend(read_adjustments(out, given, task_ids, {r.student for r in records}))
        return adjust.apply(records, found)

    task_ids, records = gradebook.merge(folders, out, prepare)
    show_adjustments(Path(out), records, found)
    return task_ids, records


def show_adjustments(out: Path, records: list[Record], found: list) -> None:
    """Each graded student's scorecard.md rendered again from results.json with their adjustments below it, where
    they have any or had any (a scorecard is the judge's until an adjustment touches it)."""
    for record in records:
        folder = out / record.student
        mine = adjust.of(record.student, found)
        card = folder / "scorecard.md"
        if not record.graded or not (folder / "results.json").is_file() or not card.is_file():
            continue
        if not mine and msg.SCORECARD_ADJUSTED_TITLE not in card.read_text(errors="replace"):
            continue
        result = json.loads((folder / "results.json").read_text())
        text = outputs.markdown(result, "loss.png" if (folder / "loss.png").is_file() else None)
        if mine:
            text += "\n".join([msg.SCORECARD_ADJUSTED_TITLE, "", *(f"- {a.text()}" for a in mine),
                               "", msg.SCORECARD_ADJUSTED_TOTAL.format(total=record.total), ""])
        gradebook.atomic_write(card, text)


def class_views(out: Path, records: list[Record], task_ids: tuple[str, ...]) -> list[str]:
    """The class report (graders.classgrade.report) as class.md and class.html, with its pictures (a histogram of
    totals, the share with full points per task) as PNG files beside class.md and inline in class.html; notes for
    the user."""
    data = report.build(out, records, task_ids)
    drawn: dict[str, tuple[str, bytes]] = {}  # file name -> (title, PNG)
    if pictures.available():
        rates = {s.task: s.full / s.graded if s.graded else 0.0 for s in data.tasks}
        drawn = {pictures.TOTALS_PNG: (msg.CLASS_PICTURE_TOTALS, pictures.totals_png(
                     [r.total for r in data.graded], data.max_score)),
                 pictures.PASS_RATES_PNG: (msg.CLASS_PICTURE_RATES, pictures.pass_rates_png(rates, len(data.graded)))}
        for name, (_, png) in drawn.items():
            gradebook.atomic_write(out / name, png)
    gradebook.atomic_write(out / "class.md", report.markdown(data, {name: title for name, (title, _) in drawn.items()}))
    gradebook.atomic_write(out / "class.html", report.page(data, dict(drawn.values())))
    return [] if drawn else [msg.NO_PICTURES]
