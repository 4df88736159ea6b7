"""Write an nbgrader course directory: ``nbgrader_config.py`` and ``source/<assignment>/``.

``source/<assignment>/`` holds the stub .py files (the same text as exercises/,
generated from solutions/) and ``<assignment>.ipynb``: the lesson, worked
examples, a setup cell, and one graded cell per task. A graded cell runs a
visible check (course/cells/visible.py), for the student; its score is not the
kernel's: ``nbgrader_config.py`` puts the judge's preprocessors around
nbgrader's Execute and runs the kernel in a jail (nbgrader_judge.py). The
README's "Grading with nbgrader" walks an instructor through the rest.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from graders import messages, paths
from graders.course import course_file
from graders.course.cell_source import body_of
from graders.course.nbgrader_lesson import INTRO, OUTRO, PARTS, SETUP, task_heading
from graders.course.visible_checks import visible_part
from graders.tasks import TASKS

DEFAULT_ASSIGNMENT = "autograd_lab"
# Each cell's limit in nbgrader: a visible check stops itself after 60 s (task 6.1's imports torch first).
CELL_TIMEOUT = 120
# nbgrader's autograde preprocessors (nbgrader 0.9's Autograde.autograde_preprocessors), with the judge's two.
AUTOGRADE_PREPROCESSORS = (
    # before any code of the student runs: the judge grades the .py files
    "graders.integrations.nbgrader_judge.JudgeGrades",
    "nbgrader.preprocessors.Execute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "graders.integrations.nbgrader_judge.JudgeScores",  # every graded cell's outputs: the judge's message and points
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
)
SETUP_ID = "setup"
KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

CONFIG = '''\
# nbgrader configuration for the autograd-lab course, written by `autograd-lab nbgrader`.
# The autograd-lab README, section "Grading with nbgrader", walks through the workflow.
c = get_config()  # noqa: F821 - nbgrader defines get_config when it reads this file

# Grade the .py files the students submit. Without this, autograde replaces every file that
# source/{assignment}/ also holds with the source version (the stubs): a correct student scores 0.
c.Autograde.exclude_overwriting = {{{assignment!r}: {files!r}}}

# A task cell a student deleted is put back, as it was, before autograde runs the notebook.
c.OverwriteCells.add_missing_cells = True

# zip_collect takes the students' .py files too, not only their notebooks.
c.FileNameCollectorPlugin.valid_ext = [".ipynb", ".py"]

# The scores come from autograd-lab's judge, never from the notebook's kernel: JudgeGrades grades the
# .py files before any of the student's code runs (the same judge and sandbox as `autograd-lab grade`),
# and JudgeScores sets every graded cell's output to the judge's message and points after the notebook
# ran, before SaveAutoGrades records them. The rest is nbgrader's own list, in its order.
c.Autograde.autograde_preprocessors = {preprocessors}

# The course file: the tasks, their points and the secret each student's grading key is derived from (an
# HMAC of it and the nbgrader student id, so no two students share their inputs). Keep it private; a cell's
# points are its task's points there (an edit of a cell's points in the source notebook is honoured, scaled).
c.JudgeGrades.course = {course!r}

# `nbgrader autograde` starts the judge as it reads this file, so that the judge's own start goes on while
# nbgrader gets the first notebook ready; any other nbgrader command starts none here.
from graders.integrations.nbgrader_judge import start_for_autograde  # noqa: E402

start_for_autograde()

# The kernel runs in a jail (graders/integrations/kernel_jail.py), as the user nobody, with no network (ipc sockets
# to nbgrader): nothing of yours (home, caches, the course, the checkout), only the interpreter and a private copy
# of its folder. nbgrader must run as root for that; otherwise no kernel runs the notebooks (the scores stand).
c.Execute.kernel_manager_class = "graders.integrations.nbgrader_judge.JailedKernelManager"

# The kernel that runs the notebooks: any Python with numpy (and torch, for task 6's visible check);
# ipykernel's "python3" is the Python that runs nbgrader; check with `jupyter kernelspec list`.
c.Execute.kernel_name = "python3"

# Seconds per cell: each visible check stops itself after 60 s.
c.Execute.timeout = {cell_timeout}

# Keep warnings off stderr: nbgrader gives 0 points to a cell with any output on stderr.
c.Execute.extra_arguments = ["--IPKernelApp.exec_lines=import warnings; warnings.simplefilter('ignore')"]
'''


def config_text(assignment: str, files: list[str], course: Path | str) -> str:
    """The text of ``nbgrader_config.py`` for a course whose assignment holds ``files``, graded in the course of the
    course file ``course``."""
    return CONFIG.format(assignment=assignment, files=sorted(files), cell_timeout=CELL_TIMEOUT, course=str(course),
                         preprocessors="[\n    " + ",\n    ".join(map(repr, AUTOGRADE_PREPROCESSORS)) + ",\n]")


def _grade_cell(cell_id: str, source: str, points: int):
    cell = new_code_cell(source, id=cell_id.replace("_", "-"))
    cell.metadata = {"deletable": False, "editable": False,
                     "nbgrader": {"grade": True, "grade_id": cell_id, "locked": True, "points": points,
                                  "schema_version": 3, "solution": False, "task": False}}
    return cell


def graded_source(task_id: str) -> str:
    """A task's graded cell: its visible check (the judge's preprocessors set its outputs when autograding)."""
    return visible_part(task_id)


def notebook(course: course_file.Course = course_file.DEFAULT) -> nbformat.NotebookNode:
    """The assignment's notebook of ``course`` (nbformat 4, nbgrader cell metadata schema 3): a graded cell for each of
    its tasks, worth its points there; the same every time."""
    cells = [new_markdown_cell(INTRO.format(total=course.total), id="intro"), _grade_cell(SETUP_ID, SETUP, 0)]
    for part, (words, example) in PARTS.items():
        cells.append(new_markdown_cell(words, id=f"part-{part}"))
        if example is not None:
            cells.append(new_code_cell(body_of(example), id=f"example-{part}"))
        for task in TASKS:
            if task.id.startswith(part + ".") and task.id in course.points_by_task:
                points = course.points(task.id)
                cells.append(new_markdown_cell(task_heading(task.id, task.title, points),
                                               id=f"heading-{task.marker}"))
                cells.append(_grade_cell(task.marker.replace("task", "task_"), graded_source(task.id), points))
    cells.append(new_markdown_cell(OUTRO, id="outro"))
    return new_notebook(cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}})


COURSE_FILE = "autograd_lab_course.toml"  # the course file made in the course directory where none is given


def build_course(course_dir: Path | str, assignment: str = DEFAULT_ASSIGNMENT, *, force: bool = False,
                 course_path: Path | None = None) -> list[Path]:
    """Write the course; returns the files written. An ``nbgrader_config.py`` that differs from ours
    is kept (FileExistsError) unless ``force``. The course file ``course_path`` decides the tasks and points and
    holds the secret (CourseError for one that cannot be used, or has no secret); without one, the course directory's
    own (COURSE_FILE) is used, made with a fresh secret the first time."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", assignment):
        raise ValueError(messages.COURSE_BAD_ASSIGNMENT.format(assignment=assignment))
    course_dir = Path(course_dir)
    made = []
    if course_path is None:
        course_path = course_dir / COURSE_FILE
        if not course_path.exists():
            made = [course_file.init(course_path)]
    course_path = Path(os.path.abspath(course_path))
    course = course_file.load(course_path)
    if not course.keyed:
        raise course_file.CourseError(messages.COURSE_NO_SECRET.format(where=course_path,
                                                                       env=course_file.SECRET_ENV))
    stubs = paths.given_modules()
    config, config_path = config_text(assignment, list(stubs), course_path), course_dir / "nbgrader_config.py"
    if config_path.exists() and config_path.read_text() != config and not force:
        raise FileExistsError(messages.COURSE_CONFIG_CHANGED.format(path=config_path))
    source = course_dir / "source" / assignment
    source.mkdir(parents=True, exist_ok=True)
    config_path.write_text(config)
    written = [*made, config_path]
    for name, text in stubs.items():
        (source / name).write_text(text)
        written.append(source / name)
    nbformat.write(notebook(course), source / f"{assignment}.ipynb")
    return written + [source / f"{assignment}.ipynb"]
