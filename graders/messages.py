"""Every sentence a student or instructor reads from the graders, in one place.

A failure message is the whole report: the task and op, the inputs, theirs,
the expected value and where it came from, the tolerance, one hint line.
At most about a dozen lines, in the student's terms, never grader source.
Tests import these templates and pin the rendered text.

Hints, where an expected value came from, the tables of known mistakes and
what the commands print are all here, grouped by task; tests/test_structure.py
fails on a sentence printed, logged or passed as a hint or a source anywhere
else. What stays beside its code: the names a check gives what it probes (a
message's ``what`` and ``doing``, "x.grad after step 2"), the command line's
--help (argparse's, with each option), graders/entry.py's refusal (it runs
before numpy, which this module imports) and the worker's own errors (it
imports nothing of graders).
"""

from __future__ import annotations

import numpy as np

NOT_ATTEMPTED = "Task {task} not attempted yet: {what} ({file} still raises NotImplementedError)."
NOT_ATTEMPTED_IGNORED = ("Task {task} not attempted yet: {what} (your code in {file} runs, but ignores {ignored}: "
                         "it moves exactly as plain SGD does).")
NEEDS_OTHER_TASK = "Task {task} not attempted yet: it needs {what}, which still raises NotImplementedError."
MISSING_FILE = "Task {task}: {file} is missing from the submission."
# A path that holds nothing to grade (graders.submission.layout.student_files): the command says it, and grades nothing.
SUBMISSION_MISSING = "{submission}: no such folder"
SUBMISSION_NOT_A_FOLDER = "{submission}: not a folder (expected a folder laid out like exercises/)"
SUBMISSION_NO_MODULE = "{submission}: holds none of {files}; expected a folder laid out like exercises/"
SUBMISSION_TOO_LARGE = "{submission}: its .py files hold {size} bytes, more than {most}"
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
# ----- the oracles (graders.judge.oracles): refused or failed, the call is the asker's -----
# A student reads an oracle as the given function: "the given train_epoch".
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

# ----- Task 1.1 and the op tasks: the backward rules (graders/judge/checks/ops.py), one hint per op form of the
# op registry (graders/ops.py) -----
# A hint names what to think about, never the formula.
OP_UPSTREAM = "  g = {value}   (the upstream gradient)"
OP_CONSTANT = "  constant {value!r}"
OP_RETURNS_ONE = "dL/d{name} of shape {shape}"
HINT_ADD = ("how much out moves when x (or y) moves, times g; each summed back to its input's shape "
            "(unbroadcast)")
HINT_SUB = HINT_ADD  # the same sum rule, the sign aside
HINT_ADD_CONSTANT = "a constant gets no gradient: one gradient, for the Tensor"
HINT_SUB_CONSTANT = "a constant gets no gradient; mind the sign y enters out with"
HINT_NEG = "mind the sign x enters out with"
HINT_MUL = ("the derivative of a product by one factor involves the other factor; each summed back to its input's "
            "shape")
HINT_MUL_CONSTANT = "the derivative of x * c by x, for a constant c, times g"
HINT_DIV = "differentiate x * (1 / y) by each of x and y; each summed back to its input's shape"
HINT_DIV_CONSTANT = "differentiate c * (1 / y) by y, for a constant c"
HINT_MATMUL = ("write one entry of out as a sum over the shared axis and differentiate; the gradients' shapes leave "
               "one way to combine g with the other matrix")
HINT_POW = "the power rule of calculus, times g"
HINT_EXP = "exp is its own derivative, and the forward's out is at hand"
HINT_LOG = "the derivative of log, times g"
HINT_RELU = "relu's slope is 1 where x > 0 and 0 elsewhere"
HINT_RELU_AT_ZERO = "PyTorch takes relu's slope at exactly 0 as 0"
HINT_RELU_MASK = ("relu's gradient is g where x > 0 and 0 where x <= 0: it masks g by the input's sign (here it is "
                  "wrong at a negative x too, not only at 0)")
HINT_TANH = "tanh's derivative is simplest written with its output out"
HINT_SIGMOID = "sigmoid's derivative is simplest written with its output out"
HINT_SUM = "every element gets the g of the sum it went into: put the summed axes back, then broadcast"
HINT_MEAN = "like sum's rule, divided by the number of elements averaged together"
HINT_SQUARE_MEAN = ("a mean of squares: the square's derivative, and the mean's division by the number of "
                    "elements")
HINT_RESHAPE = "reshape only moves entries: nothing is scaled, only the shape goes back"
HINT_T = "a transpose only moves entries: reverse the axes back"
# Mistakes a rule's numbers show (ops.MISTAKES computes the gradient each one gives): the mistake, named.
HINT_SIGMOID_EXTREMES = ("use the forward's out: sigmoid's slope is out * (1 - out), finite for every x, where a "
                         "formula in exp(-x) overflows to inf / inf = nan for large negative x")
RULE_WROTE_INTO_G = ("Task {task} ({title}): the backward rule of {op} changed g, the upstream gradient it was "
                     "given, in place")
HINT_RULE_WROTE_INTO_G = ("compute new arrays (g * mask, g * out) and never write into g (g[...] = ..., g *= ...): "
                          "an engine may hand the same g to several rules, and each must see it as it was")
RAISED_KEY_ID = "{error} on a key that is an id() (an object's memory address: the object was never stored)"
HINT_ENGINE_KEY_ERROR = ("a node's gradient was looked up before any was stored for it: walk the nodes in reverse "
                         "topological order (the output first, each node only after every node that uses it)")
# The hint of an exception that names its mistake: (task id prefix, exception class) -> hint.
HINT_AXIS_FORMS = ("axis may be None, an int (negative too) or a tuple of ints, as in numpy and torch: count what "
                   "was reduced as x.size // out.size, and let the given _keep_reduced_axes put the axes back, rather "
                   "than indexing shape[axis]")
HINTS_FOR_RAISED = {("2.", "KeyError"): HINT_ENGINE_KEY_ERROR, ("1.7", "TypeError"): HINT_AXIS_FORMS}
HINT_OP_MISTAKES = {
    "forgets_g": ("the local derivative alone: the chain rule multiplies it by g, the gradient arriving from the "
                  "output"),
    "mul_x_by_itself": ("the gradient for x was multiplied by x itself; a product's derivative by one factor "
                        "involves the other factor"),
    "mul_y_by_itself": ("the gradient for y was multiplied by y itself; a product's derivative by one factor "
                        "involves the other factor"),
    "div_no_numerator": "that is the derivative of 1 / y alone: the numerator x is missing",
    "pow_not_lowered": "the power was not lowered by one",
    "exp_unchanged": "g passed on unchanged: exp's own derivative is never multiplied in",
    "log_multiplied": "multiplied by x, where log's derivative divides by it",
    "relu_at_zero": "the gradient passes at exactly x = 0, where PyTorch's slope is 0",
    "tanh_of_input": "the input x was used where the rule needs tanh's output out",
    "tanh_not_squared": "the output appears, but not squared",
    "sigmoid_of_input": "the input x was used where the rule needs sigmoid's output out",
    "sigmoid_half": "half the derivative: a factor with (1 - out) is missing",
    "square_mean_not_divided": "not divided by the number of elements averaged",
    "square_mean_no_two": "the square's factor 2 is missing",
}
UNBROADCAST_INPUT = "  grad = {value}"
UNBROADCAST_SOURCE = "the gradient summed over the broadcast axes"
HINT_UNBROADCAST = "sum away the extra leading axes, then sum (keepdims) every axis where the target has size 1"

# ----- Tasks 3 and 4: the optimizers and the DataLoader -----
ANSWER_INCOMPLETE = ("Task {task} ({title}): the answer about {doing} came back incomplete or malformed; "
                     "has the submission changed the grader's own code in its process?")
OPTIM_IGNORED_WHAT = "momentum and weight decay"
OPTIM_IGNORED_OPTIONS = "momentum and weight_decay"
OPTIM_DOING = "running {call} for {steps} step(s){extra}"
OPTIM_DOING_SKIPS = ", some parameters' grad being None"
OPTIM_DOING_RESUME = ", loading its state dict into a new optimizer after step {step}"
OPTIM_DOING_ZERO = ", then zero_grad()"
OPTIM_CALL = "  opt = {call}, over parameters p0, p1, ...; each step sets every p.grad, then calls opt.step()"
OPTIM_START = "  p{index} at the start = {value}"
OPTIM_GRAD = "  p{index}.grad at step {step} = {value}"
OPTIM_GRAD_NONE = "  p{index}.grad at step {step} = None, so step {step} must leave p{index} alone"
OPTIM_RESUMED = ("  after step {step}: state_dict() -> np.savez -> np.load(allow_pickle=False) -> "
                 "load_state_dict() of a new {kind} over the same parameters")
OPTIM_WHAT = "p{index} after step {step}"
OPTIM_DATA = "p{index}.data after step {step}"
OPTIM_SOURCE = "torch.optim.{kind}, float64, fed the same gradients"
OPTIM_NOT_IN_PLACE = ("Task {task} ({title}): after step {step} of {call}, the array p{index}.data started as "
                      "does not hold the step's values, so p{index}.data is a new array: expected the same array, "
                      "updated in place.\n"
                      "  hint: p.data -= lr * d updates the array in place; p.data = p.data - lr * d makes a new "
                      "one, and whoever holds the old array never sees the step")
OPTIM_GRAD_NOT_NONE = ("Task {task} ({title}): after zero_grad(), p{index}.grad is {got}, expected None.\n"
                       "  hint: zero_grad() sets every parameter's grad to None (PyTorch's default), not to zeros")
OPTIM_ZEROS = "an array of zeros"
OPTIM_STATE_UNSAVED = ("Task {task} ({title}): the state dict of {call} after {step} step(s) did not survive "
                       "np.savez and np.load(allow_pickle=False): {error}")
OPTIM_STATE_TYPE = "  state_dict() returned a {type}, expected a dict of arrays and numbers"
OPTIM_STATE_ENTRIES = "  entries that are neither arrays nor numbers: {entries}"
HINT_OPTIM_STATE = ("state_dict() must hold only arrays and numbers (checkpoints are saved without pickle): "
                    "leave out what is None, and store one array per parameter under its own key")
OPTIM_KEYS_WHAT = "the state dict of {call} after {step} step(s)"
OPTIM_KEYS_GOT = "keyed {keys}"
OPTIM_KEYS_SGD = "keyed momentum_buffer.<index of the parameter> for each parameter stepped, here {keys}"
OPTIM_KEYS_ANY = "keyed '<name>.<index of the parameter>', the index from 0 to {n} - 1"
HINT_OPTIM_KEYS = ('key self.state "<name>.<index of the parameter>", as optim.py says (SGD: '
                   'self.state[f"momentum_buffer.{i}"]), so a checkpoint reads the same in any optimizer of its kind')
HINT_SKIP_NONE = "skip every parameter whose grad is None: if p.grad is None: continue"
OPTIM_GRAD_AFTER = "p{index}.grad after step {step}"
OPTIM_GRAD_KEPT = "the p.grad it was given: torch.optim's step() never changes it"
OPTIM_GRAD_KEPT_NONE = "None, as it was given"
HINT_STEP_KEEPS_GRAD = ("step() must not change p.grad: d = p.grad + weight_decay * p.data makes a new array, where "
                        "p.grad += weight_decay * p.data writes into the gradient the caller holds")
OPTIM_BUFFER_WHAT = "state_dict()['momentum_buffer.{index}'] after step {step}"
OPTIM_BUFFER_SOURCE = "torch.optim.SGD's state[p]['momentum_buffer'], fed the same gradients"
HINT_SGD_BUFFER = ("the momentum buffer is torch's, buf = momentum * buf + d, and the step p -= lr * buf; keeping lr "
                   "inside it (buf = momentum * buf + lr * d, p -= buf: the Sutskever form) steps the same at a fixed "
                   "lr but saves a buffer lr times torch's")

HINT_SGD = "p.data -= lr * p.grad for every parameter p whose grad is not None"
HINT_SGD_MOMENTUM = ("d = grad + weight_decay * p; with momentum, buf = d on the first step, then "
                     "buf = momentum * buf + d, and d = buf; finally p.data -= lr * d")
HINT_ADAM = ("g = grad + weight_decay * p; m = b1 * m + (1 - b1) * g; v = b2 * v + (1 - b2) * g**2; "
             "p -= lr * (m / (1 - b1**t)) / (sqrt(v / (1 - b2**t)) + eps), with t counted per parameter")
