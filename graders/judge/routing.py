"""The judge's side of a worker's requests, handed to their handle (graders.isolation.worker_process.Worker) as
functions: which process a request goes to, read from the task table's routes (``group_of``), and the answers to the
oracle calls the student's code makes in the middle of one (``Calls``, over graders.judge.oracles). The handle knows no
verb and no oracle, and imports neither this nor torch: ``worker`` makes one with these, and ``start`` starts the
processes a grade's tasks will ask, the judge's helper where one of them asks it, and the cost rungs' numpy baseline."""

from __future__ import annotations

from graders.isolation import sandbox
from graders.isolation.worker_process import Limits, Worker, WorkerTimedOut
from graders.judge import numpy_baseline, oracles, reference
from graders.submission.layout import ORACLE_PACKAGES, Layout
from graders.tasks import Task, oracles_of_verbs
from graders.worker import protocol

# Verbs whose student code calls what the judge answers (graders.submission.layout.ORACLE_PACKAGES): the marker
# package; and the verbs that ask for it only where their request sets its flag (graders.tasks.oracles_of_verbs).
_ALWAYS, ORACLE_BY_FLAG = oracles_of_verbs()
ORACLE_OF_VERB = {verb: oracle.package for verb, oracle in _ALWAYS.items()}


def group_of(verb: str, args: dict) -> tuple[str, ...]:
    """The packages the process answering ``verb`` sees: the one it names, and the marker of the oracles it asks (the
    handle's ``route``; it routes a batch by its requests)."""
    package = args.get("package")
    packages = (package,) if isinstance(package, str) and package else ()
    part = ORACLE_OF_VERB.get(verb)
    flagged = ORACLE_BY_FLAG.get(verb)
    if flagged is not None and args.get(flagged.flag):
        part = flagged.package
    return packages + ((part,) if part else ())


def asks_helper(packages: tuple[str, ...]) -> bool:
    """Whether a process serving ``packages`` may ask the judge's helper (train_epoch, evaluate)."""
    return any(name in oracles.IN_HELPER for package in packages for name in ORACLE_PACKAGES.get(package, ()))


class Calls:
    """The judge's answers to the oracle calls of one request, made for the packages of the process that answers it:
    it answers only the oracles their markers offer."""

    def __init__(self, packages: tuple[str, ...]):
        self.offered = {name for package in packages for name in ORACLE_PACKAGES.get(package, ())}
        self.failure: str | None = None
        self.helper_calls = 0  # the calls of the helper's oracles, which MAX_CALLS counts
        self.waited = 0.0  # seconds the calls waited for the helper to start (its answer's deadline moves by them)

    def __call__(self, call, deadline: float) -> dict:
        """The judge's answer to a worker's ask_judge: {"value": ...}, or {"refused": why} (graders.judge.oracles),
        ``why`` then noted as this request's ``failure``; once a request has one, every later call of it is refused
        without computing. Asking for what this process is not offered breaks the protocol (the handle's WorkerDied);
        a helper past ``deadline`` (the handle's backstop for one answer: the judge's time, never the request's) is
        the request's failure (WorkerTimedOut, with its ``failure``)."""
        self.helper_calls += int(isinstance(call, dict) and call.get("name") in oracles.IN_HELPER)
        name = call.get("name") if isinstance(call, dict) else None
        if name not in self.offered or not isinstance(call.get("args"), dict):
            raise protocol.ProtocolError(f"the worker asked the judge for {str(name)[:40]!r}, which it is not offered")
        if self.failure is None:
            try:
                if self.helper_calls > oracles.MAX_CALLS:
                    raise oracles.too_many_calls()
                return {"value": oracles.answer(name, call["args"], deadline, self._waited)}
            except oracles.Failed as failure:
                self.failure = str(failure)
                if failure.timed_out:
                    raise WorkerTimedOut() from None
            except oracles.Refused as refusal:
                self.failure = str(refusal)
        return {"refused": self.failure}

    def _waited(self, seconds: float) -> None:
        self.waited += seconds


def calls(packages: tuple[str, ...]) -> Calls:
    """The answers to the oracle calls of a request to the process serving ``packages`` (the handle's ``calls``),
    once the judge's helper serves where that process may ask it and it was started: the helper's start is never a
    request's time (one started by an answer that was not kept is waited for off the clock: ``Calls.waited``)."""
    if asks_helper(packages):
        oracles.wait_if_started()
    return Calls(packages)


def worker(layout: Layout, isolation: sandbox.Isolation, *, preload: tuple[str, ...] = ()) -> Worker:
    """The handle on the worker processes of a grade of ``layout``: routed by the task table, its oracle calls
    answered by the judge, under the limits of this machine (the address space uncapped where CUDA is, which torch
    says)."""
    return Worker(layout, route=group_of, calls=calls, limits=Limits.for_this_machine(reference.cuda_available),
                  isolation=isolation, preload=preload)


def start(handle: Worker, tasks: list[Task], *, helper: bool = True) -> None:
    """Start the processes the checks of ``tasks`` will ask (graders.tasks.Task.worker_groups), so that they start
    while the judge is busy; with ``helper`` (the grade's answers are not all kept: graders.judge.oracles.Kept),
    the judge's helper for train_epoch and evaluate, which imports torch meanwhile, where one of those started asks
    it; and the cost rungs' numpy baseline, which imports numpy meanwhile, where a task has a cost rung
    (graders.judge.numpy_baseline)."""
    started = handle.start(groups=tuple(group for task in tasks for group in task.worker_groups))
    if helper and any(asks_helper(group) for group in started):
        oracles.start()
    if any(verb in numpy_baseline.TIMED_VERBS for task in tasks for verb in task.verbs):
        numpy_baseline.start()
