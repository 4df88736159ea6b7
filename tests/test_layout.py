"""What a worker's packages hold: the student's file, and of every other module only the given code (issue:
nothing of the reference solution on the student's side)."""

from __future__ import annotations

import shutil

from graders import build, layout, paths
from graders.grade import FAILED, PASSED, grade

# The packages that still hold reference code, each for a reason the layout's docstring gives: the loop tasks
# run the student's train.py over the reference engine, optimizer and DataLoader, and fit is graded over the
# reference train_epoch and evaluate. Stand-ins are to replace them.
STILL_HOLDING = {"sub_train", *layout.REFERENCE_PARTS}


def solution_bodies() -> list[tuple[str, list[str]]]:
    """Each graded body of solutions/ as (where, its stripped non-empty lines)."""
    bodies = []
    for path in sorted(paths.SOLUTIONS.glob("*.py")):
        region, start = None, 0
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if build.BEGIN.match(line):
                region, start = [], number
            elif build.END.match(line):
                bodies.append((f"{path.name}:{start}", [text.strip() for text in region if text.strip()]))
                region = None
            elif region is not None:
                region.append(line)
    return bodies


def holds(text: str, body: list[str]) -> bool:
    """Whether ``body``'s lines occur in ``text``, one after another (indentation aside)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return any(lines[i:i + len(body)] == body for i in range(len(lines) - len(body) + 1))


def test_every_package_but_the_loops_holds_no_solution_body(tmp_path):
    """Laid out for a submission of the stubs alone, does every package a worker imports, but those that grade over
    the reference, hold no graded body of solutions/ (the files it can read, print or keep are the public stubs)?"""
    bodies = solution_bodies()
    assert len(bodies) > 20
    lay = layout.lay_out(paths.EXERCISES, tmp_path)
    try:
        checked = 0
        for package in sorted(p for p in lay.packages.iterdir() if p.name not in STILL_HOLDING):
            for module in package.glob("*.py"):
                text = module.read_text()
                found = [where for where, body in bodies if holds(text, body)]
                assert not found, f"{package.name}/{module.name} holds the solution bodies at {found}"
                checked += 1
        assert checked >= 5 * 8
    finally:
        lay.cleanup()


def test_the_check_finds_a_solution_body_where_there_is_one():
    """Does the scan see the reference's own bodies in the reference (so that the test above can fail)?"""
    bodies = solution_bodies()
    text = (paths.SOLUTIONS / "tensor.py").read_text()
    assert all(holds(text, body) for where, body in bodies if where.startswith("tensor.py"))
    assert not any(holds((paths.EXERCISES / "tensor.py").read_text(), body) for _, body in bodies if len(body) > 1)


ASKS_THE_JUDGE = '''

def unbroadcast(grad, shape):
    from worker.main import ask_judge

    return ask_judge("unbroadcast", grad=np.asarray(grad, dtype=np.float64), shape=[int(n) for n in shape])
'''


def test_the_rules_of_1_2_and_1_3_run_over_the_judges_unbroadcast_which_1_1_cannot_ask_for(tmp_path):
    """The reference unbroadcast no longer travels to a worker: the judge answers it for the rules of 1.2 and 1.3.
    Does a submission whose own unbroadcast asks the judge for the answer lose 1.1 (it is not offered there),
    while the reference rules of 1.2 pass over the judge's unbroadcast?"""
    folder = tmp_path / "asks"
    shutil.copytree(paths.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "tensor.py").write_text((folder / "tensor.py").read_text() + ASKS_THE_JUDGE)
    results = {r.task.id: r for r in grade(folder, task_ids=("1.1", "1.2")).results}
    assert results["1.1"].status == FAILED and "student process died" in results["1.1"].message, \
        results["1.1"].message
    reference = {r.task.id: r.status for r in grade(paths.SOLUTIONS, task_ids=("1.2", "1.3")).results}
    assert reference == {"1.2": PASSED, "1.3": PASSED}
