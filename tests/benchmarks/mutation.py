"""Mutation testing of the graders: how many small bugs planted in solutions/ do they catch?

    python tests/benchmarks/mutation.py [--families classic,extended] [--seed 0] [--count 480]
                                        [--files tensor.py,optim.py] [--ids ID,ID] [--jobs N]
                                        [--json PATH] [--list]
    tox -e mutation -- --count 40 --jobs 2

Each mutant is the reference solution with one small change inside one graded
body (between ``### BEGIN SOLUTION`` and ``### END SOLUTION``; nothing else of
the file changes, byte for byte). The changes come in two families, picked with
``--families`` (default both); tests/benchmarks/mutants.py finds them.

``classic``: an operator swapped (+ -, * /, ** to *, // to /), a comparison
swapped (< <=, > >=, == !=, is / is not, in / not in), and / or swapped, a
constant changed (True False; 0 to 1, 1 to 0 or 2, n to n + 1, so axis=0 and
keepdims=True are covered), a unary minus or ``not`` dropped, a unary minus
added to an operand of arithmetic, ``x += y`` turned into ``x = y`` or
``x -= y``, a statement replaced by ``pass`` (never the only one of a body),
two adjacent positional arguments swapped, a slice bound dropped or moved by
one, ``return x`` made ``return None`` (not in generators), ``range(a)`` made
``range(a - 1)`` or ``range(1, a)`` (``range(a, b)``: a + 1 or b - 1),
``break`` and ``continue`` swapped.

``extended``: a call swapped for a sibling (``call-``: np.sum mean, prod to
sum, max min, amax amin, maximum minimum, argmax argmin, any all, std var,
zeros_like ones_like, zeros ones, exp log, sqrt square, floor ceil; the same
as methods, x.sum() x.mean() ...; the builtins min max, any all); a
reduction's ``axis=`` or ``keepdims=`` dropped, or ``axis=0`` and
``keepdims=True`` added where absent (``axis-``, ``keepdims-``); ``.grad`` and
``.data`` swapped, read or written, and ``.T`` dropped (``attr-``); a copy or
conversion dropped, leaving its operand (``copy-drop``: x.copy(), np.copy(x);
``array-drop``, ``asarray-drop``: np.array(x, ...), np.asarray(x, ...);
``astype-drop``, ``item-drop``, ``tolist-drop``; ``cast-float-drop``,
``cast-int-drop``: float(x), int(x)) and np.array made np.asarray
(``array-asarray``); np.float64 made np.float32 and a ``dtype=`` dropped
(``dtype-``); a loop's or comprehension's iterable reversed (``loop-reverse``:
``reversed(list(it))``, ``reversed(range(...))``), reversed() and sorted()
dropped; a generator's seed dropped or moved by one (``rng-unseeded``,
``rng-reseed``: default_rng(seed)), ``rng.permutation(n)`` made
``np.arange(n)`` (``permutation-arange``), a generator ``rng`` (or ``x.rng``,
``*_rng``) used as ``rng.f(...)`` replaced by ``np.random.default_rng()`` or
by ``np.random.default_rng(0)`` drawn anew at each use (``rng-fresh``,
``rng-fixed``); a local name read replaced by another local name (a
parameter, variable, closure variable or comprehension variable, never
``self``, a function or the function called) that the same statement reads or
writes and that is bound on an earlier line (``var-old-new``); the condition
of an if, a while, a conditional expression or a comprehension's filter
negated (``if-negate``, ``while-negate``, ``ifexp-negate``,
``filter-negate``; one already negated is left to not-drop); a try replaced
by its body, else and finally blocks (``try-unwrap``: the handlers gone, the
finally run only on success) and a with by its body (``with-unwrap``:
``target = expr`` kept for each ``as``, the context never entered).

Mutants that do not compile, do not change the AST, or repeat another's
source are left out; the classic family is found first, so its mutants and ids
do not depend on the extended one.

From all those candidates a deterministic sample of ``--count`` (default 480)
is drawn with ``--seed`` (default 0), spread over the families and files in
proportion to their candidates (``--ids`` grades the mutants named instead,
e.g. to check a fix). Each mutant is graded on its own file's tasks only, as a
submission holding every solutions/*.py with the one file mutated. It is
*killed* when any of those tasks does not pass (a skipped task, such as 6.2
without CUDA, is ignored) and *survives* when all pass. A grader error also
kills it, but is listed apart: it is a bug of the graders, not a catch.
EQUIVALENT lists the mutants reviewed and found to behave exactly as the
reference (no grader could kill them), each with its reason; they are left out
of the score. Ids name the function an edit is in, never its line
(tests/test_mutation_ids.py holds every id listed here, and every one the docs
quote, to a mutant that exists); the report names the EQUIVALENT entries that
no longer match a mutant.
SEEN_ON_CUDA_ONLY lists mutants that only 6.2, on CUDA, can see: on a machine
without CUDA they are reported apart and left out of the score (none since 6.1
runs on the judge's device, where a tensor left on the CPU fails).

Printed: per family and file the candidates, mutants graded, killed, survived,
equivalent, grader errors and the score, killed / (mutants - equivalent) in
percent; the same per family and in total; every survivor with its id
(``file:function:kind``, the function's qualified name, ``#n`` for the
n-th of the same kind in that function) and a
one-line diff; the families, seed, count and wall time. A figure, not a test:
it always exits 0, except 2 when the reference itself fails one of its tasks
(then no score means anything) or ``--ids`` names no such mutant, and
argparse's exit on bad arguments. ``--list`` prints the sample without
grading it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

from graders.paths import SOLUTIONS
from graders.tasks import TASKS

sys.path.insert(0, str(Path(__file__).parent))
from mutants import FAMILIES, Mutant, marker_regions, mutants_of  # noqa: E402

# Mutants reviewed and found equivalent to the reference: id -> why no grader can tell them apart.
EQUIVALENT: dict[str, str] = {
    # classic
    "tensor.py:Tensor.__truediv__.backward:neg-add#4": (
        "(-y)**2 is y**2: negation is exact in floating point, so the squares are equal bit for bit (only a NaN's sign"
        " bit can differ)"),
    "torch_loop.py:fit_torch:stmt-drop": (
        "Module.to and Tensor.to take a device string, a torch.device or an index as torch.device() does, and fail on "
        "the same bad names, so converting first changes nothing"),
    "tensor.py:unbroadcast:const-1-0#2": (
        "summing a size-1 axis only where the gradient is longer than 1 (!= 0 here, > 1 in a style of "
        "tests/corpus_correct) differs from the reference only on an axis stretched to length 0; the graders draw no "
        "such shape, on purpose, so that both readings of unbroadcast get full marks"),
    # extended
    "torch_loop.py:fit_torch:loop-reverse": (
        "the loop variable _ is never read: reversed(range(epochs)) runs as many epochs, and nothing else changes"),
    "train.py:evaluate:axis-add": (
        "losses is a list of floats, 1-D, so axis=0 is all of it: the same mean bit for bit (nan for an empty list "
        "either way)"),
    "train.py:_save_checkpoint:dtype-drop": (
        "history['train_loss'] is a list of Python floats (train_epoch returns floats, a resumed history comes from "
        ".tolist()), which numpy stores as float64 unasked, an empty list too"),
    "train.py:_save_checkpoint:array-asarray#2": (
        "np.asarray of a list builds a new array as np.array does (only an ndarray argument could be shared), and "
        "history['val_loss'] is a list"),
    "train.py:train_epoch:cast-float-drop": (
        "np.mean of a list of floats is an np.float64, a subclass of float with the same value: arithmetic, "
        "comparisons, isinstance(x, float), json and the wire give the same; only type(x) is float tells, and the "
        "contract asks for a float, which it is"),
    "train.py:evaluate:cast-float-drop": (
        "as train.py:train_epoch:cast-float-drop: np.float64 is a float of the same value"),
    "tensor.py:Tensor.sum.backward:copy-drop": (
        "the sum's gradient returned as np.broadcast_to's read-only view, not a copy: the same values and shape, and "
        "both are right, since the engine never writes into a rule's gradient (it adds into new arrays and copies into"
        " .grad) and PyTorch's SumBackward returns an expanded view too (grad.expand); only the writeable flag and the"
        " strides differ, which no grader reads, on purpose"),
}

DEFAULT_COUNT = 480
# Mutants that only a GPU can tell apart from the reference: none since 6.1 runs on the judge's device, where a batch
# or a model left on the CPU fails as on CUDA (the eight that leave a tensor behind, xb.to(xb) and the moves dropped,
# are killed there). A mutant that a later check can see only on CUDA goes here, with its reason: without CUDA such
# mutants are left out of the score, reported apart; with it they count as any other.
SEEN_ON_CUDA_ONLY: dict[str, str] = {}

PASSED, SKIPPED, ERROR = "passed", "skipped", "grader error"
KILLED, SURVIVED = "killed", "survived"


# ----- the files -----

def graded_files() -> list[str]:
    """The solution files with graded bodies and tasks, e.g. ["data.py", "optim.py", ...]."""
    modules = {task.module for task in TASKS}
    return [p.name for p in sorted(SOLUTIONS.glob("*.py")) if p.stem in modules and marker_regions(p.read_text())]


def tasks_of(name: str) -> tuple[str, ...]:
    return tuple(task.id for task in TASKS if task.module == Path(name).stem)


def candidates_of(files: list[str]) -> dict[tuple[str, str], list[Mutant]]:
    """(family, file) -> every mutant of that family in that file, for every family."""
    found = {name: mutants_of(name, (SOLUTIONS / name).read_text()) for name in files}
    return {(family, name): [m for m in found[name] if m.family == family] for family in FAMILIES for name in files}


# ----- the sample -----

def shares(sizes: dict, count: int) -> dict:
    """``count`` split over the groups in proportion to ``sizes`` (largest remainders; never above a size)."""
    total = sum(sizes.values())
    if count >= total:
        return dict(sizes)
    exact = {name: count * size / total for name, size in sizes.items()}
    given = {name: int(value) for name, value in exact.items()}
    by_remainder = sorted(sizes, key=lambda name: (-(exact[name] - given[name]), name))
    for name in by_remainder[:count - sum(given.values())]:
        given[name] += 1
    return given


def sample(candidates: dict[tuple[str, str], list[Mutant]], count: int, seed: int) -> list[Mutant]:
    """A deterministic sample: each (family, file)'s share drawn with its own generator,
    ``Random(f"{seed}:{file}")`` for the classic family (the samples drawn before the extended family
    existed) and ``Random(f"{seed}:{family}:{file}")`` for the others."""
    chosen = []
    for (family, name), share in shares({g: len(m) for g, m in candidates.items()}, count).items():
        key = f"{seed}:{name}" if family == "classic" else f"{seed}:{family}:{name}"
        picked = random.Random(key).sample(range(len(candidates[family, name])), share)
        chosen += [candidates[family, name][i] for i in sorted(picked)]
    return chosen


# ----- grading (in the pool's processes) -----

@dataclass
class Outcome:
    id: str
    file: str
    family: str
    verdict: str  # killed or survived
    grader_error: bool
    seconds: float
    tasks: dict[str, str]  # task id -> status
    lost: dict[str, str]  # task id -> the first line of its message, for the tasks that did not pass


def grade_file(name: str, text: str) -> tuple[dict[str, str], dict[str, str]]:
    """Grade a submission of solutions/ with ``name`` holding ``text``, on that file's tasks only."""
    from graders.judge.grade import grade

    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        folder, scratch = Path(tmp) / "submission", Path(tmp) / "scratch"
        folder.mkdir()
        scratch.mkdir()
        for source in sorted(SOLUTIONS.glob("*.py")):
            shutil.copyfile(source, folder / source.name)
        (folder / name).write_text(text)
        report = grade(folder, task_ids=tasks_of(name), scratch=scratch)
    statuses = {r.task.id: r.status for r in report.results}
    lost = {r.task.id: (r.message.strip().splitlines() or [""])[0][:200]
            for r in report.results if r.status not in (PASSED, SKIPPED)}
    return statuses, lost


