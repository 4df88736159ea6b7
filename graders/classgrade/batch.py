"""Grade a class: every submission in a folder, by a pool of judge processes, into one gradebook.

    autograd-lab grade-all SUBMISSIONS_DIR --out OUT_DIR [--jobs N] [--shard I/N] [--force] [--timeout S]

Each submission is graded by one judge of the pool (``graders.classgrade.batch_judge``),
exactly as ``autograd-lab grade`` grades it alone; the judge writes
``OUT_DIR/students/<student>/results.json`` (and the scorecard and its picture),
then this process keeps the files it graded (``code/``, for the similarity
report), writes the student's record (``grading.json``, with the content hash)
and rewrites ``grades.csv``, each atomically, as soon as the student is done.
So an interrupted batch loses nothing finished, and the next run skips every
submission whose content and grading settings are unchanged. A judge that
outlives the per-submission bound is stopped (with its worker), its row says
so, and a fresh judge takes the next submission. Whatever one student hands in
(a link, a tree no search ends in, files that cannot be read, a name like
``grades.csv``) is that student's row, never the class's end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
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
from graders.course import course_file
from graders.isolation import sandbox
from graders.paths import graders_fingerprint
from graders.results import outputs, pictures
from graders.submission import intake, layout
from graders.tasks import GRADED_MODULES

LOGS = ".logs"
STALE = ("results.json", "scorecard.md", pictures.LOSS_PNG)


@dataclass(frozen=True)
class Settings:
    """What grading depends on besides the submission: a change of any of them grades everyone again. ``course``:
    the course file's (its tasks, points and secret: each student's key is derived from it); ``key``: one key for
    every student, where the course has no secret (the command line refuses it: a class graded so shares its
    inputs)."""

    key: int | None = None
    tasks: tuple[str, ...] | None = None
    isolation: str = "auto"
    course: course_file.Course = course_file.DEFAULT

    def fingerprint(self) -> str:
        """A digest of what decides a verdict: the settings, the course's tasks, points and secret (its commitment,
        never the secret), the package's version and the graders' code (graders.paths.graders_fingerprint: not
        their wording). A submission whose record holds another is graded again; the late policy, the due dates
        and the messages' wording are not in it."""
        text = json.dumps({"key": self.key, "tasks": self.tasks, "isolation": self.isolation,
                           "course": self.course.verdict(), "version": __version__,
                           "graders": graders_fingerprint()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def task_ids(self) -> tuple[str, ...]:
        """The gradebook's task columns: the course's tasks (those of ``tasks`` only, when given)."""
        return tuple(course_file.grading(self.course, None, tasks=self.tasks)["tasks"])

    def job(self, student: str) -> dict:
        """The key, tasks, points and isolation of ``student``'s grade (a judge's job)."""
        return {**course_file.grading(self.course, student, key=self.key, tasks=self.tasks),
                "isolation": self.isolation}


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
    task_ids = settings.task_ids()
    found = read_adjustments(out, adjustments, task_ids, {s.student for s in everyone})  # before any grading
    late = Late(settings.course, {s.student for s in everyone})  # its times read (and refused) before any grading
    points = {t: settings.course.points(t) for t in task_ids}
    out.mkdir(parents=True, exist_ok=True)
    gradebook.migrate(out)  # a gradebook of the older layout: its students' folders go under students/
    students = out / gradebook.STUDENTS
    students.mkdir(exist_ok=True)
    summary = Summary([], task_ids)
    records: dict[str, Record] = {}
    todo, refused = [], []
    for submission in mine:
        folder = students / submission.student
        try:
            reason = intake.refusal(submission)
            digest = intake.content_hash(submission)
        except (OSError, ValueError, RecursionError) as error:  # a tree of one student's never stops the class
            reason, digest = msg.SUBMISSION_UNHASHED.format(name=submission.student, error=error), ""
        if reason is not None:
            refused.append((submission.student, reason, digest))
            continue
        record = None if force else gradebook.load_record(folder)
        if record is not None and record.hash == digest and record.settings == fingerprint \
                and (not record.graded or (folder / "results.json").is_file()):
            records[submission.student] = record
            summary.skipped += 1
            if record.graded and not (folder / gradebook.CODE).is_dir():
                keep_code(submission, folder)
        else:
            todo.append({"student": submission.student, "path": str(submission.path.resolve()),
                         "out": str(folder.resolve()), "hash": digest, **settings.job(submission.student)})
    gradebook.write_csv(out / gradebook.CSV_NAME, late.adjusted(list(records.values()), found, points), task_ids)
    judges = min(jobs, len(todo))
    if progress is not None:
        part = msg.BATCH_START_SHARD.format(index=shard_of[0], count=shard_of[1], total=len(everyone)) \
            if shard_of else ""
        progress(msg.BATCH_START.format(todo=len(todo) + len(refused), skipped=summary.skipped, mine=len(mine),
                                        shard=part,
                                        folder=submissions_dir, judges=judges), True)
    meter = Progress(len(mine), summary.skipped, progress)
    loads: list[float] = []  # the machine's load average as each submission finished, and at the end

    def finish(job: dict, answer: dict, seconds: float) -> None:
        loads.append(os.getloadavg()[0])
        folder = Path(job["out"])
        folder.mkdir(parents=True, exist_ok=True)
        record = Record(job["student"], answer["status"], float(answer.get("total", 0.0)),
                        {k: float(v) for k, v in answer.get("scores", {}).items()}, round(seconds, 1),
                        job["hash"], fingerprint, str(answer.get("isolation", "")))
        if not record.graded:
            for name in STALE:
                (folder / name).unlink(missing_ok=True)
            shutil.rmtree(folder / gradebook.CODE, ignore_errors=True)
            summary.failed += 1
        else:
            keep_code(intake.Submission(job["student"], Path(job["path"])), folder)
            summary.graded += 1
        for note in answer.get("notes", ()):
            if note not in summary.notes:
                summary.notes.append(note)
        gradebook.save_record(folder, record)
        records[record.student] = record
        gradebook.write_csv(out / gradebook.CSV_NAME, late.adjusted(list(records.values()), found, points), task_ids)
        meter.done(record)

    for student, reason, digest in refused:  # nothing a judge could grade: the row says why, as a judge's would
        finish({"student": student, "out": str(students / student), "hash": digest},
               {"status": msg.BATCH_MALFORMED.format(reason=reason.removeprefix(f"{student}: "))}, 0.0)
    if todo:
        (out / LOGS).mkdir(exist_ok=True)
        run_pool(todo, judges, timeout, out / LOGS, finish)
        summary.notes += loaded(loads + [os.getloadavg()[0]])
    ordered = sorted(records.values(), key=lambda r: r.student)
    summary.records = late.adjusted(ordered, found, points)
    show_adjustments(out, summary.records, found + late.penalties(ordered, found, points))
    summary.notes += late.notes(records.values()) + class_views(out, summary.records, task_ids, points)
    summary.seconds = time.monotonic() - start
    return summary


def loaded(loads: list[float]) -> list[str]:
    """A note where the machine's load average, over the ``loads`` seen during the run, stayed above its cores: the
    run took longer than on a quiet machine, and its grades are the same (every limit counts CPU time)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    mean = sum(loads) / len(loads) if loads else 0.0
    return [msg.BATCH_LOADED.format(load=mean, cores=cores)] if mean > cores else []


def keep_code(submission: intake.Submission, folder: Path) -> None:
    """Keep the graded modules' .py files of ``submission`` in ``folder``/code/ (what the similarity report compares,
    and merge carries from a shard), as intake finds and unpacks them; none where it finds nothing to grade."""
    code = folder / gradebook.CODE
    shutil.rmtree(code, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="agl-code-") as scratch:
        try:
            files = layout.student_files(intake.unpack(submission, Path(scratch)))
        except (layout.SubmissionError, OSError):
            return
        for module in GRADED_MODULES:
            if module in files:
                try:
                    handle = os.open(files[module], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue
                with os.fdopen(handle, "rb") as f:
                    gradebook.atomic_write(code / f"{module}.py", f.read(layout.MAX_SUBMISSION_BYTES))


def read_adjustments(out: Path, given: Path | None, task_ids: tuple[str, ...], students: set[str]):
    """The class's adjustments (graders.classgrade.adjustments): ``given``, else OUT_DIR/adjustments.csv if there
    is one; ValueError for a file asked for by name that is not there, or a row that cannot be applied."""
    path = adjust.path_for(out, given)
    if given is not None and not path.is_file():
        raise ValueError(msg.ADJUST_MISSING.format(path=path))
    return adjust.read(path, task_ids, students)


def merge(folders: list[Path], out: Path, given: Path | None = None,
          course: course_file.Course = course_file.DEFAULT) -> tuple[tuple[str, ...], list[Record]]:
    """gradebook.merge with the merged class's adjustments and the course's late penalties: read (and refused, with
    their line) before anything is written, applied to grades.csv, and shown in each adjusted student's scorecard.
    ValueError where the shards' columns are not the course's tasks."""
    found, shown = [], []

    def prepare(task_ids: tuple[str, ...], records: list[Record]) -> list[Record]:
        check_columns(folders[0], task_ids, course)
        found.extend(read_adjustments(out, given, task_ids, {r.student for r in records}))
        late, points = Late(course, {r.student for r in records}), {t: course.points(t) for t in task_ids}
        shown.extend(found + late.penalties(records, found, points))
        return late.adjusted(records, found, points)

    task_ids, records = gradebook.merge(folders, out, prepare, check=report.check_result, points=course.points_by_task)
    show_adjustments(Path(out), records, shown)
    return task_ids, records


def check_columns(folder: Path, task_ids: tuple[str, ...], course: course_file.Course) -> None:
    """ValueError where a gradebook's task columns are not those of the course file given (a gradebook graded with
    another course, or a course file forgotten)."""
    if course.path is not None and any(t not in course.points_by_task for t in task_ids):
        raise ValueError(msg.COURSE_COLUMNS.format(folder=folder, got=", ".join(task_ids), course=course.path,
                                                   expected=", ".join(course.tasks)))


class Late:
    """The course's late penalties for a class: each student's submission time from the course's times file (read
    once, refused with its line before anything is graded), turned into an adjustment of their total on every run,
    after the instructor's own (graders.classgrade.adjustments), so that changing the policy grades nobody again."""

    def __init__(self, course: course_file.Course, students: set[str]):
        self.course, self.students = course, students
        self.times = course_file.read_times(course.times, course.path) if course.times is not None else None

    def penalties(self, records: list[Record], found: list, points: dict[str, int]) -> list:
        """The late penalties of ``records`` (graded ones with a time past their due date), as adjustments of their
        totals after ``found``."""
        if self.times is None or (self.course.due is None and not self.course.extensions):
            return []
        late = []
        for record in adjust.apply([r for r in records if r.graded], found, points):
            penalty = self.course.penalty(course_file.submitted_at(self.times, record.student), [record.student])
            if penalty is not None:
                late.append(adjust.Adjustment(record.student, adjust.TOTAL,
                                              -round(record.total * penalty.percent / 100, 2), False,
                                              penalty.text(self.course)))
        return late

    def adjusted(self, records: list[Record], found: list, points: dict[str, int]) -> list[Record]:
        """``records`` with the instructor's adjustments, then the late penalties."""
        return adjust.apply(records, found + self.penalties(records, found, points), points)

    def notes(self, records) -> list[str]:
        """What the instructor must hear: a due date without submission times, students without a time."""
        if self.course.due is None and not self.course.extensions:
            return []
        if self.times is None:
            return [msg.LATE_NO_TIMES_FILE]
        missing = sorted(r.student for r in records if r.graded
                         and course_file.submitted_at(self.times, r.student) is None)
        return [msg.LATE_NO_TIME.format(count=len(missing), path=self.course.times, names=", ".join(missing))] \
            if missing else []


def show_adjustments(out: Path, records: list[Record], found: list) -> None:
    """Each graded student's scorecard.md rendered again from results.json with their adjustments below it, where
    they have any or had any (a scorecard is the judge's until an adjustment touches it)."""
    for record in records:
        folder = gradebook.student_dir(out, record.student)
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


def class_views(out: Path, records: list[Record], task_ids: tuple[str, ...],
                points: dict[str, int] | None = None) -> list[str]:
    """The class report (graders.classgrade.report) as class.md and class.html, with its pictures (a histogram of
    totals, the share with full points per task) as PNG files beside class.md and inline in class.html; notes for
    the user. ``points``: each task's points in the course (None: the task table's)."""
    data = report.build(out, records, task_ids, points)
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
