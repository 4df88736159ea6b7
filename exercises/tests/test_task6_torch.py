"""Task 6: the same loop in PyTorch. Skipped where torch is not installed."""

import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ..torch_loop import fit_torch  # noqa: E402  (only once torch is known to be there)


def tiny_run(device, epochs: int = 5, model=None):
    """y = 3x + 1 on 16 points in batches of 4, a Linear(1, 1) in float64, SGD lr 0.1."""
    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 16, dtype=torch.float64).reshape(-1, 1)
    batches = [(x[i:i + 4], 3 * x[i:i + 4] + 1) for i in range(0, 16, 4)]
    model = torch.nn.Linear(1, 1).double() if model is None else model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    history = fit_torch(model, batches, optimizer, torch.nn.MSELoss(), epochs, device=device,
                        val_loader=batches[:1])
    return model, history


class Probe(torch.nn.Module):
    """A Linear(1, 1) that notes, at every forward, (training?, grad mode on?)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1).double()
        self.seen = []

    def forward(self, x):
        self.seen.append((self.training, torch.is_grad_enabled()))
        return self.linear(x)


def plain_sgd_epochs(model, batches, lr: float, epochs: int) -> list[float]:
    """What fit_torch must do, written another way: per batch, the loss's gradients by torch.autograd.grad and
    p -= lr * grad; each epoch's train loss the mean of its batch losses. Returns those means."""
    means = []
    for _ in range(epochs):
        losses = []
        for xb, yb in batches:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            grads = torch.autograd.grad(loss, list(model.parameters()))
            with torch.no_grad():
                for p, g in zip(model.parameters(), grads):
                    p -= lr * g
            losses.append(loss.item())
        means.append(sum(losses) / len(losses))
    return means


@pytest.mark.task6_1
def test_fit_torch_steps_on_each_batch_and_averages_unequal_batches():
    """On batches of 6, 6 and 4 examples, do fit_torch's 3 epochs of SGD (lr 0.1) end with the weights and train
    losses of plain SGD, one step per batch with that batch's gradient alone, each epoch's loss the mean of its
    batch losses (not of its examples)?"""
    x = torch.linspace(-1.0, 1.0, 16, dtype=torch.float64).reshape(-1, 1)
    batches = [(x[i:i + 6], 3 * x[i:i + 6] + 1) for i in range(0, 16, 6)]
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1).double()
    twin = torch.nn.Linear(1, 1).double()
    twin.load_state_dict(model.state_dict())
    history = fit_torch(model, batches, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss(), 3,
                        device="cpu")
    expected = plain_sgd_epochs(twin, batches, lr=0.1, epochs=3)
    got = [float(v) for v in history["train_loss"]]
    assert np.allclose(got, expected, rtol=1e-9, atol=1e-12), (
        f"train_loss {np.round(got, 6).tolist()}, expected {np.round(expected, 6).tolist()}: one step per batch "
        "after zero_grad() and backward(), and each epoch's loss the mean of its batch losses")
    for name, p in model.named_parameters():
        q = dict(twin.named_parameters())[name]
        assert torch.allclose(p, q, rtol=1e-9, atol=1e-12), f"{name} after 3 epochs is {p.tolist()}, expected " \
                                                             f"{q.tolist()}"


@pytest.mark.task6_1
def test_fit_torch_on_the_cpu_returns_float_losses_that_go_down():
    """On the CPU, does fit_torch return 5 float train and val losses, the last train loss below the first?"""
    _, history = tiny_run("cpu")
    assert set(history) == {"train_loss", "val_loss"}, f"history keys {sorted(history)}"
    for key in ("train_loss", "val_loss"):
        assert len(history[key]) == 5, f"{len(history[key])} {key} values for 5 epochs"
        assert all(type(v) in (float, np.float64) for v in history[key]), \
            f"{key}: {history[key]} (read losses with .item())"
    assert history["train_loss"][-1] < history["train_loss"][0], f"train_loss went {history['train_loss']}"


@pytest.mark.task6_1
def test_fit_torch_trains_in_train_mode_and_validates_in_eval_mode_without_grad():
    """Do the 4 training batches run in train mode with grad on, and the validation batch in eval mode under no_grad?"""
    probe = Probe()
    tiny_run(torch.device("cpu"), epochs=1, model=probe)
    assert probe.seen == [(True, True)] * 4 + [(False, False)], f"(training, grad on) at each forward: {probe.seen}"


