"""How far each cost rung's verdict is from its limit: correct rules in several styles, and slow forgeries.

    python tests/benchmarks/cost_headroom.py [--repeat 3] [--key KEY] [--isolation auto|limits|bubblewrap]
                                             [--only NAME ...]

Each variant is the reference solution with one rule rewritten (a correct rule with a Python loop over one axis,
or a forgery: finite differences, a loop per entry, a baseline the worker slows down), and every op's rule written
as a Python loop over the elements (tests/corpus.py's PER_ELEMENT_LOOPS). It is graded ``--repeat`` times on its
task, with few Hypothesis examples (the cost rung is what is measured), and the figures each op's rung records
(``TaskResult.data["costs"]``: the worker's CPU seconds read by the judge, numpy's on the same inputs measured by
graders.judge.numpy_baseline, their ratio and the limit) are printed as medians, one row per op timed, with the
headroom: how many times the limit is above a passing rule's median ratio, or below a failing one's (a variant's
other ops, timed before the one it rewrites, pass). Figures, not a test: the machine is shared and noisy, and the
grades' verdicts are what tests/test_hostile.py and the corpora pin.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "tests"))

from corpus import PER_ELEMENT_LOOPS  # noqa: E402

from graders import ops  # noqa: E402
from graders.judge import examples_cache  # noqa: E402
from graders.judge.checks import base  # noqa: E402
from graders.judge.grade import PASSED, grade  # noqa: E402
from graders.paths import SOLUTIONS  # noqa: E402

MATMUL = "            return g @ w.T, x.T @ g\n"
TANH = "            return (g * (1.0 - out**2),)\n"
EXP = "            return (g * out,)\n"
SUM = "            return (np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape).copy(),)\n"
RESHAPE = "            return (g.reshape(old),)\n"
# name -> (task, expected verdict, [(find, replace)] in tensor.py, or appended text); the references first
VARIANTS = {
    "reference 1.1": ("1.1", "pass", []),
    **{f"reference {task}": (task, "pass", []) for task in dict.fromkeys(ops.task_of(op) for op in ops.OPS)},
    "unbroadcast, a loop over the axes (kahn style)": ("1.1", "pass", [(
        "    while grad.ndim > len(shape):\n        grad = grad.sum(axis=0)\n",
        "    for _ in range(grad.ndim - len(shape)):\n        grad = grad.sum(axis=0)\n")]),
    "@, a loop over the rows (outer products)": ("1.4", "pass", [(MATMUL, """\
            dx, dw = np.empty_like(x), np.zeros_like(w)
            for i in range(x.shape[0]):
                dx[i] = g[i] @ w.T
                dw += np.outer(x[i], g[i])
            return dx, dw
""")]),
    "@, a loop over the rows and one over the columns": ("1.4", "pass", [(MATMUL, """\
            dx, dw = np.empty_like(x), np.empty_like(w)
            for i in range(x.shape[0]):
                dx[i] = g[i] @ w.T
            for j in range(w.shape[1]):
                dw[:, j] = x.T @ g[:, j]
            return dx, dw
""")]),
    "tanh, a loop over the rows": ("1.6", "pass", [(TANH, """\
            d = np.empty_like(g)
            for i in range(g.shape[0] if g.ndim else 0):
                d[i] = g[i] * (1.0 - out[i] ** 2)
            return (d,) if g.ndim else (g * (1.0 - out**2),)
""")]),
    "exp, a loop over the rows": ("1.5", "pass", [(EXP, """\
            d = np.empty_like(g)
            for i in range(g.shape[0] if g.ndim else 0):
                d[i] = g[i] * out[i]
            return (d,) if g.ndim else (g * out,)
""")]),
    "sum, a loop over the rows": ("1.7", "pass", [(SUM, """\
            full = _keep_reduced_axes(g, shape, axis, keepdims)
            d = np.empty(shape)
            for i in range(shape[0] if shape else 0):
                d[i] = full[i if full.shape[0] > 1 else 0]
            return (d,) if shape else (np.broadcast_to(full, shape).copy(),)
""")]),
    "exp, a loop over the elements": ("1.5", "fail", [(EXP, """\
            d = np.empty_like(g)
            for i in np.ndindex(*g.shape):
                d[i] = g[i] * out[i]
            return (d,)
""")]),
    "sum, a loop over the elements": ("1.7", "fail", [(SUM, """\
            full = np.broadcast_to(_keep_reduced_axes(g, shape, axis, keepdims), shape)
            d = np.empty(shape)
            for i in np.ndindex(*shape):
                d[i] = full[i]
            return (d,)
""")]),
    "reshape, a loop over the elements": ("1.8", "fail", [(RESHAPE, """\
            d, flat = np.empty(old), g.reshape(-1)
            for n, i in enumerate(np.ndindex(*old)):
                d[i] = flat[n]
            return (d,)
