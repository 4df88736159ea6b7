"""Issue 15's speed targets, each timed next to a bare `python -c "import torch"` in the same minute.

    python tests/benchmarks/speed.py [--only grade,class,nbgrader] [--repeats 3] [--students 100] [--jobs 2]
                                     [--cold]

What it measures, every command in a fresh process as a user runs it:

1. grade     `autograd-lab grade solutions`, and with `--results FILE` (results.json, and loss.png beside it):
             at most 3x `import torch`.
2. class     `autograd-lab grade-all CLASS --out OUT --jobs 2` on bench_class.py's class of ``--students``:
             seconds per submission x cores / `import torch` at most 2 (cores: the ones grade-all can use,
             the lesser of ``--jobs`` and the machine's), and 40 or more submissions a minute.
3. nbgrader  `nbgrader autograde --student alice --force` (the reference) at most `autograd-lab grade` of the
             same files plus 3 s. Printed beside it, not a target: how long `import nbgrader.apps` alone takes
             (nbgrader's own start, before it reads the course's config; no grader can shorten it).
4. examples  no grade of a correct submission tries fewer than 1,357 Hypothesis examples (results.json's
             ``extra_data.examples``, from every grade above that writes one).

How to read it: each repeat is a pair, `import torch` and the measured command back to back (for nbgrader:
autograde and the CLI), their order alternating between repeats, so both halves see the same load. The figure
is taken within each pair (a ratio; for nbgrader a difference) and the median over the pairs is held against
the target. The load average before and after and the core count are printed: a FAIL with a load above the
cores says less than one on a quiet machine. Submissions per minute is the one absolute figure; load does not
cancel out of it.

Examples cache (``$AUTOGRAD_LAB_CACHE``): by default one untimed grade of solutions/ first fills a private
cache folder that every timed run then reads (the warm case: any grade after the first). With ``--cold`` each
timed run gets a fresh, empty private folder (the first grade on a machine, or after the graders changed);
the untimed grade then only warms the operating system's file caches. All folders are private (0700)
temporary ones, removed at the end. Exit status 1 when a target fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import bench_class  # also puts tests/ on sys.path

from graders import paths
from graders.judge.examples_cache import CACHE_ENV

SUBBENCHMARKS = ("grade", "class", "nbgrader")
IMPORT_TORCH = [sys.executable, "-c", "import torch"]
NBGRADER_IMPORT = [sys.executable, "-c", "import nbgrader.apps"]  # what `nbgrader` imports before it reads a config
GRADE_RATIO, CLASS_RATIO, PER_MINUTE, NBGRADER_EXTRA, EXAMPLES = 3.0, 2.0, 40.0, 3.0, 1357


def script(name: str, module: str) -> list[str]:
    """The console script ``name`` of this Python's environment, as a user runs it, else ``python -m module``."""
    beside = Path(sys.executable).parent / name
    return [str(beside)] if beside.exists() else [sys.executable, "-m", module]


CLI = script("autograd-lab", "graders")
NBGRADER = script("nbgrader", "nbgrader")


