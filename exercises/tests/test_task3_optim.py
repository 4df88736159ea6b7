"""Task 3: the optimizers. Gradients are set by hand, so no engine is needed."""

import io

import numpy as np
import pytest

from .. import SGD, Adam, Tensor
from ._helpers import assert_close


def param(values, grad=None) -> Tensor:
    p = Tensor(values, requires_grad=True)
    p.grad = None if grad is None else np.array(grad, dtype=np.float64)
    return p


def through_npz(state: dict) -> dict:
    """A state dict written with np.savez and read back without pickle, as a checkpoint does."""
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as saved:
        return {key: saved[key] for key in saved.files}


# ----- 3.1 zero_grad and step -----

@pytest.mark.task3_1
def test_zero_grad_sets_every_grad_to_none():
    """After zero_grad(), is every parameter's grad None?"""
    a, b = param([1.0], grad=[2.0]), param([3.0, 4.0], grad=[5.0, 6.0])
    SGD([a, b], lr=0.1).zero_grad()
    assert a.grad is None and b.grad is None, f"grads after zero_grad(): {a.grad!r}, {b.grad!r}, expected None"


@pytest.mark.task3_1
def test_sgd_step_moves_against_the_gradient():
    """With lr = 0.1, does p = [1, 2] with grad [0.5, -1] become [0.95, 2.1]?"""
    p = param([1.0, 2.0], grad=[0.5, -1.0])
    SGD([p], lr=0.1).step()
    assert_close(p.data, [0.95, 2.1], "p after one SGD step")


@pytest.mark.task3_1
def test_sgd_step_updates_the_array_in_place():
    """Does step() change p.data in place, keeping the same array object?"""
    p = param([1.0, 2.0], grad=[1.0, 1.0])
    before = p.data
    SGD([p], lr=0.5).step()
    assert p.data is before, "step() replaced p.data with a new array: update it in place (p.data -= ...)"
    assert_close(before, [0.5, 1.5], "p after one SGD step")


@pytest.mark.task3_1
def test_sgd_step_skips_parameters_without_grad():
    """Does step() leave a parameter whose grad is None as it was?"""
    a, b = param([1.0], grad=[1.0]), param([5.0])
    SGD([a, b], lr=0.1).step()
    assert_close(a.data, [0.9], "the parameter with a grad")
    assert_close(b.data, [5.0], "the parameter whose grad is None")


# ----- 3.2 momentum, weight decay, state dict -----

@pytest.mark.task3_2
def test_sgd_momentum_builds_up_over_steps():
    """With lr 0.1, momentum 0.9 and grad 1 each step, does p go 1 -> 0.9 -> 0.71 (buffers 1, 1.9)?"""
    p = param([1.0], grad=[1.0])
    opt = SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    assert_close(p.data, [0.9], "p after step 1 (buffer = grad)")
    opt.step()
    assert_close(p.data, [0.71], "p after step 2 (buffer = 0.9 * 1 + 1)")


@pytest.mark.task3_2
def test_sgd_weight_decay_adds_decay_times_p_to_the_gradient():
    """With lr 0.1, weight decay 0.1, p = 2 and grad 0.5, is the step 0.1 * (0.5 + 0.2), so p = 1.93?"""
    p = param([2.0], grad=[0.5])
    SGD([p], lr=0.1, weight_decay=0.1).step()
    assert_close(p.data, [1.93], "p after one step with weight decay")


@pytest.mark.task3_2
def test_sgd_adds_weight_decay_before_the_momentum_buffer():
    """With momentum 0.9 and weight decay 0.1, as torch.optim.SGD does it (d = g + decay * p, then
    buf = momentum * buf + d): p = 1, grad 0.5 twice, lr 0.1 -> 0.94 -> 0.8266? (Decay added after the
    buffer gives 0.8356.)"""
    p = param([1.0], grad=[0.5])
    opt = SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1)
    opt.step()
    assert_close(p.data, [0.94], "p after one step")
    p.grad = np.array([0.5])
    opt.step()
    assert_close(p.data, [0.8266], "p after two steps (weight decay goes into d before the momentum buffer)")


@pytest.mark.task3_2
def test_sgd_state_dict_lets_a_new_optimizer_continue():
    """Does a new SGD that loads the state dict (saved with np.savez) take the third momentum step?"""
    p = param([1.0], grad=[1.0])
    first = SGD([p], lr=0.1, momentum=0.9)
    first.step()
    first.step()
    second = SGD([p], lr=0.1, momentum=0.9)
    second.load_state_dict(through_npz(first.state_dict()))
    second.step()
    assert_close(p.data, [0.439], "p after step 3 (buffer = 0.9 * 1.9 + 1 = 2.71)")


@pytest.mark.task3_2
def test_sgd_state_dict_holds_torchs_momentum_buffer():
    """After two steps with lr 0.1, momentum 0.9 and grad 1, is state_dict()["momentum_buffer.0"] torch's buffer
    0.9 * 1 + 1 = 1.9? (A buffer that keeps lr inside it, with p -= buf, steps the same but saves 0.19.)"""
    p = param([1.0], grad=[1.0])
    opt = SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    opt.step()
    state = opt.state_dict()
    assert "momentum_buffer.0" in state, f"state_dict() has keys {sorted(state)}, expected 'momentum_buffer.0'"
    assert_close(state["momentum_buffer.0"], [1.9], "state_dict()['momentum_buffer.0'] after two steps (torch's "
                 "buffer: buf = momentum * buf + d, lr only in the step)")


