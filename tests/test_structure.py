"""The shape of graders/: subpackages by job, no import cycles, a worker that imports nothing of the judge, and one
task table that the public tests' markers follow."""

from __future__ import annotations

import ast
import configparser
import os
import re
from pathlib import Path

import pytest

from graders import ops, paths
from graders.course import build
from graders.tasks import ORACLES, TASKS

GRADERS = paths.HERE
SUBPACKAGES = ("messages", "submission", "isolation", "judge", "worker", "results", "classgrade", "course",
               "integrations")
TOP_LEVEL = {"__init__", "__main__", "cli", "cli_class", "cli_options", "pipeline", "tasks", "ops",
             "paths", "lesson", "files", "entry", "keys"}


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
    ("base", ("graders", "graders.entry", "graders.paths", "graders.files", "graders.messages.*", "graders.tasks",
              "graders.ops", "graders.lesson", "graders.cli_options", "graders.keys"),
     "What every layer above may use and that knows nothing of grading: the guard against a graders/ in the working "
     "folder, where the files are, writing a file whole, every sentence, the task table, the op registry, the "
     "lesson's numbers, the checked values of the options that the command line and the pytest plugin share, and "
     "each student's key derived from the course's secret."),
    ("submission", ("graders.submission.*",),
     "A submission as files: how it is taken in (found, hashed, unpacked) and laid out in a scratch folder as the "
     "workers' packages; the isolation above builds its sandboxes from that layout."),
    ("isolation", ("graders.isolation.*",),
     "The worker's processes seen from outside: the handle that starts them, asks them and kills them, the uids they "
     "run as, their budgets, the sandbox and bubblewrap, the fork servers, /proc, and the worker's files read by the "
     "judge itself. Nothing here computes a grade, knows a verb or an oracle, or imports torch: the judge hands the "
     "handle where each request goes and the answers to its workers' oracle calls."),
    ("judge's numbers", ("graders.judge.reference", "graders.judge.checks.trajectory", "graders.judge.oracles",
                         "graders.judge.examples_cache", "graders.judge.numpy_baseline", "graders.judge.own_process"),
     "Values the judge computes itself, for inputs it chose, where no student code runs: torch's references, the "
     "loop's expected runs, the oracles' answers to a worker's questions, the kept draws and the numpy baseline, and "
     "the processes of the judge's own that compute some of them."),
    ("routing", ("graders.judge.routing",),
     "The judge's side of a worker's requests, handed to the isolation's handle as functions: the process each "
     "request goes to, read from the task table's routes, and the oracles' answers to the calls it makes."),
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


