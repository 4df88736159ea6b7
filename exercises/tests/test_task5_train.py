"""Task 5: the training loop.

These tests run your loop on your engine and ops (Tasks 1 and 2). Most of them
use a Linear model, lists of batches and a plain counting SGD from _helpers,
and compare with the same epoch written out in numpy.
"""

import weakref

import numpy as np
import pytest

from .. import SGD, DataLoader, Linear, Module, MSELoss, ReLU, Sequential, Tensor, make_sine_data
from ..tensor import is_grad_enabled
from ..train import _load_checkpoint, _save_checkpoint, clip_grad_norm, evaluate, fit, train_epoch
from ._helpers import CountingSGD, assert_close, numpy_linear_epoch, numpy_mse

X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0], [0.0, 2.0], [1.0, 3.0]])
Y = X @ np.array([[1.0], [-2.0]]) + 0.5
BATCHES = [(X[i:i + 2], Y[i:i + 2]) for i in range(0, 6, 2)]  # three batches of two


def as_tensors(batches) -> list[tuple[Tensor, Tensor]]:
    return [(Tensor(x), Tensor(y)) for x, y in batches]


def linear_model() -> tuple[Linear, np.ndarray, np.ndarray]:
    """A Linear(2, 1) and copies of its starting weight and bias."""
    model = Linear(2, 1, rng=np.random.default_rng(0))
    return model, model.weight.data.copy(), model.bias.data.copy()


class Probe(Module):
    """Runs a model and notes, at every forward, (training?, grad mode on?, output requires grad?)."""

    def __init__(self, model: Module):
        self.model = model
        self.seen = []

    def forward(self, x: Tensor) -> Tensor:
        out = self.model(x)
        self.seen.append((self.training, is_grad_enabled(), out.requires_grad))
        return out


# ----- 5.1 train_epoch -----

class OrderedLoss:
    """MSELoss that notes, at every call, whether it was given (the model's prediction, the batch's target)."""

    def __init__(self):
        self.targets_second = []

    def __call__(self, prediction, target):
        self.targets_second.append(any(np.array_equal(target.data, y) for _, y in BATCHES))
        return MSELoss()(prediction, target)


@pytest.mark.task5_1
def test_train_epoch_steps_once_per_batch():
    """Over three batches, does train_epoch step three times and end where plain SGD in numpy ends?"""
    model, w0, b0 = linear_model()
    opt = CountingSGD(model.parameters(), lr=0.1)
    train_epoch(model, as_tensors(BATCHES), opt, MSELoss())
    weight, bias, _ = numpy_linear_epoch(w0, b0, BATCHES, lr=0.1)
    assert opt.steps == 3, f"the optimizer stepped {opt.steps} time(s) over 3 batches, expected 3"
    assert_close(model.weight.data, weight, "weight after one epoch")
    assert_close(model.bias.data, bias, "bias after one epoch")


@pytest.mark.task5_1
def test_train_epoch_returns_the_mean_batch_loss_as_a_float():
    """Does train_epoch return a float (Python's or numpy's float64): the mean of the three batch losses?"""
    model, w0, b0 = linear_model()
    loss = train_epoch(model, as_tensors(BATCHES), CountingSGD(model.parameters(), lr=0.1), MSELoss())
    assert type(loss) in (float, np.float64), f"train_epoch returned {type(loss).__name__}, expected a float"
    assert_close(loss, numpy_linear_epoch(w0, b0, BATCHES, lr=0.1)[2], "the mean batch loss")


@pytest.mark.task5_1
def test_train_epoch_averages_the_batch_losses_not_the_examples():
    """With batches of 4 and 2 examples, is the loss the mean of the two batch losses (each batch counts once), not
    the mean over the six examples?"""
    model, w0, b0 = linear_model()
    batches = [(X[:4], Y[:4]), (X[4:], Y[4:])]
    loss = train_epoch(model, as_tensors(batches), CountingSGD(model.parameters(), lr=0.1), MSELoss())
    assert_close(loss, numpy_linear_epoch(w0, b0, batches, lr=0.1)[2], "the mean of the two batch losses")


