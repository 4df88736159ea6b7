"""What every task's message is made of, whatever the task: the ladder's lines (not attempted, raised, died, timed
out, a wrong kind, a wrong value and where the expected one came from, passed, partial credit), the engine's hints,
the classic mistakes the numbers show and ``diagnose``, which names them, the cost rungs' lines, the grader's own
failure, the oracles' refusals and the scorecard's total; and the helpers that fill a template (``header``,
``array_text``, ``and_list``, ``lines``). Read by graders/judge/checks/ and graders/judge/grade.py.
"""

from __future__ import annotations

import numpy as np

NOT_ATTEMPTED = "Task {task} not attempted yet: {what} ({file} still raises NotImplementedError)."
NOT_ATTEMPTED_IGNORED = ("Task {task} not attempted yet: {what} (your code in {file} runs, but ignores {ignored}: "
                         "it moves exactly as plain SGD does).")
NEEDS_OTHER_TASK = "Task {task} not attempted yet: it needs {what}, which still raises NotImplementedError."
MISSING_FILE = "Task {task}: {file} is missing from the submission."
NOT_REGULAR_FILE = ("Task {task}: {file} in the submission is {kind}, not a file, so it was not read; hand in the "
                    "file itself.")
RAISED = "Task {task} ({title}): {doing} raised {error}"
# Why a worker refuses an import (the student's ModuleNotFoundError says it: graders.isolation.worker_process.refused).
IMPORT_REFUSED_GRADERS = "a submission cannot import the graders or the reference"
IMPORT_REFUSED_AUTODIFF = ("only torch_loop.py may import torch or another "
                           "autodiff library (contract.md)")
RAISED_AT = "  at {where}"
DIED = "Task {task} ({title}): the student process died while {doing}."
LAST_WORDS = "  its last line on stderr: {line}"
GRADE_DEADLINE = ("Task {task} ({title}): the whole grade used its {seconds:g} s of CPU time before this task "
                  "finished, so it stopped here.\n"
                  "  hint: every answer came in time, but all of them together took too long: look for Python loops "
                  "over array elements where one numpy operation would do")
# Where a verdict rests on wall time: a worker that waited without computing (graders.isolation.worker_process).
GRADE_DEADLINE_IDLE = ("Task {task} ({title}): timed out without computing: the whole grade's processes waited "
                       "{seconds:g} s without using the CPU before this task finished, so it stopped here.")
TIMED_OUT = ("Task {task} ({title}): used {seconds:g} s of CPU time without answering while {doing}.\n"
             "  hint: an infinite loop, or work that grows exponentially with the graph")
TIMED_OUT_IDLE = ("Task {task} ({title}): timed out without computing: waited {seconds:g} s without using the CPU "
                  "while {doing}.")
HINT_NOT_COMPUTING = ("your code waits for something that does not come: time.sleep, input(), a read of a pipe or a "
                      "socket, a lock, or a process it started (a busy machine is not counted as waiting)")
WRONG_KIND = "Task {task} ({title}): {what} is {got}, expected {expected}."
WRONG_VALUE_HEAD = "Task {task} ({title}): wrong {what}"
EXPECTED_FROM = "  expected = {value}   ({source})"
YOURS = "  yours    = {value}"
LARGEST_ERROR = "  largest error {error:.3g} at index {index}, where {allowed:.2g} is allowed"
HINT = "  hint: {hint}"
RETURNED_NORMALLY = "Task {task} ({title}): {doing} returned normally; it must raise {exception}, as PyTorch does."
WRONG_EXCEPTION = "Task {task} ({title}): {doing} raised {got}: {message}; it must raise {exception}."
HINT_ENGINE_ERRORS = ("check requires_grad first (RuntimeError), then grad=None on more than one element "
                      "(RuntimeError), then a given grad's shape against the output's (ValueError)")
HINT_NO_GRAD = "keep the previous mode, switch recording off, and restore the previous mode in a finally block"
HINT_RECURSION = "find the topological order with an explicit stack, not recursion"
HINT_CHAIN_RULE = "walk the nodes in reverse topological order, and add the gradients of every use"
HINT_ACCUMULATE = ("add into .grad with a new array (grad = grad + g), never in place into an array a rule "
                   "returned: a rule may hand the same array to several parents")
HINT_SEED = "seed an implicit grad with ones; add into .grad (never assign) so calls accumulate"
HINT_GRAD_FORMS = ("take the grad given to backward() as PyTorch does, a Tensor, or anything numpy reads as an array "
                   "(a list, an int array): np.asarray(..., dtype=np.float64)")
HINT_GRAD_0D = ("a .grad is an ndarray of the leaf's shape, a 0-d array for a 0-d leaf: numpy arithmetic on 0-d "
                "arrays returns numpy scalars, so store each .grad as a new float64 array, np.array(..., "
                "dtype=np.float64) of g the first time and of the sum after (np.asarray(g) would keep the very array "
                "a rule returned)")
HINT_LEAF_ROOT = ("a leaf that requires grad is its own output: x.backward() gives x.grad = 1, as in PyTorch; "
                  "test requires_grad, not whether the tensor has parents")
