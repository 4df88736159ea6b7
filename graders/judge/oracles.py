"""The oracles: the judge's answers to the functions of the student's API that the student's code calls in a
worker, in the middle of a request (graders/worker/oracles.py, through worker.verbs.ask_judge): ``unbroadcast``
for the student's rules of 1.2 and 1.3, ``train_epoch`` and ``evaluate`` for the student's ``fit`` (5.4, 5.5).
The reference's values cross, never its code. The helper also replays the lesson's run for the judge itself
(``replay_lesson``, task 5.4), a question no worker is offered.

The asker is untrusted, so every oracle is bounded and charged to it:

- **Sizes.** An oracle answers only within the checks' own sizes (``Caps``): a network of at most 2 Linear layers
  of 32 units on 256 rows a call (the lesson's 1-32-1 network and its 256 points; the checks' fits use 2-4-1 on
  12), at most ``MAX_CALLS`` train_epoch and evaluate calls a request (the checks' fits make 12 at most), and a
  gradient of at most ``MAX_UNBROADCAST_ELEMENTS`` to sum (the cost rung's largest is 320 x 320). Anything larger
  is refused before anything is computed.
- **Where.** unbroadcast is a numpy sum in the judge, bounded by its cap. train_epoch and evaluate compute with
  torch in a helper process of the judge's (``Helper``), never in the judge itself: a fresh interpreter that runs
  no student code, started when a grade that needs it starts (it imports torch while the judge works, and its
  start never counts against a request) and kept for every later grade of this judge process, dying with it
  (``PR_SET_PDEATHSIG``). Once its imports are done, its address space is capped at
  what they took plus ``HELPER_HEADROOM`` (``RLIMIT_AS``), and an answer not back within the handle's backstop for one
  answer (graders.isolation.worker_process.ANSWER_SECONDS) gets it killed (a fresh one is started at once, for the
  next request). Its time is the judge's: never counted against the asking request, in CPU or in waiting.
- **Kept.** An answer is a function of its checked arguments alone (the same torch, the same reference), so the judge
  keeps each by a digest of them (``Kept``): in memory for the judge's life and, where the examples cache is on,
  beside the draws (graders.judge.examples_cache), as the helper's frame. Every correct fit of a class asks the same
  runs, and a grade whose every answer is kept never starts the helper: it starts at the first answer that is not
  kept, and the request that asked waits for it (its answer's deadline moved by the wait: ``Calls.waited``).
  The kept frame holds the same float64 values the helper sent: a kept answer and a computed one give the same
  grade, byte for byte.
- **Charged.** A refusal or a failure (too large, too many calls, past the deadline, out of memory, a helper that
  stopped) is raised in the student's code as a ValueError, and fails the request that asked whatever that code
  did with it (``Worker.oracle_failure``, read by ``Context.ask``), with a message in the student's terms
  (graders/messages/checks.py): never a grader error.
"""

from __future__ import annotations

import atexit
import resource
import select
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from graders import messages as msg
from graders.judge.own_process import OwnProcess
from graders.worker import protocol

MAX_DIMS = 8
# unbroadcast's largest gradient in the checks: 1.2's and 1.3's cost rungs, up to 320 x 320 with a key (102,400)
MAX_UNBROADCAST_ELEMENTS = 2**17
# train_epoch and evaluate calls in one request: the checks' fits make at most 12 (fit_cut: 4 + 2 epochs,
# each with a train_epoch and an evaluate), a fit of the lesson's 300 epochs would make 300 or 600
MAX_CALLS = 64
CHECKS_MOST_EPOCHS = 6
LOSSES = ("mse", "weighted")  # the losses graders.judge.checks.trajectory computes
HELPER_HEADROOM = 512 * 2**20  # the helper's address space beyond its imports: the checks' runs need under 1 MiB
READY_TIMEOUT = 60.0  # seconds the helper may take to import torch on a loaded machine
REPLAY_TIMEOUT = 120.0  # seconds for the lesson's replay (about 1 s; a loaded machine's 2 cores are shared)
STOP_WAIT = 2.0  # seconds a helper whose pipe closed is given to be gone, for its exit status
KEPT_IN_MEMORY = 4096  # answers a judge keeps in memory: a class's fits ask a few dozen distinct runs each
MAX_KEPT_FRAME = 2**20  # bytes of one kept answer: the lesson's replay (97 weights, 300 losses) takes about 6 KiB


