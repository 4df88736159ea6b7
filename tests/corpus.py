"""The corpus of known-wrong submissions: realistic student mistakes, written out.

Each entry is one mistake a student could make, applied to a copy of
``solutions/`` by replacing the exact text ``find`` (it must occur exactly
once) with ``replace`` in ``file``. ``loses`` names the task ids it must lose;
every other task of that file must still pass (a mistake costs its points
once). ``tests/test_corpus_wrong.py`` grades each entry and pins the message
of every lost task in ``tests/snapshots/<name>__<task>.txt``.

``grader_bug`` is set where the graders currently get an entry wrong (it
passes a task it must lose, or loses one it must not): its test is a strict
xfail that documents the bug until the graders are fixed; then drop the field
and pin the new messages.

The correct submissions in other styles live in ``tests/corpus_correct/``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from graders.paths import SOLUTIONS
from graders.tasks import TASKS

# The tasks graded on each file, in the task table's order ("tensor.py" -> 1.1 ... 2.4).
# A line of the student's file a message points at ("tensor.py:353 in backward", a syntax error's "(tensor.py, line
# 262)"): the reference's layout, which an op added to solutions/ moves. A snapshot pins it as "N" (the message's
# words are what it holds); a snapshot read back as a message gets 1 for each N.
_LINES = ((re.compile(r"\b(\w+\.py):\d+\b"), r"\1:N", re.compile(r"\b(\w+\.py):N\b"), r"\1:1"),
          (re.compile(r"\((\w+\.py), line \d+\)"), r"(\1, line N)",
           re.compile(r"\((\w+\.py), line N\)"), r"(\1, line 1)"))


def pin_lines(message: str) -> str:
    """``message`` with every line of the student's file it names as N, as a snapshot holds it."""
    for line, pinned, _, _ in _LINES:
        message = line.sub(pinned, message)
    return message


def unpin_lines(snapshot: str) -> str:
    """A snapshot read back as a message: 1 for every line of the student's file pinned as N."""
    for _, _, pinned, line in _LINES:
        snapshot = pinned.sub(line, snapshot)
    return snapshot


TASKS_OF_FILE = {f"{module}.py": tuple(t.id for t in TASKS if t.module == module)
                 for module in dict.fromkeys(t.module for t in TASKS)}


@dataclass(frozen=True)
class Wrong:
    """One known-wrong submission: solutions/ with ``find`` replaced by ``replace`` in ``file``."""

    name: str
    file: str
    find: str
    replace: str
    loses: tuple[str, ...]
    note: str
    grader_bug: str | None = None
    keeps: tuple[tuple[str, float], ...] = ()  # (task, points) a lost task still gives: its partial credit

    @property
    def graded_tasks(self) -> tuple[str, ...]:
        return TASKS_OF_FILE[self.file]


def apply_patch(text: str, find: str, replace: str, where: str = "") -> str:
    count = text.count(find)
    assert count == 1, f"{where}: the text to replace occurs {count} times, expected exactly once:\n{find}"
    return text.replace(find, replace)


def make_submission(tmp_path: Path, name: str, patches: Iterable) -> Path:
    """A folder ``tmp_path/name`` holding solutions/*.py with ``patches`` applied.

    A patch is a ``Wrong`` (or anything with ``file``, ``find`` and ``replace``)
    or a ``(file, find, replace)`` tuple.
    """
    folder = Path(tmp_path) / name
    folder.mkdir(parents=True)
    for source in sorted(SOLUTIONS.glob("*.py")):
        shutil.copyfile(source, folder / source.name)
    for patch in patches:
        file, find, replace = (patch.file, patch.find, patch.replace) if hasattr(patch, "find") else patch
        path = folder / file
        path.write_text(apply_patch(path.read_text(), find, replace, f"{name}: {file}"))
    return folder


# ----- the engine's body in solutions/tensor.py, from the seed to the end of the walk -----
ENGINE_WALK = """\
        grads = {id(self): grad}
        for node in _reverse_topological_order(self):
            g = grads.pop(id(node))
            if not node._parents:
                if node.requires_grad:
                    node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)
                continue
            for parent, pg in zip(node._parents, node._backward(g)):
                if parent.requires_grad:
                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg
"""

# ----- the engine's body in solutions/tensor.py, from reading a given grad to storing a leaf's -----
SEED_TO_LEAF = """\
        grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)
        if grad.shape != self.shape:
            raise ValueError(f"grad has shape {grad.shape}, expected this tensor's shape {self.shape}")

""" + "".join(ENGINE_WALK.splitlines(keepends=True)[:6])

TOPOLOGICAL_ORDER = """\
    order, visited = [], {id(root)}
    stack = [(root, iter(root._parents))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            if parent.requires_grad and id(parent) not in visited:
                visited.add(id(parent))
                stack.append((parent, iter(parent._parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order[::-1]
"""

NO_GRAD_BODY = """\
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, False
    try:
        yield
    finally:
        _grad_enabled = previous
"""

UNBROADCAST_BODY = """\
    grad = np.asarray(grad, dtype=np.float64)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.reshape(shape)
"""


# ----- the checkpoint's keys in solutions/train.py, from _save_checkpoint's to _load_checkpoint's -----
def _lines_of(path, first: str, last: str) -> str:
    """The whole lines of ``path`` from the one that holds ``first`` to the one that holds ``last``: a span of the
    reference read where it is, so an entry that rewrites it follows any edit of the reference."""
    text = path.read_text()
    start = text.rindex("\n", 0, text.index(first)) + 1
    end = text.index("\n", text.index(last, start)) + 1
    return text[start:end]


CHECKPOINT_SAVE_LOAD = _lines_of(SOLUTIONS / "train.py", 'arrays = {f"model.{k}"',
                                 'optimizer.load_state_dict({k[6:]')


def _tensor(name: str, find: str, replace: str, loses: tuple[str, ...], note: str, **extra) -> Wrong:
    return Wrong(name, "tensor.py", find, replace, loses, note, **extra)


