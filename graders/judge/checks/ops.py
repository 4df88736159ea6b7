"""Tasks 1.1-1.8: each op's backward rule against torch.autograd, one line per op.

The rule is called directly (``out._backward(g)``), not through the engine,
so these tasks can be done, and graded, before task 2.1. In tasks 1.2 and 1.3
the rules call the reference ``unbroadcast``, so a mistake in 1.1 costs once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from hypothesis import strategies as st

from graders import messages as msg
from graders.isolation.worker_process import WorkerDied, WorkerTimedOut
from graders.judge import reference
from graders.judge import strategies as s
from graders.judge import yardstick as timing
from graders.judge.checks.base import TIGHT, CheckFailed, Context

EXAMPLES_PER_OP = 40
NAMES = "xy"  # the operands, by position, as the stubs name them (x @ w for matmul)


@dataclass(frozen=True)
class OpCase:
    """One op of tasks 1.2-1.8 as the ladder grades it: its task, the op's name and text, torch's version (the expected
    values), the strategy that draws its operands, the friendly fixed point, and the hint a wrong rule gets. One line
    per op in CASES, so adding an op is adding a line."""
    task: str
    op: str
    text: str
    torch: Callable
    operands: st.SearchStrategy  # of (operands, kwargs); an operand is an ndarray or a float constant
    fixed: tuple
    hint: str


def _torch(name):
    """torch's ``name``, looked up when called: torch is imported only when an expected value is computed."""
    def op(*args, **kwargs):
        import torch

        return getattr(torch, name)(*args, **kwargs)
    return op


def _torch_reduce(name):
    def reduce(a, axis=None, keepdims=False):
        dims = tuple(range(a.ndim)) if axis is None else axis
        return _torch(name)(a, dim=dims, keepdim=keepdims)
    return reduce


A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
B = np.array([0.5, 2.0, -1.5])
W = np.array([[1.0, -0.5], [0.25, 2.0], [-1.5, 0.75]])
POSITIVE = np.array([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]])

# The op table, written out: task, op, how it reads, torch's version, inputs, a friendly point, its hint
# (graders/messages.py: a hint names what to think about, never the formula).
CASES = (
    OpCase("1.2", "add", "x + y", lambda a, b: a + b, s.operand_pairs(), ([A, B], {}), msg.HINT_ADD),
    OpCase("1.2", "add", "x + 2.5", lambda a, b: a + b, s.operands_with_constants(left=False), ([A, 2.5], {}), msg.HINT_ADD_CONSTANT),
    OpCase("1.2", "add", "2.5 + y", lambda a, b: a + b, s.operands_with_constants(left=True), ([2.5, A], {}), msg.HINT_ADD_CONSTANT),
    OpCase("1.2", "sub", "x - y", lambda a, b: a - b, s.operand_pairs(), ([A, B], {}), msg.HINT_SUB),
    OpCase("1.2", "sub", "2.5 - y", lambda a, b: a - b, s.operands_with_constants(left=True), ([2.5, A], {}), msg.HINT_SUB_CONSTANT),
    OpCase("1.2", "neg", "-x", lambda a: -a, s.single_operands(), ([A], {}), msg.HINT_NEG),
    OpCase("1.3", "mul", "x * y", lambda a, b: a * b, s.operand_pairs(), ([A, B], {}), msg.HINT_MUL),
    OpCase("1.3", "mul", "x * 2.5", lambda a, b: a * b, s.operands_with_constants(left=False), ([A, 2.5], {}), msg.HINT_MUL_CONSTANT),
    OpCase("1.3", "div", "x / y", lambda a, b: a / b, s.operand_pairs(divisor=True), ([A, B], {}), msg.HINT_DIV),
    OpCase("1.3", "div", "2.5 / y", lambda a, b: a / b, s.operands_with_constants(left=True, divisor=True), ([2.5, POSITIVE], {}), msg.HINT_DIV_CONSTANT),
    OpCase("1.4", "matmul", "x @ w", lambda a, b: a @ b, s.matmul_operands(), ([A, W], {}), msg.HINT_MATMUL),
    OpCase("1.5", "pow", "x ** p", lambda a, p: a**p, s.power_operands(), ([POSITIVE], {"p": 3.0}), msg.HINT_POW),
    OpCase("1.5", "exp", "x.exp()", _torch("exp"), s.single_operands(), ([A], {}), msg.HINT_EXP),
    OpCase("1.5", "log", "x.log()", _torch("log"), s.single_operands(min_value=0.2, max_value=5.0), ([POSITIVE], {}), msg.HINT_LOG),
    OpCase("1.6", "relu", "x.relu()", _torch("relu"), s.single_operands(away_from_zero=0.01), ([A], {}), msg.HINT_RELU),
    OpCase("1.6", "tanh", "x.tanh()", _torch("tanh"), s.single_operands(), ([A], {}), msg.HINT_TANH),
    OpCase("1.6", "sigmoid", "x.sigmoid()", _torch("sigmoid"), s.single_operands(), ([A], {}), msg.HINT_SIGMOID),
    OpCase("1.7", "sum", "x.sum(axis, keepdims)", _torch_reduce("sum"), s.reduction_operands(), ([A], {"axis": 0, "keepdims": False}), msg.HINT_SUM),
    OpCase("1.7", "mean", "x.mean(axis, keepdims)", _torch_reduce("mean"), s.reduction_operands(), ([A], {"axis": 1, "keepdims": True}), msg.HINT_MEAN),
    OpCase("1.7", "square_mean", "x.square_mean()", lambda a: (a**2).mean(), s.single_operands(min_dims=1), ([A], {}), msg.HINT_SQUARE_MEAN),
    OpCase("1.8", "reshape", "x.reshape(*shape)", lambda a, shape: a.reshape(shape), s.reshape_operands(), ([A], {"shape": (3, 2)}), msg.HINT_RESHAPE),
    OpCase("1.8", "T", "x.T", lambda a: a.permute(tuple(reversed(range(a.ndim)))), s.single_operands(), ([A], {}), msg.HINT_T),
)

