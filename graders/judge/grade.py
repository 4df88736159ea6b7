"""Grade one submission: lay it out, start a worker, run every task's ladder.

The judge never imports student code: it only asks the worker and checks
the claims that come back.
"""

from __future__ import annotations

import importlib
import platform
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import hypothesis
import numpy as np

from graders import __version__, messages
from graders.isolation import sandbox
from graders.isolation.worker_process import Worker
from graders.judge import examples_cache, profile, routing
from graders.judge.checks import checks
from graders.judge.checks.base import CheckFailed, Context, NotAttempted, Skip
from graders.submission import layout
from graders.tasks import GRADE_DEADLINE, TASKS, Task

PASSED, FAILED, NOT_ATTEMPTED, SKIPPED, ERROR = "passed", "failed", "not attempted", "skipped", "grader error"


@dataclass
class TaskResult:
    """One task's outcome: its status, score and message (the whole report a student reads), the seconds and examples it
    took, and what it measured beyond pass or fail (``data``: the loss curve, the lesson's MSE)."""
    task: Task
    status: str
    score: float
    message: str
    seconds: float = 0.0
    examples: int = 0
    data: dict = field(default_factory=dict)
    points: float | None = None  # the task's points in the course graded (None: the task table's)

    @property
    def max_score(self) -> float:
        """The points this task can earn here: none when it was skipped (6.2 without CUDA), so a machine without a GPU
        costs the student nothing."""
        return 0.0 if self.status == SKIPPED else float(self.task.points if self.points is None else self.points)


@dataclass
class Report:
    """One graded submission: every task's result, the seconds, the isolation it was graded under, the key of its drawn
    examples and the versions that graded it (all that the scorecard and results.json are made from)."""
    submission: str
    results: list[TaskResult]
    seconds: float
    isolation: str
    key: int | None
    versions: dict = field(default_factory=dict)
    key_shown: str | None = None  # what the scorecard says of the key, where not the key itself
    # What the deadline counts: the workers' CPU seconds over every request, and their seconds waited without
    # computing (graders.isolation.worker_process.Worker.cpu_used, idle_used)
    used: tuple[float, float] = (0.0, 0.0)
    level: str = ""  # the isolation's short name (sandbox.Isolation.level): results.json and grades.csv record it

    @property
    def score(self) -> float:
        """The points earned over all tasks."""
        return sum(r.score for r in self.results)

    @property
    def max_score(self) -> float:
        """The points that could be earned here (skipped tasks count none)."""
        return sum(r.max_score for r in self.results)

    @property
    def examples(self) -> int:
        """How many drawn examples all the tasks' property checks ran, for the scorecard."""
        return sum(r.examples for r in self.results)


def versions() -> dict:
    """The versions of what graded the submission (autograd-lab, Python, numpy, torch, Hypothesis): on the scorecard and
    in doctor, so two grades can be compared. torch's is read from its metadata when it is not imported yet, so asking
    imports nothing."""
    torch = sys.modules.get("torch")
    return {"autograd-lab": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__ if torch is not None else metadata.version("torch"),
            "hypothesis": hypothesis.__version__}


def loop_kept(tasks: list[Task], key: int | None) -> bool:
    """Whether a grade with ``key`` has kept the expected values of every loop task among ``tasks`` (5.1 to 6.2:
    ``examples_cache.kept``). Then the judge imports no torch beside the first tasks, and its helper starts only
    for an answer it has not kept (graders.judge.oracles.Kept): a grade like an earlier one needs neither."""
    return all(examples_cache.kept(task.id, key) for task in tasks if task.module in ("train", "torch_loop"))


def import_torch_beside(tasks: list[Task], key: int | None) -> threading.Thread | None:
    """Import torch in a thread of its own while the first tasks run, when the judge will need it: for the expected
    runs of 5.1 to 6.2, unless a grade with this key has kept every one of them (``loop_kept``; the loop's
    oracles, train_epoch and evaluate, compute in a helper process of their own: graders.judge.oracles). A task that
    needs it sooner (a cold grade), or a value that was not kept (a known mistake's run), waits for the import (the
    module's lock)."""
    if "torch" in sys.modules or loop_kept(tasks, key):
        return None
    thread = threading.Thread(target=importlib.import_module, args=("torch",), name="import torch", daemon=True)
    thread.start()
    return thread


def in_course(score: float, status: str, task: Task, points: float | None) -> float:
    """A score of ``task`` in the task table's points as the course's ``points`` (None: the table's): the same share
    of them, to a hundredth; for a task the table gives none (6.2), all of them when it passed."""
    if points is None or points == task.points:
        return score
    if task.points == 0:
        return float(points) if status == PASSED else 0.0
    return round(score * points / task.points, 2)


