"""The kept draws (graders.judge.examples_cache): a grade that reads them is the grade that drew them, byte for byte,
for right and wrong submissions alike; what is kept is private, and a kept file is read as data, never as code."""

from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import BY_NAME, make_submission

from graders.cli import main
from graders.judge import examples_cache
from graders.judge.checks import base
from graders.judge.grade import grade
from graders.paths import SOLUTIONS
from graders.tasks import BY_ID

# One task of each kind of check: an op with its cost rung, the engine, an optimizer, the loader, the loop.
SOME = ("1.1", "1.3", "2.1", "3.2", "4.2", "5.1")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cache of this test's own, empty."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(examples_cache.CACHE_ENV, str(folder))
    return folder


def results(submission: Path, out: Path, tasks=SOME) -> bytes:
    assert main(["grade", str(submission), "--tasks", ",".join(tasks), "--results", str(out)]) == 0
    return out.read_bytes()


def test_a_warm_grade_writes_the_results_of_a_cold_one_byte_for_byte(cache, tmp_path, monkeypatch):
    """The reference, graded with the cache off, cold (drawing and keeping) and warm (reading what was kept)."""
    monkeypatch.setenv(examples_cache.CACHE_ENV, "off")
    without = results(SOLUTIONS, tmp_path / "off.json")
    monkeypatch.setenv(examples_cache.CACHE_ENV, str(cache))
    cold = results(SOLUTIONS, tmp_path / "cold.json")
    assert any(cache.rglob("*.pickle"))
    warm = results(SOLUTIONS, tmp_path / "warm.json")
    assert without == cold == warm


@pytest.mark.parametrize("name", ["add_without_unbroadcast", "matmul_grads_swapped", "engine_breadth_first"])
def test_a_wrong_submission_gets_the_same_message_cold_and_warm(name, cache, tmp_path, monkeypatch):
    """A failure found among the kept draws is searched again by Hypothesis, so the shrunk example, the message
    and the count of examples are those of a grade that keeps nothing."""
    entry = BY_NAME[name]
    wrong = make_submission(tmp_path, name, [entry])
    tasks = entry.graded_tasks
    monkeypatch.setenv(examples_cache.CACHE_ENV, "off")
    without = results(wrong, tmp_path / "off.json", tasks)
    monkeypatch.setenv(examples_cache.CACHE_ENV, str(cache))
    results(SOLUTIONS, tmp_path / "reference.json", tasks)  # the reference fills the cache first
    warm = results(wrong, tmp_path / "warm.json", tasks)
    assert warm == without
    assert b'"status": "failed"' in warm


def test_a_warm_grade_draws_nothing_and_batches_its_requests(cache, monkeypatch):
    """Warm, Hypothesis never runs for a right submission, and the worker answers the draws in batches: far
    fewer round trips than examples."""
    grade(SOLUTIONS, task_ids=SOME)
    searches, requests = [], []
    run, request = base.Context._run, base.Worker.request
    monkeypatch.setattr(base.Context, "_run", lambda *a, **k: searches.append(1) or run(*a, **k))
    monkeypatch.setattr(base.Worker, "request", lambda *a, **k: requests.append(1) or request(*a, **k))
    report = grade(SOLUTIONS, task_ids=SOME)
    assert report.score == report.max_score
    assert searches == []
    assert report.examples >= 300 and len(requests) < report.examples / 5


def test_the_kept_draws_are_private_to_the_instructor(cache):
    grade(SOLUTIONS, task_ids=("1.1",))
    for folder in [path for path in cache.rglob("*") if path.is_dir()][:2]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_a_kept_file_that_holds_code_is_drawn_again_never_run(cache, tmp_path):
    """A file changed to hold a pickle that would run a command is refused by the unpickler, drawn anew and
    rewritten: the payload never runs, and the grade is the same."""
    grade(SOLUTIONS, task_ids=("1.1",))
    marker = tmp_path / "the payload ran"
    kept = sorted(cache.rglob("1.1-1-*.pickle"))
    assert kept

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch '{marker}'",)

    kept[0].write_bytes(pickle.dumps(([Payload()], {})))
    report = grade(SOLUTIONS, task_ids=("1.1",))
    assert report.score == report.max_score and report.examples == 100
    assert not marker.exists()
    assert examples_cache.load(kept[0]) is not None  # drawn again and kept again


def test_a_damaged_kept_file_is_drawn_again(cache):
    grade(SOLUTIONS, task_ids=("1.1",))
    for path in cache.rglob("*.pickle"):
        path.write_bytes(b"not a pickle")
    report = grade(SOLUTIONS, task_ids=("1.1",))
    assert report.score == report.max_score and report.examples == 100


