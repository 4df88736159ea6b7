"""The words of the nbgrader notebook: the lesson, worked examples and the setup cell.

The worked examples use numpy alone (never the student's files), so they run
the same on every submission. The setup cell defines what the visible checks
(visible_checks.py) use; students' kernels have no ``graders``, so it holds its
messages as literals, taken from messages.VISIBLE_CHECK.
"""

from __future__ import annotations

from graders import messages as msg

INTRO = """\
# Autograd and your first training loop

In this assignment you build, in plain numpy, the machinery under every PyTorch training script: a
`Tensor` that records how it was computed, the backward pass that turns that record into gradients, an
optimizer, a `DataLoader` and the training loop. Then you train a small network with it.

**How this notebook works.** Your code goes into the `.py` files beside this notebook (`tensor.py`,
`optim.py`, `data.py`, `train.py`, `torch_loop.py`): each stub raises `NotImplementedError("Task X.Y: ...")`,
and its docstring gives the math. Replace the `raise` line with your code. This notebook holds the lesson,
worked examples, and one cell per task that loads your files afresh and runs a short *visible check*.
When your work is graded, each of those cells also runs the grader on your `.py` files: the grader
compares your gradients with PyTorch's over many random inputs, and its message for the task appears
under the cell. The points are in each cell's heading; 100 in all.

Use numpy and the standard library only (torch only in `torch_loop.py`), and keep everything float64.
`nn.py` and `make_sine_data` are given complete. Do not delete or edit the task cells: they are put back
as they were when your work is graded.

Run the setup cell first, and again whenever you like: every check reloads your files.
"""

SETUP = f'''\
# Setup: loads the .py files beside this notebook as the package `lab`, and defines the
# helpers of the visible checks. Each check reloads your files, so your edits count.
import contextlib
import importlib.util
import signal
import sys
import threading
import warnings
from pathlib import Path

import numpy as np

MESSAGES = {msg.VISIBLE_CHECK!r}


class SkipCheck(Exception):
    """A check that cannot run here (task 6.2 without a GPU)."""


def load_lab(folder="."):
    """Import the .py files in `folder` as the package `lab`, reading them afresh."""
    folder = Path(folder).resolve()
    for name in [name for name in sys.modules if name == "lab" or name.startswith("lab.")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location("lab", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    lab = importlib.util.module_from_spec(spec)
    sys.modules["lab"] = lab
    dont_write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(lab)
    except BaseException:
        del sys.modules["lab"]
        raise
    finally:
        sys.dont_write_bytecode = dont_write_bytecode
    return lab


def expect(what, yours, expected, tol=1e-8):
    """Stop the check unless `yours` has `expected`'s shape and values."""
    expected = np.asarray(expected, dtype=np.float64)
    if yours is None:
        raise AssertionError(f"{{what}} is None, expected {{expected.tolist()}}")
    yours = np.asarray(yours, dtype=np.float64)
    if yours.shape != expected.shape:
        raise AssertionError(f"{{what}} has shape {{yours.shape}}, expected {{expected.shape}}")
    if not np.allclose(yours, expected, rtol=tol, atol=tol):
        raise AssertionError(f"{{what}} is {{yours.tolist()}}, expected {{expected.tolist()}}")


class _Unloaded:
    """Stands in for `lab` when your files did not import: using it raises the import's error."""

    def __init__(self, error):
        self.error = error

    def __getattr__(self, name):
        raise self.error


class _TooSlow(Exception):
    pass


def _too_slow(signum, frame):
    raise _TooSlow()


@contextlib.contextmanager
def visible_check(task, seconds=60):
    """Run the block on your files and print one line. It never raises and never writes to
    stderr (what your code prints there comes out on stdout), so it cannot cost the cell its points."""
    timed = threading.current_thread() is threading.main_thread()
    with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("ignore")
        if timed:
            previous = signal.signal(signal.SIGALRM, _too_slow)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            try:
                lab = load_lab()
            except BaseException as error:
                lab = _Unloaded(error)
            yield lab
            line = MESSAGES["passed"].format(task=task)
        except _TooSlow:
            line = MESSAGES["slow"].format(task=task, seconds=seconds)
        except SkipCheck as error:
            line = MESSAGES["skipped"].format(task=task, error=error)
        except NotImplementedError as error:
            line = MESSAGES["stub"].format(task=task, error=error)
        except AssertionError as error:
            line = MESSAGES["failed"].format(task=task, error=error)
        except BaseException as error:
            line = MESSAGES["raised"].format(task=task, kind=type(error).__name__, error=error)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    print(line)
'''

