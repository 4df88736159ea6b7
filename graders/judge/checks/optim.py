"""Tasks 3.1-3.3: the student's SGD and Adam against torch.optim, step by step.

The worker steps the student's optimizer over reference Tensors with gradients
the judge chose (sometimes None); torch.optim, fed the same gradients, gives
every expected value. When a trajectory is wrong, a numpy model of the update
with one classic mistake at a time names the mistake it matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from graders import messages as msg
from graders.judge.checks.base import CheckFailed, Context, NotAttempted, Tolerance

TOL = Tolerance(rtol=1e-9, atol=1e-12)  # correct formulas differ only by rounding
EXACT = Tolerance(rtol=0.0, atol=0.0)  # what step() must leave as it was
MISTAKES = {
    "SGD": ("ascent", "none_not_skipped", "aliased", "ema", "ema_from_d", "momentum_ignored", "decay_after",
            "decay_ignored", "fresh"),
    "Adam": ("ascent", "none_not_skipped", "no_bias_correction", "shared_step", "eps_inside", "decoupled_decay",
             "decay_ignored", "fresh"),
}
EXAMPLES = 30


@dataclass
class Run:
    """One optimizer run: the starting values and, for each step, a gradient (or None) per parameter."""
    kind: str
    hyper: dict
    start: list
    grads: list
    save_after: int | None = None
    zero_grad: bool = False

    @property
    def call(self) -> str:
        """The constructor call as a student would write it (``SGD(params, lr=0.1)``), for messages."""
        return f"{self.kind}(params{''.join(f', {k}={v!r}' for k, v in self.hyper.items())})"

    @property
    def skips(self) -> bool:
        """Whether some step leaves a parameter without a gradient (None), which the update must skip."""
        return any(g is None for step in self.grads for g in step)

    def doing(self) -> str:
        """What the worker is asked to do, in a message's words: the call, the number of steps, and whether it skips
        None gradients, resumes from a saved state or calls zero_grad()."""
        extra = (msg.OPTIM_DOING_SKIPS if self.skips else "") + \
            (msg.OPTIM_DOING_RESUME.format(step=self.save_after) if self.save_after else "") + \
            (msg.OPTIM_DOING_ZERO if self.zero_grad else "")
        return msg.OPTIM_DOING.format(call=self.call, steps=len(self.grads), extra=extra)

    def inputs(self, index: int, step: int) -> list[str]:
        """The lines that show how parameter ``index`` got to ``step`` (0-based)."""
        lines = [msg.OPTIM_CALL.format(call=self.call),
                 msg.OPTIM_START.format(index=index, value=msg.array_text(self.start[index]))]
        for k in range(step + 1):
            if k == self.save_after:
                lines.append(msg.OPTIM_RESUMED.format(step=k, kind=self.kind))
            g = self.grads[k][index]
            lines.append(msg.OPTIM_GRAD_NONE.format(index=index, step=k + 1) if g is None else
                         msg.OPTIM_GRAD.format(index=index, step=k + 1, value=msg.array_text(g)))
        return lines


# ----- expected values: torch.optim, fed the same gradients -----
def torch_steps(run: Run) -> list[list[np.ndarray]]:
    """torch.optim's run of ``run`` (foreach off, one parameter at a time): every parameter after every step, the
    expected values of tasks 3.1-3.3."""
    import torch  # here, not at the top: a warm grade reads these values from the kept draws

    params = [torch.tensor(x, requires_grad=True) for x in run.start]
    optimizer, values = getattr(torch.optim, run.kind)(params, foreach=False, **run.hyper), []
    for grads in run.grads:
        for p, g in zip(params, grads):
            p.grad = None if g is None else torch.tensor(g)
        optimizer.step()
        values.append([p.detach().numpy().copy() for p in params])
    return values


# ----- the contract's update in numpy, with one classic mistake at a time (for hints only) -----
def _sgd(p, g, state, hyper, mistake, calls):
    lr, momentum, decay = hyper["lr"], hyper.get("momentum", 0.0), hyper.get("weight_decay", 0.0)
    d = g if mistake in ("decay_after", "decay_ignored") else g + decay * p
    if momentum:
        first = "buf" not in state
        if mistake == "ema" or (mistake == "ema_from_d" and not first):
            state["buf"] = momentum * state.get("buf", 0.0) + (1 - momentum) * d
        else:
            state["buf"] = d.copy() if first else momentum * state["buf"] + d
        state["aliased"] = first and mistake == "aliased" and not decay  # buf is p.grad itself
        d = d if mistake == "momentum_ignored" else state["buf"]
    if mistake == "decay_after":
        d = d + decay * p
    return p + lr * d if mistake == "ascent" else p - lr * d


def _adam(p, g, state, hyper, mistake, calls):
    lr, (b1, b2) = hyper.get("lr", 1e-3), hyper.get("betas", (0.9, 0.999))
    eps, decay = hyper.get("eps", 1e-8), hyper.get("weight_decay", 0.0)
    g = g if mistake in ("decoupled_decay", "decay_ignored") else g + decay * p
    state["t"] = t = state.get("t", 0) + 1
    t = calls if mistake == "shared_step" else t
    state["m"] = m = b1 * state.get("m", 0.0) + (1 - b1) * g
    state["v"] = v = b2 * state.get("v", 0.0) + (1 - b2) * g * g
    if mistake != "no_bias_correction":
        m, v = m / (1 - b1**t), v / (1 - b2**t)
    step = lr * m / (np.sqrt(v + eps) if mistake == "eps_inside" else np.sqrt(v) + eps)
    step = step + lr * decay * p if mistake == "decoupled_decay" else step
    return p + step if mistake == "ascent" else p - step


UPDATES = {"SGD": _sgd, "Adam": _adam}


def model_steps(run: Run, mistake: str | None = None) -> list[list[np.ndarray]]:
    """The numpy model's run of ``run`` with one classic ``mistake`` (None: none), every parameter after every step.
    Used only to name a mistake a wrong trajectory matches, never as the expected value."""
    params, states, values = [x.copy() for x in run.start], [{} for _ in run.start], []
    for k, grads in enumerate(run.grads):
        if mistake == "fresh" and k == run.save_after:
            states = [{} for _ in run.start]
        for i, g in enumerate(grads):
            if states[i].pop("aliased", False) and g is not None:
                states[i]["buf"] = g.copy()  # the worker wrote this step's grad into the same array
            if g is None and mistake != "none_not_skipped":
                continue
            g = np.zeros_like(params[i]) if g is None else g
            params[i] = UPDATES[run.kind](params[i], g, states[i], run.hyper, mistake, k + 1)
        values.append([p.copy() for p in params])
    return values


def diagnosis(run: Run, yours: list[list[np.ndarray]]) -> str | None:
    """The hint for the classic mistake whose trajectory matches all of yours, if one does."""
    for mistake in MISTAKES[run.kind]:
        if mistake == "fresh" and run.save_after is None:
            continue
        model = model_steps(run, mistake)
        if all(np.allclose(y, m, rtol=TOL.rtol, atol=TOL.atol) for ys, ms in zip(yours, model) for y, m in zip(ys, ms)):
            return msg.HINT_OPTIM_MISTAKES[mistake]
    return None


# ----- the ladder for one run -----
def check_run(ctx: Context, run: Run, hint: str) -> None:
    """Types and shapes, then in place, then values against torch, then the state dict and zero_grad."""
    head = msg.header(ctx.task)
    answer = ctx.ask("optimizer_run", run.doing(), hint=msg.HINT_SKIP_NONE if run.skips else None,
                     package=ctx.task.route.package, kind=run.kind, hyper=run.hyper, start=run.start, grads=run.grads,
                     save_after=run.save_after, zero_grad=run.zero_grad)
    done = run.save_after if answer.state_error is not None else len(run.grads)
    if not (len(answer.steps) == len(answer.in_place) == len(answer.grads_after) == done
            and all(len(row) == len(run.start) for row in answer.steps + answer.in_place + answer.grads_after)
            and (not run.zero_grad or len(answer.grads or ()) == len(run.start))):
        raise CheckFailed(msg.ANSWER_INCOMPLETE.format(doing=run.doing(), **head))
    yours = [[ctx.array(claim, x.shape, msg.OPTIM_DATA.format(index=i, step=k + 1))
              for i, (claim, x) in enumerate(zip(claims, run.start))] for k, claims in enumerate(answer.steps)]
    for k, (held, row) in enumerate(zip(answer.in_place, yours)):
        # the arrays the parameters started with hold every step's values: updated in place, as whoever holds
        # them (a model's layers) must see
        moved = [i for i, (claim, value) in enumerate(zip(held, row))
                 if not np.array_equal(ctx.array(claim, value.shape, msg.OPTIM_DATA.format(index=i, step=k + 1)),
                                       value)]
        if moved:
            raise CheckFailed(msg.OPTIM_NOT_IN_PLACE.format(step=k + 1, index=moved[0], call=run.call, **head))
    expected = ctx.expected("torch.optim's steps", torch_steps, run)
    for k, row in enumerate(yours):
        for i, value in enumerate(row):
            if np.any(np.abs(value - expected[k][i]) > TOL.allowed(expected[k][i])):
                ctx.compare(value, expected[k][i], msg.OPTIM_WHAT.format(index=i, step=k + 1),
                            inputs=lambda i=i, k=k: run.inputs(i, k), source=msg.OPTIM_SOURCE.format(kind=run.kind),
                            hint=diagnosis(run, yours) or hint, tol=TOL)
    for k, row in enumerate(answer.grads_after):
        for i, claim in enumerate(row):
            check_grad_kept(ctx, run, claim, i, k)
    if answer.state_error is not None:
        error = answer.state_error
        entries = ", ".join(f"{key!r} ({kind})" for key, kind in error.entries or ())
        raise CheckFailed(msg.lines(
            msg.OPTIM_STATE_UNSAVED.format(call=run.call, step=run.save_after, error=error.error, **head),
            error.entries is None and msg.OPTIM_STATE_TYPE.format(type=error.type),
            entries and msg.OPTIM_STATE_ENTRIES.format(entries=entries),
            msg.HINT.format(hint=msg.HINT_OPTIM_STATE)))
    for i, claim in enumerate(answer.grads if run.zero_grad else ()):
        if claim.get("type") != "NoneType":
            zeros = claim.get("kind") == "ndarray" and not np.any(claim["array"])
            raise CheckFailed(msg.OPTIM_GRAD_NOT_NONE.format(
                index=i, got=msg.OPTIM_ZEROS if zeros else f"a {claim.get('type')}", **head))
    if answer.state_keys is not None:
        check_state_keys(ctx, run, answer.state_keys)
    if answer.state is not None:
        check_buffers(ctx, run, answer.state)


def check_grad_kept(ctx: Context, run: Run, claim: dict, index: int, step: int) -> None:
    """p.grad after a step is the gradient it was given, exactly: torch.optim's step() reads it and never changes
    it, so the caller (clip_grad_norm, a logger) sees the gradient it computed."""
    given, what = run.grads[step][index], msg.OPTIM_GRAD_AFTER.format(index=index, step=step + 1)
    if given is None:
        if claim.get("type") != "NoneType":
            ctx.fail(what, f"a {claim.get('type')}", msg.OPTIM_GRAD_KEPT_NONE, hint=msg.HINT_STEP_KEEPS_GRAD)
        return
    yours = ctx.array(claim, given.shape, what, hint=msg.HINT_STEP_KEEPS_GRAD)
    ctx.compare(yours, given, what, inputs=lambda: run.inputs(index, step), source=msg.OPTIM_GRAD_KEPT,
                hint=msg.HINT_STEP_KEEPS_GRAD, tol=EXACT)


def torch_buffers(run: Run) -> list[np.ndarray | None]:
    """torch.optim.SGD's momentum buffer of each parameter after ``run.save_after`` steps (None: never stepped)."""
    import torch  # here, not at the top: a warm grade reads these values from the kept draws

    params = [torch.tensor(x, requires_grad=True) for x in run.start]
    optimizer = torch.optim.SGD(params, foreach=False, **run.hyper)
    for grads in run.grads[:run.save_after]:
        for p, g in zip(params, grads):
            p.grad = None if g is None else torch.tensor(g)
        optimizer.step()
    buffers = [optimizer.state[p].get("momentum_buffer") if p in optimizer.state else None for p in params]
    return [None if b is None else b.detach().numpy().copy() for b in buffers]


