"""What the installed package knows of the lesson without solutions/ (graders/lesson.py, the stored reference
curve, the torch-computed expectations of the loop tasks), held to the repository's solutions/."""

from __future__ import annotations

import numpy as np
import pytest

from graders import lesson
from graders.judge import oracles
from graders.judge.checks import loop
from graders.judge.checks.trajectory import Run
from solutions import SGD, DataLoader, Linear, Module, MSELoss, ReLU, Sequential, fit, make_sine_data, train_epoch
from solutions import lesson as reference_lesson
from solutions.tensor import is_grad_enabled


def test_the_lessons_numbers_are_the_solutions():
    assert lesson.LESSON == {"seed": 0, "hidden": 32, "batch_size": reference_lesson.BATCH, "lr": reference_lesson.LR,
                             "epochs": reference_lesson.EPOCHS}


@pytest.mark.parametrize("args", [{}, {"n": 96, "seed": 3}, {"n": 7, "noise": 0.5, "seed": 11}])
def test_the_judges_sine_data_is_the_given_make_sine_data(args):
    for ours, given in zip(lesson.make_sine_data(**args), make_sine_data(**args)):
        np.testing.assert_array_equal(ours, given)


@pytest.mark.slow
def test_the_stored_reference_curve_is_the_solutions_run():
    """Is data/lesson_curve.json what solutions/lesson.py's run gives today (regenerate it if the lesson changed)?

    To the last few bits, not to the bit: numpy's float64 arithmetic differs in its last bits between CPUs (its
    kernels for each instruction set). The stored curve, made on one machine, differs by 1-2 ulp from epoch 10 on
    an AMD EPYC without AVX-512; a changed lesson moves it by thousandths."""
    stored = lesson.reference_curve()
    run = reference_lesson.run_numpy(seed=0, epochs=lesson.LESSON["epochs"])
    assert len(stored) == len(run) == lesson.LESSON["epochs"]
    np.testing.assert_allclose(stored, run, rtol=1e-12, atol=0)


def _reference_network(setup: loop.Setup) -> Sequential:
    rng = np.random.default_rng(setup.seed)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(setup.sizes[:-1], setup.sizes[1:])):
        layers += [ReLU()] if i else []
        layers.append(Linear(n_in, n_out, rng=rng))
    return Sequential(*layers)


class _Shift(Module):
    """The worker's probe layer, over the reference engine: 1 added in training mode, 2 with grad mode on."""

    def forward(self, x):
        return x + loop.shift(self.training, is_grad_enabled())


class _Probe(Module):
    def __init__(self, model):
        self.model, self.shift = model, _Shift()

    def forward(self, x):
        return self.shift(self.model(x))


@pytest.mark.parametrize("setup", [loop.Setup(), loop.Setup(n=13, batch_size=5, momentum=0.0, seed=7),
                                   loop.Setup(n=14, batch_size=2, options={"accumulate": 3, "clip_norm": 0.05})])
def test_the_torch_expectations_of_train_epoch_are_the_reference_engines(setup):
    """Do the expected weights and loss of one epoch (torch, graders/judge/checks/trajectory.py) equal the reference
    solution's train_epoch over the reference engine, from the same weights (drawn as nn.Linear draws them), of the
    probe model that starts in eval mode?"""
    network = _reference_network(setup)
    assert list(network.state_dict()) == list(setup.state())
    for (name, ours), theirs in zip(setup.state().items(), network.state_dict().values()):
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    model = _Probe(network).eval()
    for p in model.parameters():
        p.grad = np.full(p.shape, loop.STALE_GRAD)
    X, Y = setup.data()
    loss = train_epoch(model, DataLoader(X, Y, batch_size=setup.batch_size, shuffle=False),
                       SGD(model.parameters(), lr=setup.lr, momentum=setup.momentum), MSELoss(), **setup.options)
    expected_loss, expected = loop.reference_epoch(setup, **setup.options)
    assert expected_loss == pytest.approx(loss, rel=1e-12)
    for ours, p in zip(expected, model.parameters()):
        np.testing.assert_allclose(ours, p.data, rtol=1e-12, atol=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("key", [None, 20261201])
def test_the_judges_replay_of_the_lesson_is_the_reference_engines_run(key):
    """Does the replay task 5.4 holds the weights to (oracles' lesson_run: torch in float64) end where the reference
    engine's run over the same batches ends, far inside the rung's tolerance (it lands within 2e-15)?"""
    seed, (X, Y) = lesson.data_seed(key), lesson.task_data(key)
    rng = np.random.default_rng(seed)
    model = Sequential(Linear(1, 32, rng=rng), ReLU(), Linear(32, 1, rng=rng))
    start = [p.data.copy() for p in model.parameters()]
    loader = DataLoader(X, Y, batch_size=32, shuffle=True, rng=np.random.default_rng(seed + 1))
    drawn = np.random.default_rng(seed + 1)
    orders = np.stack([drawn.permutation(256) for _ in range(lesson.LESSON["epochs"])])
    fit(model, loader, SGD(model.parameters(), lr=lesson.LESSON["lr"]), MSELoss(), lesson.LESSON["epochs"])
    args = oracles.check_lesson_run({"params": start, "X": X, "Y": Y, "orders": orders, "batch_size": 32,
                                     "lr": lesson.LESSON["lr"]})
    replay = oracles._compute("lesson_run", args)
    for ours, p in zip(replay["params"], model.parameters()):
        np.testing.assert_allclose(ours, p.data, rtol=0, atol=1e-13)


def test_the_torch_expectations_of_a_shuffled_fit_are_the_reference_engines():
    setup = loop.Setup(n=12, batch_size=4)
    val = setup.data(n=6, offset=1)
    model = _reference_network(setup)
    X, Y = setup.data()
    loader = DataLoader(X, Y, batch_size=setup.batch_size, shuffle=True, rng=np.random.default_rng(7))
    history = fit(model, loader, SGD(model.parameters(), lr=setup.lr, momentum=setup.momentum), MSELoss(), 3,
                  val_loader=DataLoader(*val, batch_size=setup.batch_size, shuffle=False))
    expected, run = loop.reference_fit(setup, 3, shuffle_seed=7, val=val)
    for key in ("train_loss", "val_loss"):
        np.testing.assert_allclose(expected[key], history[key], rtol=1e-12)
    for ours, p in zip(run.weights(), model.parameters()):
        np.testing.assert_allclose(ours, p.data, rtol=1e-12, atol=1e-14)


def test_a_run_continues_from_the_momentum_buffers_it_is_given():
    """Does Run.state() round-trip (the judge's train_epoch answers a worker with it)?"""
    setup = loop.Setup()
    whole = setup.run()
    batches = setup.split()
    for _ in range(2):
        whole.epoch(batches)
    first = setup.run()
    first.epoch(batches)
    second = Run(first.weights(), lr=setup.lr, momentum=setup.momentum, state=first.state())
    second.epoch(batches)
    for a, b in zip(whole.weights(), second.weights()):
        np.testing.assert_array_equal(a, b)
