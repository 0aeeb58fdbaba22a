"""nbtape/rules/matrix_util.py: the helpers the matrix rules share, on stacks of
matrices: traces and diagonals, the Hermitian part, safe reciprocals and eigenvalue
gaps, the Hermitian matrix numpy reads from one triangle and its adjoint, defmatrix
and operands."""
import numpy as np
import pytest

import nbtape  # noqa: F401 (loads the rule table)
from nbtape.rules import matrix_util as mu
from nbtape.core.registry import POSITIONAL, RULES


def stack(rng, *shape, complex_=False):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


def test_shapes_columns_and_identities(rng):
    a = stack(rng, 2, 3, 4)
    assert mu.ndim(a) == 3 and mu.ndim(5.0) == 0 and mu.ndim([[1, 2]]) == 2
    assert mu.col(rng.standard_normal((2, 3))).shape == (2, 3, 1)
    np.testing.assert_array_equal(mu.eye_like(a), np.eye(4))


def test_trace_and_diagonal_of_each_matrix(rng):
    a = stack(rng, 3, 4, 4)
    np.testing.assert_allclose(mu.tr(a), [np.trace(m) for m in a])
    np.testing.assert_array_equal(mu.diag(a), [np.diag(m) for m in a])


def test_is_complex(rng):
    assert mu.is_complex(stack(rng, 2, complex_=True)) and not mu.is_complex(stack(rng, 2))
    assert mu.is_complex(1j) and not mu.is_complex(np.arange(3))


@pytest.mark.parametrize("complex_", [False, True])
def test_sym_is_the_hermitian_part(complex_, rng):
    a = stack(rng, 2, 3, 3, complex_=complex_)
    s = mu.sym(a)
    np.testing.assert_allclose(s, np.conj(np.swapaxes(s, -1, -2)))
    np.testing.assert_allclose(s + (a - s), a)
    np.testing.assert_allclose(mu.sym(s), s)                      # a projection


def test_safe_inv_and_gaps():
    np.testing.assert_array_equal(mu.safe_inv(np.array([2.0, 0.0, -0.5])), [0.5, 0.0, -2.0])
    f = mu.gaps(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_array_equal(f, [[0.0, 0.5, 0.5], [-0.5, 0.0, 0.0], [-0.5, 0.0, 0.0]])
    w = np.array([[0.0, 1.0], [2.0, 6.0]])                         # a stack of spectra
    np.testing.assert_array_equal(mu.gaps(w), [[[0, 1], [-1, 0]], [[0, 0.25], [-0.25, 0]]])


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("complex_", [False, True])
def test_hermitian_is_what_numpy_s_eigh_reads(lower, complex_, rng):
    a = stack(rng, 2, 4, 4, complex_=complex_)
    h = mu.hermitian(a, lower)
    np.testing.assert_allclose(h, np.conj(np.swapaxes(h, -1, -2)))
    uplo = "L" if lower else "U"
    np.testing.assert_allclose(np.linalg.eigvalsh(a, UPLO=uplo), np.linalg.eigvalsh(h),
                               atol=1e-12)
    tri = np.tril if lower else np.triu
    np.testing.assert_array_equal(tri(h, -1 if lower else 1), tri(a, -1 if lower else 1))
    np.testing.assert_array_equal(mu.diag(h), np.real(mu.diag(a)))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("complex_", [False, True])
def test_triangle_adjoint_is_the_adjoint_of_hermitian(lower, complex_, rng):
    """Re <hermitian(A), G> == Re <A, triangle_adjoint(G)> for every A and G."""
    a, g = stack(rng, 3, 4, 4, complex_=complex_), stack(rng, 3, 4, 4, complex_=complex_)
    left = np.real(np.sum(np.conj(mu.hermitian(a, lower)) * g))
    right = np.real(np.sum(np.conj(a) * mu.triangle_adjoint(g, lower)))
    np.testing.assert_allclose(left, right, rtol=1e-12)
    adj = mu.triangle_adjoint(g, lower)                  # nothing lands on the other triangle
    other = np.triu(adj, 1) if lower else np.tril(adj, -1)
    assert not np.any(other)
    assert not np.any(np.imag(mu.diag(adj)))


def test_defmatrix_registers_positional_operands():
    def solve_like(a, b, rcond=None):
        return a
    vjp_all = lambda g, ans, args, kw, needs: [g, g]  # noqa: E731
    try:
        r = mu.defmatrix(solve_like, vjp_all, None, nargs=2, multi=False)
        assert RULES[solve_like] is r
        assert (r.kind, r.nargs, r.multi, r.vjp_all) == (POSITIONAL, 2, False, vjp_all)
        assert r.differentiated() == ["a", "b"]
    finally:
        RULES.pop(solve_like, None)
    assert RULES[np.linalg.lstsq].nargs == 2 and RULES[np.linalg.qr].multi


def test_operands_by_position_or_keyword():
    assert mu.operands([1, 2], {}, ("a", "b")) == [1, 2]
    assert mu.operands([1], {"b": 2}, ("a", "b")) == [1, 2]
    assert mu.operands([], {"a": 1}, ("a", "b")) == [1, None]
    vals, ts = mu.operands([1], {"b": 2}, ("a", "b"), ts=["ta"])
    assert vals == [1, 2] and ts == ["ta", None]
    assert mu.operands([1, 2], {}, ("a", "b"), ts=("ta", "tb"))[1] == ["ta", "tb"]
