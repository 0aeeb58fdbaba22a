"""nbtape/rules/factorizations.py: cholesky, svd, svdvals and qr against finite differences."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import NUMPY, check_both, check_hvp, check_reverse, check_reverse_over_forward, needs_numpy
from nbtape.diagnostics.errors import NoGradientRuleError


# --- cholesky: one triangle -------------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_cholesky(shape, complex_, draws):
    a = draws.lopsided(*shape, complex_=complex_)
    check_both(np.linalg.cholesky, a)
    if NUMPY >= "2.0.0":                # upper= is new in numpy 2.0 (and reads the upper triangle)
        check_both(lambda a: np.linalg.cholesky(a, upper=True), a)


def test_cholesky_gradient_lives_on_the_lower_triangle(draws):
    x = nt.constant(draws.lopsided(3, 3))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.sum(np.linalg.cholesky(x))
    np.testing.assert_array_equal(np.triu(t.gradient(y, x).numpy(), 1), 0.0)
    if NUMPY >= "2.0.0":
        with nt.GradientTape() as t:
            t.watch(x)
            y = np.sum(np.linalg.cholesky(x, upper=True))
        np.testing.assert_array_equal(np.tril(t.gradient(y, x).numpy(), -1), 0.0)


def test_second_derivative_through_cholesky(draws):
    a = draws.lopsided(3, 3)
    check_hvp(np.linalg.cholesky, a)
    check_reverse_over_forward(np.linalg.cholesky, a)


# --- singular values --------------------------------------------------------------------------
@needs_numpy("linalg.svdvals")
@pytest.mark.parametrize("shape", [(3, 2), (2, 4), (2, 3, 3)])
def test_svdvals(shape, draws):
    check_both(np.linalg.svdvals, draws.randn(*shape))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_svd_without_vectors_runs_as_numpy_and_differentiates(shape, complex_, draws):
    a = (draws.crandn if complex_ else draws.randn)(*shape)
    x = nt.constant(a)
    s = np.linalg.svd(x, compute_uv=False)          # plain numpy code, unchanged
    assert isinstance(s, nt.Tensor)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False))
    check_both(lambda a: np.linalg.svd(a, compute_uv=False), a)
    check_both(lambda a: np.linalg.svd(a, False, False), a)


def test_svd_without_vectors_of_a_hermitian_matrix_reads_the_lower_triangle(draws):
    a = draws.lopsided(3, 3) - 4 * np.eye(3)              # some negative eigenvalues
    check_both(lambda a: np.linalg.svd(a, compute_uv=False, hermitian=True), a)
    check_both(lambda a: np.linalg.svd(a, hermitian=True, full_matrices=False).S, a)
    check_both(lambda a: (lambda u, s, vh: u * u * s + vh * vh)(*np.linalg.svd(a, hermitian=True)),
               a)


@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 3, 2)])
def test_full_svd_of_a_non_square_matrix_when_only_the_determined_part_is_used(shape, draws):
    a = draws.randn(*shape)
    check_both(lambda a: np.linalg.svd(a).S, a)
    k = min(shape[-2:])
    # reverse mode only: forward mode cannot carry a tangent for part of U
    check_reverse(lambda a: (lambda u, s, vh: u[..., :, :k] ** 2 * s[..., None, :]
                             + np.sum(vh[..., :k, :] ** 2))(*np.linalg.svd(a)), a)


def test_full_svd_refuses_the_extra_columns_with_no_gradient_rule_error(draws):
    x = nt.constant(draws.randn(3, 2))
    with nt.GradientTape(persistent=True) as t:
        t.watch(x)
        u = np.linalg.svd(x).U
    with pytest.raises(NoGradientRuleError, match=r"np\.linalg\.svd.*full_matrices=True"):
        t.gradient(u, x)
    with nt.ForwardAccumulator(x, np.ones((3, 2))) as acc:
        u, s, vh = np.linalg.svd(x)
    assert acc.jvp(s).shape == (2,)
    with pytest.raises(NoGradientRuleError, match="full_matrices=True"):
        acc.jvp(u)


# --- the full svd -----------------------------------------------------------------------------
def thin_svd(a):
    return np.linalg.svd(a, full_matrices=False)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_svd_real(shape, draws):
    a = draws.randn(*shape)
    check_both(lambda a: thin_svd(a).S, a)
    # singular vectors are defined up to sign: test functions that do not see it
    check_both(lambda a: (lambda u, s, vh: u * u * s[..., None, :])(*thin_svd(a)), a)
    check_both(lambda a: (lambda u, s, vh: vh * vh)(*thin_svd(a)), a)
    check_both(lambda a: (lambda u, s, vh: u[..., :, 1:2] * vh[..., 1:2, :])(*thin_svd(a)), a)


@pytest.mark.parametrize("shape", [(3, 3), (3, 2), (2, 3)])
def test_svd_complex(shape, draws):
    a = draws.crandn(*shape)
    check_both(lambda a: thin_svd(a).S, a)
    # and up to a phase shared by u_i and v_i
    check_both(lambda a: (lambda u, s, vh: np.real(u * np.conj(u)))(*thin_svd(a)), a)
    check_both(lambda a: (lambda u, s, vh: u[..., :, :1] * vh[..., :1, :])(*thin_svd(a)), a)


def test_svd_default_full_matrices_on_a_square_matrix(draws):
    check_both(lambda a: (lambda u, s, vh: u[:, :1] * vh[:1, :])(*np.linalg.svd(a)),
               draws.randn(3, 3))


def test_second_derivative_through_svd(draws):
    a = draws.randn(3, 3)
    check_hvp(lambda a: np.linalg.svd(a).S, a)
    check_hvp(lambda a: np.linalg.svd(a, compute_uv=False), a)
    check_reverse_over_forward(lambda a: np.linalg.svd(a, compute_uv=False), a)


# --- qr ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, complex_", [((3, 3), False), ((4, 3), False), ((2, 4, 2), False),
                                             ((3, 2), True), ((3, 3), True), ((2, 4), False),
                                             ((2, 2, 3), False), ((2, 3), True)])
def test_qr(shape, complex_, draws):
    a = (draws.crandn if complex_ else draws.randn)(*shape)
    check_both(lambda a: np.linalg.qr(a).Q, a)
    check_both(lambda a: np.linalg.qr(a).R, a)
    check_both(lambda a: (lambda q, r: q @ r[..., :1])(*np.linalg.qr(a)), a)
    check_both(lambda a: np.linalg.qr(a, mode="r"), a)
    check_both(lambda a: np.linalg.qr(a, "complete").R, a)


def test_qr_mode_r_runs_as_numpy_on_tensors(draws):
    a = draws.randn(4, 3)
    r = np.linalg.qr(nt.constant(a), mode="r")
    assert isinstance(r, nt.Tensor)
    np.testing.assert_allclose(r.numpy(), np.linalg.qr(a, mode="r"))


def test_complete_qr_of_a_tall_matrix(draws):
    check_both(lambda a: np.linalg.qr(a, mode="complete").R, draws.randn(4, 2))
    check_reverse(lambda a: np.linalg.qr(a, mode="complete").Q[:, :2] ** 2, draws.randn(4, 2))
    x = nt.constant(draws.randn(3, 2))
    with nt.GradientTape() as t:
        t.watch(x)
        q = np.linalg.qr(x, mode="complete").Q
    with pytest.raises(NoGradientRuleError, match=r"np\.linalg\.qr.*mode='complete'"):
        t.gradient(q, x)
    with nt.ForwardAccumulator(x, np.ones((3, 2))) as acc:
        q, r = np.linalg.qr(x, mode="complete")
    assert acc.jvp(r).shape == (3, 2)
    with pytest.raises(NoGradientRuleError, match="mode='complete'"):
        acc.jvp(q)


def test_qr_raw_mode_is_refused_by_name(draws):
    x = nt.constant(draws.randn(3, 2))
    with nt.GradientTape() as t:
        t.watch(x)
        h, tau = np.linalg.qr(x, mode="raw")
    with pytest.raises(NoGradientRuleError, match="mode='raw'"):
        t.gradient(h, x)


def test_second_derivative_through_qr(draws):
    check_hvp(lambda a: np.linalg.qr(a).R, draws.randn(3, 3))
    check_hvp(lambda a: np.linalg.qr(a, mode="r"), draws.randn(2, 3))
    check_reverse_over_forward(lambda a: np.linalg.qr(a).R, draws.randn(3, 2))
    check_reverse_over_forward(lambda a: np.linalg.qr(a).Q, draws.randn(2, 3))


def test_operands_and_options_by_keyword(draws):
    a = draws.randn(4, 3)
    check_both(lambda a: np.linalg.svd(a=a, full_matrices=False).S, a)
    check_both(lambda a: np.linalg.svd(a=a, compute_uv=False), a)
    check_both(lambda a: np.linalg.qr(a=a).R, a)
    check_both(lambda a: np.linalg.qr(a=a, mode="r"), a)


@pytest.mark.parametrize("a", [[[0.0, 0.0]], [[2.0, 2.0], [2.0, 2.0]],
                               [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]], ids=str)
def test_qr_of_dependent_columns_is_refused(a):
    """QR has no derivative where R has a zero on its diagonal: a refusal that says so,
    not LinAlgError or a number (found by the random-program test)."""
    x = nt.constant(a)
    with nt.GradientTape(persistent=True) as t:
        t.watch(x)
        q, r = np.linalg.qr(x)
        r_only = np.linalg.qr(x, mode="r")
    for y in (q, r, r_only):
        with pytest.raises(NoGradientRuleError, match="linearly dependent"):
            t.gradient(y, x)
    with nt.ForwardAccumulator(x, np.ones_like(x.numpy())) as acc:
        q, r = np.linalg.qr(x)
        r_only = np.linalg.qr(x, mode="r")
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)     # the values still run
    for y in (q, r, r_only):
        with pytest.raises(NoGradientRuleError, match="linearly dependent"):
            acc.jvp(y)


def test_svd_at_repeated_singular_values_is_nan_with_a_warning_where_it_is_undetermined():
    # U diag(s**3) V^T does not depend on the basis numpy picks for s = 2, 2, but
    # dropping the tied terms (TensorFlow) gave 0 where central differences give 20
    c = np.arange(9.0).reshape(3, 3)
    a = np.diag([2.0, 2.0, 5.0])

    def cubed(m, weights):
        u, s, vh = np.linalg.svd(m)
        return np.sum(weights * ((u * s ** 3) @ vh))

    def differences(weights, e=1e-6):
        num = np.zeros((3, 3))
        for i in range(3):
            for j in range(3):
                d = np.zeros((3, 3))
                d[i, j] = e
                num[i, j] = (cubed(a + d, weights) - cubed(a - d, weights)) / (2 * e)
        return num

    x = nt.constant(a)
    with pytest.warns(RuntimeWarning, match="born at np.linalg.svd"):
        with nt.GradientTape(persistent=True) as t:
            t.watch(x)
            y = cubed(x, c)
        g = t.gradient(y, x).numpy()
    assert differences(c)[0, 1] == pytest.approx(20.0) and np.isnan(g).any()
    with nt.ForwardAccumulator(x, np.ones((3, 3))) as acc:       # the tangent couples them too
        u, s, vh = np.linalg.svd(x)
    with pytest.warns(RuntimeWarning):
        assert np.isnan(acc.jvp(u).numpy()).any()
    # an adjoint that does not couple the two (weights zero on that block): right
    w = c.copy()
    w[:2, :2] = np.diag([1.0, 3.0])
    with nt.GradientTape() as t:
        t.watch(x)
        y = cubed(x, w)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), differences(w), atol=1e-5)
