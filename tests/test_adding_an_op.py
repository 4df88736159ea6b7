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

from graders import ops, paths
from graders.tasks import TASKS

# What a maintainer writes by hand, as templates of the op's name ({name}, "softplus" unless the registry has one by
# then) and the new task's id ({id}: the op tasks' next, "1.9" today), so that the trial still adds an op of its own
# after ops and op tasks are added for real.
SOFTPLUS = '''
    def {name}(self) -> Tensor:
        x = self.data
        out = np.logaddexp(0.0, x)

        def backward(g):
            """out = log(1 + exp(x)), elementwise. Return (dL/dx,)."""
            ### BEGIN SOLUTION (op {name}: backward of {name})
            return (g / (1.0 + np.exp(-x)),)
            ### END SOLUTION

        return op(out, (self,), backward)
'''
ENTRY = '''    Op("{name}", "lambda x: x.{name}()", (
        Form("x.{name}()", SINGLE, ([A], {{}}), msg.HINT_{NAME}),
    ), Cost("x.{name}()", "lambda x: np.logaddexp(0.0, x)", 15.0, repeat=10),
        torch=torch_op("nn.functional.softplus")),
'''
ROW = '    op_task("{id}", "backward of {name}", 3, ("{name}",)),\n'
HINT = 'HINT_{NAME} = "{name}\'s slope is a function task 1.6 has"\n'
WRONG = "return (g * np.exp(x) / (1.0 + np.exp(x)) ** 2,)"  # sigmoid's slope: softplus's second derivative


def new_op_name() -> str:
    return next(name for name in ("softplus", *(f"softplus{n}" for n in range(2, 100))) if name not in ops.BY_NAME)


def new_task_id() -> str:
    """The op tasks' next id: 1.N for the largest N of an op task's 1.N, plus one."""
    return f"1.{max(int(task.id.split('.')[1]) for task in TASKS if task.ops) + 1}"


NAME, ID = new_op_name(), new_task_id()
WORDS = {"name": NAME, "NAME": NAME.upper(), "id": ID}


def edit(path: Path, find: str, replace: str) -> None:
    text = path.read_text()
    assert text.count(find) == 1, f"{path.name}: {find!r}"
    path.write_text(text.replace(find, replace))


def insert_after_last(path: Path, prefix: str, lines: str) -> None:
    """``lines`` after the last line of ``path`` that starts with ``prefix``."""
    text = path.read_text()
    at = text.index("\n", text.rindex("\n" + prefix) + 1) + 1
    path.write_text(text[:at] + lines + text[at:])


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    """A copy of the repository (what the trial needs of it) with softplus added as a task of its own, and built."""
    root = tmp_path_factory.mktemp("repository")
    for name in ("graders", "solutions", "exercises", "docs"):
        shutil.copytree(paths.REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "given"))
    shutil.copy(paths.REPO / "pyproject.toml", root)
    edit(root / "solutions" / "tensor.py", "    # ----- reductions and shapes -----\n",
         SOFTPLUS.format(**WORDS).lstrip("\n") + "\n    # ----- reductions and shapes -----\n")
    registry = (root / "graders" / "ops.py").read_text()
    end = registry.index("\n)\n", registry.index("\nOPS = (\n")) + 1  # the line that closes OPS
    (root / "graders" / "ops.py").write_text(registry[:end] + ENTRY.format(**WORDS) + registry[end:])
    insert_after_last(root / "graders" / "tasks.py", "    op_task(", ROW.format(**WORDS))
    with open(root / "graders" / "messages" / "op_tasks.py", "a") as hints:
        hints.write(HINT.format(**WORDS))
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
    run(root, "grade", str(submission), "--tasks", ID, "--results", str(results))
    return json.loads(results.read_text())


def test_the_new_tasks_id_is_written_in_its_row_alone():
    """Of what a maintainer writes by hand to add softplus as a task of its own (its rule and markers, its registry
    entry, its hint, its task's row), does only the row hold the id? (The stub's "Task 1.9" comes from the row:
    below.)"""
    assert [name for name, text in (("rule", SOFTPLUS), ("entry", ENTRY), ("hint", HINT), ("row", ROW))
            if "{id}" in text or ID in text.format(**WORDS)] == ["row"]


@pytest.mark.slow
def test_build_exercises_derives_the_new_tasks_stub_forward_markers_and_tables(repository):
    """Does build-exercises give the new task its stub, the worker its forward, the public tests its op and marker,
    and the contract its row, from the rule, the registry entry and the task's row alone?"""
    marker = "task" + ID.replace(".", "_")
    assert f'raise NotImplementedError("Task {ID}: backward of {NAME}")' in (
        repository / "exercises" / "tensor.py").read_text()
    assert f'"{NAME}": lambda x: x.{NAME}(),' in (repository / "graders" / "worker" / "op_forwards.py").read_text()
    assert f'Op("{NAME}", "{ID}", "{marker}"' in (repository / "exercises" / "tests" / "op_table.py").read_text()
    assert f"{marker}: Task {ID}, backward of {NAME}" in (repository / "exercises" / "pytest.ini").read_text()
    assert f"| {ID} | backward of {NAME} | tensor.py | 3 |" in (repository / "docs/contract.md").read_text()
    run(repository, "build-exercises", "--check")


@pytest.mark.slow
def test_the_new_task_grades_the_reference_right_and_a_wrong_rule_wrong(repository):
    """Does the reference's softplus earn all of its task (its values, and its cost against numpy's own softplus), and a
    rule that returns sigmoid's slope lose it, with the registry entry's hint?"""
    reference = grade(repository, repository / "solutions")
    (task,) = reference["tests"]
    assert (task["number"], task["score"], task["max_score"]) == (ID, 3.0, 3.0), task["output"]
    wrong = repository.parent / "wrong"
    shutil.copytree(repository / "solutions", wrong, ignore=shutil.ignore_patterns("__pycache__"))
    marker = f"### BEGIN SOLUTION (op {NAME}: backward of {NAME})\n            "
    edit(wrong / "tensor.py", marker + "return (g / (1.0 + np.exp(-x)),)", marker + WRONG)
    (task,) = grade(repository, wrong)["tests"]
    assert (task["number"], task["score"]) == (ID, 0.0), task["output"]
    assert f"x.{NAME}()" in task["output"] and f"{NAME}'s slope is a function task 1.6 has" in task["output"]
