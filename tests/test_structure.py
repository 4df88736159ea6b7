"""The shape of graders/: subpackages by job, no import cycles, a worker that imports nothing of the judge, and one
task table that the public tests' markers follow."""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

import pytest

from graders import paths
from graders.tasks import TASKS

GRADERS = paths.HERE
SUBPACKAGES = ("judge", "worker", "results", "classgrade", "course", "integrations")
TOP_LEVEL = {"__init__", "__main__", "cli", "cli_class", "cli_options", "pipeline", "tasks", "messages", "paths",
             "lesson", "files", "entry"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(GRADERS.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in GRADERS.rglob("*.py") if "given" not in path.parts}


def imports_of(name: str) -> set[str]:
    """The graders modules that module ``name`` imports, at its top or inside a function (both count: a lazy
    import still ties the two modules together)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found |= {f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module
                      for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {module for module in found if module in MODULES and module != name}


GRAPH = {name: imports_of(name) for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


# The floors of graders/, lowest first: a module may import from its own layer and the layers below it, never from
# one above. An entry names a module, or with ".*" a package and everything in it; a module's layer is that of the
# entry naming it exactly, else of the longest package entry around it.
LAYERS = (
    ("worker", ("graders.worker.*",),
     "The untrusted side: copied into the sandbox alone, it runs student code in its own process, so it imports "
     "nothing of graders outside itself, and the judge takes from it only its wire format (protocol.py)."),
    ("base", ("graders", "graders.entry", "graders.paths", "graders.files", "graders.messages", "graders.tasks",
              "graders.lesson", "graders.cli_options"),
     "What every layer above may use and that knows nothing of grading: the guard against a graders/ in the working "
     "folder, where the files are, writing a file whole, every sentence, the task table, the lesson's numbers, and "
     "the checked values of the options that the command line and the pytest plugin share."),
    ("submission", ("graders.judge.layout", "graders.judge.intake"),
     "A submission as files: how it is taken in (found, hashed, unpacked) and laid out in a scratch folder as the "
     "workers' packages; the isolation below builds its sandboxes from that layout."),
    ("isolation", ("graders.judge.uids", "graders.judge.processes", "graders.judge.budget", "graders.judge.bubblewrap",
                   "graders.judge.sandbox", "graders.judge.forkserver", "graders.judge.work_files"),
     "The worker's processes seen from outside: the uids they run as, their budgets, the sandbox and bubblewrap, "
     "the fork servers, /proc, and the worker's files read by the judge itself. Nothing here computes a grade."),
    ("judge's numbers", ("graders.judge.reference", "graders.judge.checks.trajectory", "graders.judge.oracles",
                         "graders.judge.examples_cache", "graders.judge.yardstick"),
     "Values the judge computes itself, for inputs it chose, where no student code runs: torch's references, the "
     "loop's expected runs, the oracles' answers to a worker's questions, the kept draws and numpy's yardstick."),
    ("worker's handle", ("graders.judge.worker_process",),
     "The judge's handle on a worker: starts it in its sandbox under its budgets, sends each verb to the worker or "
     "answers it with the judge's oracles, times and kills it."),
    ("grading", ("graders.judge.*", "graders.judge.checks.*"),
     "The checks (one module per group of tasks) with the strategies that draw their inputs, the grade that runs "
     "every task's ladder on a submission, and doctor, which says what isolation a grade gets on this machine."),
    ("results", ("graders.results.*",),
     "The canonical result of one graded submission and every view rendered from it: the table, Markdown, JUnit, "
     "GitHub Classroom's runner result, the loss picture, and the files they are written to."),
    ("pipeline", ("graders.pipeline",),
     "One submission's way through the layers below: intake, the grade, the canonical result; every way of "
     "grading a submission (the command, a pool's judge, Gradescope, nbgrader, pytest) goes through it."),
    ("class and course", ("graders.classgrade.*", "graders.course.*"),
     "What an instructor runs for a whole class: grading every submission by a pool of judges into a gradebook, "
     "and making the course (the stubs, the student bundle, the notebook's text, the templates' files)."),
    ("integrations", ("graders.integrations.*",),
     "Where grades go and where grading runs for others: nbgrader (its course, its trusted step and the jailed "
     "kernel), Gradescope, and the pytest plugin; each calls down into the pipeline, the class and the course."),
    ("command line", ("graders.cli", "graders.cli_class", "graders.__main__"),
     "The autograd-lab command: parses arguments and dispatches to every layer below; nothing imports it."),
)


def layer_of(name: str, layers=LAYERS) -> int:
    """The index in ``layers`` of module ``name``'s floor: an entry naming it exactly, else the longest package entry
    (``pkg.*``) around it; KeyError for a module no entry places."""
    exact = {entry: i for i, (_, entries, _) in enumerate(layers) for entry in entries if not entry.endswith(".*")}
    if name in exact:
        return exact[name]
    around = [(len(entry), i) for i, (_, entries, _) in enumerate(layers) for entry in entries
              if entry.endswith(".*") and (name == entry[:-2] or name.startswith(entry[:-1]))]
    if not around:
        raise KeyError(name)
    return max(around)[1]


def arrows_up(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Every import of ``graph`` from a module to one on a higher floor, as "importer (its layer) -> imported (its
    layer)"."""
    return [f"{name} ({layers[layer_of(name, layers)][0]}) -> {other} ({layers[layer_of(other, layers)][0]})"
            for name in sorted(graph) for other in sorted(graph[name])
            if layer_of(other, layers) > layer_of(name, layers)]


def test_the_floor_check_sees_an_arrow_up():
    """Can the floor check below fail: does it see a low module importing a high one, and nothing in a module that
    imports down or beside itself? Does an exact entry win over the package around it?"""
    layers = (("low", ("p.low.*", "p.high.exception"), ""), ("high", ("p.high.*",), ""))
    graph = {"p.low.a": {"p.high.b"}, "p.low.c": {"p.low.a", "p.high.exception"}, "p.high.b": {"p.low.a"},
             "p.high.exception": set()}
    assert arrows_up(graph, layers) == ["p.low.a (low) -> p.high.b (high)"]
    assert layer_of("p.high", layers) == 1 and layer_of("p.high.exception", layers) == 0
    with pytest.raises(KeyError):
        layer_of("p.elsewhere", layers)


def test_every_module_has_a_floor_and_every_floor_has_a_module():
    """Does the table of layers place every module of graders/ (a new module must be given its floor), and does each
    of its entries still name a module (a table that has drifted from the tree is no floor)?"""
    unplaced = []
    for name in MODULES:
        try:
            layer_of(name)
        except KeyError:
            unplaced.append(name)
    assert unplaced == []
    entries = [entry for _, entries, _ in LAYERS for entry in entries]
    assert sorted(entry for entry in set(entries) if entries.count(entry) > 1) == []
    stale = [entry for _, entries, _ in LAYERS for entry in entries
             if not any(name == entry.removesuffix(".*") or name.startswith(entry.removesuffix("*"))
                        for name in MODULES)]
    assert stale == []


def test_no_module_imports_from_a_floor_above_its_own():
    """Does any module of graders/ import (at its top or lazily) a module of a higher layer of LAYERS? A lower layer
    must never need a higher one: the isolation no grading, the results no integration, the judge no command."""
    assert arrows_up(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle():
    """Can the cycle check below fail: does it see a -> b -> c -> a, and nothing in a chain?"""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_graders_has_no_import_cycle():
    """Does any group of graders modules import each other in a circle (lazy imports included)?"""
    assert cycles(GRAPH) == []


def test_every_module_lives_in_the_subpackage_of_its_job():
    """Is every module of graders/ either one of the few top-level ones or inside a subpackage by job?"""
    misplaced = [name for name in MODULES if name.count(".") == 1 and name.split(".")[1] not in TOP_LEVEL
                 and name.split(".")[1] not in SUBPACKAGES]
    assert misplaced == []
    assert all((GRADERS / package / "__init__.py").is_file() for package in SUBPACKAGES)


def test_the_worker_imports_nothing_of_the_rest_of_graders():
    """The worker package is copied into the sandbox alone: does any of its modules import graders.* outside it?"""
    outside = {name: sorted(m for m in GRAPH[name] if not m.startswith("graders.worker"))
               for name in MODULES if name.startswith("graders.worker")}
    assert {name: found for name, found in outside.items() if found} == {}
    absolute = [name for name in MODULES if name.startswith("graders.worker")
                for node in ast.walk(ast.parse(MODULES[name].read_text()))
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("graders")]
    assert absolute == [], "the worker imports itself relatively: in the sandbox it is the package `worker`"


def test_the_judge_takes_only_the_wire_format_from_the_worker():
    """Does anything outside graders/worker import the untrusted side's code, other than its wire format?"""
    reached = {name: sorted(m for m in GRAPH[name] if m.startswith("graders.worker") and m != "graders.worker.protocol")
               for name in MODULES if not name.startswith("graders.worker")}
    assert {name: found for name, found in reached.items() if found} == {}


def test_the_public_tests_have_one_marker_per_task_named_as_the_task_table_names_it():
    """Does exercises/pytest.ini declare exactly the task table's markers, each with its task's id and title?"""
    ini = configparser.ConfigParser()
    ini.read(paths.EXERCISES / "pytest.ini")
    declared = dict(line.split(":", 1) for line in ini["pytest"]["markers"].strip().splitlines())
    declared = {name.strip(): text.strip() for name, text in declared.items() if name.strip().startswith("task")}
    assert list(declared) == [task.marker for task in TASKS]
    for task in TASKS:
        assert declared[task.marker].startswith(f"Task {task.id}, {task.title}"), declared[task.marker]


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.id)
def test_every_task_has_public_tests_under_its_marker(task):
    """Is every task's marker used by at least one public test, so that `pytest exercises/ -m taskX_Y` runs some?"""
    marker = f"pytest.mark.{task.marker}"
    assert any(marker in path.read_text() for path in (paths.EXERCISES / "tests").glob("test_*.py"))


def test_every_message_template_is_defined_once_and_used():
    """Does messages.py define each template once (a second definition of a name silently replaces the first, as
    once lost two templates), and is each one used by some module of graders/?"""
    source = (GRADERS / "messages.py").read_text()
    names = [target.id for node in ast.parse(source).body if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name)]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []
    elsewhere = "\n".join(path.read_text() for name, path in MODULES.items() if name != "graders.messages")
    within = {name: source.count(name) for name in names}
    unused = [name for name in names if name not in elsewhere and within[name] < 2]
    assert unused == [], "templates no module uses"


