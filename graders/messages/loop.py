"""Task 5: the training loop (graders/judge/checks/loop.py, trajectory.py and checkpoint.py): train_epoch's and
evaluate's modes, steps and losses, clipping, the end-to-end rung on the whole stack, and the checkpoint.
"""

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
