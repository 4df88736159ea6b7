"""Task 1: each op's backward rule, called by hand.

These tests never call ``backward()`` (that is Task 2.1): they build
``out = a @ b`` and call ``out._backward(g)`` directly, which must return one
gradient per parent, in order. ``g`` plays the gradient of the loss with
respect to ``out``.
"""

import numpy as np
import pytest

from ..tensor import Tensor, unbroadcast
from ._helpers import assert_close, gradients


def leaf(values) -> Tensor:
    return Tensor(values, requires_grad=True)


# ----- 1.1 unbroadcast -----

@pytest.mark.task1_1
def test_unbroadcast_sums_away_a_leading_axis():
    """Does a (2, 3) gradient come back to shape (3,) as the sum over the rows?"""
    assert_close(unbroadcast(np.array([[1.0, 2, 3], [4, 5, 6]]), (3,)), [5.0, 7, 9], "unbroadcast to (3,)")


@pytest.mark.task1_1
def test_unbroadcast_sums_over_a_stretched_axis_keeping_it():
    """Does a (2, 3) gradient come back to shape (2, 1) as row sums, keeping the axis?"""
    assert_close(unbroadcast(np.array([[1.0, 2, 3], [4, 5, 6]]), (2, 1)), [[6.0], [15.0]], "unbroadcast to (2, 1)")


@pytest.mark.task1_1
def test_unbroadcast_handles_leading_and_stretched_axes_together():
    """Does a (4, 2, 3) gradient of ones come back to (2, 1) with each entry 4 * 3 = 12?"""
    assert_close(unbroadcast(np.ones((4, 2, 3)), (2, 1)), [[12.0], [12.0]], "unbroadcast to (2, 1)")


@pytest.mark.task1_1
def test_unbroadcast_to_a_scalar_sums_everything():
    """Does a gradient come back to shape () as the sum of all its entries?"""
    assert_close(unbroadcast(np.array([[1.0, 2], [3, 4]]), ()), 10.0, "unbroadcast to ()")


@pytest.mark.task1_1
def test_unbroadcast_leaves_a_gradient_of_the_right_shape_alone():
    """Is a gradient that already has the shape returned unchanged?"""
    g = np.array([[1.0, 2], [3, 4]])
    assert_close(unbroadcast(g, (2, 2)), g, "unbroadcast to (2, 2)")


# ----- 1.2 +, -, unary - -----

@pytest.mark.task1_2
def test_add_on_two_vectors():
    """With x = [1, 2], y = [3, 4] and g = [0.5, -1], does out = x + y give the right dL/dx and dL/dy?"""
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = np.array([0.5, -1.0])
    gx, gy = gradients(x + y, g)
    assert_close(gx, g, "dL/dx of x + y")
    assert_close(gy, g, "dL/dy of x + y")


@pytest.mark.task1_2
def test_add_with_y_broadcast_over_rows():
    """With x of shape (2, 3) and y of shape (3,), broadcast over x's rows, does dL/dy come back in y's shape?"""
    x, y = leaf(np.zeros((2, 3))), leaf(np.zeros(3))
    g = np.array([[1.0, 2, 3], [4, 5, 6]])
    gx, gy = gradients(x + y, g)
    assert_close(gx, g, "dL/dx of x + y")
    assert_close(gy, [5.0, 7, 9], "dL/dy of x + y, y broadcast over rows")


@pytest.mark.task1_2
def test_add_a_number():
    """Does out = x + 2.0 give the right dL/dx (the number is a constant parent)?"""
    x = leaf([1.0, 2.0])
    g = np.array([3.0, 4.0])
    gx, _ = gradients(x + 2.0, g)
    assert_close(gx, g, "dL/dx of x + 2.0")


@pytest.mark.task1_2
def test_sub_with_y_broadcast_over_columns():
    """With x of shape (2, 2) and y of shape (2, 1), does out = x - y give the right gradients, in their shapes?"""
    x, y = leaf(np.zeros((2, 2))), leaf(np.zeros((2, 1)))
    g = np.array([[1.0, 2], [3, 4]])
    gx, gy = gradients(x - y, g)
    assert_close(gx, g, "dL/dx of x - y")
    assert_close(gy, [[-3.0], [-7.0]], "dL/dy of x - y, y of shape (2, 1)")


@pytest.mark.task1_2
def test_number_minus_tensor():
    """Does out = 2.0 - y give the right dL/dy (y is the second parent)?"""
    y = leaf([1.0, 2.0])
    _, gy = gradients(2.0 - y, np.array([1.0, 3.0]))
    assert_close(gy, [-1.0, -3.0], "dL/dy of 2.0 - y")


