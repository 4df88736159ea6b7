"""Tasks 5.1-5.5: the training loop, over stand-ins that compute with torch, and once end to end.

The worker runs the student's train.py over stand-ins (package sub_train, graders/worker/standins.py): a
Tensor and an SGD whose arithmetic is torch's, the given nn.py over them, and lists of batches for
loaders, so a mistake elsewhere costs its own task only and the worker holds no answer to tasks 1-4.
While fit is graded, its train_epoch and evaluate are answered by the judge (``trajectory``). The judge
computes every expected value with torch (``trajectory.Run``) on the same weights and batches. For train_epoch
and evaluate the model is a probe whose last layer adds 1 to its output in training mode and 2 while grad mode
is on, so the modes show in the numbers compared, never in what the worker says it saw. The one end-to-end rung
(5.4) trains the lesson's network on the student's whole stack; the judge computes the training MSE of the
weights that come back, and replays the run with torch in its helper to hold them to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st

from graders import lesson
from graders import messages as msg
from graders.judge.checks.base import CheckFailed, Context, Tolerance

if TYPE_CHECKING:
    from graders.judge.checks.trajectory import Run

TOL = Tolerance(rtol=1e-9, atol=1e-12)
STALE_GRAD = 100.0  # left on every parameter before the epoch: train_epoch must clear it
MATCH = {"rtol": 1e-9, "atol": 1e-12}  # how close a run must be to a known mistake to name it
# What the worker's probe model adds to its network's output in training mode and while grad mode is on
# (graders/worker/verbs_loop.py; the judge and the worker share no code): the modes show in the numbers.
TRAINING_SHIFT, GRAD_SHIFT = 1.0, 2.0


def shift(training: bool, grad: bool) -> float:
    """What the probe model adds to its output when it runs in these modes."""
    return TRAINING_SHIFT * training + GRAD_SHIFT * grad


TRAINING = shift(True, True)  # train_epoch's forwards: training mode, grad mode on


# ----- what both sides build -----


@dataclass(frozen=True)
class Setup:
    """A small regression run both sides can build: the model, its weights, the data, the optimizer."""

    n: int = 10
    batch_size: int = 4
    lr: float = 0.1
    momentum: float = 0.9
    seed: int = 0
    sizes: tuple = (2, 4, 1)
    options: dict = field(default_factory=dict)  # accumulate, clip_norm: passed to train_epoch when set
    loss: str = "mse"  # or "weighted": a loss that tells its arguments apart (LOSS_WEIGHTED)

    @property
    def batches(self) -> int:
        """How many batches one epoch over the data has (the last may be partial): what a message and a count of steps
        are measured against."""
        return math.ceil(self.n / self.batch_size)

    def data(self, n: int | None = None, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """A regression data set both sides rebuild from the seed alone (``offset`` draws another, for validation):
        inputs rounded to two decimals, so a message can print them exactly."""
        rng = np.random.default_rng(self.seed + 1000 + offset)
        X = np.round(rng.uniform(-2.0, 2.0, (n or self.n, self.sizes[0])), 2)
        Y = np.sin(X @ np.linspace(1.0, -0.5, self.sizes[0]))[:, None] + 0.5
        return X, Y

    def state(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Weights drawn from ``seed`` (this setup's by default) as the given nn.Linear draws them, named as
        the given Sequential names them: layers.0.weight, layers.0.bias, layers.2.weight, ..."""
        rng = np.random.default_rng(self.seed if seed is None else seed)
        state = {}
        for i, (n_in, n_out) in enumerate(zip(self.sizes[:-1], self.sizes[1:])):
            bound = 1.0 / np.sqrt(n_in)
            state[f"layers.{2 * i}.weight"] = rng.uniform(-bound, bound, (n_in, n_out))
            state[f"layers.{2 * i}.bias"] = rng.uniform(-bound, bound, (n_out,))
        return state

    def run(self, seed: int | None = None, **options) -> Run:
        """The expected run from these weights (``trajectory.Run``, imported here: it imports torch, which a warm
        grade needs only for what it cannot read from the kept draws)."""
        from graders.judge.checks.trajectory import Run

        return Run(list(self.state(seed).values()), lr=self.lr, momentum=self.momentum, **options)

    def split(self, X=None, Y=None, order=None) -> list[tuple[np.ndarray, np.ndarray]]:
        """The batches of (X, Y) (this setup's data by default) in ``order`` (the data's by default)."""
        if X is None:
            X, Y = self.data()
        order = np.arange(len(X)) if order is None else order
        return [(X[order[i:i + self.batch_size]], Y[order[i:i + self.batch_size]])
                for i in range(0, len(X), self.batch_size)]

    def args(self, package: str) -> dict:
        """The keyword arguments every loop verb takes for this setup in ``package`` (the task's route's): the package,
        the model's sizes and weights, the data, the batch size, the optimizer's settings and the loss."""
        X, Y = self.data()
        return {"package": package, "sizes": list(self.sizes), "state": self.state(), "X": X,
                "Y": Y, "batch_size": self.batch_size, "lr": self.lr, "momentum": self.momentum, "loss": self.loss}

    def lines(self, order: str = "in order") -> list[str]:
        """The message lines that describe this run (the model, the data, its batches in ``order``, the optimizer and
        the loss), so a student can rebuild the case."""
        model = "Sequential(" + ", ReLU(), ".join(
            f"Linear({a}, {b})" for a, b in zip(self.sizes[:-1], self.sizes[1:])) + ")"
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return [msg.LOOP_SETUP_MODEL.format(model=model, n=self.n, batch_size=self.batch_size, batches=self.batches,
                                            order=order),
                msg.LOOP_SETUP_OPTIM.format(optimizer=f"SGD(lr={self.lr:g}, momentum={self.momentum:g})",
                                            loss=msg.LOSS_MSE if self.loss == "mse" else msg.LOSS_WEIGHTED,
                                            options=options)]


