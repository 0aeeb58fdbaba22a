"""nbtape/rules/eigen.py: eigh, eigvalsh, eig and eigvals against finite differences."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, check_reverse_over_forward


def insensitive(w, v):
    """A function of eigh's results that sees no sign or phase of the eigenvectors."""
    return np.real(v * np.conj(v)) * w[..., None, :]


# --- eigh and eigvalsh: one triangle ----------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eigh_on_a_non_symmetric_input_differentiates_the_triangle_read(shape, uplo, complex_,
                                                                         draws):
    a = draws.lopsided(*shape, complex_=complex_)
    check_both(lambda a: np.linalg.eigh(a, UPLO=uplo).eigenvalues, a)
    check_both(lambda a: insensitive(*np.linalg.eigh(a, uplo)), a)
    check_both(lambda a: np.linalg.eigvalsh(a, uplo), a)
    if not complex_:
        check_both(lambda a: (lambda w, v: v[..., :, :1] * v[..., :1, :])(
            *np.linalg.eigh(a, uplo)), a)


def test_eigh_gradient_lives_on_the_lower_triangle(draws):
    x = nt.constant(draws.lopsided(3, 3))
    with nt.GradientTape(persistent=True) as t:
        t.watch(x)
        w = np.linalg.eigvalsh(x)
        wu = np.linalg.eigvalsh(x, UPLO="U")
        ww = np.linalg.eigh(x).eigenvalues
    g, gu, gw = t.gradient(w, x).numpy(), t.gradient(wu, x).numpy(), t.gradient(ww, x).numpy()
    np.testing.assert_array_equal(np.triu(g, 1), 0.0)
    np.testing.assert_array_equal(np.tril(gu, -1), 0.0)
    np.testing.assert_allclose(gw, g, atol=1e-12)
    np.testing.assert_allclose(np.trace(g), 3.0)


def test_eigh_with_repeated_eigenvalues_keeps_eigenvalue_gradients_finite():
    x = nt.constant(np.eye(3))
    with nt.GradientTape() as t:
        t.watch(x)
        w = np.linalg.eigh(x).eigenvalues
        y = np.sum(w * np.array([1.0, 2.0, 3.0]))
    g = t.gradient(y, x).numpy()
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(np.trace(g), 6.0)


def test_second_derivative_through_eigh(draws):
    a = draws.lopsided(3, 3)
    check_hvp(lambda a: np.linalg.eigvalsh(a), a)
    check_hvp(lambda a: np.linalg.eigh(a).eigenvalues, a)
    check_reverse_over_forward(lambda a: np.linalg.eigh(a).eigenvalues, a)
    check_reverse_over_forward(lambda a: np.linalg.eigvalsh(a, "U"), a)


# --- eig and eigvals: general matrices --------------------------------------------------------
def real_spectrum(draws, *shape):
    """A real matrix with real, well separated eigenvalues."""
    n = shape[-1]
    p = draws.randn(*shape) + 2 * np.eye(n)
    return p @ (np.arange(1.0, n + 1)[:, None] * np.linalg.inv(p))


def eig_insensitive(w, v):
    """A function of eig's results that sees no phase of the eigenvectors."""
    return np.abs(v) ** 2 * np.real(w)[..., None, :] + np.imag(w)[..., None, :]


@pytest.mark.parametrize("make", [
    lambda d: real_spectrum(d, 3, 3),       # real eigenvalues: numpy returns real arrays
    lambda d: real_spectrum(d, 2, 3, 3),
    lambda d: d.randn(4, 4),                # complex-conjugate pairs from a real matrix
    lambda d: d.crandn(3, 3),
    lambda d: d.crandn(2, 2, 2),
])
def test_eig(make, draws):
    a = make(draws)
    check_both(lambda a: np.linalg.eig(a).eigenvalues, a)
    check_both(np.linalg.eigvals, a)
    check_both(lambda a: eig_insensitive(*np.linalg.eig(a)), a)
    check_both(lambda a: (lambda w, v: np.abs(v[..., 0, :]) + np.abs(w))(*np.linalg.eig(a)), a)


