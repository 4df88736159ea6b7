"""Task 2: the engine, ``backward()``, and ``no_grad()``.

The graphs here are built with ``op(data, parents, backward)`` and backward
rules written out in this file, so these tests need none of Task 1's rules.
"""

import numpy as np
import pytest

from .. import tensor
from ..tensor import Tensor, is_grad_enabled, no_grad, op
from ._helpers import assert_close


def scale(x: Tensor, k: float) -> Tensor:
    """k * x, with its backward rule written out."""
    return op(k * x.data, (x,), lambda g: (k * g,))


def add(x: Tensor, y: Tensor) -> Tensor:
    """x + y (same shapes), with its backward rule written out."""
    return op(x.data + y.data, (x, y), lambda g: (g, g))


def mul(x: Tensor, y: Tensor) -> Tensor:
    """x * y (same shapes), with its backward rule written out."""
    return op(x.data * y.data, (x, y), lambda g: (g * y.data, g * x.data))


def total(x: Tensor) -> Tensor:
    """x.sum(), with its backward rule written out."""
    return op(x.data.sum(), (x,), lambda g: (g * np.ones_like(x.data),))


def assert_raises(kind: type[Exception], call, what: str) -> None:
    """Like pytest.raises, except that a stub's NotImplementedError (a RuntimeError too) is no answer."""
    try:
        call()
    except NotImplementedError:
        raise
    except kind:
        return
    pytest.fail(f"{what} did not raise {kind.__name__}", pytrace=False)


@pytest.fixture(autouse=True)
def grad_mode_on():
    """Start and leave every test with grad mode on, whatever a broken no_grad() did."""
    tensor._grad_enabled = True
    yield
    tensor._grad_enabled = True


# ----- 2.1 topological order and the chain rule -----

@pytest.mark.task2_1
def test_backward_applies_the_chain_rule_along_a_chain():
    """For y = 3x and z = y * y, is dz/dx = 18 x?"""
    x = Tensor(2.0, requires_grad=True)
    y = scale(x, 3.0)
    mul(y, y).backward()
    assert_close(x.grad, 36.0, "x.grad for z = (3x)**2 at x = 2")


@pytest.mark.task2_1
def test_backward_sums_the_gradients_of_a_tensor_used_twice():
    """For z = x * x, is x.grad the sum of both uses, 2 x?"""
    x = Tensor([1.0, -3.0], requires_grad=True)
    total(mul(x, x)).backward()
    assert_close(x.grad, [2.0, -6.0], "x.grad for sum(x * x)")


@pytest.mark.task2_1
def test_backward_reaches_every_leaf():
    """For z = sum(a * b + a), are a.grad = b + 1 and b.grad = a?"""
    a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
    total(add(mul(a, b), a)).backward()
    assert_close(a.grad, [4.0, 5.0], "a.grad")
    assert_close(b.grad, [1.0, 2.0], "b.grad")


@pytest.mark.task2_1
def test_backward_runs_a_rule_only_after_every_node_that_uses_it():
    """For b = 2a, c = 3b, d = b + c: does each rule run once, d's before c's before b's, and a.grad = 8?"""
    calls = []

    def logged(name, rule):
        def backward(g):
            calls.append(name)
            return rule(g)
        return backward

    a = Tensor(1.0, requires_grad=True)
    b = op(2 * a.data, (a,), logged("b", lambda g: (2 * g,)))
    c = op(3 * b.data, (b,), logged("c", lambda g: (3 * g,)))
    d = op(b.data + c.data, (b, c), logged("d", lambda g: (g, g)))
    d.backward()
    assert calls == ["d", "c", "b"], f"backward rules ran in the order {calls}, expected ['d', 'c', 'b']"
    assert_close(a.grad, 8.0, "a.grad for d = 2a + 6a")


# ----- 2.2 seeding, accumulation, errors, leaves without grad -----