def test_every_package_of_graders_is_in_the_wheel():
    """Does pyproject.toml's [tool.setuptools] packages list every package of graders/ (a folder with __init__.py)?
    One left out is missing from the wheel, and an installed judge fails to import it (an editable install hides it)."""
    tomllib = pytest.importorskip("tomllib")
    listed = tomllib.loads((GRADERS.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    packages = {module_name(path) for path in GRADERS.rglob("__init__.py") if "given" not in path.parts}
    assert sorted(packages - set(listed)) == []


def test_the_worker_imports_nothing_of_the_rest_of_graders():
    """The worker package is copied into the sandbox alone: does any of its modules import graders.* outside it?"""
    outside = {name: sorted(m for m in GRAPH[name] if not m.startswith("graders.worker"))
               for name in MODULES if name.startswith("graders.worker")}
    assert {name: found for name, found in outside.items() if found} == {}
    absolute = [name for name in MODULES if name.startswith("graders.worker")
                for node in ast.walk(ast.parse(MODULES[name].read_text()))
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("graders")]
    assert absolute == [], "the worker imports itself relatively: in the sandbox it is the package `worker`"


def imported_names(name: str) -> set[str]:
    """Every module that module ``name`` imports by an import statement, at its top or inside a function, as written
    (absolute; a relative import as its graders module): graders' and any other library's."""
    tree = ast.parse(MODULES[name].read_text())
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    found |= {node.module for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and not node.level and node.module}
    return found | imports_of(name)


ISOLATION = sorted(name for name in MODULES if name.startswith("graders.isolation"))


def test_the_isolation_imports_nothing_of_the_judge_nor_torch():
    """Does any module of graders/isolation import (at its top or lazily) anything of graders.judge (the checks, the
    grade, the oracles, the reference, the strategies, the routing) or torch? The process handle is told where each
    request goes and how its oracle calls are answered (graders.judge.routing), and imports neither."""
    assert ISOLATION, "graders/isolation holds no module"
    reached = {name: sorted(m for m in imported_names(name) if m.startswith("graders.judge") or m == "graders.judge"
                            or m.split(".")[0] == "torch")
               for name in ISOLATION}
    assert {name: found for name, found in reached.items() if found} == {}


def test_the_import_finder_sees_a_lazy_import_of_torch_and_of_the_judge(tmp_path, monkeypatch):
    """Can the check above fail: does it see ``import torch`` and ``from graders.judge import oracles`` inside a
    function, and a relative import of the judge?"""
    path = tmp_path / "lazy.py"
    path.write_text("def f():\n    import torch.cuda\n    from graders.judge import oracles\n\n"
                    "def g():\n    from ..judge import reference\n")
    monkeypatch.setitem(MODULES, "graders.isolation.lazy", path)
    assert {"torch.cuda", "graders.judge", "graders.judge.oracles", "graders.judge.reference"} <= imported_names(
        "graders.isolation.lazy")


def verb_literals(source: str, names: set[str]) -> list[str]:
    """The string constants of ``source`` (docstrings left out) that are one of ``names``, as "line: text"."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [f"{node.lineno}: {node.value}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and node.value in names]


def test_the_isolation_spells_no_verb_and_no_oracle():
    """Does any module of graders/isolation spell a verb of the worker's table or an oracle's answer (unbroadcast,
    train_epoch, evaluate) in its code? Routing by verb is the judge's (graders.judge.routing); the handle sends a
    verb it is given, and its own batch, untouched. (Checked on a sample first: the check can fail.)"""
    names = set(worker_verbs()) | {answer for oracle in ORACLES for answer in oracle.answers}
    sample = '"""Sends op_backward."""\nROUTES = {"op_backward": 1}\nf("unbroadcast", "batch")\n'
    assert verb_literals(sample, names) == ["2: op_backward", "3: unbroadcast"]
    spelled = {name: found for name in ISOLATION for found in [verb_literals(MODULES[name].read_text(), names)]
               if found}
    assert spelled == {}


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
    """Is every task's marker used by at least one public test, so that `pytest exercises/ -m taskX_Y` runs some: a
    test written under it, or the cost and property tests of each op the task grades (exercises/tests/op_table.py,
    whose tests take their markers from it)?"""
    marker = f"pytest.mark.{task.marker}"
    written = any(marker in path.read_text() for path in (paths.EXERCISES / "tests").glob("test_*.py"))
    assert written or ops.of_task(task.id)


MESSAGES = sorted(path for name, path in MODULES.items() if name.startswith("graders.messages."))


def template_names(source: str) -> list[str]:
    """The names a module of graders/messages/ assigns at its top: its templates, each one's id."""
    return [target.id for node in ast.parse(source).body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)]


def test_every_message_template_is_defined_once_in_the_package_and_used():
    """Does graders/messages/ define each template once, across all its modules (a second definition of a name
    silently replaces the first in the one namespace, as once lost two templates), does that namespace hold every one
    (each module is imported by its __init__.py), and is each one used by some module of graders/?"""
    from graders import messages as msg

    assert len(MESSAGES) > 5 and all(path.parent.name == "messages" for path in MESSAGES)
    source = "\n".join(path.read_text() for path in MESSAGES)
    names = [name for path in MESSAGES for name in template_names(path.read_text())]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []
    assert [name for name in names if not hasattr(msg, name)] == [], "templates of a module __init__.py skips"
    elsewhere = "\n".join(path.read_text() for name, path in MODULES.items()
                          if not name.startswith("graders.messages"))
    within = {name: source.count(name) for name in names}
    unused = [name for name in names if name not in elsewhere and within[name] < 2]
    assert unused == [], "templates no module uses"


def test_a_template_defined_in_two_modules_is_seen():
    """Can the check above fail: does it see one name assigned in two sources, which one namespace would hide?"""
    names = template_names('A = "one"\nB = ("two "\n     "lines")\n') + template_names('A = "again"\n')
    assert sorted(name for name in set(names) if names.count(name) > 1) == ["A"]


# ----- every sentence a student or instructor reads lives in graders/messages/ -----

# The modules that say things to students and instructors, held to graders/messages/: the checks (hints, where an
# expected value came from, their tables of hints), the command line and what the class, results and integrations
# print or log.
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
    constant or table (a hint table's sentence): text that belongs in graders/messages/, as "line: literal".
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
    or a source, or keeps in a table from graders/messages/, so that the rule "every sentence lives in messages"
    holds (the names of what a check probes, "x.grad after step 2", stay beside the probe)?"""
    tables = path.parent.name == "checks"  # elsewhere a module-level text is a file's template (nbgrader_config.py)
    assert literal_sentences(path.read_text(), tables=tables) == [], "sentences to move into graders/messages/"
# ----- the routes: one per task, in the task table, and the index of where each task lives -----

# A worker package's name ("sub_tensor", "sub_all", "judge_epochs", or a part of one, f"sub_{module}"), which only the
# task table spells, and the layout that lays the packages out.
# (A "judge_" that names no oracle's package, the field judge_uid of a message say, is not one.)
ORACLE_NAMES = "|".join(o.package.removeprefix("judge_") for o in ORACLES)
PACKAGE_NAME = re.compile(rf"\bsub_|\bjudge_(?:$|(?:{ORACLE_NAMES})\b)")
SPELLS_PACKAGES = ("graders.tasks", "graders.submission.layout")


def package_literals(source: str) -> list[str]:
    """The string constants of ``source`` (f-strings' parts included, docstrings left out) that spell a worker
    package's name, as "line: text"."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [f"{node.lineno}: {node.value}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and PACKAGE_NAME.search(node.value)]


def test_the_literal_check_sees_a_package_name():
    """Can the check below fail: does it see a package named in a call, in an f-string and in a table, and leave a
    docstring, a comment and a name that merely contains the word alone?"""
    source = ('"""Runs in package sub_train."""\n'
              'def f(ctx, module):\n'
              '    """Asks sub_tensor."""\n'
              '    ctx.ask("graph", package="sub_tensor")  # sub_all in a comment\n'
              '    return f"sub_{module}", {"judge_epochs": 1}, "add_sub_neg"\n')
    assert package_literals(source) == ["4: sub_tensor", "5: sub_", "5: judge_epochs"]


def test_no_module_but_the_task_table_and_the_layout_spells_a_worker_package():
    """Does any module of graders/ other than the task table (graders/tasks.py) and the layout spell a worker package's
    name ("sub_*", "judge_*")? The checks take theirs from their task's route (``ctx.task.route.package``), the
    worker's handle derives its own from the table: a package is named once."""
    spelled = {name: found for name, path in MODULES.items() if name not in SPELLS_PACKAGES
               for found in [package_literals(path.read_text())] if found}
    assert spelled == {}


def worker_verbs() -> dict[str, str]:
    """The worker's table of verbs (graders/worker/main.py's ``verbs()``, read without importing it): each verb -> the
    module.function that answers it."""
    function = next(node for node in ast.parse(MODULES["graders.worker.main"].read_text()).body
                    if isinstance(node, ast.FunctionDef) and node.name == "verbs")
    table = next(node.value for node in ast.walk(function) if isinstance(node, ast.Return))
    return {key.value: ast.unparse(value) for key, value in zip(table.keys, table.values)}


def check_functions() -> dict[str, tuple[str, str]]:
    """The checks of the task table (``Task.check``, as graders/judge/checks/__init__.py's ``checks()`` resolves them,
    read without importing torch): each task id -> (the module of graders/judge/checks, the function that grades
    it)."""
    return {task.id: tuple(task.check.split(".")) for task in TASKS}


def test_every_check_of_the_task_table_is_a_function_of_its_module():
    """Does each task's ``check`` name a module of graders/judge/checks and a function defined at its top?"""
    for task_id, (module, function) in check_functions().items():
        tree = ast.parse(MODULES[f"graders.judge.checks.{module}"].read_text())
        assert function in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, task_id


def test_every_op_of_the_registry_is_graded_by_one_op_task_and_every_op_task_grades_ops():
    """Does the row of exactly one task list each op of graders/ops.py, does every name a row lists name an op of the
    registry, and is every task that lists ops checked by the op tasks' check (and every such task given ops)?"""
    listed = [name for task in TASKS for name in task.ops]
    assert sorted(listed) == sorted(op.name for op in ops.OPS), "each op in exactly one row, and no other name"
    for task in TASKS:
        assert bool(task.ops) == (task.check == "ops.rules"), task.id


# What sends a request to a worker, and the position of its verb: ctx.ask(verb, ...), timed_rung(ctx, verb, ...), and
# checkpoint's Folder(ctx, verb, ...), which opens the working folder of the process that answers it.
SENDERS = {"ask": 0, "timed_rung": 1, "Folder": 1}


class CheckSources:
    """What the modules of graders/judge/checks send and say, read from their source: for each definition at a module's
    top (module, name), the verbs it sends, the templates of graders/messages/ it names (``msg.X``) and the
    definitions of the checks it uses; so that what a task's check function reaches can be collected."""

    def __init__(self):
        folder = GRADERS / "judge" / "checks"
        trees = {path.stem: ast.parse(path.read_text()) for path in sorted(folder.glob("*.py"))
                 if path.stem != "__init__"}
        self.defined: dict[tuple[str, str], ast.AST] = {}
        scope: dict[str, dict[str, tuple[str, str]]] = {}
        for module, tree in trees.items():
            scope[module] = {}
            for node in tree.body:
                targets = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [
                    target.id for target in getattr(node, "targets", ()) if isinstance(target, ast.Name)]
                for name in targets:
                    self.defined[module, name] = node
                    scope[module][name] = (module, name)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graders.judge.checks."):
                    for alias in node.names:
                        scope[module][alias.asname or alias.name] = (node.module.rsplit(".", 1)[1], alias.name)
        self.uses = {key: self._direct(scope[key[0]], set(trees), node) for key, node in self.defined.items()}

    def _direct(self, scope, modules, node) -> tuple[set[str], set[str], set[tuple[str, str]]]:
        verbs, templates, uses = set(), set(), set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                name = getattr(sub.func, "attr", getattr(sub.func, "id", None))
                at = SENDERS.get(name)
                if at is not None and len(sub.args) > at and isinstance(sub.args[at], ast.Constant):
                    verbs.add(sub.args[at].value)
            if isinstance(sub, ast.Name) and sub.id in scope:
                uses.add(scope[sub.id])
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                if sub.value.id == "msg":
                    templates.add(sub.attr)
                elif sub.value.id in modules:  # loop.fit_values: another module of the checks
                    uses.add((sub.value.id, sub.attr))
        return verbs, templates, uses & set(self.defined)

    def reached(self, module: str, name: str) -> tuple[set[str], set[str]]:
        """The verbs and the templates that check ``module.name`` reaches through the definitions it uses; the
        templates base.py names, which every check shares (a death, a timeout, a wrong value, a hint's line), and
        the messages' functions (``header``, ``lines``) left out."""
        seen, todo = set(), [(module, name)]
        while todo:
            key = todo.pop()
            if key not in seen:
                seen.add(key)
                todo += self.uses[key][2]
        shared = set().union(*(uses[1] for key, uses in self.uses.items() if key[0] == "base"))
        verbs = set().union(*(self.uses[key][0] for key in seen))
        templates = set().union(*(self.uses[key][1] for key in seen)) - shared
        return verbs, {name for name in templates if name.isupper()}


def test_each_tasks_route_lists_exactly_the_verbs_its_check_sends():
    """Does each task's row in the task table list exactly the verbs its check sends (read from the checks' source:
    the check function and every definition it reaches)? Context.ask refuses, in any grade, a verb a route does not
    list; this holds the table to no verb more than the checks send."""
    sources, table = CheckSources(), check_functions()
    assert list(table) == [task.id for task in TASKS]
    sent = {task.id: sorted(sources.reached(*table[task.id])[0]) for task in TASKS}
    assert sent == {task.id: sorted(verb for route in task.routes for verb in route.verbs) for task in TASKS}


def test_a_request_that_its_tasks_route_does_not_list_is_refused_as_the_graders_bug():
    """Does Context hold every request of a check to its task's route: a verb the row does not list, another
    package than the route's, or an oracle's flag the route does not say is a ValueError (the grade reports it as
    the grader's own failure), and what the route lists passes?"""
    from graders.judge.checks.base import Context
    from graders.tasks import BY_ID

    def check(task_id: str, verb: str, **args) -> None:
        Context(task=BY_ID[task_id], worker=None).check_route(verb, args)

    check("1.2", "op_backward", package="sub_tensor", isolate_unbroadcast=True)
    check("1.4", "op_cost", package="sub_tensor", isolate_unbroadcast=False)
    check("5.4", "fit_end_to_end", package="sub_all")
    for task_id, verb, args in (("1.4", "graph", {"package": "sub_tensor"}),
                                ("5.4", "fit_end_to_end", {"package": "sub_train"}),
                                ("3.1", "optimizer_run", {}),
                                ("1.4", "op_backward", {"package": "sub_tensor", "isolate_unbroadcast": True}),
                                ("1.2", "op_backward", {"package": "sub_tensor"})):
        with pytest.raises(ValueError, match=f"task {task_id} sends"):
            check(task_id, verb, **args)


def test_every_routed_verb_is_a_verb_of_the_worker_and_of_the_answers_table():
    """Is every verb of the task table's routes one the worker answers (graders/worker/main.py) and one whose answer
    the judge parses (graders/judge/checks/answers.py), and is every verb of those tables routed by some task?"""
    from graders.judge.checks import answers

    routed = {verb for task in TASKS for route in task.routes for verb in route.verbs}
    assert routed == set(worker_verbs()) == set(answers.OF_VERB)


def test_a_verb_sent_with_and_without_an_oracle_needs_its_flag():
    """Can the table's routes be turned into each verb's oracle (graders.tasks.oracles_of_verbs): one sent with the
    judge's answers by some routes and without by others is routed by its request's flag, and a table that gives
    the worker no way to tell is refused?"""
    from graders.tasks import EPOCHS, UNBROADCAST, Task, oracles_of_verbs

    always, by_flag = oracles_of_verbs()
    assert set(always.values()) == {EPOCHS} and set(by_flag.values()) == {UNBROADCAST}
    assert {"op_backward", "op_cost"} == set(by_flag) and "fit_history" in always
    unflagged = (Task("9.1", "with", "train", 0, "loop.accumulation_and_clipping", ("clip",), oracle=EPOCHS),
                 Task("9.2", "without", "train", 0, "loop.accumulation_and_clipping", ("clip",)))
    with pytest.raises(ValueError, match="'clip' is sent with"):
        oracles_of_verbs(unflagged)


# ----- the index of where each task lives (docs/development.md), generated from the table and the code -----

DEVELOPMENT = paths.HERE.parent / "docs" / "development.md"
INDEX_BEGIN, INDEX_END = "<!-- task index: begin -->", "<!-- task index: end -->"
UPDATE_INDEX = os.environ.get("AUTOGRAD_LAB_UPDATE_INDEX") == "1"


def registry_templates() -> dict[str, set[str]]:
    """The templates of graders/messages/ that the op registry (graders/ops.py) gives each op task's ops (by the task
    whose row lists the op), read from its source: the ``msg.X`` of each ``Op(...)`` entry, and those of the
    registry's own definitions it names (a ``Cost``'s default hint, ``_mistakes``'s table)."""
    tree = ast.parse(MODULES["graders.ops"].read_text())
    defined = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}

    def named(node) -> set[str]:
        return {sub.attr for sub in ast.walk(node) if isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name) and sub.value.id == "msg"}

    table = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(target, ast.Name) and target.id == "OPS" for target in node.targets))
    found: dict[str, set[str]] = {}
    for entry in table.elts:
        templates = named(entry) | set().union(*(named(defined[sub.id]) for sub in ast.walk(entry)
                                                 if isinstance(sub, ast.Name) and sub.id in defined))
        found.setdefault(ops.task_of(entry.args[0].value), set()).update(templates)
    return found