# One part of the lesson per group of tasks: its words, a worked example in numpy (or None).
PARTS = {
    "1": ("""\
## Part 1: every operation knows its backward rule

A `Tensor` holds a float64 array. Every operation on tensors (`a + b`, `a @ b`, `a.relu()`, ...) makes a
new `Tensor` that remembers its inputs, its *parents*, and a *backward rule*. The rule answers one
question: if `g` is the gradient of the loss with respect to my result, what is the gradient with respect
to each of my inputs? That is the chain rule, one operation at a time. For `out = x * y` the answer is
`g * y` for `x` and `g * x` for `y`.

Broadcasting needs one more step. When `x` of shape `(4, 3)` and a bias `b` of shape `(3,)` are added,
`b` is used once per row, so its gradient is the sum of `g` over the rows: a gradient always has its
input's shape. `unbroadcast(g, shape)` (task 1.1) does that sum for every rule.

The worked example works the chain rule by hand for `L = (w * x + b) ** 2`, and checks it with central
differences, the same independent witness the grader uses beside PyTorch.
""", """\
# Worked example (numpy only): the chain rule by hand, checked by central differences.
import numpy as np

def loss(w, x=1.5, b=0.5):
    return (w * x + b) ** 2

w, x, b = 2.0, 1.5, 0.5
out = w * x + b            # forward: out = 3.5, L = out ** 2 = 12.25
d_out = 2 * out            # dL/d_out = 7.0
d_w = d_out * x            # the rule of *: dL/dw = g * x = 10.5
h = 1e-6
numeric = (loss(w + h) - loss(w - h)) / (2 * h)
print(f"dL/dw by the chain rule: {d_w}, by central differences: {numeric:.6f}")

# Broadcasting: a bias of shape (3,) added to every row of a (4, 3) batch.
g = np.ones((4, 3))        # the gradient arriving at x + b
print("dL/db =", g.sum(axis=0), "(summed over the 4 rows it was used in, shape (3,))")
"""),
    "2": ("""\
## Part 2: the backward pass

`loss.backward()` turns the recorded graph into gradients. It lists every node so that each comes after
all the nodes that use it (a reverse topological order), then walks that list: each node hands its
gradient to its backward rule and adds what comes back into its parents' gradients. A tensor used twice
gets both contributions. The totals land, added, in the `.grad` of the leaves that require grad.

The worked example orders a small graph, written as a dict, with the usual recursive depth-first search.
Task 2.4 asks for the same order without recursion: Python stops at about 1,000 nested calls, and a
network's graph can be far deeper.
""", """\
# Worked example (plain Python): a reverse topological order by depth-first search.
# Each node lists the nodes it was computed from: loss = (a * b) + a.
parents = {"loss": ["prod", "a"], "prod": ["a", "b"], "a": [], "b": []}

def order_from(root):
    seen, order = set(), []
    def visit(node):
        if node not in seen:
            seen.add(node)
            for parent in parents[node]:
                visit(parent)
            order.append(node)         # after everything it depends on
    visit(root)
    return order[::-1]                 # reversed: every node before the nodes it depends on

print(order_from("loss"))              # 'a' comes after both of its users, 'loss' and 'prod'
"""),
    "3": ("""\
## Part 3: optimizers

An optimizer repeats three steps: `zero_grad()` clears the old gradients, `backward()` computes new
ones, `step()` moves each parameter against its gradient. SGD with momentum keeps a running buffer per
parameter; Adam keeps two running averages and a step count. Yours follow `torch.optim` exactly, update
`p.data` in place, and skip a parameter whose `grad` is `None`.
""", """\
# Worked example (numpy only): gradient descent on L(p) = (p - 3) ** 2, whose gradient is 2 (p - 3).
p, lr = np.array([0.0]), 0.25
for step in range(1, 5):
    grad = 2 * (p - 3)
    p -= lr * grad                     # in place, like SGD.step
    print(f"step {step}: p = {p[0]:.4f}")
"""),
    "4": ("""\
## Part 4: mini-batches

A `DataLoader` cuts the data into batches: every epoch covers each example exactly once, in batches of
`batch_size` and a last, smaller batch (unless `drop_last`). With `shuffle=True` every epoch draws a
fresh permutation from the loader's own random generator, so a run can be repeated exactly.
""", """\
# Worked example (numpy only): how many batches an epoch has.
n, batch_size = 10, 4
print("batches:", -(-n // batch_size), "(the last one has", n % batch_size, "examples);",
      "with drop_last:", n // batch_size)
"""),
    "5": ("""\
## Part 5: the training loop

One epoch: for each batch, compute the loss, call `backward()`, step, and clear the gradients. Record
`loss.item()`, a float: keeping the loss `Tensor` would keep its whole graph alive. `evaluate` runs in
eval mode under `no_grad()`. `fit` runs the epochs, keeps the history, and can save a checkpoint after
every epoch and resume from it. The lesson's result is the bar for task 5.4: a 1-32-1 ReLU network, SGD
with `lr=0.02`, batches of 32 over 256 points, 300 epochs, reaches a training MSE within 1.5 times the
noise floor (0.01).
""", """\
# Worked example (numpy only): the whole loop for a line y = w x + b, gradients by hand.
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, size=64)
y = 3 * x + 1 + rng.normal(0, 0.1, size=64)
w, b, lr = 0.0, 0.0, 0.1
for epoch in range(1, 31):
    for start in range(0, 64, 16):                 # batches of 16, in order
        xb, yb = x[start:start + 16], y[start:start + 16]
        error = w * xb + b - yb
        d_w, d_b = np.mean(2 * error * xb), np.mean(2 * error)   # d/dw and d/db of mean(error ** 2)
        w, b = w - lr * d_w, b - lr * d_b
    if epoch % 10 == 0:
        print(f"epoch {epoch}: w = {w:.3f}, b = {b:.3f}, MSE = {np.mean((w * x + b - y) ** 2):.4f}")
"""),
    "6": ("""\
## Part 6: the same loop in PyTorch

`fit_torch` is your loop again, written for `torch.nn` modules and `torch.optim` optimizers, on any
device: move the model once and every batch to the device. Task 6.2 runs it on a CUDA GPU where the
grading machine has one; it carries no points, and is reported as skipped elsewhere.
""", None),
}

OUTRO = """\
## When you are done

Save your `.py` files and this notebook, and submit the whole folder. Run every cell once more first
(Kernel, Restart & Run All): each task's visible check should say "passed".
"""


def task_heading(task_id: str, title: str, points: int) -> str:
    """The markdown line above a task's graded cell."""
    return f"### Task {task_id}: {title} ({points} point{'s' if points != 1 else ''})"
