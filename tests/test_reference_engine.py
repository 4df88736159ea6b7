"""Does the engine in solutions/ (``Tensor.backward``, ``no_grad``) behave as the contract and PyTorch say?

Graph shapes (chains, diamonds, reuse), seeding, accumulation and errors,
the grad-mode switch, and a graph deeper than Python's recursion limit.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings

from graders.judge.checks import engine as engine_checks
from solutions import Tensor, is_grad_enabled, no_grad, op


def leaf(values) -> Tensor:
    return Tensor(values, requires_grad=True)


# ----- graph shapes -----
def test_a_chain_of_ops_follows_the_chain_rule():
    """Is the gradient of a chain exp(tanh(3x)) the product of the local derivatives, as torch computes it?"""
    x = leaf([0.3, -0.7, 1.2])
    (x * 3.0).tanh().exp().sum().backward()
    theirs = torch.tensor([0.3, -0.7, 1.2], dtype=torch.float64, requires_grad=True)
    (theirs * 3.0).tanh().exp().sum().backward()
    np.testing.assert_allclose(x.grad, theirs.grad.numpy(), rtol=1e-12)


def test_a_diamond_adds_the_gradients_of_both_paths():
    """When x feeds two branches that meet again, does x get the sum of both paths' gradients?"""
    x = leaf([1.5, -2.0])
    left, right = x * 2.0, x.exp()
    (left * right).sum().backward()
    # d/dx (2x e^x) = 2 e^x + 2x e^x
    np.testing.assert_allclose(x.grad, 2 * np.exp(x.data) * (1 + x.data), rtol=1e-12)


def test_a_diamond_over_intermediate_nodes_is_walked_in_topological_order():
    """Does a shared intermediate node get its gradient from every consumer before passing it on?"""
    x = leaf([0.5, 1.0])
    h = x * x  # shared by three consumers, one of them two steps away
    y = h.tanh() + h * 3.0 + (h + 1.0).log()
    y.sum().backward()
    dh = (1 - np.tanh(x.data**2) ** 2) + 3.0 + 1 / (x.data**2 + 1)
    np.testing.assert_allclose(x.grad, dh * 2 * x.data, rtol=1e-12)


def test_x_times_x_gets_both_uses():
    """Does x * x give 2x, counting x once per use?"""
    x = leaf([3.0, -4.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [6.0, -8.0])


def test_x_plus_x_gets_both_uses():
    """Does x + x give 2, counting x once per use?"""
    x = leaf([3.0, -4.0])
    (x + x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_backward_from_a_leaf_seeds_it_with_ones():
    """Does backward() on a scalar leaf give that leaf a gradient of 1?"""
    x = leaf(2.5)
    x.backward()
    assert x.grad.shape == () and x.grad == 1.0


def test_a_given_grad_seeds_a_non_scalar_output():
    """Is backward(grad) on a non-scalar output the vector-Jacobian product with that grad?"""
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    (x * 2.0).backward(np.array([[1.0, 0.0], [0.5, -1.0]]))
    np.testing.assert_array_equal(x.grad, [[2.0, 0.0], [1.0, -2.0]])


# ----- seeding, accumulation, errors -----
def test_two_backward_calls_accumulate_into_grad():
    """Do gradients from separate backward calls add up in .grad, as PyTorch's?"""
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0 + 2.0, 3.0 + 4.0])


def test_a_second_backward_through_a_shared_subgraph_adds_both_as_torch_with_retain_graph():
    """y = x * x walked by one backward, then by another: is x.grad the sum of both, as torch's with retain_graph
    (the contract's rule: the sum, or PyTorch's RuntimeError)?"""
    x = leaf([1.0, 2.0])
    y = x * x
    (y * 2.0).sum().backward()
    (y * 3.0).sum().backward()
    xt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    yt = xt * xt
    (yt * 2.0).sum().backward(retain_graph=True)
    (yt * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=0, atol=0)
    np.testing.assert_array_equal(x.grad, [10.0, 20.0])


