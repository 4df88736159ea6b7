"""The options that ``grade`` and ``grade-all`` share, each checked as it is parsed: a bad value stops the command
with exit status 2 and one line that echoes the call (``got --tasks '9.9', expected ...``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from graders import messages as msg
from graders.tasks import BY_ID

ISOLATIONS = ("auto", "bubblewrap", "limits")


def task_ids(text: str) -> tuple[str, ...]:
    """``--tasks``' value: task ids separated by commas, each in the task table, duplicates dropped in order;
    ValueError, which names the known ids, otherwise."""
    ids = tuple(part.strip() for part in text.split(","))
    if not all(task in BY_ID for task in ids):
        raise ValueError(msg.CLI_EXPECTED_TASKS.format(known=", ".join(BY_ID)))
    return tuple(dict.fromkeys(ids))


def isolation(text: str) -> str:
    """``--isolation``'s value, one of ISOLATIONS; ValueError, which names them, otherwise."""
    if text not in ISOLATIONS:
        raise ValueError(msg.CLI_EXPECTED_ONE_OF.format(choices=", ".join(ISOLATIONS[:-1]), last=ISOLATIONS[-1]))
    return text


class Checked(argparse.Action):
    """Store ``check(value)``; where it raises ValueError, exit 2 saying what was given and what was expected."""

    def __init__(self, *args, check, **kwargs):
        super().__init__(*args, **kwargs)
        self.check = check

    def __call__(self, parser, namespace, value, option=None):
        """What argparse calls with the option's value: store the checked value, or exit with status 2 and
        CLI_BAD_VALUE's one line (what was given, what was expected)."""
        try:
            setattr(namespace, self.dest, self.check(value))
        except ValueError as error:
            parser.exit(2, msg.CLI_BAD_VALUE.format(prog=parser.prog, option=option, value=value, expected=error))


def add_course_option(parser: argparse.ArgumentParser) -> None:
    """--course FILE, as every command that grades or reads grades takes it."""
    parser.add_argument("--course", type=Path, metavar="FILE",
                        help="the course file (`autograd-lab course init FILE` writes one): the tasks, their points, "
                             "the secret each student's key is derived from, the late policy")


def add_isolation_option(parser: argparse.ArgumentParser) -> None:
    """--isolation, as every command that grades takes it."""
    parser.add_argument("--isolation", action=Checked, check=isolation, default="auto",
                        metavar="{" + ",".join(ISOLATIONS) + "}",
                        help="how to isolate student code: bubblewrap (auto; only a student's own `grade` falls "
                             "back, saying so, where bubblewrap cannot start), or process limits alone (limits: a "
                             "judge run as root, each worker an unprivileged uid in a root of its own); a grade "
                             "that counts refuses where it cannot have what it asks for")


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    """--course, --key, --tasks and --isolation, as grade and grade-all take them."""
    add_course_option(parser)
    parser.add_argument("--key", type=int, help="seed Hypothesis with this key instead of derandomizing")
    parser.add_argument("--tasks", action=Checked, check=task_ids,
                        help="grade only these task ids, comma-separated (e.g. 1.1,1.4)")
    add_isolation_option(parser)
