"""Every sentence a student or instructor reads from the graders, in one place.

A failure message is the whole report: the task and op, the inputs, theirs,
the expected value and where it came from, the tolerance, one hint line.
At most about a dozen lines, in the student's terms, never grader source.
Tests import these templates and pin the rendered text.
"""

from __future__ import annotations

import numpy as np

NOT_ATTEMPTED = "Task {task} not attempted yet: {what} ({file} still raises NotImplementedError)."
NEEDS_OTHER_TASK = "Task {task} not attempted yet: it needs {what}, which still raises NotImplementedError."
MISSING_FILE = "Task {task}: {file} is missing from the submission."
RAISED = "Task {task} ({title}): {doing} raised {error}"
RAISED_AT = "  at {where}"
DIED = "Task {task} ({title}): the student process died while {doing}."
LAST_WORDS = "  its last line on stderr: {line}"
TIMED_OUT = ("Task {task} ({title}): no answer within {seconds:g} s while {doing}.\n"
             "  hint: an infinite loop, a blocking call, or work that grows exponentially with the graph")
WRONG_KIND = "Task {task} ({title}): {what} is {got}, expected {expected}."
WRONG_VALUE_HEAD = "Task {task} ({title}): wrong {what}"
EXPECTED_FROM = "  expected = {value}   ({source})"
YOURS = "  yours    = {value}"
LARGEST_ERROR = "  largest error {error:.3g} at index {index}, where {allowed:.2g} is allowed"
HINT = "  hint: {hint}"
SKIPPED_NO_CUDA = "Task {task} ({title}): skipped, no CUDA device on the grading machine (carries no points)."
PASSED = "Task {task} ({title}): passed."

# Classic mistakes, named when the numbers show them.
HINT_DOUBLED = ("yours is exactly twice the expected value: "
                "a gradient counted twice (assigned and then added, or not cleared)")
HINT_NEGATED = "yours is exactly the negative of the expected value: a sign is flipped"
HINT_TRANSPOSED = "yours is the expected value transposed: check which side of @ each factor goes, and .T"
HINT_NOT_SUMMED = ("yours has the broadcast shape {got}: sum the gradient back down to {expected} "
                   "(for a bias, over the batch)")
HINT_ZERO = "yours is all zeros: the gradient never reached this input"


def array_text(value, limit: int = 90) -> str:
    """One line for an array: its values (summarised when long) and its shape."""
    value = np.asarray(value)
    body = np.array2string(value, precision=4, separator=", ", threshold=8, edgeitems=2, max_line_width=10**6,
                           suppress_small=False)
    body = " ".join(body.split())
    if len(body) > limit:
        body = body[: limit - 3] + "..."
    return f"{body}  shape {value.shape}" if value.ndim else body


def header(task, **fields) -> dict:
    return {"task": task.id, "title": task.title, **fields}


def lines(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def diagnose(yours: np.ndarray, expected: np.ndarray) -> str | None:
    """A hint when the numbers match a classic mistake, else None."""
    if yours.shape != expected.shape:
        if yours.shape == expected.T.shape and expected.ndim == 2 and yours.shape != expected.shape:
            return HINT_TRANSPOSED
        try:
            if np.broadcast_shapes(yours.shape, expected.shape) == yours.shape:
                return HINT_NOT_SUMMED.format(got=yours.shape, expected=expected.shape)
        except ValueError:
            pass
        return None
    if not np.any(expected):
        return None
    if np.allclose(yours, 2 * expected, rtol=1e-9, atol=0):
        return HINT_DOUBLED
    if np.allclose(yours, -expected, rtol=1e-9, atol=0):
        return HINT_NEGATED
    if expected.ndim == 2 and expected.shape[0] == expected.shape[1] and not np.allclose(expected, expected.T) \
            and np.allclose(yours, expected.T, rtol=1e-9, atol=0):
        return HINT_TRANSPOSED
    if not np.any(yours):
        return HINT_ZERO
    return None

COSTLY = ("Task {task} ({title}): the backward rule of a ({n}, {n}) @ ({n}, {n}) product took {ratio:.0f} times "
          "the forward's CPU time; at most {limit:g} is allowed.\n"
          "  hint: use the formula (g @ b.T and a.T @ g), not finite differences")
GRADER_ERROR = ("Task {task} ({title}): the grader itself failed ({error}). "
                "This is not your mistake: please tell your instructor.")
TOTAL = "total {score:g}/{max_score:g} ({examples:,} Hypothesis examples{timing})"
