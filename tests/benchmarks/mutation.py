"""Mutation testing of the graders: how many small bugs planted in solutions/ do they catch?

    python tests/benchmarks/mutation.py [--seed 0] [--count 320] [--files tensor.py,optim.py]
                                        [--jobs N] [--json PATH] [--list]
    tox -e mutation -- --count 40 --jobs 2

Each mutant is the reference solution with one small change inside one graded
body (between ``### BEGIN SOLUTION`` and ``### END SOLUTION``; nothing else of
the file changes, byte for byte): an operator swapped (+ -, * /, ** to *, // to
/), a comparison swapped (< <=, > >=, == !=, is / is not, in / not in), and / or
swapped, a constant changed (True False; 0 to 1, 1 to 0 or 2, n to n + 1, so
axis=0 and keepdims=True are covered), a unary minus or ``not`` dropped, a
unary minus added to an operand of arithmetic, ``x += y`` turned into
``x = y`` or ``x -= y``, a statement replaced by ``pass`` (never the only one of
a body), two adjacent positional arguments swapped, a slice bound dropped or
moved by one, ``return x`` made ``return None`` (not in generators),
``range(a)`` made ``range(a - 1)`` or ``range(1, a)`` (``range(a, b)``: a + 1 or
b - 1), ``break`` and ``continue`` swapped. Mutants that do not compile, do not
change the AST, or repeat another's source are left out.

From all those candidates a deterministic sample of ``--count`` (default 320)
is drawn with ``--seed`` (default 0), spread over the files in proportion to
their candidates. Each mutant is graded on its own file's tasks only, as a
submission holding every solutions/*.py with the one file mutated. It is
*killed* when any of those tasks does not pass (a skipped task, such as 6.2
without CUDA, is ignored) and *survives* when all pass. A grader error also
kills it, but is listed apart: it is a bug of the graders, not a catch.
EQUIVALENT lists the mutants reviewed and found to behave exactly as the
reference (no grader could kill them), each with its reason; they are left out
of the score. Ids carry line numbers, so an edit above a body moves them: the
report names the EQUIVALENT entries that no longer match a mutant.

Printed: per file the candidates, mutants graded, killed, survived, equivalent,
grader errors and the score, killed / (mutants - equivalent) in percent; the
same in total; every survivor with its id (``file:Lline:kind``, ``#n`` for the
n-th of the same kind on a line) and a one-line diff; the seed, count and wall
time. A figure, not a test: it always exits 0, except 2 when the reference
itself fails one of its tasks (then no score means anything) and argparse's
exit on bad arguments. ``--list`` prints the sample without grading it.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import json
import multiprocessing
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from graders.course.build import BEGIN, END
from graders.paths import SOLUTIONS
from graders.tasks import TASKS

# Mutants reviewed and found equivalent to the reference: id -> why no grader can tell them apart.
EQUIVALENT: dict[str, str] = {
    "tensor.py:L180:neg-add#4": "(-y)**2 is y**2: negation is exact in floating point, so the squares are equal "
                                "bit for bit (only a NaN's sign bit can differ)",
    "torch_loop.py:L18:stmt-drop": "Module.to and Tensor.to take a device string, a torch.device or an index as "
                                   "torch.device() does, and fail on the same bad names, so converting first "
                                   "changes nothing",
    "tensor.py:L60:const-1-0#2": "summing a size-1 axis only where the gradient is longer than 1 (!= 0 here, > 1 in "
                                 "a style of tests/corpus_correct) differs from the reference only on an axis "
                                 "stretched to length 0; the graders draw no such shape, on purpose, so that both "
                                 "readings of unbroadcast get full marks",
}

PASSED, SKIPPED, ERROR = "passed", "skipped", "grader error"
KILLED, SURVIVED = "killed", "survived"

BINOP_SWAPS = {ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div,), ast.Div: (ast.Mult,),
               ast.Pow: (ast.Mult,), ast.FloorDiv: (ast.Div,)}
AUGASSIGN_SWAPS = {ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div,), ast.Div: (ast.Mult,)}
OP_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.FloorDiv: "//",
              ast.MatMult: "@"}
OP_NAMES = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
            ast.FloorDiv: "floordiv"}
# Comparison: (pattern of its text, its name, the operator it becomes, that one's text).
COMPARE_SWAPS = {
    ast.Lt: (r"<", "lt", "lte", "<="), ast.LtE: (r"<=", "lte", "lt", "<"),
    ast.Gt: (r">", "gt", "gte", ">="), ast.GtE: (r">=", "gte", "gt", ">"),
    ast.Eq: (r"==", "eq", "noteq", "!="), ast.NotEq: (r"!=", "noteq", "eq", "=="),
    ast.Is: (r"\bis\b", "is", "isnot", "is not"), ast.IsNot: (r"\bis\s+not\b", "isnot", "is", "is"),
    ast.In: (r"\bin\b", "in", "notin", "not in"), ast.NotIn: (r"\bnot\s+in\b", "notin", "in", "in"),
}
# Operands that take "+ 1", "- 1" or a binary operator without parentheses.
ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


# ----- finding the graded bodies and the places to mutate -----

@dataclass(frozen=True)
class Edit:
    """One replacement in a file: bytes [start, end) become ``new``."""

    kind: str
    line: int
    start: int
    end: int
    new: str


@dataclass(frozen=True)
class Mutant:
    file: str
    id: str
    kind: str
    line: int
    old: str  # the changed lines of the reference, on one line
    new: str  # the same lines once mutated
    source: str = field(repr=False)


def split_lines(text: str) -> list[str]:
    """Lines as the AST counts them (at "\\n" only: str.splitlines also splits at form feeds)."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