CASES_BY_OP = {case.op: case for case in CASES}

# sigmoid where exp(-x) overflows: its out is 0 or 1 there, and its gradient 0 (a rule from x gives nan)
SIGMOID_AT_EXTREMES = OpCase("1.6", "sigmoid", "x.sigmoid() at large |x|", _torch("sigmoid"), s.single_operands(), ([np.array([[-800.0, -30.0, 0.5, 30.0, 800.0]])], {}), msg.HINT_SIGMOID_EXTREMES)
RELU_AT_ZERO = OpCase("1.6", "relu", "x.relu() at x = -1, 0 and 2", _torch("relu"), s.single_operands(), ([np.array([[-1.0, 0.0, 2.0]])], {}), msg.HINT_RELU_AT_ZERO)


def _sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """A broadcast gradient summed back to ``shape``, by torch (for the mistake models below)."""
    import torch

    summed = torch.from_numpy(np.ascontiguousarray(grad, dtype=np.float64))
    return (summed.sum() if shape == () else summed.sum_to_size(shape)).numpy()


# Mistakes that can be recognised from their numbers: (op, the input's index) -> [(the gradient that mistake gives,
# from the operands, g and out; what the hint then says)]. A hint names the mistake, never the formula.
MISTAKES = {
    ("mul", 0): [(lambda x, g, out: g * x[0], msg.HINT_OP_MISTAKES["mul_x_by_itself"])],
    ("mul", 1): [(lambda x, g, out: g * x[1], msg.HINT_OP_MISTAKES["mul_y_by_itself"])],
    ("div", 1): [(lambda x, g, out: -g / x[1] ** 2, msg.HINT_OP_MISTAKES["div_no_numerator"])],
    ("exp", 0): [(lambda x, g, out: g, msg.HINT_OP_MISTAKES["exp_unchanged"])],
    ("log", 0): [(lambda x, g, out: g * x[0], msg.HINT_OP_MISTAKES["log_multiplied"])],
    ("relu", 0): [(lambda x, g, out: g * (x[0] >= 0), msg.HINT_OP_MISTAKES["relu_at_zero"])],
    ("tanh", 0): [(lambda x, g, out: g * (1.0 - x[0] ** 2), msg.HINT_OP_MISTAKES["tanh_of_input"]),
                  (lambda x, g, out: g * (1.0 - out), msg.HINT_OP_MISTAKES["tanh_not_squared"])],
    ("sigmoid", 0): [(lambda x, g, out: g * x[0] * (1.0 - x[0]), msg.HINT_OP_MISTAKES["sigmoid_of_input"]),
                     (lambda x, g, out: g * out, msg.HINT_OP_MISTAKES["sigmoid_half"])],
    ("square_mean", 0): [(lambda x, g, out: g * 2.0 * x[0], msg.HINT_OP_MISTAKES["square_mean_not_divided"]),
                         (lambda x, g, out: g * x[0] / x[0].size, msg.HINT_OP_MISTAKES["square_mean_no_two"])],
}