# Classic optimizer mistakes, named when the whole trajectory matches one (graders/judge/checks/optim.py simulates
# each).
HINT_OPTIM_MISTAKES = {
    "ascent": "yours moves p along the gradient: subtract the step (p.data -= ...), do not add it",
    "none_not_skipped": ("yours updates a parameter whose grad is None as if the grad were zero: skip it "
                         "entirely (no weight decay, no momentum, no step count)"),
    "ema": ("yours averages the buffer (buf = momentum * buf + (1 - momentum) * d): torch's is "
            "buf = momentum * buf + d, and the first buffer is d itself"),
    "ema_from_d": ("yours averages the buffer (buf = momentum * buf + (1 - momentum) * d): torch's is "
                   "buf = momentum * buf + d, with no (1 - momentum)"),
    "momentum_ignored": "yours ignores the momentum buffer: step with p.data -= lr * buf, buf = momentum * buf + d",
    "decay_after": ("yours adds weight decay after the momentum buffer: it goes into d first, "
                    "d = grad + weight_decay * p, then buf = momentum * buf + d"),
    "decay_ignored": "yours ignores weight decay: add weight_decay * p to the gradient first",
    "aliased": ("your momentum buffer changed when p.grad was overwritten in place: store a copy on the first "
                "step, buf = d.copy(), as torch does"),
    "fresh": ("the optimizer that loaded the state dict stepped like a new one: state_dict() must hold the state "
              "(SGD's momentum buffers; Adam's m, v and step counts) and load_state_dict() must restore it"),
    "no_bias_correction": "yours leaves out the bias correction: m_hat = m / (1 - b1**t), v_hat = v / (1 - b2**t)",
    "shared_step": ("yours counts steps for the whole optimizer: t is per parameter, and advances only for a "
                    "parameter that has a grad"),
    "eps_inside": "yours puts eps inside the square root: the step is lr * m_hat / (sqrt(v_hat) + eps)",
    "decoupled_decay": ("yours decays p directly (AdamW's decoupled decay): Adam adds weight_decay * p to the "
                        "gradient before m and v"),
}

LOADER_DOING = "iterating over {setup} for {epochs} epoch(s)"
LOADER_DOING_LEN = ", then calling len() on it"
LOADER_SETUP = "DataLoader(X, Y, batch_size={batch_size}, shuffle={shuffle}, drop_last={drop_last})"
LOADER_DATA = "  loader = {setup} with n = {n}; X[i, 0] = i, so each row shows its example number"
LOADER_NOT_PAIR = "Task {task} ({title}): batch {batch} of epoch {epoch} is a {type}, expected a pair (xb, yb)."
LOADER_TOO_MANY = "Task {task} ({title}): epoch {epoch} did not end after {limit}, expected {expected}."
LOADER_COUNT = ("Task {task} ({title}): epoch {epoch} yielded {got} batch(es) of sizes {sizes}, expected "
                "{expected} of sizes {expected_sizes}.")
LOADER_SIZES = "Task {task} ({title}): the batch sizes of epoch {epoch} are {got}, expected {expected}."
LOADER_LENGTH = ("Task {task} ({title}): len(loader) is {got}, expected {expected}, the number of batches one "
                 "epoch yields.")
LOADER_ROW = "Task {task} ({title}): row {row} of xb in batch {batch} of epoch {epoch} is {got}, not a row of X."
LOADER_UNPAIRED = ("Task {task} ({title}): X and Y no longer line up: in batch {batch} of epoch {epoch}, row {row} "
                   "of xb is example {x}, but row {row} of yb is {y}.")
LOADER_ROUNDED = ("Task {task} ({title}): {name} of batch {batch} of epoch {epoch} holds the data rounded to {dtype}: "
                  "{got} where the data has {want}.")
LOADER_DATA_CHANGED = ("Task {task} ({title}): after {doing}, the X and Y the loaders were given had changed: the "
                       "loader reordered or rewrote its caller's arrays in place.")
LOADER_Y_ROW = "Y's row of example {y}"
LOADER_Y_STRAY = "{got}, not a row of Y"
LOADER_REPEATED = ("Task {task} ({title}): epoch {epoch} did not visit each example once: example(s) {repeated} "
                   "came more than once{missing}.")
LOADER_MISSING = "Task {task} ({title}): epoch {epoch} never visited example(s) {missing}."
LOADER_AND_MISSING = ", and {missing} never"
LOADER_ORDER = ("Task {task} ({title}): with shuffle=False the examples came in the order {got}, expected the "
                "data's order {expected}.")
LOADER_WHOLE_BATCHES = ("Task {task} ({title}): with shuffle=True, in each of {epochs} epochs every batch held one "
                        "batch of the data's order, whole ({batches}): the batches were shuffled, not the examples.")
HINT_LOADER_EXAMPLES = ("shuffle the examples, not the batches: cut consecutive batches out of order = "
                        "self.rng.permutation(n), so that a batch mixes examples from all over the data")
LOADER_NOT_SHUFFLED = "Task {task} ({title}): with shuffle=True, epoch {epoch} came in the data's order {order}."
LOADER_SAME_EPOCHS = "Task {task} ({title}): with shuffle=True, epochs {a} and {b} came in the same order {order}."
LOADER_NOT_REPRODUCIBLE = ("Task {task} ({title}): two loaders given np.random.default_rng({seed}) yielded "
                           "different orders in epoch {epoch}:\n  first  {a}\n  second {b}")
HINT_LOADER_RNG = ("draw the permutation from the loader's own generator, self.rng.permutation(n), not from "
                   "np.random's global functions or a new generator")
LOADER_IGNORES_RNG = ("Task {task} ({title}): loaders given np.random.default_rng({a}) and "
                      "np.random.default_rng({b}) yielded the same order {order}.")
HINT_LOADER_TOO_MANY = "stop once every example has been yielded: an epoch is one pass over the data"
HINT_LOADER_SHUFFLE = "draw a permutation from self.rng at every iter(): order = self.rng.permutation(n)"
HINT_LOADER_FRESH = "draw a fresh permutation at every iter(), not once in __init__"
HINT_LOADER_SLICES = "consecutive slices of the index order: order[start:start + batch_size]"
HINT_LOADER_DROP_LAST = "with drop_last=True the last, smaller batch is left out: n // batch_size batches"
HINT_LOADER_KEEP_LAST = ("without drop_last the last, smaller batch comes too (here of size {rest}): "
                         "ceil(n / batch_size) batches")
HINT_LOADER_LENGTH = "ceil(n / batch_size) batches, or n // batch_size with drop_last"
HINT_LOADER_ROWS = "index whole rows, X[idx] with idx an array of example numbers"
HINT_LOADER_PAIRS = "index X and Y with the same idx: (X[idx], Y[idx])"
HINT_LOADER_COVERAGE = "each epoch is one pass over an index order: every example exactly once"
HINT_LOADER_ORDER = "with shuffle=False the index order is 0, 1, ..., n - 1"
HINT_LOADER_PRECISION = ("keep the data's float64: Tensor(X[idx]) as it is, with no astype(np.float32) on the way "
                         "(torch's DataLoader returns the data's own dtype)")
HINT_LOADER_KEEP_DATA = ("leave X and Y as they are: shuffle an index order, order = self.rng.permutation(n), and "
                         "index with it, X[idx], which copies (self.rng.shuffle(self.X) reorders the caller's array)")
HINT_LOADER_NO_GRAD = "data needs no gradient: Tensor(X[idx]), without requires_grad=True"

# ----- Tasks 5 and 6: the training loop -----
LOOP_MODE = "Task {task} ({title}): {where}, {subject} was {got}, expected {expected}.\n  hint: {hint}"
HINT_STEPS = "the optimizer stepped {got} time(s) over {batches} batches{grouping}, expected {expected}: {hint}"
LOOP_SETUP_PROBE = ("  the model ends in a layer that adds 1 to the network's output in training mode and 2 while "
                    "grad mode is on (its forward differs between the modes, as dropout's does), so the numbers show "
                    "the modes it ran in")
HINT_MODES_SEEN = "the {what} are those of forwards run {modes} (the model's output shifts with its modes): {hint}"
MODES_EVAL_GRAD = "in eval mode with grad mode on"
MODES_TRAINING_NO_GRAD = "in training mode under no_grad"
MODES_TRAINING_GRAD = "in training mode with grad mode on"
EVAL_AFTER_WHAT = "output of the model on x after evaluate"
EVAL_AFTER_SETUP = "  then the model's output on x = {x}"
EVAL_AFTER_SOURCE = ("the network's output plus 1 in training mode and 2 with grad mode on: the modes the model was "
                     "in before evaluate")
LOOP_SETUP_MODEL = "  model {model}, {n} examples in batches of {batch_size} ({batches} batches, {order})"
LOOP_SETUP_OPTIM = "  {optimizer}, {loss}{options}"
LOSS_MSE = "MSELoss()"
# A loss whose value depends on which argument is the target, so a call loss_fn(target, prediction) shows. This
# line is its one definition: the judge computes it in graders/judge/checks/trajectory.weighted_loss and the
# worker in graders/worker/verbs_loop.weighted_loss (the two share no code), and tests/test_checks_loop.py holds
# both to the formula written here.
LOSS_WEIGHTED = "loss_fn(prediction, target) = mean((1 + target**2) * (prediction - target)**2)"
HINT_LOSS_ARGS = ("call loss_fn(prediction, target), the prediction first, as torch.nn.MSELoss()(input, target): "
                  "these numbers are those of loss_fn(target, prediction)")
LOOP_SETUP_START = "  before the epoch: the model in {mode} mode, and stale grads (all {stale:g}) on every parameter"
LOOP_SETUP_FIT = "  {epochs} epochs{val}"
LOOP_SETUP_VAL = ", a val_loader over {n} other examples"
LOOP_REFERENCE = "the reference {function} over the same weights and batches"
LOOP_WEIGHTS_BEFORE = "the weights before evaluate"
LOOP_OWN_RUN = ("your own uninterrupted fit over the same batches; it differs from the reference fit, "
                "which task 5.4 reports")
LOOP_FLOAT = "a Python float ({how})"
LOOP_FLOAT_HOW = "read the loss with .item()"
LOOP_FLOATS = "a list of floats, one per epoch"
LOOP_PER_EPOCH = "{count} (one per epoch)"
LOOP_NO_VAL = "none (there is no val_loader)"
LOOP_HISTORY = 'a dict {"train_loss": [...], "val_loss": [...]}'
# Loss Tensors kept alive (5.1, 6.x): seen in the worker's memory, which the judge reads from the kernel.
HINT_LOSSES_KEPT = ("add loss.item() (a Python float) to the list or the running total, never the loss Tensor: a "
                    "Tensor keeps its whole graph alive")
LOSSES_KEPT = ("Task {task} ({title}): {function} kept the loss Tensors alive, and with each one its batch's graph: "
               "over {batches} batches the worker's memory rose by {grown:.0f} MiB, where a loop that lets each loss "
               "go rises by about {released} MiB (at most {bound} MiB allowed).\n"
               "  the judge's loss hung {ballast} MiB on each batch's graph, as a wide network's activations would "
               "weigh, and read the worker's memory from the kernel\n"
               "  hint: " + HINT_LOSSES_KEPT)
LOSSES_KEPT_DOING = "running {function} over {batches} batches, each loss's graph holding {ballast} MiB"
MEMORY_NOT_READ = ("whether {function} lets each batch's loss Tensor go: this judge cannot read the worker's peak "
                   "memory here (/proc/<pid>/clear_refs)")

HINT_TRAIN_MODE = "call model.train() at the start of train_epoch: the model may arrive in eval mode"
HINT_STEP_PER_BATCH = "call optimizer.step() once per batch, inside the loop over the batches, not once per epoch"
HINT_STEP_PER_GROUP = ("step once every {k} batches, and once more after the last batch when a smaller group "
                       "is left over")
HINT_NO_ZERO_GRAD = ("the weights match a run that never clears gradients, so each batch's gradient adds to the "
                     "last ones: call optimizer.zero_grad() before each backward")
HINT_STALE_GRAD = ("the weights match a run that keeps the gradients left on the parameters before the epoch: "
                   "clear them before the first backward (optimizer.zero_grad() before the loop)")
HINT_NOT_DIVIDED = ("the weights match a run whose micro-batch losses are not divided by accumulate: "
                    "call (loss / accumulate).backward(), so a group's gradient is the mean over its batches")
HINT_BACKWARD_TWICE = ("the weights match a run whose every gradient counts twice: a second backward() per batch "
                       "adds it again; call (loss / accumulate).backward() once per batch")
HINT_NOT_CLIPPED = ("the weights match a run without clipping: with clip_norm set, call "
                    "clip_grad_norm(model.parameters(), clip_norm) after the backward passes and before each step")
HINT_FIT_OPTIONS = ("the losses match a fit whose train_epoch never got {options}: pass fit's options on, "
                    "train_epoch(model, train_loader, optimizer, loss_fn, {call})")
HINT_LOSS_DIVIDED = "yours is the expected value divided by accumulate: record loss.item() before the division"
HINT_LOSS_BY_EXAMPLES = ("yours is the mean over the examples, each batch's loss weighted by its size: {function} "
                         "returns the mean of the batch losses, sum(losses) / len(losses), whatever their sizes")