@pytest.mark.task5_1
def test_train_epoch_clears_old_gradients_first():
    """With stale gradients left on the parameters, does the epoch still match plain SGD?"""
    model, w0, b0 = linear_model()
    for p in model.parameters():
        p.grad = np.full(p.shape, 100.0)
    train_epoch(model, as_tensors(BATCHES), CountingSGD(model.parameters(), lr=0.1), MSELoss())
    assert_close(model.weight.data, numpy_linear_epoch(w0, b0, BATCHES, lr=0.1)[0], "weight after one epoch")


@pytest.mark.task5_1
def test_train_epoch_trains_in_training_mode():
    """Starting from eval mode, does train_epoch run every batch in training mode?"""
    probe = Probe(linear_model()[0])
    probe.eval()
    train_epoch(probe, as_tensors(BATCHES), CountingSGD(probe.parameters(), lr=0.1), MSELoss())
    assert [training for training, _, _ in probe.seen] == [True] * 3, f"modes seen: {probe.seen}"


@pytest.mark.task5_1
def test_train_epoch_calls_the_loss_with_the_prediction_first():
    """Is every loss computed as loss_fn(model(xb), yb), prediction first and target second? (MSE gives the same
    number either way round; a weighted loss, or torch's, does not.)"""
    model = linear_model()[0]
    loss = OrderedLoss()
    train_epoch(model, as_tensors(BATCHES), CountingSGD(model.parameters(), lr=0.1), loss)
    assert loss.targets_second == [True] * 3, "loss_fn was not given (prediction, target): call loss_fn(model(xb), yb)"


class WatchedLoss:
    """MSELoss that keeps a weak reference to every loss it returns and notes, at every call, how many of the earlier
    ones are still alive: a loss Tensor kept in a list or a running total keeps its whole graph alive."""

    def __init__(self):
        self.made, self.alive = [], []

    def __call__(self, prediction, target):
        self.alive.append(sum(ref() is not None for ref in self.made))
        loss = MSELoss()(prediction, target)
        self.made.append(weakref.ref(loss))
        return loss


@pytest.mark.task5_1
def test_train_epoch_lets_each_loss_tensor_go():
    """Over 12 batches, is each batch's loss Tensor let go once the next batch starts (its value kept as
    loss.item(), a float), so that no graph outlives its batch? (The graded run reads the memory a kept graph holds.)"""
    model = linear_model()[0]
    loss = WatchedLoss()
    train_epoch(model, as_tensors(BATCHES * 4), CountingSGD(model.parameters(), lr=0.01), loss)
    assert max(loss.alive) <= 1, (f"{max(loss.alive)} loss Tensors of earlier batches were still alive when batch "
                                  f"{loss.alive.index(max(loss.alive)) + 1} started: keep loss.item(), a float, in the "
                                  "list or the running total, never the loss Tensor, which keeps its graph alive")


# ----- 5.2 evaluate -----

@pytest.mark.task5_2
def test_evaluate_returns_the_mean_batch_loss_as_a_float():
    """Does evaluate return a float (Python's or numpy's float64), the mean of the batch losses, and leave the
    parameters alone?"""
    model, w0, b0 = linear_model()
    loss = evaluate(model, as_tensors(BATCHES), MSELoss())
    assert type(loss) in (float, np.float64), f"evaluate returned {type(loss).__name__}, expected a float"
    assert_close(loss, numpy_mse(w0, b0, BATCHES), "the mean batch loss")
    assert_close(model.weight.data, w0, "weight after evaluate")


@pytest.mark.task5_2
def test_evaluate_averages_the_batch_losses_not_the_examples():
    """On batches of 3, 2 and 1 examples, is evaluate's loss the mean of the three batch losses (each batch counts
    once, whatever its size), not the mean over the six examples?"""
    model, w0, b0 = linear_model()
    unequal = [(X[:3], Y[:3]), (X[3:5], Y[3:5]), (X[5:], Y[5:])]
    loss = evaluate(model, as_tensors(unequal), MSELoss())
    by_batch = numpy_mse(w0, b0, unequal)
    by_example = float(np.mean((X @ w0 + b0 - Y) ** 2))
    if np.isclose(loss, by_example, rtol=1e-9):
        pytest.fail(f"evaluate returned {loss:.6g}, the mean over the 6 examples: return the mean of the 3 batch "
                    f"losses, {by_batch:.6g}", pytrace=False)
    assert_close(loss, by_batch, "the mean of the batch losses")