TENSOR = (
    # ----- 1.1 unbroadcast -----
    _tensor("unbroadcast_forgets_leading_axes", UNBROADCAST_BODY, """\
    grad = np.asarray(grad, dtype=np.float64)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
""", ("1.1",), "sums the stretched size-1 axes but never the extra leading ones: (2, 3) down to (3,) stays (2, 3)"),
    _tensor("unbroadcast_forgets_keepdims", "grad = grad.sum(axis=axis, keepdims=True)", "grad = grad.sum(axis=axis)",
            ("1.1",), "sums a size-1 axis away without keepdims, so the later axes shift under the loop"),
    _tensor("unbroadcast_forgets_size_one_axes", UNBROADCAST_BODY, """\
    grad = np.asarray(grad, dtype=np.float64)
    # numpy adds the missing axes on the left, so sum those away
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad.reshape(shape)
""", ("1.1",), "handles the missing leading axes only; a stretched size-1 axis makes the reshape fail"),
    # ----- 1.2 +, -, unary - -----
    _tensor("add_without_unbroadcast", "return unbroadcast(g, x.shape), unbroadcast(g, y.shape)\n", "return g, g\n",
            ("1.2",), "dL/dx = dL/dy = g, never summed back: a bias gradient keeps the batch axis"),
    _tensor("sub_sign_of_b_flipped", "return unbroadcast(g, x.shape), unbroadcast(-g, y.shape)",
            "return unbroadcast(g, x.shape), unbroadcast(g, y.shape)", ("1.2",), "dL/db = +g for a - b"),
    _tensor("neg_returns_g", "return (-g,)", "return (g,)", ("1.2",), "unary minus passes g through unchanged"),
    # ----- 1.3 *, / -----
    _tensor("mul_uses_own_input", "return unbroadcast(g * y, x.shape), unbroadcast(g * x, y.shape)",
            "return unbroadcast(g * x, x.shape), unbroadcast(g * y, y.shape)", ("1.3",),
            "dL/dx = g * x: each factor multiplied by itself instead of by the other one"),
    _tensor("div_db_forgets_numerator", "unbroadcast(-g * x / y**2, y.shape)", "unbroadcast(-g / y**2, y.shape)",
            ("1.3",), "dL/db = -g / b**2, the derivative of 1/b, forgetting the numerator a"),
    _tensor("div_db_missing_minus", "unbroadcast(-g * x / y**2, y.shape)", "unbroadcast(g * x / y**2, y.shape)",
            ("1.3",), "dL/db = g * a / b**2, the minus sign lost"),
    # ----- 1.4 @ -----
    _tensor("matmul_grads_swapped", "return g @ w.T, x.T @ g", "return x.T @ g, g @ w.T", ("1.4",),
            "the two gradients returned in the wrong order: x.T @ g is the weight's gradient"),
    _tensor("matmul_finite_differences", "            return g @ w.T, x.T @ g\n", """\
            # numerical gradient, one entry at a time: d<g, x @ w>/dx[i]
            h = 1e-3
            dx, dw = np.zeros_like(x), np.zeros_like(w)
            for i in np.ndindex(x.shape):
                up, down = x.copy(), x.copy()
                up[i] += h
                down[i] -= h
                dx[i] = np.sum(g * (up @ w - down @ w)) / (2 * h)
            for i in np.ndindex(w.shape):
                up, down = w.copy(), w.copy()
                up[i] += h
                down[i] -= h
                dw[i] = np.sum(g * (x @ up - x @ down)) / (2 * h)
            return dx, dw
""", ("1.4",),
            "right values (@ is linear, so central differences are exact up to rounding) at a cost that grows "
            "with the square of the matrices' size", keeps=(("1.4", 4.0),)),
    # ----- 1.5 **, exp, log -----
    _tensor("pow_forgets_minus_one", "return (g * p * x ** (p - 1),)", "return (g * p * x**p,)", ("1.5",),
            "d(x**p)/dx written as p * x**p"),
    _tensor("exp_forgets_out", "return (g * out,)\n", "return (g,)\n", ("1.5",),
            "the chain rule stops at g: exp's own derivative is never multiplied in"),
    _tensor("log_times_x", "return (g / x,)", "return (g * x,)", ("1.5",), "d(log x)/dx written as x instead of 1/x"),
    # ----- 1.6 relu, tanh, sigmoid -----
    _tensor("relu_passes_at_zero", "return (g * (x > 0),)", "return (g * (x >= 0),)", ("1.6",),
            "lets the gradient through at exactly 0, where PyTorch's relu gives 0"),
    _tensor("relu_of_g", "return (g * (x > 0),)", "return (np.maximum(g, 0),)", ("1.6",),
            "relu applied to g instead of g masked by x > 0: right wherever g > 0 and x > 0, so a check with g = 1 "
            "reads it as a slope at 0 (a student trial's mistake, once misdiagnosed)"),
    _tensor("tanh_uses_input", "return (g * (1.0 - out**2),)", "return (g * (1.0 - self.data**2),)", ("1.6",),
            "1 - x**2 with the input instead of 1 - tanh(x)**2 with the output"),
    _tensor("tanh_finite_differences", "            return (g * (1.0 - out**2),)\n", """\
            h = 1e-6
            slope = (np.tanh(self.data + h) - np.tanh(self.data - h)) / (2 * h)
            return (g * slope,)
""", ("1.6",),
            "a central difference: right to about 1e-10, outside the graders' tolerance"),
    _tensor("relu_zeroes_g_in_place", "return (g * (x > 0),)", "g[x <= 0] = 0\n            return (g,)", ("1.6",),
            "right values, but written into g itself: an engine that hands the same g to another rule hands it "
            "zeroed (a student trial's mistake, once missed by every check)"),
    _tensor("sigmoid_from_x", "return (g * out * (1.0 - out),)",
            "return (g * np.exp(-self.data) / (1.0 + np.exp(-self.data)) ** 2,)", ("1.6",),
            "sigmoid's derivative from x: right for moderate x, nan where exp(-x) overflows (x below about -710), "
            "where the forward's out gives 0 (a student trial's mistake, once missed by every check)"),
    _tensor("sigmoid_forgets_g", "return (g * out * (1.0 - out),)", "return (out * (1.0 - out),)", ("1.6",),
            "the local derivative alone, never multiplied by the upstream gradient"),
    # ----- 1.7 sum, mean, square_mean -----
    _tensor("sum_ignores_axis", "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape).copy(),)",
            "return (np.broadcast_to(g, shape).copy(),)", ("1.7",),
            "broadcasts g straight back, which only works when the summed axes were the leading ones"),
    _tensor("sum_ignores_keepdims",
            "            return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape).copy(),)\n", """\
            if axis is not None:
                g = np.expand_dims(g, axis)
            return (np.broadcast_to(g, shape).copy(),)
""", ("1.7",),
            "puts the summed axes back even when keepdims=True already kept them"),
    _tensor("mean_divides_by_total_size",
            "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) / count,)",
            "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) / self.data.size,)",
            ("1.7",), "divides by every element of x, right for mean() but not for mean(axis)"),
    _tensor("mean_divides_by_one_axis",
            "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) / count,)",
            "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape)\n"
            "                    / (self.data.size if axis is None else shape[axis]),)", ("1.7",),
            "divides by shape[axis]: right for None and one int, a TypeError for a tuple of axes (a student trial's "
            "mistake, once public-green)"),
    _tensor("mean_forgets_to_divide",
            "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) / count,)",
            "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape).copy(),)", ("1.7",),
            "mean's rule copied from sum's without the division"),
    _tensor("square_mean_forgets_n", "return (g * 2.0 * x / x.size,)", "return (g * 2.0 * x,)", ("1.7",),
            "the derivative of sum(x**2), not of its mean"),
    # ----- 1.8 reshape, .T -----
    _tensor("reshape_returns_g", "return (g.reshape(old),)", "return (g,)", ("1.8",),
            "reshape treated like an elementwise op: g keeps the output's shape"),
    _tensor("transpose_returns_g", "return (g.T,)", "return (g,)", ("1.8",), ".T treated like an elementwise op"),
    _tensor("transpose_swaps_first_two_axes", "return (g.T,)", "return (np.swapaxes(g, 0, 1),)", ("1.8",),
            "thinks of .T as a matrix transpose: right in 2-D, wrong in 3-D, an error in 0-D and 1-D"),
    # ----- every task of the file -----
    _tensor("tensor_indentation_error", "            return (g * out * (1.0 - out),)\n", """\
            s = out
             return (g * s * (1.0 - s),)
""", TASKS_OF_FILE["tensor.py"],
            "one line indented a space too far: tensor.py no longer imports, so every task is lost"),
    # ----- 2.1 order and chain rule -----
    _tensor("engine_order_not_reversed", "    return order[::-1]", "    return order", ("2.1", "2.2", "2.4"),
            "walks the topological order from the leaves up, so a node's gradient is looked up before any reached it "
            "(a student trial's mistake: a bare KeyError of an id, with no hint, before)"),
    _tensor("engine_breadth_first", ENGINE_WALK, """\
        # breadth-first from the output: the nearest nodes get their gradient first
        grads = {id(self): grad}
        queue, queued = [self], {id(self)}
        while queue:
            node = queue.pop(0)
            g = grads[id(node)]
            if not node._parents:
                if node.requires_grad:
                    node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)
                continue
            for parent, pg in zip(node._parents, node._backward(g)):
                if parent.requires_grad:
                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg
                    if id(parent) not in queued:
                        queued.add(id(parent))
                        queue.append(parent)
""", ("2.1", "2.2"),
            "no topological sort: a node reached first by a short path passes its gradient on before a "
            "longer path has added its share, so those contributions are lost (wrong values)"),
    _tensor("engine_overwrites_shared_grad",
            "grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg",
            "grads[id(parent)] = pg", ("2.1", "2.2"),
            "a node used twice keeps only the last use's gradient"),
    _tensor("engine_enumerates_paths", ENGINE_WALK, """\
        # push (node, gradient) pairs; every path from the output to a leaf adds its product
        stack = [(self, grad)]
        while stack:
            node, g = stack.pop()
            if not node._parents:
                if node.requires_grad:
                    node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)
                continue
            for parent, pg in zip(node._parents, node._backward(g)):
                if parent.requires_grad:
                    stack.append((parent, pg))
""", ("2.1",), "right values without recursion, but one walk per path: 2**40 walks on a ladder of 40 diamonds"),
    _tensor("engine_recursive_paths", ENGINE_WALK, """\
        def send(node, g):
            if not node._parents:
                if node.requires_grad:
                    node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)
                return
            for parent, pg in zip(node._parents, node._backward(g)):
                if parent.requires_grad:
                    send(parent, pg)

        send(self, grad)
""", ("2.1", "2.4"),
            "micrograd's recursion without the topological sort: exponential in diamonds, and a RecursionError "
            "on a deep chain"),
    # ----- 2.2 seeding, accumulation, errors -----
    _tensor("engine_assigns_grad",
            "node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)",
            "node.grad = g.copy()", ("2.2",), "assigns .grad, so a second backward() call overwrites the first"),
    _tensor("engine_seeds_any_shape", """\
            if self.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
""", "", ("2.2",), "seeds ones of any shape when no grad is given, where PyTorch raises"),
    _tensor("engine_wrong_shape_raises_typeerror",
            'raise ValueError(f"grad has shape {grad.shape}, expected this tensor\'s shape {self.shape}")',
            'raise TypeError(f"bad grad shape {grad.shape}")', ("2.2",),
            "checks the given grad's shape but raises TypeError instead of ValueError"),
    _tensor("engine_accumulates_in_place", """\
                if node.requires_grad:
                    node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)
""", """\
                if node.grad is None:
                    node.grad = g
                else:
                    node.grad += g
""", ("2.2",),
            "keeps the rule's array itself as .grad, then adds in place: when a rule hands the same array to two "
            "leaves (a + b returns g for both), a later backward() adds into both leaves' shared memory"),
    _tensor("engine_broadcasts_given_grad", """\
        if grad.shape != self.shape:
            raise ValueError(f"grad has shape {grad.shape}, expected this tensor's shape {self.shape}")
""", """\
        grad = np.broadcast_to(grad, self.shape)  # so backward(1.0) works on any output
""", ("2.2",), "broadcasts a given grad to the output's shape instead of checking it: a grad of shape (1,) or () "
            "is silently accepted where PyTorch raises"),
    _tensor("engine_ignores_given_grad", "        grads = {id(self): grad}\n",
            "        grads = {id(self): np.ones_like(self.data)}\n", ("2.2",),
            "seeds every backward() with ones, whatever grad it is given (the lesson's own engine): a seeding "
            "mistake, so 2.2's alone, never 2.1's"),
    _tensor("engine_rejects_tensor_grad", "grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, ",
            "grad = np.asarray(grad, ", ("2.2",),
            "reads a given grad with np.asarray only, so backward(Tensor(...)), PyTorch's own form, fails"),
    _tensor("engine_keeps_int_grad", SEED_TO_LEAF, SEED_TO_LEAF.replace(
                "grad, dtype=np.float64)", "grad)").replace(
                "np.array(g, dtype=np.float64) if node.grad is None", "g.copy() if node.grad is None"), ("2.2",),
            "keeps a given grad's dtype and copies it into .grad, so backward(an int array) leaves integer "
            "gradients"),
    _tensor("engine_stores_numpy_scalars",
            "node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)",
            "node.grad = g.copy() if node.grad is None else node.grad + g", ("2.2",),
            "stores what numpy's 0-d arithmetic returns, so a 0-d leaf's .grad is a numpy scalar, not an ndarray "
            "(and clip_grad_norm's in-place scaling does nothing to it)"),
    _tensor("engine_no_requires_grad_check", """\
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
""", "", ("2.2",), "backward() on a tensor that does not require grad returns quietly instead of raising"),
    _tensor("engine_leaf_root_refused", "        if not self.requires_grad:\n", "        if not self._parents:\n",
            ("2.2",), "refuses backward() on any tensor without parents, so x.backward() on a leaf that requires "
            "grad raises where PyTorch gives x.grad = 1"),
    _tensor("engine_given_grad_keeps_dtype",
            "grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)",
            "grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad)", ("2.2",),
            "converts only the leaves' grads to float64: a float16 or bool grad is added and multiplied in its own "
            "dtype on the way down (float16 rounding; True + True is True)"),
    _tensor("engine_stores_grad_without_copy",
            "node.grad = np.array(g, dtype=np.float64) if node.grad is None",
            "node.grad = np.asarray(g, dtype=np.float64) if node.grad is None", ("2.2",),
            "stores the array that reaches a leaf, not a copy: the caller's grad array, or one array shared by two "
            "leaves, so changing one changes the other"),
    _tensor("engine_stores_rule_ints",
            "node.grad = np.array(g, dtype=np.float64) if node.grad is None",
            "node.grad = np.array(g) if node.grad is None", ("2.2",),
            "stores what reaches a leaf in its own dtype: an op whose rule returns integers leaves an integer .grad, "
            "where PyTorch's is float64 (a mutant the graders once let through)"),
    _tensor("engine_frees_graph", "            for parent, pg in zip(node._parents, node._backward(g)):\n",
            "            parents, node._parents = node._parents, ()\n"
            "            for parent, pg in zip(parents, node._backward(g)):\n", ("2.2",),
            "frees the graph as it goes (node._parents = (), as torch without retain_graph) but raises nothing: "
            "y = 2*x; (1*y).backward(g); (3*y).backward(g) stops at y and leaves x.grad = 2g, not 8g (a student "
            "trial's mistake)"),
    _tensor("engine_frees_the_output",
            "                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg\n",
            "                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg\n"
            "        self._parents = ()  # the graph is spent, as in PyTorch\n", ("2.2",),
            "drops the output's parents after backward() but raises nothing: a second backward() on the same output "
            "silently adds nothing (only the drawn programs that call it again show it)"),
    # ----- 2.3 no_grad -----
    _tensor("no_grad_without_finally", NO_GRAD_BODY, """\
    global _grad_enabled
    previous = _grad_enabled
    _grad_enabled = False
    yield
    _grad_enabled = previous
""", ("2.3",), "no try/finally: an exception inside the block leaves recording switched off"),
    _tensor("no_grad_saves_the_function", "previous, _grad_enabled = _grad_enabled, False",
            "previous, _grad_enabled = is_grad_enabled, False", ("2.3",),
            "keeps is_grad_enabled itself (no call) as the mode to restore, so after the block the mode is a "
            "function (a student trial's mistake: the grader's 'could not encode the answer' before)"),
    _tensor("no_grad_exits_to_true", NO_GRAD_BODY, """\
    global _grad_enabled
    _grad_enabled = False
    try:
        yield
    finally:
        _grad_enabled = True
""", ("2.3",), "switches recording back on at exit instead of restoring the previous mode, so nesting breaks"),
    _tensor("no_grad_forgets_global", NO_GRAD_BODY, """\
    previous = is_grad_enabled()
    _grad_enabled = False
    try:
        yield
    finally:
        _grad_enabled = previous
""", ("2.3",), "no 'global' statement: the assignments make a local variable and the module's flag never changes"),
    # ----- 2.4 deep graphs -----
    _tensor("topological_order_recursive", TOPOLOGICAL_ORDER, """\
    order, visited = [], set()

    def visit(node):
        if id(node) in visited:
            return
        visited.add(id(node))
        for parent in node._parents:
            if parent.requires_grad:
                visit(parent)
        order.append(node)

    visit(root)
    return order[::-1]
""", ("2.4",), "micrograd's recursive build_topo: right, until the graph is deeper than the recursion limit"),
)



