"""One judge of ``grade-all``'s pool: a process that grades the submissions it is sent, one at a time.

    python -m graders.classgrade.batch_judge

It reads one job per line on stdin (JSON: student, path, out, key, tasks,
isolation), grades it exactly as ``autograd-lab grade`` does, writes the
student's files into ``out`` (results.json, scorecard.md, loss.png) and answers
one JSON line on stdout: the status, the points per task and the total. What
grading itself prints goes to stderr (the pool's log), never into the answers.
BLAS and torch run one thread each, since the pool runs one judge per core.
SIGTERM stops it cleanly: its worker is killed and its scratch folder removed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from graders.judge.processes import THREADS_ENV  # only os: nothing here loads numpy before the pin


def pin_threads() -> None:
    """One thread each for BLAS (set before numpy loads) and torch."""
    os.environ.update(THREADS_ENV)
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work already started
        pass


def grade_job(job: dict, *, warn=None) -> dict:
    """Grade one job; the answer for the pool. Never raises for anything the submission does."""
    from graders import messages as msg
    from graders import pipeline
    from graders.judge import layout
    from graders.judge.grade import ERROR
    from graders.results import outputs

    out = Path(job["out"])
    try:
        graded = pipeline.grade_submission(Path(job["path"]), name=job["student"], key=job.get("key"),
                                           tasks=tuple(job["tasks"]) if job.get("tasks") else None,
                                           isolation=job.get("isolation", "auto"))
    except layout.SubmissionError as error:
        # The row names the student: the path or the name is left out.
        reason = str(error)
        for prefix in (f"{job['path']}: ", f"{job['student']}: "):
            reason = reason.removeprefix(prefix)
        return {"status": msg.BATCH_MALFORMED.format(reason=reason)}
    report, result = graded.report, graded.result
    outputs.write_views(report, result, results=out / "results.json", markdown_path=out / "scorecard.md", warn=warn)
    errors = [r.task.id for r in report.results if r.status == ERROR]
    status = msg.BATCH_GRADER_ERROR.format(tasks=", ".join(errors)) if errors else msg.BATCH_GRADED
    return {"status": status, "total": result["score"], "scores": {t["number"]: t["score"] for t in result["tests"]}}


def _stop(signum, frame):
    raise SystemExit(128 + signum)


def serve(requests=sys.stdin) -> None:
    """Answer one line per job until stdin closes."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # anything grading prints goes to the log
    signal.signal(signal.SIGTERM, _stop)
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
        try:
            answer = grade_job(job, warn=warn)
        except Exception as error:  # noqa: BLE001 - a bug of ours costs this submission, not the batch
            answer = {"status": msg.BATCH_CRASHED.format(reason=f"{type(error).__name__}: {error}")}
        answer["notes"] = warned[:]
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    serve()
