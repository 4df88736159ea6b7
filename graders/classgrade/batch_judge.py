"""One judge of ``grade-all``'s pool: a process that grades the submissions it is sent, one at a time.

    python -m graders.classgrade.batch_judge

It reads one job per line on stdin (JSON: student, path, out, key, tasks,
isolation, and the course's points and what the scorecard says of the key:
graders.course.course_file.grading), grades it exactly as ``autograd-lab grade``
does, writes the
student's files into ``out`` (results.json, scorecard.md, loss.png) and answers
one JSON line on stdout: the status, the points per task and the total. What
grading itself prints goes to stderr (the pool's log), never into the answers.
BLAS and torch run one thread each, since the pool runs one judge per core.
SIGTERM stops it cleanly: its worker is killed and its scratch folder removed.

nbgrader's judge (graders.integrations.nbgrader_judge) is one too. Its jobs have
no ``out`` and ask ``with_result`` (the results dict comes in the answer) and
``tell_laid_out`` (a line ``{"laid_out": true}`` once the files are copied, before
the answer). ``PARENT_ENV`` names the process it dies with (SIGTERM), where its
parent cannot set that up before exec.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

# nothing here loads numpy before the pin
from graders.isolation.processes import PR_SET_PDEATHSIG, THREADS_ENV, exit_without_teardown

PARENT_ENV = "AGL_JUDGE_PARENT"


def pin_threads() -> None:
    """One thread each for BLAS and torch: set before numpy loads, and read by torch when the grade imports it
    (beside its first tasks, as ``autograd-lab grade`` does: not before the judge says it is ready)."""
    os.environ.update(THREADS_ENV)


def grade_job(job: dict, *, warn=None, laid_out=None) -> dict:
    """Grade one job; the answer for the pool. Never raises for anything the submission does. ``laid_out``: called
    once the files are copied (graders.judge.grade.grade)."""
    from graders import messages as msg
    from graders import pipeline
    from graders.isolation import sandbox
    from graders.judge.grade import ERROR
    from graders.results import mistakes, outputs
    from graders.submission import layout

    try:
        graded = pipeline.grade_submission(Path(job["path"]), name=job["student"], key=job.get("key"),
                                           tasks=tuple(job["tasks"]) if job.get("tasks") else None,
                                           isolation=job.get("isolation", "auto"), laid_out=laid_out,
                                           points=job.get("points"), key_shown=job.get("key_shown"))
    except layout.SubmissionError as error:
        # The row names the student: the path or the name is left out.
        reason = str(error)
        for prefix in (f"{job['path']}: ", f"{job['student']}: "):
            reason = reason.removeprefix(prefix)
        return {"status": msg.BATCH_MALFORMED.format(reason=reason), "reason": reason}
    except sandbox.Unavailable as error:  # the isolation asked for cannot be had here: nobody is graded without it
        return {"status": msg.BATCH_REFUSED.format(reason=error), "reason": str(error)}
    report, result = graded.report, graded.result
    if job.get("out"):
        out = Path(job["out"])
        outputs.write_views(report, result, results=out / "results.json", markdown_path=out / "scorecard.md",
                            warn=warn)
    errors = [r.task.id for r in report.results if r.status == ERROR]
    # The tasks whose verdict rests on wall time: a worker that waited without computing (the result's reading).
    idle = [t["number"] for t in result["tests"] if t["extra_data"].get("rung") == mistakes.IDLE]
    status = msg.BATCH_GRADER_ERROR.format(tasks=", ".join(errors)) if errors else \
        msg.BATCH_GRADED_IDLE.format(tasks=", ".join(idle)) if idle else msg.BATCH_GRADED
    answer = {"status": status, "total": result["score"], "scores": {t["number"]: t["score"] for t in result["tests"]},
              "isolation": report.level}
    if job.get("with_result"):
        answer["result"] = result
    return answer


def _stop(signum, frame):
    raise SystemExit(128 + signum)


def _stop_with(parent: str | None) -> None:
    """SIGTERM when ``parent`` (a pid) dies; gone at once if it has died already."""
    if not parent:
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != int(parent):
        raise SystemExit(128 + signal.SIGTERM)


def serve(requests=sys.stdin) -> None:
    """Answer one line per job until stdin closes."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # anything grading prints goes to the log
    signal.signal(signal.SIGTERM, _stop)
    _stop_with(os.environ.pop(PARENT_ENV, None))
    warned = []

    def warn(line: str) -> None:
        if line not in warned:
            warned.append(line)
            print(line, file=sys.stderr)

    pin_threads()
    from graders import messages as msg

    answers.write(json.dumps({"ready": True}) + "\n")
    for line in requests:
        job = json.loads(line)
        laid_out = (lambda: answers.write(json.dumps({"laid_out": True}) + "\n")) if job.get("tell_laid_out") else None
        try:
            answer = grade_job(job, warn=warn, laid_out=laid_out)
        except Exception as error:  # noqa: BLE001 - a bug of ours costs this submission, not the batch
            reason = f"{type(error).__name__}: {error}"
            answer = {"status": msg.BATCH_CRASHED.format(reason=reason), "reason": reason}
        answer["notes"] = warned[:]
        answers.write(json.dumps(answer) + "\n")


def main() -> None:
    """serve(), then out without tearing torch down (``exit_without_teardown``), at its input's end or at SIGTERM
    alike: the grade under way (its workers, its folder) is stopped as the SystemExit unwinds it."""
    try:
        serve()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    exit_without_teardown(code)


if __name__ == "__main__":
    main()
