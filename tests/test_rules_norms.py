"""nbtape/rules/norms.py: norm, vector_norm and matrix_norm against finite differences."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, check_reverse_over_forward, needs_numpy, numpy_param


# --- norms ---------------------------------------------------------------------------------
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
def test_norms(f, shape, draws):
    check_both(f, draws.randn(*shape))


@pytest.mark.parametrize("f", [lambda x: np.linalg.norm(x), lambda x: np.linalg.norm(x, 1),
                               lambda x: np.linalg.norm(x, np.inf),
                               numpy_param("linalg.matrix_norm"),
                               lambda x: np.linalg.norm(x, 2)])
def test_complex_norms(f, draws):
    check_both(f, draws.crandn(3, 2))


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


def test_second_derivative_through_norm(draws):
    check_hvp(lambda x: np.linalg.norm(x, axis=-1), draws.randn(2, 3))
    check_hvp(lambda x: np.linalg.norm(x, 3), draws.randn(4))


def test_reverse_over_forward_through_norm(draws):
    check_reverse_over_forward(lambda a: np.linalg.norm(a, axis=0), draws.randn(2, 3))


# --- the condition number ------------------------------------------------------------------
CONDS = [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf]


def _well_conditioned(draws, *shape, complex_=False):
    a = (draws.crandn if complex_ else draws.randn)(*shape)
    return a + 3 * np.eye(shape[-1])


@pytest.mark.parametrize("p", CONDS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 3, 3)])
def test_cond(p, shape, draws):
    check_both(lambda x: np.linalg.cond(x, p), _well_conditioned(draws, *shape))


@pytest.mark.parametrize("p", [None, 2, -2])
@pytest.mark.parametrize("shape", [(3, 5), (2, 5, 3)])
def test_cond_of_non_square_matrices_by_singular_values(p, shape, draws):
    check_both(lambda x: np.linalg.cond(x, p=p), draws.randn(*shape))


@pytest.mark.parametrize("p", CONDS)
def test_complex_cond(p, draws):
    check_both(lambda x: np.linalg.cond(x, p), _well_conditioned(draws, 2, 3, 3, complex_=True))


@pytest.mark.parametrize("p", [None, "fro", 1])
def test_second_derivative_through_cond(p, draws):
    check_hvp(lambda x: np.linalg.cond(x, p), _well_conditioned(draws, 3, 3))


@pytest.mark.parametrize("p", [None, 2, "fro", 1, np.inf])
def test_cond_of_a_singular_matrix_refuses_in_both_modes(p):
    # cond is infinite there (s_min / s_max, p=-2, is 0 and keeps its one-sided gradient)
    x = nt.constant([[1.0, 0.0], [0.0, 0.0]])
    with nt.GradientTape() as tape, nt.ForwardAccumulator(x, np.ones((2, 2))) as acc:
        tape.watch(x)
        with np.errstate(all="ignore"):
            y = np.linalg.cond(x, p)
    assert float(y) == np.inf
    with pytest.raises(nt.NoGradientRuleError, match="singular"):
        tape.gradient(y, x)
    with pytest.raises(nt.NoGradientRuleError, match="singular"):
        acc.jvp(y)
