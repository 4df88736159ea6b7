"""The generated exercises/ stay in step with solutions/, and the stub generator keeps its rules."""

import dataclasses
import re
import shutil

import pytest

from graders import ops, paths
from graders.course import build, tables
from graders.tasks import BY_ID, TASKS

MARKED = '''def double(x):
    """2 x."""
    ### BEGIN SOLUTION (Task 9.9: double)
    y = x + x
    return y
    ### END SOLUTION
'''


def test_exercises_are_in_sync_with_solutions():
    """Would regenerating exercises/ from solutions/ change nothing?"""
    stale = build.out_of_sync(paths.SOLUTIONS, paths.EXERCISES)
    assert stale == [], f"exercises/ out of sync for {stale}: run `autograd-lab build-exercises`"


def test_the_files_derived_from_the_task_table_and_the_op_registry_are_in_sync():
    """Would regenerating the worker's forwards, the public tests' op table, exercises/pytest.ini's markers and the
    contract's tables from graders/tasks.py and graders/ops.py change nothing?"""
    assert tables.out_of_date() == [], "run `autograd-lab build-exercises`"


def test_an_op_added_to_the_registry_makes_its_derived_files_stale(monkeypatch):
    """Can the check above fail: with one more op in the registry, are the worker's forwards, the public tests'
    table and the contract's table of forms stale, and do they hold the new op?"""
    softsign = ops.Op("softsign", "lambda x: x.softsign()", (
        ops.Form("x.softsign()", ops.SINGLE, ([ops.A], {}), "a hint"),), ops.Cost("x.softsign()", "lambda x: x", 9.0))
    monkeypatch.setattr(ops, "OPS", (*ops.OPS, softsign))
    with_softsign = dataclasses.replace(BY_ID["1.6"], ops=(*BY_ID["1.6"].ops, "softsign"))
    monkeypatch.setattr(ops, "TASKS", tuple(with_softsign if task.id == "1.6" else task for task in TASKS))
    monkeypatch.setattr(ops, "BY_ID", {**BY_ID, "1.6": with_softsign})
    assert tables.out_of_date() == ["graders/worker/op_forwards.py", "exercises/tests/op_table.py", "docs/contract.md"]
    assert '"softsign": lambda x: x.softsign(),' in tables.worker_forwards()
    assert "`x.softsign()` (9 times)" in tables.contract(tables.CONTRACT.read_text())


def test_the_markers_are_the_task_tables_and_keep_a_note_after_the_title():
    """Are exercises/pytest.ini's markers one per task of the table, "taskX_Y: Task X.Y, title", keeping a note
    written after a title and dropping a marker of no task?"""
    text = "[pytest]\nmarkers =\n    task1_1: Task 1.1, unbroadcast (a note)\n    task9_9: Task 9.9, gone\n"
    markers = tables.pytest_ini(text).split("markers =\n")[1].splitlines()
    assert markers[1] == "    task1_1: Task 1.1, unbroadcast (a note)"
    assert markers[2:] == [f"    {task.marker}: Task {task.id}, {task.title}" for task in TASKS[1:]]


def test_a_marked_region_becomes_one_raise_at_the_marker_indentation():
    """Does a BEGIN/END SOLUTION region become one `raise NotImplementedError` line with the task label?"""
    assert build.stub_source(MARKED) == (
        'def double(x):\n'
        '    """2 x."""\n'
        '    raise NotImplementedError("Task 9.9: double")\n'
    )


def test_a_backward_rules_marker_names_its_op_and_its_stub_the_task_whose_row_lists_it():
    """Does a marker that names an op (``op matmul: ...``) become the stub of the task whose row lists the op (1.4),
    so that an op task's id is written in its row alone, and does one naming an op no row lists raise MarkerError
    with the file and line?"""
    rule = "        ### BEGIN SOLUTION (op matmul: backward of @)\n        return g @ w.T, x.T @ g\n" \
           "        ### END SOLUTION\n"
    assert build.stub_source(rule) == '        raise NotImplementedError("Task 1.4: backward of @")\n'
    with pytest.raises(build.MarkerError, match=r"^broken\.py:1: no task of graders/tasks\.py grades the op "
                                                r"'softsign'"):
        build.stub_source(rule.replace("op matmul", "op softsign"), "broken.py")


def test_text_without_markers_is_copied_as_it_is():
    """Is a file with no solution region left exactly as it was?"""
    text = "import numpy as np\n\n\ndef given():\n    return 1\n"
    assert build.stub_source(text) == text