def task_index() -> str:
    """The entries of the task index: for every task of the table, its stub, its public tests, its notebook check,
    its hidden check, its route (the package, the verbs and the worker's modules that answer them, the judge's
    answers it may ask for) and the templates of graders/messages/ its check can say (an op task's: those of its
    ops in the op registry too)."""
    sources, table, worker, registry = CheckSources(), check_functions(), worker_verbs(), registry_templates()
    visible = {node.name for node in ast.parse(MODULES["graders.course.cells.visible"].read_text()).body
               if isinstance(node, ast.FunctionDef)}
    public = sorted((paths.EXERCISES / "tests").glob("test_*.py"))
    entries = []
    for task in TASKS:
        module, function = table[task.id]
        tests = [path.name for path in public if f"pytest.mark.{task.marker}" in path.read_text()
                 or (ops.of_task(task.id) and "op_table" in path.read_text())]
        cell = f"task_{task.id.replace('.', '_')}"
        said = sorted(sources.reached(module, function)[1] | registry.get(task.id, set()))
        text = (f"- **{task.id}** {task.title} ({task.points} points): {_stubs_text(task)}; public tests "
                f"`{task.marker}` in `exercises/tests/`: {', '.join(f'`{name}`' for name in tests)}; "
                + (f"notebook check `{cell}` in `graders/course/cells/visible.py`; " if cell in visible else
                   f"notebook check `{cell}` made from `graders/ops.py`; " if ops.of_task(task.id) else "")
                + f"hidden check `{function}` in `graders/judge/checks/{module}.py`; "
                + "; ".join(_route_text(route, worker) for route in task.routes)
                + f"; messages {', '.join(f'`{name}`' for name in said)}.")
        entries.append(_wrapped(text))
    return "\n".join(entries)


