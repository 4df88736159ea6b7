"""Pictures, where people would rather look than read: a student's loss curve, a class's totals and pass rates.

Drawn with matplotlib, a dependency of the package (a machine may still lack it: a copy installed without it);
without it every function here draws nothing and says so once. The loss curve
comes from the grading itself: task 5.4 records the student's ``train_loss``
per epoch on the lesson's run (``TaskResult.data``); the reference curve is the
reference solution's on the same run.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import statistics
import subprocess
import sys
import threading
from pathlib import Path

from graders import lesson
from graders import messages as msg
from graders.lesson import BAR, NOISE_FLOOR

LOSS_PNG = "loss.png"
LOSS_MARGINS = {"left": 0.12, "right": 0.97, "bottom": 0.12, "top": 0.87}  # of loss.png's 6.4 x 4.0 inches
PAINTER_NICENESS = 10
PAINT_TIMEOUT = 60.0  # seconds the painter may take to draw, once it has the data
TOTALS_PNG = "class_totals.png"
PASS_RATES_PNG = "class_pass_rates.png"


def available() -> bool:
    """Whether matplotlib is installed (the ``plots`` extra), checked without importing it."""
    return importlib.util.find_spec("matplotlib") is not None


class Painter:
    """loss.png drawn by a process of its own, started before a grade: matplotlib's import (half a second) runs on
    another core while the grade runs, rather than after it or beside it under the judge's lock on the
    interpreter. ``give`` hands it the curve as soon as task 5.4 has it (``finished``), so that it draws while the
    tasks after 5.4 run; ``draw`` gives the PNG's bytes (the same as ``loss_png``'s), or None: then the caller
    draws."""

    def __init__(self):
        here = str(Path(__file__).resolve().parents[2])  # where graders is: never the working folder (-I)
        code = f"import sys; sys.path.insert(0, {here!r}); from graders.results.pictures import _paint; _paint()"
        self.process = subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._given: dict | None = None  # the data ``give`` sent, and the thread that waits for its picture
        self._drawing: threading.Thread | None = None
        self._png: bytes | None = None

    def finished(self, result) -> None:
        """A task's result, as the grade makes it (graders.judge.grade.grade's ``finished``): the lesson's run's curve
        goes to the painter at once."""
        data = result_loss_data(result)
        if data is not None:
            self.give(data)

    def give(self, data: dict | None) -> None:
        """Send ``data`` to be drawn now; ``draw`` with the same data then only waits for the picture. Once only; data
        that will not go (not JSON) is left for ``draw``, whose caller then draws it itself."""
        if self._drawing is not None:
            return
        try:
            payload = json.dumps(data).encode()
        except (TypeError, ValueError):
            return
        self._given = data
        self._drawing = threading.Thread(target=self._communicate, args=(payload,), name="painter", daemon=True)
        self._drawing.start()

    def _communicate(self, payload: bytes) -> None:
        try:
            png, _ = self.process.communicate(payload, timeout=PAINT_TIMEOUT)
        except Exception:  # noqa: BLE001 - in the painter's thread too: whatever stops it, the caller draws
            return
        self._png = png if self.process.returncode == 0 and png.startswith(b"\x89PNG") else None

    def draw(self, data: dict | None) -> bytes | None:
        """The PNG of the loss curve for ``data``, drawn by the painter process; None when it fails, takes longer than
        PAINT_TIMEOUT, or was given other data (the caller then draws it itself), so a stuck painter never holds up
        the grade."""
        self.give(data)  # unless given already
        if self._drawing is not None:
            self._drawing.join(PAINT_TIMEOUT)
        if self._drawing is None or self._drawing.is_alive() or self._png is None:
            self.close()
            return None
        return self._png if data == self._given else None

    def close(self) -> None:
        """Stop the painter process if it still runs, let the thread waiting for its picture end, and close its
        pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self._drawing is not None and self._drawing is not threading.current_thread():
            self._drawing.join(PAINT_TIMEOUT)  # its communicate ends with the process's pipes
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()

    @classmethod
    def start(cls) -> Painter | None:
        """A painter, where matplotlib is installed and not yet imported here; else None."""
        return cls() if available() and "matplotlib.figure" not in sys.modules else None


def _paint() -> None:
    """The painter's process: matplotlib first, then the picture of the data on stdin (null: none) to stdout. At a
    lower priority than the grade's own processes: it has the whole grade to import in, and on a machine whose cores
    the grade keeps busy (the judge, its workers, torch's import) it should take what they leave."""
    os.nice(PAINTER_NICENESS)
    _figure(1, 1)  # matplotlib's import, before the data comes
    data = json.loads(sys.stdin.buffer.read() or b"null")
    if data is not None:
        sys.stdout.buffer.write(loss_png(data))