@pytest.mark.task1_2
def test_negation():
    """Does out = -x give the right dL/dx?"""
    (gx,) = gradients(-leaf([1.0, -2.0]), np.array([1.0, 5.0]))
    assert_close(gx, [-1.0, -5.0], "dL/dx of -x")


# ----- 1.3 *, / -----

@pytest.mark.task1_3
def test_mul_of_two_vectors():
    """With x = [1, 2, 3], y = [4, 5, 6] and g of ones, does out = x * y give the right dL/dx and dL/dy?"""
    x, y = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    gx, gy = gradients(x * y, np.ones(3))
    assert_close(gx, [4.0, 5.0, 6.0], "dL/dx of x * y")
    assert_close(gy, [1.0, 2.0, 3.0], "dL/dy of x * y")


@pytest.mark.task1_3
def test_mul_with_y_broadcast_over_rows():
    """With x of shape (2, 2) and y of shape (2,), broadcast over x's rows, does dL/dy come back in y's shape?"""
    x, y = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([10.0, 20.0])
    gx, gy = gradients(x * y, np.ones((2, 2)))
    assert_close(gx, [[10.0, 20.0], [10.0, 20.0]], "dL/dx of x * y")
    assert_close(gy, [4.0, 6.0], "dL/dy of x * y, y broadcast over rows")


@pytest.mark.task1_3
def test_mul_by_a_number():
    """Does out = x * 3.0 give the right dL/dx?"""
    gx, _ = gradients(leaf([1.0, 2.0]) * 3.0, np.array([1.0, -1.0]))
    assert_close(gx, [3.0, -3.0], "dL/dx of x * 3.0")


@pytest.mark.task1_3
def test_div_of_two_vectors():
    """With x = [1, 2], y = [2, 4] and g of ones, does out = x / y give the right dL/dx and dL/dy?"""
    x, y = leaf([1.0, 2.0]), leaf([2.0, 4.0])
    gx, gy = gradients(x / y, np.ones(2))
    assert_close(gx, [0.5, 0.25], "dL/dx of x / y")
    assert_close(gy, [-0.25, -0.125], "dL/dy of x / y")


@pytest.mark.task1_3
def test_number_over_tensor():
    """Does out = 1.0 / y give the right dL/dy at y = [2, 4] (y is the second parent)?"""
    _, gy = gradients(1.0 / leaf([2.0, 4.0]), np.ones(2))
    assert_close(gy, [-0.25, -0.0625], "dL/dy of 1.0 / y")


# ----- 1.4 @ -----

