"""Where a grade's CPU goes, task by task, for the speed benchmark (tests/benchmarks/speed.py): the student's code,
the worker's own overhead, the judge, and the processes that start and carry them.

Off unless ``$AGL_PROFILE`` (graders.isolation.processes.PROFILE_ENV) names a folder: then each grade appends one
JSON line to ``<folder>/<judge's pid>.jsonl`` (so ``grade-all``'s judges never write the same file), and the workers
sample where their CPU goes (graders.worker.profiling). Off, ``of`` gives ``NOTHING``, whose steps do nothing, and
no figure is read. Nothing here changes a grade: the figures go to that folder only, never into a result.

Every figure is CPU seconds, read between two points of the grade (``Reading``):

- ``judge``: the judge's process (``getrusage``: every thread, Hypothesis, the examples cache, the checks, torch's
  import beside them) and its oracle helper (/proc: the loop's expected runs with torch);
- ``worker``, ``student``, ``standins``: every worker process (/proc, read by the judge), and the shares its sampler
  says went to the student's code and to the stand-ins (graders.worker.profiling);
- ``starts``: what starts and carries the workers, the judge's fork servers (/proc) and its waited-for children
  (``getrusage``: bubblewrap's processes); and the cost rungs' numpy baseline, a process the judge keeps (/proc);
- ``wall``: seconds, of which ``waiting`` is the part that none of the above spent (the round trips, process
  starts waited for, the machine's other load).
"""

from __future__ import annotations

import json
import os
import resource
import time
from contextlib import contextmanager
from pathlib import Path

from graders.isolation import fork_servers
from graders.isolation.processes import PROFILE_ENV, stat_cpu
from graders.judge import numpy_baseline, oracles


def _rusage(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class Reading:
    """Every counter at one point of a grade. The CPU of the helper, the fork servers and the numpy baseline is kept as
    the most seen of each process, so one that ends between two readings keeps what it had spent."""

    def __init__(self, profile: Profile, worker=None):
        self.values = {"wall": time.perf_counter(), "judge": _rusage(resource.RUSAGE_SELF),
                       "children": _rusage(resource.RUSAGE_CHILDREN)}
        for name, pids in (("helper", oracles.pids()), ("servers", fork_servers.pids()),
                           ("baseline", numpy_baseline.pids())):
            for pid in pids:
                profile.seen[(name, pid)] = max(profile.seen.get((name, pid), 0.0), stat_cpu(pid))
            self.values[name] = sum(value for (kind, _), value in profile.seen.items() if kind == name)
        account = worker.account() if worker is not None else {}
        for name in ("worker", "student", "standins", "round_trips", "starts"):
            self.values[f"worker_{name}"] = account.get(name, 0)

    def since(self, before: Reading) -> dict:
        """The figures between ``before`` and this reading."""
        d = {name: self.values[name] - before.values[name] for name in self.values}
        row = {"wall": d["wall"], "judge": d["judge"] + d["helper"], "worker": d["worker_worker"],
               "student": d["worker_student"], "standins": d["worker_standins"],
               "starts": d["children"] + d["servers"] + d["baseline"], "round_trips": d["worker_round_trips"],
               "processes": d["worker_starts"]}
        row["waiting"] = max(0.0, row["wall"] - row["judge"] - row["worker"] - row["starts"])
        return {name: round(value, 4) for name, value in row.items()}


class Profile:
    """One grade's figures: a row for its set-up (before the first task), one per task, one for its end."""

    def __init__(self, folder: Path, submission: str):
        self.folder, self.submission = folder, submission
        self.seen: dict[tuple[str, int], float] = {}
        self.worker = None
        self.rows: list[dict] = []
        self.start = self.last = Reading(self)

    def _row(self, name: str) -> None:
        now = Reading(self, self.worker)
        self.rows.append({"task": name, **now.since(self.last)})
        self.last = now

    def started(self, worker) -> None:
        """The grade's worker handle is made: its processes count from here."""
        self.worker = worker

    @contextmanager
    def task(self, task_id: str):
        """Around one task's checks: everything since the last row is the set-up's, and the task's own row."""
        if not self.rows:
            self._row("setup")
        yield
        self._row(task_id)

    def write(self) -> None:
        """The last row (the workers stopped, the grade's folder removed) and the grade's line in the folder."""
        self._row("end")
        line = {"submission": self.submission, "pid": os.getpid(), "rows": self.rows,
                "process": {"judge_total": round(_rusage(resource.RUSAGE_SELF), 4)}}
        with open(self.folder / f"{os.getpid()}.jsonl", "a") as f:
            f.write(json.dumps(line) + "\n")


class _Nothing:
    """What a grade profiles with when no one asked: every step does nothing."""

    def started(self, worker) -> None:
        pass

    @contextmanager
    def task(self, task_id: str):
        yield

    def write(self) -> None:
        pass


NOTHING = _Nothing()


def of(submission: str) -> Profile | _Nothing:
    """The profile of a grade of ``submission``: a real one only where ``$AGL_PROFILE`` names a folder."""
    folder = os.environ.get(PROFILE_ENV)
    return Profile(Path(folder), submission) if folder else NOTHING
