"""Tasks 2.1-2.4: the engine, graded on graphs of judge-made ops.

Each node of these graphs is a linear op made with the student's ``op()``
whose rule the judge supplies (out = sum c_i * parent_i), so the engine is
graded apart from the student's own backward rules (tasks 1.x).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

from graders import messages as msg
from graders.judge import strategies as s
from graders.judge.checks.base import CheckFailed, Context, NotAttempted

COEFS = (-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0)


@st.composite
def graphs(draw, *, max_leaves: int = 3, max_ops: int = 8, frozen: bool = False, drawn_seed: bool = True):
    """A random DAG: leaves of one shape, then ops that each use 1-3 earlier nodes (repeats allowed), and the
    grad given to backward(): drawn, or ones (task 2.1, so that an engine that ignores a given grad, a seeding
    mistake of 2.2's, costs 2.2 only)."""
    shape = draw(s.shapes(max_dims=2, max_side=3))
    leaves = draw(st.integers(1, max_leaves))
    nodes = []
    for i in range(leaves):
        requires_grad = i == 0 or not frozen or draw(st.booleans())
        nodes.append({"leaf": draw(s.arrays(shape)), "requires_grad": requires_grad})
    for _ in range(draw(st.integers(1, max_ops))):
        count = draw(st.integers(1, 3))
        parents = draw(st.lists(st.integers(0, len(nodes) - 1), min_size=count, max_size=count))
        if not any(_depends_on_grad(nodes, p) for p in parents):
            parents[0] = 0
        nodes.append({"parents": parents, "coefs": draw(st.lists(st.sampled_from(COEFS), min_size=count,
                                                                  max_size=count))})
    seed = draw(s.arrays(shape, min_value=-2.0, max_value=2.0)) if drawn_seed else np.ones(shape)
    return nodes, seed


def _depends_on_grad(nodes, index) -> bool:
    node = nodes[index]
    if "leaf" in node:
        return node["requires_grad"]
    return any(_depends_on_grad(nodes, p) for p in node["parents"])


def expected_grads(nodes, seed, builds: int = 1) -> list[np.ndarray | None]:
    """Each leaf's gradient, by torch.autograd on the same linear graph (None where unused or frozen)."""
    import torch  # here, not at the top: a warm grade reads these values from the kept draws

    leaves = {i: torch.tensor(n["leaf"], requires_grad=n["requires_grad"]) for i, n in enumerate(nodes)
              if "leaf" in n}
    for _ in range(builds):
        built = []
        for i, node in enumerate(nodes):
            if "leaf" in node:
                built.append(leaves[i])
            elif "chain" in node:
                x = built[node["input"]]
                for c in node["chain"].tolist():
                    x = c * x
                built.append(x)
            else:
                built.append(sum(c * built[p] for c, p in zip(node["coefs"], node["parents"])))
        # a scalar, so that autograd has no gradient's shape to compare (which imports sympy): <root, seed>
        (built[-1] if seed is None else (built[-1] * torch.tensor(seed)).sum()).backward()
    return [None if t.grad is None else t.grad.numpy() for _, t in sorted(leaves.items())]


def _graph_text(nodes, seed, builds) -> list[str]:
    names = [f"x{i}" for i in range(len(nodes))]
    lines = []
    for i, node in enumerate(nodes):
        if "leaf" in node:
            flag = "" if node["requires_grad"] else " (requires_grad=False)"
            lines.append(f"  {names[i]} = leaf {msg.array_text(node['leaf'], 40)}{flag}")
        elif "parents" in node:
            terms = " + ".join(f"{c:g}*{names[p]}" for c, p in zip(node["coefs"], node["parents"]))
            lines.append(f"  {names[i]} = {terms}")
    if len(lines) > 8:
        lines = lines[:7] + [f"  ... ({len(lines) - 7} more nodes)"]
    seed_text = "" if seed is None else msg.array_text(seed, 40)
    return lines + [f"  backward({seed_text})" + (f", {builds} times over fresh graphs" if builds > 1 else "")]


def check_graph(ctx: Context, nodes, seed, *, builds: int = 1, doing: str = "", timeout: float = 10.0,
                hint: str | None = None) -> None:
    """The leaves' grads after backward() on a graph of judge-made ops, against torch.autograd."""
    root = len(nodes) - 1
    doing = doing or f"calling backward() on a graph of {len(nodes)} nodes"
    answer = ctx.ask("graph", doing, timeout=timeout, package=ctx.task.route.package, nodes=nodes, root=root,
                     seed=seed, builds=builds)
    expected = ctx.expected("torch.autograd on the graph", expected_grads, nodes, seed, builds)
    for index, (claim, want) in enumerate(zip(answer.grads, expected)):
        what = f"grad of leaf x{index}"
        if want is None:
            if claim.get("type") != "NoneType":
                ctx.fail(what, f"a {claim.get('type')}", msg.ENGINE_EXPECTED_NONE)
            continue
        if claim.get("type") == "NoneType":
            ctx.fail(what, "None", msg.ENGINE_EXPECTED_ARRAY.format(shape=want.shape))
        yours = ctx.array(claim, want.shape, what)
        ctx.compare(yours, want, what, inputs=lambda: _graph_text(nodes, seed, builds), source=msg.ENGINE_SOURCE_GRAPH,
                    hint=hint or msg.HINT_CHAIN_RULE)


def diamonds(depth: int):
    """x -> (a = x, b = x) -> x' = 0.5a + 0.5b, ``depth`` times: 3*depth + 1 nodes, 2**depth paths."""
    nodes = [{"leaf": np.array([1.0, 2.0]), "requires_grad": True}]
    for _ in range(depth):
        top = len(nodes) - 1
        nodes += [{"parents": [top], "coefs": [1.0]}, {"parents": [top], "coefs": [1.0]},
                  {"parents": [top + 1, top + 2], "coefs": [0.5, 1.5]}]
    return nodes


FIXED = [
    {"leaf": np.array([[1.0, -2.0]]), "requires_grad": True},
    {"leaf": np.array([[0.5, 3.0]]), "requires_grad": True},
    {"parents": [0, 1], "coefs": [2.0, -1.0]},
    {"parents": [2, 0], "coefs": [3.0, 1.0]},
    {"parents": [3, 2, 2], "coefs": [1.0, 0.5, 2.0]},
]


def topological_order(ctx: Context) -> None:
    """Task 2.1's check: backward() on a fixed graph, drawn graphs, and a ladder of 40 diamonds (2**40 paths: an engine
    that walks paths instead of nodes runs out of time)."""
    check_graph(ctx, FIXED, np.array([[1.0, 1.0]]))
    ctx.forall(graphs(drawn_seed=False), lambda drawn: check_graph(ctx, *drawn), examples=80)
    check_graph(ctx, diamonds(40), np.array([1.0, 1.0]), timeout=5.0,
                doing="calling backward() on a ladder of 40 diamonds (2**40 paths, 121 nodes)")


def seeding_accumulation_errors(ctx: Context) -> None:
    """Task 2.2's check: backward()'s errors and seeding, grads accumulated over drawn graphs built several times, the
    forms a given grad comes in, each leaf's .grad an array of its own, and drawn programs of backward steps."""
    x = np.array([0.5, -1.0, 2.0])
    scenarios = ctx.ask("engine_errors", "probing backward()'s seeding and errors", package=ctx.task.route.package, x=x,
                        given=GIVEN, later=LATER, dtypes=list(GIVEN_DTYPES))
    raising = [("no_grad_root", "RuntimeError", "backward() on a one-element tensor that does not require grad"),
               ("implicit_nonscalar", "RuntimeError", "backward() with no grad on an output of shape (3,)")]
    raising += [(f"wrong_shape_grad{shape}", "ValueError",
                 f"backward(grad of shape {shape}) on an output of shape (3,)") for shape in ((3, 2), (1,), (), (3, 1))]
    for name, exception, doing in raising:
        outcome = scenario(ctx, scenarios, name, doing)
        if outcome.did_return:
            raise CheckFailed(msg.lines(msg.RETURNED_NORMALLY.format(exception=exception, **msg.header(ctx.task,
                                                                                                      doing=doing)),
                                        msg.HINT.format(hint=msg.HINT_ENGINE_ERRORS)))
        if exception not in outcome.raised.get("mro", ()):
            error = ctx.student_error(outcome.raised, doing)
            if isinstance(error, NotAttempted):
                raise error
            raise CheckFailed(msg.lines(msg.WRONG_EXCEPTION.format(
                exception=exception, got=outcome.raised.get("type"), message=outcome.raised.get("message"),
                **msg.header(ctx.task, doing=doing)), msg.HINT.format(hint=msg.HINT_ENGINE_ERRORS)))
    given = np.array([1.0, -2.0, 0.5])  # the grad handed to backward() in the scenarios of its forms
    seeding = (
        ("one_element", "backward() on a (1, 1) output 2*x", [2.0 * np.ones((1, 1))], msg.HINT_SEED),
        ("frozen_leaf", "backward() on 2*a + 2*b where a does not require grad", [None, 2.0 * np.ones(3)],
         msg.HINT_SEED),
        ("accumulate", "two backward() calls, 2*x with grad 1 then 2*x + 2*x with grad 0.5", [4.0 * np.ones(3)],
         msg.HINT_SEED),
    )
    forms = (  # after the drawn graphs, so that a mistake those show is named as before
        ("zero_d_leaf", "two backward() calls on 2*x, then 2*x + 2*x, for a 0-d leaf x", [np.array(6.0)],
         msg.HINT_GRAD_0D),
        ("grad_as_tensor", "backward(Tensor([1, -2, 0.5])) on 2*x, as PyTorch takes it", [2.0 * given],
         msg.HINT_GRAD_FORMS),
        ("grad_as_list", "backward([1.0, -2.0, 0.5]) on 2*x", [2.0 * given], msg.HINT_GRAD_FORMS),
        ("grad_as_ints", "backward(np.array([2, -1, 3])) on 1*x, a grad of integers", [np.array([2.0, -1.0, 3.0])],
         msg.HINT_GRAD_FORMS),
    )
    check_scenarios(ctx, scenarios, seeding)
    ctx.forall(graphs(frozen=True).flatmap(lambda g: st.tuples(st.just(g), st.integers(1, 3))),
               lambda drawn: check_graph(ctx, *drawn[0], builds=drawn[1], hint=msg.HINT_ACCUMULATE), examples=60)
    check_scenarios(ctx, scenarios, forms, strict=True, hint_on_raise=True)
    check_scenarios(ctx, scenarios, owned_grads(), strict=True, hint_on_raise=True)
    ctx.forall(backward_programs(), lambda steps: check_program(ctx, steps), examples=80)
    check_program(ctx, SHARED)
    ctx.forall(shared_programs(), lambda steps: check_program(ctx, steps), examples=30)


# The grad handed to backward() in the scenarios below, what the judge then writes into that very array, and the
# dtypes it is handed over in: 0.1 and 1.7 round in float16 and float32, and bool makes 1 + 1 a logical or.
GIVEN = np.array([0.1, -2.0, 1.7])
LATER = np.array([7.0, 7.0, -7.0])
GIVEN_DTYPES = ("float16", "float32", "int64", "bool")


def owned_grads():
    """Scenarios of a leaf's .grad as its own float64 array: a leaf as the output, the caller's array changed after
    backward(g), one upstream array reaching two leaves, and grads given in other dtypes (their values the judge's,
    converted exactly to float64)."""
    given, later = f"np.array({GIVEN.tolist()})", LATER.tolist()
    yield ("leaf_root", "x.backward() on a 0-d leaf x that requires grad", [np.array(1.0)], msg.HINT_LEAF_ROOT)
    yield ("leaf_root_given", f"x.backward(g) on a leaf x, g = {given}, then g[...] = {later}", [GIVEN],
           msg.HINT_GRAD_COPY)
    yield ("shared_upstream", f"(1*a + 1*b).backward(g), g = {given}, then g[...] = {later} and a.grad *= 0.5",
           [0.5 * GIVEN, GIVEN], msg.HINT_GRAD_COPY)
    for dtype in GIVEN_DTYPES:
        yield (f"grad_in_{dtype}", f"(1*x + 1*x + 3*x).backward({given}.astype({dtype!r}))",
               [5.0 * GIVEN.astype(dtype).astype(np.float64)], msg.HINT_GRAD_DTYPE)
    yield ("rule_returns_ints", "backward(np.ones(3)) on an op whose backward rule returns np.array([1, -2, 3])",
           [np.array([1.0, -2.0, 3.0])], msg.HINT_GRAD_FLOAT)


def scenario(ctx: Context, scenarios: dict, name: str, doing: str):
    """The outcome of one scenario of engine_errors (graders.judge.checks.answers.Outcome)."""
    if name not in scenarios:
        raise ctx.incomplete(doing)
    return scenarios[name]


def check_scenarios(ctx: Context, scenarios: dict, expectations, *, strict: bool = False,
                    hint_on_raise: bool = False) -> None:
    """Each scenario's leaf grads against the chain rule by hand; ``strict``: a 0-d grad must be an ndarray;
    ``hint_on_raise``: a scenario that raised says its hint too."""
    for name, doing, expected, hint in expectations:
        outcome = scenario(ctx, scenarios, name, doing)
        if not outcome.did_return:
            raise ctx.student_error(outcome.raised, doing, hint if hint_on_raise else None)
        claims = outcome.returned if isinstance(outcome.returned, list) else [outcome.returned]
        if not all(isinstance(claim, dict) for claim in claims):
            raise ctx.incomplete(doing)
        for claim, want in zip(claims, expected):
            if want is None:
                if claim.get("type") != "NoneType":
                    ctx.fail(f"the .grad of a leaf without requires_grad after {doing}", f"a {claim.get('type')}",
                             "None")
                continue
            what = f".grad after {doing}"
            ctx.compare(ctx.array(claim, want.shape, what, scalar_ok=not strict, hint=hint), want, what,
                        source=msg.ENGINE_SOURCE_BY_HAND, hint=hint)


def no_grad(ctx: Context) -> None:
    """Task 2.3's check: is_grad_enabled() around plain, nested and interrupted no_grad() blocks, nothing recorded
    inside, and drawn programs that mix blocks with backward steps."""
    def one(ab):
        a, b = ab
        seen = ctx.ask("no_grad_probe", "using no_grad()", package=ctx.task.route.package, a=a, b=b)
        for key, want, what in (
            ("before", True, "is_grad_enabled() before any no_grad() block"),
            ("inside", False, "is_grad_enabled() inside no_grad()"),
            ("nested", False, "is_grad_enabled() inside a nested no_grad()"),
            ("after_nested", False, "is_grad_enabled() after a nested block ends, still inside the outer one"),
            ("after", True, "is_grad_enabled() after the block"),
            ("after_exception", True, "is_grad_enabled() after an exception left a no_grad() block"),
        ):
            got = seen.seen.get(key)
            got = got if isinstance(got, str) else repr(got)  # a bool, or the kind that came instead: "a function"
            if got != repr(want):
                raise CheckFailed(msg.lines(msg.WRONG_KIND.format(what=what, got=got,
                                                                  expected=repr(want), **msg.header(ctx.task)),
                                            msg.HINT.format(hint=msg.HINT_NO_GRAD)))
        if seen.inside_requires_grad is not False or seen.inside_parents != 0:
            ctx.fail("a * b computed inside no_grad()",
                     f"requires_grad={seen.inside_requires_grad!r} with {seen.inside_parents} parents",
                     msg.ENGINE_EXPECTED_PLAIN_LEAF)
        if seen.outside_requires_grad is not True or seen.outside_parents != 2:
            ctx.fail("a * b computed after the block", "not recorded", msg.ENGINE_EXPECTED_RECORDED)
        ctx.compare(ctx.array(seen.inside_data, a.shape, "a * b inside no_grad()"), a * b,
                    "value of a * b inside no_grad()", source=msg.ENGINE_SOURCE_NUMPY)

    one((np.array([1.0, 2.0]), np.array([3.0, -1.0])))
    ctx.forall(s.shapes(max_dims=2).flatmap(lambda shape: st.tuples(s.arrays(shape), s.arrays(shape))), one,
               examples=20)
    ctx.forall(no_grad_programs(), lambda steps: check_no_grad_program(ctx, steps), examples=40)


CHAIN_LENGTH = 10_000


def deep_graphs(ctx: Context) -> None:
    """Task 2.4's check: backward() on a chain of CHAIN_LENGTH operations, where a recursive engine hits Python's
    recursion limit (the message then says so)."""
    coefs = np.where(np.arange(CHAIN_LENGTH) % 2 == 0, 1.0001, 0.9999)
    nodes = [{"leaf": np.array([1.0, -2.0, 0.5]), "requires_grad": True}, {"chain": coefs, "input": 0}]
    try:
        check_graph(ctx, nodes, np.ones(3), timeout=20.0,  # ones: a seeding mistake is 2.2's alone
                    doing=f"calling backward() on a chain of {CHAIN_LENGTH:,} operations")
    except CheckFailed as failure:
        if "RecursionError" not in str(failure):
            raise
        raise CheckFailed(msg.lines(str(failure), msg.HINT.format(hint=msg.HINT_RECURSION))) from None


# ----- drawn programs: what earns 2.2 and 2.3 -----
#
# The scenarios above are fixed, so that a first mistake reads plainly; but their answers are predictable, and
# the worker that runs student code reports them. What earns the task is a program the judge draws (from the
# key, when there is one): leaves, judge-made linear ops, no_grad() blocks left normally or by an exception, and
# backward() calls with grads in every form, some of which must be refused. The worker answers with the
# gradients after each call; the judge works out, on its own model of the program, which ops were recorded,
# which calls must raise, and every leaf's gradient, so no answer can be known without doing what the task asks.

SEED_DTYPES = ("float16", "float32", "int64", "bool")  # a grad given as an ndarray of another dtype
SEED_FORMS = ("ndarray", "list", "tensor", *SEED_DTYPES)


@dataclasses.dataclass
class _Value:
    """The judge's model of one tensor of a program: its data, whether it requires grad, and d(it)/d(leaf) for
    each leaf it was recorded from (a number: every op of a program is linear and keeps the shape)."""

    data: np.ndarray
    requires_grad: bool
    through: dict[int, float]


def _given(seed) -> np.ndarray:
    """A drawn grad as the student's engine must read it: in its form's dtype, then exactly as float64."""
    value = np.asarray(seed["value"])
    return value.astype(seed["as"]).astype(np.float64) if seed["as"] in SEED_DTYPES else value


def refusal(root: _Value, seed) -> str | None:
    """The exception a backward() call must raise (as the contract and PyTorch order them), or None."""
    if not root.requires_grad:
        return "RuntimeError"
    if seed is None:
        return None if root.data.size == 1 else "RuntimeError"
    return None if np.shape(seed["value"]) == root.data.shape else "ValueError"


def expected_program(steps) -> list[tuple[str | None, list[np.ndarray | None]]]:
    """For each backward step: the exception it must raise (None: it returns), and every leaf's .grad after it."""
    return run_model(steps)[1]


def run_model(steps) -> tuple[list[_Value], list[tuple[str | None, list[np.ndarray | None]]]]:
    """The judge's model of a program: every tensor it makes (``_Value``), and for each backward step the
    exception it must raise (None: it returns) and every leaf's .grad after it."""
    made, grads, blocks, outcomes = [], [], 0, []
    for step in steps:
        do = step["do"]
        if do == "leaf":
            grads.append(None)
            made.append(_Value(np.asarray(step["data"], dtype=np.float64), step["requires_grad"],
                               {len(grads) - 1: 1.0} if step["requires_grad"] else {}))
        elif do == "node":
            parents = [made[i] for i in step["parents"]]
            recorded = blocks == 0 and any(p.requires_grad for p in parents)
            through: dict[int, float] = {}
            for c, parent in zip(step["coefs"], parents):
                for leaf, m in parent.through.items():
                    through[leaf] = through.get(leaf, 0.0) + c * m
            made.append(_Value(sum(c * p.data for c, p in zip(step["coefs"], parents)), recorded,
                               through if recorded else {}))
        elif do in ("enter", "exit"):
            blocks += 1 if do == "enter" else -1
        elif do == "backward":
            root, seed = made[step["root"]], step.get("seed")
            raised = refusal(root, seed)
            if raised is None:
                g = np.ones_like(root.data) if seed is None else _given(seed)
                for leaf, m in root.through.items():
                    grads[leaf] = m * g if grads[leaf] is None else grads[leaf] + m * g
            outcomes.append((raised, [None if g is None else np.array(g) for g in grads]))
        elif do == "scale" and grads[step["leaf"]] is not None:
            grads[step["leaf"]] = grads[step["leaf"]] * step["by"]
    return made, outcomes


def shared_calls(steps, modelled=None) -> list[bool]:
    """For each backward step: whether it walks back through an op an earlier call walked (a subgraph shared with
    it), where PyTorch without retain_graph may raise instead of adding the sum of both calls' gradients.
    ``modelled``: run_model(steps), where the caller has it already."""
    makes, (model, outcomes) = tensors_made(steps), modelled or run_model(steps)

    def ops_under(index: int) -> set[int]:
        if makes[index]["do"] == "leaf" or not model[index].requires_grad:
            return set()  # a leaf, or an op not recorded (a plain leaf with no parents)
        return {index}.union(*(ops_under(p) for p in makes[index]["parents"]))

    walked, shared = set(), []
    calls = [step for step in steps if step["do"] == "backward"]
    for step, (raised, _) in zip(calls, outcomes):
        ops = ops_under(step["root"])
        shared.append(bool(ops & walked))
        walked |= ops if raised is None else set()
    return shared


def tensors_made(steps) -> list[dict]:
    """A program's steps that make a tensor (leaves and nodes), in order: a step's "root" and "parents" index these."""
    return [step for step in steps if step["do"] in ("leaf", "node")]


def _node_step(draw, made: int) -> dict:
    """A judge-made linear op over 1-3 of the ``made`` tensors so far (repeats allowed), with drawn coefficients."""
    parents = draw(st.lists(st.integers(0, made - 1), min_size=1, max_size=3))
    return {"do": "node", "parents": parents,
            "coefs": draw(st.lists(st.sampled_from(COEFS), min_size=len(parents), max_size=len(parents)))}


def program_text(steps) -> list[str]:
    """The program as the student would write it, a line each (at most 16)."""
    lines, indent, names, leaves, calls = [], "  ", [], [], 0
    for step in steps:
        do = step["do"]
        if do == "leaf":
            names.append(f"x{len(names)}")
            leaves.append(names[-1])
            flag = "" if step["requires_grad"] else ", requires_grad=False"
            lines.append(f"{indent}{names[-1]} = Tensor({msg.array_text(step['data'], 30)}{flag})")
        elif do == "node":
            names.append(f"x{len(names)}")
            terms = " + ".join(f"{c:g}*{names[p]}" for c, p in zip(step["coefs"], step["parents"]))
            lines.append(f"{indent}{names[-1]} = {terms}")
        elif do == "enter":
            lines.append(f"{indent}with no_grad():")
            indent += "    "
        elif do == "exit":
            if step.get("raising"):
                lines.append(f"{indent}raise Exception   # caught just outside the block")
            elif lines[-1].endswith("with no_grad():"):
                lines.append(f"{indent}pass")
            indent = indent[:-4]
        elif do == "backward":
            calls += 1
            argument, note = _seed_text(step)
            lines.append(f"{indent}{names[step['root']]}.backward({argument})   # call {calls}{note}")
        elif do == "scale":
            lines.append(f"{indent}{leaves[step['leaf']]}.grad *= {step['by']:g}")
    return lines if len(lines) <= 16 else lines[:15] + [f"  ... ({len(lines) - 15} more lines)"]


def _seed_text(step) -> tuple[str, str]:
    """A backward step's argument as written, and a note on it (the array ``g`` names, what it becomes later)."""
    seed = step.get("seed")
    if seed is None:
        return "", ""
    value = f"np.array({msg.array_text(np.asarray(seed['value']), 30)})"
    if seed["as"] == "ndarray":
        later = step.get("later")
        return "g", f": g = {value}" + ("" if later is None else f", then g[...] = {msg.array_text(later, 30)}")
    return {"list": f"{value}.tolist()", "tensor": f"Tensor({value})"}.get(seed["as"],
                                                                           f"{value}.astype({seed['as']!r})"), ""


@st.composite
def backward_programs(draw):
    """Task 2.2's program: leaves (some frozen, 0-d or one element at times), then backward() calls on fresh
    linear ops over them or on a leaf itself, each with a grad in a drawn form (or none), some of which must be
    refused; a caller's array changed after the call, and a .grad scaled in place, now and then."""
    shape = draw(st.sampled_from([(), (1,), (1, 1)]) | s.shapes(max_dims=2, max_side=3))
    count = draw(st.integers(1, 3))
    frozen = [draw(st.booleans()) and i > 0 for i in range(count)]
    steps = [{"do": "leaf", "data": draw(s.arrays(shape)), "requires_grad": not f} for f in frozen]
    made = count
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 3)) == 0:
            root = draw(st.integers(0, count - 1))  # a leaf as its own output
        else:
            steps.append(_node_step(draw, count))  # over the leaves only: one op between a root and its leaves
            root, made = made, made + 1
        requires = any(not frozen[p] for p in _leaves_under(tensors_made(steps), root))
        steps.append({"do": "backward", "root": root, **draw(_seeds(shape, requires))})
        if draw(st.booleans()):  # as clip_grad_norm does: a .grad another leaf shares is scaled with it
            steps.append({"do": "scale", "leaf": draw(st.integers(0, count - 1)), "by": 0.5})
    return steps


