"""Tasks 2.1-2.4: the engine, graded on graphs of judge-made ops.

Each node of these graphs is a linear op made with the student's ``op()``
whose rule the judge supplies (out = sum c_i * parent_i), so the engine is
graded apart from the student's own backward rules (tasks 1.x).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from graders import messages as msg
from graders.judge import strategies as s
from graders.judge.checks.base import CheckFailed, Context, NotAttempted

COEFS = (-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0)
TORCH_SOURCE = "torch.autograd on the same graph"


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
    answer = ctx.ask("graph", doing, timeout=timeout, package="sub_tensor", nodes=nodes, root=root,
                     seed=seed, builds=builds)
    expected = ctx.expected("torch.autograd on the graph", expected_grads, nodes, seed, builds)
    for index, (claim, want) in enumerate(zip(answer.grads, expected)):
        what = f"grad of leaf x{index}"
        if want is None:
            if claim.get("type") != "NoneType":
                ctx.fail(what, f"a {claim.get('type')}",
                         "None (it does not require grad, or the output does not use it)")
            continue
        if claim.get("type") == "NoneType":
            ctx.fail(what, "None", f"an ndarray of shape {want.shape}: the output depends on it")
        yours = ctx.array(claim, want.shape, what)
        ctx.compare(yours, want, what, inputs=lambda: _graph_text(nodes, seed, builds), source=TORCH_SOURCE,
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
    check_graph(ctx, FIXED, np.array([[1.0, 1.0]]))
    ctx.forall(graphs(drawn_seed=False), lambda drawn: check_graph(ctx, *drawn), examples=80)
    check_graph(ctx, diamonds(40), np.array([1.0, 1.0]), timeout=5.0,
                doing="calling backward() on a ladder of 40 diamonds (2**40 paths, 121 nodes)")


def seeding_accumulation_errors(ctx: Context) -> None:
    x = np.array([0.5, -1.0, 2.0])
    scenarios = ctx.ask("engine_errors", "probing backward()'s seeding and errors", package="sub_tensor", x=x,
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
    check_scenarios(ctx, scenarios, forms, strict=True)
    check_scenarios(ctx, scenarios, owned_grads(), strict=True, hint_on_raise=True)


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
                        source="the chain rule by hand", hint=hint)


def no_grad(ctx: Context) -> None:
    def one(ab):
        a, b = ab
        seen = ctx.ask("no_grad_probe", "using no_grad()", package="sub_tensor", a=a, b=b)
        for key, want, what in (
            ("before", True, "is_grad_enabled() before any no_grad() block"),
            ("inside", False, "is_grad_enabled() inside no_grad()"),
            ("nested", False, "is_grad_enabled() inside a nested no_grad()"),
            ("after_nested", False, "is_grad_enabled() after a nested block ends, still inside the outer one"),
            ("after", True, "is_grad_enabled() after the block"),
            ("after_exception", True, "is_grad_enabled() after an exception left a no_grad() block"),
        ):
            if seen.seen.get(key) is not want:
                raise CheckFailed(msg.lines(msg.WRONG_KIND.format(what=what, got=repr(seen.seen.get(key)),
                                                                  expected=repr(want), **msg.header(ctx.task)),
                                            msg.HINT.format(hint=msg.HINT_NO_GRAD)))
        if seen.inside_requires_grad is not False or seen.inside_parents != 0:
            ctx.fail("a * b computed inside no_grad()",
                     f"requires_grad={seen.inside_requires_grad!r} with {seen.inside_parents} parents",
                     "a plain leaf: requires_grad=False, no parents")
        if seen.outside_requires_grad is not True or seen.outside_parents != 2:
            ctx.fail("a * b computed after the block", "not recorded", "recorded again (requires_grad=True, 2 parents)")
        ctx.compare(ctx.array(seen.inside_data, a.shape, "a * b inside no_grad()"), a * b,
                    "value of a * b inside no_grad()", source="numpy")

    one((np.array([1.0, 2.0]), np.array([3.0, -1.0])))
    ctx.forall(s.shapes(max_dims=2).flatmap(lambda shape: st.tuples(s.arrays(shape), s.arrays(shape))), one,
               examples=20)


CHAIN_LENGTH = 10_000


def deep_graphs(ctx: Context) -> None:
    coefs = np.where(np.arange(CHAIN_LENGTH) % 2 == 0, 1.0001, 0.9999)
    nodes = [{"leaf": np.array([1.0, -2.0, 0.5]), "requires_grad": True}, {"chain": coefs, "input": 0}]
    try:
        check_graph(ctx, nodes, np.ones(3), timeout=20.0,  # ones: a seeding mistake is 2.2's alone
                    doing=f"calling backward() on a chain of {CHAIN_LENGTH:,} operations")
    except CheckFailed as failure:
        if "RecursionError" not in str(failure):
            raise
        raise CheckFailed(msg.lines(str(failure), msg.HINT.format(hint=msg.HINT_RECURSION))) from None
