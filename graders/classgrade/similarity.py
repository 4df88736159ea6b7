"""Similar submissions: pairs of students whose graded code shares much beyond the given code and the stubs.

A list for the instructor to look at, never a grade: nothing here changes a score. The comparison is copydetect's
(MIT; the winnowing fingerprints of MOSS): each graded module is tokenized by Pygments with every name, string and
comment filtered out, so a copy with renamed variables, other comments or other strings is the same text; its
k-grams are fingerprinted, and those of the given module (the stubs and the given code a student starts from) are
boilerplate, dropped before anything is compared. A pair's shared fraction is, for each of the two, the part of
their own code (what is left once the boilerplate is dropped) that the other's code also holds.

Python salts ``hash()`` per process and copydetect fingerprints with it, so winnowing (keeping the smallest
fingerprint of each window) would keep other fingerprints on every run; every k-gram is kept instead (a window of
1), so the fractions are the same on every run.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass, field
from pathlib import Path

from graders.paths import GIVEN
from graders.results.plain import safe
from graders.tasks import GRADED_MODULES

# Characters of filtered code (a name is one) a passage needs to count as shared: copydetect's k. Measured on the
# correct styles of tests/corpus_correct/: at copydetect's default of 25, two styles written apart share up to 49%
# of their own code (a backward rule is a short line that every correct solution writes alike); at 80, 31% at most,
# while a copy of the reference with every name changed and the code reformatted keeps 77% (tests/test_similarity.py).
NOISE = 80
WINDOW = 1  # every k-gram is a fingerprint (see the module's docstring)
FLAGGED = 0.6  # a pair is listed when one of the two shares at least this fraction of their own code
MIN_SHARED = 200  # ... and at least this many characters of filtered code, so that one short rule is never enough
MAX_BYTES = 256 * 1024  # of one module read for the comparison
CONTEXT = 2  # lines shown around a shared passage in the side-by-side view
MAX_LINES = 400  # lines of one file shown in the side-by-side view


@dataclass
class Side:
    """One student's file of a pair: the lines shown (each as segments of text, shared or not, with its number;
    None for a gap of lines left out) and the shared fraction of their own code in it."""
    lines: list[tuple[int, list[tuple[str, bool]]] | None]
    fraction: float
    first: int = 0  # the first and last shared line (1-based), for the Markdown's passage
    last: int = 0


@dataclass
class FileMatch:
    """One module both students of a pair share code in: each one's text, the shared fraction of their own code in
    it, and the passages shared (copydetect's slices: starts and ends, in characters of the text)."""
    module: str
    texts: tuple[str, str]
    fractions: tuple[float, float]
    slices: tuple[object, object]

    def sides(self) -> tuple[Side, Side]:
        """Each student's side of the side-by-side view."""
        return (_side(self.texts[0], self.slices[0], self.fractions[0]),
                _side(self.texts[1], self.slices[1], self.fractions[1]))


@dataclass
class Pair:
    """Two students whose code shares much: the fraction of each one's own code the other also has, the characters
    of filtered code shared, and the files they share it in."""
    first: str
    second: str
    fractions: tuple[float, float]
    shared: int
    files: list[FileMatch] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        """The larger of the two fractions: how much of one student's own code the other's holds."""
        return max(self.fractions)


def read_code(folder: Path) -> dict[str, str]:
    """The graded modules kept in ``folder`` (a student's code/), by module name, as text (what is not UTF-8
    replaced, every character no view may carry made safe)."""
    found = {}
    for module in GRADED_MODULES:
        path = Path(folder) / f"{module}.py"
        try:
            if path.is_file() and not path.is_symlink():
                with open(path, "rb") as f:
                    found[module] = safe(f.read(MAX_BYTES).decode("utf-8", errors="replace"))
        except OSError:
            continue
    return found


def _fingerprint(module: str, text: str, boilerplate=None):
    from copydetect import CodeFingerprint  # imports matplotlib's pyplot: only when a class is compared

    return CodeFingerprint(f"{module}.py", NOISE, WINDOW, boilerplate=boilerplate, fp=io.StringIO(text))


def compare(code: dict[str, dict[str, str]]) -> list[Pair]:
    """Every pair of students in ``code`` (student -> module -> text), in name order, with what they share beyond the
    given modules (a pair that shares nothing has fractions of 0 and no files)."""
    students = sorted(code)
    if len(students) < 2:
        return []
    from copydetect import compare_files

    prints: dict[str, dict[str, object]] = {s: {} for s in students}
    for module in GRADED_MODULES:
        given = GIVEN / f"{module}.py"
        boilerplate = list(_fingerprint(module, given.read_text()).hashes) if given.is_file() else None
        for student in students:
            if module in code[student]:
                prints[student][module] = _fingerprint(module, code[student][module], boilerplate)
    own = {s: sum(p.token_coverage for p in prints[s].values()) for s in students}
    pairs = []
    for first, second in itertools.combinations(students, 2):
        shared, files = [0, 0], []
        for module in GRADED_MODULES:
            a, b = prints[first].get(module), prints[second].get(module)
            if a is None or b is None:
                continue
            overlap, (fa, fb), slices = compare_files(a, b)
            if overlap == 0:
                continue
            shared[0] += int(round(fa * a.token_coverage))  # copydetect's overlap over coverage, undone
            shared[1] += int(round(fb * b.token_coverage))
            files.append(FileMatch(module, (a.raw_code, b.raw_code), (float(fa), float(fb)), slices))
        fractions = (shared[0] / own[first] if own[first] else 0.0, shared[1] / own[second] if own[second] else 0.0)
        pairs.append(Pair(first, second, fractions, max(shared), files))
    return pairs


def fractions(code: dict[str, dict[str, str]]) -> dict[tuple[str, str], tuple[float, float]]:
    """(first, second) -> the fraction of each one's own code the other holds, for every pair of ``code``."""
    return {(p.first, p.second): p.fractions for p in compare(code)}


def similar_pairs(code: dict[str, dict[str, str]]) -> list[Pair]:
    """The pairs of students in ``code`` (student -> module -> text) whose code shares much beyond the given
    modules (FLAGGED of one's own code, MIN_SHARED characters), the most similar first."""
    found = [p for p in compare(code) if p.fraction >= FLAGGED and p.shared >= MIN_SHARED]
    return sorted(found, key=lambda p: (-p.fraction, p.first, p.second))


def _side(text: str, slices, fraction: float) -> Side:
    """``text`` as the side-by-side view shows it: the lines within CONTEXT of a shared passage (``slices``:
    copydetect's starts and ends, in characters of ``text``), each split into shared and other segments."""
    shared = [False] * len(text)
    for start, end in zip(slices[0], slices[1]):
        shared[int(start):int(end)] = [True] * (int(end) - int(start))
    lines, position = [], 0
    for number, line in enumerate(text.split("\n"), start=1):
        flags = shared[position:position + len(line)]
        segments = [(("".join(ch for ch, _ in group)), flag)
                    for flag, group in itertools.groupby(zip(line, flags), key=lambda item: item[1])]
        lines.append((number, segments, any(flags)))
        position += len(line) + 1
    hits = [number for number, _, hit in lines if hit]
    keep = {n for hit in hits for n in range(hit - CONTEXT, hit + CONTEXT + 1)}
    shown: list[tuple[int, list[tuple[str, bool]]] | None] = []
    for number, segments, _ in lines:
        if number in keep and len(shown) < MAX_LINES:
            shown.append((number, segments))
        elif shown and shown[-1] is not None:
            shown.append(None)
    while shown and shown[-1] is None:
        shown.pop()
    return Side(shown, float(fraction), min(hits, default=0), max(hits, default=0))
