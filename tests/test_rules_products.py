"""nbtape/rules/products.py: dot, inner, outer, tensordot, kron, matmul and einsum against
finite differences."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtape as nt
from gradcheck import Draws, NUMPY, check_both, check_hvp, needs_numpy, numpy_param


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
def test_products(f, shapes, draws):
    check_both(f, *[draws.randn(*s) for s in shapes])


@pytest.mark.parametrize("f, shapes", [
    (np.dot, [(2, 3), (3,)]), (np.dot, [(2, 3, 2), (2,)]), (np.vdot, [(3,), (3,)]),
    (np.inner, [(2, 3), (3,)]), (np.kron, [(2,), (2, 2)]),
    numpy_param("linalg.vecdot", [(2, 3), (3,)]),
    (np.tensordot, [(2, 3), (2, 3)]),
])
def test_complex_products(f, shapes, draws):
    check_both(f, *[draws.crandn(*s) for s in shapes])


def test_products_with_a_list_operand(draws):
    check_both(lambda a: np.dot(a, [1.0, 2.0]), draws.randn(3, 2))
    check_both(lambda a: np.tensordot([[1.0, 2.0]], a, 1), draws.randn(2, 3))
    if NUMPY >= "2.0.0":                # np.linalg.matmul is new in numpy 2.0
        check_both(lambda a: np.linalg.matmul(a, [[1.0], [2.0]]), draws.randn(3, 2))


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
def test_einsum(spec, shapes, draws):
    check_both(lambda *ops: np.einsum(spec, *ops), *[draws.randn(*s) for s in shapes])


def test_einsum_interleaved_form_and_options(draws):
    check_both(lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [2, 0]),
               draws.randn(2, 3), draws.randn(3, 2))
    check_both(lambda a, b: np.einsum(a, [0, Ellipsis], b, [Ellipsis]),
               draws.randn(2, 3), draws.randn(3))
    check_both(lambda a, b, c: np.einsum("ij,jk,k->i", a, b, c, optimize=True),
               draws.randn(2, 3), draws.randn(3, 4), draws.randn(4))
    a, b, c = draws.randn(2, 3), draws.randn(3, 4), draws.randn(4)
    path = np.einsum_path("ij,jk,k->i", a, b, c, optimize="optimal")[0]
    check_both(lambda a, b, c: np.einsum("ij,jk,k->i", a, b, c, optimize=path), a, b, c)


def test_einsum_complex_and_a_constant_operand(draws):
    check_both(lambda a, b: np.einsum("ij,jk->ik", a, b), draws.crandn(2, 3), draws.crandn(3, 2))
    c = draws.randn(3, 2)
    check_both(lambda a: np.einsum("ij,jk->ki", a, c), draws.randn(2, 3))


def test_second_derivative_through_einsum(draws):
    check_hvp(lambda a: np.einsum("ij,jk->ik", a, a), draws.randn(3, 3))
    check_hvp(lambda a: np.einsum("ii,ij->j", a, a), draws.randn(3, 3))
    check_hvp(lambda a: np.einsum("...i,...i", a, a), draws.randn(2, 3))


@settings(max_examples=15, deadline=None)
@given(i=st.integers(1, 3), j=st.integers(1, 3), k=st.integers(1, 3), batch=st.integers(1, 2))
def test_random_contractions(i, j, k, batch):
    draws = Draws(2)                # one per example: hypothesis calls the test many times
    a, b = draws.randn(batch, i, j), draws.randn(j, k)
    check_both(lambda a, b: np.einsum("bij,jk->bki", a, b), a, b)
    check_both(np.dot, a, b)
    check_both(lambda a, b: np.tensordot(a, b, axes=([2], [0])), a, b)


@needs_numpy("vecdot", "matvec", "vecmat")
@pytest.mark.parametrize("complex_", [False, True])
def test_vector_gufuncs(complex_, draws):
    draw = draws.crandn if complex_ else draws.randn
    check_both(np.vecdot, draw(2, 3), draw(3))
    check_both(np.matvec, draw(2, 3, 4), draw(4))
    check_both(np.matvec, draw(3, 4), draw(2, 4))
    check_both(np.vecmat, draw(3), draw(2, 3, 4))
    check_both(np.vecmat, draw(2, 3), draw(3, 4))


@needs_numpy("vecdot")
def test_vector_gufuncs_with_axis_keywords_are_refused_by_name(draws):
    x = nt.constant(draws.randn(3, 2))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.vecdot(x, x, axis=0)
    with pytest.raises(nt.NoGradientRuleError, match="np.vecdot with axis="):
        t.gradient(y, x)


def test_matmul_of_a_stack_and_a_vector(draws):
    check_both(np.matmul, draws.randn(2, 3, 4), draws.randn(4))
    check_both(np.matmul, draws.randn(3), draws.randn(2, 3, 4))
