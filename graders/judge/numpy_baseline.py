"""The cost rungs' numpy baseline: numpy's own version of an op, timed on the rung's very inputs where no student code
runs.

A cost rung (graders.judge.checks.cost) allows a rule a multiple of what numpy takes for the op itself. That
baseline cannot come from the worker: student code shares the worker's process and can slow anything there down (its
own forward, numpy's ``sum``, the verb that times it), so a baseline taken there is one the student holds
(a rule 684 times too slow once passed next to a numpy whose ``sum`` burned CPU). Here it is taken by a process
of the judge's own, a fresh ``python -I`` that imports numpy, this module, the op registry (numpy's own version of
each op, graders/ops.py) and the wire format only, on one BLAS thread as a worker is, from the judge's own arrays:
the median of ``ROUNDS`` rounds' CPU time (``time.thread_time``) after a warm-up round. One such process serves a
judge for its life (one interpreter and one numpy import a judge, not one a measurement): started with a grade
whose tasks have cost rungs, so that its start overlaps the judge's own, and asked one measurement at a time. A
judge process measures each (op, inputs) once and keeps the figure (``measure``), so a class graded with one key
measures each rung once.
"""

from __future__ import annotations

import atexit
import os
import select
import statistics
import subprocess
import threading
import time

import numpy as np

ROUNDS = 7
TIMEOUT = 60.0  # seconds a measurement may take, numpy's import included: under 1 on a loaded machine
# The worker verbs whose CPU time a cost rung holds to this numpy baseline (graders.tasks.TASKS: 1.1 and the op tasks).
TIMED_VERBS = ("op_cost", "unbroadcast_cost")


def _sum_to(grad: np.ndarray, shape: list[int]) -> np.ndarray:
    """``grad`` summed down to ``shape``: its leading axes and every axis where ``shape`` has size 1, in one sum."""
    lead = grad.ndim - len(shape)
    ones = tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return grad.sum(axis=tuple(range(lead)) + ones).reshape(shape)


def numpy_op(op: str):
    """numpy's own version of ``op``, what a cost rung's limit is a multiple of: the op registry's (graders/ops.py,
    each entry's ``Cost.numpy``), or unbroadcast's sum."""
    from graders.ops import BY_NAME

    return _sum_to if op == "unbroadcast" else BY_NAME[op].cost.baseline


def seconds(op: str, sets: list[list], kwargs: dict, repeat: int) -> float:
    """The median CPU seconds of ``repeat`` calls of numpy's ``op`` on every set of operands, over ROUNDS rounds after
    a warm-up one, in this process (the numpy baseline's own: never one that runs student code)."""
    function, rounds = numpy_op(op), []
    for _ in range(1 + ROUNDS):
        start = time.thread_time()
        for _ in range(repeat):
            for operands in sets:
                function(*operands, **kwargs)
        rounds.append(time.thread_time() - start)
    return statistics.median(rounds[1:])


def serve(read_fd: int, write_fd: int) -> None:
    """The numpy baseline's process's loop: a request at a time (a protocol frame: op, sets, kwargs, repeat),
    answered with {"seconds": its figure}, or {"failed": why}, until the judge closes the pipe."""
    from graders.worker import protocol

    read = protocol.fd_reader(read_fd)
    while True:
        try:
            request = protocol.decode(read)
        except EOFError:
            return
        try:
            reply = {"seconds": seconds(request["op"], request["sets"], request["kwargs"], request["repeat"])}
        except Exception as error:  # noqa: BLE001 - the judge reports it, as the grader's failure
            reply = {"failed": f"{type(error).__name__}: {str(error)[:100]}"}
        protocol.write_all(write_fd, protocol.encode(reply))


def _wait(fd: int, deadline: float, *, write: bool = False) -> None:
    """Return once ``fd`` can be read (or written) without blocking; TimeoutError at ``deadline``."""
    remaining = deadline - time.monotonic()
    wanted = ([], [fd]) if write else ([fd], [])
    if remaining <= 0 or not any(select.select(*wanted, [], remaining)):
        raise TimeoutError()


