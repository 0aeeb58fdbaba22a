"""tape.jacobian and tape.batch_jacobian."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtape as nt
from gradcheck import numeric_grad



def numeric_jacobian(f, x, eps=1e-6):
    """J[out_index + in_index] by central differences (f on plain arrays)."""
    x = np.array(x, dtype=float)
    y0 = np.asarray(f(x))
    J = np.zeros(y0.shape + x.shape)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        J[(Ellipsis,) + i] = (np.asarray(f(xp)) - np.asarray(f(xm))) / (2 * eps)
    return J


FUNCTIONS = [
    ("scalar->scalar", lambda x: np.sin(x) * x, ()),
    ("vector->scalar", lambda x: np.sum(x ** 3), (3,)),
    ("vector->vector", lambda x: np.sin(x) * x[0] + x[::-1], (3,)),
    ("matrix->vector", lambda x: np.sum(np.tanh(x), axis=1), (2, 3)),
    ("vector->matrix", lambda x: np.reshape(x, (2, 1)) * np.exp(np.array([0.0, 1.0, 2.0]) * x[0]), (2,)),
    ("matrix->matrix", lambda x: x @ x.T, (2, 3)),
    ("scalar->vector", lambda x: x * np.array([3.0, 4.0]) + x ** 2, ()),
]


@pytest.mark.parametrize("name, f, shape", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_jacobian_shape_and_values(name, f, shape, rng):
    x0 = rng.standard_normal(shape) * 0.7 + 0.2
    x = nt.constant(x0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    J = tape.jacobian(y, x)
    assert type(J) is nt.Tensor
    assert J.shape == y.shape + x.shape
    assert J.dtype == x.dtype
    np.testing.assert_allclose(J.numpy(), numeric_jacobian(f, x0), rtol=1e-5, atol=1e-7)


def test_jacobian_of_elementwise_is_diagonal():
    x = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), np.diag([2.0, 4.0, 6.0]))


def test_jacobian_several_sources_keep_structure():
    a = nt.constant([1.0, 2.0])
    b = nt.constant(3.0)
    v = nt.Variable(np.ones((2, 2)))
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        y = a * b + v @ a
    J = tape.jacobian(y, {"a": a, "rest": [b, v]})
    assert set(J) == {"a", "rest"} and type(J["rest"]) is list
    np.testing.assert_allclose(J["a"].numpy(), 3.0 * np.eye(2) + np.ones((2, 2)))
    np.testing.assert_allclose(J["rest"][0].numpy(), [1.0, 2.0])
    assert J["rest"][1].shape == (2, 2, 2)
    expected_v = np.zeros((2, 2, 2))
    expected_v[0, 0] = [1.0, 2.0]
    expected_v[1, 1] = [1.0, 2.0]
    np.testing.assert_allclose(J["rest"][1].numpy(), expected_v)


def test_jacobian_with_respect_to_variable():
    w = nt.Variable([[1.0, 2.0], [3.0, 4.0]])
    x = np.array([1.0, -1.0])
    with nt.GradientTape() as tape:
        y = w @ x
    J = tape.jacobian(y, w)
    assert J.shape == (2, 2, 2)
    np.testing.assert_allclose(J.numpy(), numeric_jacobian(lambda m: m @ x, w.numpy()))


def test_jacobian_unconnected():
    x = nt.constant([1.0, 2.0])
    u = nt.constant(np.ones((3, 2)))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * 2.0
    assert tape.jacobian(y, u) is None
    for policy in (nt.UnconnectedGradients.ZERO, "zero"):
        J = tape.jacobian(y, u, unconnected_gradients=policy)
        assert J.shape == (2, 3, 2) and not np.any(J.numpy())


def test_jacobian_of_unrecorded_target():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
    y = x * 2.0            # after the block: not recorded
    assert tape.jacobian(y, x) is None
    J = tape.jacobian(y, x, unconnected_gradients="zero")
    assert J.shape == (2, 2) and not np.any(J.numpy())


def test_jacobian_float32():
    x = nt.constant([1.0, 2.0], dtype="float32")
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x) * 2.0
    J = tape.jacobian(y, x)
    assert J.dtype == np.float32
    np.testing.assert_allclose(J.numpy(), np.diag(2 * np.cos([1.0, 2.0])), rtol=1e-6)


def test_persistent_tape_jacobian_twice():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 2
        z = np.sum(y)
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), np.diag([2.0, 4.0]))
    np.testing.assert_array_equal(tape.jacobian(z, x).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [2.0, 4.0])


def test_jacobian_rows_are_gradients_of_each_output(rng):
    x = nt.constant(rng.standard_normal(4))
    W = rng.standard_normal((3, 4))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.tanh(W @ x)
    J = tape.jacobian(y, x).numpy()
    for i in range(3):
        with nt.GradientTape() as t:
            t.watch(x)
            yi = np.tanh(W @ x)[i]
        np.testing.assert_allclose(J[i], t.gradient(yi, x).numpy(), rtol=1e-12)


# --- batch_jacobian ------------------------------------------------------------------------------------
def test_batch_jacobian_shape_and_values(rng):
    batch = 4
    x0 = rng.standard_normal((batch, 3))
    W = rng.standard_normal((3, 2))
    x = nt.constant(x0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.tanh(x @ W)                     # (4, 2)
    J = tape.batch_jacobian(y, x)
    assert type(J) is nt.Tensor
    assert J.shape == (batch, 2, 3)
    for b in range(batch):
        expected = numeric_jacobian(lambda r: np.tanh(r @ W), x0[b])
        np.testing.assert_allclose(J.numpy()[b], expected, rtol=1e-5, atol=1e-8)


def test_batch_jacobian_higher_rank(rng):
    x0 = rng.standard_normal((2, 3, 2))
    x = nt.constant(x0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sin(x), axis=2)[:, :, None] * np.ones((1, 1, 4))   # (2, 3, 4)
    J = tape.batch_jacobian(y, x)
    assert J.shape == (2, 3, 4, 3, 2)
    for b in range(2):
        expected = numeric_jacobian(
            lambda r: np.sum(np.sin(r), axis=1)[:, None] * np.ones((1, 4)), x0[b])
        np.testing.assert_allclose(J.numpy()[b], expected, rtol=1e-5, atol=1e-8)


def test_batch_jacobian_rows_are_independent(rng):
    """The full Jacobian is block diagonal; batch_jacobian is exactly those blocks."""
    x0 = rng.standard_normal((3, 2))
    x = nt.constant(x0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.stack([x[:, 0] * x[:, 1], np.sin(x[:, 0]), x[:, 1] ** 2], axis=1)   # (3, 3)
    B = tape.batch_jacobian(y, x).numpy()        # (3, 3, 2)
    F = tape.jacobian(y, x).numpy()              # (3, 3, 3, 2)
    for b in range(3):
        for c in range(3):
            if b == c:
                np.testing.assert_allclose(B[b], F[b, :, c])
            else:
                assert not np.any(F[b, :, c])


def test_batch_jacobian_of_elementwise_function():
    x = nt.constant([[1.0], [2.0], [3.0]])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x ** 3
    J = tape.batch_jacobian(y, x)
    assert J.shape == (3, 1, 1)
    np.testing.assert_array_equal(J.numpy().ravel(), [3.0, 12.0, 27.0])


def test_batch_jacobian_unconnected():
    x = nt.constant(np.ones((2, 3)))
    u = nt.constant(np.ones((2, 5)))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * 2.0
    assert tape.batch_jacobian(y, u) is None
    J = tape.batch_jacobian(y, u, unconnected_gradients="zero")
    assert J.shape == (2, 3, 5) and not np.any(J.numpy())


def test_batch_jacobian_mismatched_batch_is_value_error():
    x = nt.constant(np.ones((2, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.ones((3, 1)) * np.sum(x)
    with pytest.raises(ValueError):
        tape.batch_jacobian(y, x)


def test_batch_jacobian_consumes_a_non_persistent_tape():
    x = nt.constant(np.ones((2, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    tape.batch_jacobian(y, x)
    with pytest.raises(RuntimeError):
        tape.batch_jacobian(y, x)


def test_batch_jacobian_float32():
    x = nt.constant(np.ones((2, 3)), dtype="float32")
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    assert tape.batch_jacobian(y, x).dtype == np.float32


def test_jacobian_partly_connected_rows_are_zero():
    x = nt.constant([1.0, 2.0])
    c = nt.constant(5.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.stack([x[0] * 2.0, c, x[1] ** 2])
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(),
                                  [[2.0, 0.0], [0.0, 0.0], [0.0, 4.0]])


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=1, max_size=5), st.floats(-2.0, 2.0))
def test_polynomial_derivatives(coeffs, x0):
    """d/dx sum c_k x^k = sum k c_k x^(k-1), by gradient and by jacobian."""
    def p(x):
        total = x * 0.0
        for k, c in enumerate(coeffs):
            total = total + c * x ** k
        return total
    expected = sum(k * c * x0 ** (k - 1) for k, c in enumerate(coeffs) if k > 0)
    x = nt.constant(x0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = p(x)
    np.testing.assert_allclose(float(tape.gradient(y, x)), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(float(tape.jacobian(y, x)), expected, rtol=1e-9, atol=1e-9)


def test_jacobian_of_empty_target_has_shape_target_plus_source():
    x = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x[:0] * 2.0
    J = tape.jacobian(y, x)
    assert J is not None and J.shape == (0, 3)


def test_batch_jacobian_inside_an_outer_tape():
    x = nt.constant([[1.0, 2.0], [3.0, 4.0]])
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        B = inner.batch_jacobian(y, x)            # diag(3 x_b^2) per row
    np.testing.assert_array_equal(B.numpy()[1], np.diag([27.0, 48.0]))
    np.testing.assert_array_equal(outer.gradient(B, x).numpy(), 6 * x.numpy())


def test_jacobian_accepts_tensorflow_keyword_arguments():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    J = tape.jacobian(y, x, parallel_iterations=4, experimental_use_pfor=False)
    np.testing.assert_array_equal(J.numpy(), np.diag([2.0, 4.0]))
    xb = nt.constant([[1.0], [2.0]])
    with nt.GradientTape() as tape2:
        tape2.watch(xb)
        yb = xb ** 2
    B = tape2.batch_jacobian(yb, xb, experimental_use_pfor=False)
    np.testing.assert_array_equal(B.numpy().ravel(), [2.0, 4.0])


# --- mistakes get one clear paragraph, at the user's line ------------------------------------
@pytest.mark.parametrize("target_shape, source_shape, role", [
    ((), (3,), "target is a scalar"),
    ((3,), (), "source is a scalar"),
])
def test_batch_jacobian_of_a_scalar_says_what_to_use(target_shape, source_shape, role):
    x = nt.constant(np.ones(source_shape))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.ones(target_shape) * np.sum(x)
    with pytest.raises(ValueError) as info:
        tape.batch_jacobian(y, x)
    message = str(info.value)
    assert role in message and "tape.gradient" in message and "tape.jacobian" in message
    # the error was caught before the pass: the tape is still usable
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(),
                               np.ones(target_shape + source_shape))


def test_batch_jacobian_mismatch_names_both_shapes():
    x = nt.constant(np.ones((2, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.ones((3, 1)) * np.sum(x)
    with pytest.raises(ValueError, match=r"target shape \(3, 1\) and source shape \(2, 3\)"):
        tape.batch_jacobian(y, x)


def test_batch_jacobian_errors_start_at_the_users_line():
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError) as info:
        tape.batch_jacobian(y, x)
    files = {os.path.basename(e.path) for e in info.traceback}
    assert not files & {"jacobians.py", "gradient_tape.py"}


@pytest.mark.parametrize("policy, said", [("none", "is None"), ("zero", "comes back as zeros")])
def test_jacobian_through_an_escape_warns_and_says_what_it_returns(policy, said):
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = nt.constant(np.asarray(x) ** 2)       # np.asarray leaves the tape here
    with pytest.warns(UserWarning, match="left the tape through np.asarray") as caught:
        J = tape.jacobian(y, x, unconnected_gradients=policy)
    assert said in str(caught[0].message)
    assert caught[0].filename == __file__         # attributed to this (the user's) line
    if policy == "none":
        assert J is None
    else:
        assert J.shape == (2, 2) and not np.any(J.numpy())


def test_jacobian_of_a_plain_array_target_is_a_constant():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.asarray(x) ** 2
    with pytest.warns(UserWarning, match="left the tape"):
        assert tape.jacobian(y, x) is None
    with pytest.raises(TypeError, match="jacobian"):
        nt.GradientTape().jacobian("y", x)


@pytest.mark.parametrize("watch", [True, False])
def test_jacobian_of_a_source_with_respect_to_itself_is_the_identity(watch):
    v = nt.Variable(np.arange(6.0).reshape(2, 3))
    other = nt.Variable([1.0, 2.0])
    with nt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        if watch:
            tape.watch(v)
    J, unconnected = tape.jacobian(v, [v, other])
    np.testing.assert_array_equal(J.numpy(), np.eye(6).reshape(2, 3, 2, 3))
    assert unconnected is None
    B = tape.batch_jacobian(v, v)
    np.testing.assert_array_equal(B.numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    with nt.GradientTape():     # under another recorder (the per-row tensor passes)
        np.testing.assert_array_equal(tape.jacobian(v, v).numpy(), J.numpy())
        np.testing.assert_array_equal(tape.batch_jacobian(v, v).numpy(), B.numpy())


def _jacobian_sum_inside_the_block(x0, batch):
    """The value and tape gradient of sum(J), J taken inside a persistent tape's own block."""
    x = nt.constant(x0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.sin(x) * x ** 2
        J = tape.batch_jacobian(y, x) if batch else tape.jacobian(y, x)
        s = np.sum(J * J)
    return float(s), tape.gradient(s, x)


@pytest.mark.parametrize("batch", [False, True])
def test_a_jacobian_inside_its_own_persistent_tape_is_recorded(batch):
    # TensorFlow records it, as it records tape.gradient there: a second order works
    x0 = np.random.default_rng(7).uniform(0.5, 1.5, (2, 3))
    _, g = _jacobian_sum_inside_the_block(x0, batch)
    assert g is not None and g.shape == x0.shape
    num = numeric_grad(lambda x: _jacobian_sum_inside_the_block(np.asarray(x), batch)[0],
                       [x0], 0, 1e-6)
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nest", [list, tuple, lambda ts: {"a": ts[0], "b": [ts[1]]}])
def test_a_list_of_targets_gives_a_jacobian_per_target_as_tensorflow_does(nest, rng):
    a = rng.standard_normal(3)
    x = nt.Variable(a)
    with nt.GradientTape(persistent=True) as tape:
        targets = [x * x, np.sum(np.sin(x))]
    jac = tape.jacobian(nest(targets), [x])
    flat = [jac["a"], jac["b"][0]] if isinstance(jac, dict) else list(jac)
    assert type(jac) is type(nest(targets))
    np.testing.assert_allclose(flat[0][0].numpy(), np.diag(2 * a))
    np.testing.assert_allclose(flat[1][0].numpy(), np.cos(a))
    for t, j in zip(targets, flat):   # each is the Jacobian of that target alone
        np.testing.assert_allclose(j[0].numpy(), tape.jacobian(t, x).numpy())
