"""Tasks 6.1-6.2: fit_torch against the expected run, on the judge's device and on CUDA.

The worker runs the student's torch_loop.py (package sub_torch_loop) on a
probed float64 MLP, over loaders whose batches note their own ``.to()``
calls; the judge computes the expected run with torch (``trajectory.Run``, in
torch.nn.Linear's layout) on the same weights, batches and device. 6.1 and
6.2 are one check: only the device differs. 6.1's is the judge's device
(graders/worker/device.py: ``meta``, simulated on the CPU), on which a model or
batch left on the CPU fails as on a GPU, and on which the probe's output moves
by DEVICE_SHIFT, so that a run that moved nothing shows in the numbers. Then a
run of many batches whose losses each hold a block of memory on their graph:
the worker's memory, read from the kernel, shows loss Tensors kept alive.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from graders import messages as msg
from graders.judge import reference
from graders.judge.checks.base import CheckFailed, Context, Skip, Tolerance
from graders.judge.checks.loop import (
    BALLAST_MIB,
    MEMORY_BATCHES,
    check_losses_released,
    known_mistake,
    memory_doing,
    read_history,
    read_params,
)
from graders.lesson import make_sine_data

TOL = Tolerance(rtol=1e-9, atol=1e-12)
JUDGES_DEVICE = "meta"  # the device 6.1 runs on: graders/worker/device.py's NAME (the two share no code)
TIMEOUT = {JUDGES_DEVICE: 20.0, "cuda": 60.0}  # the first request imports torch (and initialises CUDA)
# What the worker's probe model adds to its network's output in training mode, while grad mode is on and when it
# computes on the judge's device (graders/worker/verbs_torch.py; the judge and the worker share no code): the modes
# and the device show in the numbers.
TRAINING_SHIFT, GRAD_SHIFT, DEVICE_SHIFT = 0.125, 0.25, 0.0625


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
        """The message lines that describe this run on ``device``, so a student can rebuild it."""
        return [msg.TORCH_SETUP.format(batches=-(-self.n // self.batch_size), device=device, loss=msg.LOSS_WEIGHTED,
                                       **vars(self))] + \
            ([msg.TORCH_JUDGES_DEVICE.format(device=device, shift=DEVICE_SHIFT)] if device == JUDGES_DEVICE else [])


def reference_run(setup: TorchSetup, device: str, zero_grad: str = "each", swapped: bool = False,
                  moved: bool = True, by_examples: bool = False):
    """(history, final parameters) of the expected run on the same weights and batches, with LOSS_WEIGHTED (on the
    judge's device: computed on the CPU, with the probe's DEVICE_SHIFT); ``zero_grad="never"``, ``swapped``
    (loss_fn(target, prediction)), ``moved=False`` (nothing moved to the judge's device) and ``by_examples`` (each
    epoch's losses averaged over the examples) model known mistakes."""
    X, Y, val = setup.data()
    from graders.judge.checks.trajectory import Run  # imports torch

    # training forwards in train mode with grad on, validation ones in eval mode under no_grad, each on the device
    on_device = DEVICE_SHIFT if device == JUDGES_DEVICE and moved else 0.0
    run = Run(list(setup.state().values()), lr=setup.lr, momentum=setup.momentum, layout="torch",
              device="cpu" if device == JUDGES_DEVICE else device, offset=TRAINING_SHIFT + GRAD_SHIFT + on_device,
              eval_offset=on_device)
    history = run.fit([setup.batches(X, Y)] * setup.epochs, "weighted", val=setup.batches(*val),
                      zero_grad=zero_grad, swapped=swapped, by_examples=by_examples)
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
    after the forwards' modes (and, on CUDA, the moves) the worker noted, which can only cost the task; then whether
    the loss Tensors were let go, by the worker's memory."""
    X, Y, val = setup.data()
    doing = f"running fit_torch for {setup.epochs} epochs on device={device!r}"
    answer = ctx.ask("fit_torch_watched", doing, timeout=TIMEOUT[device], package=ctx.task.route.package,
                     task=ctx.task.id, state=setup.state(), X=X, Y=Y, val=val, batch_size=setup.batch_size,
                     lr=setup.lr, momentum=setup.momentum, epochs=setup.epochs, device=device)
    if answer.raised is not None:  # on the judge's device: what it raised, and the notes that may name the move
        raise left_behind(ctx, answer, device) or ctx.student_error(answer.raised, doing, with_hint(answer.raised))
    if answer.history is None or answer.params is None:
        raise ctx.incomplete(doing)
    history = read_history(ctx, answer.history, "fit_torch", {"train_loss": setup.epochs, "val_loss": setup.epochs})

    if device == "cuda":
        check_moves(ctx, answer, device)  # can cost the task, never earn it: the notes are the worker's word
        ctx.not_graded.append(msg.TORCH_DEVICE_NOT_SEEN)
    check_torch_modes(ctx, answer.forwards)

    expected, params = ctx.expected(f"torch's fit_torch on {device}", reference_run, setup, device)
    names = list(setup.state())
    yours = read_params(ctx, answer.params, names, [p.shape for p in params], "after fit_torch")
    inputs, source = setup.lines(device), msg.TORCH_SOURCE.format(device=device)
    hint = None
    if not all(np.allclose(y, e, rtol=TOL.rtol, atol=TOL.atol) for y, e in zip(yours, params)):
        mistakes = [(msg.HINT_TORCH_NEVER_STEPPED, lambda: list(setup.state().values())),
                    (msg.HINT_TORCH_ZERO_GRAD_EPOCH, lambda: reference_run(setup, device, "epoch")[1]),
                    (msg.HINT_TORCH_ZERO_GRAD, lambda: reference_run(setup, device, "never")[1]),
                    (msg.HINT_LOSS_ARGS, lambda: reference_run(setup, device, swapped=True)[1])]
        if device == JUDGES_DEVICE:
            mistakes.append((msg.HINT_TORCH_NOT_MOVED, lambda: reference_run(setup, device, moved=False)[1]))
        hint = known_mistake(yours, mistakes)
    for key in ("train_loss", "val_loss"):
        ctx.compare(history[key], np.array(expected[key]), f'history["{key}"]', inputs=inputs, source=source,
                    hint=hint or history_hint(ctx, setup, device, key, history[key], expected[key]), tol=TOL)
    for name, y, e in zip(names, yours, params):
        ctx.compare(y, e, f"{name} after fit_torch", inputs=inputs, source=source, hint=hint, tol=TOL)
    check_losses_let_go(ctx, device)


def history_hint(ctx: Context, setup: TorchSetup, device: str, key: str, yours: np.ndarray, expected) -> str | None:
    """The hint for a history that the weights do not explain (they are right): losses averaged over the examples."""
    if np.allclose(yours, expected, rtol=TOL.rtol, atol=TOL.atol):
        return None
    by_examples, _ = ctx.expected(f"torch's fit_torch on {device} by examples", reference_run, setup, device,
                                  by_examples=True)
    if np.allclose(yours, by_examples[key], rtol=1e-9, atol=1e-12):
        return msg.HINT_LOSS_BY_EXAMPLES.format(function="fit_torch")
    return None


# The memory rung's run: many batches of a few examples, one epoch; each loss's graph holds a block of memory.
MEMORY_SETUP = replace(TorchSetup(), n=4 * MEMORY_BATCHES, n_val=4, batch_size=4, epochs=1)


def check_losses_let_go(ctx: Context, device: str, setup: TorchSetup = MEMORY_SETUP) -> None:
    """fit_torch over MEMORY_BATCHES batches whose every loss's graph holds a block of memory: the worker's peak
    memory, read by the judge from the kernel, shows whether the loss Tensors were kept alive."""
    X, Y, val = setup.data()
    doing = memory_doing("fit_torch")
    answer = ctx.ask("fit_torch_watched", doing, timeout=TIMEOUT[device], measure_memory=True,
                     package=ctx.task.route.package, task=ctx.task.id, state=setup.state(), X=X, Y=Y, val=val,
                     batch_size=setup.batch_size, lr=setup.lr, momentum=setup.momentum, epochs=setup.epochs,
                     device=device, ballast=BALLAST_MIB * 2**20)
    if answer.raised is not None:
        raise ctx.student_error(answer.raised, doing)
    check_losses_released(ctx, "fit_torch", ctx.worker.last_memory_growth)


def left_behind(ctx: Context, answer, device: str) -> CheckFailed | None:
    """The failure naming what fit_torch left on the CPU, when the run on the judge's device raised torch's error for
    two devices and the worker's notes show what stayed behind (the notes only ever name a failure)."""
    raised = answer.raised if isinstance(answer.raised, dict) else {}
    if not str(raised.get("message", "")).startswith(msg.TORCH_TWO_DEVICES):
        return None
    error = f"{raised.get('type', 'RuntimeError')}: {raised.get('message', '')}"
    header = {**msg.header(ctx.task), "device": device, "error": error}
    if not any(on(device, d) for d in answer.model_to):
        calls = ", ".join(f".to({d!r})" for d in answer.model_to) or "none"
        return CheckFailed(msg.TORCH_LEFT_BEHIND.format(what=msg.TORCH_LEFT_MODEL.format(calls=calls),
                                                        hint=msg.HINT_TORCH_MOVE_MODEL, **header))
    unmoved = unmoved_batches(answer, device)
    if unmoved:
        return CheckFailed(msg.TORCH_LEFT_BEHIND.format(what=msg.TORCH_LEFT_BATCH.format(which=unmoved[0]),
                                                        hint=msg.HINT_TORCH_MOVE_BATCHES, **header))
    return None


def with_hint(raised) -> str | None:
    """The hint for what fit_torch raised on the judge's device where the notes name no tensor left behind: its own
    tensor on the CPU met one on the device (other errors get the hint their words call for, or none)."""
    message = str(raised.get("message", "") if isinstance(raised, dict) else "")
    return msg.HINT_TORCH_OWN_TENSOR if message.startswith(msg.TORCH_TWO_DEVICES) else None


def unmoved_batches(answer, device: str) -> list[str]:
    """The labels of the batch tensors the loaders yielded that no noted .to() moved to ``device``, in order."""
    moved = {number for number, d in answer.moves if on(device, d)}
    return [label for number, label in enumerate(answer.yielded) if number not in moved]


def check_moves(ctx: Context, answer, device: str) -> None:
    """The model and every batch moved to ``device``, as the worker noted them: a plain message for the mistake
    whose effect (torch's error for tensors on two devices) the numbers would show less plainly."""
    if not any(on(device, d) for d in answer.model_to):
        calls = ", ".join(f".to({d!r})" for d in answer.model_to) or "none"
        raise CheckFailed(msg.TORCH_MODEL_NOT_MOVED.format(device=device, calls=calls, **msg.header(ctx.task)))
    unmoved = unmoved_batches(answer, device)
    if unmoved:
        raise CheckFailed(msg.TORCH_BATCH_NOT_MOVED.format(count=len(unmoved), total=len(answer.yielded),
                                                           device=device, which=unmoved[0], **msg.header(ctx.task)))


def fit_torch_cpu(ctx: Context) -> None:
    """Task 6.1's check: fit_torch on the judge's device, which computes on the CPU."""
    check_fit_torch(ctx, JUDGES_DEVICE)


def fit_torch_cuda(ctx: Context) -> None:
    """Task 6.2's check: fit_torch on CUDA, skipped (not failed) on a machine without a GPU, so the task costs a student
    nothing there."""
    if not reference.cuda_available():
        raise Skip(msg.SKIPPED_NO_CUDA.format(**msg.header(ctx.task)))
    check_fit_torch(ctx, "cuda")