@pytest.mark.task5_2
def test_evaluate_runs_in_eval_mode_and_records_nothing():
    """Does every forward in evaluate run in eval mode, the model's inner layers too, under no_grad(), with no
    gradient left behind?"""
    model = linear_model()[0]
    inner = Probe(model)
    probe = Probe(inner)
    evaluate(probe, as_tensors(BATCHES), MSELoss())
    assert probe.seen == [(False, False, False)] * 3, \
        f"(training, grad mode on, output requires grad) at each forward: {probe.seen}"
    assert [training for training, _, _ in inner.seen] == [False] * 3, (
        "the model's inner layer ran in training mode: model.eval() puts every submodule in eval mode, while "
        "model.training = False sets the outer one only")
    assert all(p.grad is None for p in model.parameters()), "evaluate left gradients on the parameters"


@pytest.mark.task5_2
def test_evaluate_restores_the_previous_mode():
    """After evaluate, is a model in training mode back in training mode, and one in eval mode still in eval?"""
    model = linear_model()[0]
    evaluate(model.train(), as_tensors(BATCHES), MSELoss())
    assert model.training is True, "a model in training mode was left in eval mode"
    evaluate(model.eval(), as_tensors(BATCHES), MSELoss())
    assert model.training is False, "a model in eval mode was left in training mode"


@pytest.mark.task5_2
def test_evaluate_restores_the_mode_when_the_loader_raises():
    """When the loader raises partway, does evaluate pass the error on and still leave a model in training mode in
    training mode (a finally block)?"""
    model = linear_model()[0].train()
    with pytest.raises(LoaderFailed):
        evaluate(model, DyingLoader(as_tensors(BATCHES), dies_in=1), MSELoss())
    assert model.training is True, ("the model was left in eval mode when the loader raised: restore the mode in a "
                                    "finally block")


@pytest.mark.task5_2
def test_evaluate_calls_the_loss_with_the_prediction_first():
    """Is every loss in evaluate computed as loss_fn(model(xb), yb), prediction first and target second?"""
    loss = OrderedLoss()
    evaluate(linear_model()[0], as_tensors(BATCHES), loss)
    assert loss.targets_second == [True] * 3, "loss_fn was not given (prediction, target): call loss_fn(model(xb), yb)"


# ----- 5.3 accumulation and clip_grad_norm -----

def with_grad(values) -> Tensor:
    p = Tensor(np.zeros(np.shape(values)), requires_grad=True)
    p.grad = np.array(values, dtype=np.float64)
    return p


@pytest.mark.task5_3
def test_clip_grad_norm_scales_a_long_gradient_down_to_max_norm():
    """For grads [3] and [[4, 0]] (norm 5) and max_norm 1, is 5 returned and each grad scaled by 1/5?"""
    a, b = with_grad([3.0]), with_grad([[4.0, 0.0]])
    total = clip_grad_norm([a, b], max_norm=1.0)
    assert_close(total, 5.0, "the norm clip_grad_norm returned")
    assert_close(a.grad, [0.6], "a.grad after clipping", rtol=1e-6)
    assert_close(b.grad, [[0.8, 0.0]], "b.grad after clipping", rtol=1e-6)


@pytest.mark.task5_3
def test_clip_grad_norm_scales_by_max_norm_over_the_norm_plus_1e_6():
    """As torch.nn.utils.clip_grad_norm_, is the scale max_norm / (norm + 1e-6)? For a grad of norm 1e-6 and
    max_norm 1e-7 it is 0.05, not 0.1 (the 1e-6 keeps a zero gradient from dividing by zero)."""
    p = with_grad([0.6e-6, 0.8e-6])
    clip_grad_norm([p], max_norm=1e-7)
    assert_close(p.grad, [0.03e-6, 0.04e-6], "p.grad after clipping", rtol=1e-9, atol=0.0)