def check_buffers(ctx: Context, run: Run, state: dict) -> None:
    """SGD's momentum buffers in the state dict saved after ``run.save_after`` steps, against torch.optim.SGD's
    state[p]["momentum_buffer"]: a buffer in another form (lr kept inside it) steps the same at a fixed lr, but a
    checkpoint holds what torch's would, under the keys optim.py's docstring names (check_state_keys)."""
    if run.kind != "SGD" or not run.hyper.get("momentum"):
        return
    expected = ctx.expected("torch.optim.SGD's momentum buffers", torch_buffers, run)
    for i, want in enumerate(expected):
        key = f"momentum_buffer.{i}"
        if want is None or key not in state:
            continue
        what = msg.OPTIM_BUFFER_WHAT.format(index=i, step=run.save_after)
        yours = ctx.array(state[key], want.shape, what, hint=msg.HINT_SGD_BUFFER)
        ctx.compare(yours, want, what, inputs=lambda i=i: run.inputs(i, run.save_after - 1),
                    source=msg.OPTIM_BUFFER_SOURCE, hint=msg.HINT_SGD_BUFFER, tol=TOL)


STATE_KEY = re.compile(r"[A-Za-z_]\w*\.(\d+)")


def check_state_keys(ctx: Context, run: Run, keys: list[str]) -> None:
    """The state dict's keys as optim.py's docstrings name them: "<name>.<index of the parameter>", and SGD's
    momentum buffers momentum_buffer.<i> for each parameter stepped, so a checkpoint reads the same in any
    optimizer of its kind."""
    stepped = [i for i in range(len(run.start)) if any(step[i] is not None for step in run.grads[:run.save_after])]
    wanted = [f"momentum_buffer.{i}" for i in stepped] if run.kind == "SGD" and run.hyper.get("momentum") else []
    odd = [key for key in keys if not ((m := STATE_KEY.fullmatch(key)) and int(m[1]) < len(run.start))]
    missing = [key for key in wanted if key not in keys]
    if odd or missing:
        expected = msg.OPTIM_KEYS_SGD.format(keys=wanted) if wanted else msg.OPTIM_KEYS_ANY.format(n=len(run.start))
        ctx.fail(msg.OPTIM_KEYS_WHAT.format(call=run.call, step=run.save_after),
                 msg.OPTIM_KEYS_GOT.format(keys=sorted(keys)[:6]), expected, hint=msg.HINT_OPTIM_KEYS)


