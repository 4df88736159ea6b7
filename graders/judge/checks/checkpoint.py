"""Task 5.5: fit's checkpoint, read and changed by the judge from outside the worker.

The worker runs the student's ``fit`` (over the stand-ins, with the judge's train_epoch and evaluate, as 5.4) in
four requests, and between them the judge looks at the worker's folder itself (graders.isolation.work_files): what the
worker says of its own files is its word.

1. ``fit_cut``: an uninterrupted fit, then a fit of the first epochs with ``checkpoint=path``. The judge reads
   the file at exactly that path and holds its ``model.*`` and ``optim.*`` arrays to torch's run after those
   epochs.
2. The judge replaces the file's ``model.*`` arrays with weights of its own drawing (as another run might have
   left them), and ``fit_resumed`` resumes from the path with a new model and optimizer: the run must go on from
   the file's weights, so a fit that kept the first run's state anywhere but in the file ends elsewhere.
3. ``save_dies``: a save over that checkpoint that dies while it writes; the file must be byte for byte the one
   it was (written atomically).
4. ``fit_dies``: a fit whose loader fails partway must leave the checkpoint of the epochs it finished: the judge
   reads it and holds its weights to those of step 1.

Where the student's fit itself differs from torch's (task 5.4 says how), the resumed run is held to the
student's own uninterrupted one instead, and the file is not changed (its weights' continuation is then unknown).
"""

from __future__ import annotations

import contextlib
import io
import zipfile
from dataclasses import dataclass

import numpy as np

from graders import messages as msg
from graders.isolation import work_files
from graders.judge.checks.base import CheckFailed, Context
from graders.judge.checks.loop import (
    TOL,
    Setup,
    compare_params,
    fit_values,
    read_history,
    read_params,
    reference_fit,
)

CKPT_SETUP = Setup(n=12, batch_size=4, lr=0.05, momentum=0.9, seed=3)
CKPT_EPOCHS, CKPT_FIRST, FRESH_SEED = 4, 2, 99
MOVED_SEED = 41  # the weights the judge puts in the checkpoint before the resumed run
CKPT_PATHS = ("checkpoint", "run.ckpt")
MAX_MEMBERS = 256
MAX_UNPACKED_BYTES = 64 * 2**20  # what a checkpoint's members may unpack to, declared sizes summed


# ----- the file, as the judge reads it -----

class Unreadable(Exception):
    """What np.load(path, allow_pickle=False) says of the bytes, or why the judge will not unpack them."""


@dataclass
class Saved:
    """A checkpoint the judge read: its bytes, and its arrays by key."""
    data: bytes
    arrays: dict[str, np.ndarray]


def parse(data: bytes) -> Saved:
    """The arrays of an npz archive, as np.load(path, allow_pickle=False) reads them, in the judge: the archive's
    declared sizes are bounded first, so no archive unpacks to more than MAX_UNPACKED_BYTES."""
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                infos = archive.infolist()
        except (zipfile.BadZipFile, ValueError, OSError) as error:
            raise Unreadable(f"{type(error).__name__}: {str(error)[:200]}") from None
        size = sum(info.file_size for info in infos)
        if len(infos) > MAX_MEMBERS or size > MAX_UNPACKED_BYTES:
            raise Unreadable(msg.CKPT_TOO_LARGE.format(members=len(infos), size=size, most=MAX_MEMBERS,
                                                       most_bytes=MAX_UNPACKED_BYTES))
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            return Saved(data, {str(name): np.asarray(saved[name]) for name in saved.files})
    except AttributeError:  # a single .npy: np.load gave an array, which has no context manager
        raise Unreadable(msg.CKPT_SINGLE_ARRAY) from None
    except Exception as error:  # noqa: BLE001 - what np.load said is the message
        raise Unreadable(f"{type(error).__name__}: {str(error)[:200]}") from None