@pytest.mark.task2_2
def test_backward_seeds_a_one_element_output_with_one():
    """Does backward() with no argument on a one-element output start from a gradient of 1?"""
    x = Tensor([2.0], requires_grad=True)
    scale(x, 3.0).backward()
    assert_close(x.grad, [3.0], "x.grad for y = 3x")


@pytest.mark.task2_2
def test_a_leaf_grad_has_the_leaf_shape():
    """For y = sum(x), x of shape (2, 3), is x.grad all ones in shape (2, 3)?"""
    x = Tensor(np.zeros((2, 3)), requires_grad=True)
    total(x).backward()
    assert_close(x.grad, np.ones((2, 3)), "x.grad for sum(x)")


@pytest.mark.task2_2
def test_backward_uses_a_given_gradient():
    """Does y.backward(g) for a non-scalar y start from g?"""
    x = Tensor([1.0, 1.0], requires_grad=True)
    scale(x, 2.0).backward(np.array([1.0, 10.0]))
    assert_close(x.grad, [2.0, 20.0], "x.grad for y = 2x, backward([1, 10])")


@pytest.mark.task2_2
def test_backward_without_a_gradient_on_a_non_scalar_raises_runtime_error():
    """Does backward() on a 2-element output raise RuntimeError, as PyTorch?"""
    y = scale(Tensor([1.0, 2.0], requires_grad=True), 2.0)
    assert_raises(RuntimeError, y.backward, "backward() on a 2-element output")


@pytest.mark.task2_2
def test_backward_with_a_gradient_of_the_wrong_shape_raises_value_error():
    """Does backward(g) with g of a different shape than the output raise ValueError?"""
    y = scale(Tensor([1.0, 2.0], requires_grad=True), 2.0)
    assert_raises(ValueError, lambda: y.backward(np.ones(3)), "backward(g) with g of shape (3,), output of shape (2,)")


@pytest.mark.task2_2
def test_backward_with_a_gradient_that_would_broadcast_still_raises_value_error():
    """A g of shape (1,) or () would broadcast to an output of shape (2,): is it refused all the same, as PyTorch
    refuses it, rather than stretched?"""
    for g in (np.ones(1), np.array(1.0)):
        y = scale(Tensor([1.0, 2.0], requires_grad=True), 2.0)
        assert_raises(ValueError, lambda y=y, g=g: y.backward(g),
                      f"backward(g) with g of shape {g.shape}, output of shape (2,)")


@pytest.mark.task2_2
def test_backward_on_a_tensor_without_grad_raises_runtime_error():
    """Does backward() on a tensor that does not require grad raise RuntimeError, as PyTorch?"""
    assert_raises(RuntimeError, Tensor(1.0).backward, "backward() on Tensor(1.0)")


@pytest.mark.task2_2
def test_a_gradient_that_reaches_a_node_by_two_paths_is_summed_into_a_new_array():
    """For w = 1 * x and y = w + w + w, is x.grad = 3? The rule of + hands the same g to both its inputs, so a
    sum written into a stored gradient (grads[k] += g) changes the other input's gradient too."""
    x = Tensor([1.0, 2.0], requires_grad=True)
    w = scale(x, 1.0)
    total(add(add(w, w), w)).backward()
    if x.grad is not None and np.allclose(x.grad, 4.0):
        pytest.fail("x.grad for y = w + w + w (w = 1 * x): expected [3. 3.], got [4. 4.]: a gradient was added "
                    "into in place (grads[k] += g) while another node held the same array; sum into a new "
                    "one: grads[k] = grads[k] + g", pytrace=False)
    assert_close(x.grad, [3.0, 3.0], "x.grad for y = w + w + w (w = 1 * x)")


@pytest.mark.task2_2
def test_separate_backward_calls_accumulate():
    """After backward of 3x and then of 4x, is x.grad 3 + 4 = 7?"""
    x = Tensor(1.0, requires_grad=True)
    scale(x, 3.0).backward()
    scale(x, 4.0).backward()
    assert_close(x.grad, 7.0, "x.grad after two backward calls")


