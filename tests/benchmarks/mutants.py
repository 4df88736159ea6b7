"""The mutants of tests/benchmarks/mutation.py: first-order changes inside the graded bodies of solutions/.

Two families of edits, each listed in mutation.py's docstring: ``classic``
(operators, comparisons, constants, statements, arguments, slices, ranges,
returns, jumps) and ``extended`` (library calls, axes, attributes, copies,
dtypes, loop order, generators, variables, conditions, try and with blocks).
An edit replaces a byte span of the file; nothing outside the graded bodies
changes. Mutants are found family by family, the classic first, and a mutant
whose source repeats an earlier one's is left out, so the classic mutants and
their ids do not depend on the extended family.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from graders.course.build import BEGIN, END

FAMILIES = ("classic", "extended")

# ----- the classic family: operators, comparisons, constants, statements -----

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


# ----- the files and the graded bodies -----

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
    family: str
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


def classic_edits(src: Source, node: ast.AST, regions, functions) -> Iterator[Edit]:
    """Every classic edit of one node (a statement's own edits only, not its children's)."""
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


# ----- the extended family: library calls, names, conditions and blocks -----

# numpy functions (np.NAME), methods of any object (.NAME) and builtins swapped for a sibling.
NUMPY_SWAPS = {"sum": ("mean",), "mean": ("sum",), "prod": ("sum",), "max": ("min",), "min": ("max",),
               "amax": ("amin",), "amin": ("amax",), "maximum": ("minimum",), "minimum": ("maximum",),
               "argmax": ("argmin",), "argmin": ("argmax",), "any": ("all",), "all": ("any",),
               "std": ("var",), "var": ("std",), "zeros_like": ("ones_like",), "ones_like": ("zeros_like",),
               "zeros": ("ones",), "ones": ("zeros",), "exp": ("log",), "log": ("exp",),
               "sqrt": ("square",), "square": ("sqrt",), "floor": ("ceil",), "ceil": ("floor",)}
METHOD_SWAPS = {"sum": ("mean",), "mean": ("sum",), "prod": ("sum",), "max": ("min",), "min": ("max",),
                "argmax": ("argmin",), "argmin": ("argmax",), "any": ("all",), "all": ("any",),
                "std": ("var",), "var": ("std",)}
BUILTIN_SWAPS = {"min": ("max",), "max": ("min",), "any": ("all",), "all": ("any",)}
# Reductions, as np.NAME(...) or x.NAME(...): they take axis= and keepdims=.
REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all",
                        "std", "var"})
ATTRIBUTE_SWAPS = {"grad": "data", "data": "grad"}
CASTS = frozenset({"float", "int"})
# Methods whose call is dropped, leaving the object it was called on: a copy, a conversion.
DROPPED_METHODS = {"copy": "copy-drop", "astype": "astype-drop", "item": "item-drop", "tolist": "tolist-drop"}
# numpy calls dropped for their first argument: np.copy(x), np.array(x, dtype=...), np.asarray(x, ...) -> x.
DROPPED_NUMPY = {"copy": "copy-drop", "array": "array-drop", "asarray": "asarray-drop"}
RNG_NAMES = frozenset({"rng", "generator"})
NOT_SWAPPED = frozenset({"self", "cls"})


def paren_text(src: Source, node: ast.AST) -> str:
    """``node``'s text, parenthesized unless it is an atom (so it can stand for a call or take ``.attr``)."""
    text = src.segment(node)
    return text if isinstance(node, ATOMS) else f"({text})"


