"""Are the judge's oracles (graders/judge/oracles.py) bounded and charged to the asker: sizes past the checks' own
refused before anything is computed, torch's work done in a helper process that a memory cap and the request's
deadline bind, and every refusal or failure the asking request's, in the student's terms?"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from graders import lesson
from graders import ops as registry
from graders.isolation.worker_process import WorkerTimedOut
from graders.judge import oracles, routing
from graders.judge.checks import checkpoint, cost, loop
from graders.judge.checks.trajectory import Run
from graders.tasks import BY_ID

RNG = np.random.default_rng(0)


def network(*widths: int) -> list[np.ndarray]:
    params = []
    for a, b in zip(widths[:-1], widths[1:]):
        params += [RNG.uniform(-1.0, 1.0, (a, b)) / np.sqrt(a), RNG.uniform(-0.1, 0.1, b)]
    return params


def batches(rows: int, size: int, n_in: int = 1, n_out: int = 1) -> list[list[np.ndarray]]:
    x = RNG.uniform(-2.0, 2.0, (rows, n_in))
    y = RNG.uniform(-1.0, 1.0, (rows, n_out))
    return [[x[i:i + size], y[i:i + size]] for i in range(0, rows, size)]


def epoch_args(params, data, **options) -> dict:
    return {"params": params, "state": {}, "lr": 0.02, "momentum": 0.9, "loss": "mse", "batches": data,
            "accumulate": 1, "clip_norm": None, **options}


# ----- sizes: the checks' own fit, anything larger is refused before it is read -----


def test_the_checks_runs_fit_within_the_caps():
    """Every run the checks' fits ask of train_epoch and evaluate, and the lesson's, is answered; the calls of one
    request and the largest gradient the checks give unbroadcast are within their caps too."""
    for setup in (loop.Setup(n=12, batch_size=4), checkpoint.CKPT_SETUP):
        X, Y = setup.data()
        data = [[x, y] for x, y in setup.split(X, Y)]
        params = list(setup.state().values())
        oracles.check_train_epoch(epoch_args(params, data))
        oracles.check_evaluate({"params": params, "loss": setup.loss, "batches": data})
    X, Y = lesson.make_sine_data()
    lesson_run = epoch_args(network(1, lesson.LESSON["hidden"], 1), batches(len(X), lesson.LESSON["batch_size"]))
    oracles.check_train_epoch(lesson_run)
    oracles.check_train_epoch({**lesson_run, "batches": batches(256, 1)})  # one row a batch: 256 batches
    epochs = checkpoint.CKPT_EPOCHS + checkpoint.CKPT_FIRST  # fit_cut: whole, then cut (the most of one request)
    assert oracles.CHECKS_MOST_EPOCHS == epochs and 2 * epochs <= oracles.MAX_CALLS
    largest = max(op.cost.sides[1] - 1 for op in registry.OPS if BY_ID[registry.task_of(op)].route.asks("unbroadcast"))
    assert max(largest ** 2, cost._BIG.size) <= oracles.MAX_UNBROADCAST_ELEMENTS


@pytest.mark.parametrize(("params", "data", "asked"), [
    (network(1, 2080, 1), batches(100_000, 400), "a 1-2080-1 network on 100,000 rows"),
    (network(1, 33, 1), batches(12, 4), "a 1-33-1 network on 12 rows"),
    (network(2, 4, 4, 1), batches(12, 4, 2), "a 2-4-4-1 network on 12 rows"),
    (network(1, 32, 1), batches(257, 32), "a 1-32-1 network on 257 rows"),
    (network(1, *[4] * 999, 1), batches(12, 4), "a 1-4-4-...-1 (1,000 Linear layers) network on 12 rows"),
], ids=["issue-26", "too-wide", "too-deep", "too-many-rows", "far-too-deep"])
def test_a_run_larger_than_the_checks_is_refused_in_the_students_terms(params, data, asked):
    for check, args in ((oracles.check_train_epoch, epoch_args(params, data)),
                        (oracles.check_evaluate, {"params": params, "loss": "mse", "batches": data})):
        with pytest.raises(oracles.Refused) as refused:
            check(args)
        assert str(refused.value) == (
            f"your fit asked the given {check.__name__.removeprefix('check_')} for {asked}; the checks' runs use "
            "at most 2 Linear layers of 32 units, on 256 rows, and the grader answers nothing larger")


def test_sizes_are_refused_from_the_shapes_before_anything_is_read():
    """A huge network of NaN is refused for its size: its values are never looked at."""
    params = [np.full((1, 66666), np.nan), np.zeros(66666), np.zeros((66666, 1)), np.zeros(1)]
    with pytest.raises(oracles.Refused, match="1-66666-1 network on 400 rows"):
        oracles.check_train_epoch(epoch_args(params, batches(400, 400)))


@pytest.mark.parametrize(("args", "what"), [
    ({"params": network(1, 4, 1)[:3]}, "a model that is not Linear layers'"),
    ({"params": [np.full((1, 4), np.inf), *network(1, 4, 1)[1:]]}, "a model that is not Linear layers'"),
    ({"batches": batches(12, 4, n_in=2)}, "batches that are not pairs"),
    ({"batches": [[np.zeros((0, 1)), np.zeros((0, 1))]]}, "batches that are not pairs"),
    ({"lr": float("nan")}, "a lr of nan"),
    ({"loss": "l1"}, "a loss_fn of l1"),
    ({"accumulate": 0}, "a accumulate of 0"),
    ({"state": {"momentum_buffer.9": np.zeros(1)}}, "an optimizer state that is not"),
    ({"extra": 1}, "arguments it does not take"),
])
def test_malformed_arguments_are_refused(args, what):
    with pytest.raises(oracles.Refused, match=f"^your fit gave the given train_epoch {what}"):
        oracles.check_train_epoch({**epoch_args(network(1, 4, 1), batches(12, 4)), **args})


def test_unbroadcast_is_capped_in_elements_and_axes():
    assert np.array_equal(oracles.unbroadcast(np.ones((3, 4)), [1, 4]), np.full((1, 4), 3.0))
    for grad in (np.zeros((400, 400)), np.zeros((1,) * 9)):
        with pytest.raises(oracles.Refused, match="^your backward rule asked the given unbroadcast for a sum of a "
                                                  "gradient of shape .* the checks' runs use at most 131,072"):
            oracles.unbroadcast(grad, [1])
    with pytest.raises(oracles.Refused, match=r"shape \(3,\) to sum down to shape \(2,\)"):
        oracles.unbroadcast(np.zeros(3), [2])


# ----- charged: the request that asked fails with it -----


def test_a_request_past_its_calls_is_refused_and_every_later_call_with_it():
    """The call past MAX_CALLS is refused with ORACLE_TOO_MANY, and so is every later one of that request, whatever
    it asks: nothing more is computed for a request that has failed."""
    calls = routing.Calls(BY_ID["5.5"].route.group)
    calls.helper_calls = oracles.MAX_CALLS  # this call is one past
    call = {"name": "evaluate", "args": {"params": network(1, 4, 1), "loss": "mse", "batches": batches(12, 4)}}
    answer = calls(call, time.monotonic() + 10)
    assert answer == {"refused": calls.failure}
    assert calls.failure.startswith("your fit called the given train_epoch and evaluate more than 64 times")
    assert calls({"name": "train_epoch", "args": {}}, time.monotonic() + 10) == answer


@pytest.mark.parametrize("timed_out", [True, False], ids=["past-the-deadline", "out-of-memory-or-stopped"])
def test_a_helpers_failure_is_the_requests(monkeypatch, timed_out):
    """Past the deadline, the request times out with the helper's reason; out of memory or stopped, the student's
    code gets the refusal and the request fails with it."""
    calls = routing.Calls(BY_ID["5.5"].route.group)

    def failing(name, args, deadline, waited=None):
        raise oracles.Failed("the given evaluate your fit asked for failed", timed_out=timed_out)

    monkeypatch.setattr(oracles, "answer", failing)
    call = {"name": "evaluate", "args": {}}
    if timed_out:
        with pytest.raises(WorkerTimedOut):
            calls(call, time.monotonic() + 10)
    else:
        assert calls(call, time.monotonic() + 10) == {"refused": "the given evaluate your fit asked for failed"}
    assert calls.failure == "the given evaluate your fit asked for failed"


# ----- kept: an answer is its arguments' alone, so a judge asks the helper once for it -----


class FakeHelper:
    """Stands in for the helper: answers train_epoch as a dict of arrays and numbers, and counts what it was asked."""

    def __init__(self):
        self.asked: list[tuple[str, float]] = []

    def ask(self, name, args, deadline):
        self.asked.append((name, deadline))
        return {"params": [w * 0.5 for w in args["params"]], "state": {}, "loss": 0.1 + 0.2}

    def running(self):
        return True


@pytest.fixture
def fake_helper(tmp_path, monkeypatch):
    """A fake helper, a cache folder of the test's own and an empty memory of kept answers."""
    helper = FakeHelper()
    monkeypatch.setenv("AUTOGRAD_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(oracles, "KEPT", oracles.Kept())
    monkeypatch.setattr(oracles, "_running", lambda: helper)
    monkeypatch.setattr(oracles, "wait_ready", lambda timeout=oracles.READY_TIMEOUT: 0.0)
    return helper


def same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def test_a_kept_answer_is_the_helpers_bit_for_bit_and_the_helper_is_asked_once(fake_helper, tmp_path):
    """Asked again, in the same judge (memory) or in the next one (the kept frame), the answer is the helper's first,
    the same float64 values; a kept frame that is damaged is asked of the helper again."""
    args = epoch_args(network(1, 4, 1), batches(12, 4))
    first = oracles.answer("train_epoch", args, time.monotonic() + 10)
    again = oracles.answer("train_epoch", args, time.monotonic() + 10)
    assert len(fake_helper.asked) == 1 and same(first, again) and first is not again
    oracles.KEPT.memory.clear()  # the next judge process: what the cache folder holds
    [frame] = (tmp_path / "cache").rglob("train_epoch-*.frame")
    assert all(folder.stat().st_mode & 0o777 == 0o700 for folder in (frame.parent, frame.parent.parent))
    assert same(oracles.answer("train_epoch", args, time.monotonic() + 10), first)
    assert len(fake_helper.asked) == 1
    other = epoch_args(network(1, 4, 1), batches(12, 4))  # other arguments: another answer
    oracles.answer("train_epoch", other, time.monotonic() + 10)
    assert len(fake_helper.asked) == 2
    oracles.KEPT.memory.clear()
    frame.write_bytes(frame.read_bytes()[:-3])
    assert same(oracles.answer("train_epoch", args, time.monotonic() + 10), first) and len(fake_helper.asked) == 3


def test_with_the_cache_off_every_answer_is_the_helpers(fake_helper, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LAB_CACHE", "off")
    args = epoch_args(network(1, 4, 1), batches(12, 4))
    for _ in range(2):
        oracles.answer("train_epoch", args, time.monotonic() + 10)
    assert len(fake_helper.asked) == 2 and not oracles.KEPT.memory


def test_a_helper_started_for_an_answer_is_waited_for_off_the_requests_clock(fake_helper, monkeypatch):
    """A grade whose answers were all kept starts no helper; the first answer that is not kept starts it, and the
    request that asked waits for its start without that wait counting: its deadline moves by it."""
    monkeypatch.setattr(oracles, "wait_ready", lambda timeout=oracles.READY_TIMEOUT: 3.0)
    calls = routing.Calls(BY_ID["5.5"].route.group)
    deadline = time.monotonic() + 1
    calls({"name": "train_epoch", "args": epoch_args(network(1, 4, 1), batches(12, 4))}, deadline)
    assert fake_helper.asked == [("train_epoch", deadline + 3.0)] and calls.waited == 3.0


# ----- the helper: torch outside the judge, in a memory cap, by the deadline -----


@pytest.fixture(scope="module")
def large_helper():
    """A helper that takes runs far past the checks' (as one without the caps would), with 256 MiB of headroom."""
    helper = oracles.Helper(oracles.Caps(layers=2, units=100_000, rows=100_000), headroom=256 * 2**20)
    assert helper.wait_ready(oracles.READY_TIMEOUT)
    yield helper
    helper.stop()


@pytest.mark.slow
def test_the_helper_answers_as_the_reference_run(large_helper):
    params, data = network(2, 4, 1), batches(12, 4, n_in=2)
    args = oracles.check_train_epoch(epoch_args(params, data, clip_norm=0.5, accumulate=2))
    answer = large_helper.ask("train_epoch", args, time.monotonic() + 30)
    run = Run(params, lr=0.02, momentum=0.9)
    assert answer["loss"] == run.epoch([tuple(b) for b in data], accumulate=2, clip_norm=0.5)
    for theirs, ours in zip(answer["params"], run.weights()):
        np.testing.assert_array_equal(theirs, ours)
    assert sorted(answer["state"]) == [f"momentum_buffer.{i}" for i in range(4)]
    assert large_helper.ask("evaluate", oracles.check_evaluate({"params": params, "loss": "weighted",
                                                               "batches": data}), time.monotonic() + 30) \
        == Run(params, lr=0.0, momentum=0.0).evaluate([tuple(b) for b in data], "weighted")


@pytest.mark.slow
def test_a_run_past_the_helpers_memory_fails_as_the_askers_and_the_helper_goes_on(large_helper):
    """The 1-66666-1 network on 100,000 rows that once put the judge out of memory: the helper's cap stops it,
    the asker gets ORACLE_OUT_OF_MEMORY, and the same helper answers the next request."""
    args = {"params": network(1, 66666, 1), "loss": "mse", "batches": batches(100_000, 100_000)}
    with pytest.raises(oracles.Failed, match="^the given evaluate your fit asked for ran out of its memory") as failed:
        large_helper.ask("evaluate", oracles.check_evaluate(args, large_helper.caps), time.monotonic() + 60)
    assert not failed.value.timed_out
    small = oracles.check_evaluate({"params": network(1, 4, 1), "loss": "mse", "batches": batches(12, 4)})
    assert math.isfinite(large_helper.ask("evaluate", small, time.monotonic() + 30))


@pytest.fixture
def busy():
    """A helper allowed far more than the checks' sizes, and the arguments of an epoch that keeps it busy for
    seconds (a 1-4096-1 network on 20,000 rows); the helper is stopped after the test."""
    helper = oracles.Helper(oracles.Caps(layers=2, units=4096, rows=100_000))
    try:
        assert helper.wait_ready(oracles.READY_TIMEOUT)
        yield helper, oracles.check_train_epoch(epoch_args(network(1, 4096, 1), batches(20_000, 1)), helper.caps)
    finally:
        helper.stop()


@pytest.mark.slow
def test_a_helper_past_the_deadline_is_killed(busy):
    helper, args = busy
    start = time.monotonic()
    with pytest.raises(oracles.Failed, match="did not finish within the judge's backstop") as failed:
        helper.ask("train_epoch", args, time.monotonic() + 0.5)
    assert failed.value.timed_out and time.monotonic() - start < 5
    assert not helper.running()


@pytest.mark.slow
def test_a_helper_that_dies_mid_request_fails_it_as_stopped(busy):
    helper, args = busy
    killer = threading.Timer(0.5, os.kill, (helper.process.pid, signal.SIGKILL))
    killer.start()
    with pytest.raises(oracles.Failed, match=r"stopped before answering \(status -9\)") as failed:
        helper.ask("train_epoch", args, time.monotonic() + 30)
    killer.join()
    assert not failed.value.timed_out and not helper.running()


@pytest.mark.slow
def test_the_judges_helper_is_kept_and_replaced_when_gone():
    """One helper a judge process: started once, replaced (without charging anyone) when it is found gone between
    requests, stopped at exit; its address space is capped before its first request."""
    oracles.start()
    oracles.wait_ready()
    [pid] = oracles.pids()
    oracles.start()
    assert oracles.pids() == {pid}
    with open(f"/proc/{pid}/limits") as f:
        limit = int(f.read().split("Max address space")[1].split()[0])
    assert limit < 4 * 2**30
    os.kill(pid, signal.SIGKILL)
    oracles._helper.process.wait(5)
    evaluate = {"params": network(1, 4, 1), "loss": "mse", "batches": batches(12, 4)}
    oracles.wait_ready()
    assert math.isfinite(oracles.answer("evaluate", evaluate, time.monotonic() + 30))
    [new] = oracles.pids()
    assert new != pid
    oracles.close()
    assert oracles.pids() == set()


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie counts: reaped here if it is this process's to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    if state == "Z":
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        return True
    return False


# How each of the judge's own processes is started (graders.judge.own_process), and what asks it to start one.
JUDGES_OWN = {
    "helper": "from graders.judge import oracles as own; own.start(); own.wait_ready()",
    "numpy_baseline": "import numpy as np; from graders.judge import numpy_baseline as own; "
                      "own.measure('exp', [[np.ones(3)]], {}, 1)",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(JUDGES_OWN))
def test_a_process_of_the_judges_own_dies_with_its_judge(name):
    """A judge killed outright (SIGKILL runs no exit handler) takes its helper, and its numpy baseline, with it."""
    code = (f"import os, signal; {JUDGES_OWN[name]}; "
            "print(*own.pids(), flush=True); os.kill(os.getpid(), signal.SIGKILL)")
    judge = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert judge.returncode == -signal.SIGKILL, judge.stderr
    pid = int(judge.stdout)
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)
