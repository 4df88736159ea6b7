"""How long the class report's similar submissions take: copydetect over a class's graded code, and from the cache.

    python tests/benchmarks/bench_similarity.py [--students 50 100 200] [--repeat 3]

The class cycles through the tests' corpus: the reference, the correct styles of tests/corpus_correct/ (their
tensor.py), every known-wrong entry of tests/corpus.py (the reference with one mistake) and the stubs. That is close
to the worst case: most students are the reference with one line changed, so nearly every pair shares most of its
code and copydetect's overlap work is at its largest. The script prints, per class size, the median seconds of a
comparison from nothing (graders.classgrade.similarity.similar_pairs, fingerprints included), the pairs it lists,
and the median seconds of the same call answered from its cache (a class graded again unchanged). Figures, not
pass/fail: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))

from corpus import WRONG, apply_patch  # noqa: E402

from graders.classgrade import similarity  # noqa: E402
from graders.paths import EXERCISES, SOLUTIONS  # noqa: E402
from graders.tasks import GRADED_MODULES  # noqa: E402


def corpus_class(size: int) -> dict[str, dict[str, str]]:
    """``size`` students: student -> module -> text, cycling through the reference, the styles, the corpus, stubs."""
    reference = {m: (SOLUTIONS / f"{m}.py").read_text() for m in GRADED_MODULES}
    stubs = {m: (EXERCISES / f"{m}.py").read_text() for m in GRADED_MODULES}
    kinds = [("reference", reference), ("stubs", stubs)]
    for style in sorted((TESTS / "corpus_correct").iterdir()):
        if (style / "tensor.py").is_file():
            kinds.append((f"style-{style.name}", {**stubs, "tensor": (style / "tensor.py").read_text()}))
    for entry in WRONG:
        module = entry.file.removesuffix(".py")
        changed = apply_patch(reference[module], entry.find, entry.replace, entry.name)
        kinds.append((entry.name, {**reference, module: changed}))
    return {f"{i:03d}-{kinds[i % len(kinds)][0]}": kinds[i % len(kinds)][1] for i in range(size)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'students':>8} {'pairs':>7} {'listed':>7} {'cold s':>8} {'cached s':>9}")
    for size in args.students:
        code = corpus_class(size)
        cold, cached, listed = [], [], 0
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as scratch:
                cache = Path(scratch) / ".similarity.json"
                start = time.perf_counter()
                listed = len(similarity.similar_pairs(code, cache=cache))
                cold.append(time.perf_counter() - start)
                start = time.perf_counter()
                similarity.similar_pairs(code, cache=cache)
                cached.append(time.perf_counter() - start)
        print(f"{size:>8} {size * (size - 1) // 2:>7} {listed:>7} {statistics.median(cold):>8.1f} "
              f"{statistics.median(cached):>9.2f}")


if __name__ == "__main__":
    main()