def _mistake_models(case: OpCase, operands, kwargs, upstream, index: int):
    """The (gradient, hint) of each known mistake for input ``index`` of ``case`` at these inputs."""
    arrays = [np.asarray(v, dtype=np.float64) for v in operands]
    out = np.asarray(reference.vjp(case.torch, list(operands), kwargs)[0], dtype=np.float64)
    g = np.asarray(upstream, dtype=np.float64)
    if case.op == "pow":
        p = kwargs["p"]
        return [(g * p * arrays[0] ** p, msg.HINT_OP_MISTAKES["pow_not_lowered"])]
    models = []
    for model, hint in MISTAKES.get((case.op, index), ()):
        with np.errstate(all="ignore"):
            models.append((_sum_to(model(arrays, g, out), np.shape(operands[index])), hint))
    return models


def mistake_hint(case: OpCase, operands, kwargs, upstream, index: int, yours: np.ndarray,
                 expected: np.ndarray) -> str | None:
    """The hint of the known mistake whose gradient is exactly ``yours``, if one is."""
    g = np.asarray(upstream, dtype=np.float64)
    if yours.shape == expected.shape == g.shape and np.any(yours) \
            and np.allclose(yours * g, expected, rtol=1e-9, atol=1e-12):
        return msg.HINT_OP_MISTAKES["forgets_g"]
    for wrong, hint in _mistake_models(case, operands, kwargs, upstream, index):
        if wrong.shape == yours.shape and np.all(np.isfinite(wrong)) \
                and np.allclose(yours, wrong, rtol=1e-9, atol=1e-12):
            return hint
    return None


def _kwargs_text(kwargs) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def operand_names(case: OpCase, operands) -> list[str]:
    """The name of each Tensor operand, by its position, as the stub names it: ``2.5 - y`` has one, ``y``."""
    names = "xw" if case.op == "matmul" else NAMES
    return [names[position] for position, value in enumerate(operands) if isinstance(value, np.ndarray)]


def _input_lines(case: OpCase, operands, kwargs, upstream) -> list[str]:
    lines, names = [], iter(operand_names(case, operands))
    for value in operands:
        if isinstance(value, np.ndarray):
            lines.append(f"  {next(names)} = {msg.array_text(value)}")
        else:
            lines.append(msg.OP_CONSTANT.format(value=value))
    if kwargs:
        lines.append(f"  {_kwargs_text(kwargs)}")
    lines.append(msg.OP_UPSTREAM.format(value=msg.array_text(upstream)))
    return lines


def _returns_line(case: OpCase, operands) -> str:
    """What the rule must return for these operands: one gradient per Tensor operand, of that operand's shape."""
    shapes = [value.shape for value in operands if isinstance(value, np.ndarray)]
    names = operand_names(case, operands)
    grads = ", ".join(msg.OP_RETURNS_ONE.format(name=name, shape=shape) for name, shape in zip(names, shapes))
    return msg.RULE_RETURNS.format(grads=grads, count=len(shapes))


def _encode(operands, kwargs):
    wire = [{"tensor": v} if isinstance(v, np.ndarray) else {"const": float(v)} for v in operands]
    return wire, {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}


