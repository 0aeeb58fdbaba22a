"""nbtape/rules/linalg.py: products, einsum and np.linalg against finite differences."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtape as nt
from gradcheck import check_both
from test_rules_shapes import (NUMPY, check_hvp, check_reverse_over_forward, needs_numpy,
                               numpy_param, since_numpy)


def randn(rng, *shape):
    return rng.standard_normal(shape)


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def well_conditioned(rng, *shape, complex_=False):
    a = (crandn if complex_ else randn)(rng, *shape)
    return a + 3 * np.eye(shape[-1])


def spd(rng, *shape, complex_=False):
    """A symmetric (Hermitian) positive-definite matrix with well separated eigenvalues."""
    a = (crandn if complex_ else randn)(rng, *shape)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + np.diag(np.arange(1.0, shape[-1] + 1))


def sym(a):
    """The function under test sees sym(A), so finite differences stay symmetric."""
    return 0.5 * (a + np.conj(np.swapaxes(a, -1, -2)))


# --- products -----------------------------------------------------------------------------
PRODUCTS = [
    (np.dot, [(3,), (3,)]),
    (np.dot, [(2, 3), (3,)]),
    (np.dot, [(3,), (3, 4)]),
    (np.dot, [(2, 3), (3, 4)]),
    (np.dot, [(), (2, 3)]),
    (np.dot, [(2, 3), ()]),
    (np.dot, [(2, 3, 4), (4,)]),
    (np.dot, [(4,), (2, 4, 3)]),
    (np.dot, [(2, 3, 4), (5, 4, 2)]),
    (lambda a, b: a.dot(b), [(2, 2), (2,)]),
    (np.vdot, [(2, 3), (6,)]),
    (np.inner, [(3,), (3,)]),
    (np.inner, [(2, 3), (4, 3)]),
    (np.inner, [(2, 2, 3), (3,)]),
    (np.inner, [(), (2,)]),
    (np.outer, [(3,), (2, 2)]),
    numpy_param("linalg.outer", [(3,), (4,)]),
    (np.tensordot, [(2, 3, 4), (3, 4, 5)]),
    (lambda a, b: np.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    (lambda a, b: np.tensordot(a, b, axes=0), [(2,), (3, 2)]),
    (lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 1])), [(2, 3, 4), (3, 2)]),
    (lambda a, b: np.tensordot(a, b, axes=(1, 0)), [(2, 3), (3, 2)]),
    (lambda a, b: np.tensordot(a, b, axes=([-1], [0])), [(2, 3), (3,)]),
    pytest.param(lambda a, b: np.linalg.tensordot(a, b, axes=1), [(2, 3), (3, 2)],
                 marks=needs_numpy("linalg.tensordot")),
    (np.kron, [(2, 2), (3, 1)]),
    (np.kron, [(2,), (3,)]),
    (np.kron, [(2, 3), (2,)]),
    (np.kron, [(2,), (2, 1, 2)]),
    numpy_param("linalg.matmul", [(2, 2, 3), (3, 4)]),
    numpy_param("linalg.vecdot", [(3, 4), (4,)]),
    pytest.param(lambda a, b: np.linalg.vecdot(a, b, axis=0), [(3, 4), (3, 1)],
                 marks=needs_numpy("linalg.vecdot")),
]


@pytest.mark.parametrize("f, shapes", PRODUCTS)
def test_products(f, shapes, rng):
    check_both(f, *[randn(rng, *s) for s in shapes])


@pytest.mark.parametrize("f, shapes", [
    (np.dot, [(2, 3), (3,)]), (np.dot, [(2, 3, 2), (2,)]), (np.vdot, [(3,), (3,)]),
    (np.inner, [(2, 3), (3,)]), (np.kron, [(2,), (2, 2)]),
    numpy_param("linalg.vecdot", [(2, 3), (3,)]),
    (np.tensordot, [(2, 3), (2, 3)]),
])
def test_complex_products(f, shapes, rng):
    check_both(f, *[crandn(rng, *s) for s in shapes])


def test_products_with_a_list_operand(rng):
    check_both(lambda a: np.dot(a, [1.0, 2.0]), randn(rng, 3, 2))
    check_both(lambda a: np.tensordot([[1.0, 2.0]], a, 1), randn(rng, 2, 3))
    if NUMPY >= "2.0.0":                # np.linalg.matmul is new in numpy 2.0
        check_both(lambda a: np.linalg.matmul(a, [[1.0], [2.0]]), randn(rng, 3, 2))


# --- einsum -------------------------------------------------------------------------------
EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("iij->ij", [(2, 2, 3)]),
    ("ijj,j->i", [(2, 3, 3), (3,)]),
    ("i,i", [(3,), (3,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("...ij,...jk", [(2, 2, 3), (1, 3, 2)]),
    ("...i,...i", [(2, 3), (3,)]),
    ("i...->...", [(2, 3, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("Ba,aC->BC", [(2, 3), (3, 2)]),
    ("ab, bc -> ca", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("spec, shapes", EINSUMS)
def test_einsum(spec, shapes, rng):
    check_both(lambda *ops: np.einsum(spec, *ops), *[randn(rng, *s) for s in shapes])


def test_einsum_interleaved_form_and_options(rng):
    check_both(lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [2, 0]),
               randn(rng, 2, 3), randn(rng, 3, 2))
    check_both(lambda a, b: np.einsum(a, [0, Ellipsis], b, [Ellipsis]),
               randn(rng, 2, 3), randn(rng, 3))
    check_both(lambda a, b, c: np.einsum("ij,jk,k->i", a, b, c, optimize=True),
               randn(rng, 2, 3), randn(rng, 3, 4), randn(rng, 4))
    a, b, c = randn(rng, 2, 3), randn(rng, 3, 4), randn(rng, 4)
    path = np.einsum_path("ij,jk,k->i", a, b, c, optimize="optimal")[0]
    check_both(lambda a, b, c: np.einsum("ij,jk,k->i", a, b, c, optimize=path), a, b, c)


def test_einsum_complex_and_a_constant_operand(rng):
    check_both(lambda a, b: np.einsum("ij,jk->ik", a, b), crandn(rng, 2, 3), crandn(rng, 3, 2))
    c = randn(rng, 3, 2)
    check_both(lambda a: np.einsum("ij,jk->ki", a, c), randn(rng, 2, 3))


def test_second_derivative_through_einsum(rng):
    check_hvp(lambda a: np.einsum("ij,jk->ik", a, a), randn(rng, 3, 3))
    check_hvp(lambda a: np.einsum("ii,ij->j", a, a), randn(rng, 3, 3))
    check_hvp(lambda a: np.einsum("...i,...i", a, a), randn(rng, 2, 3))


@settings(max_examples=15, deadline=None)
@given(i=st.integers(1, 3), j=st.integers(1, 3), k=st.integers(1, 3), batch=st.integers(1, 2))
def test_random_contractions(i, j, k, batch):
    rng = np.random.default_rng(0)
    a, b = randn(rng, batch, i, j), randn(rng, j, k)
    check_both(lambda a, b: np.einsum("bij,jk->bki", a, b), a, b)
    check_both(np.dot, a, b)
    check_both(lambda a, b: np.tensordot(a, b, axes=([2], [0])), a, b)


# --- inverses, determinants, solve --------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_inv_det_slogdet(shape, complex_, rng):
    a = well_conditioned(rng, *shape, complex_=complex_)
    check_both(np.linalg.inv, a)
    check_both(np.linalg.det, a)
    check_both(lambda a: np.linalg.slogdet(a)[1], a)
    check_both(lambda a: (lambda s, l: 2.0 * s + s * l)(*np.linalg.slogdet(a)), a)


def test_slogdet_of_a_negative_determinant(rng):
    a = well_conditioned(rng, 3, 3)
    a = -np.sign(np.linalg.det(a)) * a      # a 3x3 times -1 flips the sign: negative on any draw
    assert np.linalg.det(a) < 0
    check_both(lambda a: np.linalg.slogdet(a).logabsdet, a)


def test_second_derivative_through_inv(rng):
    a = well_conditioned(rng, 3, 3)
    check_hvp(np.linalg.inv, a)
    check_hvp(np.linalg.det, a)

    # d^2/dx^2 of inv(x * A) at x = 1 is 2 A^-1 (as 1/x does)
    x = nt.constant(1.0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = np.linalg.inv(x * a)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), 2 * np.linalg.inv(a).sum())


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("ashape, bshape", [
    ((3, 3), (3,)), ((3, 3), (3, 2)),
    pytest.param((2, 3, 3), (3,), marks=since_numpy("2.0.0", "solve with a 1-D b for a stack")),
    ((2, 3, 3), (2, 3, 2)), ((3, 3), (2, 3, 1)),
    # numpy 1 reads a b with one axis fewer than a as a stack of vectors; numpy 2 refuses it
    pytest.param((2, 3, 3), (2, 3), marks=pytest.mark.skipif(
        NUMPY >= "2.0.0", reason="numpy 2 reads a 2-D b as a matrix")),
])
def test_solve(ashape, bshape, complex_, rng):
    a = well_conditioned(rng, *ashape, complex_=complex_)
    b = (crandn if complex_ else randn)(rng, *bshape)
    check_both(np.linalg.solve, a, b)


@pytest.mark.parametrize("shape, complex_", [((4, 3), False), ((3, 4), False), ((2, 3, 3), False),
                                             ((3, 2), True)])
def test_pinv(shape, complex_, rng):
    a = (crandn if complex_ else randn)(rng, *shape)
    check_both(np.linalg.pinv, a)


@pytest.mark.parametrize("n", [0, 1, 2, 3, -1, -2])
def test_matrix_power(n, rng):
    check_both(lambda a: np.linalg.matrix_power(a, n), well_conditioned(rng, 2, 3, 3) / 3)


@pytest.mark.parametrize("shapes", [
    [(2, 3), (3, 4), (4, 2)], [(3,), (3, 4), (4,)], [(3,), (3, 2), (2, 2)], [(2, 3), (3,)],
    [(2, 2), (2, 3), (3, 3), (3, 1)],
])
def test_multi_dot(shapes, rng):
    check_both(lambda *xs: np.linalg.multi_dot(list(xs)), *[randn(rng, *s) for s in shapes])


# --- symmetric factorizations -------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_cholesky(shape, complex_, rng):
    a = spd(rng, *shape, complex_=complex_)
    check_both(lambda a: np.linalg.cholesky(sym(a)), a)
    if NUMPY >= "2.0.0":                # upper= is new in numpy 2.0
        check_both(lambda a: np.linalg.cholesky(sym(a), upper=True), a)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eigh_real(shape, rng):
    a = spd(rng, *shape)
    check_both(lambda a: np.linalg.eigh(sym(a))[0], a)
    # eigenvectors are defined up to sign, so test functions that do not see the sign
    check_both(lambda a: (lambda w, v: w[..., None, :] * v ** 2)(*np.linalg.eigh(sym(a))), a)
    check_both(lambda a: (lambda w, v: v[..., :, :1] * v[..., :1, :])(*np.linalg.eigh(sym(a))), a)
    check_both(lambda a: np.linalg.eigvalsh(sym(a)), a)


def test_eigh_complex_hermitian(rng):
    a = spd(rng, 3, 3, complex_=True)
    check_both(lambda a: np.linalg.eigh(sym(a)).eigenvalues, a)
    check_both(lambda a: (lambda w, v: np.real(v * np.conj(v)) * w)(*np.linalg.eigh(sym(a))), a)
    check_both(lambda a: np.linalg.eigvalsh(sym(a)), a)


def test_eigh_with_repeated_eigenvalues_keeps_eigenvalue_gradients_finite():
    x = nt.constant(np.eye(3))
    with nt.GradientTape() as t:
        t.watch(x)
        w = np.linalg.eigh(x).eigenvalues
        y = np.sum(w * np.array([1.0, 2.0, 3.0]))
    g = t.gradient(y, x).numpy()
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(np.trace(g), 6.0)


def test_second_derivative_through_factorizations(rng):
    a = spd(rng, 3, 3)
    check_hvp(lambda a: np.linalg.cholesky(sym(a)), a)
    check_hvp(lambda a: np.linalg.eigvalsh(sym(a)), a)
    check_hvp(lambda a: np.linalg.solve(a, np.ones(3)), a)
    check_hvp(lambda a: np.linalg.svd(a).S, a)
    check_hvp(lambda a: np.linalg.qr(a).R, a)
    check_hvp(lambda a: np.linalg.eigh(sym(a)).eigenvalues, a)


# --- singular values and norms ------------------------------------------------------------
@needs_numpy("linalg.svdvals")
@pytest.mark.parametrize("shape", [(3, 2), (2, 4), (2, 3, 3)])
def test_svdvals(shape, rng):
    check_both(np.linalg.svdvals, randn(rng, *shape))


NUMPY2_NORMS = needs_numpy("linalg.vector_norm", "linalg.matrix_norm")
NORMS = [
    (lambda x: np.linalg.norm(x), (4,)),
    (lambda x: np.linalg.norm(x), (2, 3, 2)),
    (lambda x: np.linalg.norm(x, 1), (4,)),
    (lambda x: np.linalg.norm(x, 2), (4,)),
    (lambda x: np.linalg.norm(x, np.inf), (4,)),
    (lambda x: np.linalg.norm(x, -np.inf), (4,)),
    (lambda x: np.linalg.norm(x, 3), (4,)),
    (lambda x: np.linalg.norm(x, 0.5), (4,)),
    (lambda x: np.linalg.norm(x, 0), (4,)),
    (lambda x: np.linalg.norm(x, axis=1), (2, 3)),
    (lambda x: np.linalg.norm(x, 1, axis=0, keepdims=True), (2, 3)),
    (lambda x: np.linalg.norm(x, np.inf, axis=-1), (2, 3, 4)),
    (lambda x: np.linalg.norm(x, "fro"), (2, 3)),
    (lambda x: np.linalg.norm(x, 1), (3, 3)),
    (lambda x: np.linalg.norm(x, -1), (3, 3)),
    (lambda x: np.linalg.norm(x, np.inf), (3, 2)),
    (lambda x: np.linalg.norm(x, -np.inf), (3, 2)),
    (lambda x: np.linalg.norm(x, 2), (3, 2)),
    (lambda x: np.linalg.norm(x, -2), (2, 3)),
    (lambda x: np.linalg.norm(x, "nuc"), (3, 2)),
    (lambda x: np.linalg.norm(x, axis=(0, 2)), (2, 3, 2)),
    (lambda x: np.linalg.norm(x, 2, axis=(2, 0), keepdims=True), (3, 2, 4)),
    (lambda x: np.linalg.norm(x, 1, axis=(-1, -2)), (2, 3, 3)),
    pytest.param(lambda x: np.linalg.vector_norm(x), (2, 3), marks=NUMPY2_NORMS),
    pytest.param(lambda x: np.linalg.vector_norm(x, axis=(0, 1), ord=np.inf, keepdims=True),
                 (2, 3, 2), marks=NUMPY2_NORMS),
    pytest.param(lambda x: np.linalg.vector_norm(x, ord=1, axis=-1), (2, 3), marks=NUMPY2_NORMS),
    pytest.param(lambda x: np.linalg.matrix_norm(x), (2, 3, 3), marks=NUMPY2_NORMS),
    pytest.param(lambda x: np.linalg.matrix_norm(x, ord=2), (2, 3, 4), marks=NUMPY2_NORMS),
    pytest.param(lambda x: np.linalg.matrix_norm(x, ord="nuc", keepdims=True), (2, 2, 3),
                 marks=NUMPY2_NORMS),
]


@pytest.mark.parametrize("f, shape", NORMS)
def test_norms(f, shape, rng):
    check_both(f, randn(rng, *shape))


@pytest.mark.parametrize("f", [lambda x: np.linalg.norm(x), lambda x: np.linalg.norm(x, 1),
                               lambda x: np.linalg.norm(x, np.inf),
                               numpy_param("linalg.matrix_norm"),
                               lambda x: np.linalg.norm(x, 2)])
def test_complex_norms(f, rng):
    check_both(f, crandn(rng, 3, 2))


def test_complex_norm_follows_tensorflow():
    z = nt.constant(np.array([3 + 4j, 0j]))
    with nt.GradientTape() as t:
        t.watch(z)
        n2 = np.linalg.norm(z) ** 2
    np.testing.assert_allclose(t.gradient(n2, z).numpy(), 2 * z.numpy())   # d|z|^2/dz = 2z


def test_norm_of_zero_has_a_zero_gradient():
    x = nt.constant(np.zeros(3))
    with nt.GradientTape() as t:
        t.watch(x)
        n = np.linalg.norm(x)
    np.testing.assert_array_equal(t.gradient(n, x).numpy(), np.zeros(3))


def test_second_derivative_through_norm(rng):
    check_hvp(lambda x: np.linalg.norm(x, axis=-1), randn(rng, 2, 3))
    check_hvp(lambda x: np.linalg.norm(x, 3), randn(rng, 4))


# --- svd and qr ---------------------------------------------------------------------------
def thin_svd(a):
    return np.linalg.svd(a, full_matrices=False)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_svd_real(shape, rng):
    a = randn(rng, *shape)
    check_both(lambda a: thin_svd(a).S, a)
    # singular vectors are defined up to sign: test functions that do not see it
    check_both(lambda a: (lambda u, s, vh: u * u * s[..., None, :])(*thin_svd(a)), a)
    check_both(lambda a: (lambda u, s, vh: vh * vh)(*thin_svd(a)), a)
    check_both(lambda a: (lambda u, s, vh: u[..., :, 1:2] * vh[..., 1:2, :])(*thin_svd(a)), a)


@pytest.mark.parametrize("shape", [(3, 3), (3, 2), (2, 3)])
def test_svd_complex(shape, rng):
    a = crandn(rng, *shape)
    check_both(lambda a: thin_svd(a).S, a)
    # and up to a phase shared by u_i and v_i
    check_both(lambda a: (lambda u, s, vh: np.real(u * np.conj(u)))(*thin_svd(a)), a)
    check_both(lambda a: (lambda u, s, vh: u[..., :, :1] * vh[..., :1, :])(*thin_svd(a)), a)


def test_svd_default_full_matrices_on_square_and_its_limits(rng):
    check_both(lambda a: (lambda u, s, vh: u[:, :1] * vh[:1, :])(*np.linalg.svd(a)),
               randn(rng, 3, 3))
    x = nt.constant(randn(rng, 3, 2))
    with nt.GradientTape() as t:
        t.watch(x)
        u = np.linalg.svd(x).U
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        t.gradient(u, x)
    # the error names the replacement: np.linalg.svdvals where numpy has it (numpy 2)
    with pytest.raises(TypeError, match="svdvals" if NUMPY >= "2.0.0" else "full_matrices=False"):
        np.linalg.svd(x, compute_uv=False)


@pytest.mark.parametrize("shape, complex_", [((3, 3), False), ((4, 3), False), ((2, 4, 2), False),
                                             ((3, 2), True), ((3, 3), True)])
def test_qr(shape, complex_, rng):
    a = (crandn if complex_ else randn)(rng, *shape)
    check_both(lambda a: np.linalg.qr(a).Q, a)
    check_both(lambda a: np.linalg.qr(a).R, a)
    check_both(lambda a: (lambda q, r: q @ r[..., :1])(*np.linalg.qr(a)), a)


def test_qr_limits(rng):
    check_both(lambda a: np.linalg.qr(a, mode="complete").R, randn(rng, 3, 3))
    x = nt.constant(randn(rng, 2, 3))
    with nt.GradientTape() as t:
        t.watch(x)
        q = np.linalg.qr(x).Q
    with pytest.raises(NotImplementedError, match="at least as many rows"):
        t.gradient(q, x)
    with pytest.raises(TypeError, match="qr"):
        np.linalg.qr(x, mode="r")


@pytest.mark.parametrize("f, make, shape", [
    (np.linalg.inv, well_conditioned, (3, 3)),
    (np.linalg.det, well_conditioned, (2, 2)),
    (lambda a: np.linalg.slogdet(a).logabsdet, well_conditioned, (3, 3)),
    (lambda a: np.linalg.solve(a, np.arange(3.0)), well_conditioned, (3, 3)),
    (lambda a: np.einsum("ij,jk->ik", a, a), randn, (2, 2)),
    (lambda a: np.dot(a, a[0]), randn, (3, 3)),
    (lambda a: np.linalg.cholesky(sym(a)), spd, (3, 3)),
    (lambda a: np.linalg.eigh(sym(a)).eigenvalues, spd, (3, 3)),
    (lambda a: np.linalg.norm(a, axis=0), randn, (2, 3)),
    (lambda a: np.linalg.qr(a).R, randn, (3, 2)),
    (lambda a: np.linalg.matrix_power(a, -2), well_conditioned, (2, 2)),
    (lambda a: np.linalg.pinv(a), randn, (3, 2)),
])
def test_reverse_over_forward_through_linalg(f, make, shape, rng):
    check_reverse_over_forward(f, make(rng, *shape))


def test_matmul_of_a_stack_and_a_vector(rng):
    check_both(np.matmul, randn(rng, 2, 3, 4), randn(rng, 4))
    check_both(np.matmul, randn(rng, 3), randn(rng, 2, 3, 4))
