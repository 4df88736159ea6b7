"""nbgrader's trusted step: the scores come from the judge, never from the notebook's kernel.

``autograd-lab nbgrader`` writes an ``nbgrader_config.py`` that puts two preprocessors of this module
around nbgrader's ``Execute`` in ``Autograde.autograde_preprocessors``, and runs the kernel in a jail:

- ``JudgeGrades`` runs before ``Execute``, in the instructor's nbgrader process, before any of the
  student's code has run at all: it starts grading the ``.py`` files of the notebook's folder with the same
  judge and sandboxed workers as ``autograd-lab grade`` (the judge never imports them), and returns once the
  judge has copied them into the grade's own folder. The grade goes on beside ``Execute`` (in the one thread
  of this process that grades), so the kernel's run costs no time of its own; what the kernel does to the
  folder cannot change what is graded. It tags the graded cells ``skip-execution``, so the kernel does not
  run their visible checks (which are for the student, and whose outputs would be replaced);
- ``JudgeScores`` runs after ``Execute`` and before ``SaveAutoGrades``: it waits for the grade (``judged``)
  and sets the outputs of every graded cell to the judge's message for its task and the task's points,
  whatever the kernel printed; ``SaveAutoGrades`` records those points. The setup cell (0 points) is left as
  the kernel ran it;
- ``JailedKernelManager`` starts the kernel through ``graders.integrations.kernel_jail``: under bubblewrap (no write
  access anywhere but a private /tmp, the course folder and the checkout hidden but for this student's
  own folder, read-only), as an unprivileged uid where nbgrader runs as root. What the notebook runs, the
  visible checks and any cell a student added, can change only that student's own outputs, and those no
  longer decide a score.
"""

from __future__ import annotations

import concurrent.futures
import os
import secrets
import sys
import threading
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Int, Unicode

from graders import messages as msg
from graders.judge import layout
from graders.tasks import BY_ID

RESOURCE = "autograd_lab"  # the key of the scorecard in nbgrader's resources
SKIP = "skip-execution"  # nbclient's tag for a cell that Execute leaves alone (NotebookClient.skip_cells_with_tag)


def task_of(cell) -> str | None:
    """The task id of a graded cell (``grade_id`` ``task_1_4`` is task 1.4), or None."""
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    if not grade_id.startswith("task_"):
        return None
    task_id = grade_id.removeprefix("task_").replace("_", ".")
    return task_id if task_id in BY_ID else None


def grade_folder(folder: Path, key: int | None = None, isolation: str = "auto", laid_out=None) -> dict:
    """The results dict (Gradescope's schema, as ``autograd-lab grade --results`` writes it) of the .py files
    in ``folder``; ``{"error": text}`` when they cannot be graded at all. ``laid_out``: called once the files
    are copied (graders.judge.grade.grade)."""
    from graders import pipeline  # imports torch at the first grade: once per nbgrader process

    try:
        return pipeline.grade_submission(folder, key=key, isolation=isolation, laid_out=laid_out).result
    except (layout.SubmissionError, RuntimeError) as error:
        return {"error": msg.NOTEBOOK_NOT_GRADED.format(folder=folder.name, why=error)}


# Grades run in one thread of their own, for the life of the process: what they start (the fork servers, the
# workers' sandboxes) dies with the thread that started it (a parent-death signal), so it must outlive grades.
_judge = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="autograd-lab judge")
_grading: dict[str, concurrent.futures.Future] = {}  # JudgeGrades' grades under way, by the token in resources


def start_grading(folder: Path, key: int | None, isolation: str) -> dict:
    """Start grading ``folder`` beside whatever runs next, and return once its files are copied: what goes into
    the resources until ``judged`` has the scorecard."""
    copied = threading.Event()
    future = _judge.submit(grade_folder, folder, key, isolation, copied.set)
    while not copied.wait(0.05) and not future.done():
        pass
    token = secrets.token_hex(8)
    _grading[token] = future
    return {"grading": token}


def judged(resources) -> dict | None:
    """The scorecard JudgeGrades put in the resources, once the judge has finished it; None without one."""
    result = resources.get(RESOURCE)
    if isinstance(result, dict) and set(result) == {"grading"}:
        future = _grading.pop(str(result["grading"]), None)
        result = resources[RESOURCE] = future.result() if future is not None else None
    return result


class JudgeGrades(NbGraderPreprocessor):
    """Before ``Execute``: grade the .py files beside the notebook with the judge, keep the scorecard."""

    key = Int(None, allow_none=True, help="the grading key (autograd-lab grade --key); None: derandomized"
              ).tag(config=True)
    isolation = Unicode("auto", help="auto, bubblewrap or limits (autograd-lab grade --isolation)").tag(config=True)

    def preprocess(self, nb, resources):
        folder = Path(resources.get("metadata", {}).get("path") or ".").resolve()
        self.log.info("autograd-lab: grading the .py files in %s with the judge", folder)
        resources[RESOURCE] = start_grading(folder, self.key, self.isolation)
        # The graded cells' visible checks are for the student: their outputs would be replaced, so the kernel
        # does not run them (a second or two each, task 6.1's imports torch). JudgeScores takes the tag off.
        for cell in nb.cells:
            if cell.get("cell_type") == "code" and task_of(cell) is not None:
                tags = cell.metadata.setdefault("tags", [])
                if SKIP not in tags:
                    tags.append(SKIP)
                    cell.metadata.setdefault("autograd_lab", {})["skipped"] = True
        return nb, resources


class JudgeScores(NbGraderPreprocessor):
    """After ``Execute``: each graded cell's outputs become the judge's message and the task's points."""

    def preprocess(self, nb, resources):
        result = judged(resources)
        if result is None:  # JudgeGrades did not run: no score can be trusted
            result = {"error": msg.NOTEBOOK_NO_JUDGE}
        tests = {test["number"]: test for test in result.get("tests", ())}
        for cell in nb.cells:
            task_id = task_of(cell)
            if cell.get("cell_type") != "code" or task_id is None:
                continue
            if cell.metadata.pop("autograd_lab", {}).get("skipped") is True:  # the tag JudgeGrades put on
                tags = [tag for tag in cell.metadata.get("tags", ()) if tag != SKIP]
                cell.metadata.pop("tags", None)
                if tags:
                    cell.metadata["tags"] = tags
            test = tests.get(task_id)
            if "error" in result:
                text, points = result["error"], 0.0
            elif test is None:
                text, points = msg.NOTEBOOK_NO_SUCH_TASK.format(task=task_id), 0.0
            else:
                text, points = test["output"], float(test["score"])
            cell.outputs = [
                new_output("stream", name="stdout", text=msg.NOTEBOOK_JUDGED.format(text=text.rstrip("\n"))),
                new_output("execute_result", data={"text/plain": repr(points)}, execution_count=cell.get(
                    "execution_count")),
            ]
        return nb, resources


class JailedKernelManager(AsyncKernelManager):
    """The kernel nbgrader starts, run through ``graders.integrations.kernel_jail`` in the notebook's own folder."""

    def format_kernel_cmd(self, extra_arguments=None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        folder = str(self._launch_args.get("cwd") or os.getcwd())
        return [sys.executable, "-I", "-m", "graders.integrations.kernel_jail", "--folder", folder,
                "--connection-file", os.path.realpath(self.connection_file), "--", *command]
