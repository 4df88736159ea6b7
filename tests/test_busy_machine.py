"""Does a busy machine leave every grade as it is?

A class of the reference, every correct style of tests/corpus_correct/ and the stubs is graded by grade-all twice
under each isolation: once with one judge, and once with twice as many judges as cores beside two busy loops on
every core (each in a session of its own, at the grade's own priority, as other users' jobs are): about four
runnable processes a core. Every student's results.json must be the same, byte for byte: the limits that decide a
verdict count CPU time, and a busy machine moves wall time only. With wall-clock limits, the stubs' loop tasks
failed ("no answer within 10 s") and the reference lost 1.2's cost rung there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from test_corpus_correct import styles, submission

from graders.classgrade import batch
from graders.classgrade.gradebook import student_dir
from graders.isolation import sandbox
from graders.judge import examples_cache
from graders.paths import EXERCISES, SOLUTIONS

pytestmark = [pytest.mark.slow, pytest.mark.load]
ISOLATIONS = [pytest.param("bubblewrap", marks=pytest.mark.skipif(not sandbox.bubblewrap_works(),
                                                                  reason="bubblewrap cannot make a sandbox here")),
              "limits"]
LOOPS_PER_CORE = 2


def cores() -> int:
    return len(os.sched_getaffinity(0))


@contextlib.contextmanager
def busy_machine(per_core: int = LOOPS_PER_CORE):
    """``per_core`` busy loops for every core, each in a session of its own, at this process's priority."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(per_core * cores())]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def make_class(folder):
    """The reference, every correct style (the reference's files with the style's over them) and the stubs."""
    shutil.copytree(SOLUTIONS, folder / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    for style in styles():
        submission(style, folder / style.name)
    stubs = folder / "stubs"
    stubs.mkdir()
    for path in EXERCISES.glob("*.py"):
        shutil.copy(path, stubs / path.name)
    return folder


def differences(quiet, busy, students) -> list[str]:
    """Each student whose results.json differs between the two runs, with the tasks whose outcome differs."""
    found = []
    for student in students:
        mine, theirs = (json.loads((student_dir(out, student) / "results.json").read_text()) for out in (quiet, busy))
        if (student_dir(quiet, student) / "results.json").read_bytes() != \
                (student_dir(busy, student) / "results.json").read_bytes():
            tasks = [f"{a['number']} {a['score']:g} -> {b['score']:g}: {b['output'].splitlines()[0][:140]}"
                     for a, b in zip(mine["tests"], theirs["tests"]) if a != b]
            found.append(f"{student} ({mine['score']:g} -> {theirs['score']:g}): " + "; ".join(tasks))
    return found


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_class_graded_on_a_machine_oversubscribed_four_times_gets_the_quiet_results(isolation, tmp_path,
                                                                                      monkeypatch):
    """Does grade-all, with more judges than cores beside busy loops, give every student of the class the
    results.json a quiet grade gives, byte for byte, and the stubs "not attempted" on every task?"""
    monkeypatch.setenv(examples_cache.CACHE_ENV, str(tmp_path / "cache"))  # drawn by the quiet run, for both
    subs = make_class(tmp_path / "class")
    students = sorted(path.name for path in subs.iterdir())
    settings = batch.Settings(isolation=isolation)
    quiet = batch.grade_all(subs, tmp_path / "quiet", jobs=1, settings=settings)
    with busy_machine():
        busy = batch.grade_all(subs, tmp_path / "busy", jobs=2 * cores(), settings=settings)
    assert (quiet.graded, busy.graded) == (len(students), len(students))
    assert [r.status for r in busy.records] == [r.status for r in quiet.records] == ["graded"] * len(students)
    changed = differences(tmp_path / "quiet", tmp_path / "busy", students)
    assert not changed, f"{len(changed)} of {len(students)} grades changed on the busy machine:\n" + "\n".join(changed)
    totals = {r.student: r.total for r in quiet.records}
    assert totals["stubs"] == 0 and all(totals[s] == 100 for s in students if s != "stubs"), totals
    stubs = json.loads((student_dir(tmp_path / "busy", "stubs") / "results.json").read_text())["tests"]
    assert {t["extra_data"]["status"] for t in stubs if t["max_score"]} == {"not attempted"}
