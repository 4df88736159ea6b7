"""The cost rungs: a rule's CPU time on a large input, read by the judge from the kernel, against numpy's own op on
the same inputs timed where no student code runs (graders.judge.numpy_baseline).

The op tasks' checks (graders/judge/checks/ops.py) time each op's rule with ``timed_rung`` on the inputs made here
(``cost_operands``, from the op's ``Cost`` in graders/ops.py; ``unbroadcast_cost_sets`` for task 1.1), run the rung
with ``run_cost_rung`` before their drawn examples, and charge a rule that is right but too slow with ``charge_cost``
once every value is right: the cost rung is worth COST_POINTS of the task.
"""

from __future__ import annotations

import numpy as np

from graders import messages as msg
from graders.isolation.worker_process import WorkerDied, WorkerTimedOut
from graders.judge import numpy_baseline
from graders.judge.checks.base import CheckFailed, Context
from graders.ops import OPS, Cost, Large, Op

COST_POINTS = 1  # of an op task's points, what its cost rung is worth; the values earn the rest
COST_TIMEOUT_FLOOR = 5.0  # CPU seconds a timed request is given at the least, however small its limit
# A rule over its limit is timed again up to this many times in all, each time against the numpy baseline measured
# again right after it, and its best ratio counts: a busy machine slows both alike in CPU time (caches and memory
# are shared), and once put a correct rule at 7 times its usual CPU time beside a baseline measured while the
# machine was quiet; a rule over its limit by its nature is over it every time.
COST_ATTEMPTS = 3


def run_cost_rung(ctx: Context, rung) -> tuple[CheckFailed | None, CheckFailed | None]:
    """Run the cost rung ``rung`` and sort what it found: (its answer's wrong values, if any, to raise after the
    drawn examples; its failure for time, to charge once every value is right: ``charge_cost``)."""
    try:
        return rung(ctx), None
    except CheckFailed as failure:
        return None, failure


def charge_cost(ctx: Context, too_slow: CheckFailed | None) -> None:
    """A rule right on every input but too slow keeps the points of its values: the cost rung costs COST_POINTS."""
    if too_slow is not None:
        ctx.earn(ctx.task.points - COST_POINTS, msg.PARTIAL_VALUES.format(cost=COST_POINTS))
        raise too_slow


def timed_rung(ctx: Context, verb: str, args: dict, *, baseline: tuple, timed: str, ratio: float, head: dict,
               check) -> CheckFailed | None:
    """The cost rung: the worker's CPU time for ``verb`` (the student's code, ``args["repeat"]`` times on each
    set), read by the judge from the kernel, must stay within ``ratio`` x the numpy baseline's: numpy's own op on the
    same inputs, as many times, timed where no student code runs (graders.judge.numpy_baseline). Nothing the worker
    does or says moves the limit, and no flat seconds of slack are added to it: the timed sizes make a rule that
    is asymptotically slower (work per input times outputs) spend orders of magnitude more than the limit.
    ``check`` holds the very answer that was timed (its CheckFailed is returned, to be raised after the drawn
    examples)."""
    ctx.check_route(verb, args)
    op, sets, kwargs = baseline
    best = None
    base = numpy_baseline.measure(op, sets, kwargs, args["repeat"])
    for _ in range(COST_ATTEMPTS):
        limit = ratio * base
        try:  # stopped at 4 times its limit in CPU time, both read from the kernel
            reply = ctx.worker.request(verb, args, timeout=max(COST_TIMEOUT_FLOOR, 4 * limit), measure_cpu=True)
        except (WorkerDied, WorkerTimedOut) as error:
            ctx.oracle_failed(timed)
            if isinstance(error, WorkerTimedOut) and error.idle:  # it waited, it did not compute: not a cost
                raise ctx.timed_out(error, timed, COST_TIMEOUT_FLOOR) from None
            raise CheckFailed(msg.COSTLY_TIMEOUT.format(floor=COST_TIMEOUT_FLOOR, **head)) from None
        ctx.oracle_failed(timed)
        if "ok" not in reply:
            raise ctx.student_error(reply["error"], timed)
        spent = ctx.worker.last_cpu_seconds
        try:  # every answer timed is checked: a rule cannot be fast at a second try by being wrong there
            check(ctx.parsed(verb, reply["ok"], timed))
        except CheckFailed as wrong:
            return wrong
        if spent > limit:  # over: held to numpy measured again at this moment
            base = numpy_baseline.measure(op, sets, kwargs, args["repeat"], again=True)
        if best is None or spent / base < best[0] / best[1]:
            best = (spent, base)
        if spent <= ratio * base:
            break
    spent, base = best
    ctx.data["cost"] = {"seconds": spent, "numpy_seconds": base, "ratio": spent / base, "limit": ratio}
    if spent > ratio * base:
        raise CheckFailed(msg.COSTLY.format(ratio=spent / base, spent=spent, base_seconds=base, **head))
    return None