def check_case(ctx: Context, case: OpCase, operands, kwargs, upstream, *, witness=False) -> None:
    """One rung of values: the student's rule at these inputs against torch.autograd."""
    out, expected = ctx.expected(f"vjp of {case.task} {case.text}", partial(reference.expected_vjp, case.torch),
                                 operands, kwargs, upstream, with_finite_differences=witness)
    wire, wire_kwargs = _encode(operands, kwargs)
    text = f"{case.text} with {_kwargs_text(kwargs)}" if kwargs else case.text
    try:
        answer = ctx.ask("op_backward", f"calling the backward rule of {text}", package=ctx.task.route.package,
                         op=case.op, operands=wire, kwargs=wire_kwargs, upstream=upstream,
                         isolate_unbroadcast=ctx.task.route.asks("unbroadcast"))
    except CheckFailed as failure:  # show the inputs that made the student's code raise, and what it must return
        text = str(failure)
        in_a_function = re.search(r"\n  at \S+:\d+ in ", text)  # not a file that does not compile or import
        raise CheckFailed(msg.lines(text, *_input_lines(case, operands, kwargs, upstream),
                                    _returns_line(case, operands) if in_a_function else "")) from None
    check_answer(ctx, case, operands, kwargs, upstream, answer, expected, witness=witness)


def check_answer(ctx: Context, case: OpCase, operands, kwargs, upstream, answer: dict, expected, *,
                 witness=False) -> None:
    """The gradients of one answer of the student's rule (op_backward's or op_cost's) against ``expected``."""
    if answer.grads is None or answer.slots is None:
        ctx.fail(f"{case.text}", f"a {answer.out.get('type')}", "a Tensor")
    if answer.g_changed:  # the worker's word, so it can only cost: a rule that leaves g alone loses nothing here
        raise CheckFailed(msg.lines(msg.RULE_WROTE_INTO_G.format(op=case.text, **msg.header(ctx.task)),
                                    *_input_lines(case, operands, kwargs, upstream),
                                    msg.HINT.format(hint=msg.HINT_RULE_WROTE_INTO_G)))
    slots = answer.slots
    grads = ctx.sequence(answer.grads, len(slots), f"out._backward(g) for {case.text} (one gradient per parent)")
    arrays, names = [v for v in operands if isinstance(v, np.ndarray)], operand_names(case, operands)
    for index, (value, want) in enumerate(zip(arrays, expected)):
        if index not in slots:
            ctx.fail(f"out._parents of {case.text}", f"missing input {names[index]}", "each input Tensor")
        what = f"gradient for {names[index]} in {case.text}"
        output_shaped(ctx, case, grads[slots.index(index)], value.shape, np.shape(upstream), f"the {what}")
        yours = ctx.array(grads[slots.index(index)], value.shape, f"the {what}", hint=case.hint)
        if yours.shape != np.shape(want) or np.any(np.abs(yours - want) > TIGHT.allowed(want)):
            hint = mistake_hint(case, operands, kwargs, upstream, index, yours, want) or case.hint
            if hint == msg.HINT_RELU_AT_ZERO and np.any((np.abs(yours - want) > TIGHT.allowed(want)) & (value != 0)):
                hint = msg.HINT_RELU_MASK  # wrong away from 0 too: the slope at 0 is not the mistake
        else:
            hint = case.hint
        ctx.compare(yours, want, what, inputs=lambda: _input_lines(case, operands, kwargs, upstream),
                    source=reference.source_text(witness), hint=hint)


def output_shaped(ctx: Context, case: OpCase, claim: dict, shape: tuple, out: tuple, what: str) -> None:
    """Fail, saying so, where a rule of 1.8 (reshape, .T: ops that only move entries) returned a gradient of the
    output's shape, g's, rather than its input's: its shape may happen to be the input's reversed, which is not the
    mistake."""
    got = np.shape(claim.get("array")) if isinstance(claim, dict) and claim.get("kind") == "ndarray" else None
    if case.task == "1.8" and got == out != shape:
        ctx.fail(what, f"of shape {got}", f"shape {shape}", hint=msg.HINT_SHAPE_OF_OUTPUT.format(out=out, shape=shape))