@contextmanager
def private_folder(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A fresh temporary folder only its owner can open, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.chmod(folder, 0o700)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def timed(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Seconds ``command`` took; a command that fails stops the benchmark with its output."""
    start = time.perf_counter()
    run = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return seconds


def examples_tried(results_json: Path) -> int:
    return json.loads(results_json.read_text())["extra_data"]["examples"]


class ExamplesCache:
    """Where each timed run keeps its drawn examples: one folder filled by a warm-up grade, or a fresh one."""

    def __init__(self, scratch: Path, cold: bool):
        self.scratch, self.cold = scratch, cold
        self.shared = scratch / "examples-cache"
        self.added = 0  # files the timed runs added to the warm cache: those runs were not all warm

    @staticmethod
    def files(folder: Path) -> int:
        return sum(1 for path in folder.rglob("*") if path.is_file()) if folder.exists() else 0

    @contextmanager
    def run(self) -> Iterator[dict[str, str]]:
        """The environment of one timed run."""
        if self.cold:
            with private_folder("agl-speed-cache-", self.scratch) as fresh:
                yield {**os.environ, CACHE_ENV: str(fresh)}
            return
        before = self.files(self.shared)
        yield {**os.environ, CACHE_ENV: str(self.shared)}
        self.added += self.files(self.shared) - before

    def warm_up(self, examples: list[int]) -> str:
        """One untimed grade of the reference; says what it did."""
        with private_folder("agl-speed-warm-up-", self.scratch) as out:
            cache = out / "cache" if self.cold else self.shared
            timed([*CLI, "grade", str(paths.SOLUTIONS), "--results", str(out / "results.json")],
                  env={**os.environ, CACHE_ENV: str(cache)})
            examples.append(examples_tried(out / "results.json"))
            kept = self.files(cache)
        if self.cold:
            return ("cold: every timed run starts from an empty private cache folder; one untimed grade of "
                    "solutions/ first warmed the OS's file caches only")
        if kept == 0:
            return "warm, but the untimed grade of solutions/ kept no examples: does this build cache them?"
        return f"warm: one untimed grade of solutions/ first filled a private cache folder ({kept} files)"


def pairs(first: Callable[[], float], second: Callable[[], float], repeats: int,
          show: Callable[[float, float], str]) -> list[tuple[float, float]]:
    """``repeats`` pairs of seconds (first, second), each pair back to back, the order alternating."""
    done = []
    for index in range(repeats):
        if index % 2 == 0:
            a = first()
            b = second()
        else:
            b = second()
            a = first()
        done.append((a, b))
        print(f"  pair {index + 1}: {show(a, b)}", flush=True)
    return done


@dataclass
class Target:
    label: str
    figure: str
    goal: str
    passed: bool


def measure_grade(cache: ExamplesCache, repeats: int, examples: list[int]) -> list[Target]:
    """Target 1: the reference graded by the CLI, in units of `import torch`: `grade` as the issue names it, and
    `grade --results FILE`, which also writes results.json and draws loss.png beside it (CI's way)."""
    results = cache.scratch / "grade-results.json"
    targets = []
    for label, extra in (("1. grade / import torch", []),
                         ("1. grade --results / import torch", ["--results", str(results)])):
        def grade(extra=extra) -> float:
            results.unlink(missing_ok=True)
            with cache.run() as env:
                seconds = timed([*CLI, "grade", str(paths.SOLUTIONS), *extra], env=env)
            if results.exists():
                examples.append(examples_tried(results))
            return seconds

        print(f"1. autograd-lab grade solutions/{' --results FILE' if extra else ''}, against import torch",
              flush=True)
        done = pairs(lambda: timed(IMPORT_TORCH), grade, repeats,
                     lambda torch, g: f"import torch {torch:5.2f} s   grade {g:6.2f} s   ratio {g / torch:5.2f}x")
        ratio = statistics.median(g / torch for torch, g in done)
        print(f"  median: import torch {statistics.median(t for t, _ in done):.2f} s, "
              f"grade {statistics.median(g for _, g in done):.2f} s, ratio {ratio:.2f}x", flush=True)
        targets.append(Target(label, f"{ratio:.2f}x", f"<= {GRADE_RATIO:g}x", ratio <= GRADE_RATIO))
    return targets


def graded_class(out: Path, kinds: dict[str, str], examples: list[int]) -> Counter:
    """The statuses of a grade-all's gradebook; the examples of its correct submissions go to ``examples``."""
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if kinds.get(row["student"]) == "correct":
            examples.append(examples_tried(out / row["student"] / "results.json"))
    return Counter(row["status"].split(":")[0] for row in rows)


def measure_class(cache: ExamplesCache, repeats: int, students: int, jobs: int,
                  examples: list[int]) -> list[Target]:
    """Target 2: grade-all of bench_class.py's class, per submission per core, in units of `import torch`."""
    class_dir = cache.scratch / "class"
    kinds = bench_class.make_class(class_dir, students)
    cores = min(jobs, os.cpu_count() or 1)
    statuses = Counter()

    def grade_all() -> float:
        # A gradebook of its own each run: a second grade-all into the same one skips the unchanged submissions.
        with private_folder("agl-speed-gradebook-", cache.scratch) as out, cache.run() as env:
            seconds = timed([*CLI, "grade-all", str(class_dir), "--out", str(out / "out"), "--jobs", str(jobs)],
                            env=env)
            statuses.update(graded_class(out / "out", kinds, examples))
        return seconds

    def ratio(torch: float, wall: float) -> float:
        return wall / students * cores / torch

    def show(torch: float, wall: float) -> str:
        return (f"import torch {torch:5.2f} s   grade-all {wall:6.1f} s ({wall / students:.2f} s a submission, "
                f"{students / wall * 60:.1f} a minute)   ratio {ratio(torch, wall):5.2f}")

    made = Counter(kind.split(":")[0] for kind in kinds.values())
    print(f"2. autograd-lab grade-all CLASS --jobs {jobs}, {students} students "
          f"({', '.join(f'{n} {kind}' for kind, n in sorted(made.items()))}), {cores} cores used, "
          "against import torch", flush=True)
    done = pairs(lambda: timed(IMPORT_TORCH), grade_all, repeats, show)
    median_ratio = statistics.median(ratio(torch, wall) for torch, wall in done)
    per_minute = statistics.median(students / wall * 60 for _, wall in done)
    print(f"  statuses over all runs: {', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}")
    print(f"  median: s/submission x {cores} cores / import torch {median_ratio:.2f}, "
          f"{per_minute:.1f} submissions a minute", flush=True)
    return [Target(f"2. grade-all s/submission x {cores} cores / import torch", f"{median_ratio:.2f}",
                   f"<= {CLASS_RATIO:g}", median_ratio <= CLASS_RATIO),
            Target("2. grade-all submissions per minute", f"{per_minute:.1f}", f">= {PER_MINUTE:g}",
                   per_minute >= PER_MINUTE)]


def measure_nbgrader(cache: ExamplesCache, repeats: int, examples: list[int]) -> list[Target]:
    """Target 3: nbgrader's autograde of one student against the CLI's grade of the same files."""
    import bench_nbgrader  # needs nbgrader (a dependency of the package) and the tests' nbgrader helpers

    course, folder, jupyter = bench_nbgrader.course_with_alice(cache.scratch / "nbgrader")
    results = cache.scratch / "nbgrader-cli-results.json"

    own_import = []  # nbgrader's own start, which no grader can shorten: `import nbgrader.apps` alone

    def autograde() -> float:
        own_import.append(timed(NBGRADER_IMPORT))
        with cache.run() as env:
            return timed([*NBGRADER, "autograde", bench_nbgrader.ASSIGNMENT, "--student", "alice", "--force"],
                         env={**jupyter, CACHE_ENV: env[CACHE_ENV]}, cwd=course)

    def grade() -> float:
        with cache.run() as env:
            seconds = timed([*CLI, "grade", str(folder), "--results", str(results)], env=env)
        examples.append(examples_tried(results))
        return seconds

    print("3. nbgrader autograde --student alice --force, against autograd-lab grade of the same files",
          flush=True)
    done = pairs(autograde, grade, repeats,
                 lambda nb, cli: f"nbgrader autograde {nb:6.2f} s   autograd-lab grade {cli:6.2f} s   "
                                    f"difference {nb - cli:+5.2f} s")
    extra = statistics.median(nb - cli for nb, cli in done)
    print(f"  median: autograde {statistics.median(nb for nb, _ in done):.2f} s, "
          f"grade {statistics.median(cli for _, cli in done):.2f} s, nbgrader adds {extra:+.2f} s", flush=True)
    print(f"  of which nbgrader's own start: `python -c \"import nbgrader.apps\"` alone took "
          f"{statistics.median(own_import):.2f} s (median, timed just before each autograde)", flush=True)
    return [Target("3. nbgrader autograde - autograd-lab grade", f"{extra:+.2f} s", f"<= +{NBGRADER_EXTRA:g} s",
                   extra <= NBGRADER_EXTRA)]


def examples_target(examples: list[int]) -> Target:
    """Target 4: the fewest Hypothesis examples any grade of a correct submission tried."""
    fewest = min(examples)
    return Target(f"4. Hypothesis examples per grade (fewest of {len(examples)})", f"{fewest:,}",
                  f">= {EXAMPLES:,}", fewest >= EXAMPLES)


def versions() -> str:
    names = ("torch", "numpy", "hypothesis", "nbgrader")
    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} missing")
    return f"python {sys.version.split()[0]}, " + ", ".join(found)


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def report(targets: list[Target], load_before: str) -> bool:
    """The summary table; whether every target passed."""
    width = max(len(t.label) for t in targets)
    print()
    print(f"{'target':<{width}}  {'median':>10}  {'goal':<10}  result")
    for t in targets:
        print(f"{t.label:<{width}}  {t.figure:>10}  {t.goal:<10}  {'PASS' if t.passed else 'FAIL'}")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load()}; cores: {os.cpu_count()}")
    return all(t.passed for t in targets)


def run(only: list[str], repeats: int, students: int, jobs: int, cold: bool) -> bool:
    """Measure the sub-benchmarks in ``only`` and print the report; whether every target passed."""
    load_before = load()
    print(f"speed (issue 15): {', '.join(only)}; repeats {repeats}; cores {os.cpu_count()}; "
          f"load average {load_before}")
    print(f"{versions()}; commands: {CLI[0]}, {NBGRADER[0]}")
    examples: list[int] = []
    targets: list[Target] = []
    with private_folder("agl-speed-") as scratch:
        cache = ExamplesCache(scratch, cold)
        print(f"examples cache: {cache.warm_up(examples)}", flush=True)
        if "grade" in only:
            targets += measure_grade(cache, repeats, examples)
        if "class" in only:
            targets += measure_class(cache, repeats, students, jobs, examples)
        if "nbgrader" in only:
            from test_nbgrader_course import clean_configs_removed  # what Jupyter leaves in /tmp

            with clean_configs_removed():
                targets += measure_nbgrader(cache, repeats, examples)
    if cache.added:
        print(f"note: the timed runs added {cache.added} files to the warm examples cache, so some ran cold "
              "(the graders changed since the warm-up, or a check drew what the reference's grade did not)")
    targets.append(examples_target(examples))
    return report(targets, load_before)


def subbenchmarks(value: str) -> list[str]:
    chosen = [name.strip() for name in value.split(",") if name.strip()]
    if not chosen or set(chosen) - set(SUBBENCHMARKS):
        raise argparse.ArgumentTypeError(f"got --only={value!r}, expected some of {','.join(SUBBENCHMARKS)}")
    return [name for name in SUBBENCHMARKS if name in chosen]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=subbenchmarks, default=list(SUBBENCHMARKS),
                        help=f"comma-separated, some of {','.join(SUBBENCHMARKS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="pairs of runs per target (default 3)")
    parser.add_argument("--students", type=int, default=100, help="the class's size (default 100)")
    parser.add_argument("--jobs", type=int, default=2, help="grade-all's --jobs (default 2)")
    parser.add_argument("--cold", action="store_true",
                        help="a fresh, empty examples cache for every timed run (default: warmed once)")
    args = parser.parse_args(argv)
    for name in ("repeats", "students", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"got --{name}={getattr(args, name)}, expected 1 or more")
    sys.exit(0 if run(args.only, args.repeats, args.students, args.jobs, args.cold) else 1)


if __name__ == "__main__":
    main()