@pytest.mark.task2_2
def test_a_second_backward_through_a_shared_subgraph_adds_both_or_raises():
    """y = 2x; backward of 1*y, then of 3*y, which goes back through y again: is x.grad 2 + 6 = 8 each, or does
    the second call raise RuntimeError, as PyTorch does once it has freed the graph (never a silent 2)?"""
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = scale(x, 2.0)
    scale(y, 1.0).backward(np.ones(2))
    try:
        scale(y, 3.0).backward(np.ones(2))
    except NotImplementedError:
        raise
    except RuntimeError:
        return  # PyTorch's "Trying to backward through the graph a second time": allowed
    assert_close(x.grad, [8.0, 8.0], "x.grad after backward of 1*y, then of 3*y, for y = 2x (the second call "
                 "must reach x through y again: keep the graph, or raise RuntimeError as PyTorch)")


@pytest.mark.task2_2
def test_a_0d_leaf_keeps_an_ndarray_grad_across_calls():
    """After two backward calls on a 0-d leaf, is x.grad still an ndarray of shape () (numpy's arithmetic on 0-d
    arrays returns numpy scalars, which an in-place update such as clip_grad_norm's cannot change)?"""
    x = Tensor(1.0, requires_grad=True)
    scale(x, 3.0).backward()
    scale(x, 4.0).backward()
    if not (isinstance(x.grad, np.ndarray) and x.grad.shape == ()):
        pytest.fail(f"x.grad is a {type(x.grad).__name__}, expected an ndarray of shape (): numpy arithmetic on "
                    "0-d arrays returns numpy scalars, so store np.array(..., dtype=np.float64) of the sum, a new "
                    "array", pytrace=False)
    assert_close(x.grad, 7.0, "x.grad after two backward calls")


@pytest.mark.task2_2
def test_backward_takes_the_gradient_as_a_tensor_a_list_or_integers():
    """Does y.backward(g) accept g as a Tensor (PyTorch's form), a list, or an int array, with float64 grads?"""
    for given in (Tensor([1.0, 10.0]), [1.0, 10.0], np.array([1, 10])):
        x = Tensor([1.0, 1.0], requires_grad=True)
        op(x.data.copy(), (x,), lambda g: (g,)).backward(given)  # hands the given gradient on as it is
        assert_close(x.grad, [1.0, 10.0], f"x.grad for y = x, backward({given!r})")
        if x.grad.dtype != np.float64:
            pytest.fail(f"x.grad has dtype {x.grad.dtype} for backward({given!r}), expected float64", pytrace=False)


@pytest.mark.task2_2
def test_a_leaf_without_requires_grad_keeps_grad_none():
    """For y = x * c with c a constant, is c.grad still None and x.grad = c?"""
    x, c = Tensor(3.0, requires_grad=True), Tensor(2.0)
    mul(x, c).backward()
    assert c.grad is None, f"c.grad is {c.grad!r}, expected None: c does not require grad"
    assert_close(x.grad, 2.0, "x.grad for y = x * 2")


@pytest.mark.task2_2
def test_a_leaf_that_requires_grad_is_its_own_output():
    """Does x.backward() on a 0-d leaf x that requires grad give x.grad = 1, as PyTorch does?"""
    x = Tensor(3.0, requires_grad=True)
    x.backward()
    assert_close(x.grad, 1.0, "x.grad after x.backward() on a leaf")


@pytest.mark.task2_2
def test_a_leaf_grad_is_its_own_float64_array():
    """Is a leaf's .grad a float64 copy of what reaches it: unchanged when the caller later changes the array it
    gave, when another leaf's .grad is scaled in place, and float64 when a rule returns integers?"""
    a, b, g = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True), np.array([1.5, -2.0])
    add(a, b).backward(g)  # the rule of + hands g itself to both leaves
    g[...] = 7.0
    a.grad *= 0.5
    assert_close(b.grad, [1.5, -2.0], "b.grad after (a + b).backward(g), then g[...] = 7 and a.grad *= 0.5")
    x = Tensor([1.0, 1.0], requires_grad=True)
    op(2.0 * x.data, (x,), lambda g: (np.array([1, 2]),)).backward(np.ones(2))  # a rule that returns integers
    if not isinstance(x.grad, np.ndarray) or x.grad.dtype != np.float64:
        pytest.fail(f"x.grad is {x.grad!r} after a rule returned integers, expected a float64 array",
                    pytrace=False)


