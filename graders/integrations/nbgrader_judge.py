"""nbgrader's trusted step: the scores come from the judge, never from the notebook's kernel.

``autograd-lab nbgrader`` writes an ``nbgrader_config.py`` that puts two preprocessors of this module
around nbgrader's ``Execute`` in ``Autograde.autograde_preprocessors``, and runs the kernel in a jail:

- ``JudgeGrades`` runs before ``Execute``, before any of the student's code has run at all: it gives the
  ``.py`` files of the notebook's folder to the judge, a process of its own that nbgrader's process starts as
  ``nbgrader autograde`` reads the config (``start_for_autograde``; elsewhere, as the formgrader's server, when
  it makes its preprocessors) and keeps for every notebook (``grade-all``'s judge, graders.classgrade.batch_judge:
  the same checks and sandboxed workers as ``autograd-lab grade``, and it never imports the files), and
  returns once the judge has copied them into the grade's own folder. The grade goes on beside ``Execute``,
  so the kernel's run costs no time of its own; what the kernel does to the folder cannot change what is
  graded. It tags the graded cells ``skip-execution``, so the kernel does not run their visible checks (which
  are for the student, and whose outputs would be replaced);
- ``JudgeScores`` runs after ``Execute`` and before ``SaveAutoGrades``: it waits for the grade (``judged``)
  and sets the outputs of every graded cell to the judge's message for its task and the task's points,
  whatever the kernel printed; ``SaveAutoGrades`` records those points. The setup cell (0 points) is left as
  the kernel ran it;
- ``JailedKernelManager`` starts the kernel through ``graders.integrations.kernel_jail``, on zmq ``ipc`` sockets in a
  fresh folder of its own: as root, with bubblewrap, as ``nobody`` with no network, seeing the interpreter, its
  sockets, a private /tmp and a private copy of its notebook's folder, and nothing else; not as root, or without
  bubblewrap, no kernel runs the notebook at all (a kernel that runs nothing answers, and says why). What the
  notebook runs, the visible checks and any cell a student added, can change only that student's own outputs,
  and those no longer decide a score.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import queue
import secrets
import select
import shutil
import sys
import threading
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode
from traitlets.config import Application

from graders import messages as msg
from graders.classgrade import pool
from graders.course import course_file
from graders.files import atomic_write
from graders.results.plain import safe_result
from graders.tasks import BY_ID, GRADE_DEADLINE

RESOURCE = "autograd_lab"  # the key of the scorecard in nbgrader's resources
STARTED = "autograd_lab_started"  # the key of the grade's start (time.monotonic()) in the resources
COURSE = "autograd_lab_course"  # the key of the course file graded in, in the resources
RESULTS_FILE = "autograd_lab_results.json"  # the scorecard beside the autograded notebook, for the class report
SKIP = "skip-execution"  # nbclient's tag for a cell that Execute leaves alone (NotebookClient.skip_cells_with_tag)


def task_of(cell) -> str | None:
    """The task id of a graded cell (``grade_id`` ``task_1_4`` is task 1.4), or None."""
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    if not grade_id.startswith("task_"):
        return None
    task_id = grade_id.removeprefix("task_").replace("_", ".")
    return task_id if task_id in BY_ID else None


# The judge's bounds, in its process tree's CPU time (and as many seconds waited without computing): its start
# (Python, the graders) and its copy of the files; and a grade, which ends at its deadline (in its workers' CPU time
# and waiting): past this, the judge hangs.
START_SECONDS = 180.0
ANSWER_SECONDS = GRADE_DEADLINE + 60.0


class _Grading:
    """The judge of this nbgrader process (``graders.classgrade.pool.Judge``: ``python -m
    graders.classgrade.batch_judge``), kept for every notebook, and the one grade it has under way. This process
    never imports the judge's code or torch: a judge that crashes or hangs costs one notebook its grade (and is
    replaced), never nbgrader's run."""

    def __init__(self):
        self.judge: pool.Judge | None = None
        self.token: str | None = None  # the grade under way, whose answer is still to be read
        self.folder = ""
        self.lines: list[dict] = []
        self.started = False  # whether this process ever started a judge

    def warm(self) -> None:
        """Start the judge now (a live one is kept): its imports go on while nbgrader gets the notebook ready."""
        if self.judge is not None and self.judge.process.poll() is not None:
            self.stop()
        if self.judge is None:
            self.judge = _starter.run(lambda: pool.Judge(0, None))
            self.started = True

    def start(self, folder: Path, how: dict, isolation: str) -> str:
        """Give the judge ``folder`` and return once it has copied the files (or could not): the grade's token.
        ``how``: its key, tasks and points (graders.course.course_file.grading)."""
        if self.token is not None:  # the last grade's answer was never asked for: read it first, keep it
            _finished[self.token] = self.answer()
        token, self.folder = secrets.token_hex(8), folder.name
        job = {"student": folder.name, "path": str(folder), **how, "isolation": isolation, "with_result": True,
               "tell_laid_out": True}
        try:
            self._give(job)
            line = self._next(START_SECONDS)
        except _JudgeGone as gone:
            _finished[token] = self._failed(str(gone))
            return token
        if line.get("laid_out"):
            self.token = token
        else:  # an answer already: nothing was laid out to grade
            _finished[token] = self._result(line)
        return token

    def _give(self, job: dict) -> None:
        """Hand ``job`` to a live judge: this process's, or a new one where that one has exited (while idle)."""
        why = ""
        for _ in range(2):
            try:
                self.warm()
                self.judge.give(job, ANSWER_SECONDS)
                return
            except OSError as error:  # BrokenPipeError: it had exited; else no process could be started
                self.stop()
                why = f"{type(error).__name__}: {error}"
        raise _JudgeGone(msg.NOTEBOOK_JUDGE_NO_START.format(why=why))

    def answer(self) -> dict:
        """The results dict of the grade under way (``{"error": text}`` where there is none)."""
        self.token = None
        try:
            return self._result(self._next(ANSWER_SECONDS))
        except _JudgeGone as gone:
            return self._failed(str(gone))

    def _result(self, answer: dict) -> dict:
        if isinstance(answer.get("result"), dict):
            return answer["result"]
        return {"error": msg.NOTEBOOK_NOT_GRADED.format(folder=self.folder,
                                                        why=answer.get("reason") or answer.get("status"))}

    def _failed(self, why: str) -> dict:
        self.stop()
        return {"error": msg.NOTEBOOK_NOT_GRADED.format(folder=self.folder, why=why)}

    def _next(self, seconds: float) -> dict:
        """The judge's next line; _JudgeGone when it exits, writes what is not ours, or says nothing in time: within
        ``seconds`` of its process tree's CPU time, or as many waited without computing (pool.Clock: a busy machine
        never stops a judge that works)."""
        clock = pool.Clock(self.judge.tree(), seconds)
        while not self.lines:
            bound = clock.look(self.judge.tree())
            if bound is not None:
                silent = msg.NOTEBOOK_JUDGE_IDLE if bound == "idle" else msg.NOTEBOOK_JUDGE_SILENT
                raise _JudgeGone(silent.format(seconds=seconds))
            if select.select([self.judge.fd], [], [], pool.LOOK_EVERY)[0]:
                try:
                    self.lines += self.judge.answers()
                except EOFError:
                    raise _JudgeGone(self.judge.exit_reason()) from None
                except ValueError as error:
                    raise _JudgeGone(f"the judge's answer: {error}") from None
        return self.lines.pop(0)

    def stop(self) -> None:
        """Stop the judge (a grade under way is lost) and what it started."""
        if self.judge is not None:
            self.judge.kill()
        self.judge, self.token, self.lines = None, None, []

    def close(self) -> None:
        """At exit: the judge ends once its input closes (waited for, so that nothing of it outlives nbgrader)."""
        if self.judge is not None:
            self.judge.close()
        self.judge = None


