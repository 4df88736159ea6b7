"""The drawn examples of every property check, kept once per key: the inputs never depend on the student.

A check's ``forall`` draws its examples with Hypothesis, derandomized or seeded by the key, so the same key
always draws the same examples in the same order. Drawing them is most of a grade's time, and every
submission graded with the key would pay for it again. This cache keeps them, one file per call of
``forall``, under a folder named by everything the draw depends on: the graders' source, the given code and
the versions of Python, numpy, torch and Hypothesis, and whether CUDA is there (its witness confirms every
expected value). A change of any of them starts a fresh folder.

What is cached is only what Hypothesis drew (arrays, numbers, shapes, the checks' own small setups), never a
submission's answer. A file is read back with an unpickler that builds nothing but those types, so a file
changed by someone else cannot run code in the judge; a file that will not load is drawn again.

The folder is private to the instructor (0700) and never mounted into a worker's sandbox. Set
``AUTOGRAD_LAB_CACHE`` to another folder, or to ``off`` to draw anew each time.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import pickle
import platform
import re
import shutil
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import hypothesis
import numpy as np

from graders import __version__, files, paths

CACHE_ENV = paths.CACHE_ENV
STALE_DAYS = 30  # what another version of the graders kept is removed after this long unwritten
OFF = paths.CACHE_OFF
# What a cached draw may hold: numpy's arrays and scalars, and the checks' own setups (dataclasses of numbers).
_ALLOWED = {
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"), ("builtins", "slice"), ("builtins", "complex"),
}
_ALLOWED_MODULES = re.compile(r"^graders\.judge\.checks\.[a-z_]+$")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
DESCRIBE_SECONDS = 60.0  # how long a strategy's description is asked again while another thread imports


def folder() -> Path | None:
    """Where the draws are kept, or None when the cache is off (``paths.examples_cache``)."""
    return paths.examples_cache()


@functools.cache
def fingerprint() -> str:
    """What every draw depends on besides the key, as one digest (computed once per process)."""
    from graders.judge import reference  # imports torch only where a GPU is there to be asked about

    # The device too: on a machine with CUDA every expected value was also confirmed on it (reference.py).
    text = json.dumps({"autograd-lab": __version__, "graders": paths.graders_fingerprint(),
                       "python": platform.python_version(), "numpy": np.__version__,
                       "torch": metadata.version("torch"),  # the expected runs and the helper's answers are torch's
                       "hypothesis": hypothesis.__version__,
                       "devices": "cpu, cuda" if reference.cuda_available() else "cpu"}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def entry(task: str, index: int, strategy, examples: int, key: int | None) -> Path | None:
    """The file of the ``index``-th ``forall`` of ``task`` (0: the task's values outside any forall), or None
    when the cache is off."""
    root = folder()
    if root is None:
        return None
    described = describe(strategy)
    named = hashlib.sha256(f"{task}|{index}|{examples}|{described}".encode()).hexdigest()[:24]
    seeded = "derandomized" if key is None else f"key-{key}"
    return root / fingerprint() / seeded / f"{task}-{index}-{named}.pickle"


def answer_entry(oracle: str, digest: str) -> Path | None:
    """The file of the judge's helper's answer to ``oracle`` with the arguments ``digest`` names
    (graders.judge.oracles.Kept), or None when the cache is off: beside the draws, for every key alike (an answer
    depends on its arguments alone)."""
    root = folder()
    return None if root is None else root / fingerprint() / "answers" / f"{oracle}-{digest[:40]}.frame"


def read_answer(path: Path | None, limit: int) -> bytes | None:
    """The bytes kept at ``path`` (at most ``limit``), or None: nothing kept, or more than ``limit``."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def save_answer(path: Path | None, frame: bytes) -> None:
    """Keep an answer's frame at ``path``; a folder that cannot be written only means asking the helper again."""
    if path is None:
        return
    try:
        _private(path.parent.parent)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        files.atomic_write(path, frame)
    except OSError:
        pass


def _private(fingerprinted: Path) -> None:
    """Make ``<folder>/<fingerprint>`` (private: the draws are the instructor's), pruning what other versions of the
    graders left the first time."""
    fingerprinted.parent.mkdir(parents=True, exist_ok=True)
    if not fingerprinted.exists():
        _prune(fingerprinted.parent)
    fingerprinted.mkdir(mode=0o700, exist_ok=True)
    fingerprinted.chmod(0o700)  # whatever the umask


def kept(task: str, key: int | None) -> bool:
    """Whether a grade with ``key`` has kept ``task``'s values outside its foralls here (every graded task writes
    that file, empty or not, when the cache is on)."""
    path = entry(task, 0, None, 0, key)
    return path is not None and path.is_file()


def describe(strategy) -> str:
    """``repr(strategy)`` without addresses: what names a forall's file besides its task, place and count (a
    check whose foralls came in another order reads no other forall's draws).

    Hypothesis describes a lambda it meets for the first time by going over ``sys.modules``. The judge imports
    torch in a thread of its own while the first tasks run (``grade.import_torch_beside``), and a module added
    meanwhile stops that with "dictionary changed size during iteration" (it once cost a correct submission task
    1.2, as a grader error). The description is then asked again: nothing of it depends on the modules loaded."""
    deadline = time.monotonic() + DESCRIBE_SECONDS
    while True:
        try:
            return _ADDRESS.sub("", repr(strategy))
        except RuntimeError as error:
            if "changed size during iteration" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.001)