def test_with_the_cache_off_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(examples_cache.CACHE_ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    grade(SOLUTIONS, task_ids=("1.1",))
    assert examples_cache.folder() is None and not any(tmp_path.iterdir())


def test_an_expected_value_is_kept_by_what_it_depends_on_not_by_the_objects_holding_it():
    """Equal inputs held by other objects (a draw read back from its file) give the same key; another value,
    dtype or shape gives another."""
    import numpy as np

    a = np.arange(6.0).reshape(2, 3)
    same = examples_cache.digest("vjp", ([a, a], {}))
    assert same == examples_cache.digest("vjp", ([a.copy(), pickle.loads(pickle.dumps(a))], {}))
    assert same != examples_cache.digest("vjp", ([a, a.reshape(3, 2)], {}))
    assert same != examples_cache.digest("vjp", ([a, a.astype(np.float32)], {}))
    assert same != examples_cache.digest("shape", ([a, a], {}))
    with pytest.raises(TypeError):
        examples_cache.digest("vjp", (object(),))


def test_kept_expected_values_cannot_be_changed_by_a_check():
    """A check that wrote into an expected array would change it for every later grade: numpy refuses."""
    import numpy as np

    value = [np.zeros(3), (np.ones(2), {"w": np.zeros(1)})]
    examples_cache.read_only(value)
    with pytest.raises(ValueError):
        value[1][1]["w"][0] = 1.0


def test_a_batch_past_its_timeout_leaves_a_ready_process_for_the_requests_asked_alone():
    """A batch the worker cannot answer in time is dropped and its process stopped; a fresh one is started and
    waited for before its requests are asked one at a time, so a process's start (torch's import, on a loaded
    machine) never counts against the first of them."""
    import numpy as np

    from graders.isolation import sandbox
    from graders.judge import routing
    from graders.submission import layout

    chosen = sandbox.choose("limits")
    laid = layout.lay_out(SOLUTIONS, sandbox.scratch_parent(chosen, None))
    try:
        with routing.worker(laid, chosen) as worker:
            request = ("unbroadcast", {"package": BY_ID["1.1"].route.package, "grad": np.ones((2, 3)), "shape": [3]})
            assert len(worker.request_batch([request] * 3, timeout=30.0)) == 3
            assert worker.request_batch([request] * 3, timeout=0.0) is None  # always past: no race with a fast reply
            assert worker.starts == 2 and worker.process is not None and worker.process.poll() is None
            assert "ok" in worker.request(*request, timeout=10.0)
            assert worker.starts == 2  # the restarted process answered: nothing started within the request
    finally:
        laid.cleanup()



def test_a_files_name_does_not_depend_on_what_another_thread_imports_meanwhile(cache, tmp_path):
    """The judge imports torch in a thread of its own while the first tasks run (graders.judge.grade), and
    Hypothesis, describing a lambda for the first time, goes over sys.modules: a module imported meanwhile once
    failed a grade's task 1.2 ("dictionary changed size during iteration"). Are names made while modules come
    and go in another thread made at all, and the same when asked again in peace?"""
    import importlib.util
    import sys
    import threading
    import types

    count = 300  # lambdas Hypothesis has never described, each naming a module (st), as the checks' do
    source = tmp_path / "agl_fresh_lambdas.py"
    source.write_text("from hypothesis import strategies as st\n\nSTRATEGIES = [\n" + "".join(
        f"    st.integers(0, 9).flatmap(lambda n: st.just(n + {i})),\n" for i in range(count)) + "]\n")
    spec = importlib.util.spec_from_file_location("agl_fresh_lambdas", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stop = threading.Event()

    def importing() -> None:
        made = 0
        while not stop.is_set():
            name = f"_agl_test_module_{made % 50}"
            sys.modules[name] = types.ModuleType(name)
            if made % 50 == 49:
                for gone in range(50):
                    sys.modules.pop(f"_agl_test_module_{gone}", None)
            made += 1

    thread = threading.Thread(target=importing, daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns every few bytecodes, not every 5 ms: a race is likely
    thread.start()
    try:
        racing = [examples_cache.entry("1.2", 1, strategy, 10, None) for strategy in module.STRATEGIES]
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
        for gone in range(50):
            sys.modules.pop(f"_agl_test_module_{gone}", None)
    calm = [examples_cache.entry("1.2", 1, strategy, 10, None) for strategy in module.STRATEGIES]
    assert racing == calm and len(set(calm)) == count


@pytest.mark.slow
def test_a_warm_grade_of_the_loop_runs_no_torch_in_the_judge(cache):
    """The reference fits of 5.4 and 5.5, fit_torch's run of 6.1 and the sums 1.1's cost rung checks its answers
    against are kept with the draws, and so are the answers of the oracles' helper (fit's train_epoch and evaluate,
    the lesson's replay): graded warm, no torch runs for the judge at all, neither in its process nor in a helper
    (none starts), and its verdicts are the cold grade's."""
    code = ("import json, sys; from graders.judge.grade import grade; from graders.judge import oracles; "
            f"report = grade({str(SOLUTIONS)!r}, task_ids=('1.1', '5.4', '5.5', '6.1')); "
            "print(json.dumps([[r.task.id, r.status, r.message] for r in report.results]), 'torch' in sys.modules, "
            "oracles._helper is not None)")
    cold, warm = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
                  for _ in range(2))
    assert cold.returncode == warm.returncode == 0, cold.stderr[-2000:] + warm.stderr[-2000:]
    verdicts, imported, helper = cold.stdout.rsplit(" ", 2)
    assert imported == "True" and helper.strip() == "True"
    assert all(status == "passed" for _, status, _ in json.loads(verdicts))
    assert warm.stdout.rsplit(" ", 2) == [verdicts, "False", "False\n"]
