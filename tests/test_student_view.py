"""`pytest exercises/` as a student sees it: on the stubs each task fails once, with one "not attempted"
line (its other tests skipped), and on a finished submission every test passes."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import paths
from graders.tasks import TASKS

EXERCISE_FILES = ("tests", "conftest.py", "pytest.ini")  # what the exercises folder adds to the student's modules
CUDA_TASK = "6.2"  # skipped on machines without a GPU
CONTRACT_TESTS = 5  # exercises/tests/test_contract.py: the rules the stubs keep already (4 files, float64)


def lay_out_as_student(parent: Path, modules: dict[str, str]) -> Path:
    """``parent/exercises``: the modules (file name -> text) beside the bundle's public tests, conftest.py and
    pytest.ini, as a student's folder holds them; returns ``parent``."""
    folder = Path(parent) / "exercises"
    folder.mkdir(parents=True)
    for name, text in modules.items():
        (folder / name).write_text(text)
    for name in EXERCISE_FILES:
        source = paths.EXERCISES / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, folder / name)
    return Path(parent)


def run_pytest(cwd, *options: str) -> tuple[str, dict[str, int]]:
    """Run `python -m pytest exercises/ OPTIONS` in ``cwd``; return the output and the final counts."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", COLUMNS="80" if "-rf" not in options else "1000")
    result = subprocess.run([sys.executable, "-m", "pytest", "exercises/", *options], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    summary = output.strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (failed|passed|skipped|errors?|deselected)", summary)}
    return output, counts


@pytest.mark.slow
def test_on_the_stubs_every_test_fails_with_a_one_line_reason():
    """On the real stubs, does every test fail, each task show its "not attempted" line, and no traceback show?"""
    output, counts = run_pytest(paths.REPO)
    assert counts.get("failed", 0) > 0 and set(counts) <= {"failed", "skipped", "passed"}, f"counts {counts}:\n{output}"
    assert counts.get("passed", 0) == CONTRACT_TESTS, f"only the contract's tests pass on the stubs: {counts}"
    graded_here = [t for t in TASKS if t.id != CUDA_TASK]
    assert counts["failed"] == len(graded_here), f"one failure per task, its other tests skipped: {counts}"
    for task in TASKS:
        if task.id == CUDA_TASK:
            continue
        lines = [line for line in output.splitlines() if line.startswith(f"Task {task.id} ")]
        assert lines and all("not attempted yet" in line for line in lines), \
            f"Task {task.id}: no 'not attempted' line, or another kind of line: {lines}\n{output}"
    for sign in ("Traceback", "NotImplementedError", "\nE   ", "raise "):
        assert sign not in output, f"{sign!r} in the stub run's output:\n{output}"


@pytest.mark.slow
def test_a_finished_submission_passes_every_test(tmp_path):
    """Laid out as a submission (the solutions in a folder named exercises/), does every test pass?"""
    lay_out_as_student(tmp_path, {module.name: module.read_text() for module in paths.SOLUTIONS.glob("*.py")})
    output, counts = run_pytest(tmp_path)
    assert counts.get("passed", 0) > 0 and set(counts) <= {"passed", "skipped"}, f"counts {counts}:\n{output}"
    assert counts.get("skipped", 0) <= 1, f"only Task {CUDA_TASK} may skip (no GPU): {counts}\n{output}"
    assert str(tmp_path) in output, f"pytest did not run in the submission's folder:\n{output}"


@pytest.mark.slow
def test_a_fit_torch_that_leaves_its_batches_behind_fails_in_public_too(tmp_path):
    """A fit_torch that never moves its training batches with .to(device), which the graders can see only on
    CUDA (6.2; tests/test_checks_loop.py), fails `pytest exercises/ -m task6_1` on the student's own CPU, naming
    the batches left behind: the public test catches it before a GPU does."""
    pytest.importorskip("torch")
    modules = {module.name: module.read_text() for module in paths.SOLUTIONS.glob("*.py")}
    moving = "            xb, yb = xb.to(device), yb.to(device)\n"
    assert moving in modules["torch_loop.py"]
    modules["torch_loop.py"] = modules["torch_loop.py"].replace(moving, "")
    lay_out_as_student(tmp_path, modules)
    output, counts = run_pytest(tmp_path, "-m", "task6_1")
    assert counts.get("failed") == 1, f"counts {counts}:\n{output}"
    assert "never moved with .to(device): training x0, training y0" in output, output


@pytest.mark.slow
@pytest.mark.parametrize("readme", ["README.md", "exercises/README.md", "docs/students.md"])
def test_the_readmes_example_of_a_task_not_started_is_what_pytest_prints(readme):
    """Is the `pytest exercises/ -m task1_4` example of both READMEs and the students' page, below its cut header,
    what the stubs print?"""
    text = (paths.REPO / readme).read_text()
    example = re.search(r"\$ pytest exercises/ -m task1_4\n\.\.\.\n(.*?)```", text, re.S)
    assert example, f"{readme} has no example of `pytest exercises/ -m task1_4`"
    output, _ = run_pytest(paths.REPO, "-m", "task1_4", "-p", "no:cacheprovider")
    shown = example.group(1).strip()
    assert shown in output, f"{readme} shows:\n{shown}\n\npytest prints:\n{output}"


@pytest.mark.slow
def test_an_engine_that_looks_up_a_gradient_never_stored_is_told_what_the_key_is(tmp_path):
    """An engine whose walk reaches a node before any gradient for it was stored raises a KeyError whose key is an
    id(), a memory address: is it one line naming the key, the student's line and the order to walk, with no
    traceback?"""
    modules = {module.name: module.read_text() for module in paths.SOLUTIONS.glob("*.py")}
    walk = "for node in _reverse_topological_order(self):"
    assert modules["tensor.py"].count(walk) == 1
    modules["tensor.py"] = modules["tensor.py"].replace(walk, "for node in _reverse_topological_order(self)[::-1]:")
    lay_out_as_student(tmp_path, modules)
    output, counts = run_pytest(tmp_path, "-m", "task2_2")
    assert counts.get("failed", 0) >= 1, f"counts {counts}:\n{output}"
    line = next(line for line in output.splitlines() if line.startswith("KeyError: "))
    assert re.fullmatch(r"KeyError: \d{9,} at tensor\.py:\d+\. The key is id\(\) of a node .* reverse topological "
                        r"order .*", line), line
    assert "Traceback" not in output and "\nE   " not in output, output


# The public tests' messages for mistakes that once passed them, or that they once told wrong: the corpus entry, the
# marker and the public test that catches it. Each failure line is pinned in tests/snapshots/public/ (rewritten with
# AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1, like the hidden messages).
PUBLIC_PINNED = {
    "evaluate_averages_over_examples": ("task5_2", "test_evaluate_averages_the_batch_losses_not_the_examples"),
    "fit_torch_val_loss_over_examples": (
        "task6_1", "test_fit_torch_validates_on_the_mean_of_unequal_batches_not_of_the_examples"),
    "loader_shuffles_whole_batches": ("task4_2", "test_shuffle_mixes_the_examples_not_only_the_batches"),
    "loader_always_drops_the_last_batch": ("task4_1", "test_batches_hold_the_values_given_to_float64_precision"),
    "checkpoint_without_the_optimizer": ("task5_5", "test_a_save_that_dies_midway_leaves_the_last_checkpoint_whole"),
    "fit_drops_accumulate_and_clip_norm": ("task5_4", "test_fit_passes_accumulate_and_clip_norm_on_to_train_epoch"),
    "train_epoch_keeps_loss_tensors": ("task5_1", "test_train_epoch_lets_each_loss_tensor_go"),
    "fit_torch_running_total_of_tensors": ("task6_1", "test_fit_torch_lets_each_loss_tensor_go"),
}
PUBLIC_SNAPSHOTS = Path(__file__).parent / "snapshots" / "public"


@pytest.mark.slow
@pytest.mark.parametrize("entry", list(PUBLIC_PINNED))
def test_a_public_test_says_what_went_wrong_in_its_pinned_words(entry, tmp_path):
    """Does the public test that catches this corpus entry fail it (it once passed, or once named another mistake),
    with the line pinned in tests/snapshots/public/?"""
    from corpus import BY_NAME, make_submission  # imported here: tests/benchmarks import this module's lay-out

    if entry.startswith("fit_torch"):
        pytest.importorskip("torch")
    marker, test = PUBLIC_PINNED[entry]
    folder = make_submission(tmp_path / "made", "submission", [BY_NAME[entry]])
    lay_out_as_student(tmp_path, {path.name: path.read_text() for path in folder.glob("*.py")})
    output, counts = run_pytest(tmp_path, "-m", marker, "-k", test, "-rf", "-p", "no:cacheprovider")
    assert counts.get("failed") == 1, f"counts {counts}:\n{output}"
    line = next(line for line in output.splitlines() if line.startswith("FAILED ") and f"::{test}" in line)
    said = line.split(" - ", 1)[1] + "\n"
    path = PUBLIC_SNAPSHOTS / f"{entry}.txt"
    if os.environ.get("AUTOGRAD_LAB_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(said)
    assert said == path.read_text(), f"the public message for {entry} changed from {path.name}"
