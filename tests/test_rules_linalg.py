"""nbtape/rules/linalg.py: inv, det, slogdet, solve, pinv, lstsq, matrix_power, multi_dot."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import NUMPY, check_both, check_hvp, check_reverse_over_forward, since_numpy


def well_conditioned(draws, *shape, complex_=False):
    a = (draws.crandn if complex_ else draws.randn)(*shape)
    return a + 3 * np.eye(shape[-1])


# --- inverses, determinants, solve ------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_inv_det_slogdet(shape, complex_, draws):
    a = well_conditioned(draws, *shape, complex_=complex_)
    check_both(np.linalg.inv, a)
    check_both(np.linalg.det, a)
    check_both(lambda a: np.linalg.slogdet(a)[1], a)
    check_both(lambda a: (lambda s, l: 2.0 * s + s * l)(*np.linalg.slogdet(a)), a)


def test_slogdet_of_a_negative_determinant(draws):
    a = well_conditioned(draws, 3, 3)
    a = a[::-1].copy()          # swapping rows makes the sign change
    assert np.linalg.det(a) < 0
    check_both(lambda a: np.linalg.slogdet(a).logabsdet, a)


def test_second_derivative_through_inv(draws):
    a = well_conditioned(draws, 3, 3)
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
def test_solve(ashape, bshape, complex_, draws):
    a = well_conditioned(draws, *ashape, complex_=complex_)
    b = (draws.crandn if complex_ else draws.randn)(*bshape)
    check_both(np.linalg.solve, a, b)


@pytest.mark.parametrize("shape, complex_", [((4, 3), False), ((3, 4), False), ((2, 3, 3), False),
                                             ((3, 2), True)])
def test_pinv(shape, complex_, draws):
    a = (draws.crandn if complex_ else draws.randn)(*shape)
    check_both(np.linalg.pinv, a)


@pytest.mark.parametrize("n", [0, 1, 2, 3, -1, -2])
def test_matrix_power(n, draws):
    check_both(lambda a: np.linalg.matrix_power(a, n), well_conditioned(draws, 2, 3, 3) / 3)


@pytest.mark.parametrize("shapes", [
    [(2, 3), (3, 4), (4, 2)], [(3,), (3, 4), (4,)], [(3,), (3, 2), (2, 2)], [(2, 3), (3,)],
    [(2, 2), (2, 3), (3, 3), (3, 1)],
])
def test_multi_dot(shapes, draws):
    check_both(lambda *xs: np.linalg.multi_dot(list(xs)), *[draws.randn(*s) for s in shapes])


# --- determinants of singular matrices --------------------------------------------------------
def test_det_gradient_at_a_singular_matrix_is_the_adjugate_transposed():
    a = nt.constant(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with nt.GradientTape() as t:
        t.watch(a)
        d = np.linalg.det(a)
    np.testing.assert_allclose(t.gradient(d, a).numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    with nt.ForwardAccumulator(a, np.array([[1.0, 0.0], [0.0, 0.0]])) as acc:
        d = np.linalg.det(a)
    np.testing.assert_allclose(acc.jvp(d).numpy(), 4.0)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("rank, shape", [(2, (3, 3)), (1, (3, 3)), (3, (2, 4, 4)), (0, (2, 2))])
def test_det_of_singular_and_nearly_singular_matrices(rank, shape, complex_, draws):
    x = (draws.crandn if complex_ else draws.randn)(*shape[:-1], rank)
    y = (draws.crandn if complex_ else draws.randn)(*shape[:-2], rank, shape[-1])
    a = x @ y                                   # rank-deficient
    check_both(np.linalg.det, a, atol=1e-5)
    check_both(np.linalg.det, a + 1e-9 * np.eye(shape[-1]), atol=1e-5)


def test_det_of_an_exactly_singular_stack_is_finite_in_both_modes():
    a = nt.constant(np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]]))
    with nt.GradientTape() as t:
        t.watch(a)
        d = np.sum(np.linalg.det(a))
    np.testing.assert_allclose(t.gradient(d, a).numpy(),
                               [[[4.0, -2.0], [-2.0, 1.0]], [[3.0, 0.0], [0.0, 2.0]]], atol=1e-12)


def test_slogdet_at_a_singular_matrix_gives_the_infinite_derivative_not_a_linalgerror():
    # numpy: slogdet(S) = (0, -inf); d log|det| = tr(adj(S) dA) / det(S): +-inf along adj(S)^T
    # (a difference quotient grows as 1/h); a regular matrix in the same stack keeps inv^T
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    a = nt.constant(np.stack([s, np.diag([2.0, 4.0])]))
    with pytest.warns(RuntimeWarning):
        with nt.GradientTape() as t:
            t.watch(a)
            y = np.sum(np.linalg.slogdet(a)[1])
        g = t.gradient(y, a).numpy()
    np.testing.assert_array_equal(g[0], np.inf * np.array([[1.0, -1.0], [-1.0, 1.0]]))
    np.testing.assert_allclose(g[1], np.diag([0.5, 0.25]))
    for h in (1e-4, 1e-6):
        assert abs(np.linalg.slogdet(s + h * np.eye(2))[1] - np.linalg.slogdet(s)[1]) == np.inf
        quotient = (np.linalg.slogdet(s + h * np.diag([1.0, 0.0]))[1]
                    - np.linalg.slogdet(s + h * np.diag([0.5, 0.0]))[1]) / (0.5 * h)
        assert quotient > 0.5 / h                # log(2)/(h/2): no finite limit
    with nt.ForwardAccumulator(a, np.ones((2, 2, 2))) as acc:
        y = np.linalg.slogdet(a)[1]
    jvp = acc.jvp(y).numpy()
    assert not np.isfinite(jvp[0])
    np.testing.assert_allclose(jvp[1], 0.75)


# --- pinv(hermitian=True) and lstsq -----------------------------------------------------------
def test_pinv_hermitian_reads_the_lower_triangle(draws):
    a = draws.randn(3, 3)
    a = a @ a.T + np.eye(3) + np.triu(draws.randn(3, 3), 1)       # not symmetric: upper is ignored
    check_both(lambda a: np.linalg.pinv(a, hermitian=True), a)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("ashape, bshape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 3), (3,)),
                                            ((2, 4), (2,)), ((2, 4), (2, 3))])
def test_lstsq(ashape, bshape, complex_, draws):
    draw = draws.crandn if complex_ else draws.randn
    a, b = draw(*ashape), draw(*bshape)
    check_both(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], a, b)
    check_both(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[3], a, b)
    if ashape[0] > ashape[1]:
        check_both(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1], a, b)
        check_both(lambda a, b: (lambda x, res, rank, s: np.sum(x) * res + s[0])(
            *np.linalg.lstsq(a, b, rcond=None)), a, b)


def test_lstsq_with_a_constant_right_hand_side_and_its_rank_output(draws):
    a = draws.randn(4, 2)
    check_both(lambda a: np.linalg.lstsq(a, np.arange(4.0), rcond=None)[0], a)
    x = nt.constant(a)
    with nt.GradientTape() as t:
        t.watch(x)
        sol, res, rank, s = np.linalg.lstsq(x, np.ones(4), rcond=None)
    assert int(rank) == 2
    assert t.gradient(sol, x).shape == (4, 2)


@pytest.mark.parametrize("f, make", [
    (np.linalg.inv, lambda d: well_conditioned(d, 3, 3)),
    (np.linalg.det, lambda d: well_conditioned(d, 2, 2)),
    (lambda a: np.linalg.slogdet(a).logabsdet, lambda d: well_conditioned(d, 3, 3)),
    (lambda a: np.linalg.solve(a, np.arange(3.0)), lambda d: well_conditioned(d, 3, 3)),
    (lambda a: np.linalg.matrix_power(a, -2), lambda d: well_conditioned(d, 2, 2)),
    (lambda a: np.linalg.pinv(a), lambda d: d.randn(3, 2)),
])
def test_reverse_over_forward_through_linalg(f, make, draws):
    check_reverse_over_forward(f, make(draws))


@pytest.mark.parametrize("f", [
    lambda a, b: np.linalg.solve(a, b=b),
    lambda a, b: np.linalg.solve(b=b, a=a),
    lambda a, b: np.linalg.lstsq(a, b=b, rcond=None)[0],
    lambda a, b: np.linalg.lstsq(b=b, a=a, rcond=None)[0],
    lambda a, b: np.linalg.slogdet(a=a).logabsdet * b,
])
def test_operands_by_keyword(f, draws):
    a, b = well_conditioned(draws, 3, 3), draws.randn(3)
    check_both(f, a, b)
    check_both(lambda a: f(a, b), a)           # a plain-array keyword operand


def test_tensorinv_and_tensorsolve(draws):
    a = well_conditioned(draws, 6, 6)
    check_both(lambda a: np.linalg.tensorinv(np.reshape(a, (2, 3, 6))), a)
    check_both(lambda a: np.linalg.tensorinv(np.reshape(a, (6, 2, 3)), ind=1), a)
    b = draws.randn(2, 3)
    check_both(lambda a, b: np.linalg.tensorsolve(np.reshape(a, (2, 3, 2, 3)), b), a, b)
    check_both(lambda a, b: np.linalg.tensorsolve(np.reshape(a, (2, 3, 3, 2)), b, axes=(3,)),
               a, b)
    x, y = nt.constant(np.reshape(a, (2, 3, 6))), np.reshape(a, (2, 3, 6))
    np.testing.assert_allclose(np.linalg.tensorinv(x).numpy(), np.linalg.tensorinv(y))
    with pytest.raises(ValueError, match="ind"):
        np.linalg.tensorinv(x, ind=0)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.tensorsolve(x, nt.constant(draws.randn(4)))