def run_task(task: Task, check, worker: Worker, lay: layout.Layout, key: int | None,
             deadline: float | None = None, points: float | None = None) -> TaskResult:
    """One task's result from its ``check``; ``deadline`` is the grade's budget in seconds (``grade``), of which
    ``worker`` holds what the tasks before spent; ``points``: the task's points in the course graded (None: the
    table's). The check decides in the table's points, and the score is their share of the course's."""
    ctx = Context(task=task, worker=worker, missing=lay.missing, not_regular=lay.not_regular, key=key,
                  deadline=deadline)
    start = time.perf_counter()
    ctx.begin()
    try:
        if min(ctx.left()) <= 0:
            ctx.past_deadline()
        ctx.require_files(task.module)
        check(ctx)
        status, score, text = PASSED, float(task.points), messages.PASSED.format(task=task.id, title=task.title)
        text = messages.lines(text, *(messages.NOT_GRADED_HERE.format(what=what) for what in ctx.not_graded))
    except NotAttempted as error:
        status, score, text = NOT_ATTEMPTED, 0.0, str(error)
    except CheckFailed as error:
        status, score, text = FAILED, 0.0, str(error)
        if ctx.earned is not None:
            score, what = in_course(ctx.earned[0], FAILED, task, points), ctx.earned[1]
            text = messages.lines(text, messages.PARTIAL_CREDIT.format(
                score=score, points=task.points if points is None else points, what=what))
    except Skip as error:
        status, score, text = SKIPPED, 0.0, str(error)
    except Exception as error:  # noqa: BLE001 - a bug of ours must not hide the other tasks
        status, score = ERROR, 0.0
        text = messages.GRADER_ERROR.format(task=task.id, title=task.title, error=f"{type(error).__name__}: {error}")
        # The student reads the line above; whoever reports it needs where it happened (the judge's stderr: the
        # terminal, grade-all's judge log, nbgrader's log). The judge's own code, never the student's.
        print(messages.GRADER_ERROR_LOG.format(task=task.id, trace="".join(traceback.format_exc())),
              file=sys.stderr, flush=True)
    finally:
        ctx.end()
    if status == PASSED:
        score = in_course(score, status, task, points)
    return TaskResult(task, status, score, text, time.perf_counter() - start, ctx.examples, ctx.data, points)


def grade(submission: Path, *, key: int | None = None, task_ids: tuple[str, ...] | None = None,
          scratch: Path | None = None, isolation: str = "auto", deadline: float | None = GRADE_DEADLINE,
          laid_out: Callable[[], None] | None = None, finished: Callable[[TaskResult], None] | None = None,
          points: Mapping[str, float] | None = None, key_shown: str | None = None, practice: bool = False) -> Report:
    """Grade ``submission``; raises layout.SubmissionError when there is nothing to grade.

    ``points``: each task's points in the course graded (a course file's; None: the task table's). ``key_shown``:
    what the scorecard says of the key instead of the key itself (a key derived from the course's secret is never
    shown to its student: graders.keys.tag).

    ``isolation`` is "auto" (bubblewrap where it works), "bubblewrap" or "limits"; where the grade cannot have it,
    sandbox.Unavailable is raised, unless ``practice`` (a student's own grade) lets "auto" fall back. ``deadline``
    bounds the whole grade in seconds (None: no bound) of its workers' CPU time, and, the backstop for workers that
    do not compute, of their time waited without using the CPU: a request never runs past it, and the tasks still
    to run then fail. Neither counts the time a busy machine keeps them waiting for a CPU.
    ``laid_out`` is called once the submission's files are copied into the grade's own folder: from then on,
    nothing done to the submission's folder changes the grade. ``finished`` is called with each task's result as
    soon as it is made (the CLI's painter draws loss.png from 5.4's while the later tasks run).
    """
    start = time.perf_counter()
    profiled = profile.of(str(submission))  # the speed benchmark's breakdown; does nothing unless it asked
    chosen = sandbox.choose(isolation, practice=practice)
    lay = layout.lay_out(Path(submission), sandbox.scratch_parent(chosen, scratch))
    try:
        if laid_out is not None:
            laid_out()
        tasks = [task for task in TASKS if task_ids is None or task.id in task_ids]
        preload = ("torch",) if any(task.module == "torch_loop" for task in tasks) else ()
        # The workers see only what graders.isolation.listing lists and their own packages: not the folders around
        # the submission (its classmates'), under either isolation.
        with routing.worker(lay, chosen, preload=preload) as worker:
            # The workers start (two import torch) while the judge imports its checks, and torch beside them.
            profiled.started(worker)
            routing.start(worker, tasks, helper=not loop_kept(tasks, key))
            importing = import_torch_beside(tasks, key)
            table = checks()
            results = []
            for task in tasks:
                with profiled.task(task.id):
                    results.append(run_task(task, table[task.id], worker, lay, key, deadline,
                                            None if points is None else points.get(task.id)))
                if finished is not None:
                    finished(results[-1])
            if importing is not None:
                importing.join()  # never left running at exit
            used = (worker.cpu_used, worker.idle_used)
    finally:
        lay.cleanup()
    profiled.write()
    return Report(str(submission), results, time.perf_counter() - start, chosen.describe(), key, versions(),
                  key_shown, used, chosen.level)
