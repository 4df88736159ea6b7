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

import hashlib
import io
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from graders.files import atomic_write
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
MAX_LINES = 80  # lines of one file shown in the side-by-side view (OUT_DIR/students/<student>/code/ has it whole)
CACHE_VERSION = 1  # of the pairs kept for a class's code (similar_pairs' cache)


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

    # Each distinct text is fingerprinted once, and each pair of distinct texts compared once: many students hand in
    # a module as the same text (the stubs of a task not done, a copy).
    prints: dict[str, dict[str, object]] = {s: {} for s in students}
    for module in GRADED_MODULES:
        given = GIVEN / f"{module}.py"
        boilerplate = list(_fingerprint(module, given.read_text()).hashes) if given.is_file() else None
        made: dict[str, object] = {}
        for student in students:
            text = code[student].get(module)
            if text is not None:
                if text not in made:
                    made[text] = _fingerprint(module, text, boilerplate)
                prints[student][module] = made[text]
    own = {s: sum(p.token_coverage for p in prints[s].values()) for s in students}
    done: dict[tuple[int, int], tuple] = {}
    pairs = []
    for first, second in itertools.combinations(students, 2):
        shared, files = [0, 0], []
        for module in GRADED_MODULES:
            a, b = prints[first].get(module), prints[second].get(module)
            if a is None or b is None:
                continue
            if (id(a), id(b)) not in done:
                done[id(a), id(b)] = compare_files(a, b)
            overlap, (fa, fb), slices = done[id(a), id(b)]
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


def similar_pairs(code: dict[str, dict[str, str]], cache: Path | None = None) -> list[Pair]:
    """The pairs of students in ``code`` (student -> module -> text) whose code shares much beyond the given
    modules (FLAGGED of one's own code, MIN_SHARED characters), the most similar first. ``cache``: a file that keeps
    them for this very code (and these settings), so that a class run again unchanged is not compared again."""
    key = _cache_key(code)
    found = _cached(cache, key, code) if cache is not None else None
    if found is None:
        found = [p for p in compare(code) if p.fraction >= FLAGGED and p.shared >= MIN_SHARED]
        if cache is not None:
            atomic_write(cache, json.dumps({"key": key, "pairs": [_as_json(p) for p in found]}) + "\n")
    return sorted(found, key=lambda p: (-p.fraction, p.first, p.second))


def _cache_key(code: dict[str, dict[str, str]]) -> str:
    """A digest of everything the pairs depend on: the code, the given modules and the settings."""
    given = {module: (GIVEN / f"{module}.py").read_text() for module in GRADED_MODULES
             if (GIVEN / f"{module}.py").is_file()}
    text = json.dumps({"version": CACHE_VERSION, "noise": NOISE, "window": WINDOW, "flagged": FLAGGED,
                       "min_shared": MIN_SHARED, "given": given, "code": code}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _as_json(pair: Pair) -> dict:
    return {"first": pair.first, "second": pair.second, "fractions": list(pair.fractions), "shared": pair.shared,
            "files": [{"module": f.module, "fractions": list(f.fractions),
                       "slices": [[[int(v) for v in side[0]], [int(v) for v in side[1]]] for side in f.slices]}
                      for f in pair.files]}


def _cached(cache: Path, key: str, code: dict[str, dict[str, str]]) -> list[Pair] | None:
    """The pairs kept in ``cache`` for ``key``, their texts read from ``code``; None where there are none."""
    try:
        kept = json.loads(Path(cache).read_text())
        if kept.get("key") != key:
            return None
        return [Pair(p["first"], p["second"], tuple(p["fractions"]), int(p["shared"]), [
            FileMatch(f["module"], (code[p["first"]][f["module"]], code[p["second"]][f["module"]]),
                      tuple(f["fractions"]), tuple(f["slices"])) for f in p["files"]]) for p in kept["pairs"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


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
        if number not in keep:
            if shown and shown[-1] is not None:
                shown.append(None)  # a gap: the lines left out are an ellipsis
        elif len(shown) >= MAX_LINES:
            if shown[-1] is not None:
                shown.append(None)
            break
        else:
            shown.append((number, segments))
    last = max((line[0] for line in shown if line is not None), default=0)
    if shown and shown[-1] is None and max(keep, default=0) <= last:
        shown.pop()  # nothing shared after the last line shown: no ellipsis
    return Side(shown, float(fraction), min(hits, default=0), max(hits, default=0))