@pytest.mark.task2_2
def test_a_float16_gradient_is_read_as_float64():
    """Is a given gradient converted to float64 before the walk, so that float16 rounding stays out of it?"""
    x, g = Tensor([1.0], requires_grad=True), np.array([0.1], dtype=np.float16)
    add(add(x, x), scale(x, 3.0)).backward(g)
    assert_close(x.grad, 5.0 * g.astype(np.float64), "x.grad for y = x + x + 3x, backward(a float16 grad)",
                 rtol=1e-12)


# ----- 2.3 no_grad -----

@pytest.mark.task2_3
def test_no_grad_records_nothing_inside():
    """Inside no_grad(), is the result of an op a leaf without requires_grad or parents?"""
    x = Tensor(1.0, requires_grad=True)
    with no_grad():
        y = scale(x, 2.0)
    assert not y.requires_grad, "an op inside no_grad() made a tensor that requires grad"
    assert y._parents == (), f"an op inside no_grad() recorded {len(y._parents)} parent(s)"
    assert scale(x, 2.0).requires_grad, "after no_grad(), ops do not record again"


@pytest.mark.task2_3
def test_no_grad_turns_the_mode_off_and_back_on():
    """Is is_grad_enabled() False inside no_grad() and True after it?"""
    with no_grad():
        inside = is_grad_enabled()
    assert inside is False, "is_grad_enabled() is True inside no_grad()"
    assert is_grad_enabled() is True, "is_grad_enabled() is False after no_grad()"


@pytest.mark.task2_3
def test_nested_no_grad_keeps_the_mode_off_until_the_outer_block_ends():
    """After an inner no_grad() block ends inside an outer one, is the mode still off?"""
    with no_grad():
        with no_grad():
            pass
        inside_outer = is_grad_enabled()
    assert inside_outer is False, "the inner no_grad() turned grad mode back on inside the outer one"
    assert is_grad_enabled() is True, "grad mode is off after both blocks ended"


@pytest.mark.task2_3
def test_no_grad_restores_the_mode_when_an_exception_leaves_the_block():
    """When an exception leaves a no_grad() block, is grad mode on again?"""
    with pytest.raises(KeyError):
        with no_grad():
            raise KeyError("boom")
    assert is_grad_enabled() is True, "grad mode stayed off after an exception left no_grad()"


# ----- 2.4 deep graphs -----

def backward_deep(y: Tensor) -> None:
    try:
        y.backward()
        return
    except RecursionError:
        pass  # fail outside the except block, so the report is one line, not a chain
    pytest.fail("backward() hit Python's recursion limit on a chain of 10,000 ops: "
                "order the graph with an explicit stack, not recursion", pytrace=False)


@pytest.mark.task2_4
def test_backward_through_a_chain_of_ten_thousand_ops():
    """Does backward() get through y = 1 * (1 * (... x)), 10,000 ops deep, without RecursionError?"""
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = scale(y, 1.0)
    backward_deep(y)
    assert_close(x.grad, 1.0, "x.grad at the end of the chain")


@pytest.mark.task2_4
def test_backward_through_a_deep_chain_that_reuses_a_leaf():
    """For y = x + x + ... + x, 10,000 additions deep, is x.grad = 10,001?"""
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = add(y, x)
    backward_deep(y)
    assert_close(x.grad, 10_001.0, "x.grad for x added 10,001 times",
                 hint="here, likelier: a gradient that doubles at every addition, which an in-place sum "
                      "(grads[k] += g into an array + handed to both its inputs) does")
