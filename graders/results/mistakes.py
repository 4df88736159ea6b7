"""What a failed task's message says went wrong, machine-readably: the rung that failed and the named mistakes.

Every sentence a student reads is a template of graders/messages/, so a message is read back by the templates
that made it: its first template (the head: ``WRONG_VALUE_HEAD``, ``COSTLY``, ``LOOP_MODE``, ...) says which
rung failed, and each hint template found in it (``HINT_*``, or an entry of a ``HINT_*`` table) names a recognised
mistake. The id of a mistake is its template's name, ``HINT_CKPT_OPTIMIZER`` or ``HINT_OP_MISTAKES.forgets_g`` say:
stable as long as the sentence is, and listed in docs/class.md.
Nothing here changes what a check decides; the class report (graders.classgrade.report) counts these.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass

from graders import messages as msg

# The rung each head template reports, written out: values, cost, errors, modes and convergence, and the rest.
IDLE = "waited"  # a verdict that rests on wall time: the worker waited, it did not compute (its words: CLASS_RUNGS)
RUNGS = {
    "values": ("WRONG_VALUE_HEAD",),
    "types": ("WRONG_KIND", "ANSWER_INCOMPLETE"),
    "errors": ("RAISED", "RETURNED_NORMALLY", "WRONG_EXCEPTION"),
    "cost": ("COSTLY", "COSTLY_TIMEOUT"),
    "crash": ("DIED", "ORACLE_FAILED"),
    "time": ("TIMED_OUT", "GRADE_DEADLINE"),
    IDLE: ("TIMED_OUT_IDLE", "GRADE_DEADLINE_IDLE"),
    "in place": ("RULE_WROTE_INTO_G", "OPTIM_NOT_IN_PLACE", "OPTIM_GRAD_NOT_NONE", "OPTIM_STATE_UNSAVED",
                 "CLIP_REPLACED"),
    "batches": ("LOADER_NOT_PAIR", "LOADER_TOO_MANY", "LOADER_COUNT", "LOADER_SIZES", "LOADER_LENGTH", "LOADER_ROW",
                "LOADER_UNPAIRED", "LOADER_REPEATED", "LOADER_MISSING", "LOADER_ORDER", "LOADER_WHOLE_BATCHES",
                "LOADER_NOT_SHUFFLED", "LOADER_SAME_EPOCHS", "LOADER_NOT_REPRODUCIBLE", "LOADER_IGNORES_RNG"),
    "modes": ("LOOP_MODE",),
    "device": ("TORCH_MODEL_NOT_MOVED", "TORCH_BATCH_NOT_MOVED", "TORCH_LEFT_BEHIND"),
    "memory": ("LOSSES_KEPT",),
    "convergence": ("FIT_E2E_MISSING", "FIT_E2E_ABOVE_BAR", "FIT_E2E_PASSES", "FIT_E2E_EPOCH"),
    "checkpoint": ("CKPT_NOT_AT_PATH", "CKPT_UNREADABLE", "CKPT_HALF_WRITTEN", "CKPT_EVERY_EPOCH", "CKPT_NOT_A_FILE",
                   "CKPT_PREFIXES", "CKPT_UNPICKLED"),
    "not attempted": ("NOT_ATTEMPTED", "NOT_ATTEMPTED_IGNORED", "NEEDS_OTHER_TASK", "MISSING_FILE",
                      "NOT_REGULAR_FILE"),
    "grader error": ("GRADER_ERROR",),
}
OTHER = "other"  # a head no template of RUNGS made
# The line RAISED_AT adds where student code raised at the top level of a module (a SyntaxError names only the
# line): the file does not import.
_AT_MODULE = re.compile(r"^  at ([^\s:/]+\.py):\d+(?: in <module>)?$", re.M)
_RAISED_ERROR = re.compile(r"^Task \S+ \(.*?\): .* raised (.*)$", re.M)
MIN_LITERAL = 12  # characters of fixed text a hint template needs to name a mistake (not "{what}: {hint}")


@dataclass(frozen=True)
class Reading:
    """A failed task's message read back: the rung that failed, and the mistakes its hints name (their ids, in the
    order they appear; ``mistake`` is the most specific: the innermost where one hint holds another)."""
    rung: str
    mistakes: tuple[str, ...] = ()

    @property
    def mistake(self) -> str | None:
        """The named mistake to count: the last one found (an inner hint follows the outer text it sits in)."""
        return self.mistakes[-1] if self.mistakes else None


def _pattern(template: str) -> tuple[re.Pattern, int]:
    """A regex matching what ``template`` formats to (each field any text), and the length of its fixed text."""
    parts, literal = [], 0
    for text, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(text))
        literal += len(text)
        if field is not None:
            parts.append(".*?")
    return re.compile("".join(parts), re.S), literal


@functools.cache
def _heads() -> list[tuple[str, re.Pattern]]:
    """(rung, pattern) of every head template, the longest fixed text first, so a specific head wins."""
    found = [(rung, *_pattern(getattr(msg, name))) for rung, names in RUNGS.items() for name in names
             if isinstance(getattr(msg, name, None), str)]
    return [(rung, pattern) for rung, pattern, _ in sorted(found, key=lambda item: -item[2])]


def templates() -> dict[str, str]:
    """Every hint template of graders/messages/ by its id: a ``HINT_*`` constant's name, or ``TABLE.key`` for an
    entry of a ``HINT_*`` table of hints (``HINT_OP_MISTAKES.forgets_g``)."""
    found = {}
    for name, value in sorted(vars(msg).items()):
        if name.startswith("HINT_") and isinstance(value, str):
            found[name] = value
        elif name.startswith("HINT_") and isinstance(value, dict):
            found.update({f"{name}.{key}": text for key, text in sorted(value.items()) if isinstance(text, str)})
    return found


@functools.cache
def hints() -> dict[str, re.Pattern]:
    """The recognised mistakes: every hint template (``templates``) with enough fixed text, by id."""
    table = {}
    for name, template in templates().items():
        pattern, literal = _pattern(template)
        if literal >= MIN_LITERAL:
            table[name] = pattern
    return table


def read(message: str) -> Reading:
    """The rung and the named mistakes of a failed task's ``message``."""
    rung = _heads_rung(message)
    found = []
    for name, pattern in hints().items():
        hit = pattern.search(message)
        if hit:
            found.append((hit.start(), -(hit.end() - hit.start()), name))
    return Reading(rung, tuple(name for _, _, name in sorted(found)))


def import_failure(message: str) -> tuple[str, str] | None:
    """(the file, the error) where a failed task's ``message`` says a file of the submission raised at import (at the
    top level of the module, or a syntax error); else None."""
    if not message.startswith("Task ") or _heads_rung(message) != "errors":
        return None
    where, error = _AT_MODULE.search(message), _RAISED_ERROR.match(message.splitlines()[0])
    if where is None or error is None:
        return None
    return where[1], error[1]


def _heads_rung(message: str) -> str:
    return next((rung for rung, pattern in _heads() if pattern.match(message)), OTHER)
