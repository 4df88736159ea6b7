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
def test_add_passes_g_to_both_inputs():
    """Does out = a + b give dL/da = g and dL/db = g?"""
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = np.array([0.5, -1.0])
    ga, gb = gradients(a + b, g)
    assert_close(ga, g, "dL/da of a + b")
    assert_close(gb, g, "dL/db of a + b")


@pytest.mark.task1_2
def test_add_sums_the_gradient_of_a_broadcast_input():
    """With a of shape (2, 3) and b of shape (3,), is dL/db the column sums of g?"""
    a, b = leaf(np.zeros((2, 3))), leaf(np.zeros(3))
    g = np.array([[1.0, 2, 3], [4, 5, 6]])
    ga, gb = gradients(a + b, g)
    assert_close(ga, g, "dL/da of a + b")
    assert_close(gb, [5.0, 7, 9], "dL/db of a + b, b broadcast over rows")


@pytest.mark.task1_2
def test_add_with_a_number_passes_g_to_the_tensor():
    """Does out = a + 2.0 give dL/da = g (the number is the second parent, a constant)?"""
    a = leaf([1.0, 2.0])
    g = np.array([3.0, 4.0])
    ga, _ = gradients(a + 2.0, g)
    assert_close(ga, g, "dL/da of a + 2.0")


@pytest.mark.task1_2
def test_sub_gives_g_and_minus_g():
    """Does out = a - b give dL/da = g and dL/db = -g, summed where b was broadcast?"""
    a, b = leaf(np.zeros((2, 2))), leaf(np.zeros((2, 1)))
    g = np.array([[1.0, 2], [3, 4]])
    ga, gb = gradients(a - b, g)
    assert_close(ga, g, "dL/da of a - b")
    assert_close(gb, [[-3.0], [-7.0]], "dL/db of a - b, b of shape (2, 1)")


@pytest.mark.task1_2
def test_number_minus_tensor_gives_minus_g_to_the_tensor():
    """Does out = 2.0 - a give dL/da = -g (a is the second parent)?"""
    a = leaf([1.0, 2.0])
    _, ga = gradients(2.0 - a, np.array([1.0, 3.0]))
    assert_close(ga, [-1.0, -3.0], "dL/da of 2.0 - a")


@pytest.mark.task1_2
def test_negation_gives_minus_g():
    """Does out = -a give dL/da = -g?"""
    (ga,) = gradients(-leaf([1.0, -2.0]), np.array([1.0, 5.0]))
    assert_close(ga, [-1.0, -5.0], "dL/da of -a")


# ----- 1.3 *, / -----

@pytest.mark.task1_3
def test_mul_swaps_the_inputs():
    """Does out = a * b give dL/da = g * b and dL/db = g * a?"""
    a, b = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    ga, gb = gradients(a * b, np.ones(3))
    assert_close(ga, [4.0, 5.0, 6.0], "dL/da of a * b")
    assert_close(gb, [1.0, 2.0, 3.0], "dL/db of a * b")


@pytest.mark.task1_3
def test_mul_sums_the_gradient_of_a_broadcast_input():
    """With a of shape (2, 2) and b of shape (2,), is dL/db the column sums of g * a?"""
    a, b = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([10.0, 20.0])
    ga, gb = gradients(a * b, np.ones((2, 2)))
    assert_close(ga, [[10.0, 20.0], [10.0, 20.0]], "dL/da of a * b")
    assert_close(gb, [4.0, 6.0], "dL/db of a * b, b broadcast over rows")


@pytest.mark.task1_3
def test_mul_by_a_number_scales_g():
    """Does out = a * 3.0 give dL/da = 3 g?"""
    ga, _ = gradients(leaf([1.0, 2.0]) * 3.0, np.array([1.0, -1.0]))
    assert_close(ga, [3.0, -3.0], "dL/da of a * 3.0")


@pytest.mark.task1_3
def test_div_gives_g_over_b_and_minus_g_a_over_b_squared():
    """Does out = a / b give dL/da = g / b and dL/db = -g a / b**2?"""
    a, b = leaf([1.0, 2.0]), leaf([2.0, 4.0])
    ga, gb = gradients(a / b, np.ones(2))
    assert_close(ga, [0.5, 0.25], "dL/da of a / b")
    assert_close(gb, [-0.25, -0.125], "dL/db of a / b")


@pytest.mark.task1_3
def test_number_over_tensor_gives_minus_g_over_a_squared():
    """Does out = 1.0 / a give dL/da = -g / a**2 (a is the second parent)?"""
    _, ga = gradients(1.0 / leaf([2.0, 4.0]), np.ones(2))
    assert_close(ga, [-0.25, -0.0625], "dL/da of 1.0 / a")


# ----- 1.4 @ -----