def grade_mutant(mutant_id: str, family: str, name: str, text: str) -> Outcome:
    start = time.perf_counter()
    try:
        statuses, lost = grade_file(name, text)
    except Exception as error:  # noqa: BLE001 - a crash of grade() is reported as a grader error
        statuses, lost = {}, {"grade()": f"{type(error).__name__}: {error}"[:200]}
        return Outcome(mutant_id, name, family, KILLED, True, time.perf_counter() - start, statuses, lost)
    verdict = KILLED if lost else SURVIVED
    error = any(status == ERROR for status in statuses.values())
    return Outcome(mutant_id, name, family, verdict, error, time.perf_counter() - start, statuses, lost)


def pool(jobs: int) -> ProcessPoolExecutor:
    # spawn, not fork: the judge imports torch, which must not be forked mid-flight.
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))


def check_reference(files: list[str], jobs: int) -> list[str]:
    """Grade the unmutated solutions, once per file; the problems found (none when all pass)."""
    problems = []
    with pool(jobs) as executor:
        futures = [executor.submit(grade_mutant, f"{name}:reference", "none", name,
                                   (SOLUTIONS / name).read_text())
                   for name in files]
        for future in as_completed(futures):
            outcome = future.result()
            problems += [f"{outcome.file}: task {task}: {message}" for task, message in outcome.lost.items()]
    return sorted(problems)