class Source:
    """A file's text with byte offsets for the AST's (line, UTF-8 column) positions."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode()
        self.lines = split_lines(text)
        self.line_starts = [0]
        for line in self.lines:
            self.line_starts.append(self.line_starts[-1] + len(line.encode()))

    def start(self, node: ast.AST) -> int:
        return self.line_starts[node.lineno - 1] + node.col_offset

    def end(self, node: ast.AST) -> int:
        return self.line_starts[node.end_lineno - 1] + node.end_col_offset

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def between(self, start: int, end: int) -> str:
        return self.data[start:end].decode()

    def segment(self, node: ast.AST) -> str:
        return self.between(self.start(node), self.end(node))

    def apply(self, edit: Edit) -> str:
        return (self.data[:edit.start] + edit.new.encode() + self.data[edit.end:]).decode()


def marker_regions(text: str) -> list[tuple[int, int]]:
    """(BEGIN line, END line) of every graded body, 1-based; the code lies strictly between them."""
    regions, begin = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        if BEGIN.match(line):
            begin = number
        elif END.match(line) and begin is not None:
            regions.append((begin, number))
            begin = None
    return regions


def in_regions(node: ast.AST, regions: list[tuple[int, int]]) -> bool:
    return hasattr(node, "lineno") and any(b < node.lineno and node.end_lineno < e for b, e in regions)


def operand_text(src: Source, node: ast.AST) -> str:
    """``node``'s text, parenthesized unless ``text + 1`` or ``text - 1`` keeps its meaning."""
    text = src.segment(node)
    plain = isinstance(node, ATOMS) or isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC)
    return text if plain else f"({text})"


def find_in_gap(src: Source, start: int, end: int, pattern: str) -> tuple[int, int] | None:
    """Byte span of the first match of ``pattern`` in [start, end) (an operator between two operands)."""
    gap = src.data[start:end]
    match = re.search(pattern.encode(), gap)
    return (start + match.start(), start + match.end()) if match else None


def binop_edits(src: Source, node: ast.BinOp) -> Iterator[Edit]:
    for new_op in BINOP_SWAPS.get(type(node.op), ()):
        span = find_in_gap(src, src.end(node.left), src.start(node.right), re.escape(OP_SYMBOLS[type(node.op)]))
        if span:
            kind = f"binop-{OP_NAMES[type(node.op)]}-{OP_NAMES[new_op]}"
            yield Edit(kind, src.line_of(span[0]), *span, OP_SYMBOLS[new_op])


def compare_edits(src: Source, node: ast.Compare) -> Iterator[Edit]:
    lefts = [node.left, *node.comparators[:-1]]
    for op, left, right in zip(node.ops, lefts, node.comparators):
        pattern, name, new_name, new_text = COMPARE_SWAPS[type(op)]
        span = find_in_gap(src, src.end(left), src.start(right), pattern)
        if span:
            yield Edit(f"cmp-{name}-{new_name}", src.line_of(span[0]), *span, new_text)