def with_arrays(saved: Saved, replaced: dict[str, np.ndarray]) -> bytes:
    """``saved``'s archive with the members of ``replaced`` written anew, every other member as it was."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(saved.data)) as archive, zipfile.ZipFile(out, "w") as new:
        for info in archive.infolist():
            key = info.filename.removesuffix(".npy")
            if key in replaced:
                array = io.BytesIO()
                np.lib.format.write_array(array, np.ascontiguousarray(replaced[key]), allow_pickle=False)
                new.writestr(info.filename, array.getvalue())
            else:
                new.writestr(info, archive.read(info))
    return out.getvalue()


class Folder:
    """The worker's working folder for one request's process, from outside (a new descriptor at each use)."""

    def __init__(self, ctx: Context, verb: str, args: dict):
        self.ctx, self.verb, self.args = ctx, verb, args

    @contextlib.contextmanager
    def _opened(self):
        """The folder's descriptor; CheckFailed when the worker ended since its last answer (student code can end
        it), and a grader error (work_files.Unreachable) when this machine will not let the judge see it."""
        try:
            with self.ctx.worker.work_folder(self.verb, self.args) as folder:
                yield folder
        except work_files.Ended:
            raise CheckFailed(msg.DIED.format(**msg.header(self.ctx.task, doing=msg.CKPT_READING))) from None

    def read(self, name: str) -> bytes | None:
        """The bytes of the file ``name`` in the worker's folder, read by the judge itself (None when there is none),
        never the worker's word for it."""
        with self._opened() as folder:
            return work_files.read(folder, name)

    def names(self) -> list[str]:
        """The names in the worker's folder, listed by the judge itself."""
        with self._opened() as folder:
            return work_files.names(folder)

    def write(self, name: str, data: bytes) -> None:
        """Write ``data`` to the file ``name`` in the worker's folder, owned as the worker's own files are, so the
        resumed fit reads the judge's checkpoint."""
        with self._opened() as folder:
            work_files.write(folder, name, data, self.ctx.worker.owner(self.verb, self.args))

    def remove_near(self, name: str) -> None:
        """The file ``name`` and those whose name starts with it (a temporary file a dying save left)."""
        with self._opened() as folder:
            work_files.remove(folder, [n for n in work_files.names(folder) if n.startswith(name)])


def read_saved(ctx: Context, folder: Folder, path: str) -> Saved:
    """The checkpoint at exactly ``path``, read by the judge; CheckFailed when it is not there or not an archive
    np.load reads."""
    try:
        data = folder.read(path)
    except work_files.NotAFile as error:
        raise CheckFailed(msg.CKPT_NOT_A_FILE.format(path=path, kind=error, **msg.header(ctx.task))) from None
    if data is None:
        near = [name for name in folder.names() if name.startswith(path)][:5]
        found = msg.CKPT_FOUND.format(names=", ".join(map(repr, near))) if near else msg.CKPT_NOTHING
        hint = msg.HINT_CKPT_NPZ if path + ".npz" in near else msg.HINT_CKPT_SAVE
        raise CheckFailed(msg.CKPT_NOT_AT_PATH.format(path=path, found=found, hint=hint, **msg.header(ctx.task)))
    try:
        return parse(data)
    except Unreadable as error:
        raise CheckFailed(msg.CKPT_UNREADABLE.format(path=path, error=error, **msg.header(ctx.task))) from None


# ----- the expected runs -----

def cut_values(setup: Setup, first: int, val) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """(weights, momentum buffers) after the first ``first`` epochs of torch's fit."""
    _, run = reference_fit(setup, first, val=val)
    return run.weights(), run.state()


def moved_values(setup: Setup, epochs: int, first: int, val,
                 buffers: dict[str, np.ndarray]) -> tuple[dict[str, list[float]], list[np.ndarray]]:
    """(history of the epochs after ``first``, final weights) of the run resumed from the changed checkpoint: the
    judge's MOVED_SEED weights, and ``buffers``, the momentum buffers after the first epochs."""
    history, run = reference_fit(setup, epochs - first, val=val, run=setup.run(MOVED_SEED, state=buffers))
    return history, run.weights()


