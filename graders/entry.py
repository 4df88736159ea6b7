"""The guard of every ``python -m graders...`` command a person runs: never a judge the working folder supplies.

``python -m`` puts the working folder first on ``sys.path``. Run from inside a submission (a folder the student
controls), ``graders`` could be the student's own package (a judge that prints 100), and any module the judge
imports later (numpy, torch, hypothesis, even hashlib) could be the student's file of that name. ``guard()`` runs
before anything of the sort is imported (this module imports only os and sys, which the interpreter has loaded
already): it refuses to run a ``graders`` that sits in the working folder (where ``python -m`` looks first: a copy
of this package that a submission carries, or a checkout's own), and takes the working folder off ``sys.path`` for
the rest. A ``graders`` further below the working folder is not refused: an installed one lives there whenever the
environment does (Gradescope's /autograder/venv, run from /autograder), and ``python -m`` never finds a package
below its first folder. ``autograd-lab`` (the console script) and ``python -I -m graders`` never look in the
working folder. Its sentence lives here, not in graders.messages, which imports numpy.

``python -m pytest -p graders.integrations.pytest_plugin`` is guarded earlier still: ``python -m pytest`` puts the
working folder first on ``sys.path`` before pytest (or the plugin) is imported, so a submission that carries its own
``graders/integrations/pytest_plugin.py``, or ``pytest/``, would be what runs, and no check inside the plugin could
stop it. ``startup`` runs as the interpreter starts, from the ``autograd_lab.pth`` file installed beside the package
(``setup.py``), before the working folder is on ``sys.path``: it refuses such a run where the working folder lies
inside the submission or holds a ``graders``, a ``pytest`` or a ``_pytest`` of its own.
"""

import os
import sys

REFUSED = ("autograd-lab: refusing to run the judge from {package}, in the working folder: inside a "
           "submission that could be the student's own. Run `python -I -m {module} {args}` from a folder that "
           "holds no graders/, or the console script, `autograd-lab`.")


def guard(module: str) -> None:
    """Exit with status 2 and one line when the ``graders`` package running sits in the working folder; else drop
    the working folder from ``sys.path``. ``module``: what ``python -m`` was given, for the line."""
    package = os.path.dirname(os.path.realpath(__file__))
    here = os.path.realpath(os.getcwd())
    if os.path.dirname(package) == here:
        print(REFUSED.format(package=package, module=module, args=" ".join(sys.argv[1:])), file=sys.stderr)
        sys.exit(2)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]


PLUGIN = "graders.integrations.pytest_plugin"
USAGE_ERROR = 4  # pytest's exit status for a run it refuses (pytest.ExitCode.USAGE_ERROR)
SUBMISSION_OPTION = "--autograd-lab-submission"
SHADOWS = ("graders", "pytest", "_pytest", "pluggy")  # what `python -m pytest -p PLUGIN` imports first
REFUSED_PYTEST = ("autograd-lab: refusing to run the pytest plugin with `python -m pytest` from {here}: {why}, and "
                  "`python -m` imports pytest and the plugin from the working folder first. Run it from a folder "
                  "outside the submission, as `pytest -p {plugin} ...` (the console script) or "
                  "`python -I -m pytest -p {plugin} ...`.")
WHY_INSIDE = "it lies inside the submission {submission}"
WHY_SHADOW = "it holds a {name} of its own"


def _plugin_run(argv: list[str]) -> list[str] | None:
    """The arguments after ``-m pytest`` where ``argv`` (the interpreter's command line) runs pytest as a module, with
    the working folder first on ``sys.path``, and names the plugin; else None."""
    if "-m" not in argv or sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        return None
    at = argv.index("-m")
    if argv[at + 1:at + 2] not in (["pytest"], ["py.test"]):
        return None
    args = argv[at + 2:] + os.environ.get("PYTEST_ADDOPTS", "").split()
    named = os.environ.get("PYTEST_PLUGINS", "").split(",") + [
        arg.removeprefix("-p").lstrip("=") or (args[i + 1] if i + 1 < len(args) else "")
        for i, arg in enumerate(args) if arg.startswith("-p")]
    return args if PLUGIN in (name.strip() for name in named) else None


def startup(argv: list[str] | None = None, here: str | None = None) -> None:
    """What every start of this environment's Python runs first (``autograd_lab.pth``): exit with status 4 (pytest's
    usage error) and one line when it is ``python -m pytest`` loading the plugin from a working folder that lies
    inside the submission or that holds a package the run would import from it (SHADOWS); nothing otherwise."""
    argv = list(getattr(sys, "orig_argv", ())) if argv is None else argv
    args = _plugin_run(argv)
    if args is None:
        return
    here = os.path.realpath(os.getcwd() if here is None else here)
    why = None
    for i, arg in enumerate(args):
        given = arg.partition("=")[2] if arg.startswith(SUBMISSION_OPTION + "=") else \
            args[i + 1] if arg == SUBMISSION_OPTION and i + 1 < len(args) else None
        submission = os.path.realpath(os.path.join(here, given)) if given else None
        if submission and (here == submission or here.startswith(submission + os.sep)):
            why = WHY_INSIDE.format(submission=given)
    shadows = [name for name in SHADOWS if any(os.path.exists(os.path.join(here, name + end)) for end in ("", ".py"))]
    if why is None and shadows:
        why = WHY_SHADOW.format(name=shadows[0])
    if why is not None:
        sys.stderr.write(REFUSED_PYTEST.format(here=here, why=why, plugin=PLUGIN) + "\n")
        sys.stderr.flush()
        os._exit(USAGE_ERROR)