def _wrapped(text: str, width: int = 118) -> str:
    """``text`` filled to ``width``, a code span never broken across lines (a search for it finds it whole)."""
    lines, line = [], ""
    for word in re.findall(r"(?:`[^`]*`|[^\s`])+", text):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = "  " + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


STUB = re.compile(r'NotImplementedError\("([^"]*)"\)')
STUB_PART = re.compile(r"Task (\d\.\d): ([^;]+)")  # "Task 3.1: SGD step; Task 3.2: momentum" names two


def _stubs_text(task) -> str:
    """A task's stubs as the index says them: what each of its stubs in exercises/ raises, each the head of its
    solution's section in solutions/, or that it has none of its own (2.2's seeding is written in 2.1's backward)."""
    messages = [message for message in STUB.findall((paths.EXERCISES / f"{task.module}.py").read_text())
                if task.id in dict(STUB_PART.findall(message))]
    solution = (paths.SOLUTIONS / f"{task.module}.py").read_text()
    heads = {build.stub_label(match["label"]) for line in solution.splitlines() if (match := build.BEGIN.match(line))}
    assert set(messages) <= heads, task.id
    if not messages:
        return f"no stub of its own in `exercises/{task.module}.py`"
    whats = [dict(STUB_PART.findall(message))[task.id] for message in messages]
    return (f"stubs in `exercises/{task.module}.py` ({', '.join(f'`Task {task.id}: {what}`' for what in whats)}; "
            f"each a `### BEGIN SOLUTION` in `solutions/{task.module}.py`)")