def _upstream(shape, rng_seed: int) -> np.ndarray:
    return np.asarray(np.round(np.random.default_rng(rng_seed).uniform(-2.0, 2.0, shape), 2))


def check_ops(ctx: Context, cases, examples: int = EXAMPLES_PER_OP) -> None:
    """The ladder for each op of a task: the friendly point, the cost on a large input, then Hypothesis's inputs."""
    for case in cases:
        operands, kwargs = case.fixed
        out_shape = output_shape(ctx, case, operands, kwargs)
        check_case(ctx, case, operands, kwargs, _upstream(out_shape, 0), witness=True)
    wrong_when_timed, too_slow = costed(ctx, check_cost)  # before the drawn examples: a rule in disguise fails fast

    for case in cases:
        def one(drawn, case=case):
            (operands, kwargs), g_seed = drawn
            out_shape = output_shape(ctx, case, operands, kwargs)
            check_case(ctx, case, operands, kwargs, _upstream(out_shape, g_seed))

        ctx.forall(st.tuples(case.operands, st.integers(0, 2**16)), one, examples=examples)
    if wrong_when_timed is not None:  # right on every drawn input, wrong only on the large one that was timed
        raise wrong_when_timed
    charge_cost(ctx, too_slow)


COST_POINTS = 1  # of an op task's points, what its cost rung is worth; the values earn the rest


def costed(ctx: Context, rung) -> tuple[CheckFailed | None, CheckFailed | None]:
    """The cost rung ``rung`` run: (its answer's wrong values, if any, to raise after the drawn examples; its
    failure for time, to charge once every value is right: ``charge_cost``)."""
    try:
        return rung(ctx), None
    except CheckFailed as failure:
        return None, failure


def charge_cost(ctx: Context, too_slow: CheckFailed | None) -> None:
    """A rule right on every input but too slow keeps the points of its values: the cost rung costs COST_POINTS."""
    if too_slow is not None:
        ctx.earn(ctx.task.points - COST_POINTS, msg.PARTIAL_VALUES.format(cost=COST_POINTS))
        raise too_slow


def output_shape(ctx: Context, case: OpCase, operands, kwargs) -> tuple[int, ...]:
    """The shape of the op's output at ``operands``, from torch (kept with the draws), so the judge can draw an upstream
    gradient of that shape without asking the worker."""
    return ctx.expected(f"shape of {case.task} {case.text}",
                        lambda operands, kwargs: np.shape(reference.vjp(case.torch, operands, kwargs)[0]),
                        operands, kwargs)


def cases_of(task_id: str) -> list[OpCase]:
    """The op cases of task ``task_id``, in CASES' order."""
    return [case for case in CASES if case.task == task_id]


def unbroadcast(ctx: Context) -> None:
    """Task 1.1's check: unbroadcast at two friendly points, its cost on a large input, then drawn shapes, each against
    the gradient summed over the broadcast axes."""
    def one(drawn):
        (grad_shape, target), g_seed = drawn
        grad = _upstream(grad_shape, g_seed)
        expected = ctx.expected("unbroadcast", _unbroadcast_expected, grad, target)
        claim = ctx.ask("unbroadcast", f"calling unbroadcast(grad of shape {grad_shape}, {target})",
                        package=ctx.task.route.package, grad=grad, shape=list(target))
        yours = ctx.array(claim, target, f"unbroadcast(grad of shape {grad_shape}, {target})")
        ctx.compare(yours, expected, f"unbroadcast(grad, {target})",
                    inputs=[msg.UNBROADCAST_INPUT.format(value=msg.array_text(grad))], source=msg.UNBROADCAST_SOURCE,
                    hint=msg.HINT_UNBROADCAST)

    one((((2, 3), (3,)), 0))
    one((((4, 2, 3), (2, 1)), 1))
    wrong_when_timed, too_slow = costed(ctx, check_unbroadcast_cost)
    ctx.forall(st.tuples(s.broadcast_targets(), st.integers(0, 2**16)), one, examples=100)
    if wrong_when_timed is not None:  # as check_ops: the drawn inputs' plainer message first
        raise wrong_when_timed
    charge_cost(ctx, too_slow)