# ----- the friendly fixed point and the drawn runs -----
START = [np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), np.array([0.5, 2.0, -1.5]), np.array(1.0)]


def rounded(rng: np.random.Generator, shape) -> np.ndarray:
    """Values in [-2, 2] rounded to two decimals, so a message can print a run's numbers exactly."""
    return np.asarray(np.round(rng.uniform(-2.0, 2.0, shape), 2))


def gradients(steps: int, *, seed: int = 0, none=(), shapes=None, scale: float = 1.0) -> list[list]:
    """Gradients rounded to 2 decimals (times ``scale``), None at each (step, parameter) in ``none``."""
    rng = np.random.default_rng(seed)
    shapes = [x.shape for x in START] if shapes is None else shapes
    return [[None if (k, i) in none else np.asarray(rounded(rng, shape) * scale) for i, shape in enumerate(shapes)]
            for k in range(steps)]


SHAPES = ((), (1,), (3,), (2, 3), (3, 1), (1, 2), (2, 2))  # 0-d, vectors and matrices


@st.composite
def runs(draw, kind: str, hypers, *, max_steps: int, resume: bool = False, zero_grad: bool = False):
    """Runs of 1-3 parameters; about one gradient in four is None. Few draws per run, so cheap to generate."""
    save_after = draw(st.none() | st.integers(1, max_steps - 1)) if resume else None
    # No 0-d parameter in a resumed run: the given load_state_dict turns 0-d arrays into floats.
    shapes = [draw(st.sampled_from(SHAPES[1:] if save_after else SHAPES)) for _ in range(draw(st.integers(1, 3)))]
    steps = draw(st.integers((save_after or 0) + 1, max_steps))
    n = len(shapes)
    skipped = draw(st.integers(0, 2 ** (steps * n) - 1)) & draw(st.integers(0, 2 ** (steps * n) - 1))
    none = {(k, i) for k in range(steps) for i in range(n) if skipped >> (k * n + i) & 1}
    seed, scale = draw(st.integers(0, 2**16)), draw(st.sampled_from((1.0, 0.01)))
    grads = gradients(steps, seed=seed + 1, none=none, shapes=shapes, scale=scale)
    start = [rounded(np.random.default_rng(seed), shape) for shape in shapes]
    return Run(kind, draw(hypers), start, grads, save_after, zero_grad=draw(st.booleans()) if zero_grad else False)


