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
