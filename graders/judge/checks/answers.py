"""What each worker verb answers, parsed once into a small typed object.

The worker builds its answers with the judge's own code, but in the process that runs student code, and that
code can change what comes back. So an answer is checked once, where it arrives (``Context.ask``), against the
type its verb answers with: a field it lacks, or one of another JSON type, fails the check as "came back
incomplete or malformed", the submission's doing, never as a KeyError or TypeError deep in a check that would
read as the grader's own failure. A claim (``Claim``) is what ``worker.claims`` made of one value; the checks read
those with ``Context.array``, ``number`` and ``sequence``.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field

Claim = dict  # a value as worker.claims describes it: {"kind", "type", and its "array", "value" or "items"}


class Malformed(Exception):
    """An answer that is not of its verb's type."""


@dataclass(frozen=True)
class OpRule:
    """op_backward, and each answer of op_cost: the output, and the rule's gradients (none when out is not a
    Tensor) with the operand each belongs to."""
    out: Claim
    slots: list[int] | None = None
    grads: Claim | None = None
    g_changed: bool | None = None  # op_backward only: whether the rule wrote into its upstream gradient g


@dataclass(frozen=True)
class Graph:
    """graph's answer (the engine's tasks): every leaf's .grad after the student's backward() on a graph of judge-made
    ops, in the order of the graph's leaves, for the judge to compare with torch.autograd's on the same graph."""
    grads: list[Claim]


@dataclass(frozen=True)
class Outcome:
    """One scenario of engine_errors: what it returned (``did_return``), or the exception it raised."""
    returned: object = None
    raised: dict | None = None
    did_return: bool = False


@dataclass(frozen=True)
class Step:
    """One backward step of a program: returned or raised (as ``Outcome``), and every leaf's .grad after it."""
    grads: list[Claim]
    returned: object = None
    raised: dict | None = None

    @property
    def did_raise(self) -> bool:
        """Whether this backward step raised, so a check can tell a refusal from a wrong gradient without reading the
        raw answer."""
        return self.raised is not None


@dataclass(frozen=True)
class Program:
    """program's answer (task 2.2's drawn programs): each backward step's outcome, and for every tensor the program made
    whether it was recorded ([requires_grad, count of parents]), which no_grad() blocks decide."""
    outcomes: list[Step]
    recorded: list[list[object]]


@dataclass(frozen=True)
class NoGradProbe:
    """no_grad_probe's answer (task 2.3): the mode seen before, inside, nested in, after and after an exception out of a
    no_grad() block (``seen``), and whether a product made inside and one made after were recorded."""
    seen: dict[str, object]
    inside_requires_grad: object
    inside_parents: int
    inside_data: Claim
    outside_requires_grad: object
    outside_parents: int


@dataclass(frozen=True)
class StateError:
    """Why an optimizer's state dict did not survive np.savez and np.load(allow_pickle=False), as a checkpoint must: the
    error, the state dict's type, and its first entries that are not plain numbers or arrays (for the message)."""
    error: str
    type: str
    entries: list | None


@dataclass(frozen=True)
class OptimizerRun:
    """optimizer_run's answer (tasks 3.1-3.3): the parameters after each step, the arrays they started with after each
    step (an update must be in place), each parameter's grad after each step (as it was given), the grads zero_grad()
    left, and what the state dict's round trip through np.savez gave (its keys and entries, or why it failed)."""
    steps: list[list[Claim]]
    in_place: list[list[Claim]]  # the arrays the parameters started with, after each step
    grads_after: list[list[Claim]]  # each p.grad after each step
    grads: list[Claim] | None = None
    state_error: StateError | None = None
    state_keys: list[str] | None = None
    state: dict[str, Claim] | None = None


@dataclass(frozen=True)
class Epoch:
    """One pass over a loader: each batch as the worker saw it (a pair of sides, each a Tensor's claims)."""
    batches: list[dict]


@dataclass(frozen=True)
class LoaderEpochs:
    """loader_epochs' answer (tasks 4.1, 4.2): each loader's passes, batch by batch, and len() of the first loader when
    it was asked for."""
    loaders: list[list[Epoch]]
    length: Claim | None = None
    data_kept: bool | None = None  # whether X and Y were as given after every pass: a claim that can only cost


@dataclass(frozen=True)
class TrainEpoch:
    """train_epoch_watched's answer (task 5.1): the loss train_epoch returned and the probe's parameters after it, which
    the judge compares with torch's run of the same epoch."""
    loss: Claim
    params: list[Claim]
    steps: int  # the worker's count: a hint's only, where the parameters are wrong


@dataclass(frozen=True)
class Evaluate:
    """evaluate_watched's answer (task 5.2): the loss evaluate returned, the probe's output after it (the modes it left
    behind) and its parameters (evaluate must change none)."""
    loss: Claim
    after: Claim  # the probe's output on the judge's x after evaluate: it shows the modes left behind
    params: list[Claim]


@dataclass(frozen=True)
class Clip:
    """clip's answer (task 5.3): the total norm clip_grad_norm returned, the grads after it, and whether each parameter
    still holds the very array it had (the clipping must scale in place)."""
    total: Claim
    grads: list[Claim]
    same_array: list[bool]


@dataclass(frozen=True)
class Fit:
    """fit_history's and fit_resumed's answer (tasks 5.4, 5.5): the history fit returned and the parameters it left,
    both compared with torch's run of the same fit."""
    history: Claim
    params: list[Claim]