@pytest.mark.task3_2
def test_sgd_step_leaves_the_grad_as_it_was():
    """With weight decay 0.1, p = 2 and grad 0.5: after step(), is p.grad still 0.5, as torch leaves it? (step()
    reads the gradient; the decayed gradient d is an array of its own.)"""
    p = param([2.0], grad=[0.5])
    SGD([p], lr=0.1, weight_decay=0.1).step()
    assert_close(p.grad, [0.5], "p.grad after a step with weight decay (step() must not change it)")


# ----- 3.3 Adam -----


@pytest.mark.task3_2
def test_sgd_momentum_buffer_is_a_copy_of_the_first_gradient():
    """After step 1, a grad changed in place (as an engine that adds into .grad does): is the buffer kept as
    it was, so that step 2 moves p by lr * (momentum * d1 + d2)? (A buffer that is p.grad itself changes too.)"""
    p = param([0.0], grad=[1.0])
    opt = SGD([p], lr=0.1, momentum=0.5)
    opt.step()
    p.grad[...] = 3.0
    opt.step()
    assert_close(p.data, [-0.1 - 0.1 * (0.5 * 1.0 + 3.0)], "p after two steps, the grad changed in place between")

BIAS_CORRECTION = ("Adam's bias corrections divide by 1 - beta1**t and 1 - beta2**t: t must be 1 at the first "
                   "step (count the step before you correct), or they divide by 0")


@pytest.mark.task3_3
def test_adam_first_step_moves_each_entry_by_lr():
    """With bias correction, is Adam's first step lr * sign(grad): [1, -1] -> [0.9, -0.9]?"""
    p = param([1.0, -1.0], grad=[0.5, -2.0])
    Adam([p], lr=0.1).step()
    assert_close(p.data, [0.9, -0.9], "p after one Adam step", rtol=1e-6, hint=BIAS_CORRECTION)


@pytest.mark.task3_3
def test_adam_second_step_follows_the_bias_corrected_averages():
    """With grad 1 then 0, does step 2 move p by lr * m_hat / (sqrt(v_hat) + eps)?"""
    p = param([1.0], grad=[1.0])
    opt = Adam([p], lr=0.1)
    opt.step()
    p.grad = np.array([0.0])
    opt.step()
    m_hat = (0.9 * 0.1 + 0.1 * 0.0) / (1 - 0.9**2)
    v_hat = (0.999 * 0.001 + 0.001 * 0.0) / (1 - 0.999**2)
    assert_close(p.data, [0.9 - 0.1 * m_hat / (np.sqrt(v_hat) + 1e-8)], "p after two Adam steps",
                 hint=BIAS_CORRECTION)


@pytest.mark.task3_3
def test_adam_adds_eps_after_the_square_root():
    """With a tiny gradient (1e-9), sqrt(v_hat) is 1e-9 and eps (1e-8) is ten times larger: is the first step
    lr * m_hat / (sqrt(v_hat) + eps) = 0.1 / 11? (eps inside the square root moves p by 1e-6 only.)"""
    p = param([1.0], grad=[1e-9])
    Adam([p], lr=0.1).step()
    assert_close(p.data, [1.0 - 0.1 / 11], "p after one Adam step with grad 1e-9", rtol=1e-9)


@pytest.mark.task3_3
def test_adam_step_updates_the_array_in_place():
    """Does Adam's step() change p.data in place, keeping the same array object (a model holds that array)?"""
    p = param([1.0, 2.0], grad=[1.0, -1.0])
    before = p.data
    Adam([p], lr=0.1).step()
    assert p.data is before, "step() replaced p.data with a new array: update it in place (p.data -= ...)"
    assert_close(before, [0.9, 2.1], "p after one Adam step", rtol=1e-6)


@pytest.mark.task3_3
def test_adam_weight_decay_is_added_to_the_gradient():
    """With p = 1, grad -0.05 and weight decay 0.1, the gradient becomes +0.05: does p go down to 0.9?"""
    p = param([1.0], grad=[-0.05])
    Adam([p], lr=0.1, weight_decay=0.1).step()
    assert_close(p.data, [0.9], "p after one Adam step with weight decay", rtol=1e-6)


@pytest.mark.task3_3
def test_adam_counts_steps_per_parameter():
    """A parameter that first gets a grad at the second step: is its first update still exactly lr?"""
    a, b = param([1.0], grad=[1.0]), param([1.0])
    opt = Adam([a, b], lr=0.1)
    opt.step()
    assert_close(b.data, [1.0], "b after a step while its grad was None")
    b.grad = np.array([1.0])
    opt.step()
    assert_close(b.data, [0.9], "b after its own first step", rtol=1e-6)


@pytest.mark.task3_3
def test_adam_state_dict_lets_a_new_optimizer_continue():
    """Does a new Adam that loads the state dict (saved with np.savez) step exactly as the original would?"""
    grads = [[0.3, -0.7], [1.0, 0.2], [-0.5, 0.4]]
    p, twin = param([1.0, 2.0]), param([1.0, 2.0])
    original, interrupted = Adam([p], lr=0.1), Adam([twin], lr=0.1)
    for g in grads[:2]:
        for q, opt in ((p, original), (twin, interrupted)):
            q.grad = np.array(g)
            opt.step()
    resumed = Adam([twin], lr=0.1)
    resumed.load_state_dict(through_npz(interrupted.state_dict()))
    for q, opt in ((p, original), (twin, resumed)):
        q.grad = np.array(grads[2])
        opt.step()
    assert_close(twin.data, p.data, "p after a third step from the loaded state")