class _JudgeGone(Exception):
    """The judge exited, answered out of protocol or said nothing in time."""


class _Starter:
    """A thread that lives as long as this process and starts the judge for whichever thread asks (the formgrader
    grades from others): the judge stops when the thread that started it ends (a parent-death signal is a thread's).
    A daemon, so that it ends with the process, not before the exit handlers (a pool's threads are joined first,
    and the judge, told to stop then, tore torch down in 0.6 s instead of leaving at its input's end)."""

    def __init__(self):
        self.asked: queue.Queue = queue.Queue()
        self.thread: threading.Thread | None = None  # started at the first call: importing this module starts none
        self.lock = threading.Lock()

    def _serve(self) -> None:
        while True:
            call, answer = self.asked.get()
            try:
                answer.put((call(), None))
            except BaseException as error:  # noqa: BLE001 - the asking thread raises it
                answer.put((None, error))

    def run(self, call):
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._serve, name="autograd-lab judge starter", daemon=True)
                self.thread.start()
        answer: queue.Queue = queue.Queue(maxsize=1)
        self.asked.put((call, answer))
        value, error = answer.get()
        if error is not None:
            raise error
        return value


def _at_exit() -> None:
    """Close the judge; then, in a process that graded, leave out CPython's last collection of what is alive now.

    A Python process's last act is a garbage collection that walks every object it still tracks, the modules
    included: after ``nbgrader autograde`` (nbgrader, nbconvert, jupyter_client, SQLAlchemy, tornado, ...) that
    walk took 1.1-1.4 s here (2 cores), after the judge's last answer and so all of it added. ``gc.freeze``
    moves those objects out of the collector's sight: they are freed by their reference counts as the modules
    are cleared, as ever, and only objects caught in reference cycles are left to the operating system with the
    rest of the process's memory. The exit handlers registered before this module's (the logging's flush,
    ``weakref.finalize``'s, SQLAlchemy's) all still run after it; nbgrader has committed its gradebook and
    written its notebooks by then."""
    _grading.close()
    if _grading.started:
        gc.freeze()