def _route_text(route, worker: dict[str, str]) -> str:
    """A route as the index says it: its package, its verbs by the worker's module that answers them, its oracle."""
    answered: dict[str, list[str]] = {}
    for verb in route.verbs:
        answered.setdefault(worker[verb].split(".")[0], []).append(f"`{verb}`")
    text = f"route `{route.package}`: " + ", ".join(
        f"{', '.join(verbs)} (`graders/worker/{module}.py`)" for module, verbs in answered.items())
    if route.oracle:
        text += f", asking the judge for {', '.join(f'`{a}`' for a in route.oracle.answers)} (`{route.oracle.package}`)"
    return text


def test_the_task_index_of_the_docs_is_the_task_tables():
    """Is docs/development.md's index of where each task lives what the task table and the code say now (its
    stub, public tests, notebook and hidden checks, route and messages), so that one search of a task's id finds
    them all? ``AUTOGRAD_LAB_UPDATE_INDEX=1`` rewrites it."""
    text = DEVELOPMENT.read_text()
    found = re.search(f"{INDEX_BEGIN}\n(.*?){INDEX_END}", text, re.DOTALL)
    assert found, f"docs/development.md lacks {INDEX_BEGIN} ... {INDEX_END}"
    written, expected = found[1], task_index() + "\n"
    if UPDATE_INDEX and written != expected:
        DEVELOPMENT.write_text(text[:found.start(1)] + expected + text[found.end(1):])
        written = expected
    assert written == expected, "the task index is stale: run with AUTOGRAD_LAB_UPDATE_INDEX=1 to rewrite it"