def _leaves_under(made: list[dict], index: int) -> set[int]:
    """The leaves the tensor made at ``index`` (of ``tensors_made``) was built from."""
    if made[index]["do"] == "leaf":
        return {index}
    return set().union(*(_leaves_under(made, p) for p in made[index]["parents"]))


def _seeds(shape, requires: bool):
    """A backward step's grad: none, one of the output's shape in a drawn form, or (on an output that requires
    grad, so that one reason alone refuses it) one of another shape; for an ndarray, what the judge writes into
    it after the call, now and then."""
    wrong = [shape + (2,), shape + (1,)] + [other for other in ((1,), ()) if other != shape]

    @st.composite
    def seed(draw):
        kind = draw(st.sampled_from(["none", "given", "given", "given"] + (["wrong"] if requires else [])))
        if kind == "none":
            return {"seed": None}
        form = draw(st.sampled_from(SEED_FORMS))
        target = draw(st.sampled_from(wrong)) if kind == "wrong" else shape
        value = draw(s.arrays(target, min_value=-2.0, max_value=2.0))
        if form == "int64":
            value = np.asarray(np.round(value * 2))
        elif form == "bool":
            value = np.asarray(value > 0)
        # an ndarray given is changed after the call: a .grad that is that very array changes with it
        later = draw(s.arrays(target)) if form == "ndarray" else None
        return {"seed": {"value": value, "as": form}, "later": later}

    return seed()


