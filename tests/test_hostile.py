"""Does the grader hold against every submission of the hostile corpus (tests/hostile.py), with and without
bubblewrap?

For each entry and each isolation: the grade finishes within the entry's bound,
the machine is left clean (no process of the test's, of the worker uids it
leased, or naming its scratch folder or marker; no file outside the scratch
folder: /tmp, the submission, the results folder, the repository,
site-packages), and the score is exactly what the honest part earns. Entries
marked with a ``hole`` for an isolation are strict xfails there: the attack
wins, and the reason says why.

The entries with ``cli`` are also graded the way CI does it: ``python -m
graders grade`` run from inside the submission folder, with ``--results``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from hostile import HOSTILE, AttackSucceeded, Hostile, Machine, assert_earns

from graders import sandbox
from graders.grade import grade

# One xdist worker runs every hostile grade, one after another: attacks write fixed paths (/tmp/results.json)
# that another hostile test, checking the machine is clean, would see.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hostile")]
ISOLATIONS = ("bubblewrap", "limits")
# Entries allowed more than this many seconds run every task to its deadline by design: `long`, run by .ci/run.
LONG_BOUND = 100.0
CLI_SLACK = 60.0  # the judge's own start (torch) on top of the grade, for the command-line runs


def params(entries) -> list:
    params = []
    for entry in entries:
        for isolation in ISOLATIONS:
            marks = []
            if isolation == "bubblewrap":
                marks.append(pytest.mark.skipif(not sandbox.bubblewrap_works(),
                                                reason="bubblewrap is missing or cannot make a sandbox here"))
            if entry.bound > LONG_BOUND:
                marks.append(pytest.mark.long)
            if isolation in entry.holes:
                marks.append(pytest.mark.xfail(strict=entry.strict_holes, raises=AttackSucceeded,
                                               reason=entry.holes[isolation]))
            params.append(pytest.param(entry, isolation, id=f"{entry.name}-{isolation}", marks=marks))
    return params


@pytest.mark.parametrize(("entry", "isolation"), params(HOSTILE))
def test_a_hostile_submission_earns_only_its_honest_part(entry: Hostile, isolation, tmp_path, monkeypatch,
                                                         small_example_budget):
    """Does the grader finish in time, leave the machine clean, and give exactly the honest part's score?"""
    machine = Machine(tmp_path, entry, monkeypatch)
    try:
        start = time.monotonic()
        report = grade(machine.folder, task_ids=entry.tasks, scratch=machine.scratch, isolation=isolation,
                       key=entry.key, **({"deadline": entry.deadline} if entry.deadline is not None else {}))
        seconds = time.monotonic() - start
        assert seconds <= entry.bound, f"grading took {seconds:.1f} s, more than {entry.bound:g} s"
        machine.assert_clean()
        if entry.says:
            assert any(words in r.message for r in report.results for words in entry.says), \
                f"no message says {entry.says!r}:\n" + "\n".join(r.message for r in report.results)
        if entry.check is not None:
            entry.check(report, {**machine.context_for_checks, "isolation": isolation, "swept": machine.swept})
        assert_earns(entry, report)
    finally:
        machine.cleanup()


@pytest.mark.parametrize(("entry", "isolation"), params([e for e in HOSTILE if e.cli]))
def test_the_command_line_from_inside_a_hostile_submission(entry: Hostile, isolation, tmp_path, monkeypatch):
    """Run as CI runs it, `python -m graders grade . --results ...` from inside the submission folder: does
    results.json hold the judge's own verdict, and nothing the attack printed or wrote?"""
    machine = Machine(tmp_path, entry, monkeypatch)
    out = machine.results / "results.json"
    env = {**os.environ, "TMPDIR": str(machine.scratch)}
    try:
        start = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "graders", "grade", ".", "--results", str(out),
                              "--tasks", ",".join(entry.tasks), "--isolation", isolation],
                             cwd=machine.folder, env=env, capture_output=True, text=True,
                             timeout=entry.bound + CLI_SLACK)
        seconds = time.monotonic() - start
        assert run.returncode == 0, run.stderr[-3000:]
        assert seconds <= entry.bound + CLI_SLACK
        printed = run.stdout + run.stderr
        assert len(printed) < 100_000, f"the judge printed {len(printed)} characters"
        for line in entry.fake_lines:
            assert line not in printed, f"the judge's output holds the attack's {line!r}"
        machine.assert_clean(results_allowed=("results.json",), private_tmp=isolation == "bubblewrap")
        result = json.loads(out.read_text())
        assert result["score"] == entry.points, json.dumps(result, indent=1)[:3000]
        assert {t["number"] for t in result["tests"] if t["score"] > 0} == set(entry.earns)
        assert "isolation: " + sandbox.choose(isolation).describe() in result["output"]
    finally:
        machine.cleanup()


def test_the_corpus_covers_the_issue():
    """Does the corpus hold at least 25 entries, each graded on the tasks it names, built from stubs or the
    reference, and say what it attacks?"""
    assert len(HOSTILE) >= 25
    for entry in HOSTILE:
        assert entry.base in ("stubs", "solutions") and entry.attack and entry.tasks
        assert set(entry.earns) <= set(entry.tasks)
        assert entry.base == "solutions" or not entry.earns, entry.name
        assert set(entry.holes) <= set(ISOLATIONS)
