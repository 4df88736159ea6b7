"""The nbgrader course as files: the notebook's cells and metadata, the config, the visible checks
and the hidden line's memo. Fast; tests/test_nbgrader_course.py runs real nbgrader on the same course."""

from __future__ import annotations

import ast
import contextlib
import io
import shutil
import sys

import nbformat
import pytest

from graders import build, messages, nbgrader_course, notebook, paths
from graders.tasks import TASKS
from graders.visible_checks import visible_part

VISIBLE = messages.VISIBLE_CHECK


def graded_cells(nb) -> dict:
    return {c.metadata.nbgrader.grade_id: c for c in nb.cells if "nbgrader" in c.metadata}


def test_the_notebook_is_valid_nbformat_4_with_one_graded_cell_per_task():
    """Is the notebook valid nbformat 4, with a locked, graded cell for every task, worth the task's points?"""
    nb = nbgrader_course.notebook()
    nbformat.validate(nb)
    assert nb.nbformat == 4
    cells = graded_cells(nb)
    assert list(cells) == [nbgrader_course.SETUP_ID] + [t.marker.replace("task", "task_") for t in TASKS]
    for task in TASKS:
        meta = cells[task.marker.replace("task", "task_")].metadata.nbgrader
        assert meta == {"grade": True, "grade_id": f"task_{task.id.replace('.', '_')}", "locked": True,
                        "points": task.points, "schema_version": 3, "solution": False, "task": False}
    assert cells[nbgrader_course.SETUP_ID].metadata.nbgrader["points"] == 0
    assert "graders" not in nbgrader_course.SETUP, "students' kernels have no graders"


def test_the_notebook_is_the_same_every_time():
    """Does building the notebook twice give the same text (cell ids included)?"""
    assert nbformat.writes(nbgrader_course.notebook()) == nbformat.writes(nbgrader_course.notebook())


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_a_graded_cell_is_its_visible_check_then_one_hidden_line(task):
    """Does each graded cell end with exactly the one hidden import-and-call line, after a visible part
    whose last statement is a `with` block, so nothing it ends with can be read as a score?"""
    source = nbgrader_course.graded_source(task.id)
    visible, hidden = source.split("### BEGIN HIDDEN TESTS\n")
    assert hidden == f'from graders.notebook import task; task("{task.id}")\n### END HIDDEN TESTS'
    assert visible == visible_part(task.id)
    body = ast.parse(visible).body
    assert len(body) == 1 and isinstance(body[0], ast.With), "the visible part is one `with visible_check` block"
    assert "graders" not in visible, "students' kernels have no graders"


def test_the_config_sets_what_autograde_needs_and_comments_every_setting(tmp_path):
    """Does nbgrader_config.py keep every .py file from being overwritten, restore deleted cells, collect .py
    files, give each cell the grading time, and say why on the lines above each setting?"""
    from traitlets.config.loader import PyFileConfigLoader

    text = nbgrader_course.config_text("lab", ["tensor.py", "optim.py"])
    (tmp_path / "nbgrader_config.py").write_text(text)
    c = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    assert c.Autograde.exclude_overwriting == {"lab": ["optim.py", "tensor.py"]}
    assert c.OverwriteCells.add_missing_cells is True
    assert {".py", ".ipynb"} <= set(c.FileNameCollectorPlugin.valid_ext)
    assert c.Execute.kernel_name == "python3"
    assert c.Execute.timeout > notebook.GRADE_TIMEOUT + 60
    assert any("simplefilter('ignore')" in arg for arg in c.Execute.extra_arguments)
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("c."):
            assert lines[number - 1].startswith("#"), f"no comment above {line!r}"


def test_the_course_holds_the_stubs_and_the_notebook(tmp_path):
    """Does build_course write the config, exercises/' text for every stub file, and the notebook?"""
    written = nbgrader_course.build_course(tmp_path, "lab")
    source = tmp_path / "source" / "lab"
    stubs = build.expected_exercises(paths.SOLUTIONS)
    assert {p.name for p in source.iterdir()} == set(stubs) | {"lab.ipynb"}
    for name, text in stubs.items():
        assert (source / name).read_text() == text == (paths.EXERCISES / name).read_text()
    assert nbformat.read(source / "lab.ipynb", as_version=4) == nbgrader_course.notebook()
    assert set(written) == {tmp_path / "nbgrader_config.py", *source.iterdir()}


def test_a_config_edited_by_hand_is_kept_unless_forced(tmp_path):
    """Does building over an edited nbgrader_config.py refuse (and keep it), and replace it with force=True?"""
    nbgrader_course.build_course(tmp_path)
    config = tmp_path / "nbgrader_config.py"
    config.write_text(config.read_text() + "c.Exchange.root = '/srv/exchange'\n")
    with pytest.raises(FileExistsError, match="pass --force"):
        nbgrader_course.build_course(tmp_path)
    assert "/srv/exchange" in config.read_text()
    nbgrader_course.build_course(tmp_path, force=True)
    assert "/srv/exchange" not in config.read_text()


def test_an_assignment_name_nbgrader_cannot_use_is_refused(tmp_path):
    """Does a name with a space or a slash raise ValueError echoing it?"""
    with pytest.raises(ValueError, match=r"got assignment='a b'"):
        nbgrader_course.build_course(tmp_path, "a b")


# ----- the visible checks, run as a student's kernel runs them -----