@pytest.mark.task5_3
def test_clip_grad_norm_leaves_a_short_gradient_alone():
    """For a grad of norm 5 and max_norm 10, is the grad unchanged, in the same array?"""
    p = with_grad([3.0, 4.0])
    before = p.grad
    assert_close(clip_grad_norm([p], max_norm=10.0), 5.0, "the norm clip_grad_norm returned")
    assert p.grad is before, "clip_grad_norm replaced p.grad: scale it in place"
    assert_close(p.grad, [3.0, 4.0], "p.grad after clipping")


@pytest.mark.task5_3
def test_clip_grad_norm_skips_parameters_without_grad():
    """With one parameter's grad None, is the norm over the others, and the None left as it is?"""
    a, b = with_grad([6.0, 8.0]), Tensor([1.0], requires_grad=True)
    assert_close(clip_grad_norm([a, b], max_norm=5.0), 10.0, "the norm clip_grad_norm returned")
    assert b.grad is None, "clip_grad_norm gave a gradient to a parameter that had none"
    assert_close(a.grad, [3.0, 4.0], "a.grad after clipping", rtol=1e-6)


@pytest.mark.task5_3
def test_accumulate_two_steps_after_every_second_batch_and_after_the_last():
    """With accumulate=2 over three batches, does it step twice and match numpy's averaged gradients?"""
    model, w0, b0 = linear_model()
    opt = CountingSGD(model.parameters(), lr=0.1)
    loss = train_epoch(model, as_tensors(BATCHES), opt, MSELoss(), accumulate=2)
    weight, bias, expected_loss = numpy_linear_epoch(w0, b0, BATCHES, lr=0.1, accumulate=2)
    assert opt.steps == 2, f"the optimizer stepped {opt.steps} time(s), expected 2 (after batches 2 and 3)"
    assert_close(model.weight.data, weight, "weight after one epoch with accumulate=2")
    assert_close(model.bias.data, bias, "bias after one epoch with accumulate=2")
    assert_close(loss, expected_loss, "the mean batch loss (before dividing by accumulate)")


@pytest.mark.task5_3
def test_train_epoch_clips_before_stepping():
    """With one batch, lr 0.1 and clip_norm 0.01, do the parameters move by a distance of 0.1 * 0.01?"""
    model, w0, b0 = linear_model()
    batch = [(Tensor(X), Tensor(Y + 100.0))]  # far off, so the gradient is long
    train_epoch(model, batch, CountingSGD(model.parameters(), lr=0.1), MSELoss(), clip_norm=0.01)
    moved = np.sqrt(np.sum((model.weight.data - w0) ** 2) + np.sum((model.bias.data - b0) ** 2))
    assert_close(moved, 0.001, "the distance the parameters moved", rtol=1e-4)


# ----- 5.4 fit -----

@pytest.mark.task5_4
def test_fit_returns_one_float_per_epoch():
    """Over 3 epochs, does fit return 3 train losses as floats, an empty val_loss, and step 9 times?"""
    model = linear_model()[0]
    opt = CountingSGD(model.parameters(), lr=0.1)
    history = fit(model, as_tensors(BATCHES), opt, MSELoss(), 3)
    assert set(history) == {"train_loss", "val_loss"}, f"history keys {sorted(history)}"
    assert len(history["train_loss"]) == 3, f"{len(history['train_loss'])} train losses for 3 epochs"
    assert all(type(v) in (float, np.float64) for v in history["train_loss"]), \
        f"train losses {history['train_loss']}: expected one float per epoch"
    assert history["val_loss"] == [], f"val_loss without a val_loader: {history['val_loss']}"
    assert opt.steps == 9, f"the optimizer stepped {opt.steps} time(s) in 3 epochs of 3 batches"