def _unbroadcast_expected(grad: np.ndarray, target: tuple) -> np.ndarray:
    import torch

    return torch.from_numpy(grad).sum_to_size(target).numpy() if target else np.asarray(grad.sum())


UNBROADCAST_COST = 50.0  # times the judge's numpy sum of the same gradients
UNBROADCAST_REPEAT = 30
COST_TIMEOUT_FLOOR = 5.0  # seconds a timed request is given at the least, however small its limit
# A rule over its limit is timed again, with the yardstick, up to this many times in all, and its best ratio
# counts: a machine busy for a moment once put a correct rule at 7 times its usual CPU time (the limits sit at
# least four times above correct rules), while a rule over its limit by its nature is over it every time.
COST_ATTEMPTS = 3


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


def check_unbroadcast_cost(ctx: Context) -> CheckFailed | None:
    """unbroadcast on large gradients, its CPU time against the judge's own numpy sum of them (graders.judge.
    yardstick); every answer timed is checked (a wrong one is returned, as by check_cost) against torch's sums,
    kept with the draws as the drawn examples' are: a grade with a kept key imports no torch in the judge for them."""
    sets = unbroadcast_cost_sets(ctx)
    shapes = " and ".join(f"{grad.shape} to {target}" for grad, target in sets[1:])
    head = msg.header(ctx.task, op="unbroadcast", shapes=shapes, limit=UNBROADCAST_COST, repeat=UNBROADCAST_REPEAT,
                      hint=msg.HINT_UNBROADCAST_COST, base=msg.COST_BASE_SUM)

    def check(answers) -> None:
        if len(answers) != len(sets):
            ctx.fail("the answers of unbroadcast", "something else", f"{len(sets)} answers")
        for (grad, target), answer in zip(sets, answers):
            yours = ctx.array(answer, target, f"unbroadcast(grad of shape {grad.shape}, {target})")
            ctx.compare(yours, ctx.expected("unbroadcast", _unbroadcast_expected, grad, target),
                        f"unbroadcast(grad, {target})",
                        inputs=[msg.UNBROADCAST_INPUT.format(value=msg.array_text(grad))],
                        source=msg.UNBROADCAST_SOURCE, hint=msg.HINT_UNBROADCAST)

    wire = [{"grad": grad, "shape": list(target)} for grad, target in sets]
    return timed_rung(ctx, "unbroadcast_cost", {"package": ctx.task.route.package, "sets": wire,
                                                  "repeat": UNBROADCAST_REPEAT},
                      yardstick=("unbroadcast", [[grad, list(target)] for grad, target in sets], {}),
                      timed=f"calling unbroadcast on gradients of shape {shapes}", ratio=UNBROADCAST_COST,
                      head=head, check=check)


def timed_rung(ctx: Context, verb: str, args: dict, *, yardstick: tuple, timed: str, ratio: float, head: dict,
               check) -> CheckFailed | None:
    """The cost rung: the worker's CPU time for ``verb`` (the student's code, ``args["repeat"]`` times on each
    set), read by the judge from the kernel, must stay within ``ratio`` x the yardstick's: numpy's own op on the
    same inputs, as many times, timed where no student code runs (graders.judge.yardstick). Nothing the worker
    does or says moves the limit, and no flat seconds of slack are added to it: the timed sizes make a rule that
    is asymptotically slower (work per input times outputs) spend orders of magnitude more than the limit.
    ``check`` holds the very answer that was timed (its CheckFailed is returned, to be raised after the drawn
    examples)."""
    ctx.check_route(verb, args)
    op, sets, kwargs = yardstick
    best = None
    for _ in range(COST_ATTEMPTS):
        base = timing.measure(op, sets, kwargs, args["repeat"])
        limit = ratio * base
        try:
            reply = ctx.worker.request(verb, args, timeout=max(COST_TIMEOUT_FLOOR, 4 * limit), measure_cpu=True)
        except (WorkerDied, WorkerTimedOut):
            ctx.oracle_failed(timed)
            raise CheckFailed(msg.COSTLY_TIMEOUT.format(floor=COST_TIMEOUT_FLOOR, **head)) from None
        ctx.oracle_failed(timed)
        if "ok" not in reply:
            raise ctx.student_error(reply["error"], timed)
        spent = ctx.worker.last_cpu_seconds
        try:  # every answer timed is checked: a rule cannot be fast at a second try by being wrong there
            check(ctx.parsed(verb, reply["ok"], timed))
        except CheckFailed as wrong:
            return wrong
        if best is None or spent / base < best[0] / best[1]:
            best = (spent, base)
        if spent <= limit:
            break
    spent, base = best
    ctx.data["cost"] = {"seconds": spent, "numpy_seconds": base, "ratio": spent / base, "limit": ratio}
    if spent > ratio * base:
        raise CheckFailed(msg.COSTLY.format(ratio=spent / base, spent=spent, base_seconds=base, **head))
    return None