@dataclass(frozen=True)
class Caps:
    """The largest run train_epoch and evaluate answer: the lesson's network and data (covering every check's)."""

    layers: int = 2  # Linear layers
    units: int = 32  # each layer's inputs and outputs
    rows: int = 256  # over one call's batches (so at most as many batches)


CAPS = Caps()
CALLER = {"unbroadcast": "backward rule", "train_epoch": "fit", "evaluate": "fit", "lesson_run": "fit"}


class Refused(ValueError):
    """An oracle would not answer: the text, in the student's terms, says why."""


class Failed(Exception):
    """The helper did not answer: past the deadline (``timed_out``), out of memory, or stopped."""

    def __init__(self, text: str, *, timed_out: bool = False):
        super().__init__(text)
        self.timed_out = timed_out


def _malformed(name: str, what: str) -> Refused:
    return Refused(msg.ORACLE_MALFORMED.format(caller=CALLER[name], oracle=name, what=what))


# ----- unbroadcast, in the judge -----


def unbroadcast(grad, shape) -> np.ndarray:
    """``grad`` summed down to ``shape``: the leading axes it has beyond the shape, then (kept) every axis where the
    shape has size 1, what torch's ``sum_to_size`` does, and what the reference unbroadcast returns. In numpy: the
    judge answers it without importing torch, from the first op task on."""
    if not (isinstance(grad, np.ndarray) and grad.dtype == np.float64):
        raise _malformed("unbroadcast", msg.ORACLE_BAD_ARGUMENTS)
    if grad.ndim > MAX_DIMS or grad.size > MAX_UNBROADCAST_ELEMENTS:
        raise Refused(msg.ORACLE_TOO_LARGE.format(
            caller=CALLER["unbroadcast"], oracle="unbroadcast",
            asked=msg.ORACLE_GRADIENT.format(shape=grad.shape, elements=grad.size),
            most=msg.ORACLE_GRADIENT_MOST.format(elements=MAX_UNBROADCAST_ELEMENTS, dims=MAX_DIMS)))
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMS and all(type(n) is int and n >= 0 for n in shape)):
        raise _malformed("unbroadcast", msg.ORACLE_BAD_ARGUMENTS)
    lead = grad.ndim - len(shape)
    kept = grad.shape[lead:] if lead >= 0 else ()
    if lead < 0 or any(have != want and want != 1 for have, want in zip(kept, shape)):
        raise _malformed("unbroadcast", msg.ORACLE_BAD_SHAPE.format(grad=grad.shape, shape=tuple(shape)))
    summed = grad.sum(axis=tuple(range(lead))) if lead else grad
    ones = tuple(axis for axis, (have, want) in enumerate(zip(kept, shape)) if want == 1 and have != 1)
    if ones:
        summed = summed.sum(axis=ones, keepdims=True)
    return np.array(summed, dtype=np.float64).reshape(shape)


# ----- train_epoch and evaluate: their arguments, checked in the judge before the helper computes -----


def _finite(value, ndim: int) -> bool:
    return (isinstance(value, np.ndarray) and value.dtype == np.float64 and value.ndim == ndim
            and bool(np.all(np.isfinite(value))))


def _rows(batches) -> int:
    """The rows a list of (xb, yb) pairs holds, from the shapes alone (0 where it is no such list)."""
    if not isinstance(batches, list):
        return 0
    return sum(pair[0].shape[0] for pair in batches if isinstance(pair, list) and len(pair) == 2
               and isinstance(pair[0], np.ndarray) and pair[0].ndim >= 1)