@pytest.fixture
def kernel(monkeypatch):
    """Run cells as the notebook does: the setup cell first, in one namespace; returns a runner that gives
    each cell's stdout. The package `lab` is dropped from sys.modules afterwards."""
    namespace: dict = {}

    def run(code: str, folder) -> str:
        monkeypatch.chdir(folder)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<cell>", "exec"), namespace)
        return out.getvalue()

    run.namespace = namespace
    yield run
    for name in [name for name in sys.modules if name == "lab" or name.startswith("lab.")]:
        del sys.modules[name]


def submission(tmp_path, source) -> object:
    folder = tmp_path / "submission"
    folder.mkdir()
    for module in source.glob("*.py"):
        if module.name != "conftest.py":
            shutil.copy(module, folder / module.name)
    return folder


def test_every_visible_check_passes_on_the_reference_solution(tmp_path, kernel):
    """Does each task's visible check print its 'passed' line on the reference solution (6.2: 'skipped'
    without a GPU)?"""
    folder = submission(tmp_path, paths.SOLUTIONS)
    kernel(nbgrader_course.SETUP, folder)
    for task in TASKS:
        line = kernel(visible_part(task.id), folder).strip()
        if task.id == "6.2" and line.startswith(VISIBLE["skipped"].format(task=task.id, error="")):
            continue
        assert line == VISIBLE["passed"].format(task=task.id)


def test_every_visible_check_says_not_attempted_on_the_stubs(tmp_path, kernel):
    """Does each task's visible check print one 'not attempted yet' line on the stubs?"""
    folder = submission(tmp_path, paths.EXERCISES)
    kernel(nbgrader_course.SETUP, folder)
    for task in TASKS:
        line = kernel(visible_part(task.id), folder).strip()
        if task.id == "6.2" and "skipped" in line:
            continue
        head = VISIBLE["stub"].split("{error}")[0].format(task=task.id)
        assert line.startswith(head) and line.count("\n") == 0, line


@pytest.mark.parametrize("body, line", [
    ("raise SystemExit(3)", VISIBLE["raised"].format(task="9.9", kind="SystemExit", error="3")),
    ("import warnings, sys\nwarnings.warn('noisy')\nprint('debug', file=sys.stderr)\nassert False, 'no'",
     VISIBLE["failed"].format(task="9.9", error="no")),
    ("while True:\n    pass", VISIBLE["slow"].format(task="9.9", seconds=1)),
], ids=["exits", "warns-and-prints-to-stderr", "never-ends"])
def test_a_visible_check_never_raises_and_never_writes_to_stderr(tmp_path, kernel, capfd, body, line):
    """Whatever the student's code does (exit, warn, print to stderr, loop forever), does the check print
    its line on stdout, raise nothing, and leave stderr empty, so that nbgrader cannot zero the cell?"""
    folder = submission(tmp_path, paths.SOLUTIONS)
    kernel(nbgrader_course.SETUP, folder)
    indented = "\n".join("    " + text for text in body.splitlines())
    out = kernel(f'with visible_check("9.9", seconds=1) as lab:\n{indented}\n', folder)
    assert out.splitlines()[-1] == line, out
    assert capfd.readouterr().err == ""


def test_files_that_do_not_import_give_a_line_not_an_error(tmp_path, kernel):
    """Does a tensor.py with a syntax error make the check print what went wrong, rather than raise?"""
    folder = submission(tmp_path, paths.SOLUTIONS)
    (folder / "tensor.py").write_text("def broken(:\n")
    kernel(nbgrader_course.SETUP, folder)
    out = kernel(visible_part("1.1"), folder)
    assert out.strip().startswith(VISIBLE["raised"].format(task="1.1", kind="SyntaxError", error="")[:40]), out


# ----- the hidden line -----

def test_the_hidden_line_grades_a_submission_once_per_content(tmp_path, monkeypatch, capsys):
    """Do 24 cells start one judge, print their task's message and return its points, and does changing
    a file start a new one?"""
    folder = submission(tmp_path, paths.SOLUTIONS)
    calls = []

    def judge(path):
        calls.append(path)
        return {"tests": [{"number": t.id, "score": float(t.points), "output": f"Task {t.id}: ok"} for t in TASKS]}

    monkeypatch.setattr(notebook, "_grade", judge)
    monkeypatch.setattr(notebook, "_scorecards", {})
    scores = [notebook.task(t.id, folder) for t in TASKS]
    assert scores == [float(t.points) for t in TASKS] and len(calls) == 1
    assert capsys.readouterr().out.splitlines() == [f"Task {t.id}: ok" for t in TASKS]
    (folder / "optim.py").write_text((folder / "optim.py").read_text() + "\n# changed\n")
    notebook.task("3.1", folder)
    assert len(calls) == 2


def test_the_hidden_line_scores_0_with_a_message_when_there_is_nothing_to_grade(tmp_path, monkeypatch, capsys):
    """Does a folder without the graded files give every task 0 and a line naming the folder, on stdout only?"""
    monkeypatch.setattr(notebook, "_scorecards", {})
    (tmp_path / "notes.py").write_text("x = 1\n")
    assert notebook.task("1.1", tmp_path) == 0.0
    captured = capsys.readouterr()
    assert captured.out.startswith(messages.NOTEBOOK_NOT_GRADED.split("{folder}")[0] + str(tmp_path))
    assert captured.err == ""
