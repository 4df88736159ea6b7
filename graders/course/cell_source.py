"""The notebook's code cells are read from real Python (graders/course/cells/), so ruff checks what they run.

A cell is either a function's body, dedented (a visible check, a worked example), or the part of a module between
a ``# BEGIN CELL`` and an ``# END CELL`` line (the setup cell). Comment lines count: those above a body's first
statement, and those indented under its last one, are the cell's too.
"""

from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path
from textwrap import dedent
from types import FunctionType, ModuleType

BEGIN = "# BEGIN CELL"
END = "# END CELL"


@functools.cache
def _parsed(path: str) -> tuple[list[str], dict[str, ast.FunctionDef]]:
    text = Path(path).read_text()
    functions = {node.name: node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)}
    return text.splitlines(), functions


def body_of(function: FunctionType) -> str:
    """The source of a top-level function's body, dedented, ending with a newline."""
    lines, functions = _parsed(inspect.getsourcefile(function))
    node = functions[function.__name__]
    start, end = node.body[0].lineno - 1, node.body[-1].end_lineno  # 0-based: lines[start:end]
    while start > node.lineno and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    while end < len(lines) and lines[end].startswith((" ", "\t")) and lines[end].lstrip().startswith("#"):
        end += 1
    return dedent("\n".join(lines[start:end])) + "\n"


def marked_part(module: ModuleType) -> str:
    """The lines of ``module`` between its one ``# BEGIN CELL`` line and its one ``# END CELL`` line."""
    lines = Path(inspect.getsourcefile(module)).read_text().splitlines()
    begins = [number for number, line in enumerate(lines) if line == BEGIN]
    ends = [number for number, line in enumerate(lines) if line == END]
    if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
        raise ValueError(f"got {begins=} and {ends=} (line indices) in {module.__name__}, "
                         f"expected one {BEGIN!r} line, then one {END!r}")
    return "\n".join(lines[begins[0] + 1 : ends[0]]) + "\n"
