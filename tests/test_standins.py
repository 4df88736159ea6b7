"""Are the loop checks' stand-in optimizers (graders/worker/standins.py) never more lenient than the torch
optimizers they stand for?

A stand-in that accepts what torch.optim refuses lets a mistake through: a ``_load_checkpoint`` that strips one
character too few of ``"optim."`` hands every key over with a leading dot, which the stand-in SGD once read
anyway, so task 5.5 passed while the student's own optimizer silently lost its momentum. Each stand-in is held
here to its torch original: on good state dicts (its own, through np.savez and np.load as a checkpoint reads
them, and torch's own state in the contract's keys) the next step is torch's; on bad ones, where torch refuses
(at load_state_dict, or at the step after it), the stand-in refuses at load_state_dict.
"""

from __future__ import annotations

import copy
import io

import numpy as np
import pytest
import torch

from graders.worker import standins

SHAPES = [(2, 3), (3,), ()]
OPTIMIZERS = {
    "SGD": (standins.SGD, torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    "Adam": (standins.Adam, torch.optim.Adam, {"lr": 0.01}),
}


def start(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in SHAPES], [[rng.normal(size=s) for s in SHAPES] for _ in range(3)]


def stand_in(kind: str, values):
    cls, _, options = OPTIMIZERS[kind]
    params = [standins.Tensor(v.copy(), requires_grad=True) for v in values]
    return params, cls(params, **options)


def torch_twin(kind: str, values):
    _, cls, options = OPTIMIZERS[kind]
    tensors = [torch.tensor(v.copy(), requires_grad=True) for v in values]
    return tensors, cls(tensors, **options)


def step_stand_in(params, optimizer, grads) -> None:
    for p, g in zip(params, grads):
        p.grad = g.copy()
    optimizer.step()


def step_torch(tensors, optimizer, grads) -> None:
    for t, g in zip(tensors, grads):
        t.grad = torch.tensor(g)
    optimizer.step()


def through_a_checkpoint(state: dict) -> dict:
    """``state`` written with np.savez and read back with np.load, as _save_checkpoint and _load_checkpoint do."""
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as saved:
        return {k: saved[k] for k in saved.files}


def torch_state_in_the_contracts_keys(tensors, optimizer) -> dict:
    return {f"{name}.{i}": value.detach().numpy().copy() for i, t in enumerate(tensors)
            for name, value in optimizer.state[t].items()}


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_stand_in_continues_from_a_good_state_dict_as_torch_does(kind):
    """Loaded with its own state dict (through a checkpoint file's round trip) or with torch's state in the
    contract's keys, does a fresh stand-in take the next step exactly as the torch optimizer does?"""
    values, grads = start()
    tensors, reference = torch_twin(kind, values)
    params, own = stand_in(kind, values)
    for g in grads[:2]:
        step_torch(tensors, reference, g)
        step_stand_in(params, own, g)
    middle = [t.detach().numpy().copy() for t in tensors]
    states = (through_a_checkpoint(own.state_dict()), torch_state_in_the_contracts_keys(tensors, reference))
    step_torch(tensors, reference, grads[2])
    for state in states:
        fresh_params, fresh = stand_in(kind, middle)
        fresh.load_state_dict(state)
        step_stand_in(fresh_params, fresh, grads[2])
        for p, t in zip(fresh_params, tensors):
            np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=1e-12, atol=1e-14)


def bad_inputs(kind: str):
    """(what, the stand-in's state dict, how the torch optimizer's state dict is changed alike) for each bad input;
    the change is None where torch has no counterpart (see the test that uses None)."""
    values, grads = start()
    tensors, optimizer = torch_twin(kind, values)
    step_torch(tensors, optimizer, grads[0])
    good = torch_state_in_the_contracts_keys(tensors, optimizer)
    first = next(iter(good))
    name, _, _ = first.rpartition(".")

    def stray_dot(sd):
        return {"." + k: v for k, v in sd.items()}

    def extra_parameter(sd):
        sd["param_groups"][0]["params"].append(len(SHAPES))
        return sd

    def wrong_shape(sd):
        state = sd["state"][0]
        key = "momentum_buffer" if kind == "SGD" else "exp_avg"
        state[key] = torch.zeros(7, dtype=torch.float64)
        return sd

    cases = [
        ("every key with a stray leading dot", {"." + k: v for k, v in good.items()}, stray_dot),
        ("a parameter the optimizer does not have", {**good, f"{name}.{len(SHAPES)}": np.zeros(1)},
         extra_parameter),
        (f"{'momentum_buffer' if kind == 'SGD' else 'exp_avg'}.0 of another shape",
         {**good, f"{'momentum_buffer' if kind == 'SGD' else 'exp_avg'}.0": np.zeros(7)}, wrong_shape),
        ("a key of a name the optimizer does not keep", {**good, f"velocity.{0}": np.zeros(SHAPES[0])}, None),
        ("a value of strings", {**good, first: np.array(["a", "b"])}, None),
        ("a dict that is not one", [(k, v) for k, v in good.items()], None),
    ]
    if kind == "Adam":
        def no_exp_avg_sq(sd):
            del sd["state"][0]["exp_avg_sq"]
            return sd

        cases.append(("exp_avg_sq.0 missing beside step.0 and exp_avg.0",
                      {k: v for k, v in good.items() if k != "exp_avg_sq.0"}, no_exp_avg_sq))
    return values, grads, tensors, optimizer, cases


def torch_refuses(kind, values, grads, state_dict) -> bool:
    """Does a torch optimizer refuse ``state_dict``, at load_state_dict or at the step after it?"""
    tensors, optimizer = torch_twin(kind, values)
    try:
        optimizer.load_state_dict(state_dict)
        step_torch(tensors, optimizer, grads[1])
    except (KeyError, ValueError, RuntimeError, TypeError, IndexError):
        return True
    return False


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_stand_in_refuses_what_torch_refuses_and_at_load(kind):
    """Does the stand-in refuse, at load_state_dict, each bad state dict whose torch counterpart the torch optimizer
    refuses; and also what the contract's state_dict() never writes (an unknown name, strings, not a dict), which
    torch, keyed otherwise, has no counterpart for?"""
    values, grads, tensors, optimizer, cases = bad_inputs(kind)
    assert not torch_refuses(kind, values, grads, optimizer.state_dict()), "the good state dict must load"
    for what, state, change in cases:
        if change is not None:
            assert torch_refuses(kind, values, grads, change(copy.deepcopy(optimizer.state_dict()))), what
        _, fresh = stand_in(kind, values)
        with pytest.raises((KeyError, ValueError, TypeError)):
            fresh.load_state_dict(state)
            pytest.fail(f"the stand-in {kind} loaded {what}")