def _optim(name: str, find: str, replace: str, loses: tuple[str, ...], note: str, **extra) -> Wrong:
    return Wrong(name, "optim.py", find, replace, loses, note, **extra)


OPTIM = (
    # ----- 3.2 momentum, weight decay and state dict -----
    _optim("sgd_state_keys_its_own_way", 'key = f"momentum_buffer.{i}"', 'key = f"buf{i}"', ("3.2",),
           "keeps the momentum buffers under keys of its own: its own checkpoints round-trip, but a state dict "
           "keyed as optim.py says (momentum_buffer.<i>) is not read"),
    _optim("sgd_lr_inside_buffer", """\
                self.state[key] = d.copy() if buf is None else self.momentum * buf + d
                d = self.state[key]
            p.data -= self.lr * d
""", """\
                self.state[key] = self.lr * d if buf is None else self.momentum * buf + self.lr * d
                p.data -= self.state[key]
                continue
            p.data -= self.lr * d
""", ("3.2",), "momentum in the Sutskever form, buf = momentum * buf + lr * d and p -= buf: the same steps at a fixed "
           "lr, but the state dict's buffer is lr times torch's (a student trial's mistake)"),
    _optim("sgd_weight_decay_into_p_grad",
           "            d = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad\n",
           "            if self.weight_decay:\n                p.grad += self.weight_decay * p.data\n"
           "            d = p.grad\n", ("3.2",),
           "adds weight decay into p.grad in place (p.grad += wd * p.data): the steps are right, but step() changes "
           "the gradient its caller holds, where torch's never does (a student trial's mistake)"),
)