def shuffled_orders(seed: int, n: int, epochs: int) -> list[np.ndarray]:
    """One order of the examples per epoch, each ``default_rng(seed).permutation(n)`` drawn anew: the batches a
    shuffling loader given that generator yields (the worker's stand-in loader replays them)."""
    rng = np.random.default_rng(seed)
    return [rng.permutation(n) for _ in range(epochs)]


def setups(*, accumulate: bool = False):
    """Small runs drawn by Hypothesis: sizes of data and batch, momentum, weights; with accumulate and clip_norm."""
    options = st.just({})
    if accumulate:
        options = st.fixed_dictionaries({"accumulate": st.integers(1, 4)},
                                        optional={"clip_norm": st.sampled_from([0.05, 0.5, 5.0])})
    return st.builds(Setup, n=st.integers(1, 13), batch_size=st.integers(1, 5), momentum=st.sampled_from([0.0, 0.9]),
                     seed=st.integers(0, 2**16), options=options)


def reference_epoch(setup: Setup, *, zero_grad: str = "each", scale_loss: float = 1.0, swapped: bool = False,
                    offset: float = TRAINING, **options) -> tuple[float, list[np.ndarray]]:
    """(mean loss, parameters) of one expected epoch of the probe model from stale grads; ``zero_grad`` ("never":
    the gradients are never cleared, "late": not before the first batch), ``scale_loss``, ``swapped`` (the loss's
    arguments), ``offset`` (the probe's shift: other modes) and ``by_examples`` (the loss's mean over the examples)
    model known mistakes."""
    run = setup.run(grads=STALE_GRAD, offset=offset)
    loss = run.epoch(setup.split(), setup.loss, zero_grad=zero_grad, scale=scale_loss, swapped=swapped, **options)
    return loss, run.weights()


def reference_evaluate(setup: Setup, offset: float = 0.0) -> tuple[float, float]:
    """The expected evaluate's mean loss (the probe in eval mode under no_grad: no shift), and the one with the
    loss's arguments swapped (a known mistake); ``offset``: the probe's shift in other modes (known mistakes)."""
    run = setup.run(offset=offset)
    return run.evaluate(setup.split(), setup.loss), run.evaluate(setup.split(), setup.loss, swapped=True)


def evaluate_by_examples(setup: Setup) -> float:
    """evaluate's mean loss taken over the examples (each batch's loss weighted by its size): a known mistake."""
    return setup.run().evaluate(setup.split(), setup.loss, by_examples=True)


def known_mistake(yours: list[np.ndarray], mistakes) -> str | None:
    """The hint of the first known mistake whose parameters ``yours`` match, else None."""
    with np.errstate(all="ignore"):  # a wrong run may blow up; it then matches nothing
        for hint, run in mistakes:
            expected = run()
            if all(np.allclose(y, e, **MATCH) for y, e in zip(yours, expected)):
                return hint
    return None


# ----- reading claims -----


def read_params(ctx: Context, claims: list, names: list[str], shapes: list[tuple], when: str) -> list[np.ndarray]:
    """The model's parameters as arrays of the expected ``shapes``; a list of another length fails the task, naming the
    moment (``when``) it was read."""
    if len(claims) != len(names):
        ctx.fail(f"the model's parameter list {when}", f"{len(claims)} parameters", f"{len(names)}")
    return [ctx.array(c, shape, f"{name} {when}") for c, name, shape in zip(claims, names, shapes)]


def compare_params(ctx: Context, claims: list, expected: dict[str, np.ndarray], when: str, *, inputs, source,
                   mistakes=(), otherwise: str | None = None) -> list[np.ndarray]:
    """The student's parameters against the ``expected`` ones (name to array), naming a known mistake they match
    (else the hint ``otherwise``)."""
    names = list(expected)
    yours = read_params(ctx, claims, names, [np.shape(e) for e in expected.values()], when)
    if any(not np.allclose(y, e, rtol=TOL.rtol, atol=TOL.atol) for y, e in zip(yours, expected.values())):
        hint = known_mistake(yours, mistakes) or otherwise
        for name, y, e in zip(names, yours, expected.values()):
            ctx.compare(y, e, f"{name} {when}", inputs=inputs, source=source, hint=hint, tol=TOL)
    return yours