def choices(*values):
    """A strategy for one of ``values``: shorthand for the tables of hyperparameters below."""
    return st.sampled_from(values)


SGD_LR = st.fixed_dictionaries({"lr": choices(0.01, 0.1, 0.5, 1.0)})
SGD_FULL = st.fixed_dictionaries({"lr": choices(0.01, 0.1, 0.5)}, optional={
    "momentum": choices(0.0, 0.5, 0.9, 0.99), "weight_decay": choices(0.0, 0.01, 0.1, 0.5)})
ADAM = st.fixed_dictionaries({}, optional={
    "lr": choices(1e-3, 0.01, 0.1), "betas": choices((0.9, 0.999), (0.5, 0.9), (0.0, 0.99), (0.95, 0.5)),
    "eps": choices(1e-8, 1e-6, 1e-3, 0.1), "weight_decay": choices(0.0, 0.01, 0.1)})


def sgd_step(ctx: Context) -> None:
    """Task 3.1's check: plain SGD on fixed runs (one step, skipped None gradients, zero_grad()), then drawn runs,
    against torch.optim.SGD."""
    check_run(ctx, Run("SGD", {"lr": 0.1}, START, gradients(1)), msg.HINT_SGD)
    check_run(ctx, Run("SGD", {"lr": 0.1}, START, gradients(3, none={(1, 1), (2, 0)})), msg.HINT_SGD)
    check_run(ctx, Run("SGD", {"lr": 0.5}, START, gradients(1), zero_grad=True), msg.HINT_SGD)
    ctx.forall(runs("SGD", SGD_LR, max_steps=3, zero_grad=True), lambda run: check_run(ctx, run, msg.HINT_SGD),
               examples=EXAMPLES)


