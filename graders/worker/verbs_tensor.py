"""Requests about the engine: one op's backward rule, graphs of judge-made ops, no_grad, and programs of them."""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from . import oracles
from .claims import claim, claims, describe_exception
from .op_forwards import FORWARDS
from .verbs import Serving, module


def _operands(tensor_module, operands):
    """Student Tensors (requires_grad) for array operands, plain numbers for constants."""
    leaves, args = [], []
    for operand in operands:
        if "tensor" in operand:
            leaves.append(tensor_module.Tensor(operand["tensor"], requires_grad=True))
            args.append(leaves[-1])
        else:
            args.append(operand["const"])
    return leaves, args


def _kwargs(kwargs):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}


def _forward(package, op, operands, kwargs):
    tensor_module = module(package, "tensor")
    leaves, args = _operands(tensor_module, operands)
    return tensor_module, leaves, FORWARDS[op](*args, **_kwargs(kwargs))


def unbroadcast(package, grad, shape):
    """Task 1.1's verb: the student's unbroadcast of the judge's ``grad`` to ``shape``, as a claim."""
    return claim(module(package, "tensor").unbroadcast(grad, tuple(shape)))


def op_backward(package, op, operands, kwargs, upstream, isolate_unbroadcast=False):
    """Build one op on fresh leaves and call its recorded rule directly (not the engine).
    With ``isolate_unbroadcast`` the rule calls the oracle ``unbroadcast`` (worker.oracles), so a
    mistake in task 1.1 costs its points once."""
    with _unbroadcast_of_the_judge(package, isolate_unbroadcast):
        _, leaves, out = _forward(package, op, operands, kwargs)
        if not isinstance(out, module(package, "tensor").Tensor):
            return {"out": claim(out)}
        given = np.array(upstream, copy=True)
        answer = _answer(leaves, out, out._backward(upstream))
        # whether the rule wrote into g: an engine may hand one g to several rules (only ever a cost to the student)
        answer["g_changed"] = not np.array_equal(given, upstream, equal_nan=True)
        return answer


@contextlib.contextmanager
def _unbroadcast_of_the_judge(package, isolate: bool):
    """Inside, with ``isolate``, the package's ``unbroadcast`` is the oracle (worker.oracles)."""
    tensor_module = module(package, "tensor")
    own = tensor_module.unbroadcast
    if isolate:
        tensor_module.unbroadcast = oracles.unbroadcast
    try:
        yield
    finally:
        tensor_module.unbroadcast = own


def _answer(leaves, out, grads) -> dict:
    """A rule's answer: the result, which input each parent is (its slot), and the gradients."""
    slots = [next((i for i, leaf in enumerate(leaves) if parent is leaf), -1) for parent in out._parents]
    return {"out": claim(out.data), "slots": slots, "grads": claims(grads)}


def op_cost(package, op, sets, kwargs, repeat, isolate_unbroadcast=False):
    """Build an op on each set of operands and call its backward rule ``repeat`` times (with the set's upstream);
    the judge reads this request's CPU time from the kernel, and times numpy's own op itself, elsewhere (nothing
    here is a baseline). The last answer for each set comes back (as op_backward's), so that what was timed is
    also what is checked; with ``isolate_unbroadcast`` the rule calls the judge's ``unbroadcast``, as in
    op_backward."""
    answers = []
    with _unbroadcast_of_the_judge(package, isolate_unbroadcast):
        for one in sets:
            _, leaves, out = _forward(package, op, one["operands"], kwargs)
            grads = None
            for _ in range(repeat):
                grads = out._backward(one["upstream"])
            answers.append(_answer(leaves, out, grads))
    return answers


def unbroadcast_cost(package, sets, repeat):
    """The package's unbroadcast, ``repeat`` times on each {"grad", "shape"}; the judge reads this request's CPU
    time from the kernel and checks each set's last answer."""
    tensor_module, answers = module(package, "tensor"), []
    for one in sets:
        answer = None
        for _ in range(repeat):
            answer = tensor_module.unbroadcast(one["grad"], tuple(one["shape"]))
        answers.append(claim(answer))
    return answers


def _linear_node(tensor_module, parents, coefs):
    """A judge-made op: out = sum(c_i * parent_i); its rule returns c_i * g for each parent."""
    data = sum(c * p.data for c, p in zip(coefs, parents))
    # A coefficient of 1 passes g itself on, as the rules of + and reshape may: an engine that
    # stores such an array as a .grad and later adds into it in place corrupts another gradient.
    return tensor_module.op(data, tuple(parents), lambda g: tuple(g if c == 1.0 else c * g for c in coefs))


