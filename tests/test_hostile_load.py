"""Load: twenty hostile submissions back to back, then four judges at once, with honest ones in between.

The machine and the judge stay healthy: every hostile grade gets exactly its
honest part, the honest submissions graded in between get their normal scores,
and afterwards the judge holds no more file descriptors than before and no
process of the test's (or of a worker uid it leased, or naming its scratch
folders) is left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from hostile import BY_NAME, HOSTILE, Machine, assert_earns, graded, ours, process_table

from graders.isolation import fork_servers, sandbox
from graders.judge import oracles
from graders.judge.grade import grade
from graders.paths import EXERCISES, SOLUTIONS

pytestmark = [pytest.mark.slow, pytest.mark.load, pytest.mark.xdist_group("hostile")]  # as test_hostile.py
ISOLATIONS = [pytest.param("bubblewrap", marks=pytest.mark.skipif(not sandbox.bubblewrap_works(),
                                                                  reason="bubblewrap cannot make a sandbox here")),
              "limits"]
HONEST_TASKS = ("1.1", "2.1", "3.1", "4.1")
HANG_FACTOR = 10  # a wall-clock guard against a hang, this many times a bound in CPU time
HONEST = ((SOLUTIONS, 20.0), (EXERCISES, 0.0))  # (submission, its normal score on HONEST_TASKS)
TOGETHER = (("process_flood", "setsid_daemon", "output_flood"),
            ("memory_bomb", "kill_the_judge", "grandchild_holds_the_pipes"))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def load_entries(isolation: str):
    """The first 20 entries cheap enough to grade back to back in this process: not those with a hole here, nor
    (under process limits) those graded only in a world of the test's making (``Hostile.world``), whose outcome
    here would depend on what copies of the repository other users keep on the machine."""
    return [e for e in HOSTILE if e.load and isolation not in e.holes
            and not (e.world and isolation == "limits")][:20]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_twenty_hostile_submissions_back_to_back(isolation, tmp_path, monkeypatch):
    """Do twenty hostile grades in a row each hold, the honest grades between them score as usual, and the judge
    end with the file descriptors and processes it started with?"""
    entries = load_entries(isolation)
    assert len(entries) == 20
    grade(SOLUTIONS, task_ids=HONEST_TASKS, isolation=isolation)  # warm: imports, torch's own files
    if fork_servers.usable(sandbox.choose(isolation)):
        fork_servers.start(torch_too=True)  # the judge's fork servers, kept from grade to grade: one socket each
    oracles.start()  # the judge's helper for train_epoch and evaluate (weights_made_in_advance grades 5.4): two pipes
    fds, processes = open_fds(), ours(process_table(), (str(tmp_path),))
    start = time.monotonic()
    for i, entry in enumerate(entries):
        machine = Machine(tmp_path / entry.name, entry, monkeypatch)
        try:
            report, seconds = graded(entry, machine.folder, scratch=machine.scratch, isolation=isolation)
            assert seconds <= entry.bound, entry.name
            machine.assert_clean()
            assert_earns(entry, report)
        finally:
            machine.cleanup()
        if i % 5 == 4:
            for folder, score in HONEST:
                honest = grade(folder, task_ids=HONEST_TASKS, isolation=isolation)
                assert honest.score == score, "\n".join(r.message for r in honest.results)
    seconds = time.monotonic() - start
    assert open_fds() == fds, f"{open_fds() - fds} file descriptors leaked"
    assert ours(process_table(), (str(tmp_path),)) == processes
    print(f"\n20 hostile + 8 honest grades under {isolation}: {seconds:.1f} s")


def _judge(folder, out, tasks, isolation, scratch, cwd):
    scratch.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-I", "-m", "graders", "grade", str(folder), "--results", str(out),
                             "--tasks", ",".join(tasks), "--isolation", isolation],
                            cwd=cwd, env={**os.environ, "TMPDIR": str(scratch)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_four_judges_at_once(isolation, tmp_path, monkeypatch):
    """Do three hostile judges and an honest one, running at the same time, each get their own verdict, and
    leave nothing behind?"""
    fds = open_fds()
    for round_number, names in enumerate(TOGETHER):
        machines = [Machine(tmp_path / f"{round_number}-{name}", BY_NAME[name], monkeypatch) for name in names]
        honest_folder, honest_score = HONEST[round_number % len(HONEST)]
        honest_out = tmp_path / f"{round_number}-honest.json"
        needles = tuple(n for m in machines for n in m.needles) + (str(tmp_path / f"{round_number}-honest"),)
        before = ours(process_table(), needles)
        try:
            judges = [_judge(m.folder, m.results / "results.json", m.entry.tasks, isolation, m.scratch, m.folder)
                      for m in machines]
            judges.append(_judge(honest_folder, honest_out, HONEST_TASKS, isolation,
                                 tmp_path / f"{round_number}-honest", tmp_path))
            # a guard against a hang only: four judges at once share the cores, and each grade's bound is its CPU time
            bound = HANG_FACTOR * (max(m.entry.bound for m in machines) + 120)
            for judge in judges:
                _, err = judge.communicate(timeout=bound)
                assert judge.returncode == 0, err[-3000:]
            for machine in machines:
                machine.assert_clean(results_allowed=("results.json",), private_tmp=isolation == "bubblewrap")
                result = json.loads((machine.results / "results.json").read_text())
                assert result["score"] == machine.entry.points, (machine.entry.name, result["score"])
            assert json.loads(honest_out.read_text())["score"] == honest_score
            assert ours(process_table(), needles) - before == set()
        finally:
            for machine in machines:
                machine.cleanup()
    assert open_fds() == fds