_starter = _Starter()
_grading = _Grading()
_finished: dict[str, dict] = {}  # results of grades whose answers were read, by token, until judged() asks
atexit.register(_at_exit)


def start_for_autograde() -> None:
    """Start the judge now where this process is ``nbgrader autograde`` reading its config: the course's
    ``nbgrader_config.py`` calls this. The judge's start (Python, the graders, its fork servers) then goes on
    while nbgrader opens its gradebook and gets the first notebook ready, before it makes ``JudgeGrades``. Any
    other nbgrader command that reads the config (generate_assignment, the formgrader's server) starts none."""
    autograde = sys.modules.get("nbgrader.apps.autogradeapp")  # not imported: not autograde's process
    if autograde is None or not Application.initialized():
        return
    app = Application.instance()  # the command's app (``nbgrader``), whose subapp is the subcommand's
    while app.subapp is not None:
        app = app.subapp
    if isinstance(app, autograde.AutogradeApp):
        with contextlib.suppress(OSError):  # said so with the first notebook, as in JudgeGrades
            _grading.warm()


def start_grading(folder: Path, how: dict, isolation: str) -> dict:
    """Start grading ``folder`` with the key, tasks and points ``how`` gives beside whatever runs next, and return
    once its files are copied: what goes into the resources until ``judged`` has the scorecard."""
    return {"grading": _grading.start(folder, how, isolation)}


def judged(resources) -> dict | None:
    """The scorecard JudgeGrades put in the resources, once the judge has finished it; None without one."""
    result = resources.get(RESOURCE)
    if isinstance(result, dict) and set(result) == {"grading"}:
        token = str(result["grading"])
        if token in _finished:
            result = _finished.pop(token)
        elif token == _grading.token:
            result = _grading.answer()
        else:
            result = None
        resources[RESOURCE] = result
    return result


