"""How fast a class is graded: grade-all on a class drawn from the tests' corpus, and nbgrader for comparison.

    python tests/benchmarks/bench_class.py [--students 100] [--jobs 2] [--nbgrader 0] [--keep DIR]

The class cycles through the corpus: 30% correct (solutions/ and the styles of
tests/corpus_correct/), 55% known-wrong (tests/corpus.py), 15% stubs. It is
graded by ``autograd-lab grade-all --jobs N`` in a fresh process; the script
prints submissions per minute, the median seconds per submission (grades.csv's
seconds column: one judge's wall time on one submission), the peak memory of
the largest single process (getrusage of the children) and of the whole process
tree (sampled from /proc every half second). With ``--nbgrader K`` and the
nbgrader course builder present (graders/integrations/nbgrader_course.py), the first K
students are also autograded by ``nbgrader autograde`` for comparison.
Figures, not pass/fail: the machines are shared and noisy.
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
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))

from corpus import WRONG, make_submission  # noqa: E402

from graders import paths  # noqa: E402
from graders.course import build  # noqa: E402
from graders.isolation.processes import descendants  # noqa: E402

# The console script beside this interpreter: never `python -m graders`, which refuses to run from the checkout.
AUTOGRAD_LAB = str(Path(sys.executable).with_name("autograd-lab"))

ASSIGNMENT = "autograd_lab"


def make_class(folder: Path, students: int) -> dict[str, str]:
    """``students`` submissions in ``folder``; the kind of each (correct, wrong:<name>, stubs)."""
    styles = [None] + sorted(p for p in (TESTS / "corpus_correct").iterdir() if (p / "STYLE.txt").exists())
    kinds = {}
    for i in range(students):
        share = i % 20
        if share < 6:
            style = styles[(i // 20 * 6 + share) % len(styles)]
            name = f"s{i:03d}_correct_{style.name if style else 'reference'}"
            make_submission(folder, name, [])
            if style is not None:  # a style rewrites some modules; the rest stay the reference's
                for source in style.glob("*.py"):
                    shutil.copyfile(source, folder / name / source.name)
            kinds[name] = "correct"
        elif share < 17:
            entry = WRONG[(i // 20 * 11 + share - 6) % len(WRONG)]
            name = f"s{i:03d}_wrong_{entry.name}"
            make_submission(folder, name, [entry])
            kinds[name] = f"wrong:{entry.name}"
        else:
            name = f"s{i:03d}_stubs"
            make_stubs(folder / name)
            kinds[name] = "stubs"
    return kinds


def make_stubs(folder: Path) -> None:
    """A submission of the exercises' stubs, as a student who has done nothing hands them in."""
    folder.mkdir(parents=True)
    for file, text in build.expected_exercises(paths.SOLUTIONS).items():
        (folder / file).write_text(text)


class TreeMemory:
    """The peak of the summed resident memory of a process and its descendants, sampled."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.running = pid, 0, True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while self.running:
            tree = {self.pid, *descendants(self.pid)}
            total = 0
            for pid in tree:
                try:
                    with open(f"/proc/{pid}/statm") as f:
                        total += int(f.read().split()[1]) * page
                except (OSError, ValueError, IndexError):
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.5)

    def stop(self) -> int:
        self.running = False
        self.thread.join()
        return self.peak


def grade_all(class_dir: Path, out: Path, jobs: int) -> dict:
    # --unkeyed: one shared key, so that the figures stay comparable across runs (a course file's keys,
    # one per student, draw each student's inputs on their first grade: docs/design.md's Scale)
    command = [AUTOGRAD_LAB, "grade-all", str(class_dir), "--out", str(out), "--jobs", str(jobs), "--unkeyed"]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    memory = TreeMemory(process.pid)
    process.wait()
    wall = time.perf_counter() - start
    tree_peak = memory.stop()
    if process.returncode != 0:
        raise SystemExit(f"grade-all exited {process.returncode}")
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    seconds = [float(r["seconds"]) for r in rows]
    return {"wall": wall, "rows": rows, "median": statistics.median(seconds), "max": max(seconds),
            "largest_process": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, "tree": tree_peak}


def nbgrader_autograde(class_dir: Path, students: list[str], root: Path) -> float | None:
    """Seconds for ``nbgrader autograde`` of ``students``, or None when the course builder is missing."""
    try:
        from graders.integrations import nbgrader_course
    except ImportError:
        return None
    course = root / "course"
    nbgrader_course.build_course(course, ASSIGNMENT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env.update(JUPYTER_PATH=str(root / "jupyter-path"), JUPYTER_DATA_DIR=str(root / "jupyter-data"),
               JUPYTER_RUNTIME_DIR=str(root / "jupyter-runtime"), IPYTHONDIR=str(root / "ipython"),
               JUPYTER_NO_CONFIG="1")
    kernel = root / "jupyter-path" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))

    def nbgrader(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    nbgrader("generate_assignment", ASSIGNMENT)
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    for student in students:
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copyfile(released, folder / released.name)
        for source in (class_dir / student).glob("*.py"):
            shutil.copyfile(source, folder / source.name)
    start = time.perf_counter()
    nbgrader("autograde", ASSIGNMENT)
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--nbgrader", type=int, default=0, metavar="K",
                        help="also autograde the first K students with nbgrader (slow: 0 skips it)")
    parser.add_argument("--keep", type=Path, help="keep the class and the gradebook in this folder")
    args = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="agl-bench-")) if args.keep is None else args.keep
    try:
        kinds = make_class(root / "class", args.students)
        figures = grade_all(root / "class", root / "out", args.jobs)
        count = {kind: sum(k.split(":")[0] == kind for k in kinds.values()) for kind in ("correct", "wrong", "stubs")}
        statuses = {}
        for row in figures["rows"]:
            statuses[row["status"].split(":")[0]] = statuses.get(row["status"].split(":")[0], 0) + 1
        print(f"class: {args.students} submissions ({count['correct']} correct, {count['wrong']} known-wrong, "
              f"{count['stubs']} stubs); grade-all --jobs {args.jobs}; cores: {os.cpu_count()}")
        print(f"statuses: {', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}")
        print(f"{'wall time':<34} {figures['wall']:>8.0f} s")
        print(f"{'submissions per minute':<34} {args.students / figures['wall'] * 60:>8.1f}")
        print(f"{'seconds per submission (median)':<34} {figures['median']:>8.1f} s   (max {figures['max']:.1f} s)")
        print(f"{'peak memory, largest process':<34} {figures['largest_process'] / 2**20:>8.0f} MiB")
        print(f"{'peak memory, whole process tree':<34} {figures['tree'] / 2**20:>8.0f} MiB")
        if args.nbgrader:
            chosen = sorted(kinds)[:args.nbgrader]
            seconds = nbgrader_autograde(root / "class", chosen, root / "nbgrader")
            if seconds is None:
                print("nbgrader: skipped (graders/integrations/nbgrader_course.py is missing)")
            else:
                ours = statistics.mean(float(r["seconds"]) for r in figures["rows"] if r["student"] in chosen)
                print(f"nbgrader autograde, {len(chosen)} students (one at a time): {seconds:.0f} s, "
                      f"{len(chosen) / seconds * 60:.1f} per minute, {seconds / len(chosen):.1f} s each "
                      f"(grade-all's judge on the same students: {ours:.1f} s each)")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
