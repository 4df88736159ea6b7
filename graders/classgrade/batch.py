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

import ctypes
import hashlib
import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graders import __version__, paths
from graders import messages as msg
from graders.classgrade import gradebook
from graders.classgrade.gradebook import Record
from graders.judge import intake, sandbox
from graders.judge.processes import THREADS_ENV, descendants, parents
from graders.judge.worker_process import untrusted
from graders.results import pictures
from graders.tasks import BY_ID

DEFAULT_TIMEOUT = 600.0
START_TIMEOUT = 180.0  # a judge imports torch and the checks before its first submission
LOOK_EVERY = 1.0  # seconds between looks at each judge's processes
STOP_GRACE = 5.0  # a judge asked to stop gets this long to stop its worker and remove its scratch folder
LOGS = ".logs"
STALE = ("results.json", "scorecard.md", pictures.LOSS_PNG)


@dataclass(frozen=True)
class Settings:
    """What grading depends on besides the submission: a change of any of them grades everyone again."""

    key: int | None = None
    tasks: tuple[str, ...] | None = None
    isolation: str = "auto"

    def fingerprint(self) -> str:
        text = json.dumps({"key": self.key, "tasks": self.tasks, "isolation": self.isolation,
                           "version": __version__, "graders": graders_fingerprint()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def graders_fingerprint() -> str:
    """sha256 of the graders' source and the given code: a fixed grader bug means a regrade."""

    digest = hashlib.sha256()
    files = sorted({*paths.HERE.rglob("*.py"), *(paths.GIVEN / name for name in paths.given_modules())})
    for path in files:
        if "__pycache__" not in path.parts:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


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
    records: list[Record]
    task_ids: tuple[str, ...]
    graded: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def grade_all(submissions_dir: Path, out: Path, *, jobs: int | None = None, shard_of: tuple[int, int] | None = None,
              force: bool = False, timeout: float = DEFAULT_TIMEOUT, settings: Settings = Settings(),
              progress: Callable[[str, bool], None] | None = None) -> Summary:
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
    out.mkdir(parents=True, exist_ok=True)
    fingerprint = settings.fingerprint()
    task_ids = gradebook.task_ids_of(settings.tasks)
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
    gradebook.write_csv(out / gradebook.CSV_NAME, list(records.values()), task_ids)
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
                        job["hash"], fingerprint)
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
        gradebook.write_csv(out / gradebook.CSV_NAME, list(records.values()), task_ids)
        meter.done(record)

    if todo:
        (out / LOGS).mkdir(exist_ok=True)
        run_pool(todo, judges, timeout, out / LOGS, finish)
    summary.records = sorted(records.values(), key=lambda r: r.student)
    summary.notes += class_views(out, summary.records, task_ids)
    summary.seconds = time.monotonic() - start
    return summary


def class_views(out: Path, records: list[Record], task_ids: tuple[str, ...]) -> list[str]:
    """The class's pictures (a histogram of totals, the pass rate per task) and class.md; notes for the user."""
    graded = [r for r in records if r.graded]
    pointed = [t for t in task_ids if BY_ID[t].points > 0]
    lines = [msg.CLASS_SUMMARY.format(students=len(records), graded=len(graded), others=len(records) - len(graded))]
    if not pictures.available():
        gradebook.atomic_write(out / "class.md", "\n".join(lines))
        return [msg.NO_PICTURES]
    max_score = sum(BY_ID[t].points for t in task_ids)
    gradebook.atomic_write(out / pictures.TOTALS_PNG, pictures.totals_png([r.total for r in graded], max_score))
    rates = {t: (sum(r.scores.get(t, 0.0) >= BY_ID[t].points for r in graded) / len(graded) if graded else 0.0)
             for t in pointed}
    gradebook.atomic_write(out / pictures.PASS_RATES_PNG, pictures.pass_rates_png(rates, len(graded)))
    lines += [f"![totals]({pictures.TOTALS_PNG})", "", f"![pass rate per task]({pictures.PASS_RATES_PNG})", ""]
    gradebook.atomic_write(out / "class.md", "\n".join(lines))
    return []


# ----- progress -----


class Progress:
    """Count, rate and ETA, one line per finished submission (rewritten in place on a terminal)."""

    def __init__(self, total: int, skipped: int, emit: Callable[[str, bool], None] | None, clock=time.monotonic):
        self.total, self.skipped, self.emit, self.clock = total, skipped, emit, clock
        self.finished = self.failed = 0
        self.start = clock()

    def done(self, record: Record) -> None:
        self.finished += 1
        self.failed += not record.graded
        if self.emit is None:
            return
        elapsed = self.clock() - self.start
        rate = self.finished / elapsed * 60 if elapsed > 0 else 0.0
        left = self.total - self.skipped - self.finished
        eta = _duration(left / rate * 60) if rate > 0 else "?"
        # A folder name is the student's text: no escape sequence of it reaches the terminal.
        last = msg.BATCH_PROGRESS_LAST.format(student=untrusted(record.student), status=record.status.split(":")[0]
                                              + (f" {record.total:g}" if record.graded else ""))
        line = msg.BATCH_PROGRESS.format(done=self.skipped + self.finished, total=self.total, skipped=self.skipped,
                                         failed=self.failed, rate=f"{rate:.1f}/min", eta=eta, last=last)
        self.emit(line, left == 0)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else \
        f"{seconds // 60}m{seconds % 60:02d}s"


def terminal_progress(stream=sys.stderr) -> Callable[[str, bool], None]:
    """Progress lines for ``stream``: rewritten in place on a terminal, one per line in a log."""
    interactive = stream.isatty()

    def emit(line: str, final: bool) -> None:
        if interactive:
            stream.write("\r\x1b[K" + line + ("\n" if final else ""))
        else:
            stream.write(line + "\n")
        stream.flush()

    return emit


# ----- the pool of judges -----


def _stop_with_parent() -> None:
    """In the judge, before exec: SIGTERM when grade-all dies (so an interrupted batch leaves no judge behind)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Judge:
    """One judge process of the pool, with its own scratch folder and log."""

    def __init__(self, number: int, logs: Path):
        self.scratch = Path(tempfile.mkdtemp(prefix="agl-judge-", dir=sandbox.scratch_base()))
        # Searchable, not listable: the grades it lays out here are reached by workers' uids (limits mode as root).
        self.scratch.chmod(0o711)
        self.log = logs / f"judge-{number}.log"
        package_root = str(paths.HERE.parent)
        env = {"TORCHINDUCTOR_CACHE_DIR": str(self.scratch / "torch"),  # torch.optim's cache, removed with it
               **os.environ, **THREADS_ENV, "TMPDIR": str(self.scratch),
               "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "graders.classgrade.batch_judge"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                            cwd=self.scratch, start_new_session=True, preexec_fn=_stop_with_parent)
        self.fd = self.process.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buffer = b""
        self.family: set[int] = set()  # its descendants when last looked at: what to kill should it die
        self.ready = False
        self.job: dict | None = None
        self.timeout = DEFAULT_TIMEOUT
        self.started = time.monotonic()
        self.deadline = self.started + START_TIMEOUT

    def give(self, job: dict, timeout: float) -> None:
        self.process.stdin.write((json.dumps(job) + "\n").encode())
        self.process.stdin.flush()
        self.job, self.timeout = job, timeout
        if self.ready:
            self.started = time.monotonic()
            self.deadline = self.started + timeout

    def answers(self) -> list[dict]:
        """The complete lines the judge has written; EOFError when it has exited."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        found = []
        for line in lines:
            answer = json.loads(line)
            if answer.get("ready"):
                self.ready = True
                self.started = time.monotonic()
                self.deadline = self.started + self.timeout
            else:
                found.append(answer)
        return found

    def seconds(self) -> float:
        return time.monotonic() - self.started

    def exit_reason(self) -> str:
        code = self.process.wait()
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        try:
            lines = self.log.read_bytes()[-4096:].decode(errors="replace").strip().splitlines()
        except OSError:
            lines = []
        words = msg.BATCH_JUDGE_WORDS.format(line=lines[-1][:200]) if lines else ""
        return msg.BATCH_JUDGE_EXITED.format(how=how, words=words)

    def kill(self) -> None:
        """Stop the judge and everything it started: SIGTERM (it stops its worker), then SIGKILL for what is left."""
        family = set(self.family)
        if self.process.poll() is None:
            family |= set(descendants(self.process.pid))
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.process.kill()
        # A judge that died on its own (killed from outside) left its worker behind: the last look found it.
        for pid in family:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.process.wait()
        self.close()

    def close(self) -> None:
        """Let an idle judge finish (stdin closed), then remove its scratch folder."""
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def run_pool(jobs: list[dict], size: int, timeout: float, logs: Path,
             finish: Callable[[dict, dict, float], None]) -> None:
    """Grade ``jobs`` with ``size`` judges; ``finish(job, answer, seconds)`` hears each one as it ends."""
    pending, judges, numbers = deque(jobs), [], itertools.count(1)

    def retire(judge: Judge, answer: dict) -> None:
        job, seconds = judge.job, judge.seconds()
        judge.job = None
        judge.kill()
        judges.remove(judge)
        finish(job, answer, seconds)

    try:
        while pending or any(j.job is not None for j in judges):
            for judge in [j for j in judges if j.job is None] + [None] * (size - len(judges)):
                if not pending:
                    break
                if judge is None:
                    judge = Judge(next(numbers), logs)
                    judges.append(judge)
                try:
                    judge.give(pending[0], timeout)
                    pending.popleft()
                except (BrokenPipeError, OSError):  # it died while idle: replace it, keep the job
                    judge.job = None
                    judge.kill()
                    judges.remove(judge)
            busy = [j for j in judges if j.job is not None]
            wait = max(0.0, min(min(j.deadline for j in busy) - time.monotonic(), LOOK_EVERY))
            readable, _, _ = select.select([j.fd for j in busy], [], [], wait)
            table = parents()
            for judge in busy:
                judge.family = set(descendants(judge.process.pid, table)) if judge.process.poll() is None \
                    else judge.family
            for judge in busy:
                if judge.fd in readable:
                    try:
                        for answer in judge.answers():
                            job, seconds = judge.job, judge.seconds()
                            judge.job = None
                            finish(job, answer, seconds)
                    except EOFError:
                        retire(judge, {"status": msg.BATCH_CRASHED.format(reason=judge.exit_reason())})
                    except ValueError as error:  # not JSON: nothing we wrote
                        retire(judge, {"status": msg.BATCH_CRASHED.format(reason=f"the judge's answer: {error}")})
                elif time.monotonic() >= judge.deadline:
                    status = msg.BATCH_TIMED_OUT.format(seconds=judge.timeout) if judge.ready else \
                        msg.BATCH_CRASHED.format(reason=msg.BATCH_JUDGE_NO_START.format(seconds=START_TIMEOUT))
                    retire(judge, {"status": status})
    finally:
        for judge in judges:
            if judge.job is not None:
                judge.kill()
            else:
                judge.close()

