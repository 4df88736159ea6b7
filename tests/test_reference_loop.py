"""Do the DataLoader, the training loop and fit_torch in solutions/ keep the contract?

DataLoader properties over drawn sizes; clip_grad_norm against
torch.nn.utils.clip_grad_norm_; gradient accumulation against one big batch;
evaluate's mode handling; fit's checkpoint against an uninterrupted run; and
the lesson's convergence bar, on this engine and in PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from solutions import (
    SGD,
    Adam,
    DataLoader,
    Linear,
    MSELoss,
    ReLU,
    Sequential,
    Tensor,
    clip_grad_norm,
    evaluate,
    fit,
    is_grad_enabled,
    make_sine_data,
    train_epoch,
)
from solutions.lesson import BATCH, EPOCHS, LR, run_numpy

reference = settings(derandomize=True, database=None, deadline=None, max_examples=50)


# ----- DataLoader -----
def numbered_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """X holds each example's index and Y (10 x, 10 x + 1), so a batch shows which examples it holds, paired right."""
    X = np.arange(n, dtype=np.float64).reshape(n, 1)
    return X, np.hstack([10 * X, 10 * X + 1])


def epoch(loader) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(xb.data, yb.data) for xb, yb in loader]


@reference
@given(n=st.integers(1, 40), batch_size=st.integers(1, 12), shuffle=st.booleans(), drop_last=st.booleans())
def test_every_epoch_covers_each_example_once_in_batches_of_batch_size(n, batch_size, shuffle, drop_last):
    """In every epoch, is each example yielded at most once (exactly once without drop_last), with (x, y) kept
    together, in full batches and one smaller last batch only without drop_last, and len(loader) batches?"""
    X, Y = numbered_data(n)
    loader = DataLoader(X, Y, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                        rng=np.random.default_rng(0))
    expected_batches = n // batch_size if drop_last else -(-n // batch_size)
    assert len(loader) == expected_batches
    for _ in range(2):
        batches = epoch(loader)
        assert len(batches) == expected_batches
        sizes = [len(xb) for xb, _ in batches]
        assert all(size == batch_size for size in sizes[:-1])
        assert sizes == [] or (sizes[-1] == batch_size if drop_last else 1 <= sizes[-1] <= batch_size)
        seen = np.concatenate([xb[:, 0] for xb, _ in batches]) if batches else np.array([])
        assert len(set(seen)) == len(seen) == (n // batch_size * batch_size if drop_last else n)
        for xb, yb in batches:
            assert xb.shape[1:] == (1,) and yb.shape == (len(xb), 2)
            np.testing.assert_array_equal(yb, np.hstack([10 * xb, 10 * xb + 1]))


def test_without_shuffle_the_order_is_the_datas():
    """With shuffle=False, do the batches come in the data's own order, every epoch?"""
    X, Y = numbered_data(10)
    loader = DataLoader(X, Y, batch_size=4, shuffle=False)
    for _ in range(2):
        assert [xb[:, 0].tolist() for xb, _ in epoch(loader)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_each_epoch_draws_a_fresh_permutation():
    """With shuffle=True, does each epoch (each iter()) come in a new order?"""
    X, Y = numbered_data(50)
    loader = DataLoader(X, Y, batch_size=8, rng=np.random.default_rng(3))
    orders = [np.concatenate([xb[:, 0] for xb, _ in epoch(loader)]) for _ in range(3)]
    assert not np.array_equal(orders[0], orders[1]) and not np.array_equal(orders[1], orders[2])
    assert not np.array_equal(orders[0], np.arange(50))


def test_loaders_with_the_same_seed_yield_the_same_batches():
    """Do two loaders given generators with the same seed yield the same batches, epoch after epoch?"""
    X, Y = numbered_data(30)
    first, second = (DataLoader(X, Y, batch_size=7, rng=np.random.default_rng(11)) for _ in range(2))
    for _ in range(3):
        for (x1, y1), (x2, y2) in zip(epoch(first), epoch(second), strict=True):
            np.testing.assert_array_equal(x1, x2)
            np.testing.assert_array_equal(y1, y2)


def test_batches_are_tensors_without_requires_grad():
    """Does iterating yield (Tensor, Tensor) pairs that do not require grad?"""
    X, Y = numbered_data(5)
    for xb, yb in DataLoader(X, Y, batch_size=2, rng=np.random.default_rng(0)):
        assert isinstance(xb, Tensor) and isinstance(yb, Tensor)
        assert not xb.requires_grad and not yb.requires_grad
        assert xb.data.dtype == np.float64 and yb.data.dtype == np.float64


# ----- clip_grad_norm -----
@pytest.mark.parametrize("max_norm, clips", [(0.5, True), (2.0, True), (100.0, False)])
def test_clip_grad_norm_equals_torchs(max_norm, clips):
    """Are the returned norm and the clipped grads those of torch.nn.utils.clip_grad_norm_, skipping grads of None?"""
    rng = np.random.default_rng(5)
    grads = [rng.normal(size=(3, 2)), None, rng.normal(size=(4,)), rng.normal(size=())]
    ours = [Tensor(np.zeros(np.shape(g) if g is not None else (2,)), requires_grad=True) for g in grads]
    theirs = [torch.zeros(p.shape, dtype=torch.float64, requires_grad=True) for p in ours]
    for p, q, g in zip(ours, theirs, grads, strict=True):
        p.grad = None if g is None else g.copy()
        q.grad = None if g is None else torch.tensor(g)

    total = clip_grad_norm(ours, max_norm)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm)

    assert type(total) is float
    np.testing.assert_allclose(total, expected.item(), rtol=1e-12)
    assert (total > max_norm) is clips
    for p, q in zip(ours, theirs, strict=True):
        if q.grad is None:
            assert p.grad is None
        else:
            np.testing.assert_allclose(p.grad, q.grad.numpy(), rtol=1e-12)


# ----- train_epoch, evaluate -----
def small_network(seed: int = 0) -> Sequential:
    rng = np.random.default_rng(seed)
    return Sequential(Linear(2, 5, rng=rng), ReLU(), Linear(5, 1, rng=rng))


def regression_data(n: int = 24, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, :1]) + X[:, 1:] ** 2


