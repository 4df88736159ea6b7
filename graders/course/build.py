"""Generate the student's stubs from solutions/ (nbgrader's marker rules).

Each region between ``### BEGIN SOLUTION (Task 5.2: evaluate)`` and
``### END SOLUTION`` becomes one line at the marker's indentation:
``raise NotImplementedError("Task 5.2: evaluate")``. A backward rule's marker names
its op instead of a task, ``### BEGIN SOLUTION (op matmul: backward of @)``, and its
stub names the task whose row of graders/tasks.py lists that op:
``raise NotImplementedError("Task 1.4: backward of @")``, so an op task's id is
written in its row alone. Everything else, docstrings with the math included, is
copied as it is.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from graders import ops

BEGIN = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION \((?P<label>(?:Task \d\.\d|op \w+:).*)\)[ \t]*$")
OP_LABEL = re.compile(r"^op (?P<op>\w+): (?P<title>.+)$")
END = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")
ANY_MARKER = re.compile(r"###\s*(BEGIN|END) SOLUTION")


class MarkerError(ValueError):
    """A solution file whose markers do not pair up, or name no task id or an op no task grades."""


def stub_label(label: str) -> str:
    """The stub's message for a marker's ``label``: "Task X.Y: ..." as it is, and "op NAME: ..." as "Task X.Y: ..."
    with the id of the task that grades op NAME. KeyError for an op that no row of graders/tasks.py lists."""
    named = OP_LABEL.match(label)
    return label if named is None else f"Task {ops.task_of(named['op'])}: {named['title']}"


def stub_source(text: str, filename: str = "<source>") -> str:
    """The stub version of one solution file's text."""
    out, region_start = [], None
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if region_start is None and begin:
            region_start = number
            try:
                label = stub_label(begin["label"])
            except KeyError as error:
                raise MarkerError(f"{filename}:{number}: {error.args[0]}: list it in its task's row (op_task)") \
                    from None
            out.append(f'{begin["indent"]}raise NotImplementedError("{label}")\n')
        elif region_start is not None and end:
            region_start = None
        elif ANY_MARKER.search(line):
            raise MarkerError(f"{filename}:{number}: unexpected or malformed marker: {line.strip()!r} "
                              "(expected '### BEGIN SOLUTION (Task X.Y: title)', or '(op NAME: title)' for a backward "
                              "rule, ... '### END SOLUTION')")
        elif region_start is None:
            out.append(line)
    if region_start is not None:
        raise MarkerError(f"{filename}:{region_start}: BEGIN SOLUTION without END SOLUTION")
    return "".join(out)


def expected_exercises(solutions_dir: Path) -> dict[str, str]:
    """File name to the text exercises/ must hold for it."""
    return {path.name: stub_source(path.read_text(), str(path))
            for path in sorted(Path(solutions_dir).glob("*.py"))}


STUB_RAISE = re.compile(r'raise NotImplementedError\("Task \d\.\d[^"]*"\)')


class WouldOverwriteWork(Exception):
    """Files that hold work (a task's stub replaced): ``args[0]`` is their names."""


def _stubs_by_function(text: str) -> list[tuple[str, str]]:
    """Each stub's ``raise NotImplementedError("Task ...")`` of ``text`` as (its text, the qualified name of the
    function that holds it: ``Tensor.exp.backward``). SyntaxError where ``text`` does not parse."""
    found = []

    def visit(node, path):
        for child in ast.iter_child_nodes(node):
            inner = [*path, child.name] if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                              ast.ClassDef)) else path
            if isinstance(child, ast.Raise):
                raised = ast.get_source_segment(text, child) or ""
                for stub in STUB_RAISE.findall(raised):
                    found.append((stub, ".".join(path)))
            visit(child, inner)

    visit(ast.parse(text), [])
    return found


def _functions(text: str) -> set[str]:
    """The qualified names of every function and class of ``text``."""
    names = set()

    def visit(node, path):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(".".join([*path, child.name]))
                visit(child, [*path, child.name])
            else:
                visit(child, path)

    visit(ast.parse(text), [])
    return names


def holds_work(current: str, stub: str) -> bool:
    """Would writing ``stub`` over ``current`` lose work? Yes when a ``raise NotImplementedError("Task ...")`` of
    the stub is missing from the current text in a function the current text has: a task was filled in there. A
    stub in a function the file does not have yet (a new task: its op, its method) loses nothing; a current text
    that does not parse is taken to hold work."""
    present = set(STUB_RAISE.findall(current))
    missing = [(raised, function) for raised, function in _stubs_by_function(stub) if raised not in present]
    if not missing:
        return False
    try:
        functions = _functions(current)
    except SyntaxError:
        return True
    return any(function in functions for _, function in missing)


def build_exercises(solutions_dir: Path, out_dir: Path, *, force: bool = False) -> list[str]:
    """Write the stubs into ``out_dir``; returns the names of the files that changed. Raises WouldOverwriteWork,
    writing nothing, where a file to replace holds a filled-in task, unless ``force``."""
    out_dir = Path(out_dir)
    expected = expected_exercises(solutions_dir)
    changed = {name: text for name, text in expected.items()
               if not (out_dir / name).exists() or (out_dir / name).read_text() != text}
    work = [name for name, text in changed.items()
            if (out_dir / name).exists() and holds_work((out_dir / name).read_text(), text)]
    if work and not force:
        raise WouldOverwriteWork(work)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in changed.items():
        (out_dir / name).write_text(text)
    return list(changed)


def out_of_sync(solutions_dir: Path, exercises_dir: Path) -> list[str]:
    """Names of the generated files that regenerating would change."""
    exercises_dir = Path(exercises_dir)
    return [name for name, text in expected_exercises(solutions_dir).items()
            if not (exercises_dir / name).exists() or (exercises_dir / name).read_text() != text]