def run_program(steps) -> list[list[np.ndarray | None]]:
    """A program of task 2.2's checks run on the reference engine, in this process: every leaf's .grad after each
    backward call (its ops judge-made, out = sum c_i * parent_i)."""
    made, leaves, after = [], [], []
    for step in steps:
        if step["do"] == "leaf":
            made.append(Tensor(step["data"], requires_grad=step["requires_grad"]))
            leaves.append(made[-1])
        elif step["do"] == "node":
            parents, coefs = [made[i] for i in step["parents"]], step["coefs"]
            made.append(op(sum(c * p.data for c, p in zip(coefs, parents)), tuple(parents),
                           lambda g, coefs=coefs: tuple(c * g for c in coefs)))
        elif step["do"] == "backward":
            made[step["root"]].backward(np.array(step["seed"]["value"]))
            after.append([None if x.grad is None else x.grad.copy() for x in leaves])
    return after


@settings(max_examples=40, derandomize=True, deadline=None)
@given(engine_checks.shared_programs())
def test_the_reference_leaves_the_judges_sums_on_programs_through_shared_ops(steps):
    """On 2.2's drawn programs of backward() calls through ops an earlier call walked, does the reference engine
    leave every .grad the judge's model expects after each call: the sum of all the calls so far?"""
    for got, (raised, want) in zip(run_program(steps), engine_checks.expected_program(steps), strict=True):
        assert raised is None
        for mine, theirs in zip(got, want, strict=True):
            assert (mine is None) == (theirs is None)  # None: no call has reached that leaf yet
            if theirs is not None:
                np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_the_judge_marks_a_call_shared_when_it_goes_back_through_an_op_already_walked():
    """Is a backward call "shared" (where PyTorch's RuntimeError is allowed) exactly when it reaches an op an earlier
    call walked: the fixed program's second call, the same output again, but not a fresh op over the leaves?"""
    assert engine_checks.shared_calls(engine_checks.SHARED) == [False, True]
    x = {"do": "leaf", "data": np.array([1.0, 2.0]), "requires_grad": True}
    g = {"value": np.ones(2), "as": "ndarray"}
    fresh = [x, {"do": "node", "parents": [0], "coefs": [2.0]}, {"do": "backward", "root": 1, "seed": g},
             {"do": "node", "parents": [0], "coefs": [3.0]}, {"do": "backward", "root": 2, "seed": g},
             {"do": "backward", "root": 2, "seed": g}, {"do": "backward", "root": 0, "seed": g}]
    assert engine_checks.shared_calls(fresh) == [False, False, True, False]


def test_backward_on_a_tensor_without_requires_grad_raises_runtime_error():
    """Does backward() on a tensor that does not require grad raise RuntimeError, as PyTorch?"""
    with pytest.raises(RuntimeError):
        Tensor(1.0).backward()
    with pytest.raises(RuntimeError):
        (Tensor([1.0, 2.0]) * 2.0).sum().backward()


def test_implicit_grad_of_a_non_scalar_raises_runtime_error():
    """Does backward() without grad on an output of more than one element raise RuntimeError?"""
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        (x * 2.0).backward()
    assert x.grad is None


def test_implicit_grad_of_a_one_element_non_scalar_is_allowed():
    """Is an output of shape (1, 1) seeded with ones, as PyTorch allows for any one-element output?"""
    x = leaf([[2.0]])
    (x * 3.0).backward()
    np.testing.assert_array_equal(x.grad, [[3.0]])


@pytest.mark.parametrize("shape", [(2,), (2, 1), (1, 1, 2), ()])
def test_a_grad_of_the_wrong_shape_raises_value_error(shape):
    """Does backward(grad) with a grad whose shape is not the output's raise ValueError?"""
    x = leaf([[1.0, 2.0]])
    with pytest.raises(ValueError):
        (x * 2.0).backward(np.ones(shape))