HINT_MEAN_LOSS = "return the mean of the per-batch losses, each as loss_fn computed it (read with .item())"

HINT_EVAL_MODE = "call model.eval() before the loop over the batches"
HINT_EVAL_NO_GRAD = "run the loop inside `with no_grad():`, so no graph is recorded"
HINT_RESTORE_MODE = ("note was_training = model.training first and call model.train(was_training) at the end "
                     "(in a finally block, so an error restores it too)")
HINT_RESTORE_ON_ERROR = ("the model was left in eval mode when the loader raised: restore the mode in a finally "
                         "block (try: ... finally: model.train(was_training)), so an error restores it too")
EVAL_INTERRUPTED_DOING = "running evaluate on a model in training mode whose loader raises at batch {at}"
EVAL_INTERRUPTED_SETUP = ("  the model starts in training mode, where its forward adds 1 to the network's output "
                          "(its modes differ, as with dropout); the loader raises at batch {at} of {batches}; then "
                          "the model's output on x = {x}")
EVAL_INTERRUPTED_SOURCE = "the network's output + 1: training mode, as before evaluate; computed by the grader"
HINT_GRAD_MODE_BACK = "use `with no_grad():`, which turns grad mode back on when the block ends"

CLIP_REPLACED = ("Task {task} ({title}): clip_grad_norm gave parameter {index} a new grad array, expected its own "
                 "array scaled in place.\n"
                 "  hint: multiply in place (g *= scale), as torch.nn.utils.clip_grad_norm_ does")
CLIP_INPUTS = "  grads {grads}, max_norm={max_norm!r}"
CLIP_SOURCE = "torch.nn.utils.clip_grad_norm_, float64"
CLIP_SKIPPED = "None (a parameter without a grad is skipped)"
HINT_CLIP = "total = sqrt(sum of every squared grad entry); each grad *= min(1, max_norm / (total + 1e-6))"
HINT_CLIP_EPSILON = ("yours is scaled by max_norm / total: torch adds 1e-6, "
                     "scale = min(1, max_norm / (total + 1e-6))")
HINT_CLIP_ALWAYS = ("yours is scaled although the norm is within max_norm: the scale is "
                    "min(1, max_norm / (total + 1e-6)), so a short gradient is left alone")
HINT_CLIP_AFTER = "yours is the norm after clipping: return the total norm from before the scaling"

FIT_E2E_MISSING = ("Task {task} ({title}): the end-to-end rung trains the lesson's network on your whole stack "
                   "(tensor.py, optim.py, data.py and train.py), and {file} is missing from the submission.")
FIT_E2E_DOING = "training the lesson's network on your whole stack ({setup})"
FIT_E2E_WHOLE_STACK = ("this run uses every file of yours, so a mistake in an earlier task can surface here: "
                       "fix the failing tasks above first")
FIT_E2E_SETUP = "1-32-1 ReLU, SGD lr={lr:g}, shuffled batches of {batch_size}, {epochs} epochs, {data}"
E2E_LESSON_DATA = "the lesson's data"
E2E_KEY_DATA = "256 points of ±sin(2x) + an offset + noise, drawn from the grading key"
FIT_E2E_ABOVE_BAR = ("Task {task} ({title}): after the lesson's run on your whole stack ({setup}), the training MSE "
                     "of your final weights is {mse:.4f}, expected below {bar:g} (1.5 x the noise floor "
                     "{floor:g}; the lesson's engine reaches 0.0127).\n"
                     "  the grader computed this MSE from the weights your run returned, on the run's "
                     "{n} points\n"
                     "  hint: where fit itself passed (the rungs above), look at your engine, optimizer, "
                     "DataLoader and train_epoch (tasks 1-4 and 5.1 grade each one)")

FIT_E2E_REPLAY = ("the judge's replay of the same run: torch, float64, from the same initial weights (drawn "
                  "from default_rng({seed}) as nn.Linear draws them), SGD lr={lr:g} over the batches your DataLoader "
                  "yielded, epoch by epoch")
FIT_E2E_REPLAY_INPUTS = ("  the lesson's run ({setup}); the judge noted which of the {n} points each of your "
                         "DataLoader's batches held, and replayed the run over them")
HINT_FIT_E2E_REPLAY = ("a correct stack reproduces the replay to about 1e-15; weights that reach the noise floor "
                       "another way (another run, or a shortcut) are not the lesson's run. Where fit itself passed "
                       "(the rungs above), look at your engine, optimizer and train_epoch (tasks 1-3 and 5.1 grade "
                       "each one)")
HINT_FIT_E2E_TWICE = ("the weights match the replay with every batch's gradient counted twice (SGD at twice the "
                      "rate): a second backward() per batch, in train_epoch (5.1) or fit, adds each gradient again; "
                      "call (loss / accumulate).backward() once per batch")
FIT_E2E_PASSES = ("Task {task} ({title}): during the lesson's run ({setup}), fit iterated the DataLoader {got} "
                  "time(s), expected {epochs}: one pass per epoch.")
FIT_E2E_EPOCH = ("Task {task} ({title}): during the lesson's run ({setup}), pass {index} over your DataLoader {got}; "
                 "expected each of the {n} points exactly once, in batches of {batch_size}{last}.\n"
                 "  hint: the judge replays the run over the batches your DataLoader yields, so they must be the "
                 "lesson's: look at your DataLoader (tasks 4.1 and 4.2 grade it)")
FIT_E2E_EPOCH_UNKNOWN = "held an x that is not one of the run's points"
FIT_E2E_EPOCH_SIZES = "came in batches of {sizes}"
FIT_E2E_EPOCH_COVER = "held {distinct} distinct points in {rows} rows"
FIT_E2E_EPOCH_LAST = " (the last one smaller)"

CKPT_NOT_AT_PATH = ("Task {task} ({title}): after fit(..., checkpoint={path!r}) there is no file at {path!r}; "
                    "{found}.\n  hint: {hint}")
CKPT_FOUND = "the folder holds {names}"
CKPT_TOO_LARGE = ("an archive of {members} members, {size} bytes unpacked (the checker reads at most {most}, "
                  "{most_bytes} bytes)")
CKPT_SINGLE_ARRAY = "the file holds a single array, not an npz archive of the state dicts"
CKPT_NOTHING = "nor any file whose name starts with it"
HINT_CKPT_NPZ = ("np.savez(path, ...) appends '.npz' to a name that lacks it: save through an open file "
                 "(with open(path, 'wb') as f: np.savez(f, ...))")
HINT_CKPT_SAVE = ("after every epoch, save the model's and the optimizer's state, the epoch count and the "
                  "history to exactly that path with np.savez")
CKPT_UNREADABLE = ("Task {task} ({title}): np.load({path!r}, allow_pickle=False) could not read the checkpoint: "
                   "{error}\n"
                   "  hint: save plain arrays and numbers with np.savez; a dict or object needs pickle, which the "
                   "loader refuses")
CKPT_SCENARIO = ("  {first} epochs with checkpoint={path!r}, then a new model (other weights) and optimizer "
                 "resumed with fit(..., epochs={epochs}, checkpoint={path!r})")
HINT_CKPT_IGNORED = ("the resumed run matches a fresh run that ignored the checkpoint: when the file exists at "
                     "the start, load the model, the optimizer, the epoch count and the history from it")
HINT_CKPT_MODEL = ("the resumed run went on from the new model's own weights: load the checkpoint's model.* arrays "
                   "into the model (model.load_state_dict, with the prefix taken off)")
HINT_CKPT_OPTIMIZER = ("the resumed run matches one whose optimizer started afresh: save optimizer.state_dict() "
                       "and load it into the new optimizer, so the momentum buffers carry on")
HINT_CKPT_EPOCHS = ("epochs is the total number of epochs: after loading, run only those the checkpoint has not "
                    "done (this run did all {epochs} again)")
CKPT_HALF_WRITTEN = ("Task {task} ({title}): a save that died midway (the run stopped while _save_checkpoint "
                     "wrote over the checkpoint of {path!r}) {what}\n"
                     "  hint: write to a temporary file, then os.replace it onto the path, so the old checkpoint "
                     "stays whole until the new one is complete")
CKPT_GONE_AFTER = "left no file at that path: the checkpoint it was to replace is lost."
CKPT_CHANGED_AFTER = ("changed the file: it is no longer the checkpoint of {epochs} epochs it was to replace, "
                      "and that checkpoint is lost.")
CKPT_EVERY_EPOCH = ("Task {task} ({title}): fit(..., epochs={epochs}, checkpoint={path!r}) whose loader failed in "
                    "epoch {died} {left}\n"
                    "  hint: save after every epoch (_save_checkpoint at the end of each pass of the loop), so a run "
                    "that dies keeps the epochs it finished")
CKPT_LEFT_NONE = "left no checkpoint at that path."
CKPT_LEFT_UNREADABLE = "left a checkpoint your _load_checkpoint fails on: {error}"
CKPT_LEFT_COUNT = "left a checkpoint of {got} epochs, expected {first}: the epochs done before the failure."
CKPT_LEFT_NOT_A_FILE = "left {kind} at that path, not a file."
CKPT_LEFT_OTHER = ("left a checkpoint whose model.* arrays are not the weights after the {first} epochs it "
                   "finished.")
CKPT_NOT_A_FILE = ("Task {task} ({title}): after fit(..., checkpoint={path!r}), {path!r} is {kind}, not the "
                   "checkpoint file.\n"
                   "  hint: write the checkpoint itself at exactly that path (a temporary file, then os.replace)")
CKPT_READING = "the checker read its checkpoint (the process ended after fit returned)"
CKPT_MOVED = ("  {first} epochs with checkpoint={path!r}; then the checker replaced the file's model.* arrays with "
              "other weights (as another run might have left them), and a new model and optimizer resumed with "
              "fit(..., epochs={epochs}, checkpoint={path!r}): the run must go on from the weights in the file")
CKPT_RESUMED_SOURCE = "the reference fit resumed from the file's weights and momentum buffers, over the same batches"
HINT_CKPT_STATE = ("the checkpoint of epoch k holds model.state_dict() and optimizer.state_dict() as they are after "
                   "k epochs, each entry under 'model.' or 'optim.' + its key")
HINT_CKPT_NOT_FROM_FILE = ("the resumed run went on from the first run's weights, not from those in the file (the "
                           "checker had changed them): load the model's weights from the checkpoint "
                           "(model.load_state_dict) when it exists")
CKPT_PREFIXES = ("Task {task} ({title}): the checkpoint fit left at {path!r} holds {members}, without {missing}.\n"
                 "  hint: save each entry of model.state_dict() under 'model.' + its key and each of "
                 "optimizer.state_dict() under 'optim.' + its key, as _save_checkpoint's docstring says")
CKPT_LOADED_PAIR = "a pair (epochs done, history)"
CKPT_EPOCH_INT = "an int ({epochs}, the epochs the checkpoint holds)"
HINT_CKPT_EPOCH_INT = ("np.load gives back every value as an array, a 0-d one for a number: return "
                       "int(saved['epoch']), as the docstring's tuple[int, dict] says")
CKPT_UNPICKLED = ("Task {task} ({title}): resuming from a checkpoint whose arrays were pickled objects ran the "
                  "code in those pickles (it killed the process that loaded them).\n"
                  "  hint: a checkpoint is data: np.load(path, allow_pickle=False), so a crafted file cannot run code")
HINT_CKPT_EPOCH_BEHIND = ("the checkpoint written after {first} epochs says epoch = {saved}: save the number of "
                          "epochs finished (epoch + 1 in a loop over range(done, epochs)), or the resumed run "
                          "repeats the last one")
HINT_CKPT_SAVED_EARLY = ("the checkpoint written after {first} epochs holds {keys} of {count} epoch(s): it was saved "
                         "before the epoch's losses were all appended. Save at the end of the epoch, after "
                         "train_loss and val_loss")
HINT_CKPT_HISTORY = ("return the whole history: the epochs saved in the checkpoint, then the new ones "
                     "(and save the history in the checkpoint)")

TORCH_SETUP = ("  model MLP 1-{hidden}-1 float64, {n} examples in batches of {batch_size} ({batches} batches), "
               "{n_val} for validation, SGD(lr={lr:g}, momentum={momentum:g}), {loss}, {epochs} epochs, "
               "device={device!r}")
TORCH_JUDGES_DEVICE = ("  {device!r} is the judge's device: it computes on the CPU, a model or batch left on the CPU "
                       "fails there as on a GPU, and the model's output moves by {shift:g} when it computes there")
TORCH_SOURCE = "the reference fit_torch on {device!r}, same weights and batches"
TORCH_DEVICE_NOT_SEEN = ("whether fit_torch computed on the GPU: the .to() calls checked here are noted inside the "
                         "process that runs your code, and float64 results agree on both devices, so nothing the "
                         "grader sees from outside shows where the work was done")