def resume_mistakes(setup: Setup, val, epochs: int, first: int, moved: bool, buffers: dict[str, np.ndarray]):
    """Known wrong resumptions, run on the reference: (hint, a function giving the final parameters); ``buffers``:
    the momentum buffers after the first epochs."""
    def ignored():  # a fresh run from the new model's own weights
        return reference_fit(setup, epochs, val=val, run=setup.run(FRESH_SEED))[1].weights()

    def continued(more: int, fresh_optimizer: bool):  # from the checkpoint's state, ``more`` epochs
        if moved:
            run = setup.run(MOVED_SEED, state=None if fresh_optimizer else buffers)
        else:
            run = setup.run()
            reference_fit(setup, first, val=val, run=run)
            if fresh_optimizer:
                run.forget_state()
        return reference_fit(setup, more, val=val, run=run)[1].weights()

    def model_not_loaded():  # the new model's own weights, the checkpoint's momentum buffers and epochs
        return reference_fit(setup, epochs - first, val=val, run=setup.run(FRESH_SEED, state=buffers))[1].weights()

    mistakes = [(msg.HINT_CKPT_IGNORED, ignored), (msg.HINT_CKPT_MODEL, model_not_loaded),
                (msg.HINT_CKPT_OPTIMIZER, lambda: continued(epochs - first, fresh_optimizer=True)),
                (msg.HINT_CKPT_EPOCHS.format(epochs=epochs), lambda: continued(epochs, fresh_optimizer=False))]
    if moved:  # the first run's own weights, not the file's: state kept somewhere other than the checkpoint
        mistakes.append((msg.HINT_CKPT_NOT_FROM_FILE, lambda: fit_values(setup, epochs, val=val)[1]))
    return mistakes


# ----- the ladder -----

def _length(history: dict) -> int | None:
    """How many train losses a history claim holds, if it is a dict holding a list."""
    items = history.get("items") if history.get("kind") == "dict" else None
    losses = items.get("train_loss", {}) if isinstance(items, dict) else {}
    return len(losses["items"]) if losses.get("kind") == "sequence" else None


def history_hint(saved: Saved, first: int) -> str:
    """The hint for a resumed history that is wrong: where the file the judge read after ``first`` epochs counts one
    epoch fewer, the saved count is the epoch's index (the resume repeats an epoch); where it holds a loss list one
    short, the save came before the epoch's last append (val_loss after train_loss)."""
    count = saved.arrays.get("epoch")
    if count is not None and count.size == 1 and count.dtype.kind in "iuf" and float(count.reshape(())) == first - 1:
        return msg.HINT_CKPT_EPOCH_BEHIND.format(first=first, saved=first - 1)
    lengths = {key: np.size(saved.arrays[key]) for key in ("train_loss", "val_loss") if key in saved.arrays}
    short = sorted(key for key, length in lengths.items() if length == first - 1)
    if short:
        return msg.HINT_CKPT_SAVED_EARLY.format(keys=" and ".join(short), count=first - 1, first=first)
    return msg.HINT_CKPT_HISTORY


def check_members(ctx: Context, saved: Saved, path: str, setup: Setup) -> None:
    """The checkpoint holds the model's and the optimizer's state dicts under the docstring's prefixes, so any
    loader of the format reads it: model.<name> for each model entry, optim.<key> for each momentum buffer."""
    wanted = [f"model.{name}" for name in setup.state()]
    if setup.momentum:
        wanted += [f"optim.momentum_buffer.{i}" for i in range(len(setup.state()))]
    missing = [name for name in wanted if name not in saved.arrays]
    if missing:
        raise CheckFailed(msg.CKPT_PREFIXES.format(path=path, members=sorted(saved.arrays)[:8], missing=missing[:4],
                                                   **msg.header(ctx.task)))


def check_saved_state(ctx: Context, saved: Saved, expected: dict[str, np.ndarray], path: str, when: str,
                      *, inputs, source) -> None:
    """Each of the checkpoint's ``expected`` arrays (by key) against its value, in shape then in value."""
    for key, value in expected.items():
        what = f"{key} in the checkpoint at {path!r} {when}"
        array = saved.arrays[key]
        if array.shape != np.shape(value) or array.dtype.kind not in "fiu":
            ctx.fail(what, f"an array of shape {array.shape} and dtype {array.dtype}",
                     f"shape {np.shape(value)}, float64", hint=msg.HINT_CKPT_STATE)
        ctx.compare(array, value, what, inputs=inputs, source=source, hint=msg.HINT_CKPT_STATE, tol=TOL)


