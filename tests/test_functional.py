"""nt.grad, nt.value_and_grad, nt.jacobian, nt.hessian."""
import os

import numpy as np
import pytest

import nbtape as nt


def f_scalar(x):
    return np.sum(np.sin(x) * x ** 2)


def df_scalar(x):
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


def d2f_scalar(x):
    return np.diag(-np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x))


X = np.array([0.5, -1.0, 2.0])


# --- grad ---------------------------------------------------------------------------------------------
def test_grad_on_numpy_array_returns_numpy_array():
    g = nt.grad(f_scalar)(X)
    assert type(g) is np.ndarray
    assert g.shape == X.shape and g.dtype == X.dtype
    np.testing.assert_allclose(g, df_scalar(X))


def test_grad_on_python_float_returns_numpy_value():
    g = nt.grad(lambda x: x ** 3)(2.0)
    assert isinstance(g, (np.ndarray, np.generic)) and not isinstance(g, nt.Tensor)
    assert float(g) == 12.0


def test_grad_on_tensor_returns_tensor():
    g = nt.grad(f_scalar)(nt.constant(X))
    assert type(g) is nt.Tensor
    np.testing.assert_allclose(g.numpy(), df_scalar(X))


def test_grad_on_variable_returns_tensor():
    v = nt.Variable(X)
    g = nt.grad(f_scalar)(v)
    assert type(g) is nt.Tensor
    np.testing.assert_allclose(g.numpy(), df_scalar(X))


def test_grad_float32_keeps_dtype():
    g = nt.grad(f_scalar)(X.astype(np.float32))
    assert g.dtype == np.float32


def test_grad_argnums_int():
    f = lambda a, b: np.sum(a * b ** 2)     # noqa: E731
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(nt.grad(f, argnums=1)(a, b), 2 * a * b)
    np.testing.assert_allclose(nt.grad(f)(a, b), b ** 2)


def test_grad_argnums_tuple_returns_tuple():
    f = lambda a, b, c: np.sum(a * b ** 2) * c     # noqa: E731
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    ga, gc = nt.grad(f, argnums=(0, 2))(a, b, 2.0)
    np.testing.assert_allclose(ga, 2 * b ** 2)
    np.testing.assert_allclose(gc, np.sum(a * b ** 2))
    single = nt.grad(f, argnums=(1,))(a, b, 2.0)
    assert isinstance(single, tuple) and len(single) == 1


def test_grad_passes_non_differentiated_arguments_through():
    f = lambda x, n, scale=1.0: np.sum(x ** n) * scale    # noqa: E731
    np.testing.assert_allclose(nt.grad(f)(X, 3, scale=2.0), 6 * X ** 2)


def test_grad_of_unconnected_argument_is_zero():
    g = nt.grad(lambda a, b: np.sum(a * 2.0), argnums=1)(X, np.ones(2))
    np.testing.assert_array_equal(g, np.zeros(2))


def test_grad_of_non_scalar_output_is_value_error():
    with pytest.raises(ValueError):
        nt.grad(lambda x: x * 2.0)(X)


def test_grad_of_integer_argument_is_type_error():
    with pytest.raises(TypeError):
        nt.grad(lambda x: x * 2.0)(3)


def test_grad_of_grad_on_floats():
    d2 = nt.grad(nt.grad(lambda x: x ** 4))(2.0)
    assert float(d2) == 48.0


def test_grad_inside_a_tape_is_recorded():
    x = nt.constant(1.5)
    with nt.GradientTape() as tape:
        tape.watch(x)
        g = nt.grad(lambda v: v ** 3)(x)
    assert float(g) == 3 * 1.5 ** 2
    assert float(tape.gradient(g, x)) == 6 * 1.5


def test_grad_keeps_function_name():
    assert nt.grad(f_scalar).__name__ == "f_scalar"


# --- value_and_grad ---------------------------------------------------------------------------------------
def test_value_and_grad_numpy():
    value, g = nt.value_and_grad(f_scalar)(X)
    assert type(g) is np.ndarray and not isinstance(value, nt.Tensor)
    np.testing.assert_allclose(float(value), f_scalar(X))
    np.testing.assert_allclose(g, df_scalar(X))


def test_value_and_grad_tensor():
    value, g = nt.value_and_grad(f_scalar)(nt.constant(X))
    assert type(value) is nt.Tensor and type(g) is nt.Tensor
    np.testing.assert_allclose(float(value), f_scalar(X))


def test_value_and_grad_argnums_tuple():
    value, (ga, gb) = nt.value_and_grad(lambda a, b: a * b ** 2, argnums=(0, 1))(2.0, 3.0)
    assert (float(value), float(ga), float(gb)) == (18.0, 9.0, 12.0)


# --- jacobian ----------------------------------------------------------------------------------------------
def test_jacobian_numpy():
    J = nt.jacobian(lambda x: np.sin(x) * x[0])(X)
    assert type(J) is np.ndarray and J.shape == (3, 3)
    expected = np.diag(np.cos(X) * X[0])
    expected[:, 0] += np.sin(X)
    np.testing.assert_allclose(J, expected)