HINT_TORCH_MOVE_MODEL = "move the model once, before training: model.to(device)"
HINT_TORCH_MOVE_BATCHES = ("move every batch, inputs and targets, in training and in validation, with .to(device), "
                           "as the model")
HINT_TORCH_NOT_MOVED = ("these are the numbers of a run that stayed on the CPU: fit_torch moved neither the model "
                        "nor the batches to the device it was given. Call model.to(device) once, and xb.to(device), "
                        "yb.to(device) for every batch")
HINT_TORCH_OWN_TENSOR = ("a tensor on the device met one on the CPU: make your own tensors on the device "
                         "(torch.zeros(..., device=device)), or keep Python floats (loss.item())")
TORCH_MODEL_NOT_MOVED = ("Task {task} ({title}): fit_torch never called model.to({device!r}) (the .to() calls "
                         "seen: {calls}).\n  hint: " + HINT_TORCH_MOVE_MODEL)
TORCH_BATCH_NOT_MOVED = ("Task {task} ({title}): {count} of the {total} batch tensors the loaders yielded were "
                         "never moved with .to({device!r}) (the first: {which}).\n"
                         "  hint: " + HINT_TORCH_MOVE_BATCHES)
# How torch's error for an op given tensors on two devices begins (the judge's device raises it too, in torch's words)
TORCH_TWO_DEVICES = "Expected all tensors to be on the same device"
TORCH_LEFT_BEHIND = ("Task {task} ({title}): on device={device!r}, {what} stayed on the CPU, so fit_torch raised "
                     "{error}\n"
                     "  {device!r} is the judge's device, on which a tensor left on the CPU fails, as on a GPU\n"
                     "  hint: {hint}")
TORCH_LEFT_MODEL = "the model (its .to() calls: {calls})"
TORCH_LEFT_BATCH = "{which} (never moved with .to(device))"
HINT_BACKWARD_SCALAR = ("call backward() on the loss, a tensor of one element: backward() without a gradient is "
                        "defined only for a scalar, so a tensor of one value per example cannot start it")
# What an error's own words say went wrong, whatever the task (the engine, the stand-ins and torch raise these).
HINTS_FOR_RAISED_TEXT = {"grad can be implicitly created only for scalar outputs": HINT_BACKWARD_SCALAR}
HINT_TORCH_TRAIN = "call model.train() at the start of every epoch: validation left the model in eval mode"
HINT_TORCH_EVAL = "call model.eval() before the validation loop"
HINT_TORCH_NO_GRAD = "run the validation loop inside `with torch.no_grad():`"
HINT_TORCH_GRAD = "keep torch.no_grad() around the validation loop only"
HINT_TORCH_NEVER_STEPPED = ("the parameters after fit_torch are the ones it started from: no step moved them. Per "
                            "batch: optimizer.zero_grad(), forward, loss, loss.backward(), then optimizer.step() (a "
                            "step before backward() finds the gradients zero_grad() just cleared)")
HINT_TORCH_ZERO_GRAD_EPOCH = ("the run matches one that clears gradients once an epoch, so each step adds up every "
                              "batch's gradient so far: call optimizer.zero_grad() for every batch, inside the loop "
                              "over the batches")
HINT_TORCH_ZERO_GRAD = ("the run matches one that never clears gradients: call optimizer.zero_grad() before each "
                        "backward")

# ----- autograd-lab doctor (graders/judge/doctor.py) and the scorecard's isolation line -----
# Why bubblewrap cannot be had (graders.isolation.sandbox.bubblewrap_problem), and the fix (bubblewrap_fix).
ISOLATION_BWRAP_MISSING = "bubblewrap is not installed"
ISOLATION_BWRAP_FAILED = "bubblewrap cannot make a sandbox here ({error})"
ISOLATION_FIX_INSTALL = "install it (Debian and Ubuntu: apt-get install bubblewrap)"
ISOLATION_FIX_APPARMOR = ("this machine's AppArmor lets no unprivileged user make the user namespace bubblewrap needs "
                          "(Ubuntu 24.04: {setting} is 1): once per machine, as root, run `sysctl -w "
                          "kernel.apparmor_restrict_unprivileged_userns=0`, or run the judge as root")
ISOLATION_FIX_CONTAINER = ("the judge runs as root without CAP_SYS_ADMIN (a container): run the container privileged "
                           "(Kubernetes: securityContext privileged: true; docker run --privileged), which lets "
                           "bubblewrap make its namespaces and mount its /proc")
ISOLATION_FIX_OTHER = ("`autograd-lab doctor` says what this machine gives, and docs/security.md (setting up the "
                       "sandbox) the one-time set-up")
# A grade that counts refuses (graders.isolation.sandbox.choose): what is missing, and the fix.
ISOLATION_NO_BUBBLEWRAP = "refusing to grade: --isolation bubblewrap was asked for, but {why}. To fix it: {fix}"
ISOLATION_AUTO_REFUSED = ("refusing to grade: a grade that counts runs in bubblewrap, and {why}. To fix it: "
                          "{fix}{limits}")
ISOLATION_OR_LIMITS = (". Or, to grade with process limits alone (each worker an unprivileged uid in a root of its "
                       "own), pass --isolation limits")
ISOLATION_NO_LIMITS = "refusing to grade with --isolation limits: {why}"
ISOLATION_LIMITS_NOT_ROOT = ("the judge is not root, so every worker would run as the judge's own uid and could read "
                             "and write whatever the judge can (other students' files, the results). Run the judge as "
                             "root, or grade with bubblewrap")
ISOLATION_LIMITS_NO_NAMESPACE = ("the judge may make no mount namespace here (root without CAP_SYS_ADMIN: a "
                                 "container?), so a worker would see every file any user can read. Give the judge "
                                 "CAP_SYS_ADMIN, or grade with bubblewrap")
# A student's own `autograd-lab grade` where bubblewrap cannot be had (graders.isolation.sandbox.fallback_note).
ISOLATION_PRACTICE_FALLBACK = ("autograd-lab: {why}, so this grade runs with {isolation}: fine for practice, never "
                               "for a grade that counts (grade-all, Gradescope, nbgrader and the workflows refuse "
                               "here). To fix it: {fix}")
ISOLATION_NO_SCRATCH = ("no folder to grade in that a worker's uid can reach: {folder} lies under a private folder, "
                        "and /tmp, /var/tmp and /dev/shm are not usable")
DOCTOR_INTERPRETER = "interpreter:  {path}"
DOCTOR_UID = "running as:   uid {uid}{root}"
DOCTOR_UID_ROOT = " (root: each worker runs as an unprivileged uid of its own)"
DOCTOR_BUBBLEWRAP = "bubblewrap:   {found}{broken}"
DOCTOR_BUBBLEWRAP_AT = "{version} at {path}"
DOCTOR_BUBBLEWRAP_MISSING = "not installed"
DOCTOR_BUBBLEWRAP_BROKEN = " (installed, but cannot make a sandbox here)"
DOCTOR_ISOLATION = "isolation:    {isolation}"
DOCTOR_WORKERS = "workers:      {workers}"
# What a grade that counts does here (graders.judge.doctor): grade-all, Gradescope, nbgrader and the workflows.
DOCTOR_COUNTED = "counted:      {text}"
DOCTOR_COUNTED_BUBBLEWRAP = ("grade-all, merge, Gradescope, nbgrader, the pytest plugin and the workflows grade in "
                             "bubblewrap")
DOCTOR_COUNTED_REFUSED = ("grade-all, Gradescope, nbgrader, the pytest plugin and the workflows refuse here: {why}. "
                          "To fix it: {fix}. With --isolation limits: {limits}")
DOCTOR_COUNTED_LIMITS_OK = "they grade with process limits, each worker an unprivileged uid in a root of its own"
DOCTOR_BUDGETS = "budgets:      {budgets}"
DOCTOR_KERNEL = "nbgrader:     the notebook's kernel runs {kernel}"
DOCTOR_CUDA = "CUDA:         {device}"
DOCTOR_NO_CUDA = "none (task 6.2 is skipped)"
DOCTOR_WORKER = "the worker:   {text}"
DOCTOR_FALLBACK = "--isolation limits: {isolation}"
DOCTOR_FALLBACK_WORKER = "  the worker:   {text}"
DOCTOR_HINT_BUBBLEWRAP = ("hint: install bubblewrap (apt-get install bubblewrap) for no network, a private pid "
                          "namespace and a filesystem that shows the worker only the submission and the interpreter")
# What student code can and cannot do on this machine (doctor's "the worker:" line), by the isolation it gets.
DOCTOR_WORKER_CAN = {
    "bubblewrap": ("sees only the system's libraries, the standard library and numpy (torch only where the loop's "
                   "stand-ins or task 6 compute with it), read-only, and the package it is graded on: no other "
                   "installed package, virtual environment or checkout; no network; cannot see or signal the judge; "
                   "its /tmp and working folder are private and size-capped"),
    "reads_all": ("can READ every file on this machine, other students' submissions and any checkout's solutions/ "
                  "included (the uid keeps CAP_DAC_READ_SEARCH: {interpreter} is not reachable by other uids, "
                  "and this machine allows no mount namespace to hide anything), but write only its working folder "
                  "and /tmp (swept after it); cannot signal the judge or read its memory"),
    "namespace": ("sees, in a root of its own (a mount namespace), only the system's libraries, the standard "
                  "library and numpy (torch only where the loop's stand-ins or task 6 compute with it), read-only, "
                  "and the package it is graded on: no other installed package, grade, submission or checkout; no "
                  "network; writes only its working folder and a private /tmp; cannot signal the judge; its command "
                  "line names no folder"),
    "uid": ("can read what any user can read (other students' submissions too, where their folders let "
            "anyone read, and torch, kept from the numpy tasks by an import refusal alone: this machine allows "
            "no mount namespace), write only its working folder and /tmp (swept after it); cannot signal the "
            "judge"),
    "judge_uid": ("runs as the judge's own uid: it can read and write whatever the judge can (other students' "
                  "submissions, any checkout's solutions/ and the results directory included); use bubblewrap, or "
                  "run the judge as root to drop the worker"),
}
# The isolation, one line for the scorecard and doctor (graders.isolation.sandbox.Isolation.describe): its parts.
ISOLATION_PARTS = {
    "limits": "process limits",
    "bubblewrap": "bubblewrap (no network, private pid namespace, read-only interpreter)",
    "reads_all": "an unprivileged uid that can read every file (no bubblewrap, no mount namespace: nothing is hidden)",
    "namespace": "an unprivileged uid in a root of its own that holds only the interpreter, numpy and its package",
    "uid": "an unprivileged uid",
    "root": "running as root (the process-count limit does not bind)",
    "judge_uid": "the judge's own uid (no bubblewrap: it can read and write what the judge can, other students' files "
                 "included)",
}
# How workers start (graders.isolation.fork_servers.describe) and the budgets over a grade
# (graders.isolation.budget.describe).
WORKERS_COLD_SWITCH = "each a fresh interpreter ({switch}=off)"
WORKERS_COLD = "each a fresh interpreter (workers are forked only where the judge runs as root with bubblewrap)"
WORKERS_FORKED = ("forked into bubblewrap's sandbox from two fork servers a judge keeps (numpy; torch and the loop's "
                  "stand-ins): no interpreter start and no torch import per worker")
BUDGETS_NONE = ("none over the whole tree (not root, or no cgroup with the memory and pids controllers to make): "
                "only each process's own limits bind")
BUDGETS_CGROUP = ("cgroup {kind}: {gib} GiB and {processes} processes for all of a grade's workers together, one "
                  "share of the CPU whatever their number, and at most {cores} cores at once")

# ----- the autograd-lab command (graders/cli.py, graders/cli_class.py) -----
CLI_FAILED = "autograd-lab {command}: {error}"
EXERCISES_OUT_OF_SYNC = "exercises out of sync with solutions/: {files}; run `autograd-lab build-exercises`"
TABLES_OUT_OF_SYNC = ("out of date with graders/tasks.py and graders/ops.py: {files}; run "
                      "`autograd-lab build-exercises`")
EXERCISES_IN_SYNC = "{out}: in sync with solutions/"
EXERCISES_WRITTEN = "{out}: wrote {count} file(s){files}"
EXERCISES_WRITTEN_FILES = ": {files}"
BUILD_WOULD_OVERWRITE = ("{out}: not written: {files} hold filled-in tasks (a task's stub is gone), and "
                         "regenerating would replace that work with stubs. Keep your work elsewhere (the student "
                         "bundle of `autograd-lab release`), or pass --force to replace it.")

