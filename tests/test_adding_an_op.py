"""Adding an op task as a maintainer does: its rule in solutions/, one entry of the op registry, one row of the task
table (the one place its id is written) and its hint, then `autograd-lab build-exercises`; in a copy of the
repository, graded both ways."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import paths

SOFTPLUS = '''
    def softplus(self) -> Tensor:
        x = self.data
        out = np.logaddexp(0.0, x)

        def backward(g):
            """out = log(1 + exp(x)), elementwise. Return (dL/dx,)."""
            ### BEGIN SOLUTION (op softplus: backward of softplus)
            return (g / (1.0 + np.exp(-x)),)
            ### END SOLUTION

        return op(out, (self,), backward)
'''
ENTRY = '''    Op("softplus", "lambda x: x.softplus()", (
        Form("x.softplus()", SINGLE, ([A], {}), msg.HINT_SOFTPLUS),
    ), Cost("x.softplus()", "lambda x: np.logaddexp(0.0, x)", 15.0, repeat=10),
        torch=torch_op("nn.functional.softplus")),
)
'''
ROW_BEFORE = '    op_task("1.8", "backward of reshape and .T", 3, ("reshape", "T")),\n'
ROW = '    op_task("1.9", "backward of softplus", 3, ("softplus",)),\n'
HINT = 'HINT_SOFTPLUS = "softplus\'s slope is a function task 1.6 has"\n'
WRONG = "return (g * np.exp(x) / (1.0 + np.exp(x)) ** 2,)"  # sigmoid's slope: softplus's second derivative


def edit(path: Path, find: str, replace: str) -> None:
    text = path.read_text()
    assert text.count(find) == 1, f"{path.name}: {find!r}"
    path.write_text(text.replace(find, replace))


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    """A copy of the repository (what the trial needs of it) with softplus added as task 1.9, and built."""
    root = tmp_path_factory.mktemp("repository")
    for name in ("graders", "solutions", "exercises", "docs"):
        shutil.copytree(paths.REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "given"))
    shutil.copy(paths.REPO / "pyproject.toml", root)
    edit(root / "solutions" / "tensor.py", "    # ----- reductions and shapes -----\n",
         SOFTPLUS.lstrip("\n") + "\n    # ----- reductions and shapes -----\n")
    last = "    ), Cost(\"x.T\", \"lambda x: x.T.copy()\", 30.0), torch=_reverse_axes, moves_entries=True),\n"
    edit(root / "graders" / "ops.py", last + ")\n", last + ENTRY)
    edit(root / "graders" / "tasks.py", ROW_BEFORE, ROW_BEFORE + ROW)
    edit(root / "graders" / "messages" / "op_tasks.py", "HINT_T = ", HINT + "HINT_T = ")
    run(root, "build-exercises")
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m graders ARGS`` with the copy's graders first on the path, from a folder outside it."""
    env = {**os.environ, "PYTHONPATH": str(root), "AUTOGRAD_LAB_CACHE": "off"}
    result = subprocess.run([sys.executable, "-m", "graders", *args], cwd=root.parent, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def grade(root: Path, submission: Path) -> dict:
    results = submission.parent / f"{submission.name}.json"
    run(root, "grade", str(submission), "--tasks", "1.9", "--results", str(results))
    return json.loads(results.read_text())


def test_the_new_tasks_id_is_written_in_its_row_alone():
    """Of what a maintainer writes by hand to add softplus as task 1.9 (its rule and markers, its registry entry, its
    hint, its task's row), does only the row hold the id? (The stub's "Task 1.9" comes from the row: below.)"""
    assert [name for name, text in (("rule", SOFTPLUS), ("entry", ENTRY), ("hint", HINT), ("row", ROW))
            if "1.9" in text] == ["row"]


@pytest.mark.slow
def test_build_exercises_derives_the_new_tasks_stub_forward_markers_and_tables(repository):
    """Does build-exercises give the new task its stub, the worker its forward, the public tests its op and marker,
    and the contract its row, from the rule, the registry entry and the task's row alone?"""
    assert 'raise NotImplementedError("Task 1.9: backward of softplus")' in (
        repository / "exercises" / "tensor.py").read_text()
    assert '"softplus": lambda x: x.softplus(),' in (repository / "graders" / "worker" / "op_forwards.py").read_text()
    assert 'Op("softplus", "1.9", "task1_9"' in (repository / "exercises" / "tests" / "op_table.py").read_text()
    assert "task1_9: Task 1.9, backward of softplus" in (repository / "exercises" / "pytest.ini").read_text()
    assert "| 1.9 | backward of softplus | tensor.py | 3 |" in (repository / "docs/contract.md").read_text()
    run(repository, "build-exercises", "--check")


@pytest.mark.slow
def test_the_new_task_grades_the_reference_right_and_a_wrong_rule_wrong(repository):
    """Does the reference's softplus earn all of 1.9 (its values, and its cost against numpy's own softplus), and a
    rule that returns sigmoid's slope lose it, with the registry entry's hint?"""
    reference = grade(repository, repository / "solutions")
    (task,) = reference["tests"]
    assert (task["number"], task["score"], task["max_score"]) == ("1.9", 3.0, 3.0), task["output"]
    wrong = repository.parent / "wrong"
    shutil.copytree(repository / "solutions", wrong, ignore=shutil.ignore_patterns("__pycache__"))
    edit(wrong / "tensor.py", "return (g / (1.0 + np.exp(-x)),)", WRONG)
    (task,) = grade(repository, wrong)["tests"]
    assert (task["number"], task["score"]) == ("1.9", 0.0), task["output"]
    assert "x.softplus()" in task["output"] and "softplus's slope is a function task 1.6 has" in task["output"]