@dataclass
class Resumed:
    """What the parts after a resume use: the worker's folder, the request's arguments, the checkpoint's path,
    and the state expected after the first epochs (by key, as the file holds it)."""
    folder: Folder
    common: dict
    path: str
    state: dict[str, np.ndarray]

    def clean(self) -> None:
        """Remove the checkpoint and whatever starts with its name from the worker's folder, if it is still there."""
        with contextlib.suppress(CheckFailed, work_files.Unreachable):  # the worker ended: its folder is gone
            self.folder.remove_near(self.path)


def check_resume(ctx: Context, path: str) -> Resumed:
    """Task 5.5's core at one checkpoint path: fit cut after its first epochs, the file read and changed by the
    judge, the resumed run against torch's; what the parts after it use (its files are removed if it fails)."""
    setup, epochs, first = CKPT_SETUP, CKPT_EPOCHS, CKPT_FIRST
    val = setup.data(n=4, offset=1)
    common = {**setup.args(ctx.task.route.package), "val": val, "path": path}
    answer = ctx.ask("fit_cut", f"running fit with checkpoint={path!r}", **common, epochs=epochs, first=first)
    resumed = Resumed(Folder(ctx, "fit_cut", common), common, path, {})
    try:
        resumed.state = _check_resume(ctx, resumed.folder, answer, setup, val, common, path)
    except BaseException:
        resumed.clean()
        raise
    return resumed


def _check_resume(ctx: Context, folder: Folder, answer, setup: Setup, val, common: dict,
                  path: str) -> dict[str, np.ndarray]:
    """The ladder of one path, up to the resumed run and what _load_checkpoint returns after it; the state expected
    in the checkpoint after the first epochs."""
    epochs, first = CKPT_EPOCHS, CKPT_FIRST
    saved = read_saved(ctx, folder, path)
    check_members(ctx, saved, path, setup)

    expected, weights = ctx.expected("torch's fit", fit_values, setup, epochs, val=val)
    expected = {k: np.asarray(v) for k, v in expected.items()}
    names = list(setup.state())
    whole = read_history(ctx, answer.whole.history, "fit", None)
    own = not all(whole[k].shape == expected[k].shape and np.allclose(whole[k], expected[k], rtol=TOL.rtol,
                                                                       atol=TOL.atol) for k in whole)
    inputs = setup.lines() + [msg.CKPT_SCENARIO.format(first=first, path=path, epochs=epochs)]
    cut_weights, buffers = ctx.expected("torch's fit, cut", cut_values, setup, first, val)
    if own:  # fit itself differs (task 5.4 says how): hold the resume to the student's own uninterrupted run
        source, expected = msg.LOOP_OWN_RUN, whole
        final = dict(zip(names, read_params(ctx, answer.whole.params, names, [p.shape for p in weights],
                                            "after fit")))
        after_cut = dict(zip(names, read_params(ctx, answer.cut.params, names, [p.shape for p in weights],
                                                f"after fit(..., epochs={first})")))
        state = {f"model.{name}": value for name, value in after_cut.items()}
    else:
        source = msg.LOOP_REFERENCE.format(function="fit, uninterrupted,")
        state = {f"model.{name}": value for name, value in zip(names, cut_weights)}
        state.update({f"optim.{key}": value for key, value in buffers.items()})
    cut = read_history(ctx, answer.cut.history, f"fit(..., epochs={first})",
                       {k: len(v[:first]) for k, v in expected.items()})
    for key in ("train_loss", "val_loss"):
        ctx.compare(cut[key], expected[key][:first], f'history["{key}"] of the first {first} epochs',
                    inputs=inputs, source=source, tol=TOL)
    check_saved_state(ctx, saved, state, path, f"after {first} epochs", inputs=inputs, source=source)

    if not own:  # the judge moves the checkpoint's weights: the resumed run must go on from them
        moved = setup.state(MOVED_SEED)
        folder.write(path, with_arrays(saved, {f"model.{name}": value for name, value in moved.items()}))
        rest, moved_weights = ctx.expected("torch's fit, resumed from moved weights", moved_values, setup, epochs,
                                           first, val, buffers)
        expected = {k: np.concatenate([expected[k][:first], np.asarray(rest[k])]) for k in expected}
        final = dict(zip(names, moved_weights))
        inputs[-1] = msg.CKPT_MOVED.format(first=first, path=path, epochs=epochs)
        source = msg.CKPT_RESUMED_SOURCE
    resumed = ctx.ask("fit_resumed", f"resuming fit from checkpoint={path!r}", **common, fresh_state=setup.state(
        FRESH_SEED), epochs=epochs)
    lengths = {k: len(v) for k, v in expected.items()}
    hint = msg.HINT_CKPT_EPOCHS.format(epochs=epochs) if _length(resumed.history) == epochs + first \
        else history_hint(saved, first)
    history = read_history(ctx, resumed.history, "the resumed fit", lengths, hint=hint)
    compare_params(ctx, resumed.params, final, "at the end of the resumed run", inputs=inputs, source=source,
                   mistakes=resume_mistakes(setup, val, epochs, first, not own, buffers))
    for key in ("train_loss", "val_loss"):
        ctx.compare(history[key], expected[key], f'history["{key}"] of the resumed run', inputs=inputs,
                    source=source, hint=history_hint(saved, first), tol=TOL)
    check_loaded(ctx, resumed.loaded, epochs)
    return state


