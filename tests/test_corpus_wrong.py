"""Does every known-wrong submission in tests/corpus.py lose exactly the tasks its mistake must cost,
with the message we pinned?

Each entry is graded on the tasks of the file it touches only. The rendered
message of every task it loses is compared with ``tests/snapshots/<name>__<task>.txt``
(the text students see is pinned, not only the score). To rewrite the snapshots after an intended change of a
message, run::

    AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 pytest tests/test_corpus_wrong.py

and read the diff before committing it. Entries with a ``grader_bug`` are strict
xfails: they document a grader bug until it is fixed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from corpus import BY_NAME, WRONG, Wrong, make_submission, pin_lines

from graders.judge import reference
from graders.judge.grade import FAILED, PASSED, SKIPPED, Report, grade

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("AUTOGRAD_LAB_UPDATE_SNAPSHOTS") == "1"
# Where the grading machine has CUDA, the source line says "CPU and CUDA agree".
MACHINE_DEPENDENT = (" and CUDA agree",)
# A cost rung's measured figures (the CPU seconds and their ratio to numpy's), which no two runs share: pinned as "N".
MEASURED = re.compile(r"calls took [\d.]+ s of CPU time, \d+ times (.*?) \([\d.]+ s for as many calls\)")
MAX_LINES = 12


class WrongTasksLost(AssertionError):
    """The set of lost tasks is not the entry's ``loses`` (what a documented grader bug raises)."""


def normalized(message: str) -> str:
    for phrase in MACHINE_DEPENDENT:
        message = message.replace(phrase, "")
    message = MEASURED.sub(r"calls took N s of CPU time, N times \1 (N s for as many calls)", message)
    message = pin_lines(message)
    return message.rstrip("\n") + "\n"


def snapshot_path(name: str, task: str) -> Path:
    return SNAPSHOTS / f"{name}__{task}.txt"


def entries() -> list:
    params = []
    for entry in WRONG:
        marks = [pytest.mark.xfail(strict=True, raises=WrongTasksLost, reason=entry.grader_bug)] \
            if entry.grader_bug else []
        params.append(pytest.param(entry, id=entry.name, marks=marks))
    return params


def tasks_to_grade(entry: Wrong) -> tuple[str, ...]:
    """The tasks the entry must lose, and one other task of its file, which must pass: picked by the entry's name,
    so always the same one, and different entries sample different tasks."""
    others = [task for task in entry.graded_tasks if task not in entry.loses]
    sample = others[zlib.crc32(entry.name.encode()) % len(others)] if others else None
    return tuple(task for task in entry.graded_tasks if task in entry.loses or task == sample)


def lost_tasks_text(report: Report) -> str:
    return "\n".join(f"{r.task.id} {r.status}: {r.message}" for r in report.results if r.status != PASSED)


def check_snapshot(entry: Wrong, task: str, message: str) -> None:
    path = snapshot_path(entry.name, task)
    text = normalized(message)
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), (f"no snapshot {path.name} for the message of task {task}:\n{text}\n"
                           "run with AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 to write it")
    assert text == path.read_text(), f"the message of task {task} changed from {path.name}"


@pytest.mark.slow
@pytest.mark.parametrize("entry", entries())
def test_a_known_wrong_submission_loses_exactly_its_tasks(entry: Wrong, tmp_path):
    """Does this mistake cost exactly the tasks it must, each with its pinned message, while another task of its
    file (a sample: see tasks_to_grade) still passes?"""
    folder = make_submission(tmp_path, entry.name, [entry])
    graded = tasks_to_grade(entry)
    report = grade(folder, task_ids=graded, scratch=tmp_path)
    results = {r.task.id: r for r in report.results}
    assert sorted(results) == sorted(graded)

    for task in entry.loses:
        result = results[task]
        if result.status == PASSED:
            continue  # reported below, with every other difference
        assert (result.status, result.score) == (FAILED, dict(entry.keeps).get(task, 0.0)), \
            f"task {task} ended as {result.status!r} with {result.score:g} points:\n{result.message}"
        check_snapshot(entry, task, result.message)

    assert_loses_exactly(entry, report, graded)