def grade_all(mutants: list[Mutant], jobs: int) -> list[Outcome]:
    outcomes, start = [], time.perf_counter()
    with pool(jobs) as executor:
        futures = [executor.submit(grade_mutant, m.id, m.family, m.file, m.source) for m in mutants]
        for done, future in enumerate(as_completed(futures), start=1):
            outcome = future.result()
            outcomes.append(outcome)
            print(f"[{done}/{len(mutants)} {time.perf_counter() - start:6.0f}s] {outcome.id}: {outcome.verdict}"
                  f"{' (grader error)' if outcome.grader_error else ''} in {outcome.seconds:.1f}s",
                  file=sys.stderr, flush=True)
    order = {m.id: i for i, m in enumerate(mutants)}
    return sorted(outcomes, key=lambda o: order[o.id])


# ----- the figures -----

def unseen_here() -> dict[str, str]:
    """The mutants this machine cannot tell apart from the reference: SEEN_ON_CUDA_ONLY, without CUDA."""
    import torch

    return {} if torch.cuda.is_available() else SEEN_ON_CUDA_ONLY


def tally(outcomes: list[Outcome], candidates: int) -> dict:
    unseen = unseen_here()
    equivalent = [o for o in outcomes if o.id in EQUIVALENT]
    not_here = [o for o in outcomes if o.id in unseen and o.id not in EQUIVALENT]
    counted = [o for o in outcomes if o.id not in EQUIVALENT and o.id not in unseen]
    killed = sum(o.verdict == KILLED for o in counted)
    scored = len(counted)
    return {"candidates": candidates, "mutants": len(outcomes), "killed": killed, "survived": scored - killed,
            "equivalent": len(equivalent), "cuda_only": len(not_here),
            "grader_errors": sum(o.grader_error for o in outcomes),
            "score": round(100 * killed / scored, 1) if scored else None}