@pytest.mark.task6_1
def test_fit_torch_goes_back_to_train_mode_after_each_validation():
    """Over 2 epochs, does each epoch's training run in train mode again after the last epoch's validation
    (model.train() at the start of every epoch, not once before the loop)?"""
    probe = Probe()
    tiny_run(torch.device("cpu"), epochs=2, model=probe)
    expected = ([("train", "on")] * 4 + [("eval", "off")]) * 2  # per epoch: 4 training batches, 1 validation
    seen = [("train" if training else "eval", "on" if grad else "off") for training, grad in probe.seen]
    for index, (want, got) in enumerate(zip(expected, seen)):
        if want != got:
            epoch, batch = divmod(index, 5)
            what = f"epoch {epoch + 1}'s " + (f"training batch {batch + 1}" if batch < 4 else "validation")
            pytest.fail(f"{what} ran in {got[0]} mode with gradients {got[1]}, expected {want[0]} mode with "
                        f"gradients {want[1]}", pytrace=False)
    if len(seen) != len(expected):
        pytest.fail(f"{len(seen)} forward calls over 2 epochs, expected {len(expected)} (4 training batches and 1 "
                    "validation batch per epoch)", pytrace=False)


@pytest.mark.task6_1
def test_fit_torch_validates_on_the_mean_of_every_validation_batch():
    """With lr 0 (the model never moves) and 4 validation batches of different losses, is each epoch's val_loss
    the mean of the 4 batch losses (not the last batch's, nor their sum)?"""
    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 16, dtype=torch.float64).reshape(-1, 1)
    batches = [(x[i:i + 4], 3 * x[i:i + 4] + 1) for i in range(0, 16, 4)]
    model = torch.nn.Linear(1, 1).double()
    with torch.no_grad():
        expected = sum(torch.nn.functional.mse_loss(model(xb), yb).item() for xb, yb in batches) / 4
    history = fit_torch(model, batches, torch.optim.SGD(model.parameters(), lr=0.0), torch.nn.MSELoss(), 2,
                        val_loader=batches)
    assert history["val_loss"] == pytest.approx([expected] * 2, rel=1e-9), \
        f"val_loss {history['val_loss']}, expected the mean of the 4 batch losses, {expected:.6g}, each epoch"


@pytest.mark.task6_1
def test_fit_torch_validates_on_the_mean_of_unequal_batches_not_of_the_examples():
    """With lr 0 and validation batches of 8, 6 and 2 examples, is each epoch's val_loss the mean of the 3 batch
    losses (each batch counts once, whatever its size), not the mean over the 16 examples?"""
    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 16, dtype=torch.float64).reshape(-1, 1)
    batches = [(x[a:b], 3 * x[a:b] + 1) for a, b in ((0, 8), (8, 14), (14, 16))]
    model = torch.nn.Linear(1, 1).double()
    with torch.no_grad():
        by_batch = sum(torch.nn.functional.mse_loss(model(xb), yb).item() for xb, yb in batches) / 3
        by_example = torch.nn.functional.mse_loss(model(x), 3 * x + 1).item()
    history = fit_torch(model, batches, torch.optim.SGD(model.parameters(), lr=0.0), torch.nn.MSELoss(), 1,
                        val_loader=batches)
    got = float(history["val_loss"][0])
    assert got != pytest.approx(by_example, rel=1e-9), (
        f"val_loss {got:.6g} is the mean over the 16 examples: return the mean of the 3 batch losses, {by_batch:.6g}")
    assert got == pytest.approx(by_batch, rel=1e-9), f"val_loss {got:.6g}, expected the mean of the 3 batch " \
                                                     f"losses, {by_batch:.6g}"