def boolop_edits(src: Source, node: ast.BoolOp) -> Iterator[Edit]:
    old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
    start, end, text = src.start(node), src.end(node), src.segment(node).encode()
    for left, right in reversed(list(zip(node.values, node.values[1:]))):
        span = find_in_gap(src, src.end(left), src.start(right), rf"\b{old}\b")
        if span is None:
            return
        text = text[:span[0] - start] + new.encode() + text[span[1] - start:]
    yield Edit(f"boolop-{old}-{new}", node.lineno, start, end, text.decode())


def constant_edits(src: Source, node: ast.Constant) -> Iterator[Edit]:
    value = node.value
    if isinstance(value, bool):
        news = [not value]
    elif isinstance(value, int | float):
        news = {0: [1], 1: [0, 2]}.get(value, [value + 1])
        news = [type(value)(n) for n in news]
    else:
        return
    for new in news:
        yield Edit(f"const-{value!r}-{new!r}", node.lineno, src.start(node), src.end(node), repr(new))


def unaryop_edits(src: Source, node: ast.UnaryOp) -> Iterator[Edit]:
    """Drop a unary minus or a ``not``: the text after the operator stays."""
    if isinstance(node.op, ast.USub | ast.Not):
        span = find_in_gap(src, src.start(node), src.start(node.operand), r"(-|\bnot\b)\s*")
        if span:
            kind = "neg-drop" if isinstance(node.op, ast.USub) else "not-drop"
            yield Edit(kind, node.lineno, *span, "")


def negate_edit(src: Source, node: ast.AST) -> Edit:
    return Edit("neg-add", node.lineno, src.start(node), src.end(node), f"(-{src.segment(node)})")


def negatable(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call)


def negation_edits(src: Source, node: ast.BinOp) -> Iterator[Edit]:
    """Add a unary minus to an operand of arithmetic (numbers by construction, unlike a returned value)."""
    if isinstance(node.op, ARITHMETIC):
        yield from (negate_edit(src, side) for side in (node.left, node.right) if negatable(side))


def augassign_edits(src: Source, node: ast.AugAssign) -> Iterator[Edit]:
    op = type(node.op)
    if op not in OP_NAMES:
        return
    span = find_in_gap(src, src.end(node.target), src.start(node.value), re.escape(OP_SYMBOLS[op] + "="))
    if span is None:
        return
    yield Edit(f"aug-{OP_NAMES[op]}-assign", src.line_of(span[0]), *span, "=")
    for new_op in AUGASSIGN_SWAPS.get(op, ()):
        yield Edit(f"aug-{OP_NAMES[op]}-{OP_NAMES[new_op]}", src.line_of(span[0]), *span, OP_SYMBOLS[new_op] + "=")


def statement_drop_edits(src: Source, node: ast.AST, regions) -> Iterator[Edit]:
    """Replace a statement by ``pass``, in any body that holds more than one."""
    bodies = (getattr(node, name, None) for name in ("body", "orelse", "finalbody"))
    for body in (b for b in bodies if isinstance(b, list)):
        if len(body) > 1:
            for statement in body:
                if in_regions(statement, regions):
                    yield Edit("stmt-drop", statement.lineno, src.start(statement), src.end(statement), "pass")


def argument_swap_edits(src: Source, node: ast.Call) -> Iterator[Edit]:
    args = node.args
    if len(args) < 2 or any(isinstance(a, ast.Starred) for a in args):
        return
    for first, second in zip(args, args[1:]):
        gap = src.between(src.end(first), src.start(second))
        yield Edit("args-swap", first.lineno, src.start(first), src.end(second),
                   src.segment(second) + gap + src.segment(first))


def slice_edits(src: Source, node: ast.Slice) -> Iterator[Edit]:
    for name, step in (("lower", " + 1"), ("upper", " - 1"), ("step", None)):
        bound = getattr(node, name)
        if bound is None:
            continue
        yield Edit(f"slice-{name}-drop", bound.lineno, src.start(bound), src.end(bound), "")
        if step and not isinstance(bound, ast.Constant):
            kind = f"slice-{name}-{'inc' if step == ' + 1' else 'dec'}"
            yield Edit(kind, bound.lineno, src.start(bound), src.end(bound), operand_text(src, bound) + step)


