"""The notebook's setup cell: loads the student's .py files as the package ``lab`` and defines what the visible
checks (visible.py) use: ``expect``, ``SkipCheck`` and ``visible_check``.

The cell is this module's text between ``# BEGIN CELL`` and ``# END CELL``, with its ``MESSAGES`` line written out
as messages.VISIBLE_CHECK's value (nbgrader_lesson.setup_cell): students' kernels have no ``graders``, so nothing
between the markers may import it.
"""

from graders.messages import VISIBLE_CHECK

# isort: split
# BEGIN CELL
# Setup: loads the .py files beside this notebook as the package `lab`, and defines the
# helpers of the visible checks. Each check reloads your files, so your edits count.
import contextlib
import importlib.util
import signal
import sys
import threading
import warnings
from pathlib import Path

import numpy as np

MESSAGES = VISIBLE_CHECK


class SkipCheck(Exception):
    """A check that cannot run here (task 6.2 without a GPU)."""


def load_lab(folder="."):
    """Import the .py files in `folder` as the package `lab`, reading them afresh."""
    folder = Path(folder).resolve()
    for name in [name for name in sys.modules if name == "lab" or name.startswith("lab.")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location("lab", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    lab = importlib.util.module_from_spec(spec)
    sys.modules["lab"] = lab
    dont_write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(lab)
    except BaseException:
        del sys.modules["lab"]
        raise
    finally:
        sys.dont_write_bytecode = dont_write_bytecode
    return lab


def expect(what, yours, expected, tol=1e-8):
    """Stop the check unless `yours` has `expected`'s shape and values."""
    expected = np.asarray(expected, dtype=np.float64)
    if yours is None:
        raise AssertionError(f"{what} is None, expected {expected.tolist()}")
    yours = np.asarray(yours, dtype=np.float64)
    if yours.shape != expected.shape:
        raise AssertionError(f"{what} has shape {yours.shape}, expected {expected.shape}")
    if not np.allclose(yours, expected, rtol=tol, atol=tol):
        raise AssertionError(f"{what} is {yours.tolist()}, expected {expected.tolist()}")


class _Unloaded:
    """Stands in for `lab` when your files did not import: using it raises the import's error."""

    def __init__(self, error):
        self.error = error

    def __getattr__(self, name):
        raise self.error


class _TooSlow(Exception):
    pass


def _too_slow(signum, frame):
    raise _TooSlow()


@contextlib.contextmanager
def visible_check(task, seconds=60):
    """Run the block on your files and print one line. It never raises and never writes to
    stderr (what your code prints there comes out on stdout), so it cannot cost the cell its points."""
    timed = threading.current_thread() is threading.main_thread()
    with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("ignore")
        if timed:
            previous = signal.signal(signal.SIGALRM, _too_slow)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            try:
                lab = load_lab()
            except BaseException as error:
                lab = _Unloaded(error)
            yield lab
            line = MESSAGES["passed"].format(task=task)
        except _TooSlow:
            line = MESSAGES["slow"].format(task=task, seconds=seconds)
        except SkipCheck as error:
            line = MESSAGES["skipped"].format(task=task, error=error)
        except NotImplementedError as error:
            line = MESSAGES["stub"].format(task=task, error=error)
        except AssertionError as error:
            line = MESSAGES["failed"].format(task=task, error=error)
        except BaseException as error:
            line = MESSAGES["raised"].format(task=task, kind=type(error).__name__, error=error)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    print(line)
# END CELL