@pytest.mark.task1_4
def test_matmul_of_two_small_matrices():
    """With x of shape (2, 3), w of shape (3, 2) and g of ones, does out = x @ w give the right dL/dx and dL/dw?"""
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = leaf([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    gx, gw = gradients(x @ w, np.ones((2, 2)))
    assert_close(gx, [[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]], "dL/dx of x @ w")
    assert_close(gw, [[5.0, 5.0], [7.0, 7.0], [9.0, 9.0]], "dL/dw of x @ w")


@pytest.mark.task1_4
def test_matmul_of_a_column_and_a_row():
    """For the outer product x (2, 1) @ w (1, 2), with g the identity, are dL/dx and dL/dw right?"""
    x, w = leaf([[1.0], [2.0]]), leaf([[3.0, 4.0]])
    gx, gw = gradients(x @ w, np.eye(2))
    assert_close(gx, [[3.0], [4.0]], "dL/dx of x @ w")
    assert_close(gw, [[1.0, 2.0]], "dL/dw of x @ w")


@pytest.mark.task1_4
def test_matmul_gradients_have_the_input_shapes():
    """For x (1, 3) @ w (3, 4), are the gradients of shapes (1, 3) and (3, 4), with the right values?"""
    x, w = np.array([[1.0, -1.0, 2.0]]), np.arange(12.0).reshape(3, 4)
    g = np.array([[1.0, 0.0, -1.0, 2.0]])
    gx, gw = gradients(leaf(x) @ leaf(w), g)
    assert_close(gx, g @ w.T, "dL/dx of x @ w")
    assert_close(gw, x.T @ g, "dL/dw of x @ w")


# ----- 1.5 **, exp, log -----

@pytest.mark.task1_5
def test_square():
    """Does out = x ** 2 at x = [1, 2, 3] give the right dL/dx?"""
    (gx,) = gradients(leaf([1.0, 2.0, 3.0]) ** 2, np.ones(3))
    assert_close(gx, [2.0, 4.0, 6.0], "dL/dx of x ** 2")


@pytest.mark.task1_5
def test_other_powers():
    """Are the gradients of x ** 3 at 2, x ** -1 at 2 and x ** 0.5 at 4 equal to 12, -0.25 and 0.25?"""
    for p, x, expected in [(3, 2.0, 12.0), (-1, 2.0, -0.25), (0.5, 4.0, 0.25)]:
        (gx,) = gradients(leaf([x]) ** p, np.ones(1))
        assert_close(gx, [expected], f"dL/dx of x ** {p} at x = {x}")


@pytest.mark.task1_5
def test_exp():
    """With g = [1, 2], does out = exp(x) at x = [0, 1] give the right dL/dx?"""
    (gx,) = gradients(leaf([0.0, 1.0]).exp(), np.array([1.0, 2.0]))
    assert_close(gx, [1.0, 2.0 * np.e], "dL/dx of exp(x)")


@pytest.mark.task1_5
def test_log():
    """Does out = log(x) at x = [1, 2, 4] give the right dL/dx?"""
    (gx,) = gradients(leaf([1.0, 2.0, 4.0]).log(), np.ones(3))
    assert_close(gx, [1.0, 0.5, 0.25], "dL/dx of log(x)")


# ----- 1.6 relu, tanh, sigmoid -----

@pytest.mark.task1_6
def test_relu_at_negative_zero_and_positive_inputs():
    """Does relu's gradient at x = [-1, 0, 2] match PyTorch's, which takes the slope at exactly 0 as 0?"""
    (gx,) = gradients(leaf([-1.0, 0.0, 2.0]).relu(), np.full(3, 5.0))
    assert_close(gx, [0.0, 0.0, 5.0], "dL/dx of relu(x) at x = [-1, 0, 2]")


@pytest.mark.task1_6
def test_tanh():
    """Does out = tanh(x) at x = [0, 1] give the right dL/dx (1 at 0)?"""
    (gx,) = gradients(leaf([0.0, 1.0]).tanh(), np.ones(2))
    assert_close(gx, [1.0, 1.0 - np.tanh(1.0) ** 2], "dL/dx of tanh(x) at x = [0, 1]")


@pytest.mark.task1_6
def test_sigmoid():
    """Does out = sigmoid(x) at x = [0, 2] give the right dL/dx (0.25 at 0)?"""
    s = 1.0 / (1.0 + np.exp(-2.0))
    (gx,) = gradients(leaf([0.0, 2.0]).sigmoid(), np.ones(2))
    assert_close(gx, [0.25, s * (1.0 - s)], "dL/dx of sigmoid(x) at x = [0, 2]")


@pytest.mark.task1_6
def test_sigmoid_is_finite_at_large_inputs():
    """At x = [-800, 800], where exp(-x) overflows, is sigmoid's gradient finite (0), as out * (1 - out) gives?"""
    (gx,) = gradients(leaf([-800.0, 800.0]).sigmoid(), np.ones(2))
    assert np.all(np.isfinite(gx)), (f"dL/dx of sigmoid(x) at x = [-800, 800] is {gx}: use the forward's out, "
                                     "out * (1 - out), finite for every x")
    assert_close(gx, [0.0, 0.0], "dL/dx of sigmoid(x) at x = [-800, 800]")


@pytest.mark.task1_6
@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid"])
def test_a_rule_leaves_g_as_it_was(name):
    """Does the rule leave the upstream gradient g unchanged? An engine may hand the same g to several rules."""
    g = np.array([1.0, -2.0, 3.0])
    given = g.copy()
    out = getattr(leaf([-1.0, 0.0, 2.0]), name)()
    out._backward(g)
    assert np.array_equal(g, given), (f"{name}'s rule changed g from {given} to {g}: compute new arrays "
                                      "(g * mask), never write into g")


# ----- 1.7 sum, mean, square_mean -----

@pytest.mark.task1_7
def test_sum_of_everything_spreads_g_to_every_entry():
    """Does out = x.sum() with g = 2 give dL/dx = 2 everywhere, in x's shape?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).sum(), np.array(2.0))
    assert_close(gx, np.full((2, 3), 2.0), "dL/dx of x.sum()")


@pytest.mark.task1_7
def test_sum_over_an_axis_copies_g_along_it():
    """Does out = x.sum(axis=0), x of shape (2, 3), give each row of dL/dx equal to g?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).sum(axis=0), np.array([1.0, 2.0, 3.0]))
    assert_close(gx, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], "dL/dx of x.sum(axis=0)")