# y = 2*x, then (1*y).backward(g) and (3*y).backward(g): the second call goes back through y, which the first
# walked. PyTorch gives x.grad = 2g + 6g here (its ops by a number keep nothing to free); an engine that frees
# the graph as it goes (node._parents = ()) stops at y and leaves 2g.
SHARED = [{"do": "leaf", "data": np.array([1.0, 2.0]), "requires_grad": True},
          {"do": "node", "parents": [0], "coefs": [2.0]},
          {"do": "node", "parents": [1], "coefs": [1.0]},
          {"do": "backward", "root": 2, "seed": {"value": np.array([1.0, 1.0]), "as": "ndarray"}},
          {"do": "node", "parents": [1], "coefs": [3.0]},
          {"do": "backward", "root": 3, "seed": {"value": np.array([1.0, 1.0]), "as": "ndarray"}}]


@st.composite
def shared_programs(draw):
    """Task 2.2's programs of backward() calls through shared ops: leaves, then calls each on a new linear op over
    any tensor made so far (an op an earlier call walked, too) or again on an earlier call's output, each with a
    given grad. Every call must add its gradients to the earlier ones (or raise RuntimeError, as PyTorch may)."""
    shape = draw(s.shapes(max_dims=2, max_side=3))
    count = draw(st.integers(1, 2))
    steps = [{"do": "leaf", "data": draw(s.arrays(shape)), "requires_grad": True} for _ in range(count)]
    made, roots = count, []
    for _ in range(draw(st.integers(2, 4))):
        if roots and draw(st.integers(0, 2)) == 0:
            root = draw(st.sampled_from(roots))  # the same output again
        else:
            steps.append(_node_step(draw, made))  # over leaves and earlier ops alike
            root, made = made, made + 1
        roots.append(root)
        steps.append({"do": "backward", "root": root,
                      "seed": {"value": draw(s.arrays(shape, min_value=-2.0, max_value=2.0)), "as": "ndarray"}})
    return steps