def summarize(candidates: dict[tuple[str, str], list[Mutant]], mutants: list[Mutant], outcomes: list[Outcome],
              every_id: set[str]) -> dict:
    """The figures; ``every_id`` holds the ids of every family's mutants of the files, so that an
    EQUIVALENT entry of a family not graded now is not taken for a stale one."""
    by_id = {m.id: m for m in mutants}
    families = dict.fromkeys(family for family, _ in candidates)
    per_family = {family: {name: tally([o for o in outcomes if (o.family, o.file) == (family, name)], len(c))
                           for (f, name), c in candidates.items() if f == family} for family in families}
    family_totals = {family: tally([o for o in outcomes if o.family == family],
                                   sum(len(c) for (f, _), c in candidates.items() if f == family))
                     for family in families}
    described = [{**asdict(o), "line": by_id[o.id].line, "kind": by_id[o.id].kind, "old": by_id[o.id].old,
                  "new": by_id[o.id].new, "equivalent": EQUIVALENT.get(o.id)} for o in outcomes]
    return {
        "per_family": per_family,
        "family_total": family_totals,
        "total": tally(outcomes, sum(len(c) for c in candidates.values())),
        "survivors": [d for d in described if d["verdict"] == SURVIVED and not d["equivalent"]
                      and d["id"] not in unseen_here()],
        "cuda_only": [d for d in described if d["id"] in unseen_here() and not d["equivalent"]],
        "grader_errors": [d for d in described if d["grader_error"]],
        "equivalent_killed": [d for d in described if d["equivalent"] and d["verdict"] == KILLED],
        "stale_equivalent": sorted(i for i in set(EQUIVALENT) - every_id
                                   if i.split(":")[0] in {name for _, name in candidates}),
        "mutants": described,
    }


def print_table(summary: dict) -> None:
    columns = ("candidates", "mutants", "killed", "survived", "equivalent", "cuda_only", "grader_errors", "score")
    print(f"{'family':<10}{'file':<14}" + "".join(f"{c.replace('_', ' '):>14}" for c in columns))
    rows = [(family, name, row) for family, files in summary["per_family"].items()
            for name, row in [*files.items(), ("total", summary["family_total"][family])]]
    for family, name, row in [*rows, ("all", "total", summary["total"])]:
        score = "-" if row["score"] is None else f"{row['score']:.1f}%"
        print(f"{family:<10}{name:<14}" + "".join(f"{row[c]:>14}" for c in columns[:-1]) + f"{score:>14}")


