"""Requests for the loop checks (task 5): train_epoch, evaluate, clip_grad_norm and fit.

In package sub_train the engine and the optimizer are stand-ins that compute with torch (standins.py),
the model is the given nn.py over them, and a loader is a list of batches (or, for a shuffled fit, one
list per epoch, as the judge drew them). For train_epoch and evaluate the model is a probe whose forward adds
1 to its network's output in training mode and 2 while grad mode is on, so the modes it ran in show in the
numbers the judge compares. What else goes back (a count of optimizer steps, the batches the lesson's run
drew) only picks a hint or which run the judge replays. While fit is graded, its train_epoch and evaluate are
the judge's (oracles.py).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal

import numpy as np

from . import oracles
from .claims import claim, claims
from .verbs import module

# ----- the probe -----

# The probe model adds these to its network's output in training mode and while grad mode is on: its forward
# differs between the modes (as dropout's does), so the numbers the judge reads show the modes it ran in.
TRAINING_SHIFT, GRAD_SHIFT = 1.0, 2.0


def _probe(package, inner):
    """A Module of the package that runs ``inner``, then a child module that adds the shifts of the modes it runs
    in: a child, so that only a mode set on every module (model.train(), model.eval()) shows as that mode."""
    nn, tensor = module(package, "nn"), module(package, "tensor")

    class Shift(nn.Module):
        def forward(self, x):
            return x + (TRAINING_SHIFT * bool(self.training) + GRAD_SHIFT * bool(tensor.is_grad_enabled()))

    class Probe(nn.Module):
        def __init__(self):
            self.model, self.shift = inner, Shift()

        def forward(self, x):
            return self.shift(self.model(x))

    return Probe()


def weighted_loss(pred, target):
    """The weighted loss as graders/messages/loop.py's LOSS_WEIGHTED defines it (the worker imports nothing of the
    judge's, so it computes its own; tests/test_checks_loop.py holds it to that text): unlike MSE, it tells its
    arguments apart. Written with the ops both a package's Tensor and a torch tensor have (verbs_torch uses it)."""
    return ((pred - target) ** 2 * (target * target + 1.0)).mean()


def attach_ballast(node, size: int) -> None:
    """Hang ``size`` bytes on a graph's node (a torch autograd Node's ``metadata``: torch frees a node's saved tensors
    at backward(), never its metadata), each page written, so that the kernel counts them in the worker's resident
    memory for as long as the node lives: while something keeps the graph, a loss Tensor or a running total built
    from one. The bytes are a memory map of their own, so they go back to the kernel the moment the node goes,
    whatever the allocator keeps."""
    if node is None:  # a loss computed under no_grad: no graph to keep
        return
    block = mmap.mmap(-1, size)
    np.frombuffer(block, dtype=np.uint8)[::mmap.PAGESIZE] = 1
    node.metadata["ballast"] = block


class _Loss:
    """loss_fn: the package's MSELoss, or ("weighted") ``weighted_loss``; ``kind`` names it to the judge. With
    ``ballast``, each loss's graph holds that many bytes (``attach_ballast``)."""

    def __init__(self, package, kind, ballast: int = 0):
        self.kind, self.ballast = kind, ballast
        self.function = module(package, "nn").MSELoss() if kind == "mse" else weighted_loss

    def __call__(self, pred, target):
        value = self.function(pred, target)
        if self.ballast:
            attach_ballast(getattr(getattr(value, "_torch", None), "grad_fn", None), self.ballast)
        return value


def _counting_sgd(package, params, lr, momentum):
    class CountingSGD(module(package, "optim").SGD):
        steps = 0

        def step(self):
            self.steps += 1
            return super().step()

    return CountingSGD(params, lr=lr, momentum=momentum)


# ----- building what the judge describes -----


def _network(package, sizes, state=None, rng=None):
    """Sequential(Linear, ReLU, ..., Linear) over ``sizes``, with the judge's weights if given."""
    nn = module(package, "nn")
    rng = np.random.default_rng(0) if rng is None else rng
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers += [nn.ReLU()] if i else []
        layers.append(nn.Linear(n_in, n_out, rng=rng))
    model = nn.Sequential(*layers)
    if state is not None:
        model.load_state_dict(state)
    return model