@st.composite
def no_grad_programs(draw):
    """Task 2.3's program: leaves, then ops built inside and outside no_grad() blocks (nested, some left by an
    exception). Whether each op was recorded (requires_grad, its parents kept) is what the judge reads back."""
    shape = draw(s.shapes(max_dims=2, max_side=3))
    count = draw(st.integers(1, 3))
    steps = [{"do": "leaf", "data": draw(s.arrays(shape)), "requires_grad": i == 0 or draw(st.booleans())}
             for i in range(count)]
    made, blocks = count, 0
    for _ in range(draw(st.integers(2, 12))):
        choice = draw(st.sampled_from(["enter", "node", "node", "exit"] if blocks else ["enter", "node", "node"]))
        if choice == "enter":
            steps.append({"do": "enter"})
            blocks += 1
        elif choice == "exit":
            steps.append({"do": "exit", "raising": draw(st.booleans())})
            blocks -= 1
        else:
            steps.append(_node_step(draw, made))
            made += 1
    return steps + [{"do": "exit", "raising": False}] * blocks


def check_no_grad_program(ctx: Context, steps) -> None:
    """Each op of a drawn program of no_grad() blocks: recorded (requires_grad, its parents kept) or a plain
    leaf, against the judge's own reading of the program."""
    doing = "running a program of no_grad() blocks"
    answer = ctx.ask("program", doing, package=ctx.task.route.package, steps=steps)
    makes, (model, _) = tensors_made(steps), run_model(steps)
    if len(answer.recorded) != len(makes):
        raise ctx.incomplete(doing)
    for index, (step, value, seen) in enumerate(zip(makes, model, answer.recorded)):
        if step["do"] != "node":
            continue
        want = value.requires_grad  # recorded: outside every block, with a parent that requires grad (op()'s rule)
        parents = len(step["parents"]) if want else 0
        if seen != [want, parents]:
            got = f"requires_grad={seen[0]!r} with {seen[1]!r} parents" if len(seen) == 2 else "something else"
            _program_failure(ctx, steps, f"x{index}", got, f"requires_grad={want} with {parents} parents",
                             msg.HINT_NO_GRAD)