@pytest.mark.task6_1
def test_fit_torch_lets_each_loss_tensor_go():
    """Over an epoch of 8 batches, is each batch's loss Tensor let go once the next batch starts (its value kept as
    loss.item(), a float), so that no graph outlives its batch? (The graded run reads the memory a kept graph holds.)"""
    made, alive = [], []

    class Marked(torch.autograd.Function):
        """The loss passed through, its graph node holding a marker for as long as the node lives (a running total
        of loss Tensors keeps the nodes, not the Tensors)."""

        @staticmethod
        def forward(ctx, loss):
            ctx.marker = Probe()  # any object a weak reference can follow
            made.append(weakref.ref(ctx.marker))
            return loss.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad

    def loss_fn(prediction, target):
        alive.append(sum(ref() is not None for ref in made))
        return Marked.apply(torch.nn.functional.mse_loss(prediction, target))

    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 16, dtype=torch.float64).reshape(-1, 1)
    batches = [(x[i:i + 2], 3 * x[i:i + 2] + 1) for i in range(0, 16, 2)]
    model = torch.nn.Linear(1, 1).double()
    fit_torch(model, batches, torch.optim.SGD(model.parameters(), lr=0.01), loss_fn, 1)
    assert max(alive) <= 1, (f"the graphs of {max(alive)} earlier batches' losses were still alive when batch "
                             f"{alive.index(max(alive)) + 1} started: keep loss.item(), a float, in the list or the "
                             "running total, never the loss Tensor, which keeps its graph alive")


@pytest.mark.task6_1
def test_fit_torch_calls_the_loss_with_the_prediction_first():
    """Is every loss computed as loss_fn(model(xb), yb), prediction first? (MSE gives the same number either way
    round; a weighted loss does not.)"""
    seen = []

    def loss_fn(prediction, target):
        seen.append(prediction.requires_grad or not torch.is_grad_enabled())
        return torch.nn.functional.mse_loss(prediction, target)

    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 8, dtype=torch.float64).reshape(-1, 1)
    batches = [(x[i:i + 4], 3 * x[i:i + 4] + 1) for i in range(0, 8, 4)]
    model = torch.nn.Linear(1, 1).double()
    fit_torch(model, batches, torch.optim.SGD(model.parameters(), lr=0.1), loss_fn, 1)
    assert seen == [True, True], "loss_fn was not given (prediction, target): call loss_fn(model(xb), yb)"


class Noted(torch.Tensor):
    """A batch tensor that notes each ``.to()`` call made on it (the device asked for), so that moving batches to
    ``device`` shows on a CPU too."""

    def to(self, *args, **kwargs):
        asked = kwargs.get("device", args[0] if args else None)
        if getattr(self, "noted", None) is not None:  # a batch itself, not a tensor computed from one
            self.noted.append(str(asked) if isinstance(asked, (str, torch.device)) else None)
        return super().to(*args, **kwargs)


@pytest.mark.task6_1
def test_fit_torch_moves_the_model_and_every_batch_to_the_device():
    """With device="cpu", does fit_torch call model.to(device) and move every training and validation batch with
    .to(device)? (On the CPU it changes nothing; on a GPU, task 6.2, a batch left behind fails.)"""
    torch.manual_seed(0)
    x = torch.linspace(-1.0, 1.0, 8, dtype=torch.float64).reshape(-1, 1)
    noted = {}

    def batch(name, value):
        tensor = torch.Tensor._make_subclass(Noted, value)
        tensor.noted = noted.setdefault(name, [])
        return tensor

    train = [(batch(f"training x{i}", x[i:i + 4]), batch(f"training y{i}", 3 * x[i:i + 4] + 1)) for i in (0, 4)]
    val = [(batch("validation x", x[:4]), batch("validation y", 3 * x[:4] + 1))]
    model = Probe()
    moved = []
    original_to = model.to
    model.to = lambda *args, **kwargs: moved.append(str(kwargs.get("device", args[0] if args else None))) or \
        original_to(*args, **kwargs)
    fit_torch(model, train, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss(), 1, device="cpu",
              val_loader=val)
    assert "cpu" in moved, f"model.to(...) was called with {moved or 'nothing'}: move the model with model.to(device)"
    left = [name for name, calls in noted.items() if "cpu" not in calls]
    assert not left, (f"never moved with .to(device): {', '.join(left)}. Move every batch, x and y, training and "
                      "validation: xb, yb = xb.to(device), yb.to(device)")


@pytest.mark.task6_2
@pytest.mark.skipif(not torch.cuda.is_available(), reason="Task 6.2 runs where a CUDA GPU is present")
def test_fit_torch_on_cuda_moves_the_model_and_the_batches():
    """On CUDA, does fit_torch move the model there, take CPU batches, and bring the loss down?"""
    model, history = tiny_run("cuda")
    assert all(p.device.type == "cuda" for p in model.parameters()), "the model's parameters are not on CUDA"
    assert history["train_loss"][-1] < history["train_loss"][0], f"train_loss went {history['train_loss']}"
