"""What every check shares: asking the worker, reading its claims, comparing, Hypothesis.

A check is a function of a Context that returns normally when the task passes
and raises NotAttempted or CheckFailed (with the rendered message) at the first
rung of its ladder that fails.
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from graders import messages as msg
from graders.isolation.worker_process import IDLE_SECONDS, Worker, WorkerDied, WorkerTimedOut
from graders.judge import examples_cache
from graders.judge.checks import answers
from graders.judge.routing import group_of
from graders.tasks import ORACLES, Task

STUB_MESSAGE = re.compile(r"^Task (\d\.\d)\b")
STUB_PART = re.compile(r"Task (\d\.\d): ([^;]+)")
DEFAULT_TIMEOUT = 10.0  # CPU seconds a request may take (graders.isolation.worker_process.Worker.request)
BATCH_SIZE = 50  # requests per round trip when a forall asks its draws' requests at once
BATCH_SECONDS_PER_REQUEST = 0.25  # a batch's CPU limit: the longest request's, and this much for each
MAX_EXPECTED_PER_DRAW = 16  # a bound on what one forall keeps, should a check name an input it should not
# The same bound for what a task computes outside its foralls: its fixed cases, edges and cost rungs' inputs (task
# 1.2's three ops, six forms and six timed sets ask for 24, 1.5's for 18: past 16, each grade recomputed the rest).
MAX_EXPECTED_OUTSIDE = 64


class NotAttempted(Exception):
    """The task's own stub is still in place."""


class Skip(Exception):
    """A task that cannot run on this machine (6.2 without CUDA)."""


class CheckFailed(Exception):
    """A rung of the ladder failed; the argument is the whole message."""


@dataclass
class Tolerance:
    """How close a student's value must be to the expected one: rtol relative to each element, atol scaled by the
    largest expected magnitude. Checks of formulas that differ only by rounding share one."""
    rtol: float = 1e-10
    atol: float = 1e-12

    def allowed(self, expected: np.ndarray) -> np.ndarray:
        """The largest difference allowed at each element of ``expected``."""
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        return self.atol * scale + self.rtol * np.abs(expected)


TIGHT = Tolerance()


CLAIM_HOLDS = {"ndarray": "array", "numpy scalar": "array", "number": "value", "sequence": "items"}


