"""The worked examples of /work/shared/SEED-EXAMPLES.md with their numbers.

Rows 1-12, 15, 16, 20 and 24 (row 14 is in test_custom.py; row 13 belongs to the clip
tests; the training rows belong to the training pieces).
"""
import warnings

import numpy as np
import pytest

import nbtape as nt


# 1 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x0, expected", [(1.0, 3.0), (3.0, 27.0)])
def test_01_cube_with_a_variable(x0, expected):
    x = nt.Variable(x0)
    with nt.GradientTape() as tape:
        y = x ** 3
    assert float(tape.gradient(y, x)) == expected


# 2 ------------------------------------------------------------------------------------------------
def test_02_square_of_sum():
    x = nt.constant(np.ones((2, 2)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x)
        z = y * y
    g = tape.gradient(z, x)
    np.testing.assert_array_equal(g.numpy(), [[8.0, 8.0], [8.0, 8.0]])


# 3 ------------------------------------------------------------------------------------------------
def test_03_persistent_tape_two_gradients():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(y, x)) == 6.0


# 4 ------------------------------------------------------------------------------------------------
def test_04_vector_product():
    x = nt.constant([3.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        z = x * x
    np.testing.assert_array_equal(z.numpy(), [9.0, 9.0])
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [6.0, 6.0])


# 5 ------------------------------------------------------------------------------------------------
def test_05_gradient_with_respect_to_an_intermediate():
    x = nt.constant([3.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, y).numpy(), [18.0, 18.0])


# 6 ------------------------------------------------------------------------------------------------
def test_06_auto_watched_variables_in_creation_order():
    x = nt.Variable(2.0, name="x")
    y = nt.Variable(3.0, name="y")
    with nt.GradientTape() as tape:
        z = x + y ** 2
    assert tape.watched_variables() == (x, y)
    assert [v.name for v in tape.watched_variables()] == ["x", "y"]
    gx, gy = tape.gradient(z, [x, y])
    assert (float(gx), float(gy)) == (1.0, 6.0)


def test_06_creation_order_not_read_order():
    x = nt.Variable(2.0)
    y = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        z = y ** 2 + x
    assert tape.watched_variables() == (x, y)
    assert float(z) == 11.0


# 7 ------------------------------------------------------------------------------------------------
def _control_flow(x, y):
    output = 1.0
    for i in range(y):
        if 1 < i < 5:
            output = output * x
    return output


@pytest.mark.parametrize("y, expected", [(6, 12.0), (5, 12.0), (4, 4.0)])
def test_07_control_flow(y, expected):
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        out = _control_flow(x, y)
    assert float(tape.gradient(out, x)) == expected


# 8 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x0, first, second", [(1.0, 3.0, 6.0), (5.0, 75.0, 30.0)])
def test_08_second_derivative_by_nested_tapes(x0, first, second):
    x = nt.Variable(x0)
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = x ** 3
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    assert float(dy_dx) == first
    assert float(d2y_dx2) == second


# 9 ------------------------------------------------------------------------------------------------
def test_09_int8_variable_gradient_is_none_with_dtype_warning():
    x = nt.Variable([[2, 2], [2, 2]], dtype=np.int8)
    with nt.GradientTape() as tape:
        y = x * x
    with pytest.warns(UserWarning, match="int8"):
        g = tape.gradient(y, x)
    assert g is None


# 10 -----------------------------------------------------------------------------------------------
def test_10_unconnected_none_and_zero():
    x = nt.Variable(2.0)
    y = nt.Variable(3.0)
    with nt.GradientTape(persistent=True) as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    g = tape.gradient(z, x, unconnected_gradients=nt.UnconnectedGradients.ZERO)
    assert float(g) == 0.0


# 11 -----------------------------------------------------------------------------------------------
def test_11_watch_accessed_variables_false():
    x = nt.Variable(2.0)
    y = nt.Variable(3.0)
    with nt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(y)
        z = x + y ** 2
    g = tape.gradient(z, {"x": x, "y": y})
    assert g["x"] is None
    assert float(g["y"]) == 6.0


# 12 -----------------------------------------------------------------------------------------------
def test_12_stop_recording_and_reset():
    x = nt.Variable(3.0)
    with nt.GradientTape(persistent=True) as tape:
        y = x * x
        with tape.stop_recording():
            inside = tape.gradient(y, x)
        tape.reset()
        after_reset = tape.gradient(y, x)
    assert float(inside) == 6.0
    assert after_reset is None


# 15 -----------------------------------------------------------------------------------------------
def test_15_vector_target_is_summed():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * nt.constant([3.0, 4.0])
    assert float(tape.gradient(y, x)) == 7.0


# 16 -----------------------------------------------------------------------------------------------
def test_16_toy_graph_true_sign():
    inputs = nt.constant([[1.0, 2.0]])
    w = nt.Variable([[0.25], [0.15]])
    y_true = 0.75
    with nt.GradientTape() as tape:
        y_pred = inputs @ w                      # 0.55
        loss = (y_true - y_pred) ** 2
    np.testing.assert_allclose(float(np.sum(loss)), 0.04)
    g = tape.gradient(loss, w).numpy()
    # -2 (y_true - y_pred) * inputs^T = -0.4 * [1, 2]; the blog post *Gradient Tape with
    # Tensorflow* prints +0.4/+0.8, with the sign flipped
    np.testing.assert_allclose(g, [[-0.4], [-0.8]])
    assert np.all(g < 0)


# 20 -----------------------------------------------------------------------------------------------
def test_20_jacobian_shapes_and_values():
    x = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.stack([x[0] * x[1], np.sin(x[2]), np.sum(x * x), x[1]])    # R^3 -> R^4
        m = np.reshape(x, (3, 1)) * np.ones((1, 2))                        # shape (3, 2)
    J = tape.jacobian(y, x)
    assert J.shape == (4, 3)
    np.testing.assert_allclose(J.numpy(), [[2.0, 1.0, 0.0],
                                           [0.0, 0.0, np.cos(3.0)],
                                           [2.0, 4.0, 6.0],
                                           [0.0, 1.0, 0.0]])
    assert tape.jacobian(m, x).shape == (3, 2, 3)


def test_20_symmetric_hessian_by_nested_tapes():
    x = nt.Variable([0.5, -1.0, 2.0])
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = np.sum(x ** 3) + x[0] * x[1] * x[2] + np.sin(x[0] * x[2])
        g = inner.gradient(y, x)
    H = outer.jacobian(g, x).numpy()
    assert H.shape == (3, 3)
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    a, b, c = 0.5, -1.0, 2.0
    s = np.sin(a * c)
    expected = np.array([
        [6 * a - c * c * s, c, b + np.cos(a * c) - a * c * s],
        [c, 6 * b, a],
        [b + np.cos(a * c) - a * c * s, a, 6 * c - a * a * s],
    ])
    np.testing.assert_allclose(H, expected, rtol=1e-10)


# 24 -----------------------------------------------------------------------------------------------
def _quietly(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_24_unwatched_constant():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        y = x * x
    assert _quietly(lambda: tape.gradient(y, x)) is None


def test_24_unwatched_tensor():
    x = nt.Variable(2.0) * 1.0          # a tensor made outside any tape
    with nt.GradientTape() as tape:
        y = x * x
    assert _quietly(lambda: tape.gradient(y, x)) is None


def test_24_non_trainable_variable():
    v = nt.Variable(3.0, trainable=False)
    with nt.GradientTape() as tape:
        y = v * v
    assert _quietly(lambda: tape.gradient(y, v)) is None


def test_24_value_replaced_by_a_tensor():
    x = nt.Variable(2.0)
    x = x + 1.0                        # should have been x.assign_add(1.0)
    with nt.GradientTape() as tape:
        y = x * x
    assert type(x) is nt.Tensor
    assert _quietly(lambda: tape.gradient(y, x)) is None


def test_24_left_the_tape_through_plain_numpy():
    x = nt.Variable([[1.0, 2.0], [3.0, 4.0]])
    with nt.GradientTape() as tape:
        x2 = x ** 2
        y = np.asarray(x2).mean(axis=0)         # plain numpy from here on
        y = np.mean(nt.constant(y), axis=0)
    with pytest.warns(UserWarning, match="left the tape"):
        assert tape.gradient(y, x) is None


def test_24_integer_dtype():
    x = nt.constant(10)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.warns(UserWarning, match=str(x.dtype)):
        assert tape.gradient(y, x) is None


def test_24_assign_add():
    x0 = nt.Variable(3.0)
    x1 = nt.Variable(0.0)
    with nt.GradientTape() as tape:
        x1.assign_add(x0)
        y = x1 ** 2
    assert _quietly(lambda: tape.gradient(y, x0)) is None