def _figure(width: float, height: float):
    """A figure and its one axes, drawn by matplotlib's Agg canvas: its object API, without pyplot's (a quarter of
    matplotlib's import, and no figure kept in a global registry to close)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    # No timestamps or versions in the file: the same curve gives the same bytes.
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def loss_data(report) -> dict | None:
    """What task 5.4 recorded for the picture: the student's curve and the grader's MSE; None without a curve."""
    for result in report.results:
        data = result_loss_data(result)
        if data is not None:
            return data
    return None


def result_loss_data(result) -> dict | None:
    """``loss_data`` of one task's result: the picture's data where it is the lesson's run (task 5.4) with a curve."""
    if not result.task.whole_stack:  # the lesson's run, whose curve the picture draws
        return None
    data = getattr(result, "data", None) or {}
    losses = data.get("train_loss")
    if isinstance(losses, list) and losses:
        return {"train_loss": losses, "lesson_mse": data.get("lesson_mse"),
                "reference_loss": data.get("reference_loss"), "lesson_data": data.get("lesson_data", True)}
    return None


def loss_png(data: dict) -> bytes:
    """The student's training loss per epoch against the noise floor, the bar and the reference curve."""
    figure, axes = _figure(6.4, 4.0)
    # The stored reference curve is the lesson data's run: a grade on data drawn from a key has none to show.
    reference = data.get("reference_loss") or (lesson.reference_curve() if data.get("lesson_data", True) else ())
    yours = [v if v > 0 else float("nan") for v in data["train_loss"]]
    axes.plot(range(1, len(yours) + 1), yours, color="tab:blue", linewidth=2.4, alpha=0.8, label=msg.LOSS_YOURS)
    if reference:
        axes.plot(range(1, len(reference) + 1), reference, color="black", linestyle="--", linewidth=1.0,
                  label=msg.LOSS_REFERENCE)  # on top, so that it shows where the two curves coincide
    axes.axhline(NOISE_FLOOR, color="tab:green", linewidth=1.0, label=msg.LOSS_FLOOR.format(floor=NOISE_FLOOR))
    axes.axhline(BAR, color="tab:red", linestyle=":", linewidth=1.2, label=msg.LOSS_BAR.format(bar=BAR))
    axes.set_yscale("log")
    axes.set_xlabel(msg.LOSS_AXES[0])
    axes.set_ylabel(msg.LOSS_AXES[1])
    title = msg.LOSS_TITLE
    if isinstance(data.get("lesson_mse"), float):
        title += "\n" + msg.LOSS_FINAL.format(mse=data["lesson_mse"])
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=8, loc="upper right")
    axes.grid(True, which="both", alpha=0.25)
    # Fixed margins, not tight_layout: the labels are the same few words for every student, and measuring them took
    # 40% of the picture's time, which grade-all pays once a student.
    figure.subplots_adjust(**LOSS_MARGINS)
    return _png(figure)


def totals_png(totals: list[float], max_score: float) -> bytes:
    """A histogram of the graded submissions' totals, in bins of 5 points."""
    figure, axes = _figure(6.4, 3.6)
    top = max(5, int(max_score + 4.999) // 5 * 5)
    axes.hist(totals, bins=range(0, top + 6, 5), color="tab:blue", edgecolor="white")
    axes.set_xlim(0, top + 5)
    axes.set_xlabel(msg.CLASS_TOTALS_AXES[0])
    axes.set_ylabel(msg.CLASS_TOTALS_AXES[1])
    axes.yaxis.get_major_locator().set_params(integer=True)
    mean = statistics.fmean(totals) if totals else 0.0
    median = statistics.median(totals) if totals else 0.0
    axes.set_title(msg.CLASS_TOTALS_TITLE.format(graded=len(totals), mean=mean, median=median), fontsize=10)
    figure.tight_layout()
    return _png(figure)


def pass_rates_png(rates: dict[str, float], graded: int) -> bytes:
    """One bar per task: the share of graded students who got the task's full points."""
    ids = list(rates)
    figure, axes = _figure(6.4, 0.25 * len(ids) + 1.4)
    values = [100 * rates[t] for t in ids]
    axes.barh(ids, values, color=["tab:green" if v >= 50 else "tab:orange" for v in values])
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    for y, value in enumerate(values):
        axes.text(min(value + 1, 88), y, f"{value:.0f}%", va="center", fontsize=7)
    axes.set_xlabel(msg.CLASS_PASS_AXES[0])
    axes.set_ylabel(msg.CLASS_PASS_AXES[1])
    axes.tick_params(axis="y", labelsize=8)
    axes.set_title(msg.CLASS_PASS_TITLE.format(graded=graded), fontsize=10)
    figure.tight_layout()
    return _png(figure)