@dataclass
class Context:
    """Everything one task's check works with: the task, the worker's handle, the files the submission lacks, the key,
    the deadline and the kept draws; and the ways to ask the worker, read its claims and compare, so that every check
    fails in the same words."""
    task: Task
    worker: Worker
    missing: tuple[str, ...] = ()
    not_regular: dict[str, str] = field(default_factory=dict)  # missing modules whose .py is a FIFO, a link, ...
    key: int | None = None
    examples: int = 0
    data: dict = field(default_factory=dict)  # what a task measured beyond pass/fail, for the scorecard
    # what the task asks but no check here can see (a property with no effect on the grading machine): said on the
    # scorecard beside the result, never earning or costing a point
    not_graded: list[str] = field(default_factory=list)
    # the points earned before the ladder's last rung failed, and for what (``earn``): a task's partial credit
    earned: tuple[float, str] | None = None
    # The whole grade's budget in seconds (graders.judge.grade's deadline; None: no bound): the CPU time of its
    # workers' requests together, and, the backstop, their time waited without computing (Worker.cpu_used, idle_used).
    deadline: float | None = None
    foralls: int = 0  # the forall calls so far, which names each one's kept draws
    kept: examples_cache.Kept | None = None  # where expected() keeps values: the running forall's, or the task's
    _outside_at: Path | None = None
    _planned: list | None = None  # while a forall plans its batch: where ask() records requests
    _prefetched: dict = field(default_factory=dict)  # the batch's replies, by the digest of their request

    def earn(self, points: float, what: str) -> None:
        """``points`` of the task's are earned by what passed so far (``what``, in the student's terms), whatever
        the rungs after it say: a failure later keeps them (a partial credit the scorecard states)."""
        self.earned = (points, what)

    def parts(self, earned: float, what: str, *parts: tuple[float, str, Callable[[], None]]) -> None:
        """Parts of a task that prove separate things, each worth its points, run after its core (worth
        ``earned``, for ``what``) has passed: every part runs, whatever the others did; if any failed, the first
        failure is raised, keeping the points of the core and of the parts that passed (``earn``)."""
        failures, passed = [], [what]
        for points, text, check in parts:
            try:
                check()
            except CheckFailed as failure:
                failures.append(failure)
            else:
                earned += points
                passed.append(text)
        if failures:
            self.earn(earned, msg.and_list(passed))
            raise failures[0]

    # ----- asking the worker -----
    def ask(self, verb: str, doing: str, *, timeout: float = DEFAULT_TIMEOUT, hint: str | None = None,
            measure_cpu: bool = False, measure_memory: bool = False, died: str | None = None, **args):
        """The worker's answer to one request, or CheckFailed/NotAttempted in the student's terms; ``died`` is the
        message when the worker dies (its death, seen from outside, the effect the request looks for). A request
        that ``measure_memory`` is asked alone (the worker's ``last_memory_growth``)."""
        self.check_route(verb, args)
        measured = measure_cpu or measure_memory
        if self._planned is not None:
            raise _Planned(verb, args, timeout, measured)
        head = msg.header(self.task, doing=doing)
        hint_line = msg.HINT.format(hint=hint) if hint else ""
        cpu_left, idle_left = self.left()
        if min(cpu_left, idle_left) <= 0:
            self.past_deadline()
        reply = self._prefetched_reply(verb, args) if self._prefetched and not measured else None
        if reply is None:  # a batch's reply never comes with an oracle's failure (Worker.request_batch)
            try:
                reply = self.worker.request(verb, args, min(timeout, cpu_left), idle=min(IDLE_SECONDS, idle_left),
                                            measure_cpu=measure_cpu, measure_memory=measure_memory)
            except WorkerTimedOut as error:
                self.oracle_failed(doing)
                raise self.timed_out(error, doing, timeout) from None
            except WorkerDied:
                self.oracle_failed(doing)
                if died is not None:
                    raise CheckFailed(died) from None
                words = self.worker.last_words()
                raise CheckFailed(msg.lines(msg.DIED.format(**head), words and msg.LAST_WORDS.format(line=words),
                                            hint_line)) from None
            self.oracle_failed(doing)
        if "ok" in reply:
            return self.parsed(verb, reply["ok"], doing)
        raise self.student_error(reply["error"], doing, hint)

    def check_route(self, verb: str, args: dict) -> None:
        """ValueError (a bug of the graders, reported as such) for a request that the task's route in the task table
        does not send: a verb its row does not list, to another package than the route's that lists it, or with an
        oracle's flag (``isolate_unbroadcast``) that says otherwise than the route. So the table is what the checks
        do: a grade of any submission holds them to it."""
        route = self.task.route_of(verb)
        if args.get("package") != route.package:
            raise ValueError(f"task {self.task.id} sends {verb!r} to {args.get('package')!r}, not to its route's "
                             f"{route.package!r} (graders.tasks.TASKS)")
        for oracle in ORACLES:
            if oracle.flag and bool(args.get(oracle.flag)) != (route.oracle == oracle):
                raise ValueError(f"task {self.task.id} sends {verb!r} with {oracle.flag}={args.get(oracle.flag)!r}, "
                                 f"which its route does not say (graders.tasks.TASKS)")

    def oracle_failed(self, doing: str) -> None:
        """CheckFailed when the last request's calls of the judge's oracles were refused or failed
        (graders.judge.oracles): that is the request's failure, whatever the student's code did with it."""
        failure = self.worker.oracle_failure
        if failure is not None:
            hint = msg.ORACLE_HINT_RULE if self.task.route.asks("unbroadcast") else msg.ORACLE_HINT_FIT
            raise CheckFailed(msg.ORACLE_FAILED.format(failure=failure, hint=hint,
                                                       **msg.header(self.task, doing=doing)))

    def parsed(self, verb: str, answer, doing: str):
        """``answer`` as its verb's type (graders.judge.checks.answers), or the CheckFailed that says it came
        back incomplete or malformed."""
        try:
            return answers.parse(verb, answer)
        except answers.Malformed:
            raise self.incomplete(doing) from None

    def incomplete(self, doing: str) -> CheckFailed:
        """The failure for an answer that lacks what ``doing`` should have produced: the submission's doing (student
        code shares the worker), said as such, never a grader error."""
        return CheckFailed(msg.ANSWER_INCOMPLETE.format(**msg.header(self.task, doing=doing)))

    def left(self) -> tuple[float, float]:
        """What is left of the grade's budget: (CPU seconds, seconds to wait without computing); infinite without
        a deadline."""
        if self.deadline is None:
            return float("inf"), float("inf")
        return self.deadline - self.worker.cpu_used, self.deadline - self.worker.idle_used

    def timed_out(self, error: WorkerTimedOut, doing: str, timeout: float) -> CheckFailed:
        """The failure for a request stopped at a limit (``error``: its CPU time, or its time waited without
        computing): the request's own (``timeout`` CPU seconds, IDLE_SECONDS waited), or the grade's budget where
        that was less (``past_deadline``)."""
        if error.seconds < (IDLE_SECONDS if error.idle else timeout):
            self.past_deadline(idle=error.idle)
        if error.idle:
            return CheckFailed(msg.lines(msg.TIMED_OUT_IDLE.format(seconds=error.seconds,
                                                                   **msg.header(self.task, doing=doing)),
                                         msg.HINT.format(hint=msg.HINT_NOT_COMPUTING)))
        return CheckFailed(msg.TIMED_OUT.format(seconds=timeout, **msg.header(self.task, doing=doing)))

    def past_deadline(self, *, idle: bool | None = None):
        """Fail the task because the whole grade used its budget (``idle``: of time waited without computing; None:
        whichever is used up), so the scorecard says why the remaining tasks were not graded."""
        if idle is None:
            idle = self.left()[1] <= 0 < self.left()[0]
        if idle:
            raise CheckFailed(msg.lines(msg.GRADE_DEADLINE_IDLE.format(seconds=self.deadline, **msg.header(self.task)),
                                        msg.HINT.format(hint=msg.HINT_NOT_COMPUTING)))
        raise CheckFailed(msg.GRADE_DEADLINE.format(seconds=self.deadline, **msg.header(self.task)))

    def student_error(self, error: dict, doing: str, hint: str | None = None) -> Exception:
        """The exception to raise for an error that student code raised while ``doing``."""
        error = {"type": "an exception", "message": "", "mro": (), "where": None,
                 **(error if isinstance(error, dict) else {})}  # as worker.claims.describe_exception says it
        stub = STUB_MESSAGE.match(error.get("message", ""))
        if "NotImplementedError" in error.get("mro", ()) and stub:
            if stub[1] == self.task.id or self.task.id in dict(STUB_PART.findall(error["message"])):
                return NotAttempted(self.not_attempted_text(error["message"]))
            return NotAttempted(msg.NEEDS_OTHER_TASK.format(task=self.task.id, what=error["message"]))
        text = f"{error['type']}: {error['message']}" if error.get("message") else error["type"]
        if "KeyError" in error.get("mro", ()) and re.fullmatch(r"\d{9,}", error.get("message", "")):
            text = msg.RAISED_KEY_ID.format(error=error["type"])  # an id(): a memory address, other at every run
        if hint is None:  # an exception that says which mistake made it, in this task's code
            hint = next((h for (prefix, kind), h in msg.HINTS_FOR_RAISED.items()
                         if self.task.id.startswith(prefix) and kind in error.get("mro", ())), None) or \
                next((h for said, h in msg.HINTS_FOR_RAISED_TEXT.items() if str(error["message"]).startswith(said)),
                     None)
        return CheckFailed(msg.lines(msg.RAISED.format(error=text, **msg.header(self.task, doing=doing)),
                                     error.get("where") and msg.RAISED_AT.format(where=error["where"]),
                                     msg.HINT.format(hint=hint) if hint else ""))

    def not_attempted_text(self, stub_message: str) -> str:
        """The stub's own words for this task: from "Task 3.1: step; Task 3.2: momentum", 3.2's part."""
        parts = dict(STUB_PART.findall(stub_message))
        what = parts.get(self.task.id) or stub_message.split(":", 1)[-1].strip()
        return msg.NOT_ATTEMPTED.format(task=self.task.id, what=what, file=f"{self.task.module}.py")

    def require_files(self, *modules: str) -> None:
        """Fail the task when one of ``modules`` is missing or not a regular file, before any request, with a message
        that names the file."""
        for name in modules:
            if name in self.missing:
                raise CheckFailed(self.missing_text(name))

    def missing_text(self, name: str) -> str:
        """The message for module ``name`` missing: absent, or present but not a regular file (a FIFO, a link: named, so
        the student sees why)."""
        if name in self.not_regular:
            return msg.NOT_REGULAR_FILE.format(task=self.task.id, file=f"{name}.py", kind=self.not_regular[name])
        return msg.MISSING_FILE.format(task=self.task.id, file=f"{name}.py")

    def fail(self, what: str, got: str, expected: str, *, hint: str | None = None):
        """Fail the task with the one-line shape every wrong value takes (what, got, expected) and a hint line when
        there is one."""
        raise CheckFailed(msg.lines(msg.WRONG_KIND.format(what=what, got=got, expected=expected,
                                                          **msg.header(self.task)),
                                    msg.HINT.format(hint=hint) if hint else ""))

    # ----- reading claims -----
    def array(self, claim: dict, shape: tuple, what: str, *, hint: str | None = None,
              scalar_ok: bool = True) -> np.ndarray:
        """A claimed float64 array of exactly ``shape``, all finite (a 0-d one may be a scalar, unless not
        ``scalar_ok``: a leaf's .grad is an ndarray, docs/contract.md)."""
        self._well_formed(claim, what)
        kind = claim.get("kind")
        scalar_ok = scalar_ok and kind in ("numpy scalar", "number") and shape == ()
        if kind != "ndarray" and not scalar_ok:
            self.fail(what, f"a {claim.get('type')}", f"an ndarray of shape {shape}", hint=hint)
        value = np.asarray(claim["array"] if "array" in claim else claim["value"])
        if kind != "number" and value.dtype != np.float64:
            self.fail(what, f"an array of dtype {value.dtype}", "float64", hint=hint)
        value = value.astype(np.float64)
        if value.shape != shape:
            raise CheckFailed(msg.lines(
                msg.WRONG_KIND.format(what=what, got=f"of shape {value.shape}", expected=f"shape {shape}",
                                      **msg.header(self.task)),
                (hint := msg.diagnose(value, np.zeros(shape))) and msg.HINT.format(hint=hint)))
        if not np.all(np.isfinite(value)):
            self.fail(what, msg.NOT_FINITE, "finite values", hint=hint)
        return value

    def number(self, claim: dict, what: str, how: str = msg.LOOP_FLOAT_HOW) -> float:
        """A claimed Python float (numpy's float64 is a float too), finite; ``how`` says how to get one."""
        self._well_formed(claim, what)
        if claim.get("kind") == "number" and claim.get("type") == "float":
            value = claim["value"]
        elif claim.get("kind") == "numpy scalar" and claim.get("type") == "float64":
            value = float(claim["array"])
        else:
            self.fail(what, f"a {claim.get('type')}", msg.LOOP_FLOAT.format(how=how))
        if not np.isfinite(value):
            self.fail(what, f"{value}", "a finite number")
        return float(value)

    def sequence(self, claim: dict, length: int, what: str) -> list[dict]:
        """A claimed tuple or list of ``length`` items, their claims; anything else fails, naming ``what``."""
        self._well_formed(claim, what)
        if claim.get("kind") != "sequence":
            self.fail(what, f"a {claim.get('type')}", f"a tuple of {length}")
        if len(claim["items"]) != length:
            self.fail(what, f"{len(claim['items'])} values", f"{length}")
        return claim["items"]

    def _well_formed(self, claim, what: str) -> None:
        """A claim is a dict (worker.claims) that holds what its kind holds: an array, a value or items."""
        holds = CLAIM_HOLDS.get(claim.get("kind")) if isinstance(claim, dict) else None
        if not isinstance(claim, dict) or (holds is not None and holds not in claim):
            raise self.incomplete(f"reading {what}")

    # ----- comparing -----
    def compare(self, yours: np.ndarray, expected: np.ndarray, what: str, *, inputs=(),
                source: str = "", hint: str | None = None, tol: Tolerance = TIGHT) -> None:
        """Pass when every entry is within ``tol``; else CheckFailed with the inputs (a list of
        lines, or a function that makes them, called only on failure), theirs, expected, a hint."""
        yours, expected = np.asarray(yours, dtype=np.float64), np.asarray(expected, dtype=np.float64)
        error = np.abs(yours - expected)
        allowed = tol.allowed(expected)
        bad = error > allowed
        if not np.any(bad):
            return
        index = np.unravel_index(int(np.argmax(np.where(bad, error, -1))), error.shape) if error.ndim else ()
        classic = msg.diagnose(yours, expected)
        raise CheckFailed(msg.lines(
            msg.WRONG_VALUE_HEAD.format(what=what, **msg.header(self.task)),
            *(inputs() if callable(inputs) else inputs),
            msg.YOURS.format(value=msg.array_text(yours)),
            msg.EXPECTED_FROM.format(value=msg.array_text(expected), source=source),
            msg.LARGEST_ERROR.format(error=float(error[index]), index=tuple(int(i) for i in index),
                                     allowed=float(allowed[index])),
            msg.HINT.format(hint=classic) if classic else "",
            msg.HINT.format(hint=hint) if hint else "",
        ))

    # ----- Hypothesis -----
    def forall(self, strategy, test, *, examples: int) -> None:
        """Run ``test(value)`` over ``examples`` drawn values, derandomized (or seeded by the key).

        The values depend on the key alone, so they are drawn once and kept (``examples_cache``): a later grade
        with the same key replays them in the order Hypothesis drew them. Only when one fails does Hypothesis
        run the search itself, from the start, to shrink the failure to its simplest example: the message and
        the count of examples are the same as when nothing is kept.

        A dead or hung worker stops the search at once: later examples fail
        fast with the same message instead of restarting it again and again.
        """
        self.foralls += 1
        kept_at = examples_cache.entry(self.task.id, self.foralls, strategy, examples, self.key)
        before = self.examples
        kept = examples_cache.load(kept_at)
        if kept is None:
            kept = examples_cache.Kept([])
            with _no_local_constants():
                self._run(strategy, self._body(lambda value: kept.draws.append(copy.deepcopy(value))), examples)
            self.examples = before
        outside, self.kept = self.kept, kept
        try:
            self._prefetch(test, kept.draws)
            for value in kept.draws:
                self.examples += 1
                try:
                    test(value)
                except CheckFailed:
                    if self.worker.process is None:  # the worker was stopped: died or timed out
                        raise
                    break
                except Exception:  # noqa: BLE001 - NotAttempted, Skip, a bug: the search below says which
                    break
            else:
                return
        finally:
            self.kept, self._prefetched = outside, {}
            examples_cache.save(kept_at, kept)
        self.examples = before
        outside, self.kept = self.kept, None  # what the search draws to shrink is never kept
        try:
            with _no_local_constants():
                self._run(strategy, self._body(test), examples)
        finally:
            self.kept = outside

    def _prefetch(self, test, draws: list) -> None:
        """Ask the worker the first request of every draw's test at once, a batch of BATCH_SIZE per round trip
        instead of one each: each test runs up to its first ``ask``, which records the request (``_Planned``)
        instead of sending it. The tests then run with the replies at hand. A batch the worker cannot answer
        whole is dropped, and its requests are asked one at a time as the tests come to them."""
        planned: list[_Planned] = []
        self._planned = planned
        try:
            for value in draws:
                try:
                    test(value)
                except _Planned as request:
                    if request.digest is not None and not request.measure_cpu:  # timed rungs go alone
                        planned.append(request)
                except Exception:  # noqa: BLE001 - the test fails the same way when it runs for real
                    pass
        finally:
            self._planned = None
        groups: dict[tuple, list[_Planned]] = {}
        for request in planned:
            groups.setdefault(group_of(request.verb, request.fields), []).append(request)
        for requests in groups.values():
            for start in range(0, len(requests), BATCH_SIZE):
                self._ask_batch(requests[start:start + BATCH_SIZE])

    def _ask_batch(self, requests: list[_Planned]) -> None:
        cpu_left, idle_left = self.left()
        if min(cpu_left, idle_left) <= 0:
            return
        timeout = max(r.timeout for r in requests) + BATCH_SECONDS_PER_REQUEST * len(requests)
        replies = self.worker.request_batch([(r.verb, r.fields) for r in requests], min(timeout, cpu_left),
                                            idle=min(IDLE_SECONDS, idle_left))
        for request, reply in zip(requests, replies or ()):
            self._prefetched.setdefault(request.digest, []).append(reply)

    def _prefetched_reply(self, verb: str, args: dict) -> dict | None:
        """The reply the last batch holds for this very request (by value), if any: each is used once."""
        try:
            waiting = self._prefetched.get(examples_cache.digest(verb, args))
        except TypeError:
            return None
        return waiting.pop(0) if waiting else None

    def expected(self, name: str, compute, *inputs, **options):
        """``compute(*inputs, **options)``: an expected value, which depends on what it is given alone (drawn or
        fixed values, never a worker's answer) and on what ``name`` names. It is kept with the draws, so a later
        grade with the same key reads it instead of computing it again with torch."""
        kept = self.kept
        if kept is None:
            return compute(*inputs, **options)
        key = examples_cache.digest(name, (inputs, options))
        if key not in kept.expected:
            bound = MAX_EXPECTED_PER_DRAW * len(kept.draws) if kept.draws else MAX_EXPECTED_OUTSIDE
            if len(kept.expected) >= bound:
                return compute(*inputs, **options)
            value = compute(*inputs, **options)
            examples_cache.read_only(value)
            kept.expected[key] = value
        return kept.expected[key]

    def begin(self) -> None:
        """Read what is kept of this task's expected values outside any forall (``end`` keeps them)."""
        self._outside_at = examples_cache.entry(self.task.id, 0, None, 0, self.key)
        self.kept = examples_cache.load(self._outside_at) or examples_cache.Kept([])

    def end(self) -> None:
        """Keep what this task computed outside any forall (``begin`` read it), so the next grade with the same key
        reads it instead of computing it again."""
        if self.kept is not None:
            examples_cache.save(self._outside_at, self.kept)
            self.kept = None

    def _body(self, test):
        """What Hypothesis calls with each value. Drawing and searching call the same code: derandomized,
        Hypothesis seeds its draws from the source of the function it calls."""
        broken: list[CheckFailed] = []

        def body(value):
            if broken:
                raise broken[0]
            self.examples += 1
            try:
                test(value)
            except CheckFailed as failure:
                if self.worker.process is None:  # the worker was stopped: died or timed out
                    broken.append(failure)
                raise

        return body

    def _run(self, strategy, body, examples: int) -> None:
        options = settings(max_examples=examples, derandomize=self.key is None, database=None, deadline=None,
                           print_blob=False, suppress_health_check=list(HealthCheck),
                           phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False)
        run = options(given(strategy)(body))
        if self.key is not None:
            run = seed(self.key)(run)
        run()