def expected_lost(entry: Wrong) -> set[str]:
    """The tasks the entry loses on this machine: its own, and 6.2 beside 6.1 where CUDA is (6.2 runs 6.1's check on
    CUDA, and is skipped, with no points, elsewhere)."""
    return set(entry.loses) | ({"6.2"} if "6.1" in entry.loses and reference.cuda_available() else set())


def assert_loses_exactly(entry: Wrong, report: Report, graded: tuple[str, ...]) -> None:
    results = {r.task.id: r for r in report.results}
    lost = tuple(task for task in graded if results[task].status not in (PASSED, SKIPPED))
    if set(lost) != expected_lost(entry) & set(graded):
        raise WrongTasksLost(f"{entry.name} lost {lost}, expected {entry.loses}; "
                             f"what the graders said:\n{lost_tasks_text(report) or '(all passed)'}")


@pytest.mark.long
@pytest.mark.parametrize("entry", entries())
def test_a_known_wrong_submission_passes_every_other_task_of_its_file(entry: Wrong, tmp_path):
    """Graded on every task of its file (not a sample), does the entry lose exactly its tasks? (Run by .ci/run: a
    mistake that also costs a task the sample missed, as a seed ignored by the deep-chain rung once did.)"""
    folder = make_submission(tmp_path, entry.name, [entry])
    assert_loses_exactly(entry, grade(folder, task_ids=entry.graded_tasks, scratch=tmp_path), entry.graded_tasks)


GRADE_ONE_TASK = """
import sys
sys.path.insert(0, sys.argv[3])
if sys.argv[4] == "yes":
    import lesson_constants  # noqa: F401 - only imported
from graders.judge.grade import grade
print(grade(sys.argv[1], task_ids=(sys.argv[2],)).results[0].message)
"""


@pytest.mark.slow
def test_grading_draws_the_same_examples_whatever_else_the_judge_imported(tmp_path):
    """Does the judge show the same counterexample when the process that runs it has also imported an
    unrelated module of constants (as a batch script or a notebook would)?"""
    entry = BY_NAME["engine_breadth_first"]
    folder = make_submission(tmp_path, entry.name, [entry])
    numbers = ", ".join(str(i * 2654435761 % 2**32) for i in range(1, 301))
    (tmp_path / "lesson_constants.py").write_text(f"SEEDS = ({numbers})\nSIZES = {tuple(range(50))}\n")

    def message(with_constants: str) -> str:
        run = subprocess.run([sys.executable, "-c", GRADE_ONE_TASK, str(folder), "2.1", str(tmp_path), with_constants],
                             capture_output=True, text=True, timeout=300, check=True)
        return run.stdout

    assert message("no") == message("yes")


def test_every_entry_applies_to_the_solution_exactly_once(tmp_path):
    """Does each entry's ``find`` text occur exactly once in its file, so the corpus tracks solutions/?"""
    for entry in WRONG:
        folder = make_submission(tmp_path, entry.name, [entry])
        assert entry.replace in (folder / entry.file).read_text()
        assert set(entry.loses) <= set(entry.graded_tasks), entry.name


def test_every_snapshot_belongs_to_an_entry_and_a_task_it_loses():
    """Is every pinned message still wanted (no snapshot left behind by a renamed or removed entry)?"""
    wanted = {snapshot_path(e.name, t).name for e in WRONG for t in e.loses}
    orphans = sorted(p.name for p in SNAPSHOTS.glob("*.txt") if p.name not in wanted)
    assert not orphans


@pytest.mark.parametrize("path", sorted(SNAPSHOTS.glob("*.txt")), ids=lambda p: p.stem)
def test_a_pinned_message_names_its_task_and_stays_short(path: Path):
    """Does every pinned message start with its task id and title and fit in about a dozen lines?"""
    name, task = path.stem.rsplit("__", 1)
    assert name in BY_NAME
    lines = path.read_text().splitlines()
    assert lines[0].startswith(f"Task {task} ("), lines[0]
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines"
