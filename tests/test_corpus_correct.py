"""Does every correct submission in tests/corpus_correct/, each written in another student's style,
get full marks?

Each folder holds the files a student wrote in one style (described in its
``STYLE.txt``); the rest of the submission is the reference's. A
line ``tasks: 3.1 3.2 3.3`` in STYLE.txt names the tasks to grade it on; without
one, a folder is graded on every task of tensor.py.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest
from corpus import TASKS_OF_FILE

from graders import ops
from graders.judge.grade import PASSED, SKIPPED, grade
from graders.paths import SOLUTIONS
from graders.tasks import BY_ID

CORRECT = Path(__file__).parent / "corpus_correct"
TASKS_LINE = re.compile(r"^tasks:(.*)$", re.MULTILINE)


def styles() -> list[Path]:
    return sorted(p for p in CORRECT.iterdir() if p.is_dir() and (p / "STYLE.txt").exists())


def defines(text: str, op: ops.Op) -> bool:
    """Whether a style's tensor.py (``text``) defines what the op's forward calls by name (``x.exp()`` an ``exp``,
    ``x.T`` a ``T``); an operator (``x + y``) it always has."""
    called = {node.attr for node in ast.walk(ast.parse(op.forward)) if isinstance(node, ast.Attribute)}
    return all(re.search(rf"^\s*def {name}\(", text, flags=re.M) for name in called)


def tasks_of(folder: Path) -> tuple[str, ...]:
    """The task ids the folder's STYLE.txt lists; without a list, every task of tensor.py but an op task with an op
    the style's tensor.py does not define (one added to the registry after the style was written)."""
    match = TASKS_LINE.search((folder / "STYLE.txt").read_text())
    if match is None:
        text = (folder / "tensor.py").read_text()
        return tuple(task for task in TASKS_OF_FILE["tensor.py"] if all(defines(text, op) for op in ops.of_task(task)))
    tasks = tuple(re.split(r"[\s,]+", match[1].strip()))
    unknown = [t for t in tasks if t not in BY_ID]
    assert not unknown, f"{folder.name}/STYLE.txt lists unknown task ids {unknown}"
    return tasks


@pytest.mark.slow
@pytest.mark.parametrize("folder", styles(), ids=lambda p: p.name)
def test_a_correct_submission_in_another_style_gets_full_marks(folder: Path, tmp_path):
    """Does a correct submission written another way pass every task it is graded on?"""
    tasks = tasks_of(folder)
    report = grade(submission(folder, tmp_path / folder.name), task_ids=tasks)
    assert sorted(r.task.id for r in report.results) == sorted(tasks)
    # 6.2 is skipped (and carries no points) where the grading machine has no CUDA.
    lost = [f"{r.task.id} {r.status}: {r.message}" for r in report.results
            if r.status != PASSED and not (r.status == SKIPPED and r.task.points == 0)]
    assert not lost, "\n".join(lost)
    assert report.score == report.max_score


def test_a_style_is_graded_on_every_op_it_defines_and_not_on_an_op_added_after_it(monkeypatch):
    """Does every style of tensor.py define the same ops of the registry, so that an op one style lacks is an op
    added after them all (left out of each one's grade) and never a rule one style lost (which would go ungraded),
    does the reference define every op, and would an op a style does not define (softplus, as task 1.8's) leave out
    only that op's task?"""
    texts = {folder.name: (folder / "tensor.py").read_text() for folder in styles()
             if (folder / "tensor.py").exists() and not TASKS_LINE.search((folder / "STYLE.txt").read_text())}
    assert len(texts) >= 5
    reference = (SOLUTIONS / "tensor.py").read_text()
    for op in ops.OPS:
        defined = sorted(name for name, text in texts.items() if defines(text, op))
        assert defined in ([], sorted(texts)), f"{op.name} is defined by {defined} only"
        assert defines(reference, op), op.name
    softplus = ops.Op("softplus", "lambda x: x.softplus()", (), ops.Cost("x.softplus()", "lambda x: x", 15.0))
    assert not defines(texts["kahn"], softplus) and defines("    def softplus(self):\n", softplus)
    before = tasks_of(CORRECT / "kahn")
    of_task = ops.of_task
    monkeypatch.setattr(ops, "of_task", lambda task: (softplus,) if task == "1.8" else of_task(task))
    assert tasks_of(CORRECT / "kahn") == tuple(task for task in before if task != "1.8") and "1.8" in before


def test_the_corpus_holds_at_least_five_styles():
    """Are there at least five correct styles, each with files that differ from solutions/?"""
    folders = styles()
    assert len(folders) >= 5
    for folder in folders:
        files = list(folder.glob("*.py"))
        assert files, folder.name
        assert all(f.read_text() != (SOLUTIONS / f.name).read_text() for f in files), folder.name


def submission(folder: Path, into: Path) -> Path:
    """The reference's files with the style's own files over them."""
    into.mkdir(parents=True)
    for path in [*SOLUTIONS.glob("*.py"), *folder.glob("*.py")]:
        shutil.copy(path, into / path.name)
    return into
