"""The speed figures: where a grade's CPU goes, and each target timed next to `python -c "import torch"`.

    python tests/benchmarks/speed.py [--only breakdown,grade,class,shard,nbgrader] [--repeats 3] [--students 100]
                                     [--small 20] [--jobs 2] [--shard-class 500] [--shards 8] [--cold]

What it measures, every command in a fresh process as a user runs it:

breakdown    where the CPU goes, task by task (graders.judge.profile, with $AGL_PROFILE): the student's code (in
             the worker: its sampler's share), the stand-ins the loop tasks run over, the worker's own overhead (the
             rest of the workers' CPU, read by the judge from /proc: decoding, encoding, its imports, its verbs),
             the judge (its process: checks, Hypothesis, the examples cache, torch's import; and its oracle helper),
             the starts (fork servers, bubblewrap, the numpy baseline), the wall time and what of it none of them spent
             (waiting: process starts and round trips, the machine's other load). For the reference
             (`grade solutions --results FILE`) and for bench_class.py's class of ``--students`` by `grade-all`,
             with what is not the student's code over the student's code's CPU (a figure: median over the
             submissions, each charged its share of the CPU no grade holds: the judges' starts, the pool).
             One run each, not timed against torch: CPU seconds move less with the load than wall seconds.
             Then the floor (B3): a class of as many stub submissions (each task stops at its first request),
             ``--repeats`` runs beside `import torch`, is what a grade costs the machine whatever the student wrote
             (the sandboxes, the workers' starts, the judge's set-up, the gradebook); with the class's own code
             added, it is the class's floor: what a class would cost were every check and answer free.
grade        `autograd-lab grade solutions`, and with `--results FILE` (results.json, and loss.png beside it):
             at most 2x `import torch`.
class        `autograd-lab grade-all CLASS --out OUT --jobs 2` on bench_class.py's class of ``--students``: the
             machine's busy CPU seconds a submission (every core, /proc/stat: the kernel's work for the sandboxes'
             namespaces and the processes nobody waits for included) at most 1.3x the class's floor (with
             breakdown); flat: seconds a submission at ``--students`` at most 1.1x those of a class of ``--small``
             drawn from it (a stratified sample: the same shares of correct, wrong and stub submissions, the same
             mistakes). Printed as figures: seconds a submission x cores / `import torch` (cores: the lesser of
             ``--jobs`` and the machine's), and the submissions a minute scaled to 2 cores where `import torch`
             takes 1.3 s (x its seconds here / 1.3 x cores / 2).
shard        `grade-all --shard 1/N` of a class of ``--shard-class`` split ``--shards`` ways, as each task of the
             Slurm template's array grades it: the class ratio for it, and the class's wall on N such machines.
nbgrader     `nbgrader autograde --student alice --force` (the reference) at most `autograd-lab grade` of the
             same files plus nbgrader's own start (`import nbgrader.apps` alone, timed just before it) plus 1 s.
examples     no grade of a correct submission tries fewer than 1,357 Hypothesis examples (results.json's
             ``extra_data.examples``, from every grade above that writes one).

How to read it: each repeat is a pair, `import torch` and the measured command back to back (for nbgrader:
autograde and the CLI), their order alternating between repeats, so both halves see the same load. The figure
is taken within each pair (a ratio; for nbgrader a difference) and the median over the pairs is held against
the target. The load average before and after and the core count are printed: a FAIL with a load above the
cores says less than one on a quiet machine. The plain seconds are printed beside the ratios, never judged.

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
import resource
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
from graders.classgrade.gradebook import student_dir
from graders.isolation.processes import PROFILE_ENV
from graders.judge.examples_cache import CACHE_ENV

SUBBENCHMARKS = ("breakdown", "grade", "class", "shard", "nbgrader")
IMPORT_TORCH = [sys.executable, "-c", "import torch"]
NBGRADER_IMPORT = [sys.executable, "-c", "import nbgrader.apps"]  # what `nbgrader` imports before it reads a config
# The speed targets, every one a ratio or a difference taken in the same minutes: a grade at most GRADE_RATIO x
# `import torch`; a class's CPU a submission (the machine's, all cores) at most FLOOR_RATIO x its floor (a class of as
# many stubs, plus the class's own code: what no check could make cheaper), and flat with the class's size (a
# submission of the big class at most FLAT x one of the small); nbgrader's one-student command at most its own start
# plus the CLI plus NBGRADER_EXTRA seconds; no grade of a correct submission with fewer than EXAMPLES examples.
# The class in units of `import torch` (its seconds a submission x cores, and a minute scaled to 2 cores where
# `import torch` takes TORCH_SECONDS) and what is not the student's code over the student's code are printed as
# figures: they move with the machine's speed at importing torch and with how quick the class's own code is.
GRADE_RATIO, FLOOR_RATIO, TORCH_SECONDS, FLAT = 2.0, 1.3, 1.3, 1.1
NBGRADER_EXTRA, EXAMPLES = 1.0, 1357


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
        self.classes: dict[int, dict[str, str]] = {}  # bench_class.py's classes made in this run, by size
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
    """One line of the report: a target (``passed`` True or False) or a figure printed beside them (None)."""
    label: str
    figure: str
    goal: str
    passed: bool | None


# ----- the breakdown: where a grade's CPU goes -----
# graders.judge.profile's columns: CPU seconds by whose code spent them, then the wall time and what of it none did.
CPU_COLUMNS = ("student", "standins", "worker", "judge", "starts")
HEADINGS = {"student": "student", "standins": "stand-ins", "worker": "worker", "judge": "judge",
            "starts": "starts", "overhead": "not student", "wall": "wall", "waiting": "waiting",
            "round_trips": "trips"}


def machine_cpu() -> tuple[float, float]:
    """The CPU seconds every core of this machine has spent busy since boot, and of them in the kernel (/proc/stat's
    first line: user, nice, system, irq, softirq and steal; system, irq and softirq), whoever spent them: what the
    class costs the machine, namespaces' kernel work and processes no one waits for included."""
    with open("/proc/stat") as f:
        fields = [int(n) for n in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    tick = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq + steal) / tick, (system + irq + softirq) / tick


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children, their own waited-for children included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Profiled:
    """One command run with $AGL_PROFILE: its wall seconds, the CPU seconds of its waited-for process tree (getrusage
    of this process's children) and each grade's rows (graders.judge.profile), the worker's ``worker`` made what is
    left of it once the student's code and the stand-ins are taken out. A forked worker is no waited-for child (it is
    handed to its sandbox's first process, which ends with it): its CPU is the rows' only, read from /proc, and the
    rest of the rows' is in the waited-for tree too."""
    wall: float
    children: float
    grades: list[dict]

    def __post_init__(self):
        for grade in self.grades:
            for row in grade["rows"]:
                row["worker"] = max(0.0, row["worker"] - row["student"] - row["standins"])
                row["overhead"] = sum(row[name] for name in CPU_COLUMNS if name != "student")

    @staticmethod
    def total(grade: dict) -> dict:
        return {name: sum(row[name] for row in grade["rows"]) for name in grade["rows"][0] if name != "task"}

    def _summed(self, names: tuple[str, ...]) -> float:
        return sum(self.total(grade)[name] for grade in self.grades for name in names)

    def outside(self) -> float:
        """The CPU no grade's row holds: the command's interpreter start and imports, the class's pool, the judges'
        starts, the pictures, the output, the exit."""
        return max(0.0, self.children - self._summed(("judge", "starts")))

    def cpu(self) -> float:
        """The whole command's CPU: its waited-for tree and its workers."""
        return self.children + self._summed(("student", "standins", "worker"))


