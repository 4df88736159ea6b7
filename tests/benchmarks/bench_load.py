"""The grade's wall time on a busy machine: the reference and the stubs graded at 1x, 2x and 4x load.

    python tests/benchmarks/bench_load.py [--repeat 3] [--loads 1,2,4] [--isolation auto]

At N x load, N - 1 busy loops run on every core beside the grade, each in a session of its own and at the
grade's own priority (as other users' jobs do), so that the grade's processes get about 1/N of a core. Each grade
is `autograd-lab grade FOLDER --results FILE` in a fresh process, with a private examples cache warmed by one
grade first (as every grade of a class after the first). Prints, per submission and load, the median wall
seconds over the repeats and their ratio to 1x, the median CPU seconds of the grade's processes (the judge and
the workers it reaped, from the kernel), and whether every results.json is byte for byte the one at 1x: every
limit that decides a verdict counts CPU time, so the load moves wall time only. Figures, not pass/fail: a shared
machine adds its own load to the one made here.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The console script beside this interpreter: never `python -m graders`, which refuses to run from the checkout.
AUTOGRAD_LAB = str(Path(sys.executable).with_name("autograd-lab"))
REPO = Path(__file__).resolve().parents[2]
SUBMISSIONS = (("reference", "solutions"), ("stubs", "exercises"))


def busy_loops(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(count)]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def graded(folder: Path, results: Path, isolation: str, env: dict) -> tuple[float, float, bytes]:
    """One grade in a fresh process: its wall seconds, its CPU seconds, its results.json."""
    cpu, start = children_cpu(), time.perf_counter()
    subprocess.run([AUTOGRAD_LAB, "grade", str(folder), "--results", str(results), "--isolation", isolation],
                   cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start, children_cpu() - cpu, results.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loads", default="1,2,4", help="the loads, as multiples of the cores (default: 1,2,4)")
    parser.add_argument("--isolation", default="auto", choices=("auto", "bubblewrap", "limits"))
    args = parser.parse_args()
    loads = [int(n) for n in args.loads.split(",")]
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} core(s), load average {os.getloadavg()[0]:.1f} before the run; isolation {args.isolation}; "
          f"medians of {args.repeat}")
    with tempfile.TemporaryDirectory(prefix="agl-load-") as tmp:
        env = {**os.environ, "AUTOGRAD_LAB_CACHE": str(Path(tmp) / "cache")}
        rows = []
        for name, source in SUBMISSIONS:
            folder = Path(tmp) / name
            shutil.copytree(REPO / source, folder, ignore=shutil.ignore_patterns("__pycache__", "tests"))
            _, _, quiet = graded(folder, Path(tmp) / f"{name}.json", args.isolation, env)  # draws the cache
            base = None
            for load in loads:
                loops = busy_loops((load - 1) * cores)
                try:
                    runs = [graded(folder, Path(tmp) / f"{name}.json", args.isolation, env)
                            for _ in range(args.repeat)]
                finally:
                    for loop in loops:
                        loop.kill()
                        loop.wait()
                wall = statistics.median(run[0] for run in runs)
                cpu = statistics.median(run[1] for run in runs)
                base = base or wall
                same = sum(run[2] == quiet for run in runs)
                rows.append(f"{name:<10} {load}x  {wall:7.1f} s wall  {wall / base:5.2f} x   {cpu:6.1f} s CPU   "
                            f"results.json as at 1x: {same}/{len(runs)}")
                print(rows[-1], flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} after the run")


if __name__ == "__main__":
    main()
