"""Grading under pytest: one item per task of the task table, each a thin wrapper over ``autograd-lab grade``.

Loaded only when asked for, never by an entry point, so it joins no student's run and none of the package's own::

    pytest -c /dev/null -p graders.integrations.pytest_plugin --autograd-lab-submission=alice/

(``-c /dev/null``: no configuration file; ``=``: as a separate word, the path would be taken, before this plugin is
loaded, for a place to look for a configuration file in: alice/pytest.ini. docs/grading.md says more.)

Without ``--autograd-lab-submission`` it does nothing. With it, pytest collects the task table instead of files (so
nothing of the submission, or of anywhere else, is imported or collected), loads no ``conftest.py`` at all (as
``--noconftest`` does: the initial conftests would come from the working folder and its ``test*`` folders, which in
a class folder may be students'), and refuses to start where the working folder, the rootdir, the configuration
file or a path argument lies inside the submission. An item runs the very grade ``autograd-lab grade --tasks``
runs (graders.pipeline.grade_submission: the same judge, the same sandboxed workers), for all the selected tasks of
its module at once, so each task gets the result, and the selection the total, that ``autograd-lab grade`` gives.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from graders import messages as msg
from graders.cli_options import ISOLATIONS
from graders.tasks import GRADE_DEADLINE, GRADED_MODULES, TASKS, Task

ROOT = "autograd-lab"  # the virtual collector above the modules: items are autograd-lab::tensor::1.4 backward of @
# pytest-xdist's dist modes that keep a module's tasks on one worker (loadscope: the scope of
# autograd-lab::tensor::1.4 is autograd-lab::tensor). There a worker grades all the selected tasks of a module at
# once; under the others each item grades its own task alone, rather than every worker grading the whole module.
# loadgroup (the xdist_group marks) groups only where xdist could tag the items' nodeids with their group, which
# xdist 3.8 no longer can on pytest 9.2 (pytest-dev/pytest-xdist#1386): the items say whether it did.
WHOLE_MODULES = ("loadscope", "loadfile", "each")

GRADES = pytest.StashKey["Grades"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options: the submission to grade (without it the plugin does nothing), the key and the isolation, as
    ``autograd-lab grade`` takes them."""
    group = parser.getgroup("autograd-lab", "autograd-lab: grade one submission, one item per task")
    group.addoption("--autograd-lab-submission", metavar="PATH", default=None,
                    help="grade this submission (a folder laid out like exercises/, the folder above one, or a .zip); "
                         "without it the plugin collects nothing")
    group.addoption("--autograd-lab-key", metavar="KEY", type=int, default=None,
                    help="seed Hypothesis with this key instead of derandomizing (autograd-lab grade --key)")
    group.addoption("--autograd-lab-isolation", choices=ISOLATIONS, default="auto",
                    help="how to isolate student code (autograd-lab grade --isolation)")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Before any conftest.py is read: refuse a run whose configuration could come from the submission, and turn
    conftest files off."""
    known = early_config.known_args_namespace
    if known.autograd_lab_submission is None:
        return
    here = early_config.invocation_params.dir
    submission = Path(os.path.realpath(here / known.autograd_lab_submission))
    places = [("working folder", here), ("rootdir", early_config.rootpath)]
    if early_config.inipath is not None and early_config.inipath.is_file():
        places.append(("configuration file", early_config.inipath))
    places += [("path argument", here / arg.split("::")[0]) for arg in known.file_or_dir]
    for what, path in places:
        if _inside(Path(os.path.realpath(path)), submission):
            raise pytest.UsageError(msg.PYTEST_INSIDE_SUBMISSION.format(
                submission=known.autograd_lab_submission, what=what, path=path))
    known.noconftest = True


def pytest_configure(config: pytest.Config) -> None:
    """With a submission to grade: no conftest.py, the tasks' markers declared, and the grades of this process
    registered (an xdist worker takes the controller's submission and dist mode)."""
    submission = config.getoption("autograd_lab_submission")
    if submission is None:
        return
    config.option.noconftest = True
    for task in TASKS:
        config.addinivalue_line("markers", f"{task.marker}: Task {task.id}, {task.title}")
    if not any(line.startswith("xdist_group") for line in config.getini("markers")):
        config.addinivalue_line("markers", "xdist_group(name): run the tests of one group on one xdist worker")
    worker = getattr(config, "workerinput", None) or {}  # what pytest_configure_node told an xdist worker
    grades = config.stash[GRADES] = Grades(
        # As given, so that a SubmissionError reads as `grade`'s does; a worker takes the controller's, in full.
        submission=Path(worker.get("autograd_lab_submission", submission)), key=config.getoption("autograd_lab_key"),
        isolation=config.getoption("autograd_lab_isolation"), dist=worker.get("autograd_lab_dist", "no"))
    config.pluginmanager.register(grades, "autograd-lab-grades")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist's controller, for each worker it starts: tell it the dist mode (a worker's own says "no") and
    where the submission is."""
    node.workerinput["autograd_lab_dist"] = node.config.getoption("dist")
    node.workerinput["autograd_lab_submission"] = os.path.abspath(node.config.getoption("autograd_lab_submission"))


def pytest_report_header(config: pytest.Config) -> str | None:
    """The header line that names the submission, its examples (derandomized or the key's) and the isolation; nothing
    without a submission."""
    if GRADES not in config.stash:
        return None
    key = config.getoption("autograd_lab_key")
    return msg.PYTEST_HEADER.format(submission=config.getoption("autograd_lab_submission"),
                         examples="derandomized" if key is None else f"key {key}",
                         isolation=config.getoption("autograd_lab_isolation"))


class TaskTable(pytest.Collector):
    """The task table, one collector per graded module: collected from graders.tasks, never from a file."""

    def collect(self):
        """One collector per graded module, in the task table's order."""
        return [ModuleTasks.from_parent(self, name=module) for module in GRADED_MODULES]


class ModuleTasks(pytest.Collector):
    """The tasks of one graded file (tensor, optim, data, train, torch_loop): graded together, on one worker."""

    def collect(self):
        """One item per task of this module, named by its id and title."""
        return [TaskItem.from_parent(self, name=f"{task.id} {task.title}", task=task)
                for task in TASKS if task.module == self.name]


class TaskItem(pytest.Item):
    """One task: passes, fails with the judge's message, or skips (6.2 without CUDA), as the scorecard says."""

    def __init__(self, *, task: Task, **kwargs) -> None:
        super().__init__(**kwargs)
        self.task = task
        self.add_marker(getattr(pytest.mark, task.marker))
        self.add_marker(pytest.mark.xdist_group(task.module))

    def runtest(self) -> None:
        """Pass, fail with the judge's message, or skip (6.2 without CUDA) as the grade says, with the task's score and
        maximum as user properties for the total and JUnit."""
        from graders.judge.grade import PASSED, SKIPPED

        test = self.config.stash[GRADES].test_of(self)
        if isinstance(test, str):  # the submission could not be graded at all
            self.user_properties += [("task", self.task.id), ("score", 0.0), ("max_score", float(self.task.points))]
            pytest.fail(test, pytrace=False)
        self.user_properties += [("task", self.task.id), ("score", test["score"]), ("max_score", test["max_score"])]
        status = test["extra_data"]["status"]
        if status == SKIPPED:
            pytest.skip(test["output"])
        if status != PASSED:
            pytest.fail(test["output"], pytrace=False)

    def reportinfo(self):
        """Where pytest says the item is: the task table, and the task's id and title."""
        return self.path, None, f"Task {self.task.id} ({self.task.title})"


@dataclass
class Grades:
    """The results of the tasks graded so far in this process, from the canonical result (Gradescope's schema)."""

    submission: Path
    key: int | None
    isolation: str
    dist: str  # pytest-xdist's dist mode, "no" outside a worker: whether a module's tasks all run here
    tests: dict[str, dict] = field(default_factory=dict)  # results.json's test of each task graded, by task id
    failure: str | None = None  # why the submission cannot be graded at all
    seconds: float = 0.0  # of grade's one deadline, spent by this process's grades so far (Report.used)
    totals: dict[str, tuple[float, float]] = field(default_factory=dict)  # the reported points, by task id

    def test_of(self, item: TaskItem) -> dict | str:
        """The task's test of results.json, graded on first ask together with the other selected tasks of its module
        where they run in this process; or the reason the submission cannot be graded at all."""
        if item.task.id not in self.tests and self.failure is None:
            batch = [item.task.id]
            if self.dist in ("no", *WHOLE_MODULES) or (self.dist == "loadgroup"
                                                       and item.nodeid.endswith(f"@{item.task.module}")):
                batch = [other.task.id for other in item.session.items if isinstance(other, TaskItem)
                         and other.task.module == item.task.module and other.task.id not in self.tests]
            self._grade(tuple(dict.fromkeys([item.task.id, *batch])))
        return self.failure or self.tests[item.task.id]

    def _grade(self, task_ids: tuple[str, ...]) -> None:
        from graders import pipeline
        from graders.submission.layout import SubmissionError

        try:
            # Python's own warning filters, as in `autograd-lab grade`: an ini's `filterwarnings = error` must not
            # turn a warning inside the judge into a grader error.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graded = pipeline.grade_submission(self.submission, key=self.key, tasks=task_ids,
                                                   isolation=self.isolation,
                                                   deadline=max(GRADE_DEADLINE - self.seconds, 0.0))
        except (SubmissionError, RuntimeError) as error:
            self.failure = msg.PYTEST_NOT_GRADED.format(error=error)
            return
        self.seconds += max(graded.report.used)  # the deadline's measure: CPU time, or time waited without computing
        self.tests.update({test["number"]: test for test in graded.result["tests"]})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count each task's points from its report: here, or under xdist where the controller receives it."""
        properties = dict(report.user_properties)
        if report.when == "call" and "task" in properties:
            self.totals[properties["task"]] = (float(properties["score"]), float(properties["max_score"]))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter) -> None:
        """The total line at the end of the run: the points earned of those possible over the tasks reported."""
        if self.totals:
            terminalreporter.write_line(msg.PYTEST_TOTAL.format(
                score=sum(score for score, _ in self.totals.values()),
                max_score=sum(most for _, most in self.totals.values()),
                tasks=len(self.totals), s="" if len(self.totals) == 1 else "s"))


def pytest_collection(session: pytest.Session) -> bool | None:
    """Collect the task table in place of the files. Called after xdist's controller, which collects nothing, and
    its workers' notice, before pytest's own collection, which it replaces."""
    if GRADES not in session.config.stash or session.config.pluginmanager.hasplugin("dsession"):
        return None
    table = TaskTable.from_parent(session, name=ROOT, nodeid=ROOT)
    session.items = list(session.genitems(table))
    session.config.pluginmanager.check_pending()
    session.config.hook.pytest_collection_modifyitems(session=session, config=session.config, items=session.items)
    session.config.hook.pytest_collection_finish(session=session)
    session.testscollected = len(session.items)
    return True