def _loader(package, X, Y, batch_size, orders=None):
    """A list of (xb, yb) Tensor pairs in the data's order; with ``orders`` (one order of the examples per
    epoch), an iterable that yields each epoch's batches in its order, as a shuffling loader would."""
    if orders is not None:
        return _Epochs(package, X, Y, batch_size, orders)
    Tensor = module(package, "tensor").Tensor
    return [(Tensor(X[i:i + batch_size]), Tensor(Y[i:i + batch_size])) for i in range(0, len(X), batch_size)]


class _Epochs:
    """Each ``iter()`` is the next epoch: the batches of the next order (the last one again after the last)."""

    def __init__(self, package, X, Y, batch_size, orders):
        self.package, self.X, self.Y, self.batch_size, self.orders = package, X, Y, batch_size, orders
        self.passes = 0

    def __len__(self):
        return -(-len(self.X) // self.batch_size)

    def __iter__(self):
        order = np.asarray(self.orders[min(self.passes, len(self.orders) - 1)])
        self.passes += 1
        return iter(_loader(self.package, self.X[order], self.Y[order], self.batch_size))


def _params(model) -> list[dict]:
    return [claim(p.data) for p in model.parameters()]


def history_claim(value) -> dict:
    """A claim for fit's answer: a dict's two lists item by item, anything else as it is."""
    if not isinstance(value, dict):
        return claim(value)
    keys = [str(k) for k in list(value)[:10]]
    return {"kind": "dict", "type": type(value).__name__, "keys": keys,
            "items": {k: claims(value[k]) for k in ("train_loss", "val_loss") if k in value}}


# ----- the requests -----


def train_epoch_watched(package, sizes, state, X, Y, batch_size, lr, momentum, stale_grad=None,
                        options=None, loss="mse", start_training=False, ballast=0):
    """One train_epoch of a probe model (starting in eval mode unless ``start_training``, maybe with stale grads);
    ``options`` (accumulate, clip_norm) are passed only when given; with ``ballast``, each loss's graph holds that
    many bytes (the judge reads the worker's memory). The optimizer's count of steps goes back for a hint only: the
    steps show in the parameters."""
    inner = _network(package, sizes, state)
    model = _probe(package, inner)
    model.train(bool(start_training))
    if stale_grad is not None:
        for p in inner.parameters():
            p.grad = np.full(p.shape, float(stale_grad))
    optimizer = _counting_sgd(package, model.parameters(), lr, momentum)
    returned = module(package, "train").train_epoch(model, _loader(package, X, Y, batch_size), optimizer,
                                                    _Loss(package, loss, ballast), **(options or {}))
    return {"loss": claim(returned), "params": _params(inner), "steps": optimizer.steps}


def evaluate_watched(package, sizes, state, X, Y, batch_size, start_training, probe_x, loss="mse"):
    """evaluate on a probe model that starts in training mode or in eval mode; then the probe's output on
    ``probe_x``, which shows the modes evaluate left behind."""
    inner = _network(package, sizes, state)
    model = _probe(package, inner)
    model.train(bool(start_training))
    returned = module(package, "train").evaluate(model, _loader(package, X, Y, batch_size), _Loss(package, loss))
    after = model(module(package, "tensor").Tensor(probe_x))
    return {"loss": claim(returned), "after": claim(getattr(after, "data", after)), "params": _params(inner)}


class _LoaderFailed(Exception):
    """What the failing loader of evaluate_interrupted raises."""


def _failing_loader(batches, at):
    """The batches up to ``at``, then _LoaderFailed, as a loader whose file went missing would."""
    yield from batches[:at]
    raise _LoaderFailed(f"the loader failed at batch {at + 1}")


def evaluate_interrupted(package, sizes, state, X, Y, batch_size, fail_at, probe_x, loss="mse"):
    """evaluate on a model in training mode whose loader raises at batch ``fail_at`` (0-based); then the model's
    output on ``probe_x``. The model adds 1 to its network's output in training mode (its forward differs between
    the modes, as dropout makes it), so the numbers show the mode evaluate left it in."""
    nn, tensor = module(package, "nn"), module(package, "tensor")
    inner = _network(package, sizes, state)

    class Shifted(nn.Module):
        def __init__(self):
            self.model = inner

        def forward(self, x):
            out = self.model(x)
            return out + 1.0 if self.training else out

    model = Shifted()
    model.train()
    try:
        module(package, "train").evaluate(model, _failing_loader(_loader(package, X, Y, batch_size), fail_at),
                                          _Loss(package, loss))
    except Exception:  # noqa: BLE001 - the loader's failure, passed on or not: only the mode after it is asked about
        pass
    with tensor.no_grad():
        return {"out": claim(model(tensor.Tensor(probe_x)).data)}


def clip(package, grads, max_norm):
    """clip_grad_norm over parameters holding ``grads`` (None: no grad); the grads after, and
    whether each parameter still holds the very array it had (scaled in place)."""
    tensor = module(package, "tensor")
    params, before = [], []
    for g in grads:
        shape = np.shape(g) if g is not None else (2,)
        p = tensor.Tensor(np.zeros(shape), requires_grad=True)
        p.grad = None if g is None else np.array(g, dtype=np.float64)
        params.append(p)
        before.append(p.grad)
    total = module(package, "train").clip_grad_norm(params, max_norm)
    return {"total": claim(total), "grads": [claim(p.grad) for p in params],
            "same_array": [p.grad is b for p, b in zip(params, before)]}


@contextlib.contextmanager
def _judged_epochs(package):
    """Inside, the package's train_epoch and evaluate are the judge's (oracles.py), so fit is graded on its own
    and a mistake in them costs once."""
    train = module(package, "train")
    own = getattr(train, "train_epoch", None), getattr(train, "evaluate", None)
    train.train_epoch, train.evaluate = oracles.train_epoch, oracles.evaluate
    try:
        yield
    finally:
        train.train_epoch, train.evaluate = own


def _fit(package, sizes, state, X, Y, batch_size, lr, momentum, epochs, *, val=None, orders=None, checkpoint=None,
         loss="mse", fit_options=None):
    model = _network(package, sizes, state)
    optimizer = module(package, "optim").SGD(model.parameters(), lr=lr, momentum=momentum)
    options = dict(fit_options or {})  # accumulate, clip_norm: fit passes them on to train_epoch
    if val is not None:
        options["val_loader"] = _loader(package, val[0], val[1], batch_size)
    if checkpoint is not None:
        options["checkpoint"] = checkpoint
    with _judged_epochs(package):
        history = module(package, "train").fit(model, _loader(package, X, Y, batch_size, orders), optimizer,
                                               _Loss(package, loss), epochs, **options)
    return {"history": history_claim(history), "params": _params(model)}


def fit_history(package, sizes, state, X, Y, batch_size, lr, momentum, epochs, orders, val=None, loss="mse",
                options=None):
    """fit over a loader shuffled in ``orders`` (with the judge's train_epoch and evaluate), with a val_loader
    when ``val`` holds (X, Y), and ``options`` (accumulate, clip_norm) when given."""
    return _fit(package, sizes, state, X, Y, batch_size, lr, momentum, epochs, val=val, orders=orders, loss=loss,
                fit_options=options)


class _Recorded:
    """The student's loader, as fit sees it (its length and attributes are the loader's), noting each pass's
    batches as rows of X: the judge replays the run over them. What it notes is the worker's word, so it only
    picks which run the judge replays; the parameters must then be that run's, which no shortcut computes."""

    MAX_PASSES = 1000  # the lesson asks for 300; a fit that iterates more is told so, without the rest noted

    def __init__(self, loader, X):
        self.loader, self.passes = loader, []
        self.row = {float(x): i for i, x in enumerate(np.asarray(X, dtype=np.float64)[:, 0])}

    def __len__(self):
        return len(self.loader)

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def __iter__(self):
        noted = {"order": [], "sizes": []}
        if len(self.passes) < self.MAX_PASSES:
            self.passes.append(noted)
        iterator = iter(self.loader)
        while True:
            try:
                xb, yb = next(iterator)
            except StopIteration:
                return
            rows = self._rows(xb)
            if len(noted["order"]) < 4 * len(self.row):
                noted["order"] += rows
                noted["sizes"].append(len(rows))
            yield xb, yb

    def _rows(self, xb) -> list[int]:
        """The rows of X a batch holds (-1 for an x that is not in X)."""
        try:
            values = np.asarray(getattr(xb, "data", xb), dtype=np.float64).reshape(-1)
        except Exception:  # noqa: BLE001 - a batch that is no array: one unknown row
            return [-1]
        return [self.row.get(float(v), -1) for v in values[:4 * len(self.row)]]

    def answer(self) -> list[dict]:
        return [{"order": np.array(p["order"], dtype=np.int64), "sizes": np.array(p["sizes"], dtype=np.int64)}
                for p in self.passes]


def fit_end_to_end(package, X, Y, seed, hidden, batch_size, lr, epochs):
    """The lesson's run on the package: its final parameters and the batches its loader yielded, nothing it
    claims about its loss."""
    nn, data, optim = module(package, "nn"), module(package, "data"), module(package, "optim")
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(1, hidden, rng=rng), nn.ReLU(), nn.Linear(hidden, 1, rng=rng))
    loader = _Recorded(data.DataLoader(X, Y, batch_size=batch_size, shuffle=True,
                                       rng=np.random.default_rng(seed + 1)), X)
    history = module(package, "train").fit(model, loader, optim.SGD(model.parameters(), lr=lr), nn.MSELoss(), epochs)
    return {"params": _params(model), "train_loss": _floats(history), "passes": loader.answer()}