@dataclass
class Kept:
    """One forall's draws, in the order Hypothesis drew them, and the expected values computed from them
    (``Context.expected``), by a digest of what each depends on."""

    draws: list
    expected: dict = field(default_factory=dict)
    stored: int = -1  # how many expected values the file holds (-1: no file yet)

    @property
    def changed(self) -> bool:
        """Whether expected values were added since the file was read (or there is no file yet): only then is it written
        again."""
        return self.stored != len(self.expected)


def load(path: Path | None) -> Kept | None:
    """What is kept at ``path``, or None (nothing kept, unreadable, or not what a draw holds)."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
        draws, expected = _Draws(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - a file that will not load is drawn again
        return None
    if not isinstance(draws, list) or not isinstance(expected, dict):
        return None
    for value in expected.values():
        read_only(value)
    return Kept(draws, expected, len(expected))


def save(path: Path | None, kept: Kept) -> None:
    """Keep ``kept`` at ``path``; a folder that cannot be written only means drawing again next time."""
    if path is None or not kept.changed:
        return
    try:
        _private(path.parent.parent)  # <folder>/<fingerprint>/<key>/<file>, as entry() named it
        path.parent.mkdir(mode=0o700, exist_ok=True)
        files.atomic_write(path, pickle.dumps((kept.draws, kept.expected), protocol=pickle.HIGHEST_PROTOCOL))
        kept.stored = len(kept.expected)
    except (OSError, pickle.PicklingError, ValueError, TypeError, AttributeError):
        pass


def _prune(root: Path) -> None:
    """Remove what other versions of the graders kept and nobody has written for STALE_DAYS days."""
    stale = time.time() - STALE_DAYS * 86400
    for other in root.iterdir():
        try:
            if re.fullmatch(r"[0-9a-f]{24}", other.name) and other.is_dir() and other.stat().st_mtime < stale:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass


def digest(name: str, inputs) -> str:
    """The key of an expected value: its name and what it depends on, by value (not by which objects hold it)."""
    hasher = hashlib.sha256(name.encode())
    _feed(hasher, inputs)
    return hasher.hexdigest()


_SCALARS = frozenset({bool, int, float, str, type(None)})


def _feed(hasher, value) -> None:
    kind = type(value)  # the common kinds first, by exact type (a digest is taken for every example asked)
    if kind is np.ndarray:
        hasher.update(f"a{value.dtype.str}{value.shape}".encode())
        hasher.update(value.tobytes())
    elif kind in _SCALARS or isinstance(value, np.generic):
        hasher.update(f"{kind.__name__}:{value!r};".encode())
    elif isinstance(value, (list, tuple)):
        if all(type(item) in _SCALARS for item in value):  # a shape, a row of numbers: the same bytes, at once
            hasher.update(f"{kind.__name__}{len(value)}(".encode()
                          + "".join(f"{type(item).__name__}:{item!r};" for item in value).encode() + b")")
            return
        hasher.update(f"{kind.__name__}{len(value)}(".encode())
        for item in value:
            _feed(hasher, item)
        hasher.update(b")")
    elif isinstance(value, dict):
        hasher.update(f"d{len(value)}(".encode())
        for key in sorted(value, key=repr):
            _feed(hasher, key)
            _feed(hasher, value[key])
        hasher.update(b")")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        hasher.update(f"{kind.__qualname__}(".encode())
        _feed(hasher, {f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
        hasher.update(b")")
    elif isinstance(value, np.ndarray):
        hasher.update(f"a{value.dtype.str}{value.shape}".encode())
        hasher.update(value.tobytes())
    elif isinstance(value, (bool, int, float, str)):
        hasher.update(f"{kind.__name__}:{value!r};".encode())
    else:
        raise TypeError(f"an expected value cannot depend on a {kind.__name__}")


def read_only(value) -> None:
    """Arrays kept for every grade must never be changed by one: numpy refuses writes to them."""
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, (list, tuple)):
        for item in value:
            read_only(item)
    elif isinstance(value, dict):
        for item in value.values():
            read_only(item)


class _Draws(pickle.Unpickler):
    """Builds only numpy's arrays and the checks' dataclasses: a cache file is data, never code."""

    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED or (_ALLOWED_MODULES.match(module) and not name.startswith("_")):
            found = super().find_class(module, name)
            if (module, name) in _ALLOWED or isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"a cached draw may not hold {module}.{name}")