@pytest.mark.task5_4
def test_fit_matches_epochs_of_plain_sgd_and_validates_each_epoch():
    """Over 2 epochs with a val_loader, do the losses and weights match numpy, one val loss per epoch?"""
    model, weight, bias = linear_model()
    history = fit(model, as_tensors(BATCHES), CountingSGD(model.parameters(), lr=0.1), MSELoss(), 2,
                  val_loader=as_tensors(BATCHES[:1]))
    train_loss, val_loss = [], []
    for _ in range(2):
        weight, bias, loss = numpy_linear_epoch(weight, bias, BATCHES, lr=0.1)
        train_loss.append(loss)
        val_loss.append(numpy_mse(weight, bias, BATCHES[:1]))
    assert_close(history["train_loss"], train_loss, "train_loss")
    assert_close(history["val_loss"], val_loss, "val_loss")
    assert_close(model.weight.data, weight, "weight after 2 epochs")


@pytest.mark.task5_4
def test_fit_passes_accumulate_and_clip_norm_on_to_train_epoch():
    """Does fit(..., accumulate=2, clip_norm=0.5) train as train_epoch(..., accumulate=2, clip_norm=0.5) does (and
    not as train_epoch without them)?"""
    (model, _, _), (twin, _, _), (plain, _, _) = linear_model(), linear_model(), linear_model()
    fit(model, as_tensors(BATCHES), CountingSGD(model.parameters(), lr=0.1), MSELoss(), 1, accumulate=2,
        clip_norm=0.5)
    train_epoch(twin, as_tensors(BATCHES), CountingSGD(twin.parameters(), lr=0.1), MSELoss(), accumulate=2,
                clip_norm=0.5)
    train_epoch(plain, as_tensors(BATCHES), CountingSGD(plain.parameters(), lr=0.1), MSELoss())
    if np.allclose(model.weight.data, plain.weight.data) and not np.allclose(twin.weight.data, plain.weight.data):
        pytest.fail("fit trained as train_epoch without accumulate and clip_norm: pass them on, "
                    "train_epoch(model, train_loader, optimizer, loss_fn, accumulate=accumulate, clip_norm=clip_norm)",
                    pytrace=False)
    assert_close(model.weight.data, twin.weight.data, "weight after fit(..., accumulate=2, clip_norm=0.5)")


@pytest.mark.task5_4
def test_fit_brings_the_lesson_network_to_the_noise_floor():
    """Does the lesson's 1-32-1 ReLU net, SGD lr 0.02, batches of 32, reach a training MSE below 0.015 in 300 epochs?"""
    rng = np.random.default_rng(0)
    model = Sequential(Linear(1, 32, rng=rng), ReLU(), Linear(32, 1, rng=rng))
    loader = DataLoader(*make_sine_data(), batch_size=32, shuffle=True, rng=np.random.default_rng(1))
    history = fit(model, loader, SGD(model.parameters(), lr=0.02), MSELoss(), 300)
    final = history["train_loss"][-1]
    assert final < 0.015, f"training MSE after 300 epochs is {final:.4f}, expected below 0.015 (noise floor 0.01)"


# ----- 5.5 checkpoint and resume -----

class LoaderFailed(Exception):
    """What DyingLoader raises: the run stopped partway (a crash, a machine taken away)."""


class DyingLoader:
    """A loader's batches again at each epoch, until epoch ``dies_in`` (counted from 1), which raises LoaderFailed."""

    def __init__(self, loader, dies_in: int):
        self.loader, self.dies_in, self.epoch = loader, dies_in, 0

    def __len__(self):
        return self.loader.__len__()

    def __iter__(self):
        self.epoch = self.epoch + 1
        if self.epoch == self.dies_in:
            raise LoaderFailed(f"the loader failed in epoch {self.dies_in}")
        yield from self.loader


def small_model(seed: int = 0) -> Sequential:
    rng = np.random.default_rng(seed)
    return Sequential(Linear(1, 8, rng=rng), ReLU(), Linear(8, 1, rng=rng))


def small_run(epochs: int, checkpoint, seed: int = 0, dies_in: int | None = None):
    """A 1-8-1 ReLU net with SGD and momentum on 64 points, in order (no shuffling); with ``dies_in``, its loader
    fails in that epoch (LoaderFailed)."""
    model = small_model(seed)
    x, y = make_sine_data(n=64)
    train = DataLoader(x, y, batch_size=16, shuffle=False)
    if dies_in is not None:
        train = DyingLoader(train, dies_in)
    val = DataLoader(x[:16], y[:16], batch_size=16, shuffle=False)
    history = fit(model, train, SGD(model.parameters(), lr=0.05, momentum=0.9), MSELoss(), epochs,
                  val_loader=val, checkpoint=checkpoint)
    return model, history


