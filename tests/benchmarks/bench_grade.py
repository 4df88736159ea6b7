"""How long grading one submission takes, and what isolation costs.

    python tests/benchmarks/bench_grade.py [--submission solutions] [--repeat 3]

Prints, as medians over the repeats: seconds per submission for the CLI
(a fresh process: torch import included), Hypothesis examples tried and
examples per second, and the same checks run by a plain in-process pytest
run (no worker, no isolation). Figures, not pass/fail: the machines are
shared and noisy, so compare ratios.
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

HERE = Path(__file__).resolve().parent


def timed(command: list[str], env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission", default="solutions")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        cli = [sys.executable, "-m", "graders", "grade", args.submission, "--results", str(results)]
        isolated = [timed(cli) for _ in range(args.repeat)]
        score = json.loads(results.read_text())
    examples = score["extra_data"]["examples"]
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "inprocess_checks.py")]
    in_process = [timed(pytest_run, {"AUTOGRAD_LAB_SUBMISSION": args.submission}) for _ in range(args.repeat)]

    iso, inp = statistics.median(isolated), statistics.median(in_process)
    print(f"submission: {args.submission}   score {score['score']:g}   "
          f"repeats: {args.repeat}   cores: {os.cpu_count()}")
    print(f"{'run':<38} {'s/submission':>12} {'examples/s':>11}")
    print(f"{'autograd-lab grade (judge + worker)':<38} {iso:>12.2f} {examples / iso:>11.0f}")
    print(f"{'plain in-process pytest, same checks':<38} {inp:>12.2f} {examples / inp:>11.0f}")
    print(f"examples tried: {examples}; isolation costs {iso / inp:.2f}x the in-process run")


if __name__ == "__main__":
    main()
