"""One submission's way through the graders: intake, the judge's grade, the canonical result.

``autograd-lab grade``, each judge of ``grade-all``, the Gradescope runner and nbgrader's ``JudgeGrades`` all
call ``grade_submission``, so all four take the same submissions (a folder laid out like exercises/, the folder
above one, or a .zip of either) and give the same scores; each then renders the views it needs from the result
(graders.results.outputs).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from graders.submission import intake
from graders.submission.layout import SubmissionError
from graders.tasks import GRADE_DEADLINE


@dataclass(frozen=True)
class Graded:
    """What grading one submission gives: the judge's report (each task's result and what it recorded) and the canonical
    result every view is rendered from."""
    report: object  # graders.judge.grade.Report: the checks' results, with what each recorded
    result: dict  # Gradescope's results.json, the canonical result every view is rendered from


def grade_submission(path: Path, *, name: str | None = None, key: int | None = None,
                     tasks: tuple[str, ...] | None = None, isolation: str = "auto",
                     deadline: float | None = GRADE_DEADLINE, laid_out: Callable[[], None] | None = None,
                     finished: Callable | None = None, points: Mapping[str, float] | None = None,
                     key_shown: str | None = None, practice: bool = False) -> Graded:
    """Unpack and locate the submission at ``path`` (``name``: the student's, for messages), grade it, and give
    its report and result. Raises graders.submission.layout.SubmissionError where there is nothing to grade and
    graders.isolation.sandbox.Unavailable (a RuntimeError) where the isolation asked for is not to be had: the caller
    says so in its own format. ``practice``: a student's own grade, which may settle below bubblewrap
    (graders.isolation.sandbox.choose).
    ``laid_out``: called once the files graded are copied; ``finished``: with each task's result as it is made;
    ``points``: each task's points in the course graded; ``key_shown``: what the scorecard says of the key
    (graders.judge.grade.grade). A course file gives ``tasks``, ``points``, ``key`` and ``key_shown`` together
    (graders.course.course_file.grading)."""
    from graders.judge.grade import grade  # imports torch: only when grading
    from graders.results import scorecard

    path = folder = Path(path)
    submission = intake.Submission(name or path.name, path)
    with tempfile.TemporaryDirectory(prefix="agl-unpacked-") as scratch, \
            tempfile.TemporaryDirectory(prefix="agl-torch-") as cache:
        # torch.optim (the witness of task 3) makes a cache folder in the temp folder: one of this grade's own,
        # unless the caller gave one (grade-all gives each judge its own).
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", cache)
        try:
            folder = intake.unpack(submission, Path(scratch))
            report = grade(folder, key=key, task_ids=tasks, isolation=isolation, deadline=deadline,
                           laid_out=laid_out, finished=finished, points=points, key_shown=key_shown,
                           practice=practice)
        except SubmissionError as error:  # named by the path given, not by the scratch folder it was unpacked in
            if folder != path and str(error).startswith(f"{folder}: "):
                raise SubmissionError(f"{path}: {str(error).removeprefix(f'{folder}: ')}") from None
            raise
        finally:
            if os.environ.get("TORCHINDUCTOR_CACHE_DIR") == cache:
                del os.environ["TORCHINDUCTOR_CACHE_DIR"]
    return Graded(report, scorecard.results(report))
