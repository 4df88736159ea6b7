"""The same checks with the submission imported into the judge's own process.

For the benchmark only, to measure what isolation costs: grading this way is
exactly what docs/design.md forbids: a judge that imports student code (which
could then patch the judge).
"""

from __future__ import annotations

import sys
import time

from graders.worker import main as worker_main
from graders.worker.verbs import Serving


class InProcessWorker:
    """Answers requests like graders.isolation.worker_process.Worker, but in this process."""

    process = object()  # never "stopped": there is no process to lose

    def __init__(self, layout):
        self.layout = layout
        self.last_cpu_seconds = 0.0
        Serving.package_root = str(layout.packages)
        sys.path.insert(0, str(layout.packages))
        worker_main.VERBS.update(worker_main.verbs())

    def request(self, verb, args, timeout, *, measure_cpu=False):
        start = time.process_time()
        reply = worker_main._answer({"verb": verb, "args": args})
        self.last_cpu_seconds = time.process_time() - start
        return _round_trip(reply)

    def last_words(self) -> str:
        return ""

    def stop(self) -> None:
        sys.path.remove(str(self.layout.packages))
        for name in [m for m in sys.modules if m.split(".")[0] in ("ref", "sub_all") or m.startswith("sub_")]:
            del sys.modules[name]


def _round_trip(reply):
    """Claims as the judge would see them after the pipe: arrays copied, tuples as lists."""
    from graders.worker import protocol

    data = protocol.encode(reply)
    view = memoryview(data)

    def read_exactly(n):
        nonlocal view
        chunk, view = bytes(view[:n]), view[n:]
        return chunk

    return protocol.decode(read_exactly)
