"""How much a classmate's CPU-burning submission slows the grading of the reference beside it.

    python tests/benchmarks/bench_fairness.py [--repeat 3] [--children 40]

Grades the reference alone, then at the same time as a submission whose unbroadcast starts ``--children``
busy processes for 8 s, each in a session of its own (until the request's CPU limit stops them), and prints the
reference's seconds, as medians over the repeats, and their ratio. Where budgets hold (``autograd-lab
doctor``: a cgroup per grade, one CPU share each), the burner's children share one grade's share of the CPU,
however many they are. Figures, not pass/fail: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
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
BURNER = '''

def unbroadcast(grad, shape):
    import os, time
    children = []
    for _ in range(@CHILDREN@):
        pid = os.fork()
        if pid == 0:
            os.setsid()  # a session of its own: the scheduler's autogroups would otherwise share it with the worker
            end = time.monotonic() + 8.0
            while time.monotonic() < end:
                pass
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    raise RuntimeError("burnt")
'''


def grade(folder: Path, tasks: str | None = None) -> subprocess.Popen:
    command = [AUTOGRAD_LAB, "grade", str(folder)] + (["--tasks", tasks] if tasks else [])
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed(process: subprocess.Popen) -> float:
    start = time.perf_counter()
    process.wait()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--children", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agl-fair-") as tmp:
        reference, burner = Path(tmp) / "reference", Path(tmp) / "burner"
        shutil.copytree(REPO / "solutions", reference, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "exercises", burner, ignore=shutil.ignore_patterns("__pycache__", "tests"))
        (burner / "tensor.py").write_text((burner / "tensor.py").read_text()
                                          + BURNER.replace("@CHILDREN@", str(args.children)))
        alone, beside = [], []
        for _ in range(args.repeat):
            alone.append(timed(grade(reference)))
            other = grade(burner, tasks="1.1")
            time.sleep(2.0)  # the burner's children are running by now
            beside.append(timed(grade(reference)))
            other.wait()
    a, b = statistics.median(alone), statistics.median(beside)
    print(f"reference alone:                       {a:6.1f} s  (median of {args.repeat})")
    print(f"beside {args.children} busy children of a classmate:  {b:6.1f} s  ({b / a:.2f} x)")


if __name__ == "__main__":
    main()