# ----- nbgrader: the course builder and the notebook's cells -----
COURSE_WRITTEN = ("{course}: wrote nbgrader_config.py and source/{assignment}/ ({assignment}.ipynb, {modules})\n"
                  "next: cd {course} && nbgrader generate_assignment {assignment}")
COURSE_CONFIG_CHANGED = ("{path} differs from the configuration this command writes (edited by hand?); "
                         "left as it is: pass --force to replace it")
NBGRADER_COURSE_MADE = ("{path}: the course's tasks, points and secret (readable by you only), made with a fresh "
                        "secret; edit it, then run this command again to rebuild the notebook (or pass --course FILE)")
NOTEBOOK_NO_COURSE = ("nbgrader_config.py names no course file (c.JudgeGrades.course), so no student's key can be "
                      "derived: run `autograd-lab nbgrader COURSE_DIR --force` to write the configuration again")
NOTEBOOK_POINTS_DIFFER = ("cell {cell} is worth {cell_points:g} points in the notebook and task {task} {points:g} in "
                          "the course file {course}: scored as the same share of the cell's {cell_points:g} (edit the "
                          "course file, or the cell, so that the two agree)")
COURSE_BAD_ASSIGNMENT = "got assignment={assignment!r}, expected a name of letters, digits, '_', '-' or '.'"
NOTEBOOK_NOT_GRADED = ("The grader could not grade the files in {folder}: {why}\n"
                       "Every task scores 0 here; please tell your instructor.")
NOTEBOOK_JUDGE_SILENT = "the judge said nothing in {seconds:g} s of CPU time, so it was stopped"
NOTEBOOK_JUDGE_IDLE = "the judge said nothing and waited {seconds:g} s without using the CPU, so it was stopped"
NOTEBOOK_JUDGE_NO_START = "the judge's process could not be started ({why})"
NOTEBOOK_NO_JUDGE = ("The grader's step (JudgeGrades in Autograde.autograde_preprocessors) did not run, so no score "
                     "can be trusted: 0 points. Rewrite nbgrader_config.py with `autograd-lab nbgrader`.")
NB_REPORT_NOT_SUBMITTED = "did not submit (in the course's gradebook, with no submitted folder)"
NB_REPORT_NOT_AUTOGRADED = "submitted, but not autograded yet (nbgrader autograde ASSIGNMENT --student ...)"
NB_REPORT_NO_RESULT = ("autograded without autograd-lab's scorecard ({file} missing or unreadable): was it "
                       "autograded with the nbgrader_config.py that autograd-lab nbgrader wrote?")
NB_REPORT_NO_COURSE = "{course}: no autograded/ or submitted/ folder in it; expected an nbgrader course directory"
NB_REPORT_DONE = ("nbgrader-report: {graded} of {students} student(s) graded; wrote {out}/class.md, class.html and "
                  "grades.csv")
NOTEBOOK_GRADING = "autograd-lab: grading the .py files in {folder} with the judge"
NOTEBOOK_JUDGED = "autograd-lab's graders, on the .py files of this submission:\n{text}\n"
# nbgrader's kernel (graders/integrations/kernel_jail.py): the jail's refusal, said on nbgrader's log and in each
# cell the notebook's kernel is sent, and doctor's line.
KERNEL_SETUP = ("run `nbgrader autograde` as root (a root shell, in this environment), where the kernel runs as "
                "the user nobody in a jail; then give the course's files back to you "
                "(`chown -R YOU: COURSE_FOLDER`)")
KERNEL_REFUSED = ("autograd-lab: the notebook's code is not run: {why}. The scores are the judge's, from the .py "
                  "files, and stand. To run the notebooks too, {setup}.")
KERNEL_WHY = {
    "not-root": ("nbgrader runs as uid {uid}, not root, and a kernel run as your own user could read everything you "
                 "can (your home, ~/.ssh, the grader's examples cache), whatever sandbox it were in", KERNEL_SETUP),
    "no-bubblewrap": ("bubblewrap is missing or cannot make a sandbox here, and without it the kernel would see "
                      "every file any user of this machine can read",
                      "install bubblewrap (apt-get install bubblewrap), where the kernel sees only the interpreter "
                      "and a copy of its notebook's folder"),
}
KERNEL_REFUSED_CELL = ("Not run: the grading machine runs no notebook code as its instructor's user (uid {uid}) or "
                       "outside a jail. The graded cells' scores come from your .py files.\n")
KERNEL_NOT_IPC = ("autograd-lab: the kernel's connection file asks for transport {transport!r}: its jail has no "
                  "network, so it talks to nbgrader only over ipc sockets (set "
                  "Execute.kernel_manager_class to graders.integrations.nbgrader_judge.JailedKernelManager)")
KERNEL_BAD_IPC = "autograd-lab: the kernel's socket folder {folder} is refused: {why}"
KERNEL_DESCRIBED = {
    "bubblewrap": ("in bubblewrap, as nobody, with no network (ipc sockets to nbgrader): it sees the interpreter "
                   "(read-only), its sockets, a private /tmp and a private copy of its notebook's folder, and "
                   "nothing else: no home, no cache, no course, no checkout"),
    "refused": "nowhere: {why}; each cell says it did not run, and the scores, from the judge, stand. To run the "
               "notebooks too, {setup}",
}
NOTEBOOK_NO_SUCH_TASK = "Task {task}: the grader knows no such task; please tell your instructor."
# The visible checks print these; the notebook's setup cell holds them (students' kernels have no graders).
VISIBLE_CHECK = {
    "passed": "Task {task}, visible check: passed (the grader checks much more than this).",
    "stub": "Task {task}, visible check: not attempted yet: {error} still raises NotImplementedError.",
    "failed": "Task {task}, visible check: failed: {error}",
    "raised": "Task {task}, visible check: your code raised {kind}: {error}",
    "slow": "Task {task}, visible check: no result within {seconds} s (an infinite loop?).",
    "skipped": "Task {task}, visible check: skipped: {error}",
}

# ----- a whole class: grade-all, merge, pictures, releases, Gradescope, GitHub Classroom -----
BATCH_GRADED = "graded"
BATCH_MALFORMED = "malformed: {reason}"
BATCH_TIMED_OUT = "timed out: no result after {seconds:g} s of CPU time, so its judge was stopped"
BATCH_TIMED_OUT_IDLE = ("timed out without computing: no result, and {seconds:g} s waited without using the CPU, so "
                        "its judge was stopped")
# A graded row whose grade has a task that timed out without computing (graders.results.mistakes.IDLE): the only
# verdicts that rest on wall time, said so an instructor can tell them from a slow loop.
BATCH_GRADED_IDLE = "graded (timed out without computing on task {tasks}: see results.json)"
# grade-all's last note where the machine was busier than its cores during the run.
BATCH_LOADED = ("grade-all: the machine's load averaged {load:.1f} on {cores} core(s) during the run: the grades "
                "count CPU time, so they are what a quiet machine gives, but the run took longer")
BATCH_CRASHED = "crashed: {reason}"
BATCH_REFUSED = "not graded: {reason}"
BATCH_GRADER_ERROR = "graded (the grader failed on task {tasks}: see results.json)"
BATCH_JUDGE_EXITED = "the judge process exited ({how}) while grading it{words}"
BATCH_JUDGE_WORDS = "; its last line: {line}"
BATCH_JUDGE_NO_START = "the judge process did not start within {seconds:g} s (see OUT_DIR/.logs/)"
BATCH_PROGRESS = "grade-all: {done}/{total} ({skipped} unchanged, {failed} not graded) · {rate} · ETA {eta} · {last}"
BATCH_PROGRESS_LAST = "{student}: {status}"
BATCH_DONE = ("grade-all: {graded} graded, {skipped} unchanged since the last run (--force regrades them), "
              "{failed} not graded, in {seconds:.0f} s\nwrote {csv}")
BATCH_START = ("grade-all: {todo} to grade, {skipped} unchanged since the last run, of {mine} submission(s)"
               "{shard} in {folder}; {judges} judge process(es)")
BATCH_START_SHARD = " (shard {index}/{count} of {total})"
BATCH_INTERRUPTED = ("grade-all: interrupted; every finished submission is kept in {csv}, and the same "
                     "command goes on from there")
BATCH_EMPTY = "{folder}: no submission in it (expected folders laid out like exercises/, or .zip files of one)"
BATCH_NOT_A_FOLDER = "{folder}: not a folder of submissions"
# A command-line option whose value cannot work: "{prog}: got {option} {value!r}, expected {expected}".
CLI_BAD_VALUE = "{prog}: got {option} {value!r}, expected {expected}\n"
CLI_EXPECTED_TASKS = "task ids of the task table, comma-separated: {known}"
CLI_EXPECTED_ONE_OF = "{choices} or {last}"
BATCH_BAD_SHARD = "got --shard {text!r}, expected I/N with 1 <= I <= N (for example 2/4)"
BATCH_BAD_JOBS = "got --jobs {jobs}, expected at least 1"
BATCH_BAD_TIMEOUT = "got --timeout {seconds:g}, expected more than 0 seconds"
BATCH_OUT_INSIDE = "{out} is {folder} itself; write the results elsewhere"
ZIP_UNREADABLE = "{name}: not a readable .zip file ({error})"
ZIP_UNSAFE = "{name}: holds {member!r}, a path that leaves the folder (absolute, or with '..')"
ZIP_LINK = "{name}: holds {member!r}, a link; only plain files and folders are unpacked"
ZIP_TOO_BIG = "{name}: unpacks to more than {limit:,} bytes"
ZIP_TOO_MANY = "{name}: holds more than {limit:,} files"
ZIP_ENCRYPTED = "{name}: holds {member!r}, which is encrypted"
SEVERAL_PACKAGES = ("{name}: holds several folders laid out like exercises/ ({found}); "
                    "expected one")
SUBMISSION_LINK = ("{name}: a symbolic link, not a folder or a .zip; hand in the folder itself (a link would grade "
                   "whatever it points to)")
SUBMISSION_UNREADABLE = "{name}: a folder in it cannot be read ({error})"
SUBMISSION_TOO_MANY = ("{name}: more than {limit:,} files and folders within {depth} levels, where the folder laid out "
                       "like exercises/ was looked for; hand in that folder alone")
SUBMISSION_UNHASHED = "{name}: its files could not be read ({error})"
# Why a name cannot be a student's (graders.submission.intake.name_problem): said of a merged shard's row too.
NAME_EMPTY = "an empty name"
NAME_SEPARATOR = "a name with a path separator or a NUL, which no folder has"
NAME_HIDDEN = "a hidden name (it starts with '.') or one grade-all skips (__pycache__, .git, ...)"
MERGE_NO_CSV = "{folder}: no grades.csv in it (expected a folder that `autograd-lab grade-all --out` wrote)"
MERGE_COLUMNS = ("{path}: its columns ({got}) differ from those of {first} ({expected}); "
                 "were the shards graded with the same --tasks?")
MERGE_DUPLICATE = ("{student} is in both {first} and {second}: were the shards given different slices "
                   "(--shard 1/N ... N/N) of the same N?")
MERGE_ISOLATION = ("{path}: {student} was graded under the isolation {got}, expected {expected}: a grade that counts "
                   "runs in bubblewrap, or with --isolation limits as root; grade that shard again where "
                   "`autograd-lab doctor` says grades that count can run")
MERGE_OUT_IS_INPUT = "{out} is one of the folders to merge; write the merged gradebook elsewhere"
# A shard's file that is not what grade-all writes: merge refuses it, naming the file (and the row), before writing.
MERGE_BAD_HEADER = "{path}: not a grades.csv that grade-all wrote: its header must be {expected}"
MERGE_BAD_ROW = "{path}, line {line}: {problem}; refused, nothing was merged"
MERGE_CELLS = "{cells} cells, expected {columns} as in the header"
MERGE_BAD_NAME = "the student {name!r} is {problem}"
MERGE_BAD_VALUE = "{column} is {value!r}, expected {expected}"
MERGE_NUMBER = "a number, at least 0"
MERGE_NUMBER_UP_TO = "a number from 0 to the task's {most:g} points"
MERGE_BAD_FILE = "{path}: {problem}; refused, nothing was merged"
MERGE_RECORD_NOT_OBJECT = "not a record grade-all wrote (a JSON object)"
MERGE_RECORD_FIELDS = "not a record grade-all wrote: its fields are {fields}"
MERGE_RECORD_TYPE = "not a record grade-all wrote: its {field} is {got}"
MERGE_RECORD_OTHER = "the record of {student!r}, in the folder of {row!r}"
MERGE_RECORD_SCORE = "task {task!r} at {points:g} points, which is no task of the gradebook or past its points"
MERGE_RESULT = "not a results.json grade-all wrote: {problem}"
MERGE_RESULT_SHAPE = "its tests are not a list"
MERGE_RESULT_TEST = "test {index}: {problem}"
MERGE_OUT_TAKEN = "{path} is not a folder; write the merged gradebook elsewhere"
MERGE_DONE = "merge: {students} student(s) from {folders} folder(s)\nwrote {csv}"