def numpy_name(tree: ast.AST) -> str | None:
    """The name the module imports numpy as (``np``), None if it does not."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy":
                    return alias.asname or "numpy"
    return None


def is_numpy(node: ast.AST, np_name: str | None) -> bool:
    return np_name is not None and isinstance(node, ast.Name) and node.id == np_name


def attribute_name_edit(src: Source, node: ast.Attribute, kind: str, new: str) -> Edit:
    """Rename the attribute of ``x.name``: the last ``len(name)`` bytes of the node are the name."""
    end = src.end(node)
    return Edit(kind, src.line_of(end - 1), end - len(node.attr.encode()), end, new)


def call_swap_edits(src: Source, node: ast.Call, np_name) -> Iterator[Edit]:
    """np.sum <-> np.mean and siblings (NUMPY_SWAPS), x.sum() <-> x.mean() (METHOD_SWAPS), min <-> max."""
    func = node.func
    if isinstance(func, ast.Attribute):
        table = NUMPY_SWAPS if is_numpy(func.value, np_name) else METHOD_SWAPS
        for new in table.get(func.attr, ()):
            yield attribute_name_edit(src, func, f"call-{func.attr}-{new}", new)
    elif isinstance(func, ast.Name):
        for new in BUILTIN_SWAPS.get(func.id, ()):
            yield Edit(f"call-{func.id}-{new}", func.lineno, src.start(func), src.end(func), new)


def keyword_drop_edit(src: Source, node: ast.Call, keyword: ast.keyword, kind: str) -> Edit:
    """Remove one keyword argument with the comma that joins it to its neighbour."""
    arguments = sorted([*node.args, *node.keywords], key=src.start)
    index = arguments.index(keyword)
    if index > 0:
        start, end = src.end(arguments[index - 1]), src.end(keyword)
    elif index + 1 < len(arguments):
        start, end = src.start(keyword), src.start(arguments[index + 1])
    else:
        start, end = src.start(keyword), src.end(keyword)
    return Edit(kind, keyword.lineno, start, end, "")


def keyword_add_edit(src: Source, node: ast.Call, kind: str, text: str) -> Edit:
    """Add ``text`` (``name=value``) as the last argument of a call."""
    arguments = [*node.args, *node.keywords]
    if arguments:
        end = max(src.end(a) for a in arguments)
        return Edit(kind, src.line_of(end), end, end, f", {text}")
    end = src.end(node) - 1  # the closing parenthesis
    return Edit(kind, src.line_of(end), end, end, text)


def reduction_edits(src: Source, node: ast.Call) -> Iterator[Edit]:
    """axis= and keepdims= of a reduction dropped, or added (axis=0, keepdims=True) where absent."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr in REDUCTIONS):
        return
    keywords = {k.arg: k for k in node.keywords}
    if "axis" in keywords:
        yield keyword_drop_edit(src, node, keywords["axis"], "axis-drop")
    elif not any(isinstance(a, ast.Starred) for a in node.args) and not any(k.arg is None for k in node.keywords):
        yield keyword_add_edit(src, node, "axis-add", "axis=0")
    if "keepdims" in keywords:
        yield keyword_drop_edit(src, node, keywords["keepdims"], "keepdims-drop")
    elif not any(k.arg is None for k in node.keywords):
        yield keyword_add_edit(src, node, "keepdims-add", "keepdims=True")


def attribute_edits(src: Source, node: ast.Attribute) -> Iterator[Edit]:
    """.grad <-> .data (read or written), and .T dropped."""
    if node.attr in ATTRIBUTE_SWAPS:
        new = ATTRIBUTE_SWAPS[node.attr]
        yield attribute_name_edit(src, node, f"attr-{node.attr}-{new}", new)
    elif node.attr == "T" and isinstance(node.ctx, ast.Load):
        yield Edit("attr-T-drop", node.lineno, src.start(node), src.end(node), paren_text(src, node.value))


def conversion_edits(src: Source, node: ast.Call, np_name) -> Iterator[Edit]:
    """A copy or a conversion dropped: x.copy(), x.astype(t), x.item(), x.tolist() -> x; np.copy(x),
    np.array(x, ...), np.asarray(x, ...), float(x), int(x) -> x; np.array -> np.asarray."""
    func, args = node.func, node.args
    if isinstance(func, ast.Attribute) and is_numpy(func.value, np_name):
        if func.attr in DROPPED_NUMPY and args and not isinstance(args[0], ast.Starred):
            yield Edit(DROPPED_NUMPY[func.attr], node.lineno, src.start(node), src.end(node),
                       paren_text(src, args[0]))
        if func.attr == "array":
            yield attribute_name_edit(src, func, "array-asarray", "asarray")
    elif isinstance(func, ast.Attribute) and func.attr in DROPPED_METHODS:
        yield Edit(DROPPED_METHODS[func.attr], node.lineno, src.start(node), src.end(node),
                   paren_text(src, func.value))
    elif isinstance(func, ast.Name) and func.id in CASTS and len(args) == 1 and not node.keywords:
        yield Edit(f"cast-{func.id}-drop", node.lineno, src.start(node), src.end(node), paren_text(src, args[0]))