@dataclass(frozen=True)
class FitEndToEnd:
    """fit_end_to_end's answer (task 5.4): the lesson's run on the student's package, its final parameters and each pass
    of its loader (order and sizes of the batches); the loss it reports is not graded, only shown on the picture."""
    params: list[Claim]
    train_loss: list[float] | None = None
    passes: list[dict] | None = None  # each pass over the DataLoader: {"order": rows of X, "sizes": of each batch}


@dataclass(frozen=True)
class ResumeFromPickle:
    """resume_from_pickle's answer (task 5.5): that the worker survived loading a checkpoint of lethal pickles. A loader
    that ran a pickle kills the process, so the answer's arrival is the evidence, not its content."""
    survived: bool


@dataclass(frozen=True)
class FitCut:
    """An uninterrupted fit, then one of its first epochs with a checkpoint (which the judge reads itself)."""
    whole: Fit
    cut: Fit


@dataclass(frozen=True)
class Loaded:
    """What _load_checkpoint returned from the checkpoint a resumed fit left: its type, and the epoch count if it
    was a pair; or what it raised."""
    type: str
    epoch: Claim
    error: str | None = None


@dataclass(frozen=True)
class FitResumed:
    """A fit resumed from the checkpoint the judge left, then what _load_checkpoint made of the file it left."""
    history: Claim
    params: list[Claim]
    loaded: Loaded


@dataclass(frozen=True)
class DiedInEpoch:
    """The epoch count _load_checkpoint read from what a fit whose loader failed partway left (or what it
    raised); neither where it left nothing."""
    epoch: Claim | None = None
    error: str | None = None


@dataclass(frozen=True)
class Interrupted:
    """The model's output after evaluate's loader raised."""
    out: Claim


@dataclass(frozen=True)
class FitTorch:
    """fit_torch_watched's answer (tasks 6.1, 6.2): the history and parameters of fit_torch, and what the watched model
    and batches saw: each forward's phase and modes, the model's and the batches' moves, and the devices the parameters
    ended on. On the judge's device, what fit_torch raised comes back in ``raised`` (as an error's description), with
    the notes and without a history."""
    forwards: list
    model_to: list
    moves: list[list]
    yielded: list
    history: Claim | None = None
    params: list[Claim] | None = None
    param_devices: list[str] = field(default_factory=list)
    raised: dict | None = None


# Each verb's answer, written out (worker.main.verbs() answers them); None: a claim itself, or nothing.
OF_VERB: dict[str, type | None] = {
    "loader_epochs": LoaderEpochs,
    "train_epoch_watched": TrainEpoch,
    "evaluate_watched": Evaluate,
    "evaluate_interrupted": Interrupted,
    "clip": Clip,
    "fit_history": Fit,
    "fit_end_to_end": FitEndToEnd,
    "resume_from_pickle": ResumeFromPickle,
    "fit_cut": FitCut,
    "fit_resumed": FitResumed,
    "save_dies": None,
    "fit_dies": DiedInEpoch,
    "optimizer_run": OptimizerRun,
    "unbroadcast": Claim,
    "op_backward": OpRule,
    "op_cost": list[OpRule],
    "unbroadcast_cost": list[Claim],
    "graph": Graph,
    "engine_errors": dict[str, Outcome],
    "no_grad_probe": NoGradProbe,
    "program": Program,
    "fit_torch_watched": FitTorch,
}


def parse(verb: str, raw):
    """``raw``, the worker's answer to ``verb``, as its type; raises Malformed when it is not one. A verb not in
    the table (a test's own) comes back as it is."""
    return _as(OF_VERB[verb], raw, verb) if verb in OF_VERB else raw


def _as(kind, raw, where: str):
    if kind is object:
        return raw
    if kind is None or kind is type(None):
        if raw is not None:
            raise Malformed(where)
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(kind):
            try:
                return _as(option, raw, where)
            except Malformed:
                continue
        raise Malformed(where)
    if origin is list:
        if not isinstance(raw, list):
            raise Malformed(where)
        (item,) = typing.get_args(kind)
        return [_as(item, value, where) for value in raw]
    if origin is dict:
        if not isinstance(raw, dict):
            raise Malformed(where)
        _, item = typing.get_args(kind)
        return {key: _as(item, value, where) for key, value in raw.items()}
    if kind is Outcome:
        return _outcome(raw, where)
    if dataclasses.is_dataclass(kind):
        return _record(kind, raw, where)
    if kind is float:
        ok = isinstance(raw, (int, float)) and not isinstance(raw, bool)
    elif kind is int:
        ok = isinstance(raw, int) and not isinstance(raw, bool)
    else:
        ok = isinstance(raw, kind)
    if not ok:
        raise Malformed(where)
    return raw


def _record(kind, raw, where: str):
    if not isinstance(raw, dict):
        raise Malformed(where)
    hints = _hints(kind)
    values = {}
    for one in dataclasses.fields(kind):
        if one.name in raw:
            values[one.name] = _as(hints[one.name], raw[one.name], f"{where}.{one.name}")
        elif one.default is dataclasses.MISSING and one.default_factory is dataclasses.MISSING:
            raise Malformed(f"{where}.{one.name}")
    return kind(**values)


@functools.cache
def _hints(kind) -> dict:
    """A record's fields' types (typing.get_type_hints evaluates them anew at every call: once per answer)."""
    return typing.get_type_hints(kind)


def _outcome(raw, where: str) -> Outcome:
    if not isinstance(raw, dict) or len(raw) != 1 or not {"returned", "raised"} >= set(raw):
        raise Malformed(where)
    if "raised" in raw:
        return Outcome(raised=_as(dict, raw["raised"], where))
    return Outcome(returned=raw["returned"], did_return=True)
