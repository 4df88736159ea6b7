"""Every sentence a student or instructor reads from the graders, in one place.

A failure message is the whole report: the task and op, the inputs, theirs,
the expected value and where it came from, the tolerance, one hint line.
At most about a dozen lines, in the student's terms, never grader source.
Tests import these templates and pin the rendered text.
"""

from __future__ import annotations

import numpy as np

NOT_ATTEMPTED = "Task {task} not attempted yet: {what} ({file} still raises NotImplementedError)."
NEEDS_OTHER_TASK = "Task {task} not attempted yet: it needs {what}, which still raises NotImplementedError."
MISSING_FILE = "Task {task}: {file} is missing from the submission."
RAISED = "Task {task} ({title}): {doing} raised {error}"
RAISED_AT = "  at {where}"
DIED = "Task {task} ({title}): the student process died while {doing}."
LAST_WORDS = "  its last line on stderr: {line}"
TIMED_OUT = ("Task {task} ({title}): no answer within {seconds:g} s while {doing}.\n"
             "  hint: an infinite loop, a blocking call, or work that grows exponentially with the graph")
WRONG_KIND = "Task {task} ({title}): {what} is {got}, expected {expected}."
WRONG_VALUE_HEAD = "Task {task} ({title}): wrong {what}"
EXPECTED_FROM = "  expected = {value}   ({source})"
YOURS = "  yours    = {value}"
LARGEST_ERROR = "  largest error {error:.3g} at index {index}, where {allowed:.2g} is allowed"
HINT = "  hint: {hint}"
SKIPPED_NO_CUDA = "Task {task} ({title}): skipped, no CUDA device on the grading machine (carries no points)."
PASSED = "Task {task} ({title}): passed."

# Classic mistakes, named when the numbers show them.
HINT_DOUBLED = ("yours is exactly twice the expected value: "
                "a gradient counted twice (assigned and then added, or not cleared)")
HINT_NEGATED = "yours is exactly the negative of the expected value: a sign is flipped"
HINT_TRANSPOSED = "yours is the expected value transposed: check which side of @ each factor goes, and .T"
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
    return {"task": task.id, "title": task.title, **fields}