def _floats(history):
    """The history's training losses as plain floats, for the scorecard's picture only (never graded)."""
    try:
        return [float(v) for v in history["train_loss"]][:100_000]
    except Exception:  # noqa: BLE001 - a history we cannot read is simply not drawn
        return None


def _checkpoint_stub(package, path):
    """The NotImplementedError of the checkpoint helpers, when they are still stubs (else None)."""
    save = getattr(module(package, "train"), "_save_checkpoint", None)
    if not callable(save):
        return None
    try:
        save(path, None, None, 0, {"train_loss": [], "val_loss": []})
    except NotImplementedError as error:
        return error
    except Exception:  # noqa: BLE001 - written, so not a stub
        return None
    return None


def _remove(*paths):
    for path in paths:
        if os.path.lexists(path):
            os.remove(path)


class _Lethal:
    """An object whose unpickling kills the process that unpickles it: what the judge sees of it (a death, from
    outside) no code in this process can rewrite afterwards."""

    def __reduce__(self):
        return os.kill, (os.getpid(), signal.SIGKILL)


def resume_from_pickle(package, sizes, state, X, Y, batch_size, lr, momentum, path, loss="mse"):
    """fit with ``checkpoint=path`` where path holds a checkpoint whose every array is a pickled object that kills
    the process loading it: this request comes back only if loading never ran the pickles (whatever fit then
    raised or returned)."""
    names = ["epoch", "train_loss", "val_loss", *(f"model.{k}" for k in _network(package, sizes, state).state_dict())]
    arrays = {}
    for name in names:
        arrays[name] = np.empty((), dtype=object)
        arrays[name][()] = _Lethal()
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    try:
        _fit(package, sizes, state, X, Y, batch_size, lr, momentum, 1, checkpoint=path, loss=loss)
    except Exception:  # noqa: BLE001 - refusing the file is right; only whether the pickles ran is asked about
        pass
    finally:
        _remove(path, path + ".npz")
    return {"survived": True}