def dtype_edits(src: Source, node: ast.AST, np_name) -> Iterator[Edit]:
    """np.float64 -> np.float32 wherever it is named, and a dtype= argument dropped."""
    if isinstance(node, ast.Attribute) and node.attr == "float64" and is_numpy(node.value, np_name):
        yield attribute_name_edit(src, node, "dtype-float32", "float32")
    elif isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == "dtype":
                yield keyword_drop_edit(src, node, keyword, "dtype-drop")


def loop_order_edits(src: Source, node: ast.AST) -> Iterator[Edit]:
    """A loop's iterable reversed (``reversed(list(it))``; ``reversed(range(...))``); reversed() and sorted()
    dropped."""
    if isinstance(node, ast.For | ast.comprehension):
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("reversed", "sorted"):
            return
        is_range = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
        text = src.segment(it) if is_range else f"list({src.segment(it)})"
        yield Edit("loop-reverse", it.lineno, src.start(it), src.end(it), f"reversed({text})")
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("reversed", "sorted")
          and len(node.args) == 1 and not node.keywords):
        yield Edit(f"{node.func.id}-drop", node.lineno, src.start(node), src.end(node),
                   paren_text(src, node.args[0]))


def is_rng(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in RNG_NAMES or name.endswith("_rng")


def rng_edits(src: Source, node: ast.AST, np_name) -> Iterator[Edit]:
    """default_rng(seed) unseeded or reseeded (seed + 1); rng.permutation(n) -> np.arange(n); a generator
    used as ``rng.method(...)`` replaced by a fresh unseeded one or by one seeded 0 anew at each use."""
    if not isinstance(node, ast.Call) or np_name is None:
        return
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "default_rng" and node.args and not isinstance(node.args[0], ast.Starred):
        first, last = node.args[0], node.args[-1]
        yield Edit("rng-unseeded", node.lineno, src.start(first), src.end(last), "")
        yield Edit("rng-reseed", first.lineno, src.start(first), src.end(first), operand_text(src, first) + " + 1")
    if isinstance(func, ast.Attribute):
        if func.attr == "permutation" and len(node.args) == 1 and not node.keywords:
            yield Edit("permutation-arange", node.lineno, src.start(node), src.end(node),
                       f"{np_name}.arange({src.segment(node.args[0])})")
        if is_rng(func.value):
            receiver = func.value
            yield Edit("rng-fresh", receiver.lineno, src.start(receiver), src.end(receiver),
                       f"{np_name}.random.default_rng()")
            yield Edit("rng-fixed", receiver.lineno, src.start(receiver), src.end(receiver),
                       f"{np_name}.random.default_rng(0)")


def condition_edits(src: Source, node: ast.AST) -> Iterator[Edit]:
    """The condition of an if, a while, a conditional expression or a comprehension's filter negated (one
    already negated is left to the classic not-drop)."""
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        kind = {ast.If: "if-negate", ast.While: "while-negate", ast.IfExp: "ifexp-negate"}[type(node)]
        tests = [node.test]
    elif isinstance(node, ast.comprehension):
        kind, tests = "filter-negate", node.ifs
    else:
        return
    for test in tests:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            yield Edit(kind, test.lineno, src.start(test), src.end(test), f"not {paren_text(src, test)}")


def block_text(src: Source, statements: list[ast.stmt], indent: int) -> str | None:
    """``statements`` moved left to ``indent`` columns, from the first one's column to the last one's end
    (the line's indent before the first is left to the edit); None when one shares its header's line."""
    first = statements[0]
    shift = first.col_offset - indent
    lines = split_lines(src.between(src.line_starts[first.lineno - 1], src.end(statements[-1])))
    if shift <= 0 or any(line.strip() and not line[:shift].isspace() for line in lines):
        return None
    return "".join(line[shift:] if line.strip() else line for line in lines)[indent:]


def unwrap_edits(src: Source, node: ast.AST) -> Iterator[Edit]:
    """A try replaced by its body, else and finally blocks (the handlers gone, the finally run only on
    success); a with replaced by its body (``target = expr`` kept for each ``as``, never entered)."""
    if isinstance(node, ast.Try):
        kind, head, blocks = "try-unwrap", [], [node.body, node.orelse, node.finalbody]
    elif isinstance(node, ast.With):
        kind, blocks = "with-unwrap", [node.body]
        head = [f"{src.segment(item.optional_vars)} = {src.segment(item.context_expr)}"
                for item in node.items if item.optional_vars is not None]
    else:
        return
    texts = [block_text(src, block, node.col_offset) for block in blocks if block]
    if all(text is not None for text in texts):
        body = f"\n{' ' * node.col_offset}".join([*head, *texts])
        yield Edit(kind, node.lineno, src.start(node), src.end(node), body)


# ----- variable replacement: a name read in a function replaced by another name of its scopes -----

def bound_names(function: ast.AST) -> dict[str, int]:
    """Name -> the line it is first bound on in ``function`` (its parameters on the def's line; assignments,
    loop and with targets, ``global`` names), without looking into nested functions or comprehensions."""
    found: dict[str, int] = {}
    arguments = function.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                *(a for a in (arguments.vararg, arguments.kwarg) if a)]:
        found.setdefault(arg.arg, function.lineno)
    stack = list(function.body) if isinstance(function.body, list) else [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found[node.id] = min(found.get(node.id, node.lineno), node.lineno)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                found[name] = min(found.get(name, node.lineno), node.lineno)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.ListComp
                      | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def defined_names(function: ast.AST) -> set[str]:
    """Names of the functions and classes defined in ``function``'s body (never swapped: they are code)."""
    return {node.name for node in ast.walk(function)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node is not function}


def comprehension_targets(node: ast.AST) -> dict[str, int]:
    return {name.id: node.lineno for generator in node.generators for name in ast.walk(generator.target)
            if isinstance(name, ast.Name)}


def statement_names(statement: ast.stmt) -> set[str]:
    """The names a statement reads or writes but does not call, its own (a compound statement's header, not
    its body)."""
    parts = [statement] if not hasattr(statement, "body") else [
        getattr(statement, name) for name in ("test", "iter", "target", "items", "value") if hasattr(statement, name)]
    nodes = [node for part in parts for item in (part if isinstance(part, list) else [part])
             for node in ast.walk(item)]
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    names = {node.id for node in nodes if isinstance(node, ast.Name)}
    return names - {node.id for node in nodes if id(node) in called and isinstance(node, ast.Name)}


def variable_edits(src: Source, tree: ast.AST, regions) -> Iterator[Edit]:
    """Each read of a local name (a parameter, a variable, a closure's variable, a comprehension's) in a
    graded body, replaced by every other such name that its statement reads or writes and that is bound on
    an earlier line; never ``self``, a function's name or the function called."""
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}

    def visit(node: ast.AST, scope: dict[str, int], code: set[str], near: set[str]) -> Iterator[Edit]:
        for child in ast.iter_child_nodes(node):
            inner, inner_code, inner_near = scope, code, near
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner, inner_code = {**scope, **bound_names(child)}, code | defined_names(child)
            elif isinstance(child, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
                inner = {**scope, **{name: 0 for name in comprehension_targets(child)}}
            if isinstance(child, ast.stmt):
                inner_near = statement_names(child)
            if (isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id in scope
                    and id(child) not in called and child.id not in NOT_SWAPPED | code
                    and in_regions(child, regions)):
                for other in sorted(near & set(scope) - NOT_SWAPPED - code - {child.id}):
                    if scope[other] < child.lineno:
                        yield Edit(f"var-{child.id}-{other}", child.lineno, src.start(child), src.end(child), other)
            yield from visit(child, inner, inner_code, inner_near)

    yield from visit(tree, {}, set(), set())


def extended_edits(src: Source, node: ast.AST, regions, np_name) -> Iterator[Edit]:
    """Every extended edit of one node but variable replacement (a statement's own, not its children's)."""
    if not in_regions(node, regions):
        return
    yield from unwrap_edits(src, node)
    yield from condition_edits(src, node)
    yield from loop_order_edits(src, node)
    yield from dtype_edits(src, node, np_name)
    if isinstance(node, ast.Attribute):
        yield from attribute_edits(src, node)
    elif isinstance(node, ast.Call):
        yield from call_swap_edits(src, node, np_name)
        yield from reduction_edits(src, node)
        yield from conversion_edits(src, node, np_name)
        yield from rng_edits(src, node, np_name)


# ----- the mutants -----

def one_line(lines: list[str], limit: int = 110) -> str:
    text = " ".join(line.strip() for line in lines)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def changed_lines(src: Source, edit: Edit, mutated: str) -> tuple[str, str]:
    """The lines an edit touches, before and after, each squeezed onto one line."""
    first, last = src.line_of(edit.start), src.line_of(max(edit.end - 1, edit.start))
    return one_line(src.lines[first - 1:last]), one_line(split_lines(mutated)[first - 1:first + edit.new.count("\n")])


def family_edits(family: str, tree: ast.AST, src: Source, regions) -> list[Edit]:
    """Every edit of one family in a file, in source order."""
    skipped = inside_fstrings(tree)
    if family == "classic":
        functions = enclosing_functions(tree)
        edits = {edit for node in ast.walk(tree) if id(node) not in skipped
                 for edit in classic_edits(src, node, regions, functions)}
    else:
        np_name = numpy_name(tree)
        edits = {edit for node in ast.walk(tree) if id(node) not in skipped
                 for edit in extended_edits(src, node, regions, np_name)}
        edits |= set(variable_edits(src, tree, regions))
    return sorted(edits, key=lambda e: (e.start, e.end, e.kind, e.new))


def definitions(tree: ast.AST, src: Source) -> list[tuple[int, int, str]]:
    """(start, end, qualified name) of every function and class of a file, outermost first: ``Tensor.exp.backward``
    for the rule nested in Tensor's exp."""
    found = []

    def visit(node: ast.AST, path: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = (*path, child.name)
                found.append((src.start(child), src.end(child), ".".join(inner)))
                visit(child, inner)
            else:
                visit(child, path)

    visit(tree, ())
    return found


def function_at(defined: list[tuple[int, int, str]], offset: int) -> str:
    """The qualified name of the innermost function or class holding byte ``offset`` ("" at a file's top)."""
    holding = [name for start, end, name in defined if start <= offset < end]
    return holding[-1] if holding else ""


def mutants_of(name: str, text: str) -> list[Mutant]:
    """Every valid first-order mutant of one solution file: the classic family's, then the extended's, each
    in source order. Ids name where the edit is, never its line: ``file:function:kind``, the function's qualified
    name (``tensor.py:Tensor.exp.backward:drop-stmt``), ``#n`` for the n-th edit of a kind in that function; an
    edit elsewhere in the file leaves them as they are."""
    tree, src, regions = ast.parse(text), Source(text), marker_regions(text)
    reference, seen, mutants = ast.dump(tree), {text}, []
    defined = definitions(tree, src)
    for family in FAMILIES:
        numbers: Counter = Counter()
        for edit in family_edits(family, tree, src, regions):
            function = function_at(defined, edit.start)
            numbers[function, edit.kind] += 1
            number = numbers[function, edit.kind]
            mutant_id = f"{name}:{function}:{edit.kind}" + (f"#{number}" if number > 1 else "")
            mutated = src.apply(edit)
            if mutated in seen or not compiles(mutated, name) or ast.dump(ast.parse(mutated)) == reference:
                continue
            seen.add(mutated)
            old, new = changed_lines(src, edit, mutated)
            mutants.append(Mutant(name, family, mutant_id, edit.kind, edit.line, old, new, mutated))
    return mutants


def compiles(text: str, name: str) -> bool:
    try:
        compile(text, name, "exec")
    except (SyntaxError, ValueError):
        return False
    return True
