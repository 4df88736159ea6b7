"""Tasks 3 and 4: the optimizers and the DataLoader (graders/judge/checks/optim.py and data.py), and the classic
optimizer mistakes, each named when a whole trajectory matches it.
"""

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
