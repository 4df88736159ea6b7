"""grade-all's progress: how many students are graded, at what rate, and when it will end, in one line that a
terminal rewrites in place and a log gets once per student."""

import sys
import time
from collections.abc import Callable

from graders import messages as msg
from graders.classgrade.gradebook import Record
from graders.isolation.worker_process import untrusted


class Progress:
    """Count, rate and ETA, one line per finished submission (rewritten in place on a terminal)."""

    def __init__(self, total: int, skipped: int, emit: Callable[[str, bool], None] | None, clock=time.monotonic):
        self.total, self.skipped, self.emit, self.clock = total, skipped, emit, clock
        self.finished = self.failed = 0
        self.start = clock()

    def done(self, record: Record) -> None:
        """Count one finished submission and emit the progress line: done out of total, failures, the rate per minute,
        the time left and the last student, whose name is cleaned of any escape sequence."""
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


def terminal_progress(stream=None) -> Callable[[str, bool], None]:
    """Progress lines for ``stream`` (sys.stderr as it is at the call, not at import: a test may have replaced it
    since): rewritten in place on a terminal, one per line in a log."""
    stream = sys.stderr if stream is None else stream
    interactive = stream.isatty()

    def emit(line: str, final: bool) -> None:
        if interactive:
            stream.write("\r\x1b[K" + line + ("\n" if final else ""))
        else:
            stream.write(line + "\n")
        stream.flush()

    return emit
