"""Tasks 6.1-6.2: fit_torch against the expected run, on the CPU and on CUDA.

The worker runs the student's torch_loop.py (package sub_torch_loop) on a
probed float64 MLP, over loaders whose batches note their own ``.to()``
calls; the judge computes the expected run with torch (``trajectory.Run``, in
torch.nn.Linear's layout) on the same weights, batches and device. 6.1 and
6.2 are one check: only the device differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graders import messages as msg
from graders.judge import reference
from graders.judge.checks.base import CheckFailed, Context, Skip, Tolerance
from graders.judge.checks.loop import known_mistake, read_history, read_params
from graders.lesson import make_sine_data

TOL = Tolerance(rtol=1e-9, atol=1e-12)
TIMEOUT = {"cpu": 20.0, "cuda": 60.0}  # the first request imports torch (and initialises CUDA)
# What the worker's probe model adds to its network's output in training mode and while grad mode is on
# (graders/worker/verbs_torch.py; the judge and the worker share no code): the modes show in the numbers.
TRAINING_SHIFT, GRAD_SHIFT = 0.125, 0.25


@dataclass(frozen=True)
class TorchSetup:
    """Task 6's run, which both sides build: a one-hidden-layer MLP on the lesson's sine data, its batches, SGD with
    momentum and the number of epochs. Three batches a loader, the last one smaller (16, 16, 12), so a mean taken
    the wrong way shows: over the examples, or over one batch."""
    hidden: int = 16
    n: int = 44  # a last batch of 12: with equal batches the mean of the batch losses is the examples' mean too
    n_val: int = 44  # three validation batches: one would hide how their losses are averaged
    batch_size: int = 16
    lr: float = 0.05
    momentum: float = 0.9
    epochs: int = 3
    seed: int = 0

    def data(self):
        """The training inputs and targets, and the validation pair after them, drawn from the lesson's sine data with
        this setup's seed."""
        X, Y = make_sine_data(n=self.n + self.n_val, seed=self.seed)
        return X[:self.n], Y[:self.n], (X[self.n:], Y[self.n:])

    def state(self) -> dict[str, np.ndarray]:
        """Weights in torch's layout, drawn like torch's default Linear."""
        rng = np.random.default_rng(self.seed)
        bound = 1.0 / np.sqrt(self.hidden)
        return {"0.weight": rng.uniform(-1.0, 1.0, (self.hidden, 1)), "0.bias": rng.uniform(-1.0, 1.0, self.hidden),
                "2.weight": rng.uniform(-bound, bound, (1, self.hidden)), "2.bias": rng.uniform(-bound, bound, 1)}

    def batches(self, X, Y) -> list[tuple[np.ndarray, np.ndarray]]:
        """(X, Y) cut into batches of batch_size in order, as the worker's loaders yield them."""
        return [(X[i:i + self.batch_size], Y[i:i + self.batch_size]) for i in range(0, len(X), self.batch_size)]

    def lines(self, device: str) -> list[str]:
        """The message line that describes this run on ``device``, so a student can rebuild it."""
        return [msg.TORCH_SETUP.format(batches=-(-self.n // self.batch_size), device=device, loss=msg.LOSS_WEIGHTED,
                                       **vars(self))]


def reference_run(setup: TorchSetup, device: str, zero_grad: str = "each", swapped: bool = False):
    """(history, final parameters) of the expected run on the same weights and batches, with LOSS_WEIGHTED;
    ``zero_grad="never"`` and ``swapped`` (loss_fn(target, prediction)) model known mistakes."""
    X, Y, val = setup.data()
    from graders.judge.checks.trajectory import Run  # imports torch

    # training forwards in train mode with grad on, validation ones in eval mode under no_grad: 3 and 0 added
    run = Run(list(setup.state().values()), lr=setup.lr, momentum=setup.momentum, layout="torch", device=device,
              offset=TRAINING_SHIFT + GRAD_SHIFT, eval_offset=0.0)
    history = run.fit([setup.batches(X, Y)] * setup.epochs, "weighted", val=setup.batches(*val),
                      zero_grad=zero_grad, swapped=swapped)
    return history, run.weights()


def on(device: str, value) -> bool:
    """Whether the device the worker saw in a .to() call ("cuda:0", "cpu", or None) is of type ``device``."""
    return isinstance(value, str) and value.split(":")[0] == device


MODE_HINTS = {("training", 0): msg.HINT_TORCH_TRAIN, ("training", 1): msg.HINT_TORCH_GRAD,
              ("validation", 0): msg.HINT_TORCH_EVAL, ("validation", 1): msg.HINT_TORCH_NO_GRAD}


def check_torch_modes(ctx: Context, forwards: list) -> None:
    """Training forwards in train mode with grad on; validation forwards in eval mode under no_grad, as the worker
    noted them: a plain message first. The notes are the submission's to rewrite, so they only ever cost: what
    earns the task is the numbers, which the probe's shifts tie to the modes."""
    words = ({True: "in train mode", False: "in eval mode"}, {True: "on", False: "off (no_grad)"})
    for index, (phase, *seen) in enumerate(forwards):
        wanted = phase == "training"
        for slot, subject in enumerate(("the model", "grad mode")):
            if bool(seen[slot]) != wanted:
                raise CheckFailed(msg.LOOP_MODE.format(
                    where=f"at forward {index + 1} (a {phase} batch)", subject=subject,
                    got=words[slot][bool(seen[slot])], expected=words[slot][wanted], hint=MODE_HINTS[phase, slot],
                    **msg.header(ctx.task)))


def check_fit_torch(ctx: Context, device: str, setup: TorchSetup = TorchSetup()) -> None:
    """Tasks 6.1 and 6.2 on ``device``: fit_torch's history and final parameters against torch's run of the same fit,
    after the forwards' modes (and, on CUDA, the moves) the worker noted, which can only cost the task."""
    X, Y, val = setup.data()
    answer = ctx.ask("fit_torch_watched", f"running fit_torch for {setup.epochs} epochs on device={device!r}",
                     timeout=TIMEOUT[device], package=ctx.task.route.package, task=ctx.task.id, state=setup.state(),
                     X=X, Y=Y, val=val, batch_size=setup.batch_size, lr=setup.lr, momentum=setup.momentum,
                     epochs=setup.epochs, device=device)
    history = read_history(ctx, answer.history, "fit_torch", {"train_loss": setup.epochs, "val_loss": setup.epochs})

    if device == "cpu":
        # The worker notes every .to() call, but student code runs there and can rewrite the notes: a note may
        # cost a point only where it has an effect the numbers show. On the CPU a move has none (docs/security.md).
        ctx.not_graded.append(msg.TORCH_MOVES_NOT_SEEN)
    else:
        check_moves(ctx, answer, device)  # can cost the task, never earn it: the notes are the worker's word
        ctx.not_graded.append(msg.TORCH_DEVICE_NOT_SEEN)
    check_torch_modes(ctx, answer.forwards)

    expected, params = ctx.expected(f"torch's fit_torch on {device}", reference_run, setup, device)
    names = list(setup.state())
    yours = read_params(ctx, answer.params, names, [p.shape for p in params], "after fit_torch")
    inputs, source = setup.lines(device), msg.TORCH_SOURCE.format(device=device)
    hint = None
    if not all(np.allclose(y, e, rtol=TOL.rtol, atol=TOL.atol) for y, e in zip(yours, params)):
        hint = known_mistake(yours, [
            (msg.HINT_TORCH_NEVER_STEPPED, lambda: list(setup.state().values())),
            (msg.HINT_TORCH_ZERO_GRAD_EPOCH, lambda: reference_run(setup, device, "epoch")[1]),
            (msg.HINT_TORCH_ZERO_GRAD, lambda: reference_run(setup, device, "never")[1]),
            (msg.HINT_LOSS_ARGS, lambda: reference_run(setup, device, swapped=True)[1])])
    for key in ("train_loss", "val_loss"):
        ctx.compare(history[key], np.array(expected[key]), f'history["{key}"]', inputs=inputs, source=source,
                    hint=hint, tol=TOL)
    for name, y, e in zip(names, yours, params):
        ctx.compare(y, e, f"{name} after fit_torch", inputs=inputs, source=source, hint=hint, tol=TOL)


def check_moves(ctx: Context, answer, device: str) -> None:
    """The model and every batch moved to ``device``, as the worker noted them: a plain message for the mistake
    whose effect (torch's error for tensors on two devices) the numbers would show less plainly."""
    if not any(on(device, d) for d in answer.model_to):
        calls = ", ".join(f".to({d!r})" for d in answer.model_to) or "none"
        raise CheckFailed(msg.TORCH_MODEL_NOT_MOVED.format(device=device, calls=calls, **msg.header(ctx.task)))
    moved = {number for number, d in answer.moves if on(device, d)}
    unmoved = [label for number, label in enumerate(answer.yielded) if number not in moved]
    if unmoved:
        raise CheckFailed(msg.TORCH_BATCH_NOT_MOVED.format(count=len(unmoved), total=len(answer.yielded),
                                                           device=device, which=unmoved[0], **msg.header(ctx.task)))


def fit_torch_cpu(ctx: Context) -> None:
    """Task 6.1's check: fit_torch on the CPU."""
    check_fit_torch(ctx, "cpu")


def fit_torch_cuda(ctx: Context) -> None:
    """Task 6.2's check: fit_torch on CUDA, skipped (not failed) on a machine without a GPU, so the task costs a student
    nothing there."""
    if not reference.cuda_available():
        raise Skip(msg.SKIPPED_NO_CUDA.format(**msg.header(ctx.task)))
    check_fit_torch(ctx, "cuda")