def range_edits(src: Source, node: ast.Call) -> Iterator[Edit]:
    if not (isinstance(node.func, ast.Name) and node.func.id == "range" and node.args and not node.keywords):
        return
    if len(node.args) == 1:
        (stop,) = node.args
        yield Edit("range-stop-dec", stop.lineno, src.start(stop), src.end(stop), operand_text(src, stop) + " - 1")
        yield Edit("range-start-one", stop.lineno, src.start(stop), src.start(stop), "1, ")
    else:
        start, stop = node.args[:2]
        yield Edit("range-start-inc", start.lineno, src.start(start), src.end(start), operand_text(src, start) + " + 1")
        yield Edit("range-stop-dec", stop.lineno, src.start(stop), src.end(stop), operand_text(src, stop) + " - 1")


def is_generator(function: ast.AST) -> bool:
    """Whether ``function`` yields (nested functions and lambdas do not count)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return False


def return_none_edits(src: Source, node: ast.Return, function: ast.AST | None) -> Iterator[Edit]:
    value = node.value
    if value is None or isinstance(value, ast.Constant) and value.value is None:
        return
    if function is not None and not is_generator(function):
        yield Edit("return-none", node.lineno, src.start(value), src.end(value), "None")


def jump_edits(src: Source, node: ast.Break | ast.Continue) -> Iterator[Edit]:
    kind, new = ("break-continue", "continue") if isinstance(node, ast.Break) else ("continue-break", "break")
    yield Edit(kind, node.lineno, src.start(node), src.end(node), new)


def enclosing_functions(tree: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> the innermost function definition holding it."""
    found: dict[int, ast.AST] = {}

    def visit(node: ast.AST, function: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            found[id(child)] = function
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else function
            visit(child, inner)

    visit(tree, None)
    return found


def inside_fstrings(tree: ast.AST) -> set[int]:
    """ids of the nodes inside f-strings, whose positions Python 3.11 does not always give right."""
    return {id(inner) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for inner in ast.walk(node)}


def edits_at(src: Source, node: ast.AST, regions, functions) -> Iterator[Edit]:
    """Every edit of one node (a statement's own edits only, not its children's)."""
    yield from statement_drop_edits(src, node, regions)
    if not in_regions(node, regions):
        return
    if isinstance(node, ast.BinOp):
        yield from binop_edits(src, node)
        yield from negation_edits(src, node)
    elif isinstance(node, ast.Compare):
        yield from compare_edits(src, node)
    elif isinstance(node, ast.BoolOp):
        yield from boolop_edits(src, node)
    elif isinstance(node, ast.Constant):
        yield from constant_edits(src, node)
    elif isinstance(node, ast.UnaryOp):
        yield from unaryop_edits(src, node)
    elif isinstance(node, ast.AugAssign):
        yield from augassign_edits(src, node)
    elif isinstance(node, ast.Call):
        yield from argument_swap_edits(src, node)
        yield from range_edits(src, node)
    elif isinstance(node, ast.Slice):
        yield from slice_edits(src, node)
    elif isinstance(node, ast.Return):
        yield from return_none_edits(src, node, functions.get(id(node)))
    elif isinstance(node, ast.Break | ast.Continue):
        yield from jump_edits(src, node)


def one_line(lines: list[str], limit: int = 110) -> str:
    text = " ".join(line.strip() for line in lines)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def changed_lines(src: Source, edit: Edit, mutated: str) -> tuple[str, str]:
    """The lines an edit touches, before and after, each squeezed onto one line."""
    first, last = src.line_of(edit.start), src.line_of(max(edit.end - 1, edit.start))
    return one_line(src.lines[first - 1:last]), one_line(split_lines(mutated)[first - 1:first + edit.new.count("\n")])


def mutants_of(name: str, text: str) -> list[Mutant]:
    """Every valid first-order mutant of one solution file, in source order."""
    tree, src, regions = ast.parse(text), Source(text), marker_regions(text)
    functions, skipped = enclosing_functions(tree), inside_fstrings(tree)
    edits = sorted({edit for node in ast.walk(tree) if id(node) not in skipped
                    for edit in edits_at(src, node, regions, functions)},
                   key=lambda e: (e.start, e.end, e.kind, e.new))
    reference, seen, mutants, numbers = ast.dump(tree), {text}, [], Counter()
    for edit in edits:
        numbers[edit.line, edit.kind] += 1
        number = numbers[edit.line, edit.kind]
        mutant_id = f"{name}:L{edit.line}:{edit.kind}" + (f"#{number}" if number > 1 else "")
        mutated = src.apply(edit)
        if mutated in seen or not compiles(mutated, name) or ast.dump(ast.parse(mutated)) == reference:
            continue
        seen.add(mutated)
        old, new = changed_lines(src, edit, mutated)
        mutants.append(Mutant(name, mutant_id, edit.kind, edit.line, old, new, mutated))
    return mutants


def compiles(text: str, name: str) -> bool:
    try:
        compile(text, name, "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def graded_files() -> list[str]:
    """The solution files with graded bodies and tasks, e.g. ["data.py", "optim.py", ...]."""
    modules = {task.module for task in TASKS}
    return [p.name for p in sorted(SOLUTIONS.glob("*.py")) if p.stem in modules and marker_regions(p.read_text())]


def tasks_of(name: str) -> tuple[str, ...]:
    return tuple(task.id for task in TASKS if task.module == Path(name).stem)


# ----- the sample -----

def shares(sizes: dict[str, int], count: int) -> dict[str, int]:
    """``count`` split over the files in proportion to ``sizes`` (largest remainders; never above a size)."""
    total = sum(sizes.values())
    if count >= total:
        return dict(sizes)
    exact = {name: count * size / total for name, size in sizes.items()}
    given = {name: int(value) for name, value in exact.items()}
    by_remainder = sorted(sizes, key=lambda name: (-(exact[name] - given[name]), name))
    for name in by_remainder[:count - sum(given.values())]:
        given[name] += 1
    return given


def sample(candidates: dict[str, list[Mutant]], count: int, seed: int) -> list[Mutant]:
    """A deterministic sample: each file's share drawn with its own ``Random(f"{seed}:{file}")``."""
    chosen = []
    for name, share in shares({n: len(m) for n, m in candidates.items()}, count).items():
        picked = random.Random(f"{seed}:{name}").sample(range(len(candidates[name])), share)
        chosen += [candidates[name][i] for i in sorted(picked)]
    return chosen


# ----- grading (in the pool's processes) -----

@dataclass
class Outcome:
    id: str
    file: str
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


def grade_mutant(mutant_id: str, name: str, text: str) -> Outcome:
    start = time.perf_counter()
    try:
        statuses, lost = grade_file(name, text)
    except Exception as error:  # noqa: BLE001 - a crash of grade() is reported as a grader error
        statuses, lost = {}, {"grade()": f"{type(error).__name__}: {error}"[:200]}
        return Outcome(mutant_id, name, KILLED, True, time.perf_counter() - start, statuses, lost)
    verdict = KILLED if lost else SURVIVED
    error = any(status == ERROR for status in statuses.values())
    return Outcome(mutant_id, name, verdict, error, time.perf_counter() - start, statuses, lost)


def pool(jobs: int) -> ProcessPoolExecutor:
    # spawn, not fork: the judge imports torch, which must not be forked mid-flight.
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))


