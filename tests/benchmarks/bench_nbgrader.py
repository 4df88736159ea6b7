"""What nbgrader's autograde costs per student, next to `autograd-lab grade` on the same files.

    python tests/benchmarks/bench_nbgrader.py [--repeat 3] [--class-size 4]

Builds the course (`autograd-lab nbgrader`), releases it, submits the reference solution as one student, and
then, ``--repeat`` times, runs `nbgrader autograde --student alice --force` and `autograd-lab grade` on the same
files, one right after the other (pairs in the same minute). Prints each pair, the medians, and the median of
the differences: what nbgrader adds per student (its own start, the sanitising, the kernel running the
notebook's cells, the jail) beyond the judge's grade. Then one `nbgrader autograde` of a class of
``--class-size`` copies of that student, as an instructor runs it, against as many `autograd-lab grade` runs:
nbgrader's own start (about 2.4 s of imports) and the judge's torch import are paid once there. Figures, not
pass/fail: the machines are shared and noisy.
Needs nbgrader (a dependency of the package) and a kernel that can import numpy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from test_nbgrader_course import ASSIGNMENT, jupyter_env, submission_files  # noqa: E402

from graders.integrations import nbgrader_course  # noqa: E402

# The console script beside this interpreter: never `python -m graders`, which refuses to run from the checkout.
AUTOGRAD_LAB = str(Path(sys.executable).with_name("autograd-lab"))


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    run = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode not in (0, 3):
        sys.exit(f"{' '.join(command)} exited {run.returncode}:\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}")
    return seconds


def course_with_alice(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """The course built and released in ``root``, with alice (the reference solution) submitted: the course
    folder, her submitted folder, and the environment that runs nbgrader with Jupyter's folders in ``root``."""
    env = jupyter_env(root)
    course = root / "course"
    nbgrader_course.build_course(course, ASSIGNMENT)
    timed([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT], course, env)
    folder = course / "submitted" / "alice" / ASSIGNMENT
    folder.mkdir(parents=True)
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    (folder / released.name).write_bytes(released.read_bytes())
    for name, text in submission_files("alice").items():
        (folder / name).write_text(text)
    return course, folder, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--class-size", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agl-bench-nbgrader-") as scratch:
        root = Path(scratch)
        course, folder, env = course_with_alice(root)
        pairs = []
        for index in range(args.repeat):
            nb = timed([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "alice", "--force"],
                       course, env)
            cli = timed([AUTOGRAD_LAB, "grade", str(folder)], root, env)
            pairs.append((nb, cli))
            print(f"run {index + 1}: nbgrader autograde {nb:5.1f} s   autograd-lab grade {cli:5.1f} s   "
                  f"difference {nb - cli:+5.1f} s", flush=True)
        nbs, clis = zip(*pairs)
        print(f"median: nbgrader autograde {statistics.median(nbs):.1f} s, autograd-lab grade "
              f"{statistics.median(clis):.1f} s, nbgrader adds {statistics.median(n - c for n, c in pairs):.1f} s "
              f"per student (load {os.getloadavg()[0]:.2f})", flush=True)
        students = [f"s{index:02d}" for index in range(args.class_size)]
        for student in students:
            copy = course / "submitted" / student / ASSIGNMENT
            copy.mkdir(parents=True)
            for path in folder.iterdir():
                (copy / path.name).write_bytes(path.read_bytes())
        whole = timed([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], course, env)
        graded = args.class_size + 1  # alice too
        clis_class = [timed([AUTOGRAD_LAB, "grade", str(course / "submitted" / s / ASSIGNMENT)],
                            root, env) for s in ["alice", *students]]
        print(f"a class of {graded}: one nbgrader autograde {whole:.1f} s ({whole / graded:.1f} s a student), "
              f"autograd-lab grade {sum(clis_class):.1f} s in all ({statistics.median(clis_class):.1f} s median): "
              f"nbgrader adds {(whole - sum(clis_class)) / graded:+.1f} s per student (load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    from test_nbgrader_course import clean_configs_removed  # what Jupyter leaves in /tmp

    with clean_configs_removed():
        main()
