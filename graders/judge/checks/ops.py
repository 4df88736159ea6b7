"""The op tasks: each op's backward rule against torch.autograd, every form of every op of graders/ops.py (the op
registry) on its friendly example, its cost rung and Hypothesis's inputs; and task 1.1, unbroadcast.

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
from graders import ops
from graders.judge import reference
from graders.judge import strategies as s
from graders.judge.checks.base import TIGHT, CheckFailed, Context
from graders.judge.checks.cost import charge_cost, cost_operands, run_cost_rung, timed_rung, unbroadcast_cost_sets
from graders.ops import UNBROADCAST_COST, UNBROADCAST_REPEAT, Domain, Op

NAMES = "xy"  # the operands, by position, as the stubs name them (x @ w for matmul)


@dataclass(frozen=True)
class OpCase:
    """One form of an op as the ladder grades it (graders/ops.py's ``Form`` with its ``Op``): the op, its task, how
    it reads, torch's version of it (the expected values), the strategy that draws its operands, the friendly example
    and the hint a wrong rule gets."""
    op: Op
    text: str
    operands: st.SearchStrategy  # of (operands, kwargs); an operand is an ndarray or a float constant
    example: tuple
    hint: str

    @property
    def task(self) -> str:
        """The id of the task that grades the op."""
        return ops.task_of(self.op)

    @property
    def name(self) -> str:
        """The op's name, as the worker knows it."""
        return self.op.name

    @property
    def torch(self) -> Callable:
        """The op on torch's tensors: the expected values."""
        return self.op.torch_function


def domain(form_domain: Domain) -> st.SearchStrategy:
    """The strategy of graders/judge/strategies.py a form's domain names."""
    return getattr(s, form_domain.name)(**form_domain.bounds)


def cases_of(task_id: str) -> list[OpCase]:
    """The forms of the ops task ``task_id`` grades, in the registry's order."""
    return [OpCase(op, form.text, domain(form.domain), form.example, form.hint)
            for op in ops.of_task(task_id) for form in op.forms]


def edges_of(task_id: str) -> list[OpCase]:
    """The points where rules often go wrong of the ops task ``task_id`` grades, each with its own hint."""
    return [OpCase(op, edge.text, s.single_operands(), (edge.operands, {}), edge.hint)
            for op in ops.of_task(task_id) for edge in op.edges]


def _sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """A broadcast gradient summed back to ``shape``, by torch (for the mistake models below)."""
    import torch

    summed = torch.from_numpy(np.ascontiguousarray(grad, dtype=np.float64))
    return (summed.sum() if shape == () else summed.sum_to_size(shape)).numpy()


def _mistake_models(case: OpCase, operands, kwargs, upstream, index: int):
    """The (gradient, hint) of each known mistake of the registry for input ``index`` of ``case`` at these inputs
    (graders/ops.py's ``Mistake``: each a gradient computed from the operands, g, out and the keyword arguments). A
    hint names the mistake, never the formula."""
    arrays = [np.asarray(v, dtype=np.float64) for v in operands]
    out = np.asarray(reference.vjp(case.torch, list(operands), kwargs)[0], dtype=np.float64)
    g = np.asarray(upstream, dtype=np.float64)
    models = []
    for mistake in case.op.mistakes:
        if mistake.operand == index:
            with np.errstate(all="ignore"):
                models.append((_sum_to(mistake.model(arrays, g, out, kwargs), np.shape(operands[index])),
                               mistake.hint))
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
    names = "xw" if case.name == "matmul" else NAMES
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
                         op=case.name, operands=wire, kwargs=wire_kwargs, upstream=upstream,
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
    """Fail, saying so, where the rule of an op that only moves entries (reshape, .T: ``Op.moves_entries``) returned
    a gradient of the output's shape, g's, rather than its input's: its shape may happen to be the input's reversed,
    which is not the mistake."""
    got = np.shape(claim.get("array")) if isinstance(claim, dict) and claim.get("kind") == "ndarray" else None
    if case.op.moves_entries and got == out != shape:
        ctx.fail(what, f"of shape {got}", f"shape {shape}", hint=msg.HINT_SHAPE_OF_OUTPUT.format(out=out, shape=shape))


def _upstream(shape, rng_seed: int) -> np.ndarray:
    return np.asarray(np.round(np.random.default_rng(rng_seed).uniform(-2.0, 2.0, shape), 2))


def check_ops(ctx: Context, task_id: str) -> None:
    """The ladder of an op task: the points where rules often go wrong, each form's friendly example, the cost rung
    of each op on a large input, then Hypothesis's inputs for each form."""
    for case in edges_of(task_id):
        operands, kwargs = case.example
        check_case(ctx, case, operands, kwargs, np.ones(output_shape(ctx, case, operands, kwargs)))
    cases = cases_of(task_id)
    for case in cases:
        operands, kwargs = case.example
        out_shape = output_shape(ctx, case, operands, kwargs)
        check_case(ctx, case, operands, kwargs, _upstream(out_shape, 0), witness=True)
    wrong_when_timed, too_slow = cost_rungs(ctx, ops.of_task(task_id))  # before the drawn examples: fails fast

    for case in cases:
        def one(drawn, case=case):
            (operands, kwargs), g_seed = drawn
            out_shape = output_shape(ctx, case, operands, kwargs)
            check_case(ctx, case, operands, kwargs, _upstream(out_shape, g_seed))

        ctx.forall(st.tuples(case.operands, st.integers(0, 2**16)), one, examples=case.op.examples)
    if wrong_when_timed is not None:  # right on every drawn input, wrong only on a large one that was timed
        raise wrong_when_timed
    charge_cost(ctx, too_slow)


def rules(ctx: Context) -> None:
    """The check of every op task (graders/tasks.py's ``op_task``): the backward rules of the ops of graders/ops.py
    that name its task."""
    check_ops(ctx, ctx.task.id)


def cost_rungs(ctx: Context, task_ops) -> tuple[CheckFailed | None, CheckFailed | None]:
    """The cost rung of each op, in order, up to the first whose timed answer is wrong or too slow: (that wrong
    answer's failure, that slowness's), as ``run_cost_rung`` gives them. Each op's figures are kept in the task's data
    under ``costs``."""
    for op in task_ops:
        ctx.data.pop("cost", None)
        wrong, too_slow = run_cost_rung(ctx, partial(check_cost, op=op))
        if "cost" in ctx.data:
            ctx.data.setdefault("costs", {})[op.name] = ctx.data["cost"]
        if wrong is not None or too_slow is not None:
            return wrong, too_slow
    return None, None


def output_shape(ctx: Context, case: OpCase, operands, kwargs) -> tuple[int, ...]:
    """The shape of the op's output at ``operands``, from torch (kept with the draws), so the judge can draw an upstream
    gradient of that shape without asking the worker."""
    return ctx.expected(f"shape of {case.task} {case.text}",
                        lambda operands, kwargs: np.shape(reference.vjp(case.torch, operands, kwargs)[0]),
                        operands, kwargs)


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
    wrong_when_timed, too_slow = run_cost_rung(ctx, check_unbroadcast_cost)
    ctx.forall(st.tuples(s.broadcast_targets(), st.integers(0, 2**16)), one, examples=100)
    if wrong_when_timed is not None:  # as check_ops: the drawn inputs' plainer message first
        raise wrong_when_timed
    charge_cost(ctx, too_slow)


def _unbroadcast_expected(grad: np.ndarray, target: tuple) -> np.ndarray:
    import torch

    return torch.from_numpy(grad).sum_to_size(target).numpy() if target else np.asarray(grad.sum())


def check_unbroadcast_cost(ctx: Context) -> CheckFailed | None:
    """unbroadcast on large gradients, its CPU time against the judge's own numpy sum of them (graders.judge.
    numpy baseline); every answer timed is checked (a wrong one is returned, as by check_cost) against torch's sums,
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
                      baseline=("unbroadcast", [[grad, list(target)] for grad, target in sets], {}),
                      timed=f"calling unbroadcast on gradients of shape {shapes}", ratio=UNBROADCAST_COST,
                      head=head, check=check)


def check_cost(ctx: Context, op: Op) -> CheckFailed | None:
    """The cost rung of ``op``: its backward rule may not be finite differences, a complex step or a Python loop over
    the elements in disguise. Its CPU time on a large input (with a small one in the same request), read by the judge
    from the kernel, must stay within ``op.cost.limit`` times numpy's own op on the same inputs, timed where no student
    code runs (timed_rung). The values of every answer timed are checked too; where they are wrong, the failure is
    returned, to be raised after the drawn examples (whose small inputs make a plainer message, if they fail as
    well)."""
    cost, form = op.cost, op.forms[0]  # a wrong timed answer reads as the op's first form does
    case = OpCase(op, form.text, s.single_operands(), form.example, form.hint)
    kwargs = _tuples(cost.kwargs)
    sets = cost_operands(ctx, op)
    upstreams = [np.ones(output_shape(ctx, case, operands, kwargs)) for operands in sets]
    wire = [{"operands": _encode(operands, cost.kwargs)[0], "upstream": g} for operands, g in zip(sets, upstreams)]
    args = dict(package=ctx.task.route.package, op=op.name, sets=wire, kwargs=_encode([], cost.kwargs)[1],
                repeat=cost.repeat, isolate_unbroadcast=ctx.task.route.asks("unbroadcast"))
    shapes = " and ".join(str(np.shape(a)) for a in sets[-1])
    head = msg.header(ctx.task, op=f"the backward rule of {cost.text}", shapes=shapes, limit=cost.limit,
                      repeat=cost.repeat, hint=cost.hint, base=msg.COST_BASE_OP.format(op=cost.text))

    def check(answers) -> None:  # what was timed is what is checked: a rule cannot be fast here by being wrong here
        if len(answers) != len(sets):
            ctx.fail(f"the answers of the backward rule of {cost.text}", "something else", f"{len(sets)} answers")
        for operands, upstream, answer in zip(sets, upstreams, answers):
            _, expected = ctx.expected(f"vjp of {ops.task_of(op)} {cost.text}", partial(reference.expected_vjp, case.torch),
                                       operands, kwargs, upstream, with_finite_differences=False)
            check_answer(ctx, case, operands, kwargs, upstream, answer, expected)

    return timed_rung(ctx, "op_cost", args, baseline=(op.name, [list(operands) for operands in sets], cost.kwargs),
                      timed=f"calling the backward rule of {cost.text} on inputs of shape {shapes}",
                      ratio=cost.limit, head=head, check=check)


def _tuples(kwargs: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}