def check_reference(files: list[str], jobs: int) -> list[str]:
    """Grade the unmutated solutions, once per file; the problems found (none when all pass)."""
    problems = []
    with pool(jobs) as executor:
        futures = [executor.submit(grade_mutant, f"{name}:reference", name, (SOLUTIONS / name).read_text())
                   for name in files]
        for future in as_completed(futures):
            outcome = future.result()
            problems += [f"{outcome.file}: task {task}: {message}" for task, message in outcome.lost.items()]
    return sorted(problems)


def grade_all(mutants: list[Mutant], jobs: int) -> list[Outcome]:
    outcomes, start = [], time.perf_counter()
    with pool(jobs) as executor:
        futures = [executor.submit(grade_mutant, m.id, m.file, m.source) for m in mutants]
        for done, future in enumerate(as_completed(futures), start=1):
            outcome = future.result()
            outcomes.append(outcome)
            print(f"[{done}/{len(mutants)} {time.perf_counter() - start:6.0f}s] {outcome.id}: {outcome.verdict}"
                  f"{' (grader error)' if outcome.grader_error else ''} in {outcome.seconds:.1f}s",
                  file=sys.stderr, flush=True)
    order = {m.id: i for i, m in enumerate(mutants)}
    return sorted(outcomes, key=lambda o: order[o.id])