# ----- every sentence a student or instructor reads lives in graders/messages.py -----

# The modules that say things to students and instructors, held to messages.py: the checks (hints, where an expected
# value came from, their tables of hints), the command line and what the class, results and integrations print or
# log.
SPEAKERS = sorted({*GRADERS.glob("judge/checks/*.py"), *GRADERS.glob("cli*.py"), *GRADERS.glob("classgrade/*.py"),
                   *GRADERS.glob("integrations/*.py"), *GRADERS.glob("results/*.py")})
SAYING = {"print", "echo", "secho", "info", "warning", "error", "critical"}  # calls whose text a person reads
SAID_AS = {"hint", "source"}  # keywords whose text a failure message says
SENTENCE_WORDS = 4  # a literal with this many English words is a sentence, or a piece of one


def english_words(text: str) -> int:
    """The words of ``text`` that read as English (code, paths, formats and numbers do not): a literal's words."""
    return sum(bool(re.fullmatch(r"[A-Za-z][a-z]*('[a-z]+)?", token.strip(".,;:!?()\"'`")))
               for token in text.split())


def literal_text(node: ast.AST) -> str | None:
    """The text of a string literal, an f-string's with ``{}`` for each value; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return None


def literal_sentences(source: str, *, tables: bool = True) -> list[str]:
    """Each string literal (or f-string) of ``source`` with SENTENCE_WORDS English words or more that is printed or
    logged (print, click's echo, a logger), passed as hint= or source=, or, with ``tables``, held in a module-level
    constant or table (a hint table's sentence): text that belongs in graders/messages.py, as "line: literal".
    Docstrings are not said to anyone."""
    tree = ast.parse(source)
    said = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            said += node.args if name in SAYING else []
            said += [keyword.value for keyword in node.keywords if keyword.arg in SAID_AS]
    if tables:
        said += [node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value]
    found = []
    for expression in said:
        parts = {id(part) for node in ast.walk(expression) if isinstance(node, ast.JoinedStr) for part in node.values}
        for node in ast.walk(expression):
            text = None if id(node) in parts else literal_text(node)
            if text is not None and english_words(text) >= SENTENCE_WORDS:
                found.append(f"{node.lineno}: {text!r}")
    return sorted(set(found))


def test_the_sentence_finder_finds_a_sentence():
    """Can the check below fail: does it find a sentence printed, logged, passed as a hint or a source, or kept in a
    module's table, and pass a template of messages, a short phrase, code and docstrings?"""
    source = '''"""A module's docstring, which nobody is shown by a grade."""
HINTS = {"x": "the gradient for x was multiplied by x itself"}
NAMES = ("x.sum(axis, keepdims)", "x.relu() at x = 0")


def check(ctx, out):
    """A function's docstring, which nobody is shown either."""
    print(f"{out}: wrote {len(out)} file(s) to the folder")
    print(msg.EXERCISES_IN_SYNC.format(out=out), file=sys.stderr)
    log.info("autograd-lab: grading the files in %s", out)
    ctx.compare(1, 2, "gradient for x in x + y", source="the chain rule by hand", hint=msg.HINT_ADD)
    ctx.compare(1, 2, "gradient for y", source=msg.SOURCE_TORCH, hint="sum it back to the input's shape")
    ctx.fail("the value train_epoch returned", "a str", "a float")
'''
    assert [line.split(":")[0] for line in literal_sentences(source)] == ["10", "11", "12", "2", "8"]
    assert [line.split(":")[0] for line in literal_sentences(source, tables=False)] == ["10", "11", "12", "8"]
    assert english_words("x.relu() at x = 0") == 2 and english_words("{out}: wrote {count} file(s)") == 1


@pytest.mark.parametrize("path", SPEAKERS, ids=lambda path: path.relative_to(GRADERS).as_posix())
def test_what_a_module_says_to_a_person_comes_from_messages(path):
    """Does each module that speaks to students or instructors take every sentence it prints, logs, passes as a hint
    or a source, or keeps in a table from graders/messages.py, so that the rule "every sentence lives in messages"
    holds (the names of what a check probes, "x.grad after step 2", stay beside the probe)?"""
    tables = path.parent.name == "checks"  # elsewhere a module-level text is a file's template (nbgrader_config.py)
    assert literal_sentences(path.read_text(), tables=tables) == [], "sentences to move into graders/messages.py"
