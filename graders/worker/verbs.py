"""What a verb may use of the serving loop: the package root, the submission's modules and the judge's
channel. The verbs themselves are in the ``verbs_*`` modules, and ``main.verbs()`` is their table."""

from __future__ import annotations

import importlib

from . import protocol


class Serving:
    """What ``main.serve`` set up: the folder of the packages the judge laid out, and the channel to the judge."""

    package_root = ""
    channel: tuple = ()  # (read the request pipe, the response pipe's fd) while serving


def module(name: str, submodule: str):
    """A module of a hybrid package laid out by the judge under the package root."""
    return importlib.import_module(f"{name}.{submodule}")


def ask_judge(name: str, **args):
    """Call the oracle ``name`` in the middle of a request: ask the judge, and wait for the value. The judge answers
    only the oracles the request's worker process is offered (graders.judge.routing.Calls): the code of
    such an answer never reaches a worker. A refusal raises ValueError with the judge's reason."""
    read, response_fd = Serving.channel
    protocol.write_all(response_fd, protocol.encode({"call": {"name": name, "args": args}}))
    answer = protocol.decode(read)
    if not isinstance(answer, dict) or "value" not in answer:
        raise ValueError(answer.get("refused", "the judge would not answer") if isinstance(answer, dict) else
                         "the judge would not answer")
    return answer["value"]