def ignores_momentum_and_decay(ctx: Context) -> bool:
    """Does the student's SGD.step move exactly as plain SGD does when given momentum and weight decay (3.1 done,
    3.2 not begun)? Then 3.2 is "not attempted", as an untouched stub is, not "failed"."""
    hyper, grads = {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}, gradients(2, seed=1)
    run = Run("SGD", hyper, START, grads)
    answer = ctx.ask("optimizer_run", run.doing(), package=ctx.task.route.package, kind="SGD", hyper=hyper, start=START,
                     grads=grads, save_after=None, zero_grad=False)
    plain = ctx.expected("torch.optim's steps", torch_steps, Run("SGD", {"lr": hyper["lr"]}, START, grads))
    try:
        yours = [[ctx.array(claim, x.shape, "") for claim, x in zip(claims, START)] for claims in answer.steps]
    except (CheckFailed, KeyError, TypeError, ValueError):
        return False  # the ladder below says what is wrong
    return len(yours) == len(plain) and all(
        not np.any(np.abs(y - e) > TOL.allowed(e)) for ys, es in zip(yours, plain) for y, e in zip(ys, es))


def sgd_momentum_decay_state(ctx: Context) -> None:
    """Task 3.2's check: SGD with momentum, weight decay, both, and a state dict saved and loaded partway, on fixed then
    drawn runs. An optimizer that ignores momentum and weight decay is not attempted."""
    if ignores_momentum_and_decay(ctx):
        raise NotAttempted(msg.NOT_ATTEMPTED_IGNORED.format(task=ctx.task.id, what=msg.OPTIM_IGNORED_WHAT,
                                                             ignored=msg.OPTIM_IGNORED_OPTIONS, file="optim.py"))
    for hyper, steps, none, save_after in (
            ({"lr": 0.1, "momentum": 0.9}, 3, (), None),
            ({"lr": 0.1, "weight_decay": 0.1}, 2, (), None),
            ({"lr": 0.05, "momentum": 0.8, "weight_decay": 0.1}, 4, {(1, 1), (2, 0)}, None),
            ({"lr": 0.1, "momentum": 0.9, "weight_decay": 0.05}, 4, (), 2)):
        start = START[:2] if save_after else START  # see runs(): no 0-d parameter in a resumed run
        run = Run("SGD", hyper, start, gradients(steps, seed=1, none=none, shapes=[x.shape for x in start]),
                  save_after=save_after)
        check_run(ctx, run, msg.HINT_SGD_MOMENTUM)
    ctx.forall(runs("SGD", SGD_FULL, max_steps=4, resume=True),
               lambda run: check_run(ctx, run, msg.HINT_SGD_MOMENTUM), examples=EXAMPLES)


def adam(ctx: Context) -> None:
    """Task 3.3's check: Adam with default and chosen hyperparameters, weight decay, skipped None gradients and a
    resumed state, on fixed then drawn runs, against torch.optim.Adam."""
    for hyper, steps, none, save_after in (
            ({}, 3, (), None),
            ({"lr": 0.1, "betas": (0.5, 0.9), "eps": 1e-3}, 3, (), None),
            ({"lr": 0.05, "weight_decay": 0.1}, 2, (), None),
            ({"lr": 0.1}, 4, {(0, 1), (1, 1), (2, 0)}, None),
            ({"lr": 0.1, "betas": (0.8, 0.99)}, 4, (), 2)):
        start = START[:2] if save_after else START
        run = Run("Adam", hyper, start, gradients(steps, seed=2, none=none, shapes=[x.shape for x in start]),
                  save_after=save_after)
        check_run(ctx, run, msg.HINT_ADAM)
    ctx.forall(runs("Adam", ADAM, max_steps=4, resume=True), lambda run: check_run(ctx, run, msg.HINT_ADAM),
               examples=EXAMPLES)