@dataclass(frozen=True)
class CostCase:
    """One op of a task timed on a large input: its rule may cost ``ratio`` x numpy's own op on the same inputs."""
    op: str
    text: str
    operands: tuple
    kwargs: dict
    ratio: float
    hint: str
    sides: tuple[int, int] = (240, 321)  # the range of the large input's sides, drawn with a key
    repeat: int = 30  # calls of the rule per set in the timed request, so that its reading and writing is small


_RNG = np.random.default_rng(0)
_BIG = np.round(_RNG.uniform(-1.0, 1.0, (300, 300)), 2)
_SQUARE = _RNG.standard_normal((160, 160))
_BIG3 = np.round(_RNG.uniform(-1.0, 1.0, (2, 80, 80)), 2)
COSTS = {
    "1.2": CostCase("add", "x + y", (_BIG, _BIG[0]), {}, 200.0, msg.HINT_COST_FORMULA),
    "1.3": CostCase("mul", "x * y", (_BIG, _BIG), {}, 200.0, msg.HINT_COST_FORMULA),
    "1.4": CostCase("matmul", "x @ w", (_SQUARE, _SQUARE.T.copy()), {}, 100.0, msg.HINT_COST_MATMUL, (130, 181), repeat=10),
    "1.5": CostCase("exp", "x.exp()", (_BIG,), {}, 70.0, msg.HINT_COST_FORMULA, repeat=10),
    "1.6": CostCase("tanh", "x.tanh()", (_BIG,), {}, 45.0, msg.HINT_COST_FORMULA, repeat=10),
    "1.7": CostCase("sum", "x.sum(axis=0)", (_BIG,), {"axis": 0}, 80.0, msg.HINT_COST_FORMULA),
    "1.8": CostCase("reshape", "x.reshape(-1)", (_BIG,), {"shape": [-1]}, 60.0, msg.HINT_COST_FORMULA),
}


def cost_operands(ctx: Context, cost: CostCase) -> list[list]:
    """The inputs a cost rung times, all checked: a small set of the drawn examples' sizes, then a large one.
    Without a key they are the fixed ``cost.operands`` and a corner of them; with one, the large set's sides and
    values are drawn from the key, so no input of the rung is known in advance, and its sizes overlap the drawn
    ones: a rule cannot tell the timed call by its size alone."""
    large = list(cost.operands)
    rng = np.random.default_rng([ctx.key, 1 + list(COSTS).index(ctx.task.id)]) if ctx.key is not None else None
    if rng is not None:
        side = lambda: int(rng.integers(*cost.sides))  # noqa: E731
        rows, cols = (side(),) * 2 if cost.op == "matmul" else (side(), side())
        first = np.round(rng.uniform(-1.0, 1.0, (rows, cols)), 2)
        second = {"add": lambda: first[int(rng.integers(rows))].copy(), "mul": lambda: np.round(
            rng.uniform(-1.0, 1.0, (rows, cols)), 2), "matmul": lambda: rng.standard_normal((cols, cols))}
        large = [first, second[cost.op]()] if cost.op in second else [first]
    corner = int(rng.integers(1, 5)) if rng is not None else 3
    small = [v[:corner, :corner].copy() if v.ndim == 2 else v[:corner].copy() for v in large]
    return [small, large]