def _train(name: str, find: str, replace: str, loses: tuple[str, ...], note: str, **extra) -> Wrong:
    return Wrong(name, "train.py", find, replace, loses, note, **extra)


TRAIN = (
    # ----- 5.2 evaluate -----
    _train("evaluate_without_finally", """\
    try:
        with no_grad():
            losses = [loss_fn(model(xb), yb).item() for xb, yb in loader]
    finally:
        model.train(was_training)
""", """\
    with no_grad():
        losses = [loss_fn(model(xb), yb).item() for xb, yb in loader]
    model.train(was_training)
""", ("5.2",), "restores the mode after the loop but not in a finally block: a loader or model that raises leaves "
        "the model in eval mode"),
    # ----- 5.5 checkpoint and resume -----
    _train("fit_saves_before_each_epoch", """\
    for epoch in range(done, epochs):
        history["train_loss"].append(train_epoch(model, train_loader, optimizer, loss_fn,
                                                 accumulate=accumulate, clip_norm=clip_norm))
        if val_loader is not None:
            history["val_loss"].append(evaluate(model, val_loader, loss_fn))
        if checkpoint is not None:
            _save_checkpoint(checkpoint, model, optimizer, epoch + 1, history)
""", """\
    for epoch in range(done, epochs):
        if checkpoint is not None:  # at the start of each epoch: the last epoch's work is never saved
            _save_checkpoint(checkpoint, model, optimizer, epoch, history)
        history["train_loss"].append(train_epoch(model, train_loader, optimizer, loss_fn,
                                                 accumulate=accumulate, clip_norm=clip_norm))
        if val_loader is not None:
            history["val_loss"].append(evaluate(model, val_loader, loss_fn))
""", ("5.5",), "saves at the start of each epoch instead of its end (a student's way of 'saving every epoch'): the "
           "file a run leaves lags one epoch behind the run"),
    _train("fit_saves_before_val_loss", """\
        if val_loader is not None:
            history["val_loss"].append(evaluate(model, val_loader, loss_fn))
        if checkpoint is not None:
            _save_checkpoint(checkpoint, model, optimizer, epoch + 1, history)
""", """\
        if checkpoint is not None:
            _save_checkpoint(checkpoint, model, optimizer, epoch + 1, history)
        if val_loader is not None:
            history["val_loss"].append(evaluate(model, val_loader, loss_fn))
""", ("5.5",), "saves after train_epoch but before evaluate's loss is appended: every checkpoint holds one val_loss "
           "too few, so a resumed history is one short (a student trial's mistake)"),
    _train("fit_saves_the_epoch_index", "_save_checkpoint(checkpoint, model, optimizer, epoch + 1, history)",
           "_save_checkpoint(checkpoint, model, optimizer, epoch, history)", ("5.5",),
           "saves the epoch's index, not the count of epochs finished: a resumed run repeats the last epoch and its "
           "history is one too long (a student trial's mistake)"),
    _train("fit_saves_only_at_the_end", """\
        if checkpoint is not None:
            _save_checkpoint(checkpoint, model, optimizer, epoch + 1, history)
    return history
""", """\
    if checkpoint is not None:
        _save_checkpoint(checkpoint, model, optimizer, epochs, history)
    return history
""", ("5.5",), "saves once, after the last epoch, not after every epoch: a run that dies partway keeps nothing "
        "of the epochs it finished", keeps=(("5.5", 3.0),)),
    _train("checkpoint_keys_unprefixed", CHECKPOINT_SAVE_LOAD,
           CHECKPOINT_SAVE_LOAD.replace('"model.', '"model_').replace('"optim.', '"optim_'), ("5.5",),
           "saves and loads under prefixes of its own (model_, optim_): its own checkpoints round-trip, but the file "
           "holds none of the model. and optim. entries the docstring names"),
    _train("save_checkpoint_in_place", """\
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "wb") as f:
        np.savez(f, epoch=epoch, train_loss=np.array(history["train_loss"], dtype=np.float64),
                 val_loss=np.array(history["val_loss"], dtype=np.float64), **arrays)
    os.replace(tmp, path)
""", """\
    with open(path, "wb") as f:
        np.savez(f, epoch=epoch, train_loss=np.array(history["train_loss"], dtype=np.float64),
                 val_loss=np.array(history["val_loss"], dtype=np.float64), **arrays)
""", ("5.5",), "writes over the checkpoint itself, not a temporary file then os.replace: a run that dies mid-write "
        "leaves half a file and loses the last good checkpoint", keeps=(("5.5", 3.0),)),
    _train("load_checkpoint_optimizer_keys_off_by_one", "optimizer.load_state_dict({k[6:]",
           "optimizer.load_state_dict({k[5:]", ("5.5",),
           "strips 5 characters of 'optim.' (6 long), so every optimizer key keeps a leading dot: an optimizer that "
           "looks its momentum buffers up by name finds none and silently starts them afresh"),
    _train("load_checkpoint_epoch_as_array", 'return int(saved["epoch"]), history', 'return saved["epoch"], history',
           ("5.5",), "returns the epoch count as np.load gives it, a 0-d array, where the contract says int (fit's "
           "range() happens to take it)"),
)


