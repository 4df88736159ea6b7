"""The cost rungs' yardstick: numpy's own version of an op, timed on the rung's very inputs where no student code
runs.

A cost rung (graders.judge.checks.ops) allows a rule a multiple of what numpy takes for the op itself. That
baseline cannot come from the worker: student code shares the worker's process and can slow anything there down
(its own forward, numpy's ``sum``, the verb that times it), so a baseline taken there is a yardstick the student
holds (issue 27: a rule 684 times too slow passed next to a numpy whose ``sum`` burned CPU). Here it is taken by a
fresh ``python -I`` that imports numpy and this module only, on one BLAS thread as a worker is, from the judge's
own arrays: the median of ``ROUNDS`` rounds' CPU time (``time.thread_time``) after a warm-up round. A judge
process measures each (op, inputs) once and keeps the figure (``measure``), so a class graded with one key
measures each rung once.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

ROUNDS = 7
TIMEOUT = 60.0  # seconds: numpy's import and 8 rounds of one op on a loaded machine take under 1
ROOT_ENV = "AGL_YARDSTICK_ROOT"


def _sum_to(grad: np.ndarray, shape: list[int]) -> np.ndarray:
    """``grad`` summed down to ``shape``: its leading axes and every axis where ``shape`` has size 1, in one sum."""
    lead = grad.ndim - len(shape)
    ones = tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return grad.sum(axis=tuple(range(lead)) + ones).reshape(shape)


# numpy's own version of each timed op, written out: what a cost rung's limit is a multiple of.
OPS = {
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "matmul": lambda x, w: x @ w,
    "exp": np.exp,
    "tanh": np.tanh,
    "sum": lambda x, axis: np.sum(x, axis=axis),
    "reshape": lambda x, shape: x.reshape(shape).copy(),  # a view costs nothing: a copy is the least a rule moves
    "unbroadcast": _sum_to,
}


def seconds(op: str, sets: list[list], kwargs: dict, repeat: int) -> float:
    """The median CPU seconds of ``repeat`` calls of OPS[op] on every set of operands, over ROUNDS rounds after a
    warm-up one, in this process (the yardstick's own: never one that runs student code)."""
    rounds = []
    for _ in range(1 + ROUNDS):
        start = time.thread_time()
        for _ in range(repeat):
            for operands in sets:
                OPS[op](*operands, **kwargs)
        rounds.append(time.thread_time() - start)
    return statistics.median(rounds[1:])


def serve() -> None:
    """The yardstick process: one request (a protocol frame on stdin), its figure as JSON on stdout."""
    from graders.worker import protocol

    data = sys.stdin.buffer.read()
    offset = 0

    def read_exactly(n: int) -> bytes:
        nonlocal offset
        if offset + n > len(data):
            raise EOFError("the judge's request was cut short")
        offset += n
        return data[offset - n:offset]

    request = protocol.decode(read_exactly)
    figure = seconds(request["op"], request["sets"], request["kwargs"], request["repeat"])
    sys.stdout.write(json.dumps({"seconds": figure}))


_measured: dict[str, float] = {}
_lock = threading.Lock()


def measure(op: str, sets: list[list], kwargs: dict, repeat: int) -> float:
    """The yardstick's CPU seconds for ``repeat`` calls of numpy's ``op`` on ``sets`` (each a list of operands:
    arrays, numbers, a target shape), measured once per judge process for these inputs. A yardstick that cannot
    be measured is the grader's failure (RuntimeError), never the submission's."""
    from graders.judge import examples_cache

    key = examples_cache.digest("yardstick", (op, sets, kwargs, repeat))
    with _lock:
        if key not in _measured:
            _measured[key] = _run(op, sets, kwargs, repeat)
        return _measured[key]


def _run(op: str, sets: list[list], kwargs: dict, repeat: int) -> float:
    from graders import paths
    from graders.isolation.processes import KEPT_ENV, MALLOC_ENV, THREADS_ENV, WORKER_PATH
    from graders.worker import protocol

    if op not in OPS:
        raise ValueError(f"no yardstick for {op!r}")
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    env.update(THREADS_ENV | MALLOC_ENV, PATH=WORKER_PATH, PYTHONHASHSEED="0", **{ROOT_ENV: str(paths.HERE.parent)})
    code = (f"import os, sys; sys.path.insert(0, os.environ.pop({ROOT_ENV!r})); "
            "from graders.judge.yardstick import serve; serve()")
    request = protocol.encode({"op": op, "sets": sets, "kwargs": kwargs, "repeat": repeat})
    try:
        done = subprocess.run([sys.executable, "-I", "-B", "-c", code], input=request, capture_output=True, env=env,
                              cwd="/", timeout=TIMEOUT, check=False)
        figure = float(json.loads(done.stdout)["seconds"])
    except (subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as error:
        raise RuntimeError(f"the cost rung's yardstick for {op} could not be measured: {error}") from None
    if not figure > 0:
        raise RuntimeError(f"the cost rung's yardstick for {op} measured {figure} s")
    return figure