def test_eig_of_a_real_matrix_with_real_eigenvalues_gives_real_results_and_gradients(draws):
    a = real_spectrum(draws, 3, 3)
    x = nt.constant(a)
    with nt.GradientTape() as t:
        t.watch(x)
        w, v = np.linalg.eig(x)
        y = np.sum(w ** 2)
    assert w.dtype == np.float64
    g = t.gradient(y, x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), 2 * a.T, rtol=1e-8)     # d tr(A^2) = 2 A^T


def test_second_derivative_through_eig(draws):
    a = real_spectrum(draws, 3, 3)
    check_hvp(lambda a: np.linalg.eigvals(a), a)
    check_reverse_over_forward(lambda a: np.linalg.eigvals(a), a)
    check_reverse_over_forward(lambda a: np.linalg.eig(a).eigenvalues, a)


def test_eig_forward_mode_runs_and_gives_both_tangents(draws):
    a = real_spectrum(draws, 3, 3)
    x = nt.constant(a)
    with nt.ForwardAccumulator(x, np.eye(3)) as acc:
        w, v = np.linalg.eig(x)
    np.testing.assert_allclose(acc.jvp(w).numpy(), np.ones(3), atol=1e-10)  # A + eI shifts w
    np.testing.assert_allclose(acc.jvp(v).numpy(), np.zeros((3, 3)), atol=1e-10)


def test_operands_and_options_by_keyword(draws):
    a = draws.lopsided(3, 3)
    check_both(lambda a: np.linalg.eigh(a=a, UPLO="U").eigenvalues, a)
    check_both(lambda a: np.linalg.eigvalsh(a=a, UPLO="U"), a)
    b = real_spectrum(draws, 3, 3)
    check_both(lambda b: np.linalg.eig(a=b).eigenvalues, b)
    check_both(lambda b: np.linalg.eigvals(a=b), b)


def _sym(m):
    """The symmetric matrix eigh reads from the lower triangle of ``m``."""
    return np.tril(m) + np.tril(m, -1).T


def _square_weighted(c):
    """sum(C * (S @ S)) through eigh: V diag(w**2) V^T is S @ S whatever basis numpy picks."""
    def f(s):
        w, v = np.linalg.eigh(s)
        return np.sum(c * ((v * w ** 2) @ v.T))
    return f


def _lower_differences(f, a, e=1e-6):
    num = np.zeros_like(a)
    for i in range(a.shape[0]):
        for j in range(i + 1):
            d = np.zeros_like(a)
            d[i, j] = e
            num[i, j] = (f(a + d) - f(a - d)) / (2 * e)
    return num


def test_eigh_at_repeated_eigenvalues_is_nan_with_a_warning_where_the_gradient_is_undetermined():
    # at w = (2, 2, 5) the gradient reaching the eigenvectors couples the two of w = 2
    # (C[0, 1] + C[1, 0] != 0): dropping that term (TensorFlow) gave 0 where the true
    # derivative is 16 (central differences); nbtape says NaN and names eigh
    c = np.arange(9.0).reshape(3, 3)
    a = np.diag([2.0, 2.0, 5.0])
    x = nt.constant(a)
    with pytest.warns(RuntimeWarning, match="born at np.linalg.eigh"):
        with nt.GradientTape(persistent=True) as t:
            t.watch(x)
            y = _square_weighted(c)(x)
        g = t.gradient(y, x).numpy()
    num = _lower_differences(lambda s: np.sum(c * (_sym(s) @ _sym(s))), a)
    assert num[1, 0] == pytest.approx(16.0) and np.isnan(g).any()
    # no coupling (C antisymmetric in that block): the dropped term is 0, the gradient right
    c[1, 0] = -c[0, 1]
    with nt.GradientTape() as t:
        t.watch(x)
        y = _square_weighted(c)(x)
    np.testing.assert_allclose(
        t.gradient(y, x).numpy(),
        _lower_differences(lambda s: np.sum(c * (_sym(s) @ _sym(s))), a), atol=1e-6)
