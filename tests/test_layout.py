"""What a worker's packages hold: the student's file, and of every other module only the given code (issue:
nothing of the reference solution on the student's side)."""

from __future__ import annotations

import shutil

from solution_scan import distinctive_lines, holds, scan_tree, solution_bodies

from graders import paths
from graders.judge.grade import FAILED, PASSED, grade
from graders.submission import layout
from graders.tasks import TASKS

# Every package a task's route names (graders.tasks): the hybrids, the whole stack and the oracles' markers.
ROUTED = {package for task in TASKS for group in task.worker_groups for package in group}


def test_no_package_and_no_worker_code_holds_a_solution_body(tmp_path):
    """Laid out for a submission of the stubs alone, does every package a worker imports, and the worker's own
    code (stand-ins and oracles included), hold no graded body of solutions/ and no line only a body holds (the
    files it can read, print or keep are the public stubs and the worker's code)?"""
    assert len(solution_bodies()) > 20 and len(distinctive_lines()) > 20
    lay = layout.lay_out(paths.EXERCISES, tmp_path)
    try:
        modules = [m for m in lay.root.rglob("*.py")]
        assert len(modules) >= 6 * 8 + 10
        assert {p.name for p in lay.packages.iterdir()} == ROUTED
        assert scan_tree(lay.root) == {}
    finally:
        lay.cleanup()


def test_the_check_finds_a_solution_body_where_there_is_one(tmp_path):
    """Does the scan see the reference's own bodies in the reference, and a single lifted line (so that the test
    above can fail)?"""
    text = (paths.SOLUTIONS / "tensor.py").read_text()
    assert all(holds(text, body) for where, body in solution_bodies() if where.startswith("tensor.py"))
    assert not any(holds((paths.EXERCISES / "tensor.py").read_text(), body) for _, body in solution_bodies()
                   if len(body) > 1)
    (tmp_path / "one_line.txt").write_text("        " + sorted(distinctive_lines())[0] + "\n")
    assert list(scan_tree(tmp_path)) == [str(tmp_path / "one_line.txt")]
    assert scan_tree(paths.EXERCISES) == {}


ASKS_THE_JUDGE = '''

def unbroadcast(grad, shape):
    from worker.verbs import ask_judge

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