# ----- every op's rule written as a Python loop over the elements: right values, too slow -----
# Each loses its task's cost point only (graders/ops.py holds each op's limit against numpy's own op). The loops walk
# plain Python floats (``.tolist()``), the fastest a per-element loop gets (those of * and / one gradient's, the other
# vectorised), so each one's CPU time stays far under a timed request's 5 s and the message is the cost rung's "too
# slow": under a deadline of CPU time; one of wall time can still stop them on a machine loaded many times over.
def _per_element(name: str, find: str, replace: str, task: str, op: str, points: float) -> Wrong:
    return Wrong(name, "tensor.py", find, replace, (task,),
                 f"{op}'s rule as a Python loop over the elements: right values, but many times numpy's own {op} "
                 "(loses the cost rung only)", keeps=((task, points - 1.0),))


FLAT_G = "np.array([v for v in g.ravel().tolist()]).reshape(g.shape)"  # g copied one element at a time
PER_ELEMENT_LOOPS = (
    _per_element("add_loops_over_elements", "return unbroadcast(g, x.shape), unbroadcast(g, y.shape)\n",
                 f"d = {FLAT_G}\n            return unbroadcast(d, x.shape), unbroadcast(d, y.shape)\n",
                 "1.2", "add", 4.0),
    _per_element("sub_loops_over_elements", "return unbroadcast(g, x.shape), unbroadcast(-g, y.shape)",
                 "d = np.array([-v for v in g.ravel().tolist()]).reshape(g.shape)\n"
                 "            return unbroadcast(g, x.shape), unbroadcast(d, y.shape)", "1.2", "sub", 4.0),
    _per_element("neg_loops_over_elements", "return (-g,)",
                 "return (np.array([-v for v in g.ravel().tolist()]).reshape(g.shape),)", "1.2", "neg", 4.0),
    _per_element("mul_loops_over_elements", "return unbroadcast(g * y, x.shape), unbroadcast(g * x, y.shape)", """\
ys = np.broadcast_to(y, g.shape).ravel().tolist()
            dx = np.array([gv * yv for gv, yv in zip(g.ravel().tolist(), ys)]).reshape(g.shape)
            return unbroadcast(dx, x.shape), unbroadcast(g * x, y.shape)""", "1.3", "mul", 4.0),
    _per_element("div_loops_over_elements",
                 "return unbroadcast(g / y, x.shape), unbroadcast(-g * x / y**2, y.shape)", """\
xs, ys = np.broadcast_to(x, g.shape).ravel().tolist(), np.broadcast_to(y, g.shape).ravel().tolist()
            dy = np.array([-gv * xv / (yv * yv) for gv, xv, yv in zip(g.ravel().tolist(), xs, ys)]).reshape(g.shape)
            return unbroadcast(g / y, x.shape), unbroadcast(dy, y.shape)""", "1.3", "div", 4.0),
    _per_element("matmul_loops_over_entries", "            return g @ w.T, x.T @ g\n", """\
            dx, dw = np.empty(x.shape), np.empty(w.shape)
            for i, k in np.ndindex(*x.shape):
                dx[i, k] = g[i] @ w[k]
            for k, j in np.ndindex(*w.shape):
                dw[k, j] = x[:, k] @ g[:, j]
            return dx, dw
""", "1.4", "matmul", 5.0),
    _per_element("pow_loops_over_elements", "return (g * p * x ** (p - 1),)",
                 "return (np.array([gv * p * xv ** (p - 1) for gv, xv in zip(g.ravel().tolist(), "
                 "x.ravel().tolist())]).reshape(g.shape),)", "1.5", "**", 5.0),
    _per_element("exp_loops_over_elements", "return (g * out,)\n",
                 "return (np.array([gv * ov for gv, ov in zip(g.ravel().tolist(), "
                 "out.ravel().tolist())]).reshape(g.shape),)\n", "1.5", "exp", 5.0),
    _per_element("log_loops_over_elements", "return (g / x,)",
                 "return (np.array([gv / xv for gv, xv in zip(g.ravel().tolist(), "
                 "x.ravel().tolist())]).reshape(g.shape),)", "1.5", "log", 5.0),
    _per_element("relu_loops_over_elements", "return (g * (x > 0),)",
                 "return (np.array([gv if xv > 0 else 0.0 for gv, xv in zip(g.ravel().tolist(), "
                 "x.ravel().tolist())]).reshape(g.shape),)", "1.6", "relu", 5.0),
    _per_element("tanh_loops_over_elements", "return (g * (1.0 - out**2),)",
                 "return (np.array([gv * (1.0 - ov * ov) for gv, ov in zip(g.ravel().tolist(), "
                 "out.ravel().tolist())]).reshape(g.shape),)", "1.6", "tanh", 5.0),
    _per_element("sigmoid_loops_over_elements", "return (g * out * (1.0 - out),)",
                 "return (np.array([gv * ov * (1.0 - ov) for gv, ov in zip(g.ravel().tolist(), "
                 "out.ravel().tolist())]).reshape(g.shape),)", "1.6", "sigmoid", 5.0),
    _per_element("sum_loops_over_elements",
                 "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape).copy(),)",
                 "full = np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape)\n"
                 "            return (np.array([v for v in full.ravel().tolist()]).reshape(shape),)",
                 "1.7", "sum", 5.0),
    _per_element("mean_loops_over_elements",
                 "return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape) / count,)",
                 "full = np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape)\n"
                 "            return (np.array([v / count for v in full.ravel().tolist()]).reshape(shape),)",
                 "1.7", "mean", 5.0),
    _per_element("square_mean_loops_over_elements", "return (g * 2.0 * x / x.size,)",
                 "gv, n = float(g), x.size\n"
                 "            return (np.array([gv * 2.0 * xv / n for xv in x.ravel().tolist()]).reshape(x.shape),)",
                 "1.7", "square_mean", 5.0),
    _per_element("reshape_loops_over_elements", "return (g.reshape(old),)",
                 "return (np.array([v for v in g.ravel().tolist()]).reshape(old),)", "1.8", "reshape", 3.0),
    _per_element("transpose_loops_over_elements", "return (g.T,)",
                 "return (np.array([v for v in g.T.ravel().tolist()]).reshape(g.T.shape),)", "1.8", ".T", 3.0),
)