# ----- the inputs the rungs time -----

_RNG = np.random.default_rng(0)
_BIG = np.round(_RNG.uniform(-1.0, 1.0, (300, 300)), 2)
_SQUARE = _RNG.standard_normal((160, 160))
_BIG3 = np.round(_RNG.uniform(-1.0, 1.0, (2, 80, 80)), 2)

def _fixed(large: Large, position: int) -> np.ndarray:
    """An operand of the large input made without a key: the same every grade."""
    if large.shape == "nn":
        return _SQUARE if position == 0 else _SQUARE.T.copy()
    values = _BIG if (large.low, large.high) == (-1.0, 1.0) else \
        np.round(large.low + (_BIG + 1.0) / 2.0 * (large.high - large.low), 2)
    return values if large.shape == "rc" else values[0]


def _drawn(large: Large, rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    shape = {"rc": (rows, cols), "c": (cols,), "nn": (rows, rows)}[large.shape]
    return rng.standard_normal(shape) if large.normal else np.round(rng.uniform(large.low, large.high, shape), 2)


def large_operands(cost: Cost, rng: np.random.Generator | None) -> list[np.ndarray]:
    """The large input of ``cost``'s rung: fixed without a generator; with one, its sides (in ``cost.sides``, a
    square's one side) and values drawn from it."""
    if rng is None:
        return [_fixed(large, position) for position, large in enumerate(cost.operands)]
    square = any(large.shape == "nn" for large in cost.operands)
    rows = int(rng.integers(*cost.sides))
    cols = rows if square else int(rng.integers(*cost.sides))
    return [_drawn(large, rows, cols, rng) for large in cost.operands]


def cost_operands(ctx: Context, op: Op) -> list[list]:
    """The inputs the cost rung of ``op`` times, all checked: a small set of the drawn examples' sizes, then a large
    one. Without a key they are fixed; with one, the large set's sides and values are drawn from the key, so no input
    of the rung is known in advance, and its sizes overlap the drawn ones: a rule cannot tell the timed call by its
    size alone."""
    rng = np.random.default_rng([ctx.key, 1 + OPS.index(op)]) if ctx.key is not None else None
    large = large_operands(op.cost, rng)
    corner = int(rng.integers(1, 5)) if rng is not None else 3
    small = [v[:corner, :corner].copy() if v.ndim == 2 else v[:corner].copy() for v in large]
    return [small, large]


def unbroadcast_cost_sets(ctx: Context) -> list[tuple[np.ndarray, tuple]]:
    """The (gradient, target) pairs the cost rung of 1.1 times: a small one of the drawn examples' sizes, a large
    gradient summed over its rows ((r, c) to (1, c)) and one summed over a leading axis ((2, s, t) to (s, t)). In
    the second, every entry of the target is an output: a rule that costs a sum over the whole gradient per output
    entry (finite differences of ``np.broadcast_to``, say) spends thousands of times the sum itself there. Sides
    and values are drawn from the key, as cost_operands draws them; without one they are fixed."""
    rng = np.random.default_rng([ctx.key, 0]) if ctx.key is not None else None
    if rng is None:
        rows, leading = _BIG, _BIG3
    else:
        rows = np.round(rng.uniform(-1.0, 1.0, (int(rng.integers(240, 321)), int(rng.integers(240, 321)))), 2)
        leading = np.round(rng.uniform(-1.0, 1.0, (2, int(rng.integers(60, 101)), int(rng.integers(60, 101)))), 2)
    corner = int(rng.integers(1, 5)) if rng is not None else 3
    small = rows[:corner, :corner].copy()
    return [(small, (1, corner)), (rows, (1, rows.shape[1])), (leading, leading.shape[1:])]