def check_program(ctx: Context, steps) -> None:
    """A drawn program's backward steps against the judge's own model of it: which calls raise, and every
    leaf's .grad after each call. A call through ops an earlier call walked may raise RuntimeError instead, as
    PyTorch does once it has freed them; nothing after it is then checked (what it leaves is PyTorch's own)."""
    doing = "running a program of backward() calls"
    answer = ctx.ask("program", doing, package=ctx.task.route.package, steps=steps)
    modelled = run_model(steps)
    expected = modelled[1]
    if len(answer.outcomes) != len(expected):
        raise ctx.incomplete(doing)
    calls = [step for step in steps if step["do"] == "backward"]
    shared = shared_calls(steps, modelled)
    for call, (outcome, (raised, grads), step) in enumerate(zip(answer.outcomes, expected, calls), start=1):
        where, hint = f"call {call} of this program", _hint_for(steps, step, shared[call - 1])
        if raised is None and outcome.did_raise and shared[call - 1] and _pytorchs_refusal(outcome.raised):
            return  # PyTorch's "Trying to backward through the graph a second time"
        if raised is None and outcome.did_raise:
            raise ctx.student_error(outcome.raised, f"{where}:\n" + "\n".join(program_text(steps)), hint)
        if raised is not None and raised not in (outcome.raised or {}).get("mro", ()):
            head = msg.header(ctx.task, doing=where, exception=raised)
            first = (msg.RETURNED_NORMALLY.format(**head) if not outcome.did_raise else msg.WRONG_EXCEPTION.format(
                got=outcome.raised.get("type"), message=outcome.raised.get("message"), **head))
            raise CheckFailed(msg.lines(first, *program_text(steps), msg.HINT.format(hint=msg.HINT_ENGINE_ERRORS)))
        if len(outcome.grads) != len(grads):
            raise ctx.incomplete(doing)
        for leaf, (claim, want) in enumerate(zip(outcome.grads, grads)):
            what = f"x{leaf}.grad after {where}"
            if want is None:
                if claim.get("type") != "NoneType":
                    _program_failure(ctx, steps, what, f"a {claim.get('type')}", msg.ENGINE_EXPECTED_NONE_RECORDED,
                                     hint)
                continue
            if claim.get("type") == "NoneType":
                _program_failure(ctx, steps, what, "None", f"an ndarray of shape {want.shape}", hint)
            try:
                yours = ctx.array(claim, want.shape, what, scalar_ok=False, hint=hint)
            except CheckFailed as failure:
                first, *rest = str(failure).splitlines()
                raise CheckFailed(msg.lines(first, *program_text(steps), *rest)) from None
            ctx.compare(yours, want, what, inputs=lambda: program_text(steps),
                        source=msg.ENGINE_SOURCE_RECORDED, hint=hint)