def _widths(widths: list[int]) -> str:
    """A network's widths as the lesson writes them (1-32-1), the middle left out past a few layers."""
    if len(widths) <= 6:
        return "-".join(map(str, widths)) or "?"
    return msg.ORACLE_DEEP.format(widths="-".join(map(str, widths[:3])), last=widths[-1], layers=len(widths) - 1)


def _sizes(name: str, params, batches, caps: Caps) -> None:
    """Refuse a network or data larger than ``caps``, from the shapes alone, before anything else is read."""
    layers = params if isinstance(params, list) else []
    weights = [w for w in layers[::2] if isinstance(w, np.ndarray) and w.ndim == 2]
    widths = [weights[0].shape[0], *(w.shape[1] for w in weights)] if weights else []
    rows = _rows(batches)
    batch_count = len(batches) if isinstance(batches, list) else 0
    if len(layers) > 2 * caps.layers or any(n > caps.units for n in widths) or rows > caps.rows \
            or batch_count > caps.rows:
        raise Refused(msg.ORACLE_TOO_LARGE.format(
            caller=CALLER[name], oracle=name,
            asked=msg.ORACLE_NETWORK.format(widths=_widths(widths), rows=rows),
            most=msg.ORACLE_NETWORK_MOST.format(layers=caps.layers, units=caps.units, rows=caps.rows)))


def _weights(name: str, params) -> list[np.ndarray]:
    """A chain of Linear layers' (weight (in, out), bias (out,)) pairs, finite float64."""
    if not (isinstance(params, list) and len(params) >= 2 and len(params) % 2 == 0):
        raise _malformed(name, msg.ORACLE_BAD_MODEL)
    for i in range(0, len(params), 2):
        W, b = params[i], params[i + 1]
        if not (_finite(W, 2) and _finite(b, 1) and b.shape[0] == W.shape[1]
                and (not i or W.shape[0] == params[i - 1].shape[0])):
            raise _malformed(name, msg.ORACLE_BAD_MODEL)
    return params


def _batches(name: str, batches, params) -> list[list[np.ndarray]]:
    """Pairs [xb, yb] of at least one row each, of the model's input and output sizes, finite float64."""
    if not (isinstance(batches, list) and batches):
        raise _malformed(name, msg.ORACLE_BAD_BATCHES)
    for pair in batches:
        if not (isinstance(pair, list) and len(pair) == 2 and _finite(pair[0], 2) and _finite(pair[1], 2)
                and pair[0].shape[0] == pair[1].shape[0] >= 1 and pair[0].shape[1] == params[0].shape[0]
                and pair[1].shape[1] == params[-1].shape[0]):
            raise _malformed(name, msg.ORACLE_BAD_BATCHES)
    return batches


def _number(name: str, option: str, value) -> float:
    if type(value) not in (int, float) or not np.isfinite(value) or value < 0:
        raise _malformed(name, msg.ORACLE_BAD_OPTION.format(name=option, value=str(value)[:20]))
    return float(value)


def _loss(name: str, loss) -> str:
    if loss not in LOSSES:
        raise _malformed(name, msg.ORACLE_BAD_OPTION.format(name="loss_fn", value=str(loss)[:20]))
    return loss