@pytest.mark.task1_4
def test_matmul_gives_g_times_w_transposed_and_x_transposed_times_g():
    """Does out = x @ w give dL/dx = g @ w.T and dL/dw = x.T @ g?"""
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = leaf([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    gx, gw = gradients(x @ w, np.ones((2, 2)))
    assert_close(gx, [[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]], "dL/dx of x @ w")
    assert_close(gw, [[5.0, 5.0], [7.0, 7.0], [9.0, 9.0]], "dL/dw of x @ w")


@pytest.mark.task1_4
def test_matmul_of_a_column_and_a_row():
    """For the outer product x (2, 1) @ w (1, 2) with g = I, is dL/dx = w.T and dL/dw = x.T?"""
    x, w = leaf([[1.0], [2.0]]), leaf([[3.0, 4.0]])
    gx, gw = gradients(x @ w, np.eye(2))
    assert_close(gx, [[3.0], [4.0]], "dL/dx of x @ w")
    assert_close(gw, [[1.0, 2.0]], "dL/dw of x @ w")


@pytest.mark.task1_4
def test_matmul_gradients_have_the_input_shapes():
    """For x (1, 3) @ w (3, 4), are the gradients of shapes (1, 3) and (3, 4) with the right values?"""
    x, w = np.array([[1.0, -1.0, 2.0]]), np.arange(12.0).reshape(3, 4)
    g = np.array([[1.0, 0.0, -1.0, 2.0]])
    gx, gw = gradients(leaf(x) @ leaf(w), g)
    assert_close(gx, g @ w.T, "dL/dx of x @ w")
    assert_close(gw, x.T @ g, "dL/dw of x @ w")


# ----- 1.5 **, exp, log -----

@pytest.mark.task1_5
def test_square_gives_two_x():
    """Does out = x ** 2 give dL/dx = 2 x g?"""
    (gx,) = gradients(leaf([1.0, 2.0, 3.0]) ** 2, np.ones(3))
    assert_close(gx, [2.0, 4.0, 6.0], "dL/dx of x ** 2")


@pytest.mark.task1_5
def test_other_powers_follow_p_x_to_the_p_minus_1():
    """Are the gradients of x**3 at 2, x**-1 at 2 and x**0.5 at 4 equal to 12, -0.25 and 0.25?"""
    for p, x, expected in [(3, 2.0, 12.0), (-1, 2.0, -0.25), (0.5, 4.0, 0.25)]:
        (gx,) = gradients(leaf([x]) ** p, np.ones(1))
        assert_close(gx, [expected], f"dL/dx of x ** {p} at x = {x}")


@pytest.mark.task1_5
def test_exp_gives_g_times_exp_x():
    """Does out = exp(x) give dL/dx = g * exp(x)?"""
    (gx,) = gradients(leaf([0.0, 1.0]).exp(), np.array([1.0, 2.0]))
    assert_close(gx, [1.0, 2.0 * np.e], "dL/dx of exp(x)")


@pytest.mark.task1_5
def test_log_gives_g_over_x():
    """Does out = log(x) give dL/dx = g / x?"""
    (gx,) = gradients(leaf([1.0, 2.0, 4.0]).log(), np.ones(3))
    assert_close(gx, [1.0, 0.5, 0.25], "dL/dx of log(x)")


# ----- 1.6 relu, tanh, sigmoid -----

@pytest.mark.task1_6
def test_relu_passes_g_only_where_x_is_positive():
    """Does relu pass g where x > 0 and 0 elsewhere, also at exactly 0 (as PyTorch)?"""
    (gx,) = gradients(leaf([-1.0, 0.0, 2.0]).relu(), np.full(3, 5.0))
    assert_close(gx, [0.0, 0.0, 5.0], "dL/dx of relu(x) at x = [-1, 0, 2]")


@pytest.mark.task1_6
def test_tanh_gives_one_minus_tanh_squared():
    """Does out = tanh(x) give dL/dx = g * (1 - tanh(x)**2): 1 at 0?"""
    (gx,) = gradients(leaf([0.0, 1.0]).tanh(), np.ones(2))
    assert_close(gx, [1.0, 1.0 - np.tanh(1.0) ** 2], "dL/dx of tanh(x) at x = [0, 1]")


@pytest.mark.task1_6
def test_sigmoid_gives_s_times_one_minus_s():
    """Does out = sigmoid(x) give dL/dx = g * s * (1 - s): 0.25 at 0?"""
    s = 1.0 / (1.0 + np.exp(-2.0))
    (gx,) = gradients(leaf([0.0, 2.0]).sigmoid(), np.ones(2))
    assert_close(gx, [0.25, s * (1.0 - s)], "dL/dx of sigmoid(x) at x = [0, 2]")


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
def test_mean_of_everything_divides_g_by_the_count():
    """Does out = x.mean(), x of shape (2, 3), give dL/dx = g / 6 everywhere?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).mean(), np.array(1.0))
    assert_close(gx, np.full((2, 3), 1 / 6), "dL/dx of x.mean()")


@pytest.mark.task1_7
def test_mean_over_an_axis_divides_by_that_axis_length():
    """Does out = x.mean(axis=1), x of shape (2, 3), with g = [6, 12] give rows of 2 and of 4?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).mean(axis=1), np.array([6.0, 12.0]))
    assert_close(gx, [[2.0, 2.0, 2.0], [4.0, 4.0, 4.0]], "dL/dx of x.mean(axis=1)")


@pytest.mark.task1_7
def test_square_mean_gives_two_x_over_n():
    """Does out = mean(x**2) over 4 entries give dL/dx = g * 2 x / 4?"""
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
    """Does out = x.T, x of shape (2, 3), give dL/dx = g.T?"""
    (gx,) = gradients(leaf(np.zeros((2, 3))).T, np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert_close(gx, [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], "dL/dx of x.T")


@pytest.mark.task1_8
def test_transpose_of_three_axes_reverses_them_back():
    """Does out = x.T, x of shape (2, 3, 4), give dL/dx of shape (2, 3, 4) equal to g.T?"""
    g = np.arange(24.0).reshape(4, 3, 2)
    (gx,) = gradients(leaf(np.zeros((2, 3, 4))).T, g)
    assert_close(gx, g.transpose(2, 1, 0), "dL/dx of x.T")