def read_history(ctx: Context, claim: dict, function: str, lengths: dict[str, int] | None,
                 hint: str | None = None) -> dict[str, np.ndarray]:
    """A history dict of two lists of floats, each of ``lengths[key]`` (any length when None)."""
    if claim.get("kind") != "dict":
        ctx.fail(f"what {function} returned", f"a {claim.get('type')}", msg.LOOP_HISTORY)
    if any(k not in claim["items"] for k in ("train_loss", "val_loss")):
        ctx.fail(f"what {function} returned", f"a dict with keys {claim['keys']}", msg.LOOP_HISTORY)
    history = {}
    for key in ("train_loss", "val_loss"):
        items, name = claim["items"][key], f'history["{key}"] from {function}'
        if items.get("kind") != "sequence":
            ctx.fail(name, f"a {items.get('type')}", msg.LOOP_FLOATS)
        if lengths is not None and len(items["items"]) != lengths[key]:
            expected = msg.LOOP_PER_EPOCH.format(count=lengths[key]) if lengths[key] else msg.LOOP_NO_VAL
            raise CheckFailed(msg.lines(
                msg.WRONG_KIND.format(what=name, got=f"a list of {len(items['items'])}", expected=expected,
                                      **msg.header(ctx.task)),
                hint and msg.HINT.format(hint=hint)))
        history[key] = np.array([ctx.number(c, f'history["{key}"][{i}] from {function}')
                                 for i, c in enumerate(items["items"])])
    return history


def steps_hint(steps: int, setup: Setup) -> str | None:
    """A hint when the worker's count of optimizer steps is not the expected one. Only a hint, on parameters that
    are wrong already: the count is the worker's word, and the steps show in the parameters."""
    k = setup.options.get("accumulate", 1)
    expected = math.ceil(setup.batches / k)
    if steps == expected:
        return None
    grouping = f" with accumulate={k}" if k > 1 else ""
    hint = msg.HINT_STEP_PER_GROUP.format(k=k) if k > 1 else msg.HINT_STEP_PER_BATCH
    return msg.HINT_STEPS.format(got=steps, batches=setup.batches, grouping=grouping, expected=expected, hint=hint)


# ----- 5.1 train_epoch, and 5.3's accumulation -----


def check_epoch(ctx: Context, setup: Setup, *, full: bool = True) -> None:
    """One train_epoch of the probe model (its output shifts with its modes) against the reference. ``full``: 5.1's
    rungs, from eval mode (train_epoch must switch to training mode) and on the kind of the loss; 5.3 starts the
    model in training mode and checks only the numbers, so a mistake there costs once."""
    answer = ctx.ask("train_epoch_watched", f"running train_epoch over {setup.batches} batch(es)",
                     **setup.args(ctx.task.route.package), stale_grad=STALE_GRAD, options=setup.options or None,
                     start_training=not full)
    claim = answer.loss
    is_float = claim.get("type") in ("float", "float64") and claim.get("kind") in ("number", "numpy scalar")
    loss = ctx.number(claim, "the value train_epoch returned") if full or is_float else None

    expected_loss, expected = ctx.expected("torch's epoch", reference_epoch, setup, **setup.options)
    k = setup.options.get("accumulate", 1)
    eval_mode = msg.HINT_MODES_SEEN.format(what="weights", modes=msg.MODES_EVAL_GRAD, hint=msg.HINT_TRAIN_MODE)
    mistakes = [(eval_mode, lambda: reference_epoch(setup, offset=shift(False, True), **setup.options)[1]),
                (msg.HINT_NO_ZERO_GRAD, lambda: reference_epoch(setup, zero_grad="never", **setup.options)[1]),
                (msg.HINT_STALE_GRAD, lambda: reference_epoch(setup, zero_grad="late", **setup.options)[1])]
    if k > 1:
        mistakes.append((msg.HINT_NOT_DIVIDED, lambda: reference_epoch(setup, scale_loss=k, **setup.options)[1]))
    mistakes.append((msg.HINT_BACKWARD_TWICE, lambda: reference_epoch(setup, scale_loss=2.0, **setup.options)[1]))
    if "clip_norm" in setup.options:
        mistakes.append((msg.HINT_NOT_CLIPPED, lambda: reference_epoch(setup, accumulate=k)[1]))
    if setup.loss != "mse":
        mistakes.append((msg.HINT_LOSS_ARGS, lambda: reference_epoch(setup, swapped=True, **setup.options)[1]))
    inputs = setup.lines() + [msg.LOOP_SETUP_PROBE,
                              msg.LOOP_SETUP_START.format(stale=STALE_GRAD, mode="eval" if full else "training")]
    source = msg.LOOP_REFERENCE.format(function="train_epoch")
    compare_params(ctx, answer.params, dict(zip(setup.state(), expected)), "after one epoch", inputs=inputs,
                   source=source, mistakes=mistakes, otherwise=steps_hint(answer.steps, setup))
    if loss is not None and not np.isclose(loss, expected_loss, rtol=TOL.rtol, atol=TOL.atol):
        hint = msg.HINT_MEAN_LOSS
        if k > 1 and np.isclose(loss * k, expected_loss, **MATCH):
            hint = msg.HINT_LOSS_DIVIDED
        elif np.isclose(loss, ctx.expected("torch's epoch by examples", reference_epoch, setup, by_examples=True,
                                           **setup.options)[0], **MATCH):
            hint = msg.HINT_LOSS_BY_EXAMPLES.format(function="train_epoch")
        ctx.compare(np.float64(loss), expected_loss, "mean batch loss train_epoch returned", inputs=inputs,
                    source=source, hint=hint, tol=TOL)