def check_train_epoch(args: dict, caps: Caps = CAPS) -> dict:
    """train_epoch's arguments as the helper takes them, or Refused: sizes first, then every value."""
    name = "train_epoch"
    wanted = {"params", "state", "lr", "momentum", "loss", "batches", "accumulate", "clip_norm"}
    if not (isinstance(args, dict) and set(args) == wanted):
        raise _malformed(name, msg.ORACLE_BAD_ARGUMENTS)
    _sizes(name, args["params"], args["batches"], caps)
    params = _weights(name, args["params"])
    batches = _batches(name, args["batches"], params)
    accumulate = args["accumulate"]
    if not (type(accumulate) is int and 1 <= accumulate <= caps.rows):
        raise _malformed(name, msg.ORACLE_BAD_OPTION.format(name="accumulate", value=str(accumulate)[:20]))
    clip_norm = None if args["clip_norm"] is None else _number(name, "clip_norm", args["clip_norm"])
    state = args["state"]
    if not (isinstance(state, dict) and len(state) <= len(params)):
        raise _malformed(name, msg.ORACLE_BAD_STATE)
    for key, value in state.items():
        index = key.removeprefix("momentum_buffer.") if isinstance(key, str) else ""
        if not (key != index and index.isdigit() and int(index) < len(params)
                and _finite(value, params[int(index)].ndim) and value.shape == params[int(index)].shape):
            raise _malformed(name, msg.ORACLE_BAD_STATE)
    return {"params": params, "state": state, "lr": _number(name, "lr", args["lr"]),
            "momentum": _number(name, "momentum", args["momentum"]), "loss": _loss(name, args["loss"]),
            "batches": batches, "accumulate": accumulate, "clip_norm": clip_norm}


def check_evaluate(args: dict, caps: Caps = CAPS) -> dict:
    """evaluate's arguments as the helper takes them, or Refused."""
    name = "evaluate"
    if not (isinstance(args, dict) and set(args) == {"params", "loss", "batches"}):
        raise _malformed(name, msg.ORACLE_BAD_ARGUMENTS)
    _sizes(name, args["params"], args["batches"], caps)
    params = _weights(name, args["params"])
    return {"params": params, "loss": _loss(name, args["loss"]), "batches": _batches(name, args["batches"], params)}


CHECKED = {"train_epoch": check_train_epoch, "evaluate": check_evaluate}
IN_HELPER = tuple(CHECKED)  # the oracles the helper computes for a worker


# ----- the lesson's run, replayed for the judge alone (5.4) -----

MAX_REPLAY_EPOCHS = 1000  # the lesson's run is 300


def check_lesson_run(args: dict, caps: Caps = CAPS) -> dict:
    """The replay's arguments: the judge builds them (the orders from a worker's answer it has checked already),
    and the helper checks them again, as it does every frame: one Linear-ReLU-Linear network within ``caps``, X and
    Y of at most ``caps.rows`` rows, and one order of those rows per epoch, each a permutation."""
    name = "lesson_run"
    if not (isinstance(args, dict) and set(args) == {"params", "X", "Y", "orders", "batch_size", "lr"}):
        raise RuntimeError("the lesson's replay was asked with other arguments")
    X, Y, orders, batch_size = args["X"], args["Y"], args["orders"], args["batch_size"]
    if not (_finite(X, 2) and _finite(Y, 2) and 1 <= X.shape[0] == Y.shape[0] <= caps.rows
            and isinstance(orders, np.ndarray) and orders.dtype == np.int64 and orders.ndim == 2
            and orders.shape[1] == X.shape[0] and 1 <= orders.shape[0] <= MAX_REPLAY_EPOCHS
            and np.all(np.sort(orders, axis=1) == np.arange(X.shape[0]))
            and type(batch_size) is int and batch_size >= 1):
        raise RuntimeError("the lesson's replay was asked of data out of shape")
    _sizes(name, args["params"], [[X, Y]], caps)
    params = _weights(name, args["params"])
    if len(params) != 4 or X.shape[1] != params[0].shape[0] or Y.shape[1] != params[-1].shape[0]:
        raise RuntimeError("the lesson's replay was asked of another network")
    return {"params": params, "X": X, "Y": Y, "orders": orders, "batch_size": batch_size,
            "lr": _number(name, "lr", args["lr"])}


IN_HELPER_FOR_JUDGE = {"lesson_run": check_lesson_run}  # never offered to a worker (it holds task 5.4's answer)


def too_many_calls() -> Refused:
    """The refusal of a request's call past MAX_CALLS."""
    return Refused(msg.ORACLE_TOO_MANY.format(calls=MAX_CALLS, epochs=CHECKS_MOST_EPOCHS))


