"""The worker's loop: read a request, run it against the submission, answer.

Started by the judge as ``python -I -c 'from worker.main import serve; serve()'``
with its request and response pipes as file descriptors. Each request names a
verb and a package (one of the hybrids the judge laid out: the student's
graded module beside the reference for the rest).
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import os
import sys

from . import claims, profiling, protocol, seccomp
from .verbs import Serving

VERBS: dict = {}  # what serve() answers: verbs(), once its imports may run


def verbs() -> dict:
    """Every request the worker answers, written out: the verb -> its handler."""
    from . import verbs_data, verbs_loop, verbs_optim, verbs_tensor, verbs_torch

    return {
        "loader_epochs": verbs_data.loader_epochs,
        "train_epoch_watched": verbs_loop.train_epoch_watched,
        "evaluate_watched": verbs_loop.evaluate_watched,
        "evaluate_interrupted": verbs_loop.evaluate_interrupted,
        "clip": verbs_loop.clip,
        "fit_history": verbs_loop.fit_history,
        "fit_end_to_end": verbs_loop.fit_end_to_end,
        "resume_from_pickle": verbs_loop.resume_from_pickle,
        "fit_cut": verbs_loop.fit_cut,
        "fit_resumed": verbs_loop.fit_resumed,
        "save_dies": verbs_loop.save_dies,
        "fit_dies": verbs_loop.fit_dies,
        "optimizer_run": verbs_optim.optimizer_run,
        "unbroadcast": verbs_tensor.unbroadcast,
        "op_backward": verbs_tensor.op_backward,
        "op_cost": verbs_tensor.op_cost,
        "unbroadcast_cost": verbs_tensor.unbroadcast_cost,
        "graph": verbs_tensor.graph,
        "engine_errors": verbs_tensor.engine_errors,
        "no_grad_probe": verbs_tensor.no_grad_probe,
        "program": verbs_tensor.program,
        "fit_torch_watched": verbs_torch.fit_torch_watched,
    }


def _answer(request: dict) -> dict:
    if request.get("verb") == "batch":  # many requests in one round trip: a reply each, in order
        return {"ok": [_answer(one) if isinstance(one, dict) and one.get("verb") != "batch" else _no_verb(one)
                       for one in request.get("args", {}).get("requests", ())]}
    handler = VERBS.get(request.get("verb"))
    if handler is None:
        return _no_verb(request)
    try:
        return {"ok": handler(**request.get("args", {}))}
    except BaseException as error:  # noqa: BLE001 - student code may raise anything, SystemExit included
        return {"error": claims.describe_exception(error, (Serving.package_root,))}


def _no_verb(request) -> dict:
    verb = request.get("verb") if isinstance(request, dict) else request
    return {"error": {"type": "WorkerError", "mro": [], "message": f"no verb {verb!r}"[:300], "where": None}}


class Refuse(importlib.abc.MetaPathFinder):
    """Refuses to import the named top-level packages (and their submodules), saying why.

    Student code can take it off ``sys.meta_path``: it stops the plain
    ``import torch`` of a numpy module; bubblewrap also hides the files.
    """

    def __init__(self, names: dict[str, str]):
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        """Refuse ``fullname`` when its top-level package is one of the named ones, with a ModuleNotFoundError that says
        why; any other name is left to the next finder."""
        why = self.names.get(fullname.partition(".")[0])
        if why is not None:
            raise ModuleNotFoundError(f"No module named {fullname!r} here: {why}", name=fullname)
        return None


def _refuse_cached(names: dict[str, str], packages: set[str]) -> None:
    """Refuse the named packages to an ``import`` statement in the modules of ``packages``, also where they are
    imported already (the stand-ins of the loop checks import torch): a finder is not asked about those."""
    real_import = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        why = names.get(name.partition(".")[0]) if level == 0 else None
        if why is not None and str((globals or {}).get("__name__", "")).partition(".")[0] in packages:
            raise ModuleNotFoundError(f"No module named {name!r} here: {why}", name=name)
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded


def serve(request_fd: int, response_fd: int, package_root: str, preload: tuple[str, ...] = (),
          refuse: dict[str, str] | None = None) -> None:
    """Answer requests until the judge closes the channel. ``preload`` names modules to import
    first (torch, while the judge is busy importing its own), before any student code runs;
    ``refuse`` maps top-level package names that student code may not import to the reason."""
    Serving.package_root = package_root
    seccomp.install()  # before any student code: no key rings, no System V or POSIX IPC
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing module shows up later, in the task that needs it
            pass
    sys.path.insert(0, package_root)
    sys.setrecursionlimit(1000)
    VERBS.update(verbs())

    if refuse:
        # Where the stand-ins of the loop checks imported torch already, torch goes on importing its own
        # submodules and probing for others (tensorflow, ...): the refusal then goes by the importing module alone.
        if not any(name in sys.modules for name in refuse):
            sys.meta_path.insert(0, Refuse(refuse))
        _refuse_cached(refuse, set(os.listdir(package_root)))

    sampler = profiling.start(package_root) if profiling.ENV in os.environ else None  # the benchmark's only
    read = protocol.fd_reader(request_fd)
    Serving.channel = (read, response_fd)
    while True:
        try:
            request = protocol.decode(read)
        except EOFError:
            return
        reply = _answer(request)
        try:
            data = protocol.encode(reply)
        except Exception as error:  # noqa: BLE001 - a claim that will not encode is an answer too
            data = protocol.encode({"error": {"type": "WorkerError", "mro": [], "where": None,
                                              "message": f"could not encode the answer: {error}"[:300]}})
        if sampler is not None:
            sampler.report()  # before the answer: the judge reads the totals once it has it
        protocol.write_all(response_fd, data)