def print_mutants(title: str, described: list[dict], detail: bool = False) -> None:
    print(f"\n{title} ({len(described)}):")
    for d in described:
        print(f"  {d['id']}: {d['old']}  ->  {d['new']}")
        if detail:
            print("".join(f"      {task}: {message}\n" for task, message in d["lost"].items()), end="")


def print_report(summary: dict, args: argparse.Namespace, seconds: float) -> None:
    print(f"mutation testing of the graders: solutions {SOLUTIONS}")
    print(f"families {','.join(args.families)}, seed {args.seed}, count {args.count}, jobs {args.jobs}\n")
    print_table(summary)
    print_mutants("survivors: graded as correct (a gap in the graders, or equivalent: then add it to EQUIVALENT)",
                  summary["survivors"])
    if summary["cuda_only"]:
        print_mutants("seen only on CUDA, left out of the score on this machine (SEEN_ON_CUDA_ONLY)",
                      summary["cuda_only"])
    if summary["grader_errors"]:
        print_mutants("grader errors (counted as killed, but a bug of the graders)", summary["grader_errors"], True)
    if summary["equivalent_killed"]:
        print_mutants("listed in EQUIVALENT but killed (wrong entries)", summary["equivalent_killed"], True)
    if summary["stale_equivalent"]:
        print(f"\nEQUIVALENT entries that match no mutant (the solutions moved): {summary['stale_equivalent']}")
    print(f"\nwall time {seconds:.0f}s")


def print_sample(mutants: list[Mutant]) -> None:
    for m in mutants:
        print(f"{m.id}: {m.old}  ->  {m.new}")
    print(f"{len(mutants)} mutants")


# ----- the command line -----

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT,
                        help=f"mutants to grade (default {DEFAULT_COUNT}; all if fewer)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated families of mutants (default {','.join(FAMILIES)})")
    parser.add_argument("--files", default=None, help="comma-separated solution files, e.g. tensor.py,optim.py")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants graded at once")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures and every mutant here")
    parser.add_argument("--ids", default=None,
                        help="comma-separated mutant ids to grade instead of a sample (of --families and --files)")
    parser.add_argument("--list", action="store_true", help="print the sample and stop (no grading)")
    args = parser.parse_args(argv)
    known = graded_files()
    args.files = known if args.files is None else [f.strip() for f in args.files.split(",") if f.strip()]
    unknown = [f for f in args.files if f not in known]
    if unknown or not args.files:
        parser.error(f"--files: {', '.join(unknown) or 'none given'}; expected some of {', '.join(known)}")
    args.families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in args.families if f not in FAMILIES]
    if unknown or not args.families:
        parser.error(f"--families: {', '.join(unknown) or 'none given'}; expected some of {', '.join(FAMILIES)}")
    args.families = [f for f in FAMILIES if f in args.families]
    args.ids = None if args.ids is None else [i.strip() for i in args.ids.split(",") if i.strip()]
    if args.count < 0 or args.jobs < 1:
        parser.error("--count must be >= 0 and --jobs >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    every = candidates_of(args.files)
    candidates = {group: mutants for group, mutants in every.items() if group[0] in args.families}
    every_id = {m.id for mutants in every.values() for m in mutants}
    if args.ids:
        unknown = sorted(set(args.ids) - every_id)
        if unknown:
            print(f"mutation.py: --ids: no such mutant: {', '.join(unknown)}", file=sys.stderr)
            return 2
        chosen = [m for mutants in candidates.values() for m in mutants if m.id in set(args.ids)]
    else:
        chosen = sample(candidates, args.count, args.seed)
    if args.list:
        print_sample(chosen)
        return 0
    problems = check_reference(args.files, args.jobs)
    if problems:
        print("mutation.py: the reference solution does not pass its own tasks, so no mutation score means "
              "anything; fix the graders or solutions/ first:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    outcomes = grade_all(chosen, args.jobs)
    summary = summarize(candidates, chosen, outcomes, every_id)
    seconds = time.perf_counter() - start
    print_report(summary, args, seconds)
    if args.json:
        meta = {"families": args.families, "seed": args.seed, "count": args.count, "jobs": args.jobs,
                "files": args.files,
                "solutions": str(SOLUTIONS), "wall_seconds": round(seconds, 1)}
        args.json.write_text(json.dumps({**meta, **summary}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