class Process:
    """The numpy baseline's process as the judge sees it (graders.judge.own_process): its pipes, and how many figures it
    has answered."""

    def __init__(self):
        from graders.isolation.processes import MALLOC_ENV
        from graders.judge.own_process import OwnProcess  # the judge's: never imported by the numpy baseline's process

        self.own = OwnProcess("graders.judge.numpy_baseline", env=MALLOC_ENV)
        self.answered = 0
        # a request's write waits for the deadline, never for a stuck process
        os.set_blocking(self.own.to_process, False)

    def measure(self, request: bytes, deadline: float) -> float:
        """The figure answered to ``request`` (an encoded frame) by ``deadline``: TimeoutError past it, EOFError or
        OSError where the process is gone, ValueError (ProtocolError) for anything but a figure."""
        from graders.worker import protocol

        view = memoryview(request)
        while view:
            _wait(self.own.to_process, deadline, write=True)
            try:
                view = view[os.write(self.own.to_process, view):]
            except BlockingIOError:
                pass
        read = protocol.fd_reader(self.own.from_process, wait=lambda: _wait(self.own.from_process, deadline),
                                  closed="the numpy baseline exited")
        try:
            reply = protocol.decode(read)
        except protocol.ProtocolError as error:
            raise ValueError(str(error)) from None
        if not (isinstance(reply, dict) and type(reply.get("seconds")) is float):
            raise ValueError(str(reply.get("failed") if isinstance(reply, dict) else reply)[:120])
        self.answered += 1
        return reply["seconds"]

    @property
    def process(self) -> subprocess.Popen:
        """The process itself (its pid, its exit status)."""
        return self.own.process

    def running(self) -> bool:
        """Whether the process is alive, so that a dead one is replaced before the next measurement."""
        return self.own.running()

    def stop(self) -> int | None:
        """Kill the process (where it still runs) and close its pipes; its exit status where it had exited."""
        return self.own.stop()


_process: Process | None = None
_measured: dict[str, float] = {}
_lock = threading.Lock()  # one measurement at a time, in the one process


def _running() -> Process:
    """This judge's numpy baseline process, started (again) where it is not running (under ``_lock``)."""
    global _process
    if _process is None or not _process.running():
        if _process is not None:
            _process.stop()
        _process = Process()
    return _process


def start() -> None:
    """Start this judge's numpy baseline now, if it is not running: its interpreter imports numpy while the judge starts
    its grade, instead of when the first cost rung asks."""
    with _lock:
        _running()


def measure(op: str, sets: list[list], kwargs: dict, repeat: int, *, again: bool = False) -> float:
    """The numpy baseline's CPU seconds for ``repeat`` calls of numpy's ``op`` on ``sets`` (each a list of operands:
    arrays, numbers, a target shape), measured once per judge process for these inputs; with ``again``, measured now
    and not kept (a rule timed again is held to a baseline of that moment, which no later rung inherits). A numpy
    baseline that cannot be measured is the grader's failure (RuntimeError), never the submission's."""
    from graders.judge import examples_cache

    key = examples_cache.digest("numpy_baseline", (op, sets, kwargs, repeat))
    with _lock:
        if again:
            return _run(op, sets, kwargs, repeat)
        if key not in _measured:
            _measured[key] = _run(op, sets, kwargs, repeat)
        return _measured[key]


def _run(op: str, sets: list[list], kwargs: dict, repeat: int) -> float:
    """One figure from this judge's numpy baseline process (under ``_lock``). A process past TIMEOUT is killed; one that
    had answered before and is found gone (killed between two measurements) is replaced and asked once more; any
    other failure is the grader's (RuntimeError), and the next measurement starts a fresh process."""
    from graders.worker import protocol

    try:
        numpy_op(op)
    except KeyError:
        raise ValueError(f"no numpy baseline for {op!r}") from None
    request = protocol.encode({"op": op, "sets": sets, "kwargs": kwargs, "repeat": repeat})
    failed = f"the cost rung's numpy baseline for {op} could not be measured"
    for again in (True, False):
        process = _running()
        try:
            figure = process.measure(request, time.monotonic() + TIMEOUT)
            break
        except TimeoutError:
            process.stop()
            raise RuntimeError(f"{failed}: no answer within {TIMEOUT:g} s") from None
        except ValueError as error:
            process.stop()
            raise RuntimeError(f"{failed}: {error}") from None
        except (EOFError, OSError) as error:  # the process is gone: killed, crashed
            status = process.stop()
            if not (again and process.answered):
                said = f" (status {status})" if status is not None else ""
                raise RuntimeError(f"{failed}: {error}{said}") from None
    if not figure > 0:
        raise RuntimeError(f"the cost rung's numpy baseline for {op} measured {figure} s")
    return figure


def pids() -> set[int]:
    """The numpy baseline's process: the judge's own, like its fork servers and its oracle helper."""
    return {_process.process.pid} if _process is not None and _process.running() else set()


@atexit.register
def close() -> None:
    """Stop this judge's numpy baseline."""
    global _process
    with _lock:
        if _process is not None:
            _process.stop()
            _process = None