def graph(package, nodes, root, seed=None, builds=1):
    """Build a graph of linear judge-made ops ``builds`` times over the same leaves and
    call ``backward`` on each root; return every leaf's ``.grad``."""
    tensor_module = module(package, "tensor")
    leaves = {i: tensor_module.Tensor(n["leaf"], requires_grad=n["requires_grad"])
              for i, n in enumerate(nodes) if "leaf" in n}
    for _ in range(builds):
        built = []
        for i, node in enumerate(nodes):
            if "leaf" in node:
                built.append(leaves[i])
            elif "chain" in node:
                x = built[node["input"]]
                for c in node["chain"].tolist():
                    x = _linear_node(tensor_module, [x], [c])
                built.append(x)
            else:
                built.append(_linear_node(tensor_module, [built[j] for j in node["parents"]], node["coefs"]))
        if seed is None:
            built[root].backward()
        else:
            built[root].backward(seed)
    return {"grads": [claim(leaves[i].grad) for i in sorted(leaves)]}


def _attempt(package_dirs, scenario):
    try:
        return {"returned": scenario()}
    except Exception as error:  # noqa: BLE001 - the scenario's exception is what is asked about
        return {"raised": describe_exception(error, package_dirs)}


def engine_errors(package, x, given, later, dtypes):
    """Backward's error cases and seeding, each as returned-or-raised. ``given`` is a grad handed to backward()
    and ``later`` what the judge writes into that very array after the call (a stored .grad must not follow);
    ``dtypes`` name the dtypes ``given`` is handed over in."""
    T = module(package, "tensor")

    def node(parents):
        return _linear_node(T, parents, [2.0] * len(parents))

    def no_grad_root():
        T.Tensor(x[0]).backward()  # one element, so only the requires_grad check can refuse it

    def implicit_nonscalar():
        node([T.Tensor(x, requires_grad=True)]).backward()

    def wrong_shape_grad(shape):
        def scenario():
            node([T.Tensor(x, requires_grad=True)]).backward(np.ones(shape))
        scenario.__name__ = f"wrong_shape_grad{shape}"
        return scenario

    def one_element():
        leaf = T.Tensor(x[:1].reshape(1, 1), requires_grad=True)
        node([leaf]).backward()
        return claim(leaf.grad)

    def frozen_leaf():
        frozen, live = T.Tensor(x), T.Tensor(x, requires_grad=True)
        node([frozen, live]).backward(np.ones_like(x))
        return [claim(frozen.grad), claim(live.grad)]

    def accumulate():
        leaf = T.Tensor(x, requires_grad=True)
        node([leaf]).backward(np.ones_like(x))
        node([leaf, leaf]).backward(np.full_like(x, 0.5))
        return claim(leaf.grad)

    def zero_d_leaf():
        leaf = T.Tensor(np.array(x[0]), requires_grad=True)
        node([leaf]).backward()
        node([leaf, leaf]).backward()
        return claim(leaf.grad)

    def given_as(name, make, coef=2.0):
        def scenario():
            leaf = T.Tensor(x, requires_grad=True)
            _linear_node(T, [leaf], [coef]).backward(make())
            return claim(leaf.grad)
        scenario.__name__ = name
        return scenario

    def leaf_root():
        leaf = T.Tensor(np.array(x[0]), requires_grad=True)
        leaf.backward()  # a leaf that requires grad is its own output: PyTorch gives it the grad 1
        return claim(leaf.grad)

    def leaf_root_given():
        leaf, seed = T.Tensor(x, requires_grad=True), np.array(given, dtype=np.float64)
        leaf.backward(seed)
        seed[...] = later
        return claim(leaf.grad)

    def shared_upstream():
        # a coefficient of 1 hands the given grad itself to both leaves; then the given array changes, and one
        # leaf's grad is scaled in place, as clip_grad_norm does
        a, b, seed = T.Tensor(x, requires_grad=True), T.Tensor(x, requires_grad=True), np.array(given)
        _linear_node(T, [a, b], [1.0, 1.0]).backward(seed)
        seed[...] = later
        if isinstance(a.grad, np.ndarray):
            a.grad *= 0.5
        return [claim(a.grad), claim(b.grad)]

    def given_in(dtype):
        def scenario():
            leaf = T.Tensor(x, requires_grad=True)
            # 1*x + 1*x + 3*x: a grad kept in its own dtype is added and multiplied in that dtype
            _linear_node(T, [leaf, leaf, leaf], [1.0, 1.0, 3.0]).backward(np.asarray(given).astype(dtype))
            return claim(leaf.grad)
        scenario.__name__ = f"grad_in_{dtype}"
        return scenario

    def rule_returns_ints():
        # an op whose rule returns integers (as a student's own rule may): what reaches the leaf is stored as float64
        leaf = T.Tensor(x, requires_grad=True)
        T.op(2.0 * x, (leaf,), lambda g: (np.array([1, -2, 3]),)).backward(np.ones_like(x))
        return claim(leaf.grad)

    scenarios = [no_grad_root, implicit_nonscalar, one_element, frozen_leaf, accumulate, zero_d_leaf,
                 given_as("grad_as_tensor", lambda: T.Tensor(np.array([1.0, -2.0, 0.5]))),
                 given_as("grad_as_list", lambda: [1.0, -2.0, 0.5]),
                 # a coefficient of 1 hands the given grad on as it is: integers stay integers unless converted
                 given_as("grad_as_ints", lambda: np.array([2, -1, 3]), coef=1.0),
                 *(wrong_shape_grad(shape) for shape in (x.shape + (2,), (1,), (), x.shape + (1,))),
                 leaf_root, leaf_root_given, shared_upstream, *(given_in(dtype) for dtype in dtypes),
                 rule_returns_ints]
    return {s.__name__: _attempt((Serving.package_root,), s) for s in scenarios}