class JudgeGrades(NbGraderPreprocessor):
    """Before ``Execute``: grade the .py files beside the notebook with the judge, in the course of the course file
    ``course``, with the key of the nbgrader student; keep the scorecard. Without a course file that has a secret,
    nothing is graded: every cell scores 0 and says why (the student stays in the gradebook)."""

    course = Unicode("", help="the course file (autograd-lab course init FILE): the tasks, points and secret"
                     ).tag(config=True)
    isolation = Unicode("auto", help="auto, bubblewrap or limits (autograd-lab grade --isolation)").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with contextlib.suppress(OSError):  # a judge that cannot start is said so with the first notebook
            _grading.warm()  # started as autograde read the config; else (the formgrader's) it starts here

    def preprocess(self, nb, resources):
        """Grade the .py files beside the notebook with the judge before any of the student's code runs, keep the result
        in ``resources``, and tag the graded cells so the kernel skips their visible checks."""
        folder = Path(resources.get("metadata", {}).get("path") or ".").resolve()
        self.log.info(msg.NOTEBOOK_GRADING.format(folder=folder))
        # A file of that name came with the submission (nbgrader copies every file): it is not the judge's
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / RESULTS_FILE)  # a link is removed, not followed
        resources[STARTED] = time.monotonic()
        resources[COURSE] = self.course
        student = resources.get("nbgrader", {}).get("student") or folder.parent.name
        try:
            how = course_file.grading(the_course(self.course), student)
            if how["key"] is None:
                raise course_file.CourseError(msg.COURSE_NO_SECRET.format(where=self.course,
                                                                          env=course_file.SECRET_ENV))
        except course_file.CourseError as error:
            self.log.error(str(error))
            resources[RESOURCE] = {"error": msg.NOTEBOOK_NOT_GRADED.format(folder=folder.name, why=error)}
        else:
            resources[RESOURCE] = start_grading(folder, how, self.isolation)
        # The graded cells' visible checks are for the student: their outputs would be replaced, so the kernel
        # does not run them (a second or two each, task 6.1's imports torch). JudgeScores takes the tag off.
        for cell in nb.cells:
            if cell.get("cell_type") == "code" and task_of(cell) is not None:
                tags = cell.metadata.setdefault("tags", [])
                if SKIP not in tags:
                    tags.append(SKIP)
                    cell.metadata.setdefault("autograd_lab", {})["skipped"] = True
        return nb, resources


def the_course(path: str) -> course_file.Course:
    """The course of the file ``path`` (read once per process for each file; CourseError, naming the line, for one
    that cannot be used, or for no file at all)."""
    if not path:
        raise course_file.CourseError(msg.NOTEBOOK_NO_COURSE)
    if path not in _courses:
        _courses[path] = course_file.load(Path(path))
    return _courses[path]


_courses: dict[str, course_file.Course] = {}


def cell_score(test: dict, cell_points: float) -> float:
    """A task's score as its cell's: the same share of the cell's points as the judge's score is of the task's,
    never more than the cell's (nbgrader refuses a score above a cell's points, and drops the student then)."""
    most = float(test.get("max_score") or 0.0)
    if most <= 0 or cell_points <= 0:
        return 0.0
    return round(min(max(float(test["score"]), 0.0), most) / most * cell_points, 2)