def profiled(command: list[str], cache: ExamplesCache) -> Profiled:
    """Run ``command`` with $AGL_PROFILE set to a private folder; what its grades wrote there."""
    with private_folder("agl-speed-profile-", cache.scratch) as folder, cache.run() as env:
        before = children_cpu()
        wall = timed(command, env={**env, PROFILE_ENV: str(folder)})
        children = children_cpu() - before
        grades = [json.loads(line) for file in sorted(folder.glob("*.jsonl")) for line in file.read_text().splitlines()]
    return Profiled(wall, children, grades)


def print_rows(rows: list[tuple[str, dict]], columns: tuple[str, ...]) -> None:
    print(f"  {'':<22}" + "".join(f"{HEADINGS[name]:>12}" for name in columns))
    for label, row in rows:
        print(f"  {label:<22}" + "".join(f"{row.get(name, 0):>12.3f}" if name != "round_trips" else
                                           f"{row.get(name, 0):>12.0f}" for name in columns))


BREAKDOWN = ("student", "standins", "worker", "judge", "starts", "overhead", "wall", "waiting", "round_trips")


def breakdown_reference(cache: ExamplesCache, examples: list[int]) -> None:
    """The reference's grade by the CLI, task by task, and the whole command."""
    results = cache.scratch / "breakdown-results.json"
    run = profiled([*CLI, "grade", str(paths.SOLUTIONS), "--results", str(results)], cache)
    examples.append(examples_tried(results))
    score = json.loads(results.read_text())["score"]
    (grade,) = run.grades
    total = Profiled.total(grade)
    print(f"B1. where the CPU of `autograd-lab grade solutions --results FILE` goes (score {score:g}; CPU seconds but "
          "wall, waiting and trips)", flush=True)
    print_rows([(row["task"], row) for row in grade["rows"]] + [("grade", total)], BREAKDOWN)
    outside, cpu = run.outside(), run.cpu()
    print(f"  outside the grade (interpreter start, imports, pictures, output, exit): {outside:.2f} s of CPU")
    print(f"  the whole command: {run.wall:.2f} s wall, {cpu:.2f} s CPU, of which the student's code "
          f"{total['student']:.2f} s ({total['student'] / cpu:.1%}); not the student's: "
          f"{cpu - total['student']:.2f} s, {(cpu - total['student']) / max(total['student'], 1e-9):.0f}x the "
          "student's", flush=True)