def _pytorchs_refusal(raised: dict) -> bool:
    """Whether ``raised`` is a RuntimeError of the engine's own, as PyTorch's for a freed graph: not a stub's
    NotImplementedError or a RecursionError, which are RuntimeErrors too."""
    mro = raised.get("mro")
    return isinstance(mro, list) and "RuntimeError" in mro and not any(
        name in mro for name in ("NotImplementedError", "RecursionError"))


def _hint_for(steps, call: dict, shared: bool = False) -> str:
    """The hint for a mistake that shows at backward step ``call``: by what is special about it (``shared``: it
    goes back through ops an earlier call walked)."""
    seed, root = call.get("seed"), tensors_made(steps)[call["root"]]
    if shared:
        return msg.HINT_SHARED_GRAPH
    if root["do"] == "leaf":
        return msg.HINT_LEAF_ROOT
    if seed is not None and seed["as"] in SEED_DTYPES:
        return msg.HINT_GRAD_DTYPE
    if seed is not None and seed["as"] != "ndarray":
        return msg.HINT_GRAD_FORMS
    if any(s["do"] == "scale" for s in steps) or call.get("later") is not None:
        return msg.HINT_GRAD_COPY
    return msg.HINT_SEED


def _program_failure(ctx: Context, steps, what: str, got: str, expected: str, hint: str):
    raise CheckFailed(msg.lines(msg.WRONG_KIND.format(what=what, got=got, expected=expected, **msg.header(ctx.task)),
                                *program_text(steps), msg.HINT.format(hint=hint)))
