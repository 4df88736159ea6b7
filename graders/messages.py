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
GRADE_DEADLINE = ("Task {task} ({title}): the whole grade reached its deadline of {seconds:g} s before this task "
                  "finished, so it stopped here.\n"
                  "  hint: every answer came in time, but all of them together took too long: look for Python loops "
                  "over array elements where one numpy operation would do")
TIMED_OUT = ("Task {task} ({title}): no answer within {seconds:g} s while {doing}.\n"
             "  hint: an infinite loop, a blocking call, or work that grows exponentially with the graph")
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
                "arrays returns numpy scalars, so store np.asarray(...) of the sum")
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
LOSSES_KEPT_NOT_SEEN = ("whether train_epoch lets each batch's loss Tensor (and its graph) go, keeping "
                        "loss.item(): no number shows it")

# Classic mistakes, named when the numbers show them.
HINT_DOUBLED = ("yours is exactly twice the expected value: "
                "a gradient counted twice (assigned and then added, or not cleared)")
HINT_NEGATED = "yours is exactly the negative of the expected value: a sign is flipped"
HINT_TRANSPOSED = "yours is the expected value transposed: check which side of @ each factor goes, and .T"
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
                  "stopped at 4 times its limit, {limit:g} times {base} (at least {floor:g} s).\n"
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
ORACLE_TIMED_OUT = "the given {oracle} your {caller} asked for did not finish within the request's deadline"
ORACLE_OUT_OF_MEMORY = "the given {oracle} your {caller} asked for ran out of its memory ({limit})"
ORACLE_STOPPED = "the given {oracle} your {caller} asked for stopped before answering ({why})"
ORACLE_HINT_FIT = ("fit trains the model, loader and optimizer it is given: one train_epoch(model, train_loader, "
                   "optimizer, loss_fn, ...) per epoch, and evaluate(model, val_loader, loss_fn) after it when there "
                   "is a val_loader")
ORACLE_HINT_RULE = "call unbroadcast(g, x.shape): the gradient of the output, and the shape of the input it is for"

TOTAL = "total {score:g}/{max_score:g} ({examples:,} Hypothesis examples{timing})"

# ----- Tasks 1.1-1.8: the backward rules (graders/judge/checks/ops.py), one hint per line of its op table -----
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
HINT_NOT_CLIPPED = ("the weights match a run without clipping: with clip_norm set, call "
                    "clip_grad_norm(model.parameters(), clip_norm) after the backward passes and before each step")
HINT_LOSS_DIVIDED = "yours is the expected value divided by accumulate: record loss.item() before the division"
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
                     "  hint: where fit itself passed (the rungs above), look at your engine, optimizer and "
                     "DataLoader (tasks 1-4 grade each one)")

FIT_E2E_REPLAY = ("the judge's replay of the same run: torch, float64, from the same initial weights (drawn "
                  "from default_rng({seed}) as nn.Linear draws them), SGD lr={lr:g} over the batches your DataLoader "
                  "yielded, epoch by epoch")
FIT_E2E_REPLAY_INPUTS = ("  the lesson's run ({setup}); the judge noted which of the {n} points each of your "
                         "DataLoader's batches held, and replayed the run over them")
HINT_FIT_E2E_REPLAY = ("a correct stack reproduces the replay to about 1e-15; weights that reach the noise floor "
                       "another way (another run, or a shortcut) are not the lesson's run. Where fit itself passed "
                       "(the rungs above), look at your engine and optimizer (tasks 1-3 grade each one)")
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
TORCH_SOURCE = "the reference fit_torch on {device!r}, same weights and batches"
TORCH_MOVES_NOT_SEEN = ("whether fit_torch moves the model and every batch with .to(device): on the CPU a "
                        "move changes nothing the grader can see, so it is graded in 6.2, on CUDA")
TORCH_DEVICE_NOT_SEEN = ("whether fit_torch computed on the GPU: the .to() calls checked here are noted inside the "
                         "process that runs your code, and float64 results agree on both devices, so nothing the "
                         "grader sees from outside shows where the work was done")
TORCH_MODEL_NOT_MOVED = ("Task {task} ({title}): fit_torch never called model.to({device!r}) (the .to() calls "
                         "seen: {calls}).\n  hint: move the model once, before training: model.to(device)")
