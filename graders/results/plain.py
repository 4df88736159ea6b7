"""Text every view can carry: what a scorecard's strings become before any view writes them.

Messages quote student code. The worker's answers are cleaned on their way in (``untrusted``), but each view must
be valid in its own grammar whatever reaches it (a result merged from a shard's results.json, a grader's own
message): so every view renders from ``safe_result``. Light on purpose (``re`` alone): nbgrader's process, which
never imports the checks or torch, uses it too.
"""

from __future__ import annotations

import re

# What no view may carry, whatever the text came from: the C0 and C1 controls but tab and newline (a terminal's
# escapes and repaints), the code points XML 1.0 forbids (U+FFFE, U+FFFF, lone surrogates, which UTF-8 cannot even
# write), and the invisible and bidirectional marks that make text read other than it is. Each becomes U+FFFD.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufffe\uffff"
                     "\ud800-\udfff]")


def safe(text: str) -> str:
    """``text`` with every character no view may carry replaced by U+FFFD: what every view writes is valid in its
    own grammar (XML 1.0, JSON, CommonMark, UTF-8 on a terminal) whatever a message holds."""
    return _UNSAFE.sub("\ufffd", text)


def safe_result(result: dict) -> dict:
    """A copy of ``result`` with every string in it made ``safe``: each view renders from this."""
    if isinstance(result, dict):
        return {safe(k) if isinstance(k, str) else k: safe_result(v) for k, v in result.items()}
    if isinstance(result, list):
        return [safe_result(v) for v in result]
    return safe(result) if isinstance(result, str) else result