""")]),
    "unbroadcast by finite differences of np.broadcast_to": ("1.1", "fail", [(
        "    grad = np.asarray(grad, dtype=np.float64)\n    while grad.ndim > len(shape):", """\
    grad = np.asarray(grad, dtype=np.float64)
    out = np.zeros(shape)
    for i in np.ndindex(*shape):
        unit = np.zeros(shape)
        unit[i] = 1.0
        out[i] = np.sum(grad * np.broadcast_to(unit, grad.shape))
    return out
    while grad.ndim > len(shape):""")]),
    "unbroadcast, a loop over the elements": ("1.1", "fail", [(
        "    grad = np.asarray(grad, dtype=np.float64)\n    while grad.ndim > len(shape):", """\
    grad = np.asarray(grad, dtype=np.float64)
    lead = grad.ndim - len(shape)
    out = np.zeros(shape)
    for i in np.ndindex(*grad.shape):
        out[tuple(0 if n == 1 else k for k, n in zip(i[lead:], shape))] += grad[i]
    return out
    while grad.ndim > len(shape):""")]),
    "@, a loop per entry (dot products)": ("1.4", "fail", [(MATMUL, """\
            dx, dw = np.empty_like(x), np.empty_like(w)
            for i, k in np.ndindex(*x.shape):
                dx[i, k] = g[i] @ w[k]
            for k, j in np.ndindex(*w.shape):
                dw[k, j] = x[:, k] @ g[:, j]
            return dx, dw
""")]),
    "tanh, a loop over the elements": ("1.6", "fail", [(TANH, """\
            d = np.empty_like(g)
            for i in np.ndindex(*g.shape):
                d[i] = g[i] * (1.0 - out[i] ** 2)
            return (d,)
""")]),
    **{f"corpus {entry.name}": (entry.loses[0], "fail", [(entry.find, entry.replace)]) for entry in PER_ELEMENT_LOOPS},
}


def submission(into: Path, patches: list) -> Path:
    into.mkdir(parents=True)
    for path in SOLUTIONS.glob("*.py"):
        shutil.copy(path, into / path.name)
    text = (into / "tensor.py").read_text()
    for find, replace in patches:
        assert text.count(find) == 1, find
        text = text.replace(find, replace)
    (into / "tensor.py").write_text(text)
    return into


def few_examples(examples: int = 4) -> None:
    """Few Hypothesis examples per property, kept nowhere: the cost rung is what is measured."""
    run = base.Context._run
    base.Context._run = lambda ctx, strategy, body, n: run(ctx, strategy, body, min(n, examples))
    import os
    os.environ[examples_cache.CACHE_ENV] = "off"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--key", type=int, default=None)
    parser.add_argument("--isolation", default="auto")
    parser.add_argument("--only", nargs="*", help="variants whose name holds one of these")
    args = parser.parse_args()
    few_examples()
    print(f"{'variant':48} {'want':4} {'op':11} {'CPU s':>7} {'numpy s':>8} {'ratio':>7} {'limit':>6} "
          f"{'headroom':>14}  verdicts")
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, (task, want, patches)) in enumerate(VARIANTS.items()):
            if args.only and not any(part in name for part in args.only):
                continue
            folder = submission(Path(tmp) / str(number), patches)
            figures, verdicts = {}, []
            for _ in range(args.repeat):
                result = grade(folder, key=args.key, task_ids=(task,), isolation=args.isolation).results[0]
                verdicts.append("pass" if result.status == PASSED else
                                "slow" if "too slow" in result.message else
                                "timeout" if "did not finish" in result.message else "fail")
                costs = result.data.get("costs") or ({"unbroadcast": result.data["cost"]} if "cost" in result.data
                                                     else {})
                for op, cost in costs.items():
                    figures.setdefault(op, []).append(cost)
            if not figures:  # every grade stopped before a figure: timed out, or failed before its rung
                print(f"{name[:48]:48} {want:4} {'-':11} {'':7} {'':8} {'':7} {'':6} {'no figure':>14}  "
                      f"{' '.join(verdicts)}", flush=True)
            for op, costs in figures.items():
                ratio = statistics.median(c["ratio"] for c in costs)
                spent, numpy = (statistics.median(c[key] for c in costs) for key in ("seconds", "numpy_seconds"))
                limit = costs[-1]["limit"]
                headroom = f"{limit / ratio:.1f} x under" if ratio <= limit else f"{ratio / limit:.1f} x over"
                print(f"{name[:48]:48} {want:4} {op:11} {spent:7.4f} {numpy:8.5f} {ratio:7.1f} {limit:6.0f} "
                      f"{headroom:>14}  {' '.join(verdicts)}", flush=True)

if __name__ == "__main__":
    main()