@pytest.mark.task1_7
def test_sum_with_keepdims_copies_g_along_the_kept_axis():
    """Does out = x.sum(axis=1, keepdims=True) copy g's (2, 1) entries along each row?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).sum(axis=1, keepdims=True), np.array([[1.0], [2.0]]))
    assert_close(gx, [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], "dL/dx of x.sum(axis=1, keepdims=True)")


@pytest.mark.task1_7
def test_sum_over_a_tuple_of_axes():
    """Does out = x.sum(axis=(0, 2)), x of shape (2, 3, 4), put g[j] at every x[:, j, :]?"""
    g = np.array([1.0, 2.0, 3.0])
    (gx,) = gradients(leaf(np.zeros((2, 3, 4))).sum(axis=(0, 2)), g)
    assert_close(gx, np.broadcast_to(g[None, :, None], (2, 3, 4)), "dL/dx of x.sum(axis=(0, 2))")


@pytest.mark.task1_7
def test_mean_of_everything():
    """Does out = x.mean(), x of shape (2, 3), give the right dL/dx?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).mean(), np.array(1.0))
    assert_close(gx, np.full((2, 3), 1 / 6), "dL/dx of x.mean()")


@pytest.mark.task1_7
def test_mean_over_an_axis():
    """Does out = x.mean(axis=1), x of shape (2, 3), with g = [6, 12] give the right dL/dx?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).mean(axis=1), np.array([6.0, 12.0]))
    assert_close(gx, [[2.0, 2.0, 2.0], [4.0, 4.0, 4.0]], "dL/dx of x.mean(axis=1)")


@pytest.mark.task1_7
def test_mean_over_a_tuple_of_axes_and_a_negative_axis():
    """Does out = x.mean(axis=(0, 2)), x of shape (2, 3, 4), put g[j] / 8 at every x[:, j, :], and x.mean(axis=-1)
    average the last axis? (axis may be None, an int, negative too, or a tuple of ints, as in numpy and torch.)"""
    g = np.array([8.0, 16.0, 24.0])
    (gx,) = gradients(leaf(np.zeros((2, 3, 4))).mean(axis=(0, 2)), g)
    assert_close(gx, np.broadcast_to(g[None, :, None] / 8, (2, 3, 4)), "dL/dx of x.mean(axis=(0, 2))")
    (gx,) = gradients(leaf(np.zeros((2, 3))).mean(axis=-1), np.array([3.0, 6.0]))
    assert_close(gx, [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], "dL/dx of x.mean(axis=-1)")


@pytest.mark.task1_7
def test_square_mean():
    """Does out = mean(x ** 2) at x = [1, 2, 3, 4] give the right dL/dx?"""
    (gx,) = gradients(leaf([1.0, 2.0, 3.0, 4.0]).square_mean(), np.array(1.0))
    assert_close(gx, [0.5, 1.0, 1.5, 2.0], "dL/dx of x.square_mean()")


# ----- 1.8 reshape, .T -----

@pytest.mark.task1_8
def test_reshape_reshapes_g_back():
    """Does out = x.reshape(3, 2), x of shape (2, 3), give g reshaped back to (2, 3)?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).reshape(3, 2), np.arange(6.0).reshape(3, 2))
    assert_close(gx, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "dL/dx of x.reshape(3, 2)")


@pytest.mark.task1_8
def test_reshape_to_a_flat_vector():
    """Does out = x.reshape(-1), x of shape (2, 2), give g back in shape (2, 2)?"""
    (gx,) = gradients(leaf(np.zeros((2, 2))).reshape(-1), np.array([1.0, 2.0, 3.0, 4.0]))
    assert_close(gx, [[1.0, 2.0], [3.0, 4.0]], "dL/dx of x.reshape(-1)")


@pytest.mark.task1_8
def test_transpose_transposes_g_back():
    """Does out = x.T, x of shape (2, 3), give dL/dx in x's shape, entries back in place?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).T, np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert_close(gx, [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], "dL/dx of x.T")


@pytest.mark.task1_8
def test_transpose_of_three_axes():
    """Does out = x.T, x of shape (2, 3, 4), give dL/dx of shape (2, 3, 4), entries back in place?"""
    g = np.arange(24.0).reshape(4, 3, 2)
    (gx,) = gradients(leaf(np.zeros((2, 3, 4))).T, g)
    assert_close(gx, g.transpose(2, 1, 0), "dL/dx of x.T")
