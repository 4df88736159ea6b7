"""Report a stub that is still a stub as one line, naming the task to write.

A stub raises ``NotImplementedError("Task 1.4: backward of @")``. When a test
fails on one, the traceback says nothing new, so the report becomes:

    Task 1.4 not attempted yet: backward of @ (write it in tensor.py)

and, when a test of one task runs into another task's stub:

    Task 5.1 needs Task 2.1 (backward, the engine), not attempted yet (write it in tensor.py)

A task waiting on a stub is one failure: its other tests that run into a stub are reported as skipped.
"""

import importlib.util
import re
from pathlib import Path

import pytest

STUB = re.compile(r"Task (\d\.\d): ([^;]+)")  # "Task 3.1: SGD step; Task 3.2: ..." names two


def task_of(item) -> str | None:
    """The task id of a test, from its marker: task1_4 -> "1.4"."""
    for mark in item.iter_markers():
        if re.fullmatch(r"task\d_\d", mark.name):
            return mark.name[len("task"):].replace("_", ".")
    return None


def not_attempted(task: str | None, excinfo) -> str:
    """The one line for a test of ``task`` that ran into the stub that raised ``excinfo``."""
    stubs = dict(STUB.findall(str(excinfo.value)))
    where = f"(write it in {excinfo.traceback[-1].path.name})"
    if task is None or task in stubs:
        task = task or next(iter(stubs))
        return f"Task {task} not attempted yet: {stubs[task]} {where}"
    other, title = next(iter(stubs.items()))
    return f"Task {task} needs Task {other} ({title}), not attempted yet {where}"


FRAME = re.compile(r"^(exercises/(?!tests/)\w+\.py):(\d+): in ", re.M)  # a frame in one of your files
SYNTAX_FRAME = re.compile(r'File "[^"]*/(exercises/\w+\.py)", line (\d+)')
ERROR = re.compile(r"^E\s+(\w+(?:Error|Exception|Exit)\b.*)$", re.M)
AUTODIFF = ("torch", "jax", "autograd", "tensorflow")
_SEEN_IMPORT_ERRORS: set = set()


def import_error_line(text: str) -> str | None:
    """One line for a test file that could not be imported because one of your files raised on import: where,
    and what. None when the cause is not in your files (the full report is kept then)."""
    frames = SYNTAX_FRAME.findall(text) or FRAME.findall(text)  # a syntax error's own place, or the last frame
    errors = ERROR.findall(text)
    frames = [(path, line) for path, line in frames if path != "exercises/__init__.py"]
    if not frames or not errors:
        return None
    (path, line), error = frames[-1], errors[-1]
    name = path.split("/")[-1]
    said = f"{name}, line {line}, does not import: {error}"
    if "No module named" in error and any(f"'{lib}" in error for lib in AUTODIFF) and name != "torch_loop.py":
        said += f". {name} may use numpy and the standard library only (README.md, 'The rules the graders hold you to')"
    return said


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A test file that cannot be imported, because one of your files raises on import (a syntax error, a missing
    module), is reported as one line naming your file and line, once; the other test files it stops say so."""
    report = (yield).get_result()
    if report.failed and report.longrepr is not None:
        line = import_error_line(str(report.longrepr))
        if line is not None:
            report.longrepr = line if line not in _SEEN_IMPORT_ERRORS else f"{line.split(':')[0]} (above)"
            _SEEN_IMPORT_ERRORS.add(line)


LAST = ("test_properties.py", "test_cost.py")  # after the worked examples, in this order


def pytest_collection_modifyitems(items):
    """The worked examples run before the property tests and the cost tests, so a task not started is reported
    at its first worked example."""
    items.sort(key=lambda item: LAST.index(item.path.name) + 1 if item.path.name in LAST else 0)  # stable


KEY_OF_ID = ("KeyError: {key} at {where}. The key is id() of a node (a memory address): that node's gradient was "
             "looked up before any was stored for it. Walk the nodes in reverse topological order (the output "
             "first, each node only after every node that uses it), and only the nodes a gradient reaches (a "
             "constant, which does not require grad, gets none).")


def key_of_id(error: KeyError) -> str | None:
    """The key of a KeyError when it is an id() (a number of nine or more digits), else None."""
    key = str(error.args[0]) if error.args else ""
    return key if re.fullmatch(r"\d{9,}", key) else None


_REPORTED: set = set()  # the tasks already reported as running into a stub in this run


@pytest.hookimpl(hookwrapper=True)  # old-style wrapper, so that older pytest versions accept it too
def pytest_runtest_makereport(item, call):
    """A test that runs into a stub fails with one line. The first test of a task that does so says which stub;
    the task's other tests that run into a stub are skipped, so each task still waiting on a stub is one
    failure."""
    report = (yield).get_result()
    error = call.excinfo
    if report.failed and error is not None and error.errisinstance((ImportError, SyntaxError)):
        report.longrepr = import_error_line(str(report.longrepr)) or report.longrepr
    elif report.failed and error is not None and error.errisinstance(KeyError) and key_of_id(error.value):
        entry = error.traceback[-1]
        report.longrepr = KEY_OF_ID.format(key=key_of_id(error.value), where=f"{Path(entry.path).name}:"
                                                                             f"{entry.lineno + 1}")
    elif (report.failed and error is not None and error.errisinstance(NotImplementedError)
            and STUB.match(str(error.value))):
        task = task_of(item)
        line = not_attempted(task, error)
        if task is not None and task in _REPORTED:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"{line.split(' (')[0]} (above)")
        else:
            _REPORTED.add(task)
            report.longrepr = line


BEYOND = ("These tests are worked examples. The graded run checks more: every op against torch.autograd, to "
          "float64 precision (a rule that approximates with finite differences is not exact enough), on "
          "random inputs of many shapes, each backward rule's cost on large inputs (a Python loop over the "
          "elements is right but too slow), the optimizers against torch.optim, and the loop on the lesson's "
          "full result. README.md, 'The rules the graders hold you to'.")


NO_TORCH = ("Task 6's tests were skipped: torch is not installed. Tasks 1 to 5 need numpy only; when you reach "
            "task 6: pip install -r exercises/requirements-torch.txt (README.md, 'Set up').")


def cuda_build_unasked() -> str | None:
    """A warning when the torch installed is the CUDA build (its NVIDIA libraries beside it, over 2 GB) on a
    machine with no NVIDIA GPU: the CPU build does every task. Read from the installed packages' metadata, so
    torch is not imported for it. None otherwise."""
    import glob
    from importlib import metadata

    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
    if "+cpu" in version or glob.glob("/dev/nvidia[0-9]*"):
        return None
    nvidia = sorted({(d.metadata["Name"] or "").lower() for d in metadata.distributions()
                     if (d.metadata["Name"] or "").lower().startswith("nvidia-")})
    if not nvidia:
        return None
    return (f"Note: torch {version} here is the CUDA build ({len(nvidia)} NVIDIA packages beside it, over 2 GB), "
            "and this machine has no NVIDIA GPU. The CPU build does every task: pip uninstall -y torch "
            f"{' '.join(nvidia)} && pip install -r exercises/requirements-torch.txt")


def pytest_report_header(config):
    warning = cuda_build_unasked()
    return [warning] if warning else []


def pytest_terminal_summary(terminalreporter, config):
    terminalreporter.write_line("")
    terminalreporter.write_line(BEYOND)
    asked = config.getoption("markexpr", "") or ""
    if importlib.util.find_spec("torch") is None and (not asked or "task6" in asked):
        terminalreporter.write_line(NO_TORCH)
