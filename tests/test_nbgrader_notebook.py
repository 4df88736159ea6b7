"""The nbgrader course as files: the notebook's cells and metadata, the config, the visible checks,
the judge's preprocessors and the kernel's jail. Fast; tests/test_nbgrader_course.py runs real nbgrader
on the same course."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import shutil
import sys
from textwrap import dedent

import nbformat
import pytest

from graders import messages, ops, paths
from graders.course import build, nbgrader_lesson
from graders.course.cells import examples, setup, visible
from graders.course.visible_checks import cell_name, op_check, visible_part, written_check
from graders.integrations import kernel_jail, nbgrader_course, nbgrader_judge
from graders.tasks import TASKS, TOTAL_POINTS

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
def test_a_graded_cell_is_its_visible_check_and_nothing_of_the_graders(task):
    """Is each graded cell one `with visible_check` block (nothing it ends with can be read as a score), with
    no hidden part and nothing of the graders (its score is set by the judge's preprocessor)?"""
    source = nbgrader_course.graded_source(task.id)
    assert source == visible_part(task.id)
    body = ast.parse(source).body
    assert len(body) == 1 and isinstance(body[0], ast.With), "the visible part is one `with visible_check` block"
    assert "graders" not in source and "HIDDEN" not in source


def function_body(function) -> str:
    """A function's body as inspect reads it (a witness beside cell_source's own reading): its source less the
    ``def`` line, dedented."""
    header, body = inspect.getsource(function).split("\n", 1)
    assert header.startswith("def ") and header.endswith(":"), header
    return dedent(body)


def test_every_task_has_a_visible_check_and_every_check_a_task():
    """Has every task of the task table a visible check, a function ``task_X_Y`` of cells/visible.py or (an op task)
    one made from the op registry, and does every function of that module name a task of the table?"""
    for task in TASKS:
        assert written_check(task.id) is not None or ops.of_task(task.id), task.id
    defined = [node.name for node in ast.parse(inspect.getsource(visible)).body if isinstance(node, ast.FunctionDef)]
    assert sorted(defined) == sorted(cell_name(task.id) for task in TASKS if written_check(task.id) is not None)


def test_a_task_with_no_visible_check_is_refused_by_name():
    """Does a task that is no op task and has no function in cells/visible.py get a LookupError that names the
    function to write, rather than a cell that checks nothing?"""
    with pytest.raises(LookupError, match=r"write task_9_9\(lab\) in graders/course/cells/visible.py"):
        visible_part("9.9")


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_a_graded_cell_is_the_body_of_its_check_function(task):
    """Is a task's graded cell, under its ``with visible_check`` line, the dedented body of its function in
    cells/visible.py, comments included, and the same statements?"""
    check = written_check(task.id)
    if check is None:
        pytest.skip(f"task {task.id}'s visible check is made from the op registry (tested below)")
    cell = graded_cells(nbgrader_course.notebook())[task.marker.replace("task", "task_")].source
    head, body = cell.split("\n", 1)
    assert head == f'with visible_check("{task.id}") as lab:'
    assert dedent(body) == function_body(check)
    function = next(node for node in ast.parse(inspect.getsource(visible)).body
                    if isinstance(node, ast.FunctionDef) and node.name == check.__name__)
    assert [ast.dump(node) for node in ast.parse(cell).body[0].body] == [ast.dump(node) for node in function.body]


def test_the_worked_examples_are_the_bodies_of_their_functions_and_run():
    """Is each part's worked example cell the dedented body of its function in cells/examples.py, and does each
    example run (with numpy alone) and print something?"""
    cells = {cell.id: cell.source for cell in nbgrader_course.notebook().cells}
    written = {part: example for part, (_, example) in nbgrader_lesson.PARTS.items() if example is not None}
    assert [cell_id for cell_id in cells if cell_id.startswith("example-")] == [f"example-{p}" for p in written]
    for part, example in written.items():
        assert example.__module__ == examples.__name__
        assert cells[f"example-{part}"] == function_body(example)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            example()
        assert out.getvalue(), f"example {part} printed nothing"


def test_the_setup_cell_is_cells_setup_between_its_markers_with_the_messages_written_out():
    """Is the setup cell the text of cells/setup.py between ``# BEGIN CELL`` and ``# END CELL``, but for the
    MESSAGES line, which holds messages.VISIBLE_CHECK's value as a literal (the kernel has no graders)?"""
    lines = inspect.getsource(setup).splitlines()
    between = lines[lines.index("# BEGIN CELL") + 1: lines.index("# END CELL")]
    cell = nbgrader_course.notebook().cells[1].source
    assert cell == nbgrader_course.SETUP
    assert [line for line in cell.splitlines() if not line.startswith("MESSAGES = ")] \
        == [line for line in between if line != "MESSAGES = VISIBLE_CHECK"]
    assigned = [node for node in ast.parse(cell).body if isinstance(node, ast.Assign)]
    assert [ast.unparse(node.targets[0]) for node in assigned] == ["MESSAGES"]
    assert ast.literal_eval(assigned[0].value) == messages.VISIBLE_CHECK == setup.MESSAGES


def test_the_config_sets_what_autograde_needs_and_comments_every_setting(tmp_path):
    """Does nbgrader_config.py keep every .py file from being overwritten, restore deleted cells, collect .py
    files, give each cell the grading time, and say why on the lines above each setting?"""
    from traitlets.config.loader import PyFileConfigLoader

    text = nbgrader_course.config_text("lab", ["tensor.py", "optim.py"], "course.toml")
    (tmp_path / "nbgrader_config.py").write_text(text)
    c = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    assert c.Autograde.exclude_overwriting == {"lab": ["optim.py", "tensor.py"]}
    assert c.OverwriteCells.add_missing_cells is True
    assert {".py", ".ipynb"} <= set(c.FileNameCollectorPlugin.valid_ext)
    assert c.Execute.kernel_name == "python3"
    assert c.Execute.timeout > 60
    assert c.Execute.kernel_manager_class == "graders.integrations.nbgrader_judge.JailedKernelManager"
    from traitlets.utils.importstring import import_item

    classes = [import_item(name) for name in c.Autograde.autograde_preprocessors]  # each one importable
    order = [cls.__name__ for cls in classes]
    assert order.index("JudgeGrades") < order.index("Execute") < order.index("JudgeScores") \
        < order.index("SaveAutoGrades")
    from nbgrader.converters.autograde import Autograde
    nbgraders_own = [pp.__name__ for pp in Autograde.class_traits()["autograde_preprocessors"].default()]
    assert [name for name in order if not name.startswith("Judge")] == nbgraders_own
    assert any("simplefilter('ignore')" in arg for arg in c.Execute.extra_arguments)
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("c."):
            assert lines[number - 1].startswith("#"), f"no comment above {line!r}"


def test_the_written_config_passes_ruff(tmp_path):
    """The config is written from a template string: ruff checks what it writes, as it checks the package."""
    import shutil
    import subprocess

    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (the dev extra)")
    config = nbgrader_course.config_text("lab", ["tensor.py", "optim.py"], "course.toml")
    (tmp_path / "nbgrader_config.py").write_text(config)
    rules = ["--select", "E,F,W,I,B,UP", "--ignore", "E741,B905", "--line-length", "120"]  # the package's
    result = subprocess.run([ruff, "check", "--no-cache", "--isolated", *rules, "nbgrader_config.py"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_course_holds_the_stubs_and_the_notebook(tmp_path):
    """Does build_course write the config, exercises/' text for every stub file, and the notebook?"""
    written = nbgrader_course.build_course(tmp_path, "lab")
    source = tmp_path / "source" / "lab"
    stubs = build.expected_exercises(paths.SOLUTIONS)
    assert {p.name for p in source.iterdir()} == set(stubs) | {"lab.ipynb"}
    for name, text in stubs.items():
        assert (source / name).read_text() == text == (paths.EXERCISES / name).read_text()
    assert nbformat.read(source / "lab.ipynb", as_version=4) == nbgrader_course.notebook()
    assert set(written) == {tmp_path / "nbgrader_config.py", tmp_path / nbgrader_course.COURSE_FILE, *source.iterdir()}


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


def test_a_visible_check_made_from_the_op_registry_passes_the_reference_and_fails_a_wrong_rule(tmp_path, kernel):
    """Does the check each op task's cell gets from the op registry (gradcheck of each form at its friendly example)
    print 'passed' on the reference solution, and 'failed' where one rule is wrong (exp's rule that forgets out)?"""
    from corpus import BY_NAME, make_submission

    made = {task.id: f'with visible_check("{task.id}") as lab:\n' + "".join(
        f"    {line}\n" if line else "\n" for line in op_check(task.id).splitlines()) for task in TASKS
        if ops.of_task(task.id)}
    folder = submission(tmp_path, paths.SOLUTIONS)
    kernel(nbgrader_course.SETUP, folder)
    for task_id, code in made.items():
        assert kernel(code, folder).strip() == VISIBLE["passed"].format(task=task_id), task_id
    wrong = BY_NAME["exp_forgets_out"]
    folder = make_submission(tmp_path, "wrong", [wrong])
    line = kernel(made[wrong.loses[0]], folder).strip()
    assert line.startswith(VISIBLE["failed"].split("{error}")[0].format(task=wrong.loses[0])), line


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


# ----- the judge's preprocessors and the kernel's jail -----

@pytest.fixture
def course(tmp_path_factory) -> str:
    """A course file of every task at its table's points, with a secret: what `autograd-lab nbgrader` writes, and
    what JudgeGrades needs to derive a student's key."""
    from graders.course import course_file

    return str(course_file.init(tmp_path_factory.mktemp("course") / "course.toml"))


def _forged_notebook():
    """The course's notebook as a kernel might leave it: every graded cell claiming full marks."""
    nb = nbgrader_course.notebook()
    for cell in nb.cells:
        if nbgrader_judge.task_of(cell):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="Task passed: 100/100\n"),
                            nbformat.v4.new_output("execute_result", data={"text/plain": "1000.0"})]
    return nb


def _recorded(nb) -> dict[str, float]:
    """What nbgrader's SaveAutoGrades would record for each graded cell (nbgrader's own determine_grade)."""
    from nbgrader.utils import determine_grade

    return {nbgrader_judge.task_of(c): determine_grade(c)[0] for c in nb.cells if nbgrader_judge.task_of(c)}


def test_judge_scores_without_the_notebooks_folder_write_nothing_into_the_working_folder(tmp_path, monkeypatch):
    """Given resources that name no notebook folder (nbgrader always names one), does JudgeScores keep no results
    file at all, rather than one in the working folder (once the repository's own top, from these tests)?"""
    monkeypatch.chdir(tmp_path)
    nbgrader_judge.JudgeScores().preprocess(_forged_notebook(), {nbgrader_judge.RESOURCE: {"tests": []}})
    assert list(tmp_path.iterdir()) == []
    folder = tmp_path / "notebook"
    folder.mkdir()
    nbgrader_judge.JudgeScores().preprocess(_forged_notebook(), {nbgrader_judge.RESOURCE: {"tests": []},
                                                                 "metadata": {"path": str(folder)}})
    assert [path.name for path in folder.iterdir()] == [nbgrader_judge.RESULTS_FILE]


def test_judge_scores_replace_whatever_the_kernel_printed():
    """Does JudgeScores set every graded cell to the judge's message and points, so nbgrader records the
    judge's score, not the 1000 points each cell printed?"""
    result = {"tests": [{"number": t.id, "score": float(t.points) if t.id != "1.4" else 0.0,
                         "max_score": float(t.points), "output": f"Task {t.id}: the judge's words"} for t in TASKS]}
    nb, _ = nbgrader_judge.JudgeScores().preprocess(_forged_notebook(), {nbgrader_judge.RESOURCE: result})
    assert _recorded(nb) == {t.id: (0.0 if t.id == "1.4" else float(t.points)) for t in TASKS}
    for cell in nb.cells:
        if nbgrader_judge.task_of(cell):
            text = "".join(o.get("text", "") for o in cell.outputs)
            assert "the judge's words" in text and "100/100" not in text


@pytest.mark.parametrize("resources", [{}, {nbgrader_judge.RESOURCE: {"error": "cannot grade"}}],
                         ids=["no-judge", "error"])
def test_without_a_judges_result_every_graded_cell_scores_0_and_says_why(resources):
    nb, _ = nbgrader_judge.JudgeScores().preprocess(_forged_notebook(), resources)
    assert set(_recorded(nb).values()) == {0.0}
    said = "".join(o.get("text", "") for c in nb.cells if nbgrader_judge.task_of(c) for o in c.outputs)
    assert ("cannot grade" if resources else "did not run") in said


def test_judge_grades_the_folder_as_the_command_line_does(tmp_path, course):
    """Does JudgeGrades give the scorecard `autograd-lab grade` gives (the reference: full marks), and a folder with
    nothing to grade a clear error, not an exception?"""
    folder = submission(tmp_path, paths.SOLUTIONS)
    nb, resources = nbgrader_judge.JudgeGrades(course=course).preprocess(nbgrader_course.notebook(),
                                                            {"metadata": {"path": str(folder)}})
    assert nbgrader_judge.judged(resources)["score"] == TOTAL_POINTS
    skipped = [c for c in nb.cells if nbgrader_judge.SKIP in c.metadata.get("tags", ())]
    assert [nbgrader_judge.task_of(c) for c in skipped] == [t.id for t in TASKS], "the kernel runs no visible check"
    nb, _ = nbgrader_judge.JudgeScores().preprocess(nb, resources)
    assert nbformat.writes(nb).count(nbgrader_judge.SKIP) == 0, "the tags are taken off again"
    assert sum(_recorded(nb).values()) == TOTAL_POINTS
    empty = tmp_path / "empty"
    empty.mkdir()
    _, resources = nbgrader_judge.JudgeGrades(course=course).preprocess(nbgrader_course.notebook(),
                                                           {"metadata": {"path": str(empty)}})
    assert nbgrader_judge.judged(resources)["error"].startswith(messages.NOTEBOOK_NOT_GRADED[:20])


def test_what_runs_beside_the_judge_cannot_change_what_it_grades(tmp_path, course):
    """The grade goes on while the kernel runs the notebook: once JudgeGrades returns, is the grade that of the
    files as submitted, whatever is written to the folder after (the stubs over every file, here)?"""
    folder = submission(tmp_path, paths.SOLUTIONS)
    _, resources = nbgrader_judge.JudgeGrades(course=course).preprocess(nbgrader_course.notebook(),
                                                           {"metadata": {"path": str(folder)}})
    for name, text in paths.given_modules().items():
        if (folder / name).exists():
            (folder / name).write_text(text)
    assert nbgrader_judge.judged(resources)["score"] == TOTAL_POINTS


def test_the_kernels_jail_hides_the_course_and_the_checkout_but_not_the_interpreter(tmp_path):
    """Does the jail cover the course folder (gradebook, classmates) and the checkout, and keep every folder
    the interpreter needs?"""
    course = tmp_path / "course"
    own = course / "autograded" / "alice" / "lab"
    own.mkdir(parents=True)
    (course / "gradebook.db").write_text("")
    hidden = kernel_jail.hidden(own)
    assert str(course.resolve()) in hidden
    if paths.in_checkout():
        assert any(str(paths.SOLUTIONS.resolve()).startswith(h) for h in hidden)
    for needed in kernel_jail.bubblewrap.interpreter_paths():
        assert not any(needed == h or needed.startswith(h + "/") for h in hidden), needed


def test_a_judge_that_dies_costs_one_notebook_and_the_next_gets_a_new_one(tmp_path, course):
    """The judge is a process of its own, kept for every notebook. Killed mid-grade, does it cost that notebook a
    clear line (every task 0, the instructor told), and is the next notebook graded in full by a new judge?"""
    import signal

    folder = submission(tmp_path, paths.SOLUTIONS)
    _, resources = nbgrader_judge.JudgeGrades(course=course).preprocess(nbgrader_course.notebook(),
                                                           {"metadata": {"path": str(folder)}})
    killed = nbgrader_judge._grading.judge.process
    killed.send_signal(signal.SIGKILL)
    said = nbgrader_judge.judged(resources)["error"]
    assert said.startswith(messages.NOTEBOOK_NOT_GRADED[:20]) and "SIGKILL" in said, said
    _, resources = nbgrader_judge.JudgeGrades(course=course).preprocess(nbgrader_course.notebook(),
                                                           {"metadata": {"path": str(folder)}})
    assert nbgrader_judge._grading.judge.process is not killed
    assert nbgrader_judge.judged(resources)["score"] == TOTAL_POINTS


def test_nbgrader_never_imports_the_judges_code_or_torch(tmp_path, course):
    """nbgrader's process gives the files to its judge and reads the scorecard back: does it grade a notebook
    with neither torch nor the checks loaded (a crash of theirs cannot stop nbgrader, and its exit does not tear
    torch down)?"""
    import subprocess

    folder = submission(tmp_path, paths.SOLUTIONS)
    code = dedent(f"""
        import sys
        from graders.integrations import nbgrader_course, nbgrader_judge
        _, resources = nbgrader_judge.JudgeGrades(course={course!r}).preprocess(nbgrader_course.notebook(),
                                                               {{"metadata": {{"path": {str(folder)!r}}}}})
        score = nbgrader_judge.judged(resources)["score"]
        loaded = sorted(name for name in ("torch", "hypothesis", "graders.judge.checks", "graders.pipeline")
                        if name in sys.modules)
        print(score, loaded)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == f"{float(TOTAL_POINTS)} []", run.stdout