def check_loaded(ctx: Context, loaded, epochs: int) -> None:
    """_load_checkpoint, called on the checkpoint of ``epochs`` the resumed run left, returns (epochs, history) with
    the count an int (its contract: tuple[int, dict]). A type the worker reports, which can only cost the task:
    a 0-d array would change no number."""
    if loaded.error is not None:
        ctx.fail("what _load_checkpoint did with the checkpoint the resumed run left", f"raised {loaded.error}",
                 msg.CKPT_LOADED_PAIR)
    what = "what _load_checkpoint returned"
    if loaded.epoch.get("type") == "NoneType" and loaded.type not in ("tuple", "list"):
        ctx.fail(what, f"a {loaded.type}", msg.CKPT_LOADED_PAIR)
    epoch = loaded.epoch
    value = _count(epoch)
    if not (epoch.get("kind") == "number" and epoch.get("type") == "int" and value == epochs):
        ctx.fail("the epoch count _load_checkpoint returned", _kind_text(epoch) if value is None or
                 epoch.get("type") != "int" else repr(value), msg.CKPT_EPOCH_INT.format(epochs=epochs),
                 hint=msg.HINT_CKPT_EPOCH_INT)


def check_save_died(ctx: Context, resumed: Resumed) -> None:
    """After a save of epoch CKPT_EPOCHS + 1 that died while it wrote over the checkpoint the resumed run left, the
    file must be that checkpoint, byte for byte (the judge reads it before and after)."""
    folder, path = resumed.folder, resumed.path
    header = msg.header(ctx.task, path=path)
    before = read_saved(ctx, folder, path).data  # what the resumed fit left: the checkpoint of CKPT_EPOCHS
    ctx.ask("save_dies", f"saving over checkpoint={path!r}, a save that dies midway", **resumed.common,
            epochs=CKPT_EPOCHS)
    try:
        after = folder.read(path)
    except work_files.NotAFile as error:
        after = f"{error}"
    if after != before:
        what = msg.CKPT_GONE_AFTER if after is None else msg.CKPT_CHANGED_AFTER.format(epochs=CKPT_EPOCHS)
        raise CheckFailed(msg.CKPT_HALF_WRITTEN.format(what=what, **header))