HINT_GRAD_COPY = ("store a copy as a leaf's .grad (np.array(g, dtype=np.float64)), never the array itself: the "
                  "caller may change the array it gave, and one array may reach several leaves")
HINT_GRAD_FLOAT = ("store what reaches a leaf as a new float64 array (np.array(g, dtype=np.float64)): a rule may "
                   "return integers, and a .grad has the leaf's dtype, as in PyTorch")
HINT_SHARED_GRAPH = ("a second backward() through ops an earlier backward() walked must add the sum of both calls' "
                     "gradients into .grad (keep each node's _parents and _backward), or raise RuntimeError as "
                     "PyTorch does without retain_graph: never free the graph and silently stop at a walked node")
HINT_GRAD_DTYPE = ("convert a given grad to float64 before the walk (np.asarray(grad, dtype=np.float64)): numpy adds "
                   "and multiplies float16, float32 and bool arrays in their own dtype")
# Where an expected value came from (EXPECTED_FROM's source), and what the engine's tasks expect of a leaf.
SOURCE_TORCH = "torch.autograd, float64"
SOURCE_CPU = "CPU"
SOURCE_CPU_CUDA = "CPU and CUDA agree"
SOURCE_FINITE_DIFFERENCES = "finite differences agree"
ENGINE_SOURCE_GRAPH = "torch.autograd on the same graph"
ENGINE_SOURCE_BY_HAND = "the chain rule by hand"
ENGINE_SOURCE_RECORDED = "the chain rule on the recorded ops"
ENGINE_SOURCE_NUMPY = "numpy"
ENGINE_EXPECTED_NONE = "None (it does not require grad, or the output does not use it)"
ENGINE_EXPECTED_NONE_RECORDED = "None: nothing recorded reaches it, or it does not require grad"
ENGINE_EXPECTED_ARRAY = "an ndarray of shape {shape}: the output depends on it"
ENGINE_EXPECTED_PLAIN_LEAF = "a plain leaf: requires_grad=False, no parents"
ENGINE_EXPECTED_RECORDED = "recorded again (requires_grad=True, 2 parents)"
NOT_FINITE = "not finite (it holds nan or inf)"
SKIPPED_NO_CUDA = "Task {task} ({title}): skipped, no CUDA device on the grading machine (carries no points)."
PASSED = "Task {task} ({title}): passed."
RULE_RETURNS = "  the rule must return a tuple of {count}: {grads}"
NOT_GRADED_HERE = "  not graded: {what}"
PARTIAL_CREDIT = "  partial credit: {score:g} of {points} points, for {what}"
PARTIAL_CKPT_RESUME = "a run resumed from the checkpoint (2)"
PARTIAL_CKPT_ATOMIC = "a checkpoint kept whole by a save that died (1)"
PARTIAL_CKPT_EVERY_EPOCH = "a checkpoint of every epoch finished (1)"
PARTIAL_VALUES = "the right values on every input (the cost rung is worth {cost})"

# Classic mistakes, named when the numbers show them.
HINT_DOUBLED = ("yours is exactly twice the expected value: "
                "a gradient counted twice (assigned and then added, or not cleared)")
HINT_NEGATED = "yours is exactly the negative of the expected value: a sign is flipped"
HINT_TRANSPOSED = "yours is the expected value transposed: check which side of @ each factor goes, and .T"
HINT_SHAPE_OF_OUTPUT = ("yours has the output's shape {out}, the shape of g: the gradient for x has x's own shape "
                        "{shape}, so undo on g what the forward did to x's shape")
HINT_SHAPE_REVERSED = "yours has the expected shape's axes reversed: return each gradient in its input's own shape"
HINT_NOT_SUMMED = ("yours has the broadcast shape {got}: sum the gradient back down to {expected} "
                   "(for a bias, over the batch)")
HINT_ZERO = "yours is all zeros: the gradient never reached this input"


def array_text(value, limit: int = 90) -> str:
    """One line for an array: its values (summarised when long) and its shape."""
    value = np.asarray(value)
    body = np.array2string(value, precision=4, separator=", ", threshold=8, edgeitems=2, max_line_width=10**6,
                           suppress_small=False)
    body = " ".join(body.split())
    if len(body) > limit:
        body = body[: limit - 3] + "..."
    return f"{body}  shape {value.shape}" if value.ndim else body


def header(task, **fields) -> dict:
    """The fields every task's message starts with (its id and title), with ``fields``, for a template's format()."""
    return {"task": task.id, "title": task.title, **fields}


def and_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def lines(*parts: str) -> str:
    """The non-empty ``parts`` as one message, one per line: an absent hint or note leaves no blank line."""
    return "\n".join(p for p in parts if p)