# ----- the figures -----

def tally(outcomes: list[Outcome], candidates: int) -> dict:
    equivalent = [o for o in outcomes if o.id in EQUIVALENT]
    counted = [o for o in outcomes if o.id not in EQUIVALENT]
    killed = sum(o.verdict == KILLED for o in counted)
    scored = len(counted)
    return {"candidates": candidates, "mutants": len(outcomes), "killed": killed, "survived": scored - killed,
            "equivalent": len(equivalent), "grader_errors": sum(o.grader_error for o in outcomes),
            "score": round(100 * killed / scored, 1) if scored else None}


def summarize(candidates: dict[str, list[Mutant]], mutants: list[Mutant], outcomes: list[Outcome]) -> dict:
    by_id = {m.id: m for m in mutants}
    files = {name: tally([o for o in outcomes if o.file == name], len(candidates[name])) for name in candidates}
    described = [{**asdict(o), "line": by_id[o.id].line, "kind": by_id[o.id].kind, "old": by_id[o.id].old,
                  "new": by_id[o.id].new, "equivalent": EQUIVALENT.get(o.id)} for o in outcomes]
    return {
        "per_file": files,
        "total": tally(outcomes, sum(len(c) for c in candidates.values())),
        "survivors": [d for d in described if d["verdict"] == SURVIVED and not d["equivalent"]],
        "grader_errors": [d for d in described if d["grader_error"]],
        "equivalent_killed": [d for d in described if d["equivalent"] and d["verdict"] == KILLED],
        "stale_equivalent": sorted(set(EQUIVALENT) - {m.id for c in candidates.values() for m in c}),
        "mutants": described,
    }


def print_table(summary: dict) -> None:
    columns = ("candidates", "mutants", "killed", "survived", "equivalent", "grader_errors", "score")
    print(f"{'file':<14}" + "".join(f"{c.replace('_', ' '):>14}" for c in columns))
    for name, row in [*summary["per_file"].items(), ("total", summary["total"])]:
        score = "-" if row["score"] is None else f"{row['score']:.1f}%"
        print(f"{name:<14}" + "".join(f"{row[c]:>14}" for c in columns[:-1]) + f"{score:>14}")


def print_mutants(title: str, described: list[dict], detail: bool = False) -> None:
    print(f"\n{title} ({len(described)}):")
    for d in described:
        print(f"  {d['id']}: {d['old']}  ->  {d['new']}")
        if detail:
            print("".join(f"      {task}: {message}\n" for task, message in d["lost"].items()), end="")


def print_report(summary: dict, args: argparse.Namespace, seconds: float) -> None:
    print(f"mutation testing of the graders: solutions {SOLUTIONS}")
    print(f"seed {args.seed}, count {args.count}, jobs {args.jobs}\n")
    print_table(summary)
    print_mutants("survivors: graded as correct (a gap in the graders, or equivalent: then add it to EQUIVALENT)",
                  summary["survivors"])
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
    parser.add_argument("--count", type=int, default=320, help="mutants to grade (default 320; all if fewer)")
    parser.add_argument("--files", default=None, help="comma-separated solution files, e.g. tensor.py,optim.py")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants graded at once")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures and every mutant here")
    parser.add_argument("--list", action="store_true", help="print the sample and stop (no grading)")
    args = parser.parse_args(argv)
    known = graded_files()
    args.files = known if args.files is None else [f.strip() for f in args.files.split(",") if f.strip()]
    unknown = [f for f in args.files if f not in known]
    if unknown or not args.files:
        parser.error(f"--files: {', '.join(unknown) or 'none given'}; expected some of {', '.join(known)}")
    if args.count < 0 or args.jobs < 1:
        parser.error("--count must be >= 0 and --jobs >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    candidates = {name: mutants_of(name, (SOLUTIONS / name).read_text()) for name in args.files}
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
    summary = summarize(candidates, chosen, outcomes)
    seconds = time.perf_counter() - start
    print_report(summary, args, seconds)
    if args.json:
        meta = {"seed": args.seed, "count": args.count, "jobs": args.jobs, "files": args.files,
                "solutions": str(SOLUTIONS), "wall_seconds": round(seconds, 1)}
        args.json.write_text(json.dumps({**meta, **summary}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
