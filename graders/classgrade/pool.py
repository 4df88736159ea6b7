"""grade-all's pool of judges: one process each (``python -m graders.classgrade.batch_judge``), each grading one
submission at a time, watched for its bound and its processes, restarted when one dies or runs out of time.

A judge's bound is its process tree's CPU time (the judge, its workers, its helpers), read from the kernel, so that
a busy machine (``--jobs`` above the cores, other users' jobs) never stops a judge that works; and, the backstop
for one that does not compute, as many seconds waited without using the CPU (``Clock``)."""

import contextlib
import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from graders import messages as msg
from graders import paths
from graders.classgrade.batch_judge import PARENT_ENV
from graders.isolation import judge_folders
from graders.isolation.processes import THREADS_ENV, descendants, parents, usage

DEFAULT_TIMEOUT = 600.0  # CPU seconds for one submission (grade-all --timeout), and as many waited, a backstop
START_TIMEOUT = 180.0  # a judge starts (Python, the graders) before its first submission: its bound, as above
LOOK_EVERY = 1.0  # seconds between looks at each judge's processes
STOP_GRACE = 5.0  # a judge asked to stop gets this long to stop its worker and remove its scratch folder


class Clock:
    """What a judge's process tree spends on one thing (its start, a submission), read from the kernel at each
    ``look``: its CPU seconds (``spent``), and, for a tree that does not compute, the seconds it waited (``idle``:
    wall time less what it ran or waited on a run queue for a CPU, so a busy machine adds nothing to it). Each
    process's CPU counts from its first look (or from 0 for one started since), while it lives: one that lives
    less than a look is missed, which only makes the bound more lenient (the grade's own limits still hold)."""

    def __init__(self, pids, seconds: float):
        self.seconds = seconds
        self.seen = usage(pids)
        self.at = time.monotonic()
        self.spent = self.idle = 0.0

    def look(self, pids) -> str | None:
        """Read the tree ``pids``: "cpu" or "idle" once that bound is reached, else None."""
        now, found = time.monotonic(), usage(pids)
        busy = 0.0
        for pid, (cpu, delay) in found.items():
            was_cpu, was_delay = self.seen.get(pid, (0.0, 0.0))
            ran = max(0.0, cpu - was_cpu)
            self.spent += ran
            busy += ran + max(0.0, delay - was_delay)
        self.idle += max(0.0, now - self.at - busy)
        self.seen, self.at = found, now
        if self.spent >= self.seconds:
            return "cpu"
        return "idle" if self.idle >= self.seconds else None


class Judge:
    """One judge process, with its own scratch folder and log (``logs`` None: its stderr is this process's). It
    stops (SIGTERM) when the thread that started it ends: an interrupted batch leaves no judge behind."""

    def __init__(self, number: int, logs: Path | None):
        # Locked while the pool or the judge holds the lock's descriptor: a later run sweeps it once both are gone.
        self.scratch, self.lock = judge_folders.claim()
        # Searchable, not listable: the grades it lays out here are reached by workers' uids (limits mode as root).
        self.scratch.chmod(0o711)
        self.log = logs / f"judge-{number}.log" if logs is not None else None
        package_root = str(paths.HERE.parent)
        env = {"TORCHINDUCTOR_CACHE_DIR": str(self.scratch / "torch"),  # torch.optim's cache, removed with it
               **os.environ, **THREADS_ENV, "TMPDIR": str(self.scratch), PARENT_ENV: str(os.getpid()),
               "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
        with open(self.log, "ab") if self.log is not None else contextlib.nullcontext() as log:
            self.process = subprocess.Popen([sys.executable, "-m", "graders.classgrade.batch_judge"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                            cwd=self.scratch, start_new_session=True, pass_fds=(self.lock,))
        self.fd = self.process.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buffer = b""
        self.family: set[int] = set()  # its descendants when last looked at: what to kill should it die
        self.ready = False
        self.job: dict | None = None
        self.timeout = DEFAULT_TIMEOUT
        self.started = time.monotonic()
        self.clock = Clock(self.tree(), START_TIMEOUT)

    def tree(self, table: dict[int, int] | None = None) -> list[int]:
        """The judge's process and every process below it (``table``: from parents(), taken already)."""
        return [self.process.pid, *descendants(self.process.pid, table)]

    def give(self, job: dict, timeout: float) -> None:
        """Send the judge one job; its bound runs from now if it is ready, else from when it says it is (its start is
        not the submission's time)."""
        self.process.stdin.write((json.dumps(job) + "\n").encode())
        self.process.stdin.flush()
        self.job, self.timeout = job, timeout
        if self.ready:
            self.started = time.monotonic()
            self.clock = Clock(self.tree(), timeout)

    def overdue(self, table: dict[int, int] | None = None) -> str | None:
        """The row's status once the judge has spent its bound on its job (or on its start), else None."""
        bound = self.clock.look(self.tree(table))
        if bound is None:
            return None
        if not self.ready:
            return msg.BATCH_CRASHED.format(reason=msg.BATCH_JUDGE_NO_START.format(seconds=START_TIMEOUT))
        return (msg.BATCH_TIMED_OUT_IDLE if bound == "idle" else msg.BATCH_TIMED_OUT).format(seconds=self.timeout)

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
                self.clock = Clock(self.tree(), self.timeout)
            else:
                found.append(answer)
        return found

    def seconds(self) -> float:
        """How long the judge has been on its current job (or starting)."""
        return time.monotonic() - self.started

    def exit_reason(self) -> str:
        """Why the judge exited, for the student's row: the signal or the status, and the last line of its log."""
        code = self.process.wait()
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        try:
            lines = self.log.read_bytes()[-4096:].decode(errors="replace").strip().splitlines() if self.log else []
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
        if self.lock is not None:  # once: a descriptor closed twice could be another's by then
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.scratch}{judge_folders.LOCK_SUFFIX}")
            os.close(self.lock)
            self.lock = None


def run_pool(jobs: list[dict], size: int, timeout: float, logs: Path,
             finish: Callable[[dict, dict, float], None]) -> None:
    """Grade ``jobs`` with ``size`` judges; ``finish(job, answer, seconds)`` hears each one as it ends."""
    pending, judges, numbers = deque(jobs), [], itertools.count(1)
    judge_folders.sweep()  # what the judges of a run killed mid-grade left, copies of submissions among it

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
            readable, _, _ = select.select([j.fd for j in busy], [], [], LOOK_EVERY)
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
                elif (status := judge.overdue(table)) is not None:
                    retire(judge, {"status": status})
    finally:
        for judge in judges:
            if judge.job is not None:
                judge.kill()
            else:
                judge.close()