# ----- the helper process: torch, outside the judge -----


def _compute(name: str, args: dict):
    """The answer, with torch (graders.judge.checks.trajectory): in the helper only."""
    from graders.judge.checks.trajectory import Run

    if name == "evaluate":
        return Run(args["params"], lr=0.0, momentum=0.0).evaluate(args["batches"], args["loss"])
    if name == "lesson_run":
        X, Y, size = args["X"], args["Y"], args["batch_size"]
        run = Run(args["params"], lr=args["lr"], momentum=0.0)
        epochs = [[(X[order[i:i + size]], Y[order[i:i + size]]) for i in range(0, len(order), size)]
                  for order in args["orders"]]
        history = run.fit(epochs, "mse")
        return {"params": run.weights(), "train_loss": history["train_loss"]}
    run = Run(args["params"], lr=args["lr"], momentum=args["momentum"], state=args["state"])
    value = run.epoch(args["batches"], args["loss"], accumulate=args["accumulate"], clip_norm=args["clip_norm"])
    return {"params": run.weights(), "state": run.state(), "loss": value}


def _address_space() -> int:
    """This process's virtual memory now (VmSize), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmSize in /proc/self/status")


def serve(read_fd: int, write_fd: int, caps: dict, headroom: int = HELPER_HEADROOM) -> None:
    """The helper's loop: import torch, cap the address space at what that took plus ``headroom``, say ready, then
    answer {"name", "args"} frames with {"value"}, {"refused"} (the arguments, checked again against ``caps``) or
    {"failed"} (out of memory, or an error), one at a time, until the judge closes the pipe."""
    from graders.judge.checks import trajectory  # noqa: F401 - torch and the Run, imported before the cap

    limit = _address_space() + headroom
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    caps = Caps(**caps)
    read = protocol.fd_reader(read_fd)
    protocol.write_all(write_fd, protocol.encode({"ready": True}))
    while True:
        try:
            request = protocol.decode(read)
        except EOFError:
            return
        name = request.get("name") if isinstance(request, dict) else None
        try:
            checks = {**CHECKED, **IN_HELPER_FOR_JUDGE}
            if name not in checks:
                raise Refused(f"no oracle {str(name)[:20]!r}")
            reply = {"value": _compute(name, checks[name](request.get("args"), caps))}
        except Refused as refusal:
            reply = {"refused": str(refusal)}
        except MemoryError:
            reply = {"failed": "memory"}
        except Exception as error:  # noqa: BLE001 - torch's allocator says RuntimeError; any failure is the asker's
            reply = {"failed": "memory" if "alloc" in str(error) else f"{type(error).__name__}: {str(error)[:100]}"}
        protocol.write_all(write_fd, protocol.encode(reply))


class _TimedOut(Exception):
    pass


class Helper(OwnProcess):
    """One helper process, as the judge sees it (graders.judge.own_process): its pipes, whether it has said it is
    ready, a lock for one request at a time."""

    def __init__(self, caps: Caps = CAPS, headroom: int = HELPER_HEADROOM):
        self.caps, self.headroom, self.lock, self.ready = caps, headroom, threading.Lock(), False
        super().__init__("graders.judge.oracles", f"{asdict(caps)!r}, {headroom!r}")

    def _reader(self, deadline: float):
        def wait() -> None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.from_process], [], [], remaining)[0]:
                raise _TimedOut()

        return protocol.fd_reader(self.from_process, wait=wait, closed="the helper exited")

    def wait_ready(self, timeout: float) -> bool:
        """True once the helper has imported torch; False if it has not within ``timeout`` (or has stopped)."""
        if not self.ready:
            try:
                self.ready = protocol.decode(self._reader(time.monotonic() + timeout)) == {"ready": True}
            except (_TimedOut, EOFError, OSError, protocol.ProtocolError):
                return False
        return self.ready

    def ask(self, name: str, args: dict, deadline: float):
        """The helper's answer to ``name`` (its arguments checked already), by ``deadline``; Refused, or Failed
        (the helper is then stopped: past the deadline, or gone)."""
        caller = CALLER[name]
        with self.lock:
            try:
                if not self.wait_ready(max(0.0, deadline - time.monotonic())):
                    raise _TimedOut()
                protocol.write_all(self.to_process, protocol.encode({"name": name, "args": args}))
                reply = protocol.decode(self._reader(deadline))
            except _TimedOut:
                self.stop()
                raise Failed(msg.ORACLE_TIMED_OUT.format(oracle=name, caller=caller), timed_out=True) from None
            except (EOFError, OSError, protocol.ProtocolError) as error:
                try:
                    status = self.process.wait(timeout=STOP_WAIT)  # its pipe closes a moment before it is reaped
                except subprocess.TimeoutExpired:
                    status = None
                self.stop()
                why = f"status {status}" if status is not None else str(error)[:60]
                raise Failed(msg.ORACLE_STOPPED.format(oracle=name, caller=caller, why=why)) from None
        if not isinstance(reply, dict) or len(reply) != 1:
            self.stop()
            raise Failed(msg.ORACLE_STOPPED.format(oracle=name, caller=caller, why="a malformed answer"))
        if "refused" in reply:
            raise Refused(str(reply["refused"]))
        if reply.get("failed") == "memory":
            limit = f"{self.headroom // 2**20} MiB beyond torch's own"
            raise Failed(msg.ORACLE_OUT_OF_MEMORY.format(oracle=name, caller=caller, limit=limit))
        if "failed" in reply:
            raise Failed(msg.ORACLE_STOPPED.format(oracle=name, caller=caller, why=str(reply["failed"])[:120]))
        return reply["value"]


_helper: Helper | None = None
_lock = threading.Lock()


def _running() -> Helper:
    """This judge's helper, started (again) where it is not running: one that stopped between requests (its
    starting thread ended, say) is replaced without charging anyone."""
    global _helper
    with _lock:
        if _helper is None or not _helper.running():
            if _helper is not None:
                _helper.stop()
            _helper = Helper()
        return _helper


def start() -> None:
    """Start this judge's helper now, if it is not running: it imports torch while the judge works."""
    _running()