@pytest.mark.parametrize("accumulate", [2, 3, 4])
def test_accumulating_equal_batches_equals_one_step_over_their_concatenation(accumulate):
    """With a mean loss, is train_epoch with accumulate=k over batches of b the same as accumulate=1 over batches of
    k * b (same parameters after the epoch, same reported loss)?"""
    X, Y = regression_data(24)
    small, big = small_network(), small_network()
    small_loss = train_epoch(small, DataLoader(X, Y, batch_size=2, shuffle=False), SGD(small.parameters(), lr=0.1),
                             MSELoss(), accumulate=accumulate)
    big_loss = train_epoch(big, DataLoader(X, Y, batch_size=2 * accumulate, shuffle=False),
                           SGD(big.parameters(), lr=0.1), MSELoss())
    assert type(small_loss) is float
    for name, value in small.state_dict().items():
        np.testing.assert_allclose(value, big.state_dict()[name], rtol=1e-12, atol=1e-15, err_msg=name)
    # Each group's losses are all computed before its step, so the group mean is the big batch's loss.
    np.testing.assert_allclose(small_loss, big_loss, rtol=1e-12)


class RecordingLoss(MSELoss):
    """MSELoss that keeps every loss it made, the grad mode and the model's mode at that moment."""

    def __init__(self, model):
        self.model, self.seen = model, []

    def forward(self, pred, target):
        loss = super().forward(pred, target)
        self.seen.append((loss, is_grad_enabled(), [m.training for m in self.model.modules()]))
        return loss


@pytest.mark.parametrize("training", [True, False], ids=["from train mode", "from eval mode"])
def test_evaluate_runs_in_eval_mode_without_a_graph_and_restores_the_mode(training):
    """Does evaluate run every module in eval mode under no_grad (no loss records a graph, no grad appears) and
    leave the model in the mode it found it?"""
    X, Y = regression_data(10)
    model = small_network()
    model.train(training)
    loss_fn = RecordingLoss(model)
    result = evaluate(model, DataLoader(X, Y, batch_size=4, shuffle=False), loss_fn)
    assert type(result) is float
    assert [m.training for m in model.modules()] == [training] * len(model.modules())
    assert is_grad_enabled()
    assert len(loss_fn.seen) == 3
    for loss, grad_enabled, modes in loss_fn.seen:
        assert not grad_enabled and not any(modes)
        assert not loss.requires_grad and loss._parents == ()
    assert all(p.grad is None for p in model.parameters())
    np.testing.assert_allclose(result, np.mean([loss.item() for loss, _, _ in loss_fn.seen]), rtol=1e-15)