def test_a_0d_leaf_gets_a_0d_ndarray_gradient_that_accumulates():
    """Is the gradient of a 0-d leaf an ndarray of shape () (docs/contract.md), never a numpy scalar, through rules
    whose numpy arithmetic returns scalars, and does a second backward call add into it?"""
    x = leaf(3.0)
    for _ in range(2):
        ((-x) * x + x.exp() / x).backward()
        assert type(x.grad) is np.ndarray and x.grad.shape == () and x.grad.dtype == np.float64
    expected = 2 * (-2 * 3.0 + np.exp(3.0) / 3.0 - np.exp(3.0) / 9.0)
    np.testing.assert_allclose(x.grad, expected, rtol=1e-12)
    x.grad *= 0.5  # in place, as clip_grad_norm scales it
    np.testing.assert_allclose(x.grad, expected / 2, rtol=1e-12)


def test_leaves_without_requires_grad_keep_grad_none():
    """Does a constant leaf used in the graph keep grad None while its neighbour gets a gradient?"""
    x, c = leaf([1.0, 2.0]), Tensor([5.0, 6.0])
    (x * c + c).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 6.0])
    assert c.grad is None


# ----- which tensors record a graph -----
@pytest.mark.parametrize("a_requires, b_requires", [(True, True), (True, False), (False, True), (False, False)])
def test_a_result_requires_grad_iff_a_parent_does(a_requires, b_requires):
    """Does a result require grad, and record its parents, exactly when some parent requires grad?"""
    a, b = Tensor([[1.0, 2.0]], requires_grad=a_requires), Tensor([[3.0], [4.0]], requires_grad=b_requires)
    cases = [(a + b, a_requires or b_requires), (a - b, a_requires or b_requires), (a * b, a_requires or b_requires),
             (a / b, a_requires or b_requires), (a @ b, a_requires or b_requires), (a + 1.0, a_requires),
             (2.0 / a, a_requires), (a.exp(), a_requires), (a.T, a_requires), (b.sum(axis=0), b_requires)]
    for result, expected in cases:
        assert result.requires_grad is expected
        assert bool(result._parents) is expected


def test_ops_inside_no_grad_record_nothing():
    """Inside no_grad(), does every op make a plain leaf: requires_grad False and no parents?"""
    x = leaf([1.0, 2.0])
    with no_grad():
        assert not is_grad_enabled()
        results = [x + 1.0, x * x, -x, x.exp(), x.sum(), x.reshape(2, 1), (x * 2.0).relu()]
    assert is_grad_enabled()
    for y in results:
        assert y.requires_grad is False and y._parents == ()
        with pytest.raises(RuntimeError):
            y.sum().backward()
    assert x.grad is None


def test_no_grad_nests_and_restores_the_outer_mode():
    """Does an inner no_grad() leave grad mode off until the outer block ends, and on after it?"""
    x = leaf(1.0)
    with no_grad():
        with no_grad():
            assert not is_grad_enabled()
        assert not is_grad_enabled()
        assert not (x * 2.0).requires_grad
    assert is_grad_enabled()
    assert (x * 2.0).requires_grad


def test_no_grad_restores_the_mode_after_an_exception():
    """When an exception leaves a no_grad() block, is grad mode on again afterwards?"""
    with pytest.raises(ZeroDivisionError):
        with no_grad():
            raise ZeroDivisionError("inside no_grad")
    assert is_grad_enabled()
    assert (leaf(1.0) * 2.0).requires_grad


def test_no_grad_restores_the_mode_after_an_exception_in_a_nested_block():
    """When an exception leaves an inner block but is caught in the outer one, is grad still off there?"""
    with no_grad():
        try:
            with no_grad():
                raise KeyError("inner")
        except KeyError:
            pass
        assert not is_grad_enabled()
    assert is_grad_enabled()


# ----- deep graphs -----
def test_a_chain_of_ten_thousand_ops_does_not_hit_the_recursion_limit():
    """Does backward() walk a chain of 10,000 ops, deeper than Python's recursion limit, iteratively?"""
    assert sys.getrecursionlimit() < 10_000
    x = leaf(1.0)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad, 1.0001**10_000, rtol=1e-9)