def lines(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def diagnose(yours: np.ndarray, expected: np.ndarray) -> str | None:
    """A hint when the numbers match a classic mistake, else None."""
    if yours.shape != expected.shape:
        if yours.shape == expected.T.shape and expected.ndim == 2 and yours.shape != expected.shape:
            return HINT_TRANSPOSED
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

COSTLY = ("Task {task} ({title}): the backward rule of a ({n}, {n}) @ ({n}, {n}) product took {ratio:.0f} times "
          "the forward's CPU time; at most {limit:g} is allowed.\n"
          "  hint: use the formula (g @ b.T and a.T @ g), not finite differences")
GRADER_ERROR = ("Task {task} ({title}): the grader itself failed ({error}). "
                "This is not your mistake: please tell your instructor.")
TOTAL = "total {score:g}/{max_score:g} ({examples:,} Hypothesis examples{timing})"

# ----- Tasks 5 and 6: the training loop -----
LOOP_MODE = "Task {task} ({title}): {where}, {subject} was {got}, expected {expected}.\n  hint: {hint}"
LOOP_STEPS = ("Task {task} ({title}): the optimizer stepped {got} time(s) over {batches} batches{grouping}, "
              "expected {expected}.\n  hint: {hint}")
LOOP_GRAPHS_KEPT = ("Task {task} ({title}): while later batches ran, {alive} earlier batches' loss Tensors were "
                    "still alive (at most 1 may be: the previous batch's `loss`), each holding its whole graph.\n"
                    "  hint: record loss.item(), a float, never the loss Tensor "
                    "(no losses.append(loss), no total = total + loss)")
LOOP_SETUP_MODEL = "  model {model}, {n} examples in batches of {batch_size} ({batches} batches, {order})"
LOOP_SETUP_OPTIM = "  {optimizer}, MSELoss(){options}"
LOOP_SETUP_START = "  before the epoch: the model in eval mode, and stale grads (all {stale:g}) on every parameter"
LOOP_SETUP_FIT = "  {epochs} epochs{val}"
LOOP_SETUP_VAL = ", a val_loader over {n} other examples"
LOOP_REFERENCE = "the reference {function} over the same weights and batches"
LOOP_WEIGHTS_BEFORE = "the weights before evaluate"
LOOP_OWN_RUN = ("your own uninterrupted fit over the same batches; it differs from the reference fit, "
                "which task 5.4 reports")
LOOP_FLOAT = "a Python float ({how})"
LOOP_HISTORY = 'a dict {"train_loss": [...], "val_loss": [...]}'

HINT_TRAIN_MODE = "call model.train() at the start of train_epoch: the model may arrive in eval mode"
HINT_TRAIN_GRAD = "run the training forward passes with grad mode on (not inside no_grad()), so backward has a graph"
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
HINT_GRAD_MODE_BACK = "use `with no_grad():`, which turns grad mode back on when the block ends"

CLIP_REPLACED = ("Task {task} ({title}): clip_grad_norm gave parameter {index} a new grad array, expected its own "
                 "array scaled in place.\n"
                 "  hint: multiply in place (g *= scale), as torch.nn.utils.clip_grad_norm_ does")
CLIP_INPUTS = "  grads {grads}, max_norm={max_norm!r}"
CLIP_SOURCE = "torch.nn.utils.clip_grad_norm_, float64"
HINT_CLIP = "total = sqrt(sum of every squared grad entry); each grad *= min(1, max_norm / (total + 1e-6))"
HINT_CLIP_EPSILON = ("yours is scaled by max_norm / total: torch adds 1e-6, "
                     "scale = min(1, max_norm / (total + 1e-6))")
HINT_CLIP_ALWAYS = ("yours is scaled although the norm is within max_norm: the scale is "
                    "min(1, max_norm / (total + 1e-6)), so a short gradient is left alone")
HINT_CLIP_AFTER = "yours is the norm after clipping: return the total norm from before the scaling"

FIT_E2E_MISSING = ("Task {task} ({title}): the end-to-end rung trains the lesson's network on your whole stack "
                   "(tensor.py, optim.py, data.py and train.py), and {file} is missing from the submission.")
FIT_E2E_DOING = "training the lesson's network on your whole stack ({setup})"
FIT_E2E_SETUP = "1-32-1 ReLU, SGD lr={lr:g}, shuffled batches of {batch_size}, {epochs} epochs"
FIT_E2E_ABOVE_BAR = ("Task {task} ({title}): after the lesson's run on your whole stack ({setup}), the training MSE "
                     "of your final weights is {mse:.4f}, expected below {bar:g} (1.5 x the noise floor "
                     "{floor:g}; the lesson's engine reaches 0.0127).\n"
                     "  the grader computed this MSE from the weights your run returned, on the lesson's "
                     "{n} points\n"
                     "  hint: fit passed on the reference engine, so look at your engine, optimizer and DataLoader "
                     "(tasks 1-4 grade each one)")

CKPT_NOT_AT_PATH = ("Task {task} ({title}): after fit(..., checkpoint={path!r}) there is no file at {path!r}; "
                    "{found}.\n  hint: {hint}")
CKPT_FOUND = "the folder holds {names}"
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
HINT_CKPT_OPTIMIZER = ("the resumed run matches one whose optimizer started afresh: save optimizer.state_dict() "
                       "and load it into the new optimizer, so the momentum buffers carry on")
HINT_CKPT_EPOCHS = ("epochs is the total number of epochs: after loading, run only those the checkpoint has not "
                    "done (this run did all {epochs} again)")
HINT_CKPT_HISTORY = ("return the whole history: the epochs saved in the checkpoint, then the new ones "
                     "(and save the history in the checkpoint)")

TORCH_SETUP = ("  model MLP 1-{hidden}-1 float64, {n} examples in batches of {batch_size} ({batches} batches), "
               "{n_val} for validation, SGD(lr={lr:g}, momentum={momentum:g}), MSELoss(), {epochs} epochs, "
               "device={device!r}")
TORCH_SOURCE = "the reference fit_torch on {device!r}, same weights and batches"
TORCH_MODEL_NOT_MOVED = ("Task {task} ({title}): fit_torch never called model.to({device!r}) (the .to() calls "
                         "seen: {calls}).\n  hint: move the model once, before training: model.to(device)")
TORCH_BATCH_NOT_MOVED = ("Task {task} ({title}): {count} of the {total} batch tensors the loaders yielded were "
                         "never moved with .to({device!r}) (the first: {which}).\n"
                         "  hint: move every batch, inputs and targets, in training and in validation: "
                         "xb, yb = xb.to(device), yb.to(device)")
HINT_TORCH_TRAIN = "call model.train() at the start of every epoch: validation left the model in eval mode"
HINT_TORCH_EVAL = "call model.eval() before the validation loop"
HINT_TORCH_NO_GRAD = "run the validation loop inside `with torch.no_grad():`"
HINT_TORCH_GRAD = "keep torch.no_grad() around the validation loop only"
HINT_TORCH_ZERO_GRAD = ("the run matches one that never clears gradients: call optimizer.zero_grad() before each "
                        "backward")

# ----- nbgrader: the course builder and the notebook's cells -----
COURSE_WRITTEN = ("{course}: wrote {files}\n"
                  "next: cd {course} && nbgrader generate_assignment {assignment} (graders/NBGRADER.md has every step)")
COURSE_CONFIG_CHANGED = ("{path} differs from the configuration this command writes (edited by hand?); "
                         "left as it is: pass --force to replace it")
COURSE_BAD_ASSIGNMENT = "got assignment={assignment!r}, expected a name of letters, digits, '_', '-' or '.'"
NOTEBOOK_NOT_GRADED = ("The grader could not grade the files in {folder}: {why}\n"
                       "Every task scores 0 here; please tell your instructor.")
NOTEBOOK_JUDGE_TIMEOUT = ("The grader did not finish within {seconds:g} s on these files. "
                          "Every task scores 0 here; please tell your instructor.")
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
