"""Do SGD and Adam in solutions/ follow torch.optim step for step?

Both optimizers start from the same parameter values and are fed the same
gradients for ten steps; after every step the parameters must agree to 1e-12.
Then the contract's own points: grads of None are skipped, steps update
``p.data`` in place, ``zero_grad`` sets None, and a state dict saved with
``np.savez`` continues exactly where the original left off.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from solutions import SGD, Adam, Tensor

SHAPES = [(3, 2), (2,), ()]
STEPS = 10

OPTIMIZERS = [
    pytest.param(SGD, torch.optim.SGD, {"lr": 0.1}, id="SGD"),
    pytest.param(SGD, torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}, id="SGD momentum"),
    pytest.param(SGD, torch.optim.SGD, {"lr": 0.1, "weight_decay": 0.05}, id="SGD weight decay"),
    pytest.param(SGD, torch.optim.SGD, {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.1}, id="SGD both"),
    pytest.param(Adam, torch.optim.Adam, {}, id="Adam defaults"),
    pytest.param(Adam, torch.optim.Adam, {"lr": 0.01, "weight_decay": 0.1}, id="Adam weight decay"),
    pytest.param(Adam, torch.optim.Adam, {"lr": 0.05, "betas": (0.5, 0.9)}, id="Adam betas 0.5 0.9"),
    pytest.param(Adam, torch.optim.Adam, {"lr": 0.02, "betas": (0.0, 0.99), "eps": 1e-6, "weight_decay": 0.01},
                 id="Adam beta1 0 eps weight decay"),
]


def starting_values(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in SHAPES]


def gradients(steps: int, *, seed: int = 1, skipped=lambda step, i: False) -> list[list[np.ndarray | None]]:
    """One gradient per parameter per step, or None where ``skipped(step, i)``."""
    rng = np.random.default_rng(seed)
    return [[None if skipped(step, i) else rng.normal(size=shape) for i, shape in enumerate(SHAPES)]
            for step in range(steps)]


def every_other_step_for_the_second_parameter(step: int, i: int) -> bool:
    return i == 1 and step % 2 == 0


def feed(params, grads) -> None:
    """Set each parameter's grad (ours or torch's) to a copy of the given array, or None."""
    for p, g in zip(params, grads, strict=True):
        if isinstance(p, Tensor):
            p.grad = None if g is None else g.copy()
        else:
            p.grad = None if g is None else torch.tensor(g)


def assert_trajectory_matches_torch(ours_cls, theirs_cls, hyper: dict, schedule) -> None:
    ours = [Tensor(x, requires_grad=True) for x in starting_values()]
    theirs = [torch.tensor(x, requires_grad=True) for x in starting_values()]
    ours_opt, theirs_opt = ours_cls(ours, **hyper), theirs_cls(theirs, **hyper)
    for step, grads in enumerate(schedule):
        feed(ours, grads)
        feed(theirs, grads)
        ours_opt.step()
        theirs_opt.step()
        for i, (p, q) in enumerate(zip(ours, theirs, strict=True)):
            np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-12, atol=1e-14,
                                       err_msg=f"{ours_cls.__name__}({hyper}), step {step + 1}, parameter {i}")


@pytest.mark.parametrize("ours_cls, theirs_cls, hyper", OPTIMIZERS)
def test_a_trajectory_equals_torch_optim(ours_cls, theirs_cls, hyper):
    """Fed the same gradients for ten steps, do the parameters follow torch.optim's exactly?"""
    assert_trajectory_matches_torch(ours_cls, theirs_cls, hyper, gradients(STEPS))


@pytest.mark.parametrize("ours_cls, theirs_cls, hyper", OPTIMIZERS)
def test_a_trajectory_with_missing_grads_equals_torch_optim(ours_cls, theirs_cls, hyper):
    """When one parameter has no grad every other step, does it still follow torch.optim
    (skipped those steps, momentum and Adam's own step count advanced only with a grad)?"""
    schedule = gradients(STEPS, skipped=every_other_step_for_the_second_parameter)
    assert_trajectory_matches_torch(ours_cls, theirs_cls, hyper, schedule)


@pytest.mark.parametrize("ours_cls, theirs_cls, hyper", OPTIMIZERS)
def test_a_parameter_whose_grad_is_none_is_left_exactly_as_it_was(ours_cls, theirs_cls, hyper):
    """Does step() leave a parameter without grad untouched, even with weight decay or momentum from earlier steps?"""
    params = [Tensor(x, requires_grad=True) for x in starting_values()]
    optimizer = ours_cls(params, **hyper)
    feed(params, gradients(1)[0])
    optimizer.step()
    before = [p.data.copy() for p in params]
    feed(params, [None, None, None])
    optimizer.step()
    for p, old in zip(params, before, strict=True):
        np.testing.assert_array_equal(p.data, old)


@pytest.mark.parametrize("ours_cls, theirs_cls, hyper", OPTIMIZERS)
def test_step_updates_the_data_array_in_place(ours_cls, theirs_cls, hyper):
    """Does step() write into the same p.data array (so views and references see it), rather than rebind it?"""
    params = [Tensor(x, requires_grad=True) for x in starting_values()]
    arrays = [p.data for p in params]
    start = [a.copy() for a in arrays]
    optimizer = ours_cls(params, **hyper)
    feed(params, gradients(1)[0])
    optimizer.step()
    for p, array, old in zip(params, arrays, start, strict=True):
        assert p.data is array
        assert not np.array_equal(array, old)


@pytest.mark.parametrize("ours_cls, theirs_cls, hyper", OPTIMIZERS)
def test_zero_grad_sets_every_grad_to_none(ours_cls, theirs_cls, hyper):
    """Does zero_grad() set every parameter's grad to None, as PyTorch's default?"""
    params = [Tensor(x, requires_grad=True) for x in starting_values()]
    optimizer = ours_cls(params, **hyper)
    feed(params, gradients(1)[0])
    optimizer.zero_grad()
    assert all(p.grad is None for p in params)


@pytest.mark.parametrize("ours_cls, theirs_cls, hyper", OPTIMIZERS)
def test_a_saved_state_dict_continues_exactly_as_the_original(ours_cls, theirs_cls, hyper, tmp_path):
    """After state_dict -> np.savez -> np.load(allow_pickle=False) -> load_state_dict into a new
    optimizer, do both optimizers take exactly the same next steps?"""
    schedule = gradients(8, skipped=every_other_step_for_the_second_parameter)
    original = [Tensor(x, requires_grad=True) for x in starting_values()]
    original_opt = ours_cls(original, **hyper)
    for grads in schedule[:3]:
        feed(original, grads)
        original_opt.step()

    state = original_opt.state_dict()
    assert all(isinstance(v, (np.ndarray, np.number, int, float)) for v in state.values()), state
    path = tmp_path / "optimizer.npz"
    np.savez(path, **state)
    with np.load(path, allow_pickle=False) as saved:
        loaded = {key: saved[key] for key in saved.files}
    resumed = [Tensor(p.data.copy(), requires_grad=True) for p in original]
    resumed_opt = ours_cls(resumed, **hyper)
    resumed_opt.load_state_dict(loaded)

    for step, grads in enumerate(schedule[3:], start=4):
        for params, optimizer in ((original, original_opt), (resumed, resumed_opt)):
            feed(params, grads)
            optimizer.step()
        for i, (p, q) in enumerate(zip(original, resumed, strict=True)):
            np.testing.assert_array_equal(q.data, p.data, err_msg=f"step {step}, parameter {i}")