NO_PICTURES = ("pictures skipped: matplotlib is not installed here; it comes with autograd-lab "
               "(pip install -c .ci/constraints.txt -e . installs it, or pip install matplotlib)")
PICTURE_LINK = "![Task 5.4: your training loss per epoch against the noise floor]({file})"
LOSS_TITLE = "Task 5.4: the lesson's run on your code"
LOSS_YOURS = "your fit: train_loss per epoch"
LOSS_REFERENCE = "the reference solution, same run"
LOSS_FLOOR = "noise floor {floor:g}"
LOSS_BAR = "the bar: 1.5 x the floor = {bar:g}"
LOSS_FINAL = "final weights' MSE, by the grader: {mse:.4f}"
LOSS_AXES = ("epoch", "training MSE (log scale)")
CLASS_TOTALS_TITLE = "Totals of the {graded} graded submission(s) (mean {mean:.1f}, median {median:g})"
CLASS_TOTALS_AXES = ("total points", "students")
CLASS_PASS_TITLE = "Tasks passed, per task ({graded} graded submission(s))"
CLASS_PASS_AXES = ("share of students with the task's full points (%)", "task")
CLASS_SUMMARY = "{students} student(s): {graded} graded, {others} not graded (see grades.csv's status column)."
ADJUSTMENT = "{task} {sign}{points:g} ({reason})"
ADJUSTED_STATUS = "{status}; adjusted: {adjustments}"
ADJUST_MISSING = "{path}: no such adjustments file"
ADJUST_HEADER = "{path}: the first row must be the header {header}"
ADJUST_CELLS = "{path}, line {line}: {cells} cells, expected 4 ({header})"
ADJUST_STUDENT = "{path}, line {line}: no student {student!r} in this class (the names are the submissions' folders)"
ADJUST_TASK = "{path}, line {line}: got task {task!r}, expected one of {tasks} or total"
ADJUST_POINTS = "{path}, line {line}: got points {points!r}, expected +N or -N (added) or =N (set), e.g. +1.5"
ADJUST_REASON = "{path}, line {line}: the reason is empty; say why (a regrade, an excused task, a late penalty)"
LMS_ROSTER_ENCODING = "{path}, line {line}: not UTF-8 text; save the roster as CSV UTF-8 (the LMS's own export is)"
LMS_ROSTER_EMPTY = "{path}: no header row; expected the roster the LMS exports (a CSV, its first row the columns)"
LMS_ROSTER_REPEATED = "{path}: the header names {columns} more than once"
LMS_ROSTER_CANVAS = ("{path}: no column {lacking} in its header; expected Canvas's gradebook export, whose first "
                     "columns are {columns}")
LMS_ROSTER_CELLS = "{path}, line {line}: {cells} cells, expected {columns} as in the header"
LMS_ROSTER_TWICE = "{path}, line {line}: {name!r} in column {column!r} is on line {first} too"
LMS_ROSTER_LINE = "(the roster's line {line}, no name)"
LMS_CASE_TWICE = ("the submissions {first!r} and {second!r} differ only in case or spaces, and the roster's names "
                  "are matched without them: rename one folder")
LMS_NO_COLUMN = "{path}: no column {column!r}; its columns are {header}"
LMS_MOODLE_ID = ("{path}: none of {columns}, the columns Moodle's import identifies a user by; its columns are "
                 "{header} (name one with --id)")
LMS_ROSTER_MISSING = "{path}: no such roster file"
LMS_NOT_ON_ROSTER = ("{count} graded student(s) not on the roster, left out of the import file (add their names to "
                     "the --match column): {names}")
LMS_NO_SUBMISSION = ("{count} roster student(s) with no submission, left out of the import file (the LMS keeps what "
                     "it has; --missing zero gives them 0): {names}")
LMS_NO_SUBMISSION_ZERO = "{count} roster student(s) with no submission, given 0 in the import file: {names}"
LMS_NOT_GRADED = "{count} student(s) not graded, exported with the total grades.csv shows: {names}"
LMS_DONE = "export: {rows} student(s) for {lms}\nwrote {path}"
SCORECARD_ADJUSTED_TITLE = "### Adjusted by your instructor"
SCORECARD_ADJUSTED_TOTAL = "Your total after these adjustments: {total:g}."
CLASS_REPORT_TITLE = "# autograd-lab: the class"
CLASS_REPORT_TIME = "Grading took {median:.1f} s per student (median), {most:.1f} s at most."
CLASS_REPORT_TASKS = "Tasks"
CLASS_REPORT_RUNGS = "What failed: {rungs}."
CLASS_REPORT_UNRECOGNISED = "no named mistake, the message says"
CLASS_REPORT_TOTALS = "Totals"
CLASS_REPORT_STUDENTS = "Students"
CLASS_PICTURE_TOTALS = "the distribution of totals"
CLASS_PICTURE_RATES = "the share with full points, per task"
CLASS_REPORT_NO_RESULT = "no result for this task in the student's results.json"
CLASS_REPORT_MORE = "and {count} more"
CLASS_REPORT_NOT_IMPORTING = "{count} whose file does not import (below, once per student)"
CLASS_REPORT_WAITED = "timed out without computing: {reason}"
CLASS_REPORT_IMPORTS = "Files that do not import"
CLASS_REPORT_IMPORTS_INTRO = ("Each line is one student's file that stops at import, which costs every task it holds; "
                              "their scorecard has the whole message.")
CLASS_REPORT_IMPORT = "{file} does not import ({reason}): {count} task(s) lost, {tasks}"
# What failed, by rung (graders.results.mistakes.RUNGS), as the class report says it.
CLASS_RUNGS = {
    "values": "wrong values", "types": "wrong types or shapes", "errors": "errors raised or missed",
    "cost": "too slow for the cost rung", "crash": "the student process died", "time": "out of time while computing",
    "waited": "timed out without computing (it waited: a sleep, a blocking read)", "in place": "changed in place",
    "batches": "wrong batches", "modes": "wrong train or eval modes", "device": "a tensor on the wrong device",
    "memory": "a graph kept in memory",
    "convergence": "no convergence", "checkpoint": "a checkpoint not kept", "not attempted": "not attempted",
    "grader error": "a grader error", "import": "a file that does not import", "other": "other failures",
}
CLASS_SIMILAR_TITLE = "Similar submissions"
CLASS_SIMILAR_INTRO = ("{compared} students' code compared (copydetect: names, strings and comments left out, the "
                       "given code and the stubs set aside); {flagged} pair(s) share at least {fraction:.0%} of one's "
                       "own code. A list to look at, never a grade: two students may share code honestly (a study "
                       "group, a snippet from the lesson).")
CLASS_SIMILAR_PAIR = "{first:.0%} and {second:.0%} of each one's own code is in the other's, in {files}."
CLASS_SIMILAR_SKIPPED = "Not compared: {error} (copydetect comes with autograd-lab: pip install copydetect)."
CLASS_SIMILAR_MORE = "The first {shown} pairs are shown side by side below; {count} more are in the table only."
CLASS_SIMILAR_LINES = "shared code on lines {first} to {last}"
CLASS_MISTAKE_HINT = "lost the task to a mistake whose hint says: {hint}"

EXAMPLES_WRITTEN = "{out}: wrote {files}"
EXAMPLES_EXIST = "{path} exists; pass --force to replace it"
NEEDS_CHECKOUT = ("{command} needs the autograd-lab repository, and {path} is missing: run it from a git "
                  "checkout installed with `pip install -e .`")
GRADESCOPE_OR_WHEEL = " (or pass the package's wheel with --wheel FILE)"
GRADESCOPE_NO_WHEEL = "{wheel}: not an autograd-lab wheel (autograd_lab-*.whl)"
RELEASE_NOT_EMPTY = "{out} exists and is not empty; pass --force to write the bundle into it anyway"
RELEASE_WRITTEN = ("{out}: the student bundle, {count} files: exercises/ (stubs, public tests, README) and "
                   ".github/workflows/scorecard.yml; no solutions, no graders, no secret\n{wheel}")
RELEASE_WHEEL_AT = ("Its CI installs the graders from {where}{token}: put {wheel} there (from autograd-lab's "
                    "checkout: python -m pip wheel --no-deps -w dist .; it holds no solution and no secret).")
RELEASE_WHEEL_TOKEN = (", read with the organization secret AUTOGRAD_LAB_WHEEL_TOKEN: a fine-grained token that reads "
                       "that repository alone (a student's own workflow can use the token, so the repository "
                       "must hold the wheel and nothing else)")
RELEASE_WHEEL_UNSET = ("Its CI installs the graders from the organization variable AUTOGRAD_LAB_WHEEL, which you set: "
                       "OWNER/REPO@TAG, a release of a repository of the organization that holds {wheel} and nothing "
                       "else, read with the organization secret AUTOGRAD_LAB_WHEEL_TOKEN (a fine-grained token that "
                       "reads that repository alone), or the wheel's https URL; or write it in with --wheel WHERE. "
                       "Build the wheel from autograd-lab's checkout: python -m pip wheel --no-deps -w dist .")
RELEASE_BAD_WHEEL = ("got --wheel {where!r}, expected OWNER/REPO@TAG (a release of a repository of the organization) "
                     "or the https URL of a .whl")
RELEASE_NOT_IN_COURSE = "Task {task}: {title} is not part of this course, nothing to write here"
RELEASE_COURSE_DUE = "\n\nDue {due}; each day late (or part of one) costs {per_day:g}% of your total, at most {cap:g}%."
RELEASE_COURSE_SECTION = """## This course's tasks

Your course grades these tasks, for these points ({total} in all). The lesson's other tasks are not part of
it: their stubs say so, and `pytest exercises/` leaves their tests out.{due}

| task | title | points |
| --- | --- | ---: |
{rows}

"""
GRADESCOPE_WRITTEN = ("{zip}: a Gradescope autograder ({kib:,} KiB): setup.sh, run_autograder, {wheel}, its "
                      "dependencies' pins and the course file (with its secret: never share the zip with students)")
GRADESCOPE_COURSE_MADE = ("{course}: the course file made for it, with a fresh secret (readable by you only): keep it, "
                          "and give it to `autograd-lab grade --course {course} --student gradescope:ID` to grade a "
                          "Gradescope student again here, or to `autograd-lab gradescope --course` for the next zip")
GRADESCOPE_NO_METADATA = "{path}: cannot tell whose submission this is ({error})"
GRADESCOPE_METADATA_NOT_GIVEN = "no submission_metadata.json was given, so whose submission this is is unknown"
GRADESCOPE_NO_KEY = "no key to grade this submission with: {why}"
GRADESCOPE_REFUSED = ("The autograder refused to grade this submission: {why}. This is not your mistake: please tell "
                      "your instructor (the autograder zip needs rebuilding with `autograd-lab gradescope --course "
                      "FILE`).")
GRADESCOPE_LATE = "Late: {penalty}."
GRADESCOPE_BUILD_FAILED = "building the wheel failed (pip wheel, exit status {code}):\n{output}"
GRADESCOPE_NOT_GRADED = ("The autograder could not grade this submission: {why}\n"
                         "Upload the .py files of exercises/ (tensor.py, optim.py, data.py, train.py, torch_loop.py), "
                         "or a .zip of the folder that holds them.")
GRADESCOPE_NO_SANDBOX = ("The autograder did not grade this submission: it grades only inside its sandbox, which "
                         "cannot start here. This is not your mistake: please tell your instructor. ({why})")
GRADESCOPE_CRASHED = ("The autograder itself failed ({error}). This is not your mistake: please tell your "
                      "instructor.")

# ----- the course file (graders/course/course_file.py) and the keys drawn from its secret -----
COURSE_AT = "{path}, line {line}: {what}"
GRADE_ALL_ONE_KEY = ("got --key {key}: one key for a whole class gives every student the same inputs, which one of "
                     "them can learn and pass on. Give --course FILE instead: each student's key is derived from its "
                     "secret (`autograd-lab course init FILE` writes one); --key is for one submission "
                     "(autograd-lab grade)")
GRADE_ALL_NO_KEYS = ("no key to grade with: give --course FILE, whose secret each student's key is derived from "
                     "(`autograd-lab course init FILE` writes one), or set $AUTOGRAD_LAB_SECRET. To try the package "
                     "on fixed inputs that every student shares, pass --unkeyed (those grades should not count)")
