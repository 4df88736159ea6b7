"""Where a worker's CPU goes, for the speed benchmark only (tests/benchmarks/speed.py): the student's code, the
stand-ins it computes with (the loop tasks' torch-backed Tensor and optimizers), or the worker's own code.

Off unless the judge started the worker with ``ENV`` set (graders.isolation.worker_process, when the judge's
``$AGL_PROFILE`` is set): then nothing here is imported or installed, and a grade runs as it always does. On, a
profiling timer (``ITIMER_PROF``, CPU time of the process) interrupts the worker every ``INTERVAL`` seconds of CPU,
and the CPU spent since the last interruption goes to the innermost frame on the stack that is either the student's
(a module of the packages the judge laid out) or the worker's; a library frame (numpy, torch) counts as whoever
called it. A long call that holds the interpreter delays the signal: its CPU goes, whole, to the frame that made the
call, which is the one that asked for it.

The worker writes its running totals to its stdout (a size-capped log the judge reads, ``MARK`` lines) after every
answer. These figures are the worker's word, so they never earn a point: the benchmark divides the CPU the judge reads
from /proc between them, and nothing that grades reads them.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from .protocol import PROFILE_ENV as ENV  # the wire's: the judge sets the one and reads the other
from .protocol import PROFILE_MARK as MARK

INTERVAL = 0.002  # seconds of CPU between samples: about 1 % of a worker's CPU for the handler
REPORT_EVERY = 0.1  # seconds of CPU between reports in the middle of a long request


class Sampler:
    """The running CPU totals of one worker process, by whose code spent them."""

    def __init__(self, packages: set[str]):
        self.packages = packages
        self.student = self.standins = 0.0
        self.last = self.reported = time.process_time()

    def _whose(self, frame) -> str | None:
        """'student', 'standins' or 'worker' for the innermost frame that is one of them; None for none."""
        while frame is not None:
            name = str(frame.f_globals.get("__name__", ""))
            top = name.partition(".")[0]
            if top in self.packages:
                return "student"
            if top == "worker":
                return "standins" if name == "worker.standins" else "worker"
            frame = frame.f_back
        return None

    def sample(self, signum=None, frame=None) -> None:
        """The signal handler: the CPU since the last sample, to the code on ``frame``'s stack."""
        now = time.process_time()
        spent, self.last = now - self.last, now
        whose = self._whose(frame)
        if whose == "student":
            self.student += spent
        elif whose == "standins":
            self.standins += spent
        if now - self.reported > REPORT_EVERY:  # a request the judge stops (its deadline) leaves its totals too
            self.report()

    def report(self) -> None:
        """Write the running totals to stdout (fd 1, whatever the student's code did to ``sys.stdout``)."""
        self.reported = time.process_time()
        line = f" {self.student:.6f} {self.standins:.6f} {time.process_time():.6f}\n".encode()
        try:
            os.write(1, MARK + line)
        except OSError:
            pass


def start(package_root: str) -> Sampler | None:
    """A running sampler when the judge asked for one (``ENV``, removed here so that the student's code does not
    see it), else None."""
    if os.environ.pop(ENV, None) != "1":
        return None
    sampler = Sampler(set(os.listdir(package_root)))
    signal.signal(signal.SIGPROF, sampler.sample)
    signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)
    sys.stdout.flush()
    return sampler