@pytest.mark.parametrize("text, message", [
    ("    ### BEGIN SOLUTION (Task 9.9: double)\n    return 2 * x\n",
     "broken.py:1: BEGIN SOLUTION without END SOLUTION"),
    ("    return 2 * x\n    ### END SOLUTION\n", "broken.py:2: unexpected or malformed marker"),
    ("    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n", "broken.py:1: unexpected or malformed marker"),
], ids=["begin-without-end", "end-without-begin", "begin-without-task-id"])
def test_an_unpaired_or_unlabelled_marker_raises_marker_error(text, message):
    """Does a marker that does not pair up, or carries no task id, raise MarkerError naming the file and line?"""
    with pytest.raises(build.MarkerError, match="^" + re.escape(message)):
        build.stub_source(text, "broken.py")


def test_build_exercises_never_writes_over_filled_in_work(tmp_path, capsys):
    """A student filled in one task of tensor.py in exercises/, and an instructor edited a docstring in another
    file: does build-exercises refuse (exit 1, writing nothing, naming tensor.py), update everything with
    --force, and rewrite a stub that only differs in its text without asking?"""
    from graders.cli import main

    out = tmp_path / "exercises"
    assert main(["build-exercises", "--out", str(out)]) == 0
    stub = (out / "tensor.py").read_text()
    filled = stub.replace('raise NotImplementedError("Task 1.1: unbroadcast")', "return grad", 1)
    assert filled != stub
    (out / "tensor.py").write_text(filled)
    (out / "optim.py").write_text((out / "optim.py").read_text().replace('"""', '"""Edited. ', 1))
    capsys.readouterr()
    assert main(["build-exercises", "--out", str(out)]) == 1
    said = capsys.readouterr().err
    assert "tensor.py" in said and "optim.py" not in said and "--force" in said
    assert (out / "tensor.py").read_text() == filled, "nothing written"
    assert (out / "optim.py").read_text() != stub, "nothing written, not even the files that were safe"
    assert main(["build-exercises", "--out", str(out), "--force"]) == 0
    assert (out / "tensor.py").read_text() == stub
    (out / "optim.py").write_text((out / "optim.py").read_text().replace('"""', '"""Edited. ', 1))
    assert main(["build-exercises", "--out", str(out)]) == 0, "a stub with other text is rewritten"


SOFTSIGN = '''
    def softsign(self) -> Tensor:
        out = self.data / (1.0 + np.abs(self.data))

        def backward(g):
            """out = x / (1 + |x|), elementwise. Return (dL/dx,)."""
            ### BEGIN SOLUTION (Task 9.9: backward of softsign)
            return (g / (1.0 + np.abs(self.data)) ** 2,)
            ### END SOLUTION

        return op(out, (self,), backward)
'''


def test_build_exercises_adds_a_new_task_without_force_and_keeps_refusing_over_work(tmp_path):
    """A maintainer adds a task (a new method with its marked rule) to solutions/: does build-exercises write its
    stub into exercises/ that were built before, without --force, since no filled-in task is lost; and does it still
    refuse where a student filled in a task of that file?"""
    solutions, out = tmp_path / "solutions", tmp_path / "exercises"
    shutil.copytree(paths.SOLUTIONS, solutions, ignore=shutil.ignore_patterns("__pycache__"))
    build.build_exercises(solutions, out)
    tensor = solutions / "tensor.py"
    anchor = "    # ----- reductions and shapes -----\n"
    tensor.write_text(tensor.read_text().replace(anchor, SOFTSIGN.lstrip("\n") + "\n" + anchor, 1))
    assert build.build_exercises(solutions, out) == ["tensor.py"]
    assert 'raise NotImplementedError("Task 9.9: backward of softsign")' in (out / "tensor.py").read_text()
    filled = (out / "tensor.py").read_text().replace('raise NotImplementedError("Task 1.5: backward of exp")',
                                                     "return (g * out,)", 1)
    (out / "tensor.py").write_text(filled)
    tensor.write_text(tensor.read_text().replace("softsign", "softsign_again"))
    with pytest.raises(build.WouldOverwriteWork):
        build.build_exercises(solutions, out)
    assert (out / "tensor.py").read_text() == filled


def test_a_file_that_does_not_parse_is_taken_to_hold_work():
    """Where the current file does not parse, is a stub it lacks taken for work (never written over)?"""
    stub = build.stub_source(MARKED)
    assert build.holds_work("def double(x:\n", stub)
    assert not build.holds_work("", stub), "a function the file does not have yet is a new task"
    assert build.holds_work("def double(x):\n    return x + x\n", stub)


def test_help_lists_the_instructors_commands_first():
    from graders.cli import ORDER, parser

    text = parser().format_help()
    positions = [text.index(f"    {name} ") if f"    {name} " in text else text.index(f"    {name}\n")
                 for name in ORDER]
    assert positions == sorted(positions) and ORDER[0] == "grade" and ORDER[-1] == "build-exercises"
