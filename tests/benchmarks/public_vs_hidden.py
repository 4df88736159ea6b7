"""What a green `pytest exercises/` is worth: every known mistake, graded in secret and run through the public tests.

    python tests/benchmarks/public_vs_hidden.py [--python PATH] [--jobs 2] [--markdown FILE]

Each known-wrong submission of the package's tests (tests/corpus.py, the optim and data mistakes of
tests/test_checks_optim_data.py, the loop mistakes of tests/test_checks_loop.py) and the mistakes of the last
student trial are laid out as a student's `exercises/` folder (the submission's modules beside the bundle's
public tests, conftest.py and pytest.ini) and run through `python -m pytest exercises/` with the interpreter
``--python`` (default: this one; give a student's venv without torch to see what such a student sees). For each it
prints the tasks the hidden graders take away (from the corpus's own record, which the package's tests hold) and
what the public run said: the first public test that failed, or "green" with the line the run ends on, which
tells the student what the graded run checks beyond the examples. A table of figures, not a test.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from graders import paths  # noqa: E402

FOOTER = "These tests are worked examples."
PUBLIC_TIMEOUT = 600  # seconds one public run may take (the whole public suite takes about a minute)

# The student trial's mistakes that no test module holds as a patch of its own (file, find, replace, loses).
LOOP_MATMUL = """\
            dx, dw = np.zeros_like(x), np.zeros_like(w)
            for i in range(x.shape[0]):
                for j in range(w.shape[1]):
                    for k in range(x.shape[1]):
                        dx[i, k] += g[i, j] * w[k, j]
                        dw[k, j] += g[i, j] * x[i, k]
            return dx, dw
"""
IMPORTS_TORCH = ("import numpy as np\n", "import numpy as np\nimport torch  # noqa: F401\n")
TRAIN_ONCE = ("    for _ in range(epochs):\n        model.train()", "    model.train()\n    for _ in range(epochs):")
TRIAL = (
    ("trial: import torch in tensor.py", "tensor.py", (IMPORTS_TORCH,), "1.1-2.4 (every task of the file)"),
    ("trial: a Python-loop @ rule", "tensor.py", (("            return g @ w.T, x.T @ g\n", LOOP_MATMUL),), "1.4"),
    ("trial: fit_torch calls model.train() once", "torch_loop.py", (TRAIN_ONCE,), "6.1"),
)
# The trial's mistakes that an optim entry holds already: the trial's name -> that entry's.
TRIAL_AS_OPTIM = {"trial: momentum before weight decay": "weight decay after momentum",
                  "trial: Adam's eps inside the square root": "Adam eps inside the square root"}


@dataclass(frozen=True)
class Mistake:
    name: str
    file: str
    patches: tuple[tuple[str, str], ...]
    loses: str  # the tasks the hidden graders take away, as the corpus records them


def mistakes() -> list[Mistake]:
    """Every known mistake, from the modules that hold them (imported, so this table never drifts from them)."""
    from tests import corpus, test_checks_loop, test_checks_optim_data

    found = [Mistake(w.name, w.file, ((w.find, w.replace),), ", ".join(w.loses)) for w in corpus.WRONG]
    optim_data = test_checks_optim_data.WRONG + test_checks_optim_data.MORE_WRONG
    found += [Mistake(w.name, w.file, w.patches, ", ".join(w.loses)) for w in optim_data]
    found += [Mistake(name, "train.py", tuple(patches), task)
              for name, (task, patches, _) in test_checks_loop.SLOW_TRAIN_CASES.items()]
    found += [Mistake(name, "torch_loop.py", (patch,), "6.1")
              for name, (patch, _) in test_checks_loop.TORCH_MISTAKES.items()]
    found += [Mistake(*entry) for entry in TRIAL]
    by_name = {w.name: w for w in optim_data}
    found += [Mistake(trial, by_name[name].file, by_name[name].patches, ", ".join(by_name[name].loses))
              for trial, name in TRIAL_AS_OPTIM.items()]
    return found


def lay_out(mistake: Mistake, parent: Path) -> Path:
    """``parent/exercises``: the solutions with the mistake's patches, beside the bundle's public tests."""
    from tests.test_student_view import lay_out_as_student

    modules = {path.name: path.read_text() for path in paths.SOLUTIONS.glob("*.py")}
    text = modules[mistake.file]
    for find, replace in mistake.patches:
        assert text.count(find) == 1, f"{mistake.name}: {find!r} is not in {mistake.file} exactly once"
        text = text.replace(find, replace)
    return lay_out_as_student(parent, {**modules, mistake.file: text})


def public_run(mistake: Mistake, python: str) -> tuple[str, str, float]:
    """(what the public run said, its final counts, seconds) for one mistake."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd = lay_out(mistake, Path(tmp))
        start = time.perf_counter()
        try:
            result = subprocess.run([python, "-m", "pytest", "exercises/", "-q", "-p", "no:cacheprovider", "-rf"],
                                    cwd=cwd, capture_output=True, text=True, timeout=PUBLIC_TIMEOUT,
                                    env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"})
        except subprocess.TimeoutExpired:  # a mistake that hangs the public run: what a student sees too
            return f"hung: no end after {PUBLIC_TIMEOUT} s", "timed out", time.perf_counter() - start
        seconds = time.perf_counter() - start
    output = result.stdout + result.stderr
    counts = output.strip().splitlines()[-1].strip("= ") if output.strip() else "no output"
    failed = re.findall(r"^FAILED exercises/tests/(\S+?)(?: - |$)", output, flags=re.M)
    if failed:
        said = f"fails {failed[0]}" + (f" (+{len(failed) - 1} more)" if len(failed) > 1 else "")
    elif result.returncode == 0:
        said = "green; the run ends: " + next((line for line in output.splitlines() if line.startswith(FOOTER)),
                                              "(no line on the graded run)")[:60] + "..."
    else:
        said = f"exit {result.returncode}: " + counts
    return said, counts, seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the public tests")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    torch_there = subprocess.run([args.python, "-c", "import torch"], capture_output=True).returncode == 0
    entries = mistakes()
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(lambda m: public_run(m, args.python), entries))
    rows = ["| mistake | file | hidden graders take | public run |", "| --- | --- | --- | --- |"]
    rows += [f"| {m.name} | {m.file} | {m.loses} | {said} |" for m, (said, _, _) in zip(entries, runs)]
    green = [m.name for m, (said, _, _) in zip(entries, runs) if said.startswith("green")]
    seconds = sorted(s for _, _, s in runs)
    summary = (f"{len(entries)} known mistakes, public tests run by {args.python} (torch "
               f"{'installed' if torch_there else 'not installed'}): {len(entries) - len(green)} fail a public test, "
               f"{len(green)} stay green: {', '.join(green) or 'none'}. "
               f"Median public run {seconds[len(seconds) // 2]:.1f} s.")
    text = "\n".join(rows) + "\n\n" + summary + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
