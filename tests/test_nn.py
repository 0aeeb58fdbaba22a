import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_forward, check_reverse

EXTREME = np.array([-1000.0, -100.0, -30.0, -1.5, 0.3, 30.0, 100.0, 1000.0])
W = np.random.default_rng(0).standard_normal((3, 5))  # so that sum(softmax) is not a constant


def _grad(f, x):
    x = nt.constant(x)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return y.numpy(), tape.gradient(y, x).numpy()


# --- values ---------------------------------------------------------------------------------
def test_values_match_the_naive_formulas_at_moderate_inputs(rng):
    x = rng.standard_normal((3, 5)) * 3
    np.testing.assert_allclose(nt.nn.sigmoid(x), 1 / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(nt.nn.softplus(x), np.log(1 + np.exp(x)), rtol=1e-12)
    np.testing.assert_array_equal(nt.nn.relu(x), np.where(x > 0, x, 0))
    e = np.exp(x)
    np.testing.assert_allclose(nt.nn.softmax(x), e / e.sum(-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(nt.nn.softmax(x, axis=0), e / e.sum(0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(nt.nn.log_softmax(x), np.log(e / e.sum(-1, keepdims=True)),
                               rtol=1e-12)
    np.testing.assert_allclose(nt.nn.logsumexp(x), np.log(e.sum()), rtol=1e-12)
    np.testing.assert_allclose(nt.nn.logsumexp(x, axis=1), np.log(e.sum(1)), rtol=1e-12)
    np.testing.assert_allclose(nt.nn.logsumexp(x, axis=(0, 1), keepdims=True),
                               np.log(e.sum(keepdims=True)), rtol=1e-12)


def test_values_are_finite_and_exact_at_extreme_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no overflow warnings either
        s = nt.nn.sigmoid(EXTREME)
        sp = nt.nn.softplus(EXTREME)
        sm = nt.nn.softmax(np.array([1000.0, 0.0, -1000.0]))
        lsm = nt.nn.log_softmax(np.array([1000.0, 0.0, -1000.0]))
        lse = nt.nn.logsumexp(np.array([1000.0, 1000.0]))
    assert s[0] == 0.0 and s[-1] == 1.0 and s[3] == pytest.approx(1 / (1 + np.exp(1.5)))
    assert sp[-1] == 1000.0 and sp[-2] == 100.0 and sp[0] == 0.0
    np.testing.assert_array_equal(sm, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(lsm, [0.0, -1000.0, -2000.0])
    assert lse == pytest.approx(1000 + np.log(2))


def test_logsumexp_of_minus_infinity_is_minus_infinity_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = nt.nn.logsumexp(np.array([[-np.inf, -np.inf], [0.0, -np.inf]]), axis=1)
    np.testing.assert_array_equal(out, [-np.inf, 0.0])


def test_float32_stays_float32():
    x = nt.constant(np.array([[-100.0, 0.5, 100.0]], dtype="float32"))
    for f in (nt.nn.sigmoid, nt.nn.relu, nt.nn.softplus, nt.nn.softmax, nt.nn.log_softmax,
              nt.nn.logsumexp):
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert y.dtype == np.float32, f.__name__
        assert tape.gradient(y, x).dtype == np.float32, f.__name__


def test_plain_arrays_in_give_plain_arrays_out():
    assert type(nt.nn.sigmoid(np.zeros(2))) is np.ndarray
    assert isinstance(nt.nn.softmax(nt.constant(np.zeros(2))), nt.Tensor)


# --- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, f", [
    ("sigmoid", nt.nn.sigmoid),
    ("softplus", nt.nn.softplus),
    ("relu", nt.nn.relu),
    ("softmax", lambda x: nt.nn.softmax(x) * W),
    ("softmax axis 0", lambda x: nt.nn.softmax(x, axis=0) * W),
    ("log_softmax", lambda x: nt.nn.log_softmax(x) * W),
    ("logsumexp", nt.nn.logsumexp),
    ("logsumexp axis 1", lambda x: nt.nn.logsumexp(x, axis=1) * W[:, 0]),
    ("logsumexp keepdims", lambda x: nt.nn.logsumexp(x, axis=0, keepdims=True) * W),
])
def test_check_gradients_at_moderate_inputs(name, f, rng):
    x = rng.standard_normal((3, 5)) * 2 + 0.05     # keep relu away from its kink
    assert nt.check_gradients(f, x) < 1e-6


@pytest.mark.parametrize("f", [nt.nn.sigmoid, nt.nn.softplus, nt.nn.relu])
def test_check_gradients_at_extreme_inputs_elementwise(f):
    assert nt.check_gradients(f, EXTREME) < 1e-6


@pytest.mark.parametrize("f", [
    lambda x: nt.nn.softmax(x) * W[:2, :4],
    lambda x: nt.nn.log_softmax(x) * W[:2, :4],
    lambda x: nt.nn.logsumexp(x, axis=-1) * W[:2, 0],
])
def test_check_gradients_at_extreme_inputs_across_classes(f):
    x = np.array([[1000.0, -1000.0, 999.0, 0.0], [-1000.0, -1000.0, -999.5, -1000.0]])
    assert nt.check_gradients(f, x, atol=1e-5) < 1e-5


def test_extreme_gradients_are_the_exact_limits():
    _, g = _grad(nt.nn.softplus, EXTREME)
    np.testing.assert_array_equal(g[[0, -2, -1]], [0.0, 1.0, 1.0])
    _, g = _grad(nt.nn.sigmoid, EXTREME)
    assert np.all(np.isfinite(g)) and g[0] == 0.0 and g[-1] == 0.0
    _, g = _grad(nt.nn.logsumexp, np.array([1000.0, 1000.0, -1000.0]))
    np.testing.assert_array_equal(g, [0.5, 0.5, 0.0])


def test_seed_example_14_naive_softplus_gradient_is_nan_the_stable_one_is_one():
    x = nt.constant(np.float32(100.0))
    with np.errstate(over="ignore", invalid="ignore"):
        _, naive = _grad(lambda v: np.log(1 + np.exp(v)), x)
    assert np.isnan(naive)
    _, stable = _grad(nt.nn.softplus, x)
    assert stable == 1.0 and stable.dtype == np.float32


def test_sigmoid_derivative_peaks_at_a_quarter_at_zero():
    x = np.linspace(-6, 6, 121)
    _, g = _grad(nt.nn.sigmoid, x)
    assert g.max() == 0.25 and x[np.argmax(g)] == 0.0


def test_relu_gradient_at_zero_is_zero():
    _, g = _grad(nt.nn.relu, np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("f", [
    nt.nn.sigmoid, nt.nn.softplus, nt.nn.relu, nt.nn.softmax, nt.nn.log_softmax,
    nt.nn.logsumexp, lambda x: nt.nn.logsumexp(x, axis=0),
])
def test_random_weighted_reverse_and_forward_mode(f, rng):
    x = rng.standard_normal((3, 4)) + 0.05
    check_reverse(f, x)
    check_forward(f, x)


# --- second derivatives: the rules are themselves recorded ---------------------------------------
def _second(f, x0):
    x = nt.constant(x0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return outer.gradient(g, x).numpy()


def test_second_derivatives():
    x = np.array([-2.0, 0.0, 0.7, 100.0])
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(_second(nt.nn.softplus, x), s * (1 - s), atol=1e-15)
    np.testing.assert_allclose(_second(nt.nn.sigmoid, x), s * (1 - s) * (1 - 2 * s), atol=1e-15)


def test_hessian_of_logsumexp_is_diag_p_minus_p_pT():
    x0 = np.array([0.5, -1.0, 2.0])
    h = nt.hessian(nt.nn.logsumexp)(x0)
    p = np.exp(x0) / np.exp(x0).sum()
    np.testing.assert_allclose(np.asarray(h), np.diag(p) - np.outer(p, p), atol=1e-12)


# --- cross-entropies from logits -----------------------------------------------------------------
def test_sigmoid_cross_entropy_matches_the_naive_formula_and_its_gradients(rng):
    z = rng.standard_normal(6) * 3
    y = rng.uniform(size=6)
    p = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(nt.nn.sigmoid_cross_entropy_with_logits(y, z),
                               -(y * np.log(p) + (1 - y) * np.log(1 - p)), rtol=1e-10)
    f = nt.nn.sigmoid_cross_entropy_with_logits
    assert nt.check_gradients(f, y, z) < 1e-6
    assert nt.check_gradients(f, np.array([1.0, 0.0, 0.3, 1.0]),
                              np.array([-1000.0, -1000.0, 1000.0, 1000.0])) < 1e-6
    check_forward(f, y, z)


def test_sparse_softmax_cross_entropy_values_and_gradients(rng):
    z = rng.standard_normal((4, 3))
    labels = np.array([0, 2, 1, 2])
    lsm = z - np.log(np.exp(z).sum(-1, keepdims=True))
    expected = -lsm[np.arange(4), labels]
    f = nt.nn.sparse_softmax_cross_entropy_with_logits
    np.testing.assert_allclose(f(labels, z), expected, rtol=1e-12)
    _, g = _grad(lambda t: f(labels, t), z)
    np.testing.assert_allclose(g, np.exp(lsm) - np.eye(3)[labels], atol=1e-12)
    assert nt.check_gradients(lambda t: f(labels, t) * W[0, :4], z) < 1e-6
    extreme = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0]])
    assert nt.check_gradients(lambda t: f([1, 2], t), extreme, atol=1e-5) < 1e-5
    check_forward(lambda t: f(labels, t), z)


def test_softmax_cross_entropy_with_soft_labels(rng):
    z = rng.standard_normal((2, 4))
    y = rng.dirichlet(np.ones(4), size=2)
    f = nt.nn.softmax_cross_entropy_with_logits
    np.testing.assert_allclose(f(y, z), -(y * (z - np.log(np.exp(z).sum(-1, keepdims=True))))
                               .sum(-1), rtol=1e-12)
    assert nt.check_gradients(f, y, z) < 1e-6
    assert nt.check_gradients(lambda t: f(y.T, t, axis=0), np.ascontiguousarray(z.T)) < 1e-6
    check_forward(f, y, z)


def test_cross_entropy_second_derivative():
    labels = np.array([1])
    z0 = np.array([[0.2, -0.4, 1.0]])
    h = nt.hessian(lambda t: nt.nn.sparse_softmax_cross_entropy_with_logits(labels, t)[0])(z0)
    p = np.exp(z0[0]) / np.exp(z0[0]).sum()
    np.testing.assert_allclose(np.asarray(h).reshape(3, 3), np.diag(p) - np.outer(p, p),
                               atol=1e-12)


@pytest.mark.parametrize("labels, match", [([0, 3], r"\[0, 3\)"), ([-1, 0], "range from -1"),
                                           ([0.5, 1.0], "whole class numbers")])
def test_bad_sparse_labels_raise_a_clear_error(labels, match):
    with pytest.raises(ValueError, match=match):
        nt.nn.sparse_softmax_cross_entropy_with_logits(np.array(labels), np.zeros((2, 3)))
