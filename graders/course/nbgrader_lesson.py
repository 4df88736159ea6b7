"""The words of the nbgrader notebook: the lesson, and where its code cells come from.

The code cells are real Python, which ruff checks: the setup cell is cells/setup.py between its markers, each
part's worked example a function's body in cells/examples.py (numpy alone, never the student's files, so they
run the same on every submission). The setup cell defines what the visible checks (cells/visible.py) use;
students' kernels have no ``graders``, so it holds its messages as literals, taken from messages.VISIBLE_CHECK.
"""

from __future__ import annotations

from graders import messages as msg
from graders.course import cell_source
from graders.course.cells import examples, setup

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
under the cell. The points are in each cell's heading; {total} in all.

Use numpy and the standard library only (torch only in `torch_loop.py`), and keep everything float64.
`nn.py` and `make_sine_data` are given complete. Do not delete or edit the task cells: they are put back
as they were when your work is graded.

Run the setup cell first, and again whenever you like: every check reloads your files.
"""


def setup_cell() -> str:
    """The setup cell: cells/setup.py between its markers, its ``MESSAGES`` line written out as the value of
    messages.VISIBLE_CHECK (students' kernels have no ``graders`` to import it from)."""
    text = cell_source.marked_part(setup)
    line = "\nMESSAGES = VISIBLE_CHECK\n"
    if text.count(line) != 1:
        raise ValueError(f"got {text.count(line)} lines {line.strip()!r} in cells/setup.py's cell, expected 1")
    return text.replace(line, f"\nMESSAGES = {msg.VISIBLE_CHECK!r}\n")


SETUP = setup_cell()

# One part of the lesson per group of tasks: its words, and the function whose body is its worked example (or None).
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
""", examples.example_1),
    "2": ("""\
## Part 2: the backward pass

`loss.backward()` turns the recorded graph into gradients. It lists every node so that each comes after
all the nodes that use it (a reverse topological order), then walks that list: each node hands its
gradient to its backward rule and adds what comes back into its parents' gradients. A tensor used twice
gets both contributions. The totals land, added, in the `.grad` of the leaves that require grad.

The worked example orders a small graph, written as a dict, with the usual recursive depth-first search.
Task 2.4 asks for the same order without recursion: Python stops at about 1,000 nested calls, and a
network's graph can be far deeper.
""", examples.example_2),
    "3": ("""\
## Part 3: optimizers

An optimizer repeats three steps: `zero_grad()` clears the old gradients, `backward()` computes new
ones, `step()` moves each parameter against its gradient. SGD with momentum keeps a running buffer per
parameter; Adam keeps two running averages and a step count. Yours follow `torch.optim` exactly, update
`p.data` in place, and skip a parameter whose `grad` is `None`.
""", examples.example_3),
    "4": ("""\
## Part 4: mini-batches

A `DataLoader` cuts the data into batches: every epoch covers each example exactly once, in batches of
`batch_size` and a last, smaller batch (unless `drop_last`). With `shuffle=True` every epoch draws a
fresh permutation from the loader's own random generator, so a run can be repeated exactly.
""", examples.example_4),
    "5": ("""\
## Part 5: the training loop

One epoch: for each batch, compute the loss, call `backward()`, step, and clear the gradients. Record
`loss.item()`, a float: keeping the loss `Tensor` would keep its whole graph alive. `evaluate` runs in
eval mode under `no_grad()`. `fit` runs the epochs, keeps the history, and can save a checkpoint after
every epoch and resume from it. The lesson's result is the bar for task 5.4: a 1-32-1 ReLU network, SGD
with `lr=0.02`, batches of 32 over 256 points, 300 epochs, reaches a training MSE within 1.5 times the
noise floor (0.01).
""", examples.example_5),
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
