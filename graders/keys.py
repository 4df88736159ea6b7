"""Each student's grading key, derived from the course's secret: the one place a key is made.

A grade that counts draws its inputs (Hypothesis's examples, the cost rungs' timed operands, task 5.4's points)
from a key. The key of a student is an HMAC-SHA256 of the course's secret and the student's identity, as the
platform that grades gives it: grade-all's folder name, nbgrader's student id, Classroom 50's repository owner,
Gradescope's user ids. So the same student regraded gets the same inputs, two students get different ones, and
nobody can tell a classmate's inputs, or their own, without the secret (which never leaves the instructor's
machines: the course file, or the runner's environment). ``autograd-lab grade --key N`` still seeds one
submission with a key of the instructor's choosing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata

SECRET_BYTES = 32  # a new secret: 256 bits, written as 64 hex digits
MIN_SECRET_CHARS = 32  # a secret given by hand must be at least this long
KEY_BITS = 63  # a key is a non-negative int below 2**63 (numpy's and Hypothesis's seeds take it as it is)
_DOMAIN = b"autograd-lab student key v1\0"
_COMMITMENT = b"autograd-lab secret commitment v1\0"


def new_secret() -> str:
    """A fresh course secret: 64 hex digits from the operating system's randomness."""
    return secrets.token_hex(SECRET_BYTES)


def identity(text: str) -> str:
    """``text`` as a student's identity: Unicode NFC, spaces around it dropped, case folded (GitHub logins and e-mail
    addresses ignore case, so "Alice" and "alice" are one student)."""
    return unicodedata.normalize("NFC", str(text)).strip().casefold()


def student_key(secret: str, student: str) -> int:
    """The grading key of ``student`` (an identity: ``identity`` normalises it) in the course whose secret is
    ``secret``: the first 63 bits of HMAC-SHA256(secret, identity)."""
    digest = hmac.new(secret.encode(), _DOMAIN + identity(student).encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - KEY_BITS)


def commitment(secret: str) -> str:
    """A digest that changes with the secret and tells nothing of it: what a gradebook's fingerprint holds, so that
    a new secret (a rotation) grades everyone again, while no file of the gradebook holds the secret."""
    return hmac.new(secret.encode(), _COMMITMENT, hashlib.sha256).hexdigest()[:32]


def tag(key: int) -> str:
    """What a scorecard shows of a key derived from the secret: a short digest that names it for the instructor
    (two grades with the same tag had the same inputs) and tells nothing of it. The key itself would let its student
    draw their own inputs with the graders and fit a rule to them."""
    return hashlib.sha256(f"autograd-lab key tag\0{key}".encode()).hexdigest()[:10]