def fit_cut(package, sizes, state, X, Y, val, batch_size, lr, momentum, epochs, first, path, loss="mse"):
    """An uninterrupted fit of ``epochs``, then a fit of ``first`` epochs with ``checkpoint=path``, each with the
    judge's train_epoch and evaluate. The judge reads what the second left at the path itself, from outside."""
    _remove(path, path + ".npz")
    args = (package, sizes, state, X, Y, batch_size, lr, momentum)
    try:
        whole = _fit(*args, epochs, val=val, loss=loss)
    except NotImplementedError as error:
        stub = _checkpoint_stub(package, path) if str(error).startswith("Task 5.4") else None
        _remove(path, path + ".npz")
        raise (stub or error) from None
    return {"whole": whole, "cut": _fit(*args, first, val=val, checkpoint=path, loss=loss)}


def fit_resumed(package, sizes, fresh_state, X, Y, val, batch_size, lr, momentum, epochs, path, loss="mse",
                state=None):
    """New objects (``fresh_state``) fit to ``epochs`` with ``checkpoint=path``, from the checkpoint the judge left
    there; then what _load_checkpoint returns from the file that fit left (the epoch count, as it is: its type is
    asked about), or what it raises."""
    answer = _fit(package, sizes, fresh_state, X, Y, batch_size, lr, momentum, epochs, val=val, checkpoint=path,
                  loss=loss)
    train = module(package, "train")
    model = _network(package, sizes, fresh_state)
    optimizer = module(package, "optim").SGD(model.parameters(), lr=lr, momentum=momentum)
    try:
        loaded = train._load_checkpoint(path, model, optimizer)
    except Exception as error:  # noqa: BLE001 - what it raised is the answer
        answer["loaded"] = {"type": "NoneType", "epoch": claim(None), "error": f"{type(error).__name__}: "
                                                                             f"{str(error)[:200]}"}
        return answer
    epoch = loaded[0] if isinstance(loaded, (tuple, list)) and len(loaded) == 2 else None
    answer["loaded"] = {"type": type(loaded).__name__, "epoch": claim(epoch)}
    return answer


