"""Hints, one step at a time, for when you are stuck: the next step only when you ask for it.

    python exercises/hints.py              the tasks that have hints
    python exercises/hints.py 1.4          task 1.4's first hint (a nudge)
    python exercises/hints.py 1.4 2        its second (the idea), then 3 (the formula)

(``python -m exercises.hints 1.4`` works too, once your files import.) The hints below are stored encoded, so that
opening this file shows none of them: each is printed only when you ask for its step. Derive each rule yourself
first: the tests and ``gradcheck.py`` tell you when you have it.
"""

from __future__ import annotations

import base64
import sys
import textwrap

# task -> (what it covers, its steps in order: (kind, the hint, base64-encoded))
HINTS = {
    "1.1": ("unbroadcast", (
        ("nudge", "d2hlbiBudW1weSBicm9hZGNhc3RzIGB4YCBvZiBzaGFwZSBgKDMsKWAgYWdhaW5zdCBgKDIsIDMpYCwgdGhlIHNhbWUgZW50"
                   "cnkgb2YgYHhgIGlzIHVzZWQgaW4gYm90aCByb3dzLiBIb3cgbWFueSB0aW1lcyBkb2VzIGVhY2ggZW50cnkgb2YgYHhgIGlu"
                   "Zmx1ZW5jZSB0aGUgbG9zcz8="),
        ("idea", "YW4gaW5wdXQgdXNlZCBpbiBzZXZlcmFsIHBsYWNlcyBjb2xsZWN0cyB0aGUgZ3JhZGllbnQgb2YgZXZlcnkgcGxhY2Uu"),
        ("formula", "U3VtIGBncmFkYCBvdmVyIHRoZSBsZWFkaW5nIGF4ZXMgaXQgaGFzIGJleW9uZCBgc2hhcGVgLCB0aGVuIG92ZXIgZXZlcnkg"
                   "YXhpcyB3aGVyZSBgc2hhcGVgIGhhcyBzaXplIDEgKHdpdGggYGtlZXBkaW1zPVRydWVgKS4="),
    )),
    "1.2": ("add, sub, neg", (
        ("nudge", "aWYgYG91dCA9IHggKyB5YCBhbmQgYHhgIGdyb3dzIGJ5IGEgc21hbGwgYGhgLCBob3cgbXVjaCBkb2VzIGBvdXRgIGdyb3c/"),
        ("idea", "dGhlIGxvY2FsIGRlcml2YXRpdmVzIGFyZSBjb25zdGFudHM7IGJyb2FkY2FzdGluZyBpcyB1bmRvbmUgYnkgYHVuYnJvYWRj"
                   "YXN0YC4="),
        ("formula", "YHggKyB5YDogYChnLCBnKWA7IGB4IC0geWA6IGAoZywgLWcpYDsgYC14YDogYCgtZywpYCwgZWFjaCB1bmJyb2FkY2FzdCB0"
                   "byBpdHMgaW5wdXQncyBzaGFwZS4="),
    )),
    "1.3": ("mul, div", (
        ("nudge", "aW4gYG91dCA9IHggKiB5YCwgd2hhdCBtdWx0aXBsaWVzIGEgc21hbGwgY2hhbmdlIG9mIGB4YD8="),
        ("idea", "ZWFjaCBpbnB1dCdzIGRlcml2YXRpdmUgaW52b2x2ZXMgdGhlICpvdGhlciogaW5wdXQu"),
        ("formula", "YHggKiB5YDogYChnICogeSwgZyAqIHgpYDsgYHggLyB5YDogYChnIC8geSwgLWcgKiB4IC8geSoqMilgLCBlYWNoIHVuYnJv"
                   "YWRjYXN0Lg=="),
    )),
    "1.4": ("matmul", (
        ("nudge", "d3JpdGUgYG91dFtpLCBrXSA9IHN1bV9qIHhbaSwgal0gKiB3W2osIGtdYCBhbmQgZGlmZmVyZW50aWF0ZSBvbmUgZW50cnku"
                   "IFRoZW4gY2hlY2sgdGhlIHNoYXBlczogdGhlIGdyYWRpZW50IGZvciBgeGAgbXVzdCBiZSBgeGAncyBzaGFwZS4="),
        ("idea", "dGhlIHNoYXBlcyBsZWF2ZSBvbmx5IG9uZSB3YXkgdG8gY29tYmluZSBgZ2Agd2l0aCB0aGUgb3RoZXIgbWF0cml4Lg=="),
        ("formula", "YChnIEAgdy5ULCB4LlQgQCBnKWAu"),
    )),
    "1.5": ("pow, exp, log", (
        ("nudge", "dGhlIGRlcml2YXRpdmVzIG9mIGB4KipwYCwgYGUqKnhgIGFuZCBgbG9nIHhgIGZyb20gY2FsY3VsdXMsIHRpbWVzIGBnYC4="),
        ("idea", "YGV4cGAgY2FuIHJldXNlIGl0cyBvd24gb3V0cHV0Lg=="),
        ("formula", "YGcgKiBwICogeCoqKHAgLSAxKWA7IGBnICogb3V0YDsgYGcgLyB4YC4="),
    )),
    "1.6": ("relu, tanh, sigmoid", (
        ("nudge", "d2hlcmUgaXMgcmVsdSdzIHNsb3BlIDAsIGFuZCB3aGVyZSAxPyBXaGF0IGlzIGl0IGF0IGV4YWN0bHkgMCBpbiBQeVRvcmNo"
                   "Pw=="),
        ("idea", "dGFuaCBhbmQgc2lnbW9pZCBoYXZlIGRlcml2YXRpdmVzIHdyaXR0ZW4gaW4gdGVybXMgb2YgdGhlaXIgb3V0cHV0czogdXNl"
                   "IGBvdXRgLCBub3QgdGhlIGlucHV0Lg=="),
        ("formula", "cmVsdTogYGcgKiAoeCA+IDApYDsgdGFuaDogYGcgKiAoMSAtIG91dCoqMilgOyBzaWdtb2lkOiBgZyAqIG91dCAqICgxIC0g"
                   "b3V0KWAu"),
    )),
    "1.7": ("sum, mean, square_mean", (
        ("nudge", "ZXZlcnkgaW5wdXQgZW50cnkgdGhhdCB3YXMgc3VtbWVkIGludG8gYW4gb3V0cHV0IGVudHJ5IG1vdmVzIGl0IGJ5IHRoZSBz"
                   "YW1lIGFtb3VudC4="),
        ("idea", "cHV0IGJhY2sgdGhlIHN1bW1lZCBheGVzIChga2VlcGRpbXNgIG9yIGBucC5leHBhbmRfZGltc2ApLCB0aGVuIGJyb2FkY2Fz"
                   "dCBgZ2AgdG8gdGhlIGlucHV0J3Mgc2hhcGU7IGEgbWVhbiBhbHNvIGRpdmlkZXMu"),
        ("formula", "c3VtOiBgZ2AgZXhwYW5kZWQgYW5kIGJyb2FkY2FzdCB0byBgeC5zaGFwZWA7IG1lYW46IHRoZSBzYW1lIGRpdmlkZWQgYnkg"
                   "dGhlIGNvdW50OyBgc3F1YXJlX21lYW5gOiBgZyAqIDIgKiB4IC8geC5zaXplYC4="),
    )),
    "1.8": ("reshape, T", (
        ("nudge", "dGhlc2Ugb3BzIG9ubHkgbW92ZSBlbnRyaWVzIGFyb3VuZDsgbm90aGluZyBpcyBzY2FsZWQu"),
        ("formula", "cmVzaGFwZTogYGcucmVzaGFwZSh4LnNoYXBlKWA7IGAuVGA6IGBnLlRgLg=="),
    )),
    "2": ("the engine", (
        ("nudge", "YSBub2RlJ3MgZ3JhZGllbnQgaXMgY29tcGxldGUgb25seSB3aGVuIGV2ZXJ5IG5vZGUgdGhhdCB1c2VzIGl0IGhhcyBwYXNz"
                   "ZWQgaXRzIHNoYXJlIGJhY2suIEluIHdoYXQgb3JkZXIgbXVzdCB0aGUgbm9kZXMgYmUgdmlzaXRlZD8="),
        ("idea", "YSBkZXB0aC1maXJzdCBzZWFyY2ggdGhhdCBhcHBlbmRzIGEgbm9kZSBhZnRlciBhbGwgaXRzIHBhcmVudHMgZ2l2ZXMgYSB0"
                   "b3BvbG9naWNhbCBvcmRlcjsgd2FsayBpdCByZXZlcnNlZCwgYWRkaW5nIChuZXZlciBhc3NpZ25pbmcpIGdyYWRpZW50cy4g"
                   "Mi40OiB0aGUgc2FtZSBzZWFyY2ggd2l0aCBhbiBleHBsaWNpdCBzdGFjayBpbnN0ZWFkIG9mIHJlY3Vyc2lvbi4="),
    )),
}
ALIASES = {"2.1": "2", "2.2": "2", "2.3": "2", "2.4": "2", "2.x": "2"}
NO_HINTS = ("Tasks 3 to 6 (the optimizers, the DataLoader and the loops) are specified in their docstrings: there, "
            "the formula is the specification, not the derivation.")