class _Planned(Exception):  # noqa: N818 - not an error: a request recorded instead of sent
    """Raised by ``ask`` while a forall plans its batch, to record the request instead of sending it."""

    def __init__(self, verb: str, args: dict, timeout: float, measure_cpu: bool):
        super().__init__(verb)
        self.verb, self.fields, self.timeout, self.measure_cpu = verb, args, timeout, measure_cpu
        try:
            self.digest: str | None = examples_cache.digest(verb, args)
        except TypeError:  # not a request a batch can match: it is asked alone
            self.digest = None


@contextlib.contextmanager
def _no_local_constants():
    """Keep Hypothesis from mixing literals of the judge's own modules into its draws.

    Hypothesis (6.131 and later) draws now and then from the constants of every
    loaded module outside site-packages, so what it draws would depend on how
    autograd-lab was installed and on what else the process imported. Grading
    must not: the same submission always gets the same examples.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - an older Hypothesis has no such feature
        yield
        return
    if not hasattr(providers, "_get_local_constants"):  # pragma: no cover
        yield
        return
    own, empty = providers._get_local_constants, providers.Constants()
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", {})
    providers._get_local_constants = lambda: empty
    cache.clear()  # allowed constants already computed with the local ones
    try:
        yield
    finally:
        providers._get_local_constants = own
        cache.clear()