def train_epoch(ctx: Context) -> None:
    """Task 5.1's check: one fixed setup, drawn ones, and one with the weighted loss (MSE cannot tell
    loss_fn(prediction, target) from the reverse); then whether the loss Tensors are let go, by the worker's
    memory."""
    check_epoch(ctx, Setup())
    ctx.forall(setups(), lambda setup: check_epoch(ctx, setup), examples=10)
    check_epoch(ctx, Setup(loss="weighted"))  # MSE cannot tell loss_fn(prediction, target) from the reverse
    setup = Setup(n=2 * MEMORY_BATCHES, batch_size=2)
    ctx.ask("train_epoch_watched", memory_doing("train_epoch"), measure_memory=True,
            **setup.args(ctx.task.route.package), start_training=True, ballast=BALLAST_MIB * 2**20)
    check_losses_released(ctx, "train_epoch", ctx.worker.last_memory_growth)


# ----- loss Tensors kept alive (5.1 here, 6.x in torch_loop.py) -----

# A run of MEMORY_BATCHES batches whose every loss's graph holds BALLAST_MIB (graders/worker/verbs_loop.attach_ballast:
# a memory map of its own, every page written, freed with the graph). A loop that lets each loss go holds at most two
# at once (the new loss is made while the old one's name still holds it): LET_GO_MIB, 16 MiB. One that keeps them
# holds them all: 256 MiB. The bound, a quarter of that, leaves a factor of 4 on either side (docs/security.md).
BALLAST_MIB = 8
MEMORY_BATCHES = 32
LET_GO_MIB = 2 * BALLAST_MIB
KEPT_BOUND_MIB = MEMORY_BATCHES * BALLAST_MIB // 4


def memory_doing(function: str) -> str:
    """What the memory rung does, in the student's terms."""
    return msg.LOSSES_KEPT_DOING.format(function=function, batches=MEMORY_BATCHES, ballast=BALLAST_MIB)


def check_losses_released(ctx: Context, function: str, grown: int | None) -> None:
    """Fail the task when the worker's peak memory rose past KEPT_BOUND_MIB over the memory rung's run (``grown``,
    bytes: read by the judge from the kernel, graders/isolation/processes.py); where this judge cannot read it,
    say so beside the pass."""
    if grown is None:
        ctx.not_graded.append(msg.MEMORY_NOT_READ.format(function=function))
        return
    ctx.data["memory"] = {"mib": grown / 2**20, "bound_mib": KEPT_BOUND_MIB}  # for the benchmark, never a result
    if grown > KEPT_BOUND_MIB * 2**20:
        raise CheckFailed(msg.LOSSES_KEPT.format(function=function, batches=MEMORY_BATCHES, grown=grown / 2**20,
                                                 released=LET_GO_MIB, bound=KEPT_BOUND_MIB, ballast=BALLAST_MIB,
                                                 **msg.header(ctx.task)))


# ----- 5.2 evaluate -----


def evaluate(ctx: Context) -> None:
    """Task 5.2's check: evaluate from training mode and from eval mode, on MSE and on the weighted loss, then a loader
    that raises partway (the modes must come back all the same)."""
    for setup, starts in ((Setup(n=11, batch_size=4), (True, False)),
                          # MSE cannot tell loss_fn(prediction, target) from the reverse
                          (Setup(n=12, batch_size=4, loss="weighted"), (False,))):
        check_evaluate(ctx, setup, starts)
    check_interrupted(ctx)