def check_cost(ctx: Context) -> CheckFailed | None:
    """The last rung of an op task: backward may not be finite differences (or a complex step) in disguise.
    Its CPU time on a large input (with a small one in the same request), read by the judge from the kernel, must
    stay within a multiple of numpy's own op on the same inputs, timed where no student code runs (timed_rung).
    The values of every answer timed are checked too; where they are wrong, the failure is returned, to be raised
    after the drawn examples (whose small inputs make a plainer message, if they fail as well)."""
    cost = COSTS[ctx.task.id]
    case, kwargs = CASES_BY_OP[cost.op], _tuples(cost.kwargs)
    sets = cost_operands(ctx, cost)
    upstreams = [np.ones(output_shape(ctx, case, operands, kwargs)) for operands in sets]
    wire = [{"operands": _encode(operands, cost.kwargs)[0], "upstream": g} for operands, g in zip(sets, upstreams)]
    args = dict(package=ctx.task.route.package, op=cost.op, sets=wire, kwargs=_encode([], cost.kwargs)[1],
                repeat=cost.repeat, isolate_unbroadcast=ctx.task.route.asks("unbroadcast"))
    shapes = " and ".join(str(np.shape(a)) for a in sets[-1])
    head = msg.header(ctx.task, op=f"the backward rule of {cost.text}", shapes=shapes, limit=cost.ratio,
                      repeat=cost.repeat, hint=cost.hint, base=msg.COST_BASE_OP.format(op=cost.text))

    def check(answers) -> None:  # what was timed is what is checked: a rule cannot be fast here by being wrong here
        if len(answers) != len(sets):
            ctx.fail(f"the answers of the backward rule of {cost.text}", "something else", f"{len(sets)} answers")
        for operands, upstream, answer in zip(sets, upstreams, answers):
            _, expected = ctx.expected(f"vjp of {case.task} {case.text}", partial(reference.expected_vjp, case.torch),
                                       operands, kwargs, upstream, with_finite_differences=False)
            check_answer(ctx, case, operands, kwargs, upstream, answer, expected)

    return timed_rung(ctx, "op_cost", args, yardstick=(cost.op, [list(operands) for operands in sets], cost.kwargs),
                      timed=f"calling the backward rule of {cost.text} on inputs of shape {shapes}",
                      ratio=cost.ratio, head=head, check=check)


def _tuples(kwargs: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}


def add_sub_neg(ctx: Context) -> None:
    """Task 1.2's check: the backward rules of +, - and unary -."""
    check_ops(ctx, cases_of("1.2"))


def mul_div(ctx: Context) -> None:
    """Task 1.3's check: the backward rules of * and /."""
    check_ops(ctx, cases_of("1.3"))


def matmul(ctx: Context) -> None:
    """Task 1.4's check: the backward rule of @, on more drawn examples than the others (its shapes vary most)."""
    check_ops(ctx, cases_of("1.4"), examples=80)


def pow_exp_log(ctx: Context) -> None:
    """Task 1.5's check: the backward rules of **, exp and log."""
    check_ops(ctx, cases_of("1.5"))


def relu_tanh_sigmoid(ctx: Context) -> None:
    """Task 1.6's check: relu at exactly 0 first (the contract fixes its gradient there), then the backward rules of
    relu, tanh and sigmoid."""
    operands, kwargs = RELU_AT_ZERO.fixed
    check_case(ctx, RELU_AT_ZERO, operands, kwargs, np.array([[1.0, 1.0, 1.0]]))
    operands, kwargs = SIGMOID_AT_EXTREMES.fixed
    check_case(ctx, SIGMOID_AT_EXTREMES, operands, kwargs, np.ones((1, 5)))
    check_ops(ctx, cases_of("1.6"))


def reductions(ctx: Context) -> None:
    """Task 1.7's check: the backward rules of sum, mean and square_mean."""
    check_ops(ctx, cases_of("1.7"))


def reshape_transpose(ctx: Context) -> None:
    """Task 1.8's check: the backward rules of reshape and .T."""
    check_ops(ctx, cases_of("1.8"))