def step(task: str, number: int) -> str:
    """What ``python exercises/hints.py TASK NUMBER`` prints: that step of the task's hints, and how to ask for
    the next one."""
    key = ALIASES.get(task, task)
    if key not in HINTS:
        return NO_HINTS if task[:1] in "3456" else f"No hints for {task!r}: " + listing()
    title, steps = HINTS[key]
    if not 1 <= number <= len(steps):
        return f"Task {task} has hints 1 to {len(steps)}."
    kind, encoded = steps[number - 1]
    text = base64.b64decode(encoded).decode()
    text = textwrap.fill(text[:1].upper() + text[1:], width=88, initial_indent="  ", subsequent_indent="  ")
    name = "2.x" if key == "2" else key
    lines = [f"Task {name} ({title}), hint {number} of {len(steps)}, the {kind}:", "", text, ""]
    if number < len(steps):
        lines.append(f"Still stuck? The next step: python exercises/hints.py {task} {number + 1}")
    else:
        lines.append("That was the last step: check your rule with the tests and gradcheck.py.")
    return "\n".join(lines)


def listing() -> str:
    """The tasks that have hints, and how many steps each."""
    rows = [f"  {'2.x' if key == '2' else key:<4} {title} ({len(steps)} steps)"
            for key, (title, steps) in HINTS.items()]
    return "\n".join(["Hints, one step at a time: python exercises/hints.py TASK [STEP]", *rows, NO_HINTS])


def main(argv: list[str]) -> int:
    if not argv:
        print(listing())
        return 0
    try:
        number = int(argv[1]) if len(argv) > 1 else 1
    except ValueError:
        print(f"The step is a number: python exercises/hints.py {argv[0]} 2")
        return 2
    print(step(argv[0], number))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