def network_output(state: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The judge's own forward of a Setup's Sequential(Linear, ReLU, ..., Linear) with ``state``, in numpy."""
    weights = list(state.values())
    for i in range(0, len(weights), 2):
        x = (np.maximum(x, 0.0) if i else x) @ weights[i] + weights[i + 1]
    return x


INTERRUPTED_SETUP = Setup(n=11, batch_size=4)  # 3 batches
INTERRUPTED_AT = 2  # the loader raises in place of the third batch
INTERRUPTED_PROBE = np.array([[0.5, -1.0], [1.5, 0.25]])


def check_interrupted(ctx: Context) -> None:
    """evaluate whose loader raises partway must leave the model as it found it (training mode): the judge reads
    the model's output afterwards, which in training mode is its network's plus 1."""
    setup, at = INTERRUPTED_SETUP, INTERRUPTED_AT
    args = {k: v for k, v in setup.args(ctx.task.route.package).items() if k not in ("lr", "momentum")}
    answer = ctx.ask("evaluate_interrupted", msg.EVAL_INTERRUPTED_DOING.format(at=at + 1), **args, fail_at=at,
                     probe_x=INTERRUPTED_PROBE)
    expected = network_output(setup.state(), INTERRUPTED_PROBE) + 1.0
    what = "output of the model after evaluate's loader raised"
    yours = ctx.array(answer.out, expected.shape, what)
    hint = msg.HINT_RESTORE_ON_ERROR if np.allclose(yours, expected - 1.0, **MATCH) else msg.HINT_RESTORE_MODE
    ctx.compare(yours, expected, what, source=msg.EVAL_INTERRUPTED_SOURCE, hint=hint, tol=TOL,
                inputs=setup.lines()[:1] + [msg.EVAL_INTERRUPTED_SETUP.format(
                    at=at + 1, batches=setup.batches, x=msg.array_text(INTERRUPTED_PROBE))])


EVAL_MISTAKES = ((shift(True, False), msg.MODES_TRAINING_NO_GRAD, msg.HINT_EVAL_MODE),
                 (shift(False, True), msg.MODES_EVAL_GRAD, msg.HINT_EVAL_NO_GRAD),
                 (shift(True, True), msg.MODES_TRAINING_GRAD, f"{msg.HINT_EVAL_MODE}, and {msg.HINT_EVAL_NO_GRAD}"))


def evaluate_hint(ctx: Context, setup: Setup, loss: float, swapped: float) -> str:
    """The hint for a wrong mean loss from evaluate: the modes its forwards ran in, where the loss is that of
    another mode's shift, or the loss's arguments swapped."""
    if setup.loss != "mse" and np.isclose(loss, swapped, **MATCH):
        return msg.HINT_LOSS_ARGS
    if np.isclose(loss, ctx.expected("torch's evaluate by examples", evaluate_by_examples, setup), **MATCH):
        return msg.HINT_LOSS_BY_EXAMPLES.format(function="evaluate")
    for offset, modes, hint in EVAL_MISTAKES:
        if np.isclose(loss, ctx.expected("torch's evaluate", reference_evaluate, setup, offset)[0], **MATCH):
            return msg.HINT_MODES_SEEN.format(what="losses", modes=modes, hint=hint)
    return msg.HINT_MEAN_LOSS


def check_after_evaluate(ctx: Context, setup: Setup, claim, start: bool) -> None:
    """The probe's output after evaluate shows the modes evaluate left: ``start``'s, and grad mode on."""
    network = network_output(setup.state(), INTERRUPTED_PROBE)
    expected = network + shift(start, True)
    yours = ctx.array(claim, expected.shape, msg.EVAL_AFTER_WHAT)
    header = msg.header(ctx.task)
    mode = "training" if start else "eval"
    for training, grad in ((not start, True), (start, False), (not start, False)):
        if np.allclose(yours, network + shift(training, grad), **MATCH):
            if training != start:
                raise CheckFailed(msg.LOOP_MODE.format(
                    where=f"after evaluate of a model in {mode} mode", subject="the model",
                    got=f"in {'training' if training else 'eval'} mode", expected=f"in {mode} mode",
                    hint=msg.HINT_RESTORE_MODE, **header))
            raise CheckFailed(msg.LOOP_MODE.format(where="after evaluate", subject="grad mode", got="off",
                                                   expected="on again", hint=msg.HINT_GRAD_MODE_BACK, **header))
    ctx.compare(yours, expected, msg.EVAL_AFTER_WHAT, source=msg.EVAL_AFTER_SOURCE, tol=TOL,
                inputs=setup.lines()[:1] + [msg.LOOP_SETUP_PROBE,
                                            msg.EVAL_AFTER_SETUP.format(x=msg.array_text(INTERRUPTED_PROBE))])


def check_evaluate(ctx: Context, setup: Setup, starts: tuple[bool, ...]) -> None:
    """evaluate of the probe model (its output shifts with its modes) from each mode in ``starts``: its mean loss,
    the modes it leaves (the probe's output after it) and the weights, all numbers the judge compares."""
    expected, swapped = ctx.expected("torch's evaluate", reference_evaluate, setup)
    inputs = setup.lines() + [msg.LOOP_SETUP_PROBE]
    for start in starts:
        mode = "training" if start else "eval"
        args = {k: v for k, v in setup.args(ctx.task.route.package).items() if k not in ("lr", "momentum")}
        answer = ctx.ask("evaluate_watched", f"running evaluate on a model in {mode} mode", **args,
                         start_training=start, probe_x=INTERRUPTED_PROBE)
        loss = ctx.number(answer.loss, "the value evaluate returned")
        hint = None if np.isclose(loss, expected, rtol=TOL.rtol, atol=TOL.atol) else \
            evaluate_hint(ctx, setup, loss, swapped)
        ctx.compare(np.float64(loss), expected, "mean batch loss evaluate returned", inputs=inputs,
                    source=msg.LOOP_REFERENCE.format(function="evaluate"), hint=hint, tol=TOL)
        check_after_evaluate(ctx, setup, answer.after, start)
        compare_params(ctx, answer.params, setup.state(), "after evaluate (it must not train)", inputs=inputs,
                       source=msg.LOOP_WEIGHTS_BEFORE)


# ----- 5.3 clip_grad_norm and accumulation -----


def torch_clip(grads: list, max_norm: float) -> tuple[float, list]:
    """torch's clip_grad_norm_ on parameters holding ``grads`` (None: no grad): the total norm and the grads after it,
    the expected values of task 5.3's clipping."""
    import torch

    params = []
    for g in grads:
        p = torch.zeros(np.shape(g) if g is not None else (2,), dtype=torch.float64, requires_grad=True)
        p.grad = None if g is None else torch.tensor(g, dtype=torch.float64)
        params.append(p)
    total = torch.nn.utils.clip_grad_norm_(params, max_norm)
    return float(total), [None if p.grad is None else p.grad.numpy() for p in params]


def clip_mistake(grads, yours, max_norm, total) -> str | None:
    """A hint when the clipped grads match a known mistake."""
    given = [g for g in grads if g is not None]
    for hint, scale in ((msg.HINT_CLIP_EPSILON, min(1.0, max_norm / total) if total else 1.0),
                        (msg.HINT_CLIP_ALWAYS, max_norm / (total + 1e-6))):
        if all(np.allclose(y, g * scale, **MATCH) for y, g in zip(yours, given)):
            return hint
    return msg.HINT_CLIP


def check_clip(ctx: Context, grads: list, max_norm: float) -> None:
    """Task 5.3's clipping on one case: the norm clip_grad_norm returned, each grad after it, and that each was scaled
    in place (the parameter keeps its array), against torch's clip_grad_norm_."""
    answer = ctx.ask("clip", f"calling clip_grad_norm(params, max_norm={max_norm!r})", package=ctx.task.route.package,
                     grads=grads, max_norm=max_norm)
    total, expected = ctx.expected("torch's clip_grad_norm_", torch_clip, grads, max_norm)
    inputs = [msg.CLIP_INPUTS.format(grads=", ".join("None" if g is None else msg.array_text(g) for g in grads),
                                     max_norm=max_norm)]
    yours_total = ctx.number(answer.total, "the norm clip_grad_norm returned", how="float(total)")
    after = total * min(1.0, max_norm / (total + 1e-6))
    hint = msg.HINT_CLIP_AFTER if total and np.isclose(yours_total, after, **MATCH) else msg.HINT_CLIP
    ctx.compare(np.float64(yours_total), total, "norm clip_grad_norm returned", inputs=inputs,
                source=msg.CLIP_SOURCE, hint=hint)
    yours = []
    for index, (g, claim, same) in enumerate(zip(grads, answer.grads, answer.same_array)):
        what = f"parameter {index}'s grad after clip_grad_norm"
        if g is None:
            if claim.get("type") != "NoneType":
                ctx.fail(what, f"a {claim.get('type')}", msg.CLIP_SKIPPED)
            continue
        yours.append(ctx.array(claim, np.shape(g), f"the {what}"))
        if not same:
            raise CheckFailed(msg.CLIP_REPLACED.format(index=index, **msg.header(ctx.task)))
    hint = clip_mistake(grads, yours, max_norm, total)
    for y, e in zip(yours, [e for e in expected if e is not None]):
        ctx.compare(y, e, "grad after clip_grad_norm", inputs=inputs, source=msg.CLIP_SOURCE, hint=hint)


CLIP_GRADS = [np.array([[1.0, -2.0, 0.5], [2.5, 0.0, -1.5]]), None, np.array([3.0, -1.0])]
# A 0-d parameter's grad (a 0-d ndarray, docs/contract.md) must be scaled in place like any other.
CLIP_GRADS_0D = [np.array(3.0), np.array([0.5, -1.0])]


def grad_lists():
    """Drawn lists of up to four gradients (None among them, at least one not None), each a few rounded numbers, for the
    clipping's property examples."""
    grad = st.lists(st.floats(-4.0, 4.0), min_size=1, max_size=6).map(lambda v: np.round(np.array(v), 3))
    return st.lists(st.one_of(st.none(), grad), min_size=1, max_size=4).filter(
        lambda gs: any(g is not None for g in gs))


def accumulation_and_clipping(ctx: Context) -> None:
    """Task 5.3's check: clipping on fixed and drawn grads, then train_epoch with gradient accumulation (a last, shorter
    group included) and with accumulation and clipping together."""
    check_clip(ctx, CLIP_GRADS, 1.0)  # norm about 5.1: clipped
    check_clip(ctx, CLIP_GRADS, 10.0)  # left alone
    check_clip(ctx, CLIP_GRADS_0D, 0.1)
    ctx.forall(st.tuples(grad_lists(), st.sampled_from([0.1, 1.0, 3.0, 100.0])),
               lambda drawn: check_clip(ctx, *drawn), examples=15)
    base = Setup(n=14, batch_size=2)  # 7 batches
    check_epoch(ctx, replace(base, options={"accumulate": 3}), full=False)  # groups of 3, 3 and a last 1
    check_epoch(ctx, replace(base, options={"accumulate": 2, "clip_norm": 0.05}), full=False)
    ctx.forall(setups(accumulate=True), lambda setup: check_epoch(ctx, setup, full=False), examples=10)


# ----- 5.4 fit -----


def reference_fit(setup: Setup, epochs: int, *, shuffle_seed=None, val=None, run: Run | None = None):
    """(history, run) of the expected fit: from this setup's weights (or ``run``'s state), its batches in order or
    shuffled by ``shuffle_seed``, with a val_loader over ``val`` (X, Y) when given, and the setup's options
    (accumulate, clip_norm) passed on to every epoch."""
    run = setup.run() if run is None else run
    X, Y = setup.data()
    orders = shuffled_orders(shuffle_seed, len(X), epochs) if shuffle_seed is not None else [None] * epochs
    history = run.fit([setup.split(X, Y, order) for order in orders], setup.loss,
                      val=None if val is None else setup.split(*val), **setup.options)
    return history, run


def fit_values(setup: Setup, epochs: int, **options) -> tuple[dict[str, list[float]], list[np.ndarray]]:
    """(history, final weights) of ``reference_fit``: what a check keeps of it (``Context.expected``), so that a
    grade whose expected values are kept runs no torch in the judge."""
    history, run = reference_fit(setup, epochs, **options)
    return history, run.weights()


def check_fit(ctx: Context, setup: Setup, epochs: int, *, with_val: bool, shuffle_seed: int = 7) -> None:
    """Task 5.4's fit on one setup: the history and the final parameters of ``epochs`` epochs (with a val_loader when
    ``with_val``, and the setup's options, accumulate and clip_norm, when it has some), over batches shuffled by a
    seed, against torch's run of the same fit."""
    val = setup.data(n=6, offset=1) if with_val else None
    doing = f"running fit for {epochs} epochs{' with a val_loader' if with_val else ''}" + "".join(
        f", {k}={v!r}" for k, v in setup.options.items())
    answer = ctx.ask("fit_history", doing, **setup.args(ctx.task.route.package), epochs=epochs,
                     orders=shuffled_orders(shuffle_seed, setup.n, epochs), val=val, options=setup.options or None)
    history = read_history(ctx, answer.history, "fit", {"train_loss": epochs, "val_loss": epochs * with_val})
    expected, weights = ctx.expected("torch's fit", fit_values, setup, epochs, shuffle_seed=shuffle_seed, val=val)
    inputs = setup.lines(order=f"shuffled by default_rng({shuffle_seed})") + [
        msg.LOOP_SETUP_FIT.format(epochs=epochs, val=msg.LOOP_SETUP_VAL.format(n=len(val[0])) if with_val else "")]
    source = msg.LOOP_REFERENCE.format(function="fit")
    hint = options_dropped(ctx, setup, epochs, shuffle_seed, val, history["train_loss"]) if setup.options else None
    for key in ("train_loss", "val_loss"):
        ctx.compare(history[key], np.array(expected[key]), f'history["{key}"]', inputs=inputs, source=source,
                    hint=hint, tol=TOL)
    compare_params(ctx, answer.params, dict(zip(setup.state(), weights)), f"after {epochs} epochs",
                   inputs=inputs, source=source, otherwise=hint)


def options_dropped(ctx: Context, setup: Setup, epochs: int, shuffle_seed: int, val, losses: np.ndarray) -> str | None:
    """The hint when fit's training losses are those of a fit that did not pass some of the setup's options
    (accumulate, clip_norm) on to train_epoch, else None."""
    names = list(setup.options)
    for dropped in [names] + ([[name] for name in names] if len(names) > 1 else []):
        kept = {k: v for k, v in setup.options.items() if k not in dropped}
        other, _ = ctx.expected("torch's fit", fit_values, replace(setup, options=kept), epochs,
                                shuffle_seed=shuffle_seed, val=val)
        if np.allclose(losses, other["train_loss"], **MATCH):
            return msg.HINT_FIT_OPTIONS.format(options=" and ".join(dropped),
                                               call=", ".join(f"{k}={k}" for k in names))
    return None


LESSON = lesson.LESSON
END_TO_END_TIMEOUT = 60.0
END_TO_END_MODULES = ("tensor", "optim", "data", "train")
END_TO_END_NAMES = ["layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"]
# How close the run's final weights must be to the judge's replay. Correct engines (solutions/ and every style of
# tests/corpus_correct) land within 1.6e-15 of it on the lesson's data and on keyed data; noise of 1e-11 (relative)
# added to every gradient of every step ends within 4.3e-12 (SGD at this rate damps rounding differences rather than
# growing them). Weights from anywhere else (least squares on ReLU features, another run) are off by 0.01 or more.
REPLAY_TOL = Tolerance(rtol=1e-6, atol=1e-8)


def read_passes(ctx: Context, passes: list | None, n: int, text: str) -> np.ndarray:
    """The order of the run's points in each pass fit made over the DataLoader (the worker noted them), one row per
    epoch: exactly LESSON["epochs"] passes, each every point once in batches of LESSON["batch_size"]."""
    epochs, size = LESSON["epochs"], LESSON["batch_size"]
    header = msg.header(ctx.task, setup=text)
    if passes is None or len(passes) != epochs:
        raise CheckFailed(msg.FIT_E2E_PASSES.format(got="?" if passes is None else len(passes), epochs=epochs,
                                                    **header))
    sizes = [size] * (n // size) + ([n % size] if n % size else [])
    orders = []
    for index, one in enumerate(passes, 1):
        order, got = (one.get("order"), one.get("sizes")) if isinstance(one, dict) else (None, None)
        if not all(isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype == np.int64 for a in (order, got)):
            ctx.fail(f"the batches noted in pass {index} of the lesson's run", "something else",
                     "the rows of each batch")
        wrong = None
        if np.any(order < 0):
            wrong = msg.FIT_E2E_EPOCH_UNKNOWN
        elif got.tolist() != sizes:
            shown = ", ".join(map(str, got[:10].tolist())) + (", ..." if len(got) > 10 else "")
            wrong = msg.FIT_E2E_EPOCH_SIZES.format(sizes=shown or "none")
        elif len(order) != n or len(np.unique(order)) != n:
            wrong = msg.FIT_E2E_EPOCH_COVER.format(distinct=len(np.unique(order)), rows=len(order))
        if wrong is not None:
            raise CheckFailed(msg.FIT_E2E_EPOCH.format(index=index, got=wrong, n=n, batch_size=size,
                                                       last=msg.FIT_E2E_EPOCH_LAST if n % size else "", **header))
        orders.append(order)
    return np.stack(orders)


def check_replay(ctx: Context, params: list[np.ndarray], orders: np.ndarray, X: np.ndarray, Y: np.ndarray,
                 seed: int, text: str) -> None:
    """The run's final weights against the judge's replay of the lesson's run (oracles.replay_lesson: torch, in
    the judge's helper) from the same initial weights over the batches the student's DataLoader yielded. The
    batches are the worker's word, but only choose which SGD run is replayed: the weights must be that run's."""
    from graders.judge import oracles

    start = Setup(sizes=(1, LESSON["hidden"], 1), seed=seed).state()
    replay = oracles.replay_lesson(list(start.values()), X, Y, orders, LESSON["batch_size"], LESSON["lr"])
    inputs = [msg.FIT_E2E_REPLAY_INPUTS.format(setup=text, n=len(X))]
    source = msg.FIT_E2E_REPLAY.format(seed=seed, lr=LESSON["lr"])
    hint = msg.HINT_FIT_E2E_REPLAY
    if not all(np.allclose(y, e, rtol=REPLAY_TOL.rtol, atol=REPLAY_TOL.atol) for y, e in zip(params, replay["params"])):
        # every gradient counted twice (a second backward() per batch) is SGD at twice the rate: replayed so
        twice = oracles.replay_lesson(list(start.values()), X, Y, orders, LESSON["batch_size"], 2 * LESSON["lr"])
        if all(np.allclose(y, e, rtol=REPLAY_TOL.rtol, atol=REPLAY_TOL.atol) for y, e in zip(params, twice["params"])):
            hint = msg.HINT_FIT_E2E_TWICE
    for name, yours, expected in zip(END_TO_END_NAMES, params, replay["params"]):
        ctx.compare(yours, expected, f"{name} after the lesson's run", inputs=inputs, source=source, hint=hint,
                    tol=REPLAY_TOL)


BAR_SPARE = 1.1  # where the lesson's own run misses the bar on a key's points: its MSE, and a tenth more


def reachable_bar(X: np.ndarray, Y: np.ndarray, seed: int) -> float:
    """Task 5.4's bar on these points: 1.5 x the noise floor (lesson.BAR), or, on points drawn from a key where the
    lesson's own run does not reach it (about one key in 300: each student has a key of their own), that run's MSE
    and a tenth more, so that a correct stack always passes. The lesson's own run is the judge's replay (torch, in
    its helper) from the run's initial weights over the batches the contract's DataLoader yields: a fresh
    ``rng.permutation(n)`` each epoch, from ``default_rng(seed + 1)``. Asked only of a run above lesson.BAR."""
    from graders.judge import oracles

    if not seed:
        return lesson.BAR
    start = Setup(sizes=(1, LESSON["hidden"], 1), seed=seed).state()
    rng = np.random.default_rng(seed + 1)
    orders = np.stack([rng.permutation(len(X)) for _ in range(LESSON["epochs"])])
    replay = oracles.replay_lesson(list(start.values()), X, Y, orders, LESSON["batch_size"], LESSON["lr"])
    return max(lesson.BAR, BAR_SPARE * lesson_mse([np.asarray(p) for p in replay["params"]], X, Y))


def lesson_mse(params: list[np.ndarray], X: np.ndarray, Y: np.ndarray) -> float:
    """The training MSE of a 1-32-1 ReLU network's weights, by the judge, in numpy."""
    W1, b1, W2, b2 = params
    return float(np.mean((np.maximum(X @ W1 + b1, 0.0) @ W2 + b2 - Y) ** 2))


def fit(ctx: Context) -> None:
    """Task 5.4's check: fit against torch on small setups, then the lesson's run on the student's whole stack, held to
    the bar on the training MSE the judge computes and replayed by the judge to hold the weights to it; then fit with
    accumulate and clip_norm, which it must pass on to train_epoch."""
    setup = Setup(n=12, batch_size=4)
    check_fit(ctx, setup, 3, with_val=True)
    check_fit(ctx, setup, 2, with_val=False)

    for name in END_TO_END_MODULES:
        if name in ctx.missing:
            raise CheckFailed(msg.FIT_E2E_MISSING.format(file=f"{name}.py", **msg.header(ctx.task)))
    seed = lesson.data_seed(ctx.key)
    X, Y = lesson.task_data(ctx.key)
    hidden = LESSON["hidden"]
    text = msg.FIT_E2E_SETUP.format(**LESSON, data=msg.E2E_KEY_DATA if seed else msg.E2E_LESSON_DATA)
    answer = ctx.ask("fit_end_to_end", msg.FIT_E2E_DOING.format(setup=text), timeout=END_TO_END_TIMEOUT,
                     hint=msg.FIT_E2E_WHOLE_STACK, package=ctx.task.route_of("fit_end_to_end").package, X=X, Y=Y,
                     **{**LESSON, "seed": seed})
    ctx.data["lesson_data"] = not seed  # the stored reference curve is the lesson data's
    params = read_params(ctx, answer.params, END_TO_END_NAMES, [(1, hidden), (hidden,), (hidden, 1), (1,)],
                         f"after the lesson's run ({text})")
    with np.errstate(all="ignore"):
        mse = lesson_mse(params, X, Y)
    ctx.data["lesson_mse"] = mse
    losses = answer.train_loss
    if isinstance(losses, list) and all(isinstance(v, float) and np.isfinite(v) for v in losses):
        ctx.data["train_loss"] = losses  # the student's own claim: drawn on the scorecard, never graded
    if not mse < lesson.BAR and not mse < (bar := reachable_bar(X, Y, seed)):
        raise CheckFailed(msg.FIT_E2E_ABOVE_BAR.format(setup=text, mse=mse, bar=bar, floor=lesson.NOISE_FLOOR,
                                                       n=len(X), **msg.header(ctx.task)))
    check_replay(ctx, params, read_passes(ctx, answer.passes, len(X), text), X, Y, seed, text)
    # fit passes accumulate and clip_norm on to train_epoch: groups of 2 (a last one of 1) and a norm that clips. Last,
    # so that a fit of its own (a shortcut) meets the lesson's run first
    check_fit(ctx, replace(setup, n=10, options={"accumulate": 2, "clip_norm": 0.5}), 2, with_val=False)