# ----- the lesson's five mistakes, and the mistakes whose messages once pointed the wrong way -----
# The lesson names five mistakes (docs/contract.md lists them with the task that grades each): forgetting zero_grad(),
# backward() on a tensor that is not a scalar, a model or batch left on another device, evaluating without eval() and
# no_grad(), and a running total of loss Tensors instead of loss.item(). Each is here in numpy (train.py; the engine's
# own refusal is engine_seeds_any_shape) and in torch (torch_loop.py) where both apply; then the mistakes that a
# student trial found green in public and lost in secret, and those whose message once named another mistake.
TORCH_STEP = """\
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
"""
TRAIN_EPOCH_TAIL = _lines_of(SOLUTIONS / "train.py", "losses.append(loss.item())", "return float(np.mean(losses))")
FIT_TORCH_EPOCH = _lines_of(SOLUTIONS / "torch_loop.py", "        losses = []", 'history["train_loss"].append(')
LESSON_MISTAKES = (
    # 1. zero_grad
    Wrong("train_epoch_zero_grad_only_after_steps", "train.py",
          "    losses, pending = [], 0\n    optimizer.zero_grad()\n", "    losses, pending = [], 0\n", ("5.1", "5.3"),
          "clears the gradients only after each step (the given _step), never before the first backward: the "
          "gradients left on the parameters before the epoch reach the first step"),
    Wrong("fit_torch_never_zero_grads", "torch_loop.py", TORCH_STEP, TORCH_STEP.replace(
        "            optimizer.zero_grad()\n", ""), ("6.1",),
          "never calls optimizer.zero_grad(), so every step adds the gradients of all the batches before it"),
    # 2. backward() on a tensor that is not a scalar
    Wrong("train_epoch_backward_of_squared_errors", "train.py",
          "        loss = loss_fn(model(xb), yb)\n        (loss / accumulate).backward()\n",
          "        pred = model(xb)\n        loss = loss_fn(pred, yb)\n"
          "        ((pred - yb) * (pred - yb) / accumulate).backward()\n", ("5.1", "5.3", "5.4"),
          "calls backward() on the batch's squared errors, one per example, not on the loss: the engine refuses a "
          "tensor of more than one element without a grad, as PyTorch does"),
    Wrong("fit_torch_backward_of_squared_errors", "torch_loop.py", TORCH_STEP,
          "            optimizer.zero_grad()\n            pred = model(xb)\n            loss = loss_fn(pred, yb)\n"
          "            ((pred - yb) ** 2).backward()\n", ("6.1",),
          "calls backward() on the batch's squared errors, one per example: torch refuses to create the gradient "
          "of a tensor that is not a scalar"),
    # 3. the model and the batches on different devices (torch only: the numpy engine has one device)
    Wrong("fit_torch_model_left_on_cpu", "torch_loop.py", "    model.to(device)\n", "", ("6.1",),
          "moves every batch to the device but never the model"),
    Wrong("fit_torch_batches_left_on_cpu", "torch_loop.py", "            xb, yb = xb.to(device), yb.to(device)\n", "",
          ("6.1",), "moves the model to the device but never the training batches"),
    Wrong("fit_torch_val_batches_left_on_cpu", "torch_loop.py", "model(xb.to(device)), yb.to(device))",
          "model(xb), yb)", ("6.1",), "moves the training batches to the device but not the validation batches"),
    Wrong("fit_torch_ignores_device", "torch_loop.py", "    device = torch.device(device)\n",
          '    device = torch.device("cpu")\n', ("6.1",),
          "moves everything to the CPU whatever device it is given: on a GPU machine it would train on the CPU"),
    # 4. evaluating without eval() and no_grad()
    Wrong("evaluate_without_eval", "train.py", "    model.eval()\n    try:", "    try:", ("5.2",),
          "evaluates in training mode: a model whose forward differs by mode (dropout, batch norm) is scored wrong"),
    Wrong("evaluate_without_no_grad", "train.py", "        with no_grad():\n            losses",
          "        if True:\n            losses", ("5.2",), "evaluates with grad mode on, recording a graph per batch"),
    Wrong("fit_torch_validates_in_train_mode", "torch_loop.py", "            model.eval()\n", "", ("6.1",),
          "validates without model.eval(): the validation losses are those of training mode"),
    Wrong("fit_torch_validates_with_grad", "torch_loop.py", "            with torch.no_grad():\n                val =",
          "            if True:\n                val =", ("6.1",),
          "validates without torch.no_grad(): the validation forwards record graphs"),
    # 5. a running total of loss Tensors, not loss.item()
    Wrong("train_epoch_keeps_loss_tensors", "train.py", TRAIN_EPOCH_TAIL,
          TRAIN_EPOCH_TAIL.replace("losses.append(loss.item())", "losses.append(loss)").replace(
              "np.mean(losses)", "np.mean([kept.item() for kept in losses])"), ("5.1",),
          "keeps every loss Tensor in its list and reads them with .item() only at the end: every batch's graph "
          "stays alive until the epoch ends"),
    Wrong("fit_torch_running_total_of_tensors", "torch_loop.py", FIT_TORCH_EPOCH,
          FIT_TORCH_EPOCH.replace("        losses = []\n", "        total, count = 0.0, 0\n").replace(
              "            losses.append(loss.item())\n",
              "            total, count = total + loss, count + 1\n").replace(
              "sum(losses) / len(losses)", "total.item() / count"), ("6.1",),
          "adds the loss Tensors into a running total, read with .item() once an epoch: the total's graph holds every "
          "batch's graph until the epoch ends"),
    # green in public, lost in secret (the public tests now have a twin of each)
    Wrong("evaluate_averages_over_examples", "train.py",
          "            losses = [loss_fn(model(xb), yb).item() for xb, yb in loader]\n"
          "    finally:\n        model.train(was_training)\n    return float(np.mean(losses))\n",
          "            losses = [(loss_fn(model(xb), yb).item() * len(xb.data), len(xb.data)) for xb, yb in loader]\n"
          "    finally:\n        model.train(was_training)\n"
          "    return float(sum(s for s, _ in losses) / sum(n for _, n in losses))\n", ("5.2",),
          "weights each batch's loss by its size, the mean over the examples, where the mean of the batch losses is "
          "asked (a student trial's mistake)"),
    Wrong("fit_torch_val_loss_over_examples", "torch_loop.py",
          "                val = [loss_fn(model(xb.to(device)), yb.to(device)).item() for xb, yb in val_loader]\n"
          "            history[\"val_loss\"].append(sum(val) / len(val))\n",
          "                val = [(loss_fn(model(xb.to(device)), yb.to(device)).item() * len(xb), len(xb))\n"
          "                       for xb, yb in val_loader]\n"
          "            history[\"val_loss\"].append(sum(s for s, _ in val) / sum(n for _, n in val))\n", ("6.1",),
          "averages the validation losses over the examples, not over the batches (a student trial's mistake)"),
    Wrong("loader_shuffles_whole_batches", "data.py",
          "        order = self.rng.permutation(n) if self.shuffle else np.arange(n)\n"
          "        for start in range(0, len(self) * self.batch_size, self.batch_size):\n",
          "        order = np.arange(n)\n"
          "        starts = list(range(0, len(self) * self.batch_size, self.batch_size))\n"
          "        if self.shuffle:\n            starts = [starts[i] for i in self.rng.permutation(len(starts))]\n"
          "        for start in starts:\n", ("4.2",),
          "shuffles the order of the batches, each one the same run of examples every epoch (a student trial's "
          "mistake)"),
    Wrong("fit_drops_accumulate_and_clip_norm", "train.py",
          "train_epoch(model, train_loader, optimizer, loss_fn,\n"
          "                                                 accumulate=accumulate, clip_norm=clip_norm)",
          "train_epoch(model, train_loader, optimizer, loss_fn)", ("5.4",),
          "calls train_epoch without passing accumulate and clip_norm on, so fit ignores both (a student trial's "
          "mistake)"),
    # messages that once named another mistake (and reshape_returns_g, transpose_returns_g above: 'axes reversed')
    Wrong("transpose_backward_swaps_two_axes", "tensor.py", "            return (g.T,)",
          "            return (np.swapaxes(g, -1, -2) if g.ndim > 1 else g,)", ("1.8",),
          "swaps only the last two axes, as torch's .mT: right in 2-D, not for 3 axes (it once read as 'axes "
          "reversed')"),
    Wrong("engine_grad_asarray_keeps_callers_array", "tensor.py",
          "node.grad = np.array(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)",
          "node.grad = np.asarray(g, dtype=np.float64) if node.grad is None else np.asarray(node.grad + g)",
          ("2.2",), "stores the first gradient with np.asarray, as an older hint said literally: a float64 array a "
          "caller or a rule hands over becomes the .grad itself"),
    Wrong("loader_always_drops_the_last_batch", "data.py",
          "        for start in range(0, len(self) * self.batch_size, self.batch_size):\n",
          "        for start in range(0, n // self.batch_size * self.batch_size, self.batch_size):\n", ("4.1",),
          "drops the last, smaller batch whatever drop_last says (its public message once spoke of float32)"),
    Wrong("checkpoint_without_the_optimizer", "train.py",
          "    arrays.update({f\"optim.{k}\": v for k, v in optimizer.state_dict().items()})\n", "", ("5.5",),
          "saves the model but not the optimizer's state, through a temporary file and os.replace (its public "
          "message once asked for exactly that)"),
    Wrong("train_epoch_backward_twice", "train.py", "        (loss / accumulate).backward()\n",
          "        (loss / accumulate).backward()\n        (loss / accumulate).backward()\n", ("5.1", "5.3", "5.4"),
          "a second backward() left in the loop: every gradient counts twice (5.4's message once sent the student to "
          "the engine and the optimizer)"),
)

WRONG = TENSOR + OPTIM + TRAIN + PER_ELEMENT_LOOPS + LESSON_MISTAKES
BY_NAME = {entry.name: entry for entry in WRONG}
assert len(BY_NAME) == len(WRONG), "two corpus entries share a name"