def saved(path) -> dict[str, np.ndarray]:
    """The checkpoint's arrays by key, read as the graders read it."""
    with np.load(path, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


@pytest.mark.task5_5
def test_a_resumed_run_ends_like_an_uninterrupted_one(tmp_path):
    """Run 2 epochs, then a fresh model and optimizer resume to 4: same weights and history as 4 in one go?"""
    whole, whole_history = small_run(4, checkpoint=tmp_path / "whole.ckpt")
    small_run(2, checkpoint=tmp_path / "cut.ckpt")
    resumed, resumed_history = small_run(4, checkpoint=tmp_path / "cut.ckpt", seed=99)
    assert_close(resumed_history["train_loss"], whole_history["train_loss"], "train_loss of the resumed run")
    assert_close(resumed_history["val_loss"], whole_history["val_loss"], "val_loss of the resumed run")
    for name, value in whole.state_dict().items():
        assert_close(resumed.state_dict()[name], value, f"{name} at the end of the resumed run")


@pytest.mark.task5_5
def test_the_checkpoint_is_written_at_exactly_the_given_path(tmp_path):
    """Is the checkpoint at the path given (no '.npz' added), readable by np.load without pickle?"""
    path = tmp_path / "run.ckpt"
    small_run(1, checkpoint=path)
    assert path.exists(), f"no file at {path.name}; found {sorted(p.name for p in tmp_path.iterdir())}"
    with np.load(path, allow_pickle=False) as saved:
        assert saved.files, "the checkpoint holds no arrays"


TRIPPED = []


def _trip():
    TRIPPED.append("unpickled")


class Tripwire:
    """Unpickling one of these runs _trip: what a checkpoint loaded with pickle allowed would do with code someone
    else put in the file."""

    def __reduce__(self):
        return (_trip, ())


@pytest.mark.task5_5
def test_fit_reads_its_checkpoint_without_pickle(tmp_path):
    """Given a checkpoint whose arrays are pickled objects, does fit refuse to unpickle them (np.load with
    allow_pickle=False), whatever it then raises?"""
    path = tmp_path / "run.ckpt"
    small_run(1, checkpoint=path)
    with np.load(path, allow_pickle=False) as saved:
        tripwires = {key: np.array(Tripwire(), dtype=object) for key in saved.files}  # each a 0-d object array
    with open(path, "wb") as checkpoint:
        np.savez(checkpoint, **tripwires)
    TRIPPED.clear()
    try:
        small_run(1, checkpoint=path)
    except Exception:  # noqa: BLE001 - refusing the file is right; only whether the pickle ran is asked
        pass
    assert not TRIPPED, "fit unpickled the checkpoint: load it with np.load(path, allow_pickle=False)"


@pytest.mark.task5_5
def test_resuming_a_finished_run_trains_no_more(tmp_path):
    """Called again with the same epochs, does fit return the saved history and leave the weights as saved?"""
    path = tmp_path / "run.ckpt"
    first, history = small_run(2, checkpoint=path)
    again, again_history = small_run(2, checkpoint=path, seed=99)
    assert_close(again_history["train_loss"], history["train_loss"], "train_loss of the finished run")
    for name, value in first.state_dict().items():
        assert_close(again.state_dict()[name], value, f"{name} after resuming a finished run")


@pytest.mark.task5_5
def test_the_checkpoint_holds_both_state_dicts_under_their_prefixes(tmp_path):
    """Does the checkpoint hold every entry of model.state_dict() under 'model.' + its key and every entry of
    optimizer.state_dict() (the momentum buffers) under 'optim.' + its key, so any loader of the format reads it?"""
    path = tmp_path / "run.ckpt"
    model, _ = small_run(1, checkpoint=path)
    keys = set(saved(path))
    wanted = [f"model.{name}" for name in model.state_dict()]
    wanted += [f"optim.momentum_buffer.{i}" for i in range(len(model.parameters()))]
    missing = [key for key in wanted if key not in keys]
    assert not missing, (f"the checkpoint holds {sorted(keys)}, without {missing}: save each model entry as "
                         "'model.' + its key and each optimizer entry as 'optim.' + its key")


@pytest.mark.task5_5
def test_resuming_loads_the_weights_in_the_file(tmp_path):
    """With the checkpoint's model.* arrays changed (as another run might have left them), does resuming a finished
    run leave the model with the file's weights, not its own or those of the run that saved?"""
    path = tmp_path / "run.ckpt"
    small_run(2, checkpoint=path)
    arrays = saved(path)
    changed = {key: value + 0.5 if key.startswith("model.") else value for key, value in arrays.items()}
    with open(path, "wb") as f:
        np.savez(f, **changed)
    resumed, _ = small_run(2, checkpoint=path, seed=99)
    for name, value in resumed.state_dict().items():
        assert_close(value, changed[f"model.{name}"], f"{name} after resuming from a changed checkpoint")


@pytest.mark.task5_5
def test_load_checkpoint_returns_the_epoch_count_as_an_int(tmp_path):
    """Does _load_checkpoint return (epochs done, history) with the count a Python int, as its docstring says (np.load
    gives every value back as an array)?"""
    path = tmp_path / "run.ckpt"
    small_run(2, checkpoint=path)
    model = small_model()
    done, history = _load_checkpoint(path, model, SGD(model.parameters(), lr=0.05, momentum=0.9))
    assert type(done) is int and done == 2, f"the epoch count came back as {done!r} ({type(done).__name__}), " \
                                            "expected the int 2: return int(saved['epoch'])"
    assert len(history["train_loss"]) == 2, f"the history holds {len(history['train_loss'])} train losses, expected 2"


@pytest.mark.task5_5
def test_a_run_that_dies_keeps_the_epochs_it_finished(tmp_path):
    """A 4-epoch run whose loader fails in epoch 3: does the checkpoint hold the 2 epochs it finished (fit saves after
    every epoch), with the weights of 2 epochs?"""
    path = tmp_path / "run.ckpt"
    with pytest.raises(LoaderFailed):
        small_run(4, checkpoint=path, dies_in=3)
    assert path.exists(), "the run that died left no checkpoint: save after every epoch, not once at the end"
    two, _ = small_run(2, checkpoint=tmp_path / "two.ckpt")
    arrays = saved(path)
    for name, value in two.state_dict().items():
        assert_close(arrays[f"model.{name}"], value, f"model.{name} in the checkpoint the run left")


class Unwritable:
    """An optimizer state entry numpy cannot turn into an array: a save dies when it comes to write it."""

    def __array__(self, *args, **kwargs):
        raise LoaderFailed("the run died while the checkpoint was being written")


@pytest.mark.task5_5
def test_a_save_that_dies_midway_leaves_the_last_checkpoint_whole(tmp_path):
    """Does a _save_checkpoint that dies while it writes leave the checkpoint it was replacing exactly as it was
    (a temporary file, then os.replace)?"""
    path = tmp_path / "run.ckpt"
    model, _ = small_run(2, checkpoint=path)
    before = path.read_bytes()
    dying = SGD(model.parameters(), lr=0.05, momentum=0.9)
    dying.state_dict = lambda: {"momentum_buffer.0": Unwritable()}
    try:
        _save_checkpoint(path, model, dying, 3, {"train_loss": [0.0] * 3, "val_loss": [0.0] * 3})
    except LoaderFailed:
        pass  # the save died, as it was meant to
    else:
        pytest.fail("_save_checkpoint finished without writing the optimizer's state (this optimizer's state_dict() "
                    "holds an entry numpy cannot write, so a save that writes it dies here): save every entry of "
                    "optimizer.state_dict() under 'optim.' + its key", pytrace=False)
    assert path.read_bytes() == before, ("a save that died changed the checkpoint it was replacing: write a temporary "
                                         "file, then os.replace it onto the path")