COURSE_TASKS_LEFT_OUT = "got --tasks {tasks}, which {where} leaves out (0 points)"
EXAMPLES_STUDENT_KEY = "this student's key of the course (#{tag})"
COURSE_DEFAULT = "the default course (no --course FILE)"
COURSE_UNREADABLE = "{path}: cannot read the course file ({error})"
COURSE_NOT_UTF8 = "{path}: the course file is not UTF-8 text"
COURSE_NOT_TOML = "not TOML: {error}"
COURSE_UNKNOWN_KEY = "got {key!r}, expected one of {known}"
COURSE_NOT_A_TABLE = "{name} must be a table ([{name}])"
COURSE_UNKNOWN_TASK = "got task {task!r}, expected a task id of the task table: {known}"
COURSE_POINTS_NOT_WHOLE = "got {task} = {value!r}, expected a whole number of points (0 leaves the task out)"
COURSE_NEGATIVE_POINTS = "got {task} = {value}, expected points of at least 0 (0 leaves the task out)"
COURSE_NEEDS_TASK = "task {task} grades {needed}'s code: it cannot have points in a course without {needed}"
COURSE_NO_POINTS = "the course gives no task any points: give at least one task more than 0"
COURSE_SHORT_SECRET = ("the secret must be text of at least {chars} characters: `autograd-lab course rotate FILE` "
                       "writes a fresh one")
COURSE_SHORT_SECRET_ENV = "${env} must hold at least {chars} characters (a fresh one: `python -c \"import secrets; " \
                          "print(secrets.token_hex(32))\"`)"
COURSE_BAD_PERCENT = "got {name} = {value!r}, expected a number of percent from 0 to 100"
COURSE_BAD_TIMES = "got times = {value!r}, expected the path of a CSV file (student,submitted), relative to this file"
COURSE_BAD_DATE = "got {value}, expected a date and time with its UTC offset, e.g. 2026-03-01T23:59:00-05:00"
COURSE_DATE_NO_OFFSET = ("got {value}, a time without its UTC offset: add one (2026-03-01T23:59:00-05:00, or Z for "
                         "UTC), so that every grader reads the same instant")
COURSE_BAD_VISIBILITY = "got {value!r}, expected one of {known}"
COURSE_NO_SECRET = ("{where} has no secret, so no student's key can be derived: add `secret = ...` to the file "
                    "(`autograd-lab course init FILE` writes a course file with one) or set ${env}")
COURSE_NO_SECRET_LINE = "{path}: no `secret = \"...\"` line to rotate; add one (at least 32 characters)"
COURSE_FILE_EXISTS = "{path} exists; pass --force to replace it (its secret is lost: every student's key changes)"
COURSE_TIMES_UNREADABLE = "{path}: cannot read the submission times named by {course} ({error})"
COURSE_TIMES_HEADER = "the first row must be the header {header}"
COURSE_TIMES_ROW = "expected two cells, {header}"
COURSE_INIT_DONE = ("{path}: a course file with every default and a fresh secret (readable by you only). Edit it, then "
                    "give it to every command: --course {path}")
COURSE_ROTATE_DONE = ("{path}: a fresh secret. Every student's inputs change with it: the next grade-all grades "
                      "everyone again; rebuild the Gradescope zip, the nbgrader course's graders and the runners' "
                      "secret with it")
COURSE_COLUMNS = ("{folder}: its gradebook's task columns are {got}, and the course file {course} grades {expected}: "
                  "give the course file the class was graded with")
LATE_PENALTY = "late by {days} day{s}: -{percent:g}% ({per_day:g}% a day, at most {cap:g}%)"
LATE_NO_TIME = ("the course has a due date, but {count} student(s) have no submission time in {path}, so no late "
                "penalty is applied to them: {names}")
LATE_NO_TIMES_FILE = ("the course has a due date, but names no submission times (times = \"FILE\" under [late]), "
                      "so grade-all applies no late penalty")
COURSE_COPY_HEAD = ("# The course's tasks, points, late policy, Gradescope visibility and secret. Written by "
                    "autograd-lab from the\n# instructors' course file; edit that one, not this.")
COURSE_PUBLIC_HEAD = ("# The course's tasks, points, late policy and Gradescope visibility, without its secret: the "
                      "runner gives the secret\n# (${env}). Written by autograd-lab from the instructors' course file; "
                      "edit that one, not this.")
COURSE_TEMPLATE_NO_POINTS = ("# {title}: left out, it runs where the grader has a GPU, for no points; points\n"
                             "# here count only where every grade has a GPU (Classroom 50's GPU runner), and 0 "
                             "leaves it out.\n# {line}")
COURSE_TEMPLATE = """\
# autograd-lab's course file: what this course grades, for how many points, and when it is due.
# Every command takes it: autograd-lab grade, grade-all, merge, export, release, nbgrader, gradescope and
# classroom50, each with --course FILE. Written by `autograd-lab course init`. Keep it private: it holds the
# course's secret, and it is never shipped to students.

# The course's secret. Each student's grading key is an HMAC of it and the student's identity (grade-all's
# folder name, nbgrader's student id, Classroom 50's repository owner, Gradescope's user ids): the same
# student always gets the same inputs, two students never share theirs, and nobody can tell either without
# the secret. Rotate it with `autograd-lab course rotate FILE` (every student is graded again, on new inputs).
# Where a file holds no secret line, ${env} gives it (a runner's or a CI's secret store).
secret = "{secret}"

# Each task's points. 0 leaves a task out of the course: it is not graded, and its public tests, notebook cell
# and Gradescope test go with it. A task left out of this table keeps the points written here. The total is
# what the points add to: {total} as written here.
[tasks]
{tasks}

# Late submissions. Changing anything here never grades a submission again: the penalty is applied to the
# totals on every run (grade-all, merge, export, Gradescope, Classroom 50).
[late]
# The due date, ISO 8601 with its UTC offset; without one, nothing is late.
# due = 2026-03-01T23:59:00-05:00
# Percent of a submission's total taken for each day late, a part of a day counting as a whole one.
percent_per_day = {per_day}
# At most this many percent are taken, however late.
cap_percent = {cap}
# grade-all's submission times: a CSV with the header student,submitted (the folder's name, ISO 8601 with
# its offset), relative to this file. Gradescope gives the submission's own time, Classroom 50 the graded
# commit's.
# times = "submitted.csv"

# A student's own due date, by their identity (as for the keys; Gradescope's e-mail address too).
[late.extensions]
# "alice" = 2026-03-04T23:59:00-05:00

[gradescope]
# Each task's test on Gradescope: {visibilities}.
visibility = "visible"

# A task's own visibility, by task id.
[gradescope.tasks]
# "5.4" = "after_due_date"
"""

# ----- Classroom 50 (graders/integrations/classroom50.py) -----
CLASSROOM50_BAD_SLUG = "got --assignment {assignment!r}, expected a Classroom 50 slug ({pattern})"
CLASSROOM50_NO_OWNER = ("the runner's environment names no repository owner (OWNER, USERNAME or GITHUB_REPOSITORY): "
                        "whose submission this is is unknown")
CLASSROOM50_NO_SECRET = ("no course secret on this runner (${env}), so the owner's key cannot be derived: run the "
                         "assignment on the course's self-hosted runner, whose .env holds ${env} (runtime.json names "
                         "its labels), or write the autograder again with --unkeyed")
CLASSROOM50_REFUSED = "::error::autograd-lab refused to grade this submission: {why}"
CLASSROOM50_NOT_GRADED = ("nothing to grade in this repository: {why}. Keep exercises/ as it was given (tensor.py, "
                          "optim.py, data.py, train.py, torch_loop.py)")
CLASSROOM50_LATE = "**Late**: {penalty}; the score after it: {score}/{most}."
CLASSROOM50_WRITTEN = """\
{folder}: Classroom 50's autograder of the assignment {assignment}: autograder.py, course.toml (the course's
tasks and points, no secret), constraints.txt (every dependency pinned), runtime.json (the runtime block) and
{wheel}. The graders' wheel goes there, beside autograder.py: Classroom 50 publishes the folder with the
assignment's bundle (the wheel holds no solution and no secret), and autograder.py installs it on the runner.
Commit the folder to the course's classroom50 repository, then register the assignment with its runtime block:
  gh teacher assignment add ORG CLASSROOM {assignment} ... --runtime {folder}/runtime.json"""
CLASSROOM50_COURSE_MADE = ("{path}: the course file of the assignment, with its secret (readable by you only): keep it "
                           "out of the classroom50 repository, whose autograders are published; its secret goes into "
                           "the runner's .env, and --course {path} writes the autograder again")
CLASSROOM50_KEYED = """\
The runtime block asks for the course's self-hosted runner ({labels}). Each grade derives the student's key from
the repository's owner and the course's secret, which that runner alone gives: put
AUTOGRAD_LAB_SECRET=<the course file's secret> in the runner's .env file, and put the runner in a group that only
ORG/classroom50/.github/workflows/autograde-runner.yaml may use, so no student's own workflow runs there.
Without the secret, the autograder refuses (an error status, no grade). docs/gradescope-and-ci.md has the set-up."""
CLASSROOM50_UNKEYED = """\
Written with --unkeyed: it grades on GitHub-hosted runners without a key, on the fixed inputs that every student
shares (one student who learns them can pass them on). Those grades should not count."""

# ----- grading under pytest (graders.integrations.pytest_plugin): what it adds to pytest's output -----
# (a task's own text is the judge's message, as the scorecard shows it)
PYTEST_HEADER = ("autograd-lab: grading {submission} · examples: {examples} · isolation: {isolation} · "
                 "no conftest.py loaded")
PYTEST_TOTAL = "autograd-lab: {score:g}/{max_score:g} points ({tasks} task{s})"
PYTEST_NOT_GRADED = "autograd-lab: {error}"
PYTEST_INSIDE_SUBMISSION = ("--autograd-lab-submission {submission}: the {what} {path} lies inside the submission, "
                            "whose files must never configure pytest: run pytest from a folder of yours, naming no "
                            "path inside the submission")