class JudgeScores(NbGraderPreprocessor):
    """After ``Execute``: each graded cell's outputs become the judge's message and the task's points."""

    def preprocess(self, nb, resources):
        """Give each graded cell the judge's message as its output and the task's score as its own (the same share of
        the cell's points), and take off the tag JudgeGrades put on; without the judge's result every cell scores 0
        and says why."""
        result = judged(resources)
        if result is None:  # JudgeGrades did not run: no score can be trusted
            result = {"error": msg.NOTEBOOK_NO_JUDGE}
        result = safe_result(result)  # the feedback's HTML and the notebook's JSON carry any of it
        keep_results(resources, result)
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
            cell_points = float(cell.metadata.get("nbgrader", {}).get("points") or 0.0)
            if "error" in result:
                text, points = result["error"], 0.0
            elif test is None:
                text, points = msg.NOTEBOOK_NO_SUCH_TASK.format(task=task_id), 0.0
            else:
                text, points = test["output"], cell_score(test, cell_points)
                if float(test.get("max_score") or 0.0) not in (0.0, cell_points):
                    self.log.warning(msg.NOTEBOOK_POINTS_DIFFER.format(
                        cell=cell.metadata["nbgrader"].get("grade_id"), cell_points=cell_points, task=task_id,
                        points=float(test["max_score"]), course=resources.get(COURSE, "")))
            cell.outputs = [
                new_output("stream", name="stdout", text=msg.NOTEBOOK_JUDGED.format(text=text.rstrip("\n"))),
                new_output("execute_result", data={"text/plain": repr(points)}, execution_count=cell.get(
                    "execution_count")),
            ]
        return nb, resources


def keep_results(resources, result: dict) -> None:
    """Write the scorecard (or the error) and the grade's seconds beside the autograded notebook, as RESULTS_FILE,
    for ``autograd-lab nbgrader-report``: through a new file moved into place, so a link of that name is replaced,
    never followed. Only this process writes there after JudgeGrades removed any such file: the kernel ran on a
    private copy of the folder. A folder it cannot write to costs the report that student, never the grade; without
    the notebook's folder (resources nbgrader did not fill) nothing is written, never into the working folder."""
    path = resources.get("metadata", {}).get("path")
    if not path:
        return
    folder = Path(path).resolve()
    started = resources.get(STARTED)
    seconds = time.monotonic() - started if isinstance(started, float) else 0.0
    text = json.dumps({**result, "autograd_lab_seconds": round(seconds, 1)}, indent=2, sort_keys=True) + "\n"
    with contextlib.suppress(OSError):
        atomic_write(folder / RESULTS_FILE, text)


class JailedKernelManager(AsyncKernelManager):
    """The kernel nbgrader starts, run through ``graders.integrations.kernel_jail`` in the notebook's own folder,
    on zmq's ``ipc`` transport: its sockets are files in a fresh folder of its own (``kernel_jail.ipc_folder``),
    the only thing it shares with nbgrader, since its jail has no network. Where no jail can hold it (nbgrader not
    run as root, or no bubblewrap), the jail serves a kernel that runs nothing, and the log says why; the judge's
    scores stand."""

    _ipc: str | None = None

    async def _async_pre_start_kernel(self, **kwargs):
        from graders.integrations import kernel_jail  # imported here: nbgrader's process needs it for kernels only

        if self._ipc is None or not os.path.isdir(self._ipc):
            self._ipc = kernel_jail.ipc_folder()
        self.transport, self.ip = "ipc", os.path.join(self._ipc, "kernel")
        refused = kernel_jail.refusal()
        if refused is not None:
            self.log.warning(msg.KERNEL_REFUSED.format(why=refused[0], setup=refused[1]))
        return await super()._async_pre_start_kernel(**kwargs)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._ipc is not None:
            shutil.rmtree(self._ipc, ignore_errors=True)
            self._ipc = None

    cleanup_resources = _async_cleanup_resources

    def format_kernel_cmd(self, extra_arguments=None) -> list[str]:
        """nbgrader's kernel command behind the jail: ``python -I -m graders.integrations.kernel_jail`` with the
        notebook's folder and the connection file, then the command."""
        command = super().format_kernel_cmd(extra_arguments)
        folder = str(self._launch_args.get("cwd") or os.getcwd())
        return [sys.executable, "-I", "-m", "graders.integrations.kernel_jail", "--folder", folder,
                "--connection-file", os.path.realpath(self.connection_file), "--", *command]