# ----- fit and its checkpoint -----
def checkpointed_setup(optimizer_name: str, seed: int = 0):
    X, Y = regression_data(20)
    model = small_network(seed)
    optimizer = (SGD(model.parameters(), lr=0.05, momentum=0.9) if optimizer_name == "SGD momentum"
                 else Adam(model.parameters(), lr=0.01, weight_decay=0.01))
    loaders = DataLoader(X, Y, batch_size=6, shuffle=False), DataLoader(X[:8], Y[:8], batch_size=4, shuffle=False)
    return model, optimizer, loaders


@pytest.mark.parametrize("optimizer_name", ["SGD momentum", "Adam"])
def test_a_run_resumed_from_its_checkpoint_ends_as_an_uninterrupted_run(optimizer_name, tmp_path):
    """Is 3 epochs, then a fresh model and optimizer resumed from the checkpoint to 6 epochs, exactly 6 epochs
    in one go (parameters and the whole history)?"""
    model, optimizer, (train, val) = checkpointed_setup(optimizer_name)
    straight = fit(model, train, optimizer, MSELoss(), 6, val_loader=val)

    path = str(tmp_path / "run.ckpt")
    first, first_opt, _ = checkpointed_setup(optimizer_name)
    fit(first, train, first_opt, MSELoss(), 3, val_loader=val, checkpoint=path)
    resumed, resumed_opt, _ = checkpointed_setup(optimizer_name, seed=99)  # resuming must overwrite these weights
    history = fit(resumed, train, resumed_opt, MSELoss(), 6, val_loader=val, checkpoint=path)

    assert history == straight
    assert len(history["train_loss"]) == len(history["val_loss"]) == 6
    assert all(type(x) is float for x in history["train_loss"] + history["val_loss"])
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(resumed.state_dict()[name], value, err_msg=name)


def test_the_checkpoint_is_written_at_exactly_the_given_path(tmp_path):
    """Does fit write its checkpoint at the path it was given (no '.npz' added, nothing else left behind),
    readable without pickle?"""
    model, optimizer, (train, _) = checkpointed_setup("Adam")
    path = tmp_path / "checkpoint"
    history = fit(model, train, optimizer, MSELoss(), 2, checkpoint=path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    with np.load(path, allow_pickle=False) as saved:
        assert saved.files
    assert history["val_loss"] == [] and len(history["train_loss"]) == 2


# ----- the lesson -----
def test_the_lesson_reaches_the_noise_floor_on_this_engine():
    """Does the lesson's run (1-32-1 ReLU, SGD lr 0.02, batches of 32, 300 epochs) end below 0.015 training MSE?"""
    losses = run_numpy()
    assert len(losses) == EPOCHS
    assert losses[-1] < 0.015, f"final training MSE {losses[-1]:.4f}, expected < 0.015 (1.5 x the noise floor)"


@pytest.mark.slow
def test_fit_torch_reaches_the_noise_floor_on_the_cpu():
    """Does fit_torch with the lesson's setup on the CPU end below 0.015 and return a history of floats?"""
    from solutions.torch_loop import fit_torch

    torch.manual_seed(0)
    X, Y = (torch.from_numpy(a) for a in make_sine_data())
    model = torch.nn.Sequential(torch.nn.Linear(1, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).double()
    dataset = torch.utils.data.TensorDataset(X, Y)
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True,
                                         generator=torch.Generator().manual_seed(1))
    val_loader = [(X, Y)]
    history = fit_torch(model, loader, torch.optim.SGD(model.parameters(), lr=LR), torch.nn.MSELoss(), EPOCHS,
                        device="cpu", val_loader=val_loader)
    assert set(history) == {"train_loss", "val_loss"}
    assert len(history["train_loss"]) == len(history["val_loss"]) == EPOCHS
    assert all(type(x) is float for x in history["train_loss"] + history["val_loss"])
    assert history["train_loss"][-1] < 0.015, f"final training MSE {history['train_loss'][-1]:.4f}, expected < 0.015"