TORCH_BATCH_NOT_MOVED = ("Task {task} ({title}): {count} of the {total} batch tensors the loaders yielded were "
                         "never moved with .to({device!r}) (the first: {which}).\n"
                         "  hint: move every batch, inputs and targets, in training and in validation, with "
                         ".to(device), as the model")
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
# How workers start (graders.isolation.forkserver.describe) and the budgets over a grade
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
COURSE_BAD_ASSIGNMENT = "got assignment={assignment!r}, expected a name of letters, digits, '_', '-' or '.'"
NOTEBOOK_NOT_GRADED = ("The grader could not grade the files in {folder}: {why}\n"
                       "Every task scores 0 here; please tell your instructor.")
NOTEBOOK_JUDGE_SILENT = "the judge said nothing for {seconds:g} s, so it was stopped"
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
BATCH_TIMED_OUT = "timed out: no result within {seconds:g} s, so its judge was stopped"
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
MERGE_NO_CSV = "{folder}: no grades.csv in it (expected a folder that `autograd-lab grade-all --out` wrote)"
MERGE_COLUMNS = ("{path}: its columns ({got}) differ from those of {first} ({expected}); "
                 "were the shards graded with the same --tasks?")
MERGE_DUPLICATE = ("{student} is in both {first} and {second}: were the shards given different slices "
                   "(--shard 1/N ... N/N) of the same N?")
MERGE_ISOLATION = ("{path}: {student} was graded under the isolation {got}, expected {expected}: a grade that counts "
                   "runs in bubblewrap, or with --isolation limits as root; grade that shard again where "
                   "`autograd-lab doctor` says grades that count can run")
MERGE_OUT_IS_INPUT = "{out} is one of the folders to merge; write the merged gradebook elsewhere"
MERGE_DONE = "merge: {students} student(s) from {folders} folder(s)\nwrote {csv}"

NO_PICTURES = "pictures skipped: matplotlib is not installed (pip install 'autograd-lab[plots]')"
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

EXAMPLES_WRITTEN = "{out}: wrote {files}"
EXAMPLES_EXIST = "{path} exists; pass --force to replace it"
NEEDS_CHECKOUT = ("{command} needs the autograd-lab repository, and {path} is missing: run it from a git "
                  "checkout installed with `pip install -e .`")
GRADESCOPE_OR_WHEEL = " (or pass the package's wheel with --wheel FILE)"
GRADESCOPE_NO_WHEEL = "{wheel}: not an autograd-lab wheel (autograd_lab-*.whl)"
RELEASE_NOT_EMPTY = "{out} exists and is not empty; pass --force to write the bundle into it anyway"
RELEASE_WRITTEN = ("{out}: the student bundle, {count} files: exercises/ (stubs, public tests, README) and "
                   ".github/workflows/autograde.yml; no solutions, no graders")
GRADESCOPE_WRITTEN = "{zip}: a Gradescope autograder ({kib:,} KiB): setup.sh, run_autograder and {wheel}"
GRADESCOPE_BUILD_FAILED = "building the wheel failed (pip wheel, exit status {code}):\n{output}"
GRADESCOPE_NOT_GRADED = ("The autograder could not grade this submission: {why}\n"
                         "Upload the .py files of exercises/ (tensor.py, optim.py, data.py, train.py, torch_loop.py), "
                         "or a .zip of the folder that holds them.")
GRADESCOPE_REFUSED = ("The autograder did not grade this submission: it grades only inside its sandbox, which "
                      "cannot start here. This is not your mistake: please tell your instructor. ({why})")
GRADESCOPE_CRASHED = ("The autograder itself failed ({error}). This is not your mistake: please tell your "
                      "instructor.")
CLASSROOM_TEST_CODE = "autograd-lab grade exercises/ --tasks {task}"

# ----- grading under pytest (graders.integrations.pytest_plugin): what it adds to pytest's output -----
# (a task's own text is the judge's message, as the scorecard shows it)
PYTEST_HEADER = ("autograd-lab: grading {submission} · examples: {examples} · isolation: {isolation} · "
                 "no conftest.py loaded")
PYTEST_TOTAL = "autograd-lab: {score:g}/{max_score:g} points ({tasks} task{s})"
PYTEST_NOT_GRADED = "autograd-lab: {error}"
PYTEST_INSIDE_SUBMISSION = ("--autograd-lab-submission {submission}: the {what} {path} lies inside the submission, "
                            "whose files must never configure pytest: run pytest from a folder of yours, naming no "
                            "path inside the submission")