class _DyingLoader:
    """The batches again at each pass, until pass ``dies_at`` (0-based), which raises _LoaderFailed."""

    def __init__(self, batches, dies_at):
        self.batches, self.dies_at, self.passes = batches, dies_at, 0

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        self.passes += 1
        if self.passes > self.dies_at:
            raise _LoaderFailed(f"the loader failed in epoch {self.passes}")
        return iter(self.batches)


def fit_dies(package, sizes, state, X, Y, val, batch_size, lr, momentum, epochs, first, path, loss="mse"):
    """fit of ``epochs`` with ``checkpoint=path`` whose loader fails in epoch ``first`` + 1 (the judge then reads
    what it left at the path); and the epoch count _load_checkpoint reads from that file, for the message."""
    _remove(path, path + ".npz")
    train, optim = module(package, "train"), module(package, "optim")
    model = _network(package, sizes, state)
    loader = _DyingLoader(_loader(package, X, Y, batch_size), first)
    try:
        with _judged_epochs(package):
            train.fit(model, loader, optim.SGD(model.parameters(), lr=lr, momentum=momentum), _Loss(package, loss),
                      epochs, checkpoint=path)
    except Exception:  # noqa: BLE001 - the loader's failure, passed on or not: what fit saved is the question
        pass
    if not os.path.isfile(path) or not callable(getattr(train, "_load_checkpoint", None)):
        return {}
    model = _network(package, sizes, state)
    try:
        loaded = train._load_checkpoint(path, model, optim.SGD(model.parameters(), lr=lr, momentum=momentum))
    except Exception as error:  # noqa: BLE001 - what it raised is the answer
        return {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    return {"epoch": claim(loaded[0] if isinstance(loaded, (tuple, list)) and loaded else None)}


class _SaveDied(Exception):
    """What the array of a save that dies midway raises when numpy reads it."""


class _Unwritable:
    """An optimizer state entry that numpy cannot read: a save dies when it comes to write it."""

    def __array__(self, *args, **kwargs):
        raise _SaveDied("the run died while the checkpoint was being written")


def save_dies(package, sizes, state, lr, momentum, path, epochs, **_):
    """A _save_checkpoint over the checkpoint of ``epochs`` that dies while it writes (the optimizer's state holds
    an array numpy cannot read): the judge compares the file before and after, from outside."""
    train = module(package, "train")
    model = _network(package, sizes, state)
    dying = module(package, "optim").SGD(model.parameters(), lr=lr, momentum=momentum)
    dying.state_dict = lambda: {"momentum_buffer.0": _Unwritable()}
    try:
        train._save_checkpoint(path, model, dying, epochs + 1, {"train_loss": [0.0] * (epochs + 1),
                                                                "val_loss": [0.0] * (epochs + 1)})
    except Exception:  # noqa: BLE001 - the save is meant to die; what it left is the question
        pass