def wait_ready(timeout: float = READY_TIMEOUT) -> float:
    """Wait until this judge's helper serves (starting it where it is not running), before a request that may ask it
    starts its clock: the helper's start never counts against a request. The seconds waited; a helper that cannot
    start is the grader's failure (RuntimeError)."""
    began = time.monotonic()
    if not _running().wait_ready(timeout):
        raise RuntimeError("the judge's helper for train_epoch and evaluate did not start")
    return time.monotonic() - began


def wait_if_started(timeout: float = READY_TIMEOUT) -> None:
    """``wait_ready`` where a helper was started (a grade whose answers are not all kept starts it with the grade);
    where none was, nothing: the first answer that is not kept starts it (``answer``)."""
    if _helper is not None and _helper.running():
        wait_ready(timeout)


class Kept:
    """The helper's answers by a digest of their checked arguments: in memory (the last KEPT_IN_MEMORY), and where the
    examples cache is on, in its folder as the frames the helper sent (graders.worker.protocol: data, never code).
    Off with the cache: then every answer is computed."""

    def __init__(self):
        self.memory: OrderedDict[str, bytes] = OrderedDict()
        self.lock = threading.Lock()

    @staticmethod
    def key(name: str, checked: dict) -> tuple[str, object] | None:
        """The digest that names ``name``'s answer to ``checked`` and the file it is kept in; None when the cache is
        off."""
        from graders.judge import examples_cache  # the judge's: never imported by the helper

        if examples_cache.folder() is None:
            return None
        digest = examples_cache.digest(f"oracle {name}", checked)
        return digest, examples_cache.answer_entry(name, digest)

    def get(self, key: tuple[str, object] | None):
        """The kept answer, decoded afresh (no caller shares its arrays), or None."""
        if key is None:
            return None
        digest, path = key
        with self.lock:
            frame = self.memory.get(digest)
        if frame is None:
            from graders.judge import examples_cache

            frame = examples_cache.read_answer(path, MAX_KEPT_FRAME)
            if frame is None:
                return None
        try:
            value = protocol.decode_bytes(frame)
        except protocol.ProtocolError:
            return None
        self._remember(digest, frame)
        return value

    def put(self, key: tuple[str, object] | None, value) -> None:
        """Keep ``value``, the helper's answer."""
        if key is None:
            return
        from graders.judge import examples_cache

        digest, path = key
        frame = protocol.encode(value)
        if len(frame) <= MAX_KEPT_FRAME:
            self._remember(digest, frame)
            examples_cache.save_answer(path, frame)

    def _remember(self, digest: str, frame: bytes) -> None:
        with self.lock:
            self.memory[digest] = frame
            self.memory.move_to_end(digest)
            while len(self.memory) > KEPT_IN_MEMORY:
                self.memory.popitem(last=False)