def diagnose(yours: np.ndarray, expected: np.ndarray) -> str | None:
    """A hint when the numbers match a classic mistake, else None."""
    if yours.shape != expected.shape:
        if yours.shape == expected.T.shape:
            return HINT_SHAPE_REVERSED
        try:
            if np.broadcast_shapes(yours.shape, expected.shape) == yours.shape:
                return HINT_NOT_SUMMED.format(got=yours.shape, expected=expected.shape)
        except ValueError:
            pass
        return None
    if not np.any(expected):
        return None
    if np.allclose(yours, 2 * expected, rtol=1e-9, atol=0):
        return HINT_DOUBLED
    if np.allclose(yours, -expected, rtol=1e-9, atol=0):
        return HINT_NEGATED
    if expected.ndim == 2 and expected.shape[0] == expected.shape[1] and not np.allclose(expected, expected.T) \
            and np.allclose(yours, expected.T, rtol=1e-9, atol=0):
        return HINT_TRANSPOSED
    if not np.any(yours):
        return HINT_ZERO
    return None

COSTLY_TIMEOUT = ("Task {task} ({title}): {op} on inputs of shape {shapes} did not finish {repeat} calls: it was "
                  "stopped at 4 times its limit in CPU time, {limit:g} times {base} (at least {floor:g} s).\n"
                  "  hint: {hint}")
COSTLY = ("Task {task} ({title}): {op} on inputs of shape {shapes} gives the right values, but {repeat} calls took "
          "{spent:.3f} s of CPU time, {ratio:.0f} times {base} ({base_seconds:.4f} s for as many calls); at most "
          "{limit:g} times is allowed: right, but too slow.\n"
          "  measured: your process's CPU time read by the judge from the kernel; numpy's, by the judge in a process "
          "of its own\n"
          "  hint: {hint}")
COST_BASE_OP = "numpy's own {op} on the same inputs"
COST_BASE_SUM = "numpy's own sum of the same gradients"
HINT_UNBROADCAST_COST = ("sum with numpy over whole axes (arr.sum(axis=..., keepdims=...)), not with a Python loop "
                         "over the elements")
HINT_COST_FORMULA = ("write the rule with numpy operations over whole arrays: no Python loop over the elements, and no "
                     "finite differences or complex step per entry")
HINT_COST_MATMUL = ("write each gradient as one matrix product of whole arrays, not finite differences or a loop per "
                    "entry")
GRADER_ERROR = ("Task {task} ({title}): the grader itself failed ({error}). "
                "This is not your mistake: please tell your instructor.")
GRADER_ERROR_LOG = "autograd-lab: the grader itself failed on task {task}; please report this:\n{trace}"
# The oracles (graders.judge.oracles): refused or failed, the call is the asker's. A student reads an oracle as the
# given function: "the given train_epoch".
ORACLE_FAILED = "Task {task} ({title}): while {doing}, {failure}.\n  hint: {hint}"
ORACLE_TOO_LARGE = ("your {caller} asked the given {oracle} for {asked}; the checks' runs use at most {most}, and "
                    "the grader answers nothing larger")
ORACLE_NETWORK = "a {widths} network on {rows:,} rows"
ORACLE_DEEP = "{widths}-...-{last} ({layers:,} Linear layers)"
ORACLE_NETWORK_MOST = "{layers} Linear layers of {units} units, on {rows} rows"
ORACLE_GRADIENT = "a sum of a gradient of shape {shape} ({elements:,} elements)"
ORACLE_GRADIENT_MOST = "{elements:,} elements in {dims} axes"
ORACLE_TOO_MANY = ("your fit called the given train_epoch and evaluate more than {calls} times in one run; the "
                   "checks' runs take at most {epochs} epochs, one train_epoch and one evaluate each")
ORACLE_MALFORMED = "your {caller} gave the given {oracle} {what}, which the checks' runs never do"
ORACLE_BAD_ARGUMENTS = "arguments it does not take"
ORACLE_BAD_MODEL = "a model that is not Linear layers' finite float64 weights (in, out) and biases (out,)"
ORACLE_BAD_BATCHES = "batches that are not pairs (xb, yb) of finite float64 rows of the model's sizes"
ORACLE_BAD_OPTION = "a {name} of {value}"
ORACLE_BAD_STATE = "an optimizer state that is not a momentum buffer per parameter"
ORACLE_BAD_SHAPE = "a gradient of shape {grad} to sum down to shape {shape}, which it cannot be summed to"
ORACLE_TIMED_OUT = ("the given {oracle} your {caller} asked for did not finish within the judge's backstop for one "
                    "answer")
ORACLE_OUT_OF_MEMORY = "the given {oracle} your {caller} asked for ran out of its memory ({limit})"
ORACLE_STOPPED = "the given {oracle} your {caller} asked for stopped before answering ({why})"
ORACLE_HINT_FIT = ("fit trains the model, loader and optimizer it is given: one train_epoch(model, train_loader, "
                   "optimizer, loss_fn, ...) per epoch, and evaluate(model, val_loader, loss_fn) after it when there "
                   "is a val_loader")
ORACLE_HINT_RULE = "call unbroadcast(g, x.shape): the gradient of the output, and the shape of the input it is for"

TOTAL = "total {score:g}/{max_score:g} ({examples:,} Hypothesis examples{timing})"