class _ProbeError(Exception):
    pass


def no_grad_probe(package, a, b):
    """What is recorded inside no_grad, how blocks nest, and the mode after an exception."""
    T = module(package, "tensor")
    x, y = T.Tensor(a, requires_grad=True), T.Tensor(b, requires_grad=True)
    seen = {"before": T.is_grad_enabled()}
    with T.no_grad():
        inside = x * y
        seen["inside"] = T.is_grad_enabled()
        with T.no_grad():
            seen["nested"] = T.is_grad_enabled()
        seen["after_nested"] = T.is_grad_enabled()
    seen["after"] = T.is_grad_enabled()
    try:
        with T.no_grad():
            raise _ProbeError
    except _ProbeError:
        pass
    seen["after_exception"] = T.is_grad_enabled()
    outside = x * y
    if hasattr(T, "_grad_enabled"):
        T._grad_enabled = True  # a no_grad that leaks must cost 2.3 only, not the tasks graded after it
    # is_grad_enabled() gives a bool; anything else (the function itself, kept by mistake) comes back as its kind
    seen = {k: v if isinstance(v, bool) else f"a {type(v).__name__}" for k, v in seen.items()}
    return {"seen": seen, "inside_requires_grad": inside.requires_grad, "inside_parents": len(inside._parents),
            "inside_data": claim(inside.data), "outside_requires_grad": outside.requires_grad,
            "outside_parents": len(outside._parents)}


def _seed(T, seed):
    """The grad a program's backward step hands over, in the form the judge drew (None: no grad given)."""
    if seed is None:
        return None
    value, form = seed["value"], seed["as"]
    if form == "ndarray":
        return np.array(value, dtype=np.float64)
    if form == "list":
        return value.tolist()
    if form == "tensor":
        return T.Tensor(value)
    return np.asarray(value).astype(form)


def program(package, steps):
    """Run a judge-drawn program on the package's engine and answer with what each backward step did and every
    leaf's ``.grad`` after it. Steps (each a dict with "do"): "leaf" (data, requires_grad); "node" (a judge-made
    linear op over earlier tensors: parents, coefs); "enter" and "exit" (a ``no_grad()`` block, left normally
    or, with "raising", by an exception); "backward" (root, seed, and "later": what the judge writes into the
    given array after the call); "scale" (a leaf's .grad scaled in place, as clip_grad_norm does). The answer:
    each backward step's outcome with the leaves' gradients, and whether each tensor made was recorded
    (requires_grad, and its count of parents), for a program the judge drew."""
    T = module(package, "tensor")
    made, leaves, blocks, outcomes = [], [], [], []
    try:
        for step in steps:
            do = step["do"]
            if do == "leaf":
                made.append(T.Tensor(step["data"], requires_grad=step["requires_grad"]))
                leaves.append(made[-1])
            elif do == "node":
                made.append(_linear_node(T, [made[i] for i in step["parents"]], step["coefs"]))
            elif do == "enter":
                blocks.append(T.no_grad())
                blocks[-1].__enter__()
            elif do == "exit":
                _leave(blocks.pop(), step.get("raising", False))
            elif do == "backward":
                outcomes.append(_backward_step(T, made[step["root"]], step, leaves))
            elif do == "scale" and isinstance(leaves[step["leaf"]].grad, np.ndarray):
                leaves[step["leaf"]].grad *= step["by"]
    finally:
        if hasattr(T, "_grad_enabled"):
            T._grad_enabled = True  # a no_grad that leaks must cost 2.3 only, not the tasks graded after it
    recorded = [[bool(t.requires_grad), len(t._parents)] for t in made]
    return {"outcomes": outcomes, "recorded": recorded}


def _leave(block, raising: bool) -> None:
    """Leave a no_grad() block as a ``with`` statement does: normally, or with an exception passing through."""
    if not raising:
        block.__exit__(None, None, None)
        return
    try:
        raise _ProbeError
    except _ProbeError:
        if block.__exit__(*sys.exc_info()):
            return  # a block that swallows the exception: the program goes on, the gradients will tell


def _backward_step(T, root, step, leaves) -> dict:
    given = _seed(T, step.get("seed"))

    def call():
        root.backward() if given is None else root.backward(given)

    outcome = _attempt((Serving.package_root,), call)
    if step.get("later") is not None and isinstance(given, np.ndarray):
        given[...] = step["later"]
    return {**outcome, "grads": [claim(leaf.grad) for leaf in leaves]}
