"""The same checks with the submission imported into the judge's own process.

For the benchmark only, to measure what isolation costs: grading this way is
exactly what docs/design.md forbids: a judge that imports student code (which
could then patch the judge).

The worker's code is imported from the grade's own copy (``layout.runtime``), as
every worker imports it, so the hybrids' ``from worker.standins import ...`` find
it; the oracle calls the student's code makes in the middle of a request
(``worker.oracles``) are answered by the judge's own answers
(graders.judge.routing.Calls), in this process, not over a pipe.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from graders.isolation import processes, work_files
from graders.judge import routing
from graders.worker import protocol


class InProcessWorker:
    """Answers requests like graders.isolation.worker_process.Worker, but in this process."""

    process = object()  # never "stopped": there is no process to lose

    def __init__(self, layout):
        self.layout = layout
        self.last_cpu_seconds = 0.0
        self.last_memory_growth: int | None = None  # as Worker's: how far the peak memory rose over a measured request
        self.cpu_used = self.idle_used = 0.0  # what a grade's deadline counts (Worker's): the CPU of every request
        self.oracle_failure: str | None = None
        self.round_trips = 0
        sys.path[:0] = [str(layout.runtime), str(layout.packages)]
        self.main = importlib.import_module("worker.main")
        verbs = importlib.import_module("worker.verbs")
        verbs.Serving.package_root = str(layout.packages)
        self.main.VERBS.update(self.main.verbs())
        importlib.import_module("worker.oracles").ask_judge = self._ask_judge
        self._calls = routing.Calls(())  # the answers to the oracle calls of the request being answered
        self.work = Path(tempfile.mkdtemp(prefix="agl-inprocess-work-"))  # the working folder every request runs in

    def _ask_judge(self, name: str, **args):
        """worker.verbs.ask_judge, answered here: the judge's answer to the oracle call, round-tripped as over the
        pipe; a refusal raises ValueError, as the worker's does."""
        answer = self._calls({"name": name, "args": _round_trip(args)}, time.monotonic() + 600.0)
        self.oracle_failure = self._calls.failure
        if "value" not in answer:
            raise ValueError(answer.get("refused", "the judge would not answer"))
        return _round_trip(answer["value"])

    def request(self, verb, args, timeout, *, idle=None, measure_cpu=False, measure_memory=False):
        self.round_trips += 1
        self.oracle_failure = None
        self._calls = routing.calls(routing.group_of(verb, args))  # offered what the worker of its group is
        # the peak memory of this process, as the judge reads a worker's (whatever the judge holds counts too here)
        memory_before = processes.reset_peak_memory(os.getpid()) if measure_memory else None
        start, here = time.process_time(), os.getcwd()
        os.chdir(self.work)
        try:
            reply = self.main._answer({"verb": verb, "args": _round_trip(args)})
        finally:
            os.chdir(here)
        self.last_cpu_seconds = time.process_time() - start
        self.cpu_used += self.last_cpu_seconds
        self.last_memory_growth = processes.peak_memory_growth(os.getpid(), memory_before)
        return _round_trip(reply)

    @contextlib.contextmanager
    def work_folder(self, verb, args):
        """The requests' working folder, opened as the judge opens a worker's (graders.isolation.work_files)."""
        with work_files.opened(self.work) as folder:
            yield folder

    def owner(self, verb, args) -> None:
        """Files the judge writes for a request are this process's own."""
        return None

    def request_batch(self, requests, timeout, *, idle=None):
        """One reply a request, each answered as if asked alone (a batch is only fewer round trips)."""
        return [self.request(verb, args, timeout) for verb, args in requests]

    def last_words(self) -> str:
        return ""

    def stop(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        for path in (str(self.layout.runtime), str(self.layout.packages)):
            if path in sys.path:
                sys.path.remove(path)
        for name in [m for m in sys.modules if m.split(".")[0] in ("worker", "ref", "sub_all") or m.startswith("sub_")]:
            del sys.modules[name]


def _round_trip(value):
    """A value as the other side of the pipe would see it: arrays copied, tuples as lists."""
    data = protocol.encode(value)
    view = memoryview(data)

    def read_exactly(n):
        nonlocal view
        chunk, view = bytes(view[:n]), view[n:]
        return chunk

    return protocol.decode(read_exactly)