# ----- the class report: what the students who made each named mistake did (graders/classgrade/report.py) -----
# One sentence per mistake id of graders.results.mistakes (a HINT_* template, or an entry of a HINT_* table), in the
# instructor's words: "3 students <sentence> (ana, ben, cai)". tests/test_class_report.py holds it to every id.
CLASS_MISTAKES = {
    "HINT_ACCUMULATE": "added into a leaf's .grad in place, into an array a rule returned and shared with other nodes",
    "HINT_ADAM": "got Adam's step wrong in a way no known mistake matches",
    "HINT_ADD": "got the backward rule of + wrong in a way no known mistake matches",
    "HINT_ADD_CONSTANT": "gave a constant added to a Tensor a gradient, or got the Tensor's wrong",
    "HINT_AXIS_FORMS": "handled only some forms of axis (None, a negative int, a tuple) in a reduction's rule",
    "HINT_BACKWARD_SCALAR": "called backward() on a tensor of one value per example instead of on the loss",
    "HINT_BACKWARD_TWICE": "called backward() twice per batch, so every gradient counted twice",
    "HINT_CHAIN_RULE": "walked the graph out of reverse topological order, or dropped the gradient of a second use",
    "HINT_CKPT_EPOCHS": "ran every epoch again after resuming, instead of only those the checkpoint had not done",
    "HINT_CKPT_EPOCH_BEHIND": "saved an epoch count one behind the epochs finished, so a resumed run repeats one",
    "HINT_CKPT_EPOCH_INT": "returned the checkpoint's epoch as the 0-d array np.load gives, not an int",
    "HINT_CKPT_HISTORY": "returned only the new epochs' history after resuming, not the saved one before it",
    "HINT_CKPT_IGNORED": "ignored an existing checkpoint and trained afresh",
    "HINT_CKPT_MODEL": "resumed from the new model's own weights instead of the checkpoint's",
    "HINT_CKPT_NOT_FROM_FILE": "resumed from the weights kept in memory instead of those in the checkpoint file",
    "HINT_CKPT_NPZ": "let np.savez append '.npz', so the checkpoint was not at the path asked for",
    "HINT_CKPT_OPTIMIZER": "left the optimizer's state out of the checkpoint, so the momentum restarted on resuming",
    "HINT_CKPT_SAVE": "did not save a checkpoint after every epoch at the path asked for",
    "HINT_CKPT_SAVED_EARLY": "saved the checkpoint before the epoch's losses were recorded",
    "HINT_CKPT_STATE": "saved a checkpoint whose model or optimizer state is not the one after that epoch",
    "HINT_CLIP": "got clip_grad_norm's scaling wrong in a way no known mistake matches",
    "HINT_CLIP_AFTER": "returned the gradient norm after clipping instead of before",
    "HINT_CLIP_ALWAYS": "scaled gradients whose norm was already within max_norm",
    "HINT_CLIP_EPSILON": "scaled by max_norm / total without torch's 1e-6",
    "HINT_COST_FORMULA": "wrote a rule with a Python loop over the elements or finite differences, too slow",
    "HINT_COST_MATMUL": "computed @'s gradients with a loop per entry or finite differences, too slow",
    "HINT_DIV": "got the backward rule of / wrong in a way no known mistake matches",
    "HINT_DIV_CONSTANT": "got the gradient of a constant divided by a Tensor wrong",
    "HINT_DOUBLED": "returned gradients twice the right ones (counted twice, or not cleared)",
    "HINT_ENGINE_ERRORS": "raised the wrong error, or none, for a backward() PyTorch refuses",
    "HINT_ENGINE_KEY_ERROR": "looked up a node's gradient before any was stored for it (the walk's order is wrong)",
    "HINT_EVAL_MODE": "evaluated without switching the model to eval mode",
    "HINT_EVAL_NO_GRAD": "evaluated with gradient recording on",
    "HINT_EXP": "got the backward rule of exp wrong in a way no known mistake matches",
    "HINT_FIT_E2E_REPLAY": "reached the noise floor by another run than the lesson's (the replay did not match)",
    "HINT_FIT_E2E_TWICE": "counted every batch's gradient twice in the lesson's run (a second backward())",
    "HINT_FIT_OPTIONS": "did not pass fit's accumulate and clip_norm on to train_epoch",
    "HINT_GRAD_0D": "stored a numpy scalar, not a 0-d array, as a 0-d leaf's .grad",
    "HINT_GRAD_COPY": "stored the caller's array itself as a leaf's .grad, not a copy",
    "HINT_GRAD_DTYPE": "kept a given grad in its own dtype (float32, float16, bool) instead of float64",
    "HINT_GRAD_FLOAT": "stored integer gradients as a leaf's .grad instead of float64",
    "HINT_GRAD_FORMS": "accepted only some forms of the grad given to backward() (a Tensor, a list, an int array)",
    "HINT_GRAD_MODE_BACK": "left grad mode off after the no_grad block",
    "HINT_LEAF_ROOT": "refused backward() on a leaf that requires grad, where PyTorch gives it a grad of 1",
    "HINT_LOADER_COVERAGE": "yielded some examples more than once, or not at all, in an epoch",
    "HINT_LOADER_DROP_LAST": "kept the last, smaller batch with drop_last=True",
    "HINT_LOADER_EXAMPLES": "shuffled the order of the batches, each batch the same run of examples every epoch",
    "HINT_LOADER_FRESH": "shuffled once in __init__, so every epoch came in the same order",
    "HINT_LOADER_KEEP_DATA": "shuffled the caller's X and Y in place instead of an index order",
    "HINT_LOADER_KEEP_LAST": "dropped the last, smaller batch without drop_last",
    "HINT_LOADER_LENGTH": "gave the loader a length other than its number of batches",
    "HINT_LOADER_NO_GRAD": "made the data's Tensors require grad",
    "HINT_LOADER_ORDER": "yielded the examples out of order with shuffle=False",
    "HINT_LOADER_PAIRS": "indexed X and Y with different orders, so inputs lost their targets",
    "HINT_LOADER_PRECISION": "cast the data to float32",
    "HINT_LOADER_RNG": "shuffled with np.random's global functions or a new generator, not the loader's own",
    "HINT_LOADER_ROWS": "indexed something other than whole rows of the data",
    "HINT_LOADER_SHUFFLE": "did not draw a fresh permutation from the loader's generator at every epoch",
    "HINT_LOADER_SLICES": "made batches other than consecutive slices of the index order",
    "HINT_LOADER_TOO_MANY": "went on yielding batches after every example had come",
    "HINT_LOG": "got the backward rule of log wrong in a way no known mistake matches",
    "HINT_LOSSES_KEPT": "kept the loss Tensors (and their graphs) alive instead of adding loss.item()",
    "HINT_LOSS_ARGS": "called loss_fn(target, prediction), the arguments swapped",
    "HINT_LOSS_BY_EXAMPLES": "averaged the losses over the examples instead of over the batches",
    "HINT_LOSS_DIVIDED": "recorded the loss after dividing it by accumulate",
    "HINT_MATMUL": "got the backward rule of @ wrong in a way no known mistake matches",
    "HINT_MEAN": "got mean's rule wrong (sum's rule, not divided by the number of elements averaged)",
    "HINT_MEAN_LOSS": "returned another average of the losses than the mean of the per-batch losses",
    "HINT_MODES_SEEN": "ran forwards in the wrong train or eval mode",
    "HINT_MUL": "got the backward rule of * wrong in a way no known mistake matches",
    "HINT_MUL_CONSTANT": "got the gradient of a Tensor times a constant wrong",
    "HINT_NEG": "got the sign of unary -'s rule wrong",
    "HINT_NEGATED": "returned gradients of the opposite sign",
    "HINT_NOT_CLIPPED": "never clipped the gradients when clip_norm was set",
    "HINT_NOT_COMPUTING": "waited without computing (a sleep, input(), a blocking read) until the backstop stopped it",
    "HINT_NOT_DIVIDED": "did not divide the micro-batch losses by accumulate",
    "HINT_NOT_SUMMED": "returned a gradient in the broadcast shape, never summed back to the input's",
    "HINT_NO_GRAD": "did not restore the previous grad mode after no_grad (no finally, or mode not kept)",
    "HINT_NO_ZERO_GRAD": "never cleared the gradients between batches",
    "HINT_OPTIM_KEYS": "keyed the optimizer's state otherwise than optim.py says",
    "HINT_OPTIM_MISTAKES.aliased": "kept p.grad itself as the first momentum buffer, not a copy",
    "HINT_OPTIM_MISTAKES.ascent": "added the step to the parameters (gradient ascent)",
    "HINT_OPTIM_MISTAKES.decay_after": "added weight decay after the momentum buffer instead of before",
    "HINT_OPTIM_MISTAKES.decay_ignored": "ignored weight decay",
    "HINT_OPTIM_MISTAKES.decoupled_decay": "decayed the parameters directly (AdamW's decay) in Adam",
    "HINT_OPTIM_MISTAKES.ema": "averaged the momentum buffer with (1 - momentum), from a zero start",
    "HINT_OPTIM_MISTAKES.ema_from_d": "averaged the momentum buffer with (1 - momentum)",
    "HINT_OPTIM_MISTAKES.eps_inside": "put Adam's eps inside the square root",
    "HINT_OPTIM_MISTAKES.fresh": "lost the optimizer's state in state_dict() or load_state_dict()",
    "HINT_OPTIM_MISTAKES.momentum_ignored": "ignored the momentum buffer",
    "HINT_OPTIM_MISTAKES.no_bias_correction": "left out Adam's bias correction",
    "HINT_OPTIM_MISTAKES.none_not_skipped": "updated parameters whose grad is None as if it were zero",
    "HINT_OPTIM_MISTAKES.shared_step": "counted Adam's steps for the whole optimizer, not per parameter",
    "HINT_OPTIM_STATE": "put something other than arrays and numbers in the optimizer's state_dict()",
    "HINT_OP_MISTAKES.div_no_numerator": "left the numerator x out of /'s gradient for y",
    "HINT_OP_MISTAKES.exp_unchanged": "passed g on unchanged through exp, never multiplying by exp's derivative",
    "HINT_OP_MISTAKES.forgets_g": "returned the local derivative alone, never multiplied by g (the chain rule)",
    "HINT_OP_MISTAKES.log_multiplied": "multiplied by x in log's rule where it divides by x",
    "HINT_OP_MISTAKES.mul_x_by_itself": "multiplied x's gradient by x itself instead of by the other factor",
    "HINT_OP_MISTAKES.mul_y_by_itself": "multiplied y's gradient by y itself instead of by the other factor",
    "HINT_OP_MISTAKES.pow_not_lowered": "did not lower the power by one in **'s rule",
    "HINT_OP_MISTAKES.relu_at_zero": "let relu's gradient pass at exactly x = 0, where PyTorch's slope is 0",
    "HINT_OP_MISTAKES.sigmoid_half": "left the factor (1 - out) out of sigmoid's derivative",
    "HINT_OP_MISTAKES.sigmoid_of_input": "used the input x where sigmoid's rule needs its output",
    "HINT_OP_MISTAKES.square_mean_no_two": "left the square's factor 2 out of square_mean's rule",
    "HINT_OP_MISTAKES.square_mean_not_divided": "did not divide square_mean's rule by the number of elements",
    "HINT_OP_MISTAKES.tanh_not_squared": "used tanh's output in its rule without squaring it",
    "HINT_OP_MISTAKES.tanh_of_input": "used the input x where tanh's rule needs its output",
    "HINT_POW": "got the backward rule of ** wrong in a way no known mistake matches",
    "HINT_RECURSION": "found the topological order by recursion, which fails on a deep graph",
    "HINT_RELU": "got relu's rule wrong in a way no known mistake matches",
    "HINT_RELU_AT_ZERO": "gave relu a slope other than 0 at exactly x = 0",
    "HINT_RELU_MASK": "masked relu's gradient wrongly, at negative inputs too",
    "HINT_RESHAPE": "scaled or reordered the gradient in reshape's rule instead of only reshaping it back",
    "HINT_RESTORE_MODE": "did not restore the model's previous mode at the end",
    "HINT_RESTORE_ON_ERROR": "left the model in eval mode when the loader raised (no finally)",
    "HINT_RULE_WROTE_INTO_G": "wrote into g inside a backward rule, changing it for every other rule",
    "HINT_SEED": "did not seed an implicit grad with ones, or assigned .grad instead of adding into it",
    "HINT_SGD": "got plain SGD's step wrong in a way no known mistake matches",
    "HINT_SGD_BUFFER": "kept lr inside the momentum buffer (the Sutskever form), unlike torch's buffer",
    "HINT_SGD_MOMENTUM": "got SGD's momentum or weight decay wrong in a way no known mistake matches",
    "HINT_SHAPE_OF_OUTPUT": "returned a gradient in the output's shape instead of the input's",
    "HINT_SHAPE_REVERSED": "returned gradients with their shape's axes reversed",
    "HINT_SHARED_GRAPH": "freed the graph after one backward() and silently stopped a second one at a walked node",
    "HINT_SIGMOID": "got sigmoid's rule wrong in a way no known mistake matches",
    "HINT_SIGMOID_EXTREMES": "wrote sigmoid's slope with exp(-x), which gives nan for large negative x",
    "HINT_SKIP_NONE": "did not skip parameters whose grad is None",
    "HINT_SQUARE_MEAN": "got square_mean's rule wrong in a way no known mistake matches",
    "HINT_STALE_GRAD": "did not clear the gradients left on the parameters before the epoch's first backward",
    "HINT_STEPS": "stepped the optimizer another number of times than the batches ask for",
    "HINT_STEP_KEEPS_GRAD": "changed p.grad in step() (weight decay added into it in place)",
    "HINT_STEP_PER_BATCH": "stepped once per epoch instead of once per batch",
    "HINT_STEP_PER_GROUP": "did not step once per group of accumulated batches (or missed the last, smaller group)",
    "HINT_SUB": "got the backward rule of - wrong in a way no known mistake matches",
    "HINT_SUB_CONSTANT": "got the gradient of a difference with a constant wrong (a sign, or a constant's gradient)",
    "HINT_SUM": "got sum's rule wrong (the summed axes not put back before broadcasting)",
    "HINT_T": "did not reverse the axes back in .T's rule",
    "HINT_TANH": "got tanh's rule wrong in a way no known mistake matches",
    "HINT_TORCH_EVAL": "validated in fit_torch without model.eval()",
    "HINT_TORCH_GRAD": "left torch.no_grad() around more than the validation loop",
    "HINT_TORCH_MOVE_BATCHES": "left batches on the CPU while the model was on the device",
    "HINT_TORCH_MOVE_MODEL": "left the model on the CPU while the batches were on the device",
    "HINT_TORCH_NEVER_STEPPED": "never moved the parameters in fit_torch (no step, or a step before backward())",
    "HINT_TORCH_NOT_MOVED": "moved neither the model nor the batches to the device given",
    "HINT_TORCH_NO_GRAD": "validated in fit_torch without torch.no_grad()",
    "HINT_TORCH_OWN_TENSOR": "made a tensor of their own on the CPU that met the device's tensors",
    "HINT_TORCH_TRAIN": "did not switch back to model.train() at the start of each epoch in fit_torch",
    "HINT_TORCH_ZERO_GRAD": "never called optimizer.zero_grad() in fit_torch",
    "HINT_TORCH_ZERO_GRAD_EPOCH": "cleared the gradients once an epoch instead of once a batch in fit_torch",
    "HINT_TRAIN_MODE": "did not call model.train() at the start of train_epoch",
    "HINT_TRANSPOSED": "returned the transpose of the right gradient (the factors of @ on the wrong side)",
    "HINT_UNBROADCAST": "got unbroadcast wrong in a way no known mistake matches",
    "HINT_UNBROADCAST_COST": "wrote unbroadcast with a Python loop over the elements, too slow",
    "HINT_ZERO": "returned all-zero gradients: the gradient never reached that input",
}
