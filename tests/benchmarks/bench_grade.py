"""How long grading one submission takes, and what isolation costs.

    python tests/benchmarks/bench_grade.py [--submission solutions] [--repeat 3]
                                           [--isolation compare|auto|bubblewrap|limits]

Prints, as medians over the repeats: seconds per submission for the CLI
(a fresh process: torch import included) under each isolation asked for
(``compare``, the default: bubblewrap, where it works, and process limits
alone), Hypothesis examples tried and examples per second, and the same checks
run by a plain in-process pytest run (no worker, no isolation). The added cost
of the sandbox is the difference between the bubblewrap and the limits rows.
Figures, not pass/fail: the machines are shared and noisy, so compare ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The console script beside this interpreter: never `python -m graders`, which refuses to run from the checkout.
AUTOGRAD_LAB = str(Path(sys.executable).with_name("autograd-lab"))

HERE = Path(__file__).resolve().parent


def timed(command: list[str], env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - start


def isolations(asked: str) -> list[str]:
    if asked != "compare":
        return [asked]
    from graders.isolation import sandbox

    return (["bubblewrap"] if sandbox.bubblewrap_works() else []) + ["limits"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission", default="solutions")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--isolation", default="compare", choices=("compare", "auto", "bubblewrap", "limits"))
    args = parser.parse_args(argv)

    rows, score, examples = {}, None, 0
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        for isolation in isolations(args.isolation):
            cli = [AUTOGRAD_LAB, "grade", args.submission, "--results", str(results),
                   "--isolation", isolation]
            rows[isolation] = statistics.median(timed(cli) for _ in range(args.repeat))
            score = json.loads(results.read_text())
            examples = score["extra_data"]["examples"]
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "inprocess_checks.py")]
    inp = statistics.median(timed(pytest_run, {"AUTOGRAD_LAB_SUBMISSION": args.submission})
                            for _ in range(args.repeat))

    print(f"submission: {args.submission}   score {score['score']:g}   "
          f"repeats: {args.repeat}   cores: {os.cpu_count()}")
    print(f"{'run':<46} {'s/submission':>12} {'examples/s':>11}")
    for isolation, seconds in rows.items():
        label = f"autograd-lab grade --isolation {isolation}"
        print(f"{label:<46} {seconds:>12.2f} {examples / seconds:>11.0f}")
    print(f"{'plain in-process pytest, same checks':<46} {inp:>12.2f} {examples / inp:>11.0f}")
    print(f"examples tried: {examples}")
    for isolation, seconds in rows.items():
        print(f"{isolation}: {seconds / inp:.2f}x the in-process run, {seconds - inp:+.2f} s per submission")
    if "bubblewrap" in rows and "limits" in rows:
        added = rows["bubblewrap"] - rows["limits"]
        print(f"the sandbox (bubblewrap over process limits alone) adds {added:+.2f} s per submission "
              f"({rows['bubblewrap'] / rows['limits']:.2f}x)")


if __name__ == "__main__":
    main()