def test_jacobian_tensor():
    J = nt.jacobian(lambda x: x ** 2)(nt.constant(X))
    assert type(J) is nt.Tensor
    np.testing.assert_allclose(J.numpy(), np.diag(2 * X))


def test_jacobian_shapes():
    J = nt.jacobian(lambda m: m @ np.ones((3, 4)))(np.ones((2, 3)))
    assert J.shape == (2, 4, 2, 3)
    J = nt.jacobian(lambda x: np.sum(x ** 2))(np.ones((2, 3)))
    assert J.shape == (2, 3)


def test_jacobian_argnums_tuple():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    Ja, Jb = nt.jacobian(lambda a, b: (a[:, None] * b).reshape(-1), argnums=(0, 1))(a, b)
    assert Ja.shape == (6, 2) and Jb.shape == (6, 3)
    np.testing.assert_allclose(Ja, np.kron(np.eye(2), b[:, None]))
    np.testing.assert_allclose(Jb, np.kron(a[:, None], np.eye(3)))


# --- hessian -----------------------------------------------------------------------------------------------
def test_hessian_numpy():
    H = nt.hessian(f_scalar)(X)
    assert type(H) is np.ndarray and H.shape == (3, 3)
    np.testing.assert_allclose(H, d2f_scalar(X))


def test_hessian_tensor():
    H = nt.hessian(f_scalar)(nt.constant(X))
    assert type(H) is nt.Tensor
    np.testing.assert_allclose(H.numpy(), d2f_scalar(X))


def test_hessian_of_quadratic_form_is_symmetric_part():
    A = np.array([[1.0, 2.0], [0.0, 3.0]])
    H = nt.hessian(lambda x: x @ A @ x)(np.array([0.3, 0.4]))
    np.testing.assert_allclose(H, A + A.T)


def test_hessian_matrix_argument_shape():
    H = nt.hessian(lambda m: np.sum(m ** 3))(np.ones((2, 2)))
    assert H.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(H.reshape(4, 4), np.diag(np.full(4, 6.0)))


def test_hessian_argnums_int():
    H = nt.hessian(lambda a, b: np.sum(a ** 2 * b ** 3), argnums=1)(
        np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(H, np.diag([6.0, 24.0]))


def test_hessian_argnums_tuple_gives_all_blocks():
    """Blocks H[i][j] = d^2 f / d arg_i d arg_j (the JAX layout), never silently zero."""
    a0, b0 = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    H = nt.hessian(lambda a, b: np.sum(a * a * b), argnums=(0, 1))(a0, b0)
    assert len(H) == 2 and all(len(row) == 2 for row in H)
    np.testing.assert_allclose(np.asarray(H[0][0]), np.diag(2 * b0))
    np.testing.assert_allclose(np.asarray(H[0][1]), np.diag(2 * a0))
    np.testing.assert_allclose(np.asarray(H[1][0]), np.diag(2 * a0))
    np.testing.assert_allclose(np.asarray(H[1][1]), np.zeros((2, 2)))


def test_jacobian_of_a_tuple_valued_function_is_not_silently_zero():
    """A function returning several arrays either works per output or raises; never zeros."""
    a0 = np.array([1.0, 2.0])
    try:
        J = nt.jacobian(lambda a: (a * 2.0, a * 3.0))(a0)
    except (TypeError, ValueError):
        return
    parts = [np.asarray(j) for j in J] if isinstance(J, (list, tuple)) else [np.asarray(J)]
    assert any(np.any(p) for p in parts), "jacobian of a tuple-valued function was all zeros"


def test_grad_through_an_escape_warns_that_its_zeros_are_not_the_derivative():
    def f(x):
        return np.sum(np.asarray(x) ** 2)        # np.asarray leaves the tape
    with pytest.warns(UserWarning) as caught:
        g = nt.grad(f)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0])
    (w,) = [w for w in caught if "left the tape" in str(w.message)]
    message = str(w.message)
    assert "comes back as zeros, which is not the derivative" in message
    assert "is None" not in message
    assert w.filename == __file__ and "np.asarray" in message


def test_jacobian_through_an_escape_warns_too():
    with pytest.warns(UserWarning, match="comes back as zeros"):
        J = nt.jacobian(lambda x: np.asarray(x) * 2.0)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(J, np.zeros((2, 2)))


def test_functional_errors_start_at_the_users_line():
    with pytest.raises(TypeError) as info:
        nt.grad(lambda x: x * 2.0)(3)
    assert "3.0" in str(info.value)
    assert "functional.py" not in {os.path.basename(e.path) for e in info.traceback}


def test_errors_in_the_users_function_keep_its_frames():
    def f(x):
        return np.sum(x) / 0 if False else undefined_name   # noqa: F821
    with pytest.raises(NameError) as info:
        nt.grad(f)(np.ones(2))
    assert any(e.name == "f" for e in info.traceback)


@pytest.mark.parametrize("f", [lambda x: x > 1.0, lambda x: np.int64(3)])
def test_grad_of_an_integer_or_bool_function_is_zero_and_its_warning_says_zero(f):
    with pytest.warns(UserWarning) as caught:
        g = nt.grad(f)(2.5)
    assert g == 0.0
    text = " ".join(str(w.message) for w in caught)
    assert "is zero" in text and "None" not in text