def breakdown_class(cache: ExamplesCache, students: int, jobs: int,
                    examples: list[int]) -> tuple[list[Target], list[float]]:
    """A class graded with grade-all: each task's mean over the class, a submission's medians, and the second
    target: what is not the student's code costs at most what the student's code does (median over the class;
    each submission charged its share of what no grade holds: the judges' starts, the pool). Also the CPU seconds
    of each submission's own code, for ``breakdown_floor``."""
    class_dir = cache.scratch / "breakdown-class"
    kinds = bench_class.make_class(class_dir, students)
    with private_folder("agl-speed-gradebook-", cache.scratch) as out:
        run = profiled([*CLI, "grade-all", str(class_dir), "--out", str(out / "out"), "--jobs", str(jobs),
                        "--unkeyed"], cache)
        statuses = graded_class(out / "out", kinds, examples)
    n = len(run.grades)
    by_task: dict[str, dict] = {}
    for grade in run.grades:
        for row in grade["rows"]:
            into = by_task.setdefault(row["task"], dict.fromkeys(BREAKDOWN, 0.0))
            for name in BREAKDOWN:
                into[name] += row[name] / n
    totals = [Profiled.total(grade) for grade in run.grades]
    share = run.outside() / n
    ratios = [(t["overhead"] + share) / max(t["student"], 1e-9) for t in totals]
    median = {name: statistics.median(t[name] for t in totals) for name in BREAKDOWN}
    print(f"B2. where the CPU of `autograd-lab grade-all CLASS --jobs {jobs}` goes, {students} students ({n} grades; "
          f"statuses {', '.join(f'{k} {s}' for s, k in sorted(statuses.items()))}): each task's mean per "
          "submission, then a submission's medians", flush=True)
    print_rows([(task, row) for task, row in by_task.items()] +
               [("grade (mean)", {name: sum(row[name] for row in by_task.values()) for name in BREAKDOWN}),
                ("grade (median)", median)], BREAKDOWN)
    print(f"  outside the grades (the judges' starts and imports, fork servers' and helper's before a grade, the "
          f"pool, the gradebook): {run.outside():.1f} s of CPU, {share:.2f} s a submission")
    print(f"  the whole command: {run.wall:.1f} s wall, {run.cpu():.1f} s CPU ({run.cpu() / students:.2f} s a "
          f"submission); peak memory of the largest process (a judge): "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")
    ratio = statistics.median(ratios)
    print(f"  not the student's code / the student's code, per submission: median {ratio:.1f}x (p10 "
          f"{statistics.quantiles(ratios, n=10)[0]:.1f}x, p90 {statistics.quantiles(ratios, n=10)[-1]:.1f}x)",
          flush=True)
    return ([Target("not student / student CPU (class median)", f"{ratio:.1f}x", "a figure", None)],
            [t["student"] for t in totals])


def breakdown_floor(cache: ExamplesCache, repeats: int, students: int, jobs: int, own: list[float],
                    examples: list[int]) -> float:
    """The least a class could cost with every check, example and sandbox kept: what a grade costs when the student
    has written nothing (a class of as many stub submissions, where every task stops at its first request: the
    workers' sandboxes and starts, the judge's set-up, the gradebook; the machine's CPU, all of it), added to what
    the class's own code cost (``own``, B2's student column). Were the judge's checks and the workers' answers
    free, a class could cost no less. Returns that floor, the machine's CPU seconds a submission."""
    stubs = cache.scratch / f"stubs-{students}"
    kinds = {f"s{i:03d}_stubs": "stubs" for i in range(students)}
    if not stubs.exists():
        for name in kinds:
            bench_class.make_stubs(stubs / name)
    runs = grade_all_pairs(cache, repeats, (stubs, kinds), jobs, examples, "B3. the floor:")
    fixed, kernel = runs.per_submission()
    torch = statistics.median(t for t, _ in runs.pairs)
    mean, median = statistics.mean(own), statistics.median(own)
    floor = (fixed + mean) / torch
    below = sum(1 for seconds in own if seconds < fixed)
    print(f"B3. the floor: a grade that asks each task once costs the machine {fixed:.2f} s of CPU a submission "
          f"({kernel:.0%} in the kernel; {students} stub submissions)", flush=True)
    print(f"  the class's floor: that plus the class's own code (B2: mean {mean:.2f} s a submission) is "
          f"{fixed + mean:.2f} s a submission, {floor:.2f}x import torch ({torch:.2f} s) a core, with checks and "
          f"answers costing nothing; what is left for the checks at {FLOOR_RATIO:g}x the floor: "
          f"{(FLOOR_RATIO - 1) * (fixed + mean):.2f} s a submission", flush=True)
    print(f"  that fixed cost alone is {fixed / median:.1f}x the median submission's own code "
          f"({median:.2f} s); {below} of {len(own)} submissions' own code costs less than it", flush=True)
    return fixed + mean


def measure_grade(cache: ExamplesCache, repeats: int, examples: list[int]) -> list[Target]:
    """The grade target: the reference graded by the CLI, in units of `import torch`: plain `grade`, and
    `grade --results FILE`, which also writes results.json and draws loss.png beside it (CI's way)."""
    results = cache.scratch / "grade-results.json"
    targets = []
    for label, extra in (("grade / import torch", []),
                         ("grade --results / import torch", ["--results", str(results)])):
        def grade(extra=extra) -> float:
            results.unlink(missing_ok=True)
            with cache.run() as env:
                seconds = timed([*CLI, "grade", str(paths.SOLUTIONS), *extra], env=env)
            if results.exists():
                examples.append(examples_tried(results))
            return seconds

        print(f"grade: autograd-lab grade solutions/{' --results FILE' if extra else ''}, against import torch",
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
            examples.append(examples_tried(student_dir(out, row["student"]) / "results.json"))
    return Counter(row["status"].split(":")[0] for row in rows)


@dataclass
class ClassRuns:
    """``grade_all_pairs``'s pairs (import torch, grade-all) in seconds, how many submissions each run graded, and the
    machine's busy CPU seconds (all cores, the kernel's share) of each run, medians of which ``machine`` says."""
    pairs: list[tuple[float, float]]
    graded: int
    machine: list[tuple[float, float]]

    def per_submission(self) -> tuple[float, float]:
        """The median machine CPU seconds a submission, and the kernel's share of it."""
        busy = statistics.median(b for b, _ in self.machine)
        return busy / self.graded, statistics.median(k / b for b, k in self.machine)


def make_class(cache: ExamplesCache, students: int) -> tuple[Path, dict[str, str]]:
    """bench_class.py's class of ``students`` (made once a run), its folder and the kind of each submission."""
    class_dir = cache.scratch / f"class-{students}"
    if not class_dir.exists():
        cache.classes[students] = bench_class.make_class(class_dir, students)
    return class_dir, cache.classes[students]


def sample_class(cache: ExamplesCache, students: int, size: int) -> tuple[Path, dict[str, str]]:
    """A class of ``size`` drawn from the class of ``students`` as a stratified sample: of its correct, wrong and stub
    submissions, as many as their share, evenly spread over each kind (so its mistakes are the big class's, not the
    first ones of the corpus, which are among the slowest to grade): the small class the flat target compares."""
    big_dir, kinds = make_class(cache, students)
    groups: dict[str, list[str]] = {}
    for name in sorted(kinds):
        groups.setdefault(kinds[name].split(":")[0], []).append(name)
    picked = []
    for names in groups.values():
        want = max(1, round(size * len(names) / len(kinds)))
        picked += [names[i * len(names) // want] for i in range(want)]
    class_dir = cache.scratch / f"class-{size}-of-{students}"
    if not class_dir.exists():
        for name in picked:
            shutil.copytree(big_dir / name, class_dir / name)
    return class_dir, {name: kinds[name] for name in picked}


def grade_all_pairs(cache: ExamplesCache, repeats: int, made: tuple[Path, dict[str, str]], jobs: int,
                    examples: list[int], label: str, shard_of: tuple[int, int] | None = None) -> ClassRuns:
    """``repeats`` pairs (import torch, grade-all of the class ``made``, a folder and its kinds, or of its shard
    ``shard_of``: (index, count), ``--shard I/N``)."""
    class_dir, kinds = made
    students = len(kinds)
    shard = ["--shard", f"{shard_of[0]}/{shard_of[1]}"] if shard_of else []
    cores = min(jobs, os.cpu_count() or 1)
    statuses = Counter()
    machine: list[tuple[float, float]] = []  # each run's busy and kernel CPU seconds, all cores

    def grade_all() -> float:
        # A gradebook of its own each run: a second grade-all into the same one skips the unchanged submissions.
        with private_folder("agl-speed-gradebook-", cache.scratch) as out, cache.run() as env:
            busy, kernel = machine_cpu()
            seconds = timed([*CLI, "grade-all", str(class_dir), "--out", str(out / "out"), "--jobs", str(jobs),
                             "--unkeyed", *shard], env=env)
            after = machine_cpu()
            machine.append((after[0] - busy, after[1] - kernel))
            statuses.update(graded_class(out / "out", kinds, examples))
        return seconds

    graded = len(sorted(kinds)[shard_of[0] - 1::shard_of[1]]) if shard_of else students

    def show(torch: float, wall: float) -> str:
        busy, kernel = machine[-1]
        return (f"import torch {torch:5.2f} s   grade-all {wall:6.1f} s ({wall / graded:.2f} s a submission, "
                f"{graded / wall * 60:.1f} a minute)   ratio {class_ratio(torch, wall, graded, cores):5.2f}   "
                f"machine CPU {busy / graded:.2f} s a submission ({kernel / busy:.0%} in the kernel)")

    made = Counter(kind.split(":")[0] for kind in kinds.values())
    part = f" {' '.join(shard)} ({graded} of them)" if shard else ""
    print(f"{label} autograd-lab grade-all CLASS --jobs {jobs}{part}, {students} students "
          f"({', '.join(f'{n} {kind}' for kind, n in sorted(made.items()))}), {cores} cores used, "
          "against import torch", flush=True)
    done = pairs(lambda: timed(IMPORT_TORCH), grade_all, repeats, show)
    print(f"  statuses over all runs: {', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}")
    return ClassRuns(done, graded, machine)


def class_ratio(torch: float, wall: float, students: int, cores: int) -> float:
    """Seconds a submission x the cores grade-all used / `import torch`'s seconds."""
    return wall / students * cores / torch


def measure_class(cache: ExamplesCache, repeats: int, students: int, jobs: int, small: int,
                  examples: list[int], floor: float | None = None) -> list[Target]:
    """The class: grade-all of bench_class.py's class, the machine's CPU a submission against ``floor`` (from the
    breakdown's B3, where it ran: the class target), per submission per core in units of `import torch`, the
    submissions a minute scaled to a machine where `import torch` takes TORCH_SECONDS on 2 cores (figures); and the
    same ratio for a class of ``small`` students drawn from it (``sample_class``; 0: not measured), which a
    per-student cost that grows with the class would leave below the big class's."""
    cores = min(jobs, os.cpu_count() or 1)
    runs = grade_all_pairs(cache, repeats, make_class(cache, students), jobs, examples, "class:")
    done = runs.pairs
    median_ratio = statistics.median(class_ratio(torch, wall, students, cores) for torch, wall in done)
    per_minute = statistics.median(students / wall * 60 for _, wall in done)
    scaled = statistics.median(students / wall * 60 * torch / TORCH_SECONDS * cores / 2 for torch, wall in done)
    busy, kernel = runs.per_submission()
    print(f"  median: s/submission x {cores} cores / import torch {median_ratio:.2f}, {per_minute:.1f} submissions "
          f"a minute here, {scaled:.1f} scaled to 2 cores where import torch takes {TORCH_SECONDS:g} s "
          f"(import torch here: {statistics.median(t for t, _ in done):.2f} s); the machine's CPU {busy:.2f} s a "
          f"submission, {kernel:.0%} of it in the kernel", flush=True)
    targets = []
    if floor is not None:
        over = busy / floor
        print(f"  the class over its floor: {busy:.2f} s against {floor:.2f} s a submission, {over:.2f}x", flush=True)
        targets.append(Target("grade-all: the machine's CPU a submission / the class's floor", f"{over:.2f}x",
                              f"<= {FLOOR_RATIO:g}x", over <= FLOOR_RATIO))
    targets += [Target(f"grade-all s/submission x {cores} cores / import torch", f"{median_ratio:.2f}", "a figure",
                       None),
                Target(f"grade-all a minute (import torch {TORCH_SECONDS:g} s, 2 cores)", f"{scaled:.1f}", "a figure",
                       None)]
    if small:
        sampled = sample_class(cache, students, small)
        few = grade_all_pairs(cache, repeats, sampled, jobs, examples, "class:").pairs
        small = len(sampled[1])
        small_ratio = statistics.median(class_ratio(torch, wall, small, cores) for torch, wall in few)
        flat = median_ratio / small_ratio
        print(f"  median: {small} students {small_ratio:.2f}; {students} over {small}: {flat:.2f}", flush=True)
        targets.append(Target(f"grade-all flat: ratio at {students} / at {small} students", f"{flat:.2f}",
                              f"<= {FLAT:g}", flat <= FLAT))
    return targets


def measure_shard(cache: ExamplesCache, repeats: int, students: int, shards: int, jobs: int,
                  examples: list[int]) -> list[Target]:
    """One shard of a class of ``students`` split ``shards`` ways (``grade-all --shard 1/N``, as each task
    of the Slurm template's array runs it), in pairs with import torch: its seconds a submission in the class ratio's
    units, and what the whole class takes with its shards side by side (about one shard's wall, on N machines like
    this one). Its students are every N-th of the class: a sample of the same mix."""
    cores = min(jobs, os.cpu_count() or 1)
    runs = grade_all_pairs(cache, repeats, make_class(cache, students), jobs, examples, "shard:", shard_of=(1, shards))
    ratio = statistics.median(class_ratio(torch, wall, runs.graded, cores) for torch, wall in runs.pairs)
    wall = statistics.median(w for _, w in runs.pairs)
    busy, kernel = runs.per_submission()
    print(f"  median: a shard of {runs.graded} in {wall:.1f} s, s/submission x {cores} cores / import torch "
          f"{ratio:.2f}, the machine's CPU {busy:.2f} s a submission ({kernel:.0%} in the kernel); the class of "
          f"{students} on {shards} machines like this one at once: about {wall:.0f} s", flush=True)
    return [Target(f"grade-all --shard 1/{shards} of {students}: s/submission x {cores} cores / import torch",
                   f"{ratio:.2f}", "a figure", None)]


def measure_nbgrader(cache: ExamplesCache, repeats: int, examples: list[int]) -> list[Target]:
    """The nbgrader target: nbgrader's autograde of one student against the CLI's grade of the same files."""
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

    print("nbgrader: nbgrader autograde --student alice --force, against autograd-lab grade of the same files and "
          "nbgrader's own start (`import nbgrader.apps`, timed just before each autograde)", flush=True)
    done = pairs(autograde, grade, repeats,
                 lambda nb, cli: f"nbgrader autograde {nb:6.2f} s   autograd-lab grade {cli:6.2f} s   "
                                    f"import nbgrader.apps {own_import[-1]:5.2f} s   "
                                    f"beyond both {nb - cli - own_import[-1]:+5.2f} s")
    extra = statistics.median(nb - cli - start for (nb, cli), start in zip(done, own_import))
    print(f"  median: autograde {statistics.median(nb for nb, _ in done):.2f} s, "
          f"grade {statistics.median(cli for _, cli in done):.2f} s, import nbgrader.apps "
          f"{statistics.median(own_import):.2f} s; nbgrader adds {extra:+.2f} s beyond its own start", flush=True)
    return [Target("nbgrader autograde - grade - nbgrader's start", f"{extra:+.2f} s",
                   f"<= +{NBGRADER_EXTRA:g} s", extra <= NBGRADER_EXTRA)]


def examples_target(examples: list[int]) -> Target:
    """The examples target: the fewest Hypothesis examples any grade of a correct submission tried."""
    fewest = min(examples)
    return Target(f"Hypothesis examples per grade (fewest of {len(examples)})", f"{fewest:,}",
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
        verdict = "" if t.passed is None else "PASS" if t.passed else "FAIL"
        print(f"{t.label:<{width}}  {t.figure:>10}  {t.goal:<10}  {verdict}")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load()}; cores: {os.cpu_count()}")
    return all(t.passed is not False for t in targets)


def run(only: list[str], repeats: int, students: int, jobs: int, cold: bool, small: int,
        sharded: tuple[int, int] = (500, 8)) -> bool:
    """Measure the sub-benchmarks in ``only`` and print the report; whether every target passed."""
    load_before = load()
    print(f"speed: {', '.join(only)}; repeats {repeats}; cores {os.cpu_count()}; "
          f"load average {load_before}")
    print(f"{versions()}; commands: {CLI[0]}, {NBGRADER[0]}")
    examples: list[int] = []
    targets: list[Target] = []
    floor = None  # the class's floor, from the breakdown: the class target is held against it
    with private_folder("agl-speed-") as scratch:
        cache = ExamplesCache(scratch, cold)
        print(f"examples cache: {cache.warm_up(examples)}", flush=True)
        if "breakdown" in only:
            breakdown_reference(cache, examples)
            overhead, own = breakdown_class(cache, students, jobs, examples)
            targets += overhead
            floor = breakdown_floor(cache, repeats, students, jobs, own, examples)
        if "grade" in only:
            targets += measure_grade(cache, repeats, examples)
        if "class" in only:
            targets += measure_class(cache, repeats, students, jobs, small, examples, floor)
        if "shard" in only:
            targets += measure_shard(cache, repeats, *sharded, jobs, examples)
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
    parser.add_argument("--small", type=int, default=20,
                        help="the small class held against --students for flatness (default 20; 0: not measured)")
    parser.add_argument("--shard-class", type=int, default=500, metavar="STUDENTS",
                        help="the class the shard sub-benchmark splits (default 500)")
    parser.add_argument("--shards", type=int, default=8, help="how many shards it is split into (default 8)")
    parser.add_argument("--cold", action="store_true",
                        help="a fresh, empty examples cache for every timed run (default: warmed once)")
    args = parser.parse_args(argv)
    for name in ("repeats", "students", "jobs", "shard_class", "shards"):
        if getattr(args, name) < 1:
            parser.error(f"got --{name}={getattr(args, name)}, expected 1 or more")
    if args.small < 0:
        parser.error(f"got --small={args.small}, expected 0 or more")
    sys.exit(0 if run(args.only, args.repeats, args.students, args.jobs, args.cold, args.small,
                      (args.shard_class, args.shards)) else 1)


if __name__ == "__main__":
    main()