def check_died_in_epoch(ctx: Context, resumed: Resumed) -> None:
    """A fit whose loader fails in epoch CKPT_FIRST + 1 must leave the checkpoint of the CKPT_FIRST epochs done (fit
    saves after every epoch): the judge reads it, and its weights must be those after CKPT_FIRST epochs."""
    folder, common, path, state = resumed.folder, resumed.common, resumed.path, resumed.state
    epochs, first = CKPT_EPOCHS, CKPT_FIRST
    died = ctx.ask("fit_dies", f"running fit with checkpoint={path!r}, a loader that fails in epoch {first + 1}",
                   **common, epochs=epochs, first=first)
    header = msg.header(ctx.task, path=path, epochs=epochs, died=first + 1)
    try:
        data = folder.read(path)
    except work_files.NotAFile as error:
        raise CheckFailed(msg.CKPT_EVERY_EPOCH.format(left=msg.CKPT_LEFT_NOT_A_FILE.format(kind=error),
                                                      **header)) from None
    if data is None:
        raise CheckFailed(msg.CKPT_EVERY_EPOCH.format(left=msg.CKPT_LEFT_NONE, **header))
    try:
        saved = parse(data)
    except Unreadable as error:
        raise CheckFailed(msg.CKPT_EVERY_EPOCH.format(left=msg.CKPT_LEFT_UNREADABLE.format(error=error),
                                                      **header)) from None
    if died.error is not None:
        raise CheckFailed(msg.CKPT_EVERY_EPOCH.format(left=msg.CKPT_LEFT_UNREADABLE.format(error=died.error),
                                                      **header))
    value = _count(died.epoch or {})
    if value is not None and value != first:
        raise CheckFailed(msg.CKPT_EVERY_EPOCH.format(left=msg.CKPT_LEFT_COUNT.format(got=value, first=first),
                                                      **header))
    models = {key: value for key, value in state.items() if key.startswith("model.")}
    if any(key not in saved.arrays or saved.arrays[key].shape != np.shape(value) or not np.allclose(
            saved.arrays[key], value, rtol=TOL.rtol, atol=TOL.atol) for key, value in models.items()):
        raise CheckFailed(msg.CKPT_EVERY_EPOCH.format(left=msg.CKPT_LEFT_OTHER.format(first=first), **header))


def _count(claim: dict):
    """The epoch count a claim holds, if it is a number or a one-element array; else None."""
    if claim.get("kind") == "number":
        return claim.get("value")
    if claim.get("kind") in ("ndarray", "numpy scalar") and np.size(claim.get("array")) == 1:
        return np.asarray(claim["array"]).item()
    return None


def _kind_text(claim: dict) -> str:
    """A claim's kind in words: 'a 0-d ndarray', 'a numpy int64', 'a float'."""
    if claim.get("kind") == "ndarray":
        return f"a {np.ndim(claim.get('array'))}-d ndarray"
    if claim.get("kind") == "numpy scalar":
        return f"a numpy {claim.get('type')}"
    return f"a {claim.get('type')}"


CORE_POINTS = 2  # of 5.5's 4: the resume from the file; a save that dies (1) and a run that dies (1) are parts


def checkpoint(ctx: Context) -> None:
    """Task 5.5's check: a checkpoint of lethal pickles, which a loader that allows pickles dies of (a death the
    judge sees from outside); the resume at each of CKPT_PATHS (the core); then the parts, each worth a point."""
    # every array of this checkpoint is a pickle that kills the process loading it: the worker's death, seen
    # from outside, is the effect of loading it with pickles allowed
    ctx.ask("resume_from_pickle", "resuming fit from a checkpoint that holds a pickle",
            **CKPT_SETUP.args(ctx.task.route.package), path=CKPT_PATHS[0],
            died=msg.CKPT_UNPICKLED.format(**msg.header(ctx.task)))
    done = []
    try:
        for path in CKPT_PATHS:
            done.append(check_resume(ctx, path))
        ctx.parts(CORE_POINTS, msg.PARTIAL_CKPT_RESUME,
                  (1, msg.PARTIAL_CKPT_ATOMIC, lambda: check_save_died(ctx, done[0])),
                  (1, msg.PARTIAL_CKPT_EVERY_EPOCH, lambda: check_died_in_epoch(ctx, done[0])))
    finally:
        for resumed in done:
            resumed.clean()