KEPT = Kept()


def _from_helper(name: str, checked: dict, deadline: float, waited: Callable[[float], None] | None = None):
    """The kept answer to ``name`` with ``checked``, else the helper's (kept for next time), by ``deadline``. A helper
    started for it is waited for first, off the clock: ``deadline`` moves by the wait, which ``waited`` hears."""
    key = Kept.key(name, checked)
    value = KEPT.get(key)
    if value is not None:
        return value
    seconds = wait_ready()
    if waited is not None:
        waited(seconds)
    helper = _running()
    try:
        value = helper.ask(name, checked, deadline + seconds)
    except Failed:
        if not helper.running():
            start()  # a fresh helper imports while the judge goes on: the next request does not wait for it
        raise
    KEPT.put(key, value)
    return value


def answer(name: str, args, deadline: float, waited: Callable[[float], None] | None = None):
    """The answer to a worker's ``name`` with ``args`` by ``deadline`` (time.monotonic()): unbroadcast in the judge,
    train_epoch and evaluate kept or from the helper (``waited`` hears the seconds a helper's start was waited for,
    which move the deadline). Raises Refused or Failed, both the asker's."""
    if not isinstance(args, dict):
        raise _malformed(name, msg.ORACLE_BAD_ARGUMENTS)
    if name == "unbroadcast":
        try:
            return unbroadcast(**args)
        except TypeError:
            raise _malformed(name, msg.ORACLE_BAD_ARGUMENTS) from None
    return _from_helper(name, CHECKED[name](args), deadline, waited)


def replay_lesson(params: list[np.ndarray], X: np.ndarray, Y: np.ndarray, orders: np.ndarray, batch_size: int,
                  lr: float, timeout: float = REPLAY_TIMEOUT) -> dict:
    """The lesson's run replayed with torch in the helper, for the judge (task 5.4): SGD from ``params`` over X and
    Y, one epoch per row of ``orders`` in batches of ``batch_size``; {"params": the final weights, "train_loss":
    the mean batch loss of each epoch}. The judge's own question: a failure is the grader's (RuntimeError)."""
    args = check_lesson_run({"params": params, "X": X, "Y": Y, "orders": orders, "batch_size": batch_size,
                             "lr": lr})
    try:
        return _from_helper("lesson_run", args, time.monotonic() + timeout)
    except (Refused, Failed) as error:
        raise RuntimeError(f"the judge's helper did not replay the lesson's run: {error}") from None


def pids() -> set[int]:
    """The helper's process: the judge's own, like its fork servers."""
    return {_helper.process.pid} if _helper is not None and _helper.running() else set()


@atexit.register
def close() -> None:
    """Stop this judge's helper."""
    global _helper
    with _lock:
        if _helper is not None:
            _helper.stop()
            _helper = None
