"""Reduction rules (reductions, nanreductions, cumulative, order_stats, ufunc_methods)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import array_shapes

import nbtape as nt
from gradcheck import NUMPY, check_both, check_second, gradients_of_sum, needs_numpy, numpy_param
from nbtape.diagnostics.errors import NoGradientRuleError

SHAPE = (2, 3, 4)


def distinct(rng, shape):
    """Values with no ties (ties make max/median non-differentiable)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) / n * 2 - 1 + 0.01 * rng.standard_normal(n)).reshape(shape)


def with_nans(rng, shape):
    """Three NaNs on a diagonal, so no line along any axis is all NaN."""
    x = distinct(rng, shape)
    for k in range(3):
        x[tuple(k % s for s in shape)] = np.nan
    return x


AXES = [None, 0, -1, (0, 2)]
REDUCTIONS = [np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var, np.ptp,
              np.median, np.average]
NAN_REDUCTIONS = [np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.nanstd,
                  np.nanvar, np.nanmedian]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("f", REDUCTIONS, ids=lambda f: f.__name__)
def test_reductions_with_axis_and_keepdims(f, axis, keepdims, rng):
    check_both(lambda x: f(x, axis=axis, keepdims=keepdims), distinct(rng, SHAPE))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("f", NAN_REDUCTIONS, ids=lambda f: f.__name__)
def test_nan_reductions_skip_nans(f, axis, keepdims, rng):
    check_both(lambda x: f(x, axis=axis, keepdims=keepdims), with_nans(rng, SHAPE))


def test_nan_elements_get_zero_gradient():
    for f in NAN_REDUCTIONS:
        g, = gradients_of_sum(f, [1.0, np.nan, 3.0])
        assert g[1] == 0.0 and np.all(np.isfinite(g)), f.__name__


@settings(max_examples=10, deadline=None)
@given(array_shapes(min_dims=1, max_dims=3, max_side=4), st.data())
def test_reductions_on_any_shape(shape, data):
    rng = np.random.default_rng(0)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    keepdims = data.draw(st.booleans())
    x = distinct(rng, shape)
    for f in (np.mean, np.prod, np.max, np.var, np.median):
        check_both(lambda a: f(a, axis=axis, keepdims=keepdims), x)
    for f in (np.cumsum, np.cumprod):
        check_both(lambda a: f(a, axis=axis), x)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("f", [np.std, np.var, np.nanstd, np.nanvar], ids=lambda f: f.__name__)
def test_ddof_and_correction(f, ddof, rng):
    check_both(lambda x: f(x, axis=1, ddof=ddof), distinct(rng, SHAPE))
    if NUMPY >= "2.0.0":                # correction= is new in numpy 2.0
        check_both(lambda x: f(x, axis=0, correction=ddof), distinct(rng, (5, 2)))


def test_var_and_std_of_complex_values(rng):
    z = distinct(rng, (3, 4)) + 1j * distinct(rng, (3, 4))
    check_both(lambda x: np.var(x, axis=1), z)
    check_both(np.std, z)


@pytest.mark.skipif(NUMPY < "2.0.0", reason="mean= is new in numpy 2.0")
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("f", [np.var, np.std, np.nanvar, np.nanstd], ids=lambda f: f.__name__)
def test_real_values_with_a_complex_mean(f, rng):
    # numpy then sums (x - mean)**2, not |x - mean|**2: holomorphic in mean (nanvar
    # instead drops Im(mean)), so the adjoint is conjugated
    x = distinct(rng, (3, 4))
    m = np.array([[1.338 - 0.602j], [0.4 + 0.9j], [-0.7 - 0.3j]])
    check_both(lambda x, m: f(x, axis=1, mean=m), x, m)
    check_both(lambda x, m: f(x, mean=m), np.array(-0.498), np.array(1.338 - 0.602j))


# --- prod with zeros
def test_prod_with_one_zero_is_exact():
    g, = gradients_of_sum(np.prod, [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, 6.0, 0.0])


def test_prod_with_two_zeros_is_zero():
    g, = gradients_of_sum(np.prod, [0.0, 5.0, 0.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_prod_and_cumprod_with_zeros_match_finite_differences(axis, rng):
    x = distinct(rng, (4, 5))
    x[0, 1] = x[2, 2] = x[2, 4] = x[3, 0] = 0.0
    check_both(lambda a: np.prod(a, axis=axis), x)
    if not isinstance(axis, tuple):
        check_both(lambda a: np.cumprod(a, axis=axis), x)
        check_both(lambda a: np.nancumprod(a, axis=axis), x)


def test_prod_initial_and_where(rng):
    x = distinct(rng, (3, 4))
    check_both(lambda a: np.prod(a, axis=1, initial=2.5), x)
    check_both(lambda a: np.prod(a, axis=1, where=a > 0), x)
    check_both(lambda a: np.nanprod(a, axis=0, initial=-1.5), with_nans(rng, (3, 4)))


# --- max and min: ties share
def test_max_ties_share_the_gradient_evenly():
    g, = gradients_of_sum(np.max, [1.0, 3.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5])
    g, = gradients_of_sum(lambda x: np.min(x, axis=1, keepdims=True), [[1.0, 1.0, 1.0, 2.0], [0.0, 4, 5, 6]])
    np.testing.assert_allclose(g, [[1 / 3, 1 / 3, 1 / 3, 0], [1, 0, 0, 0]])
    g, = gradients_of_sum(lambda x: np.maximum.reduce(x), [[2.0, 1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(g, [[0.5, 1.0], [0.5, 0.0]])
    g, = gradients_of_sum(np.ptp, [1.0, 1.0, 4.0])
    np.testing.assert_array_equal(g, [-0.5, -0.5, 1.0])


def test_max_with_where_and_initial(rng):
    x = distinct(rng, (3, 4))
    check_both(lambda a: np.max(a, axis=1, where=a < 0.5, initial=-10.0), x)
    g, = gradients_of_sum(lambda a: np.max(a, initial=10.0), [1.0, 2.0])      # initial wins
    np.testing.assert_array_equal(g, [0.0, 0.0])


# --- mean, average
def test_mean_with_where(rng):
    check_both(lambda a: np.mean(a, axis=1, where=a > -0.2), distinct(rng, (3, 4)))


@pytest.mark.parametrize("axis, wshape, keepdims", [
    (None, (3, 4), False), (1, (4,), False), (0, (3,), True), (1, (3, 4), True)])
def test_weighted_average(axis, wshape, keepdims, rng):
    w = rng.uniform(0.5, 2.0, wshape)
    check_both(lambda a, ww: np.average(a, axis, ww, keepdims=keepdims), distinct(rng, (3, 4)), w)


# --- running sums and products
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("f", [np.cumsum, np.cumprod, np.nancumsum, np.nancumprod],
                         ids=lambda f: f.__name__)
def test_cumulative(f, axis, rng):
    x = with_nans(rng, (3, 4)) if f.__name__.startswith("nan") else distinct(rng, (3, 4))
    check_both(lambda a: f(a, axis=axis), x)


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("axis", [0, 1], ids=str)
@pytest.mark.parametrize("f", [numpy_param("cumulative_sum", id="cumulative_sum"),
                               numpy_param("cumulative_prod", id="cumulative_prod")])
def test_array_api_cumulative(f, axis, include_initial, rng):
    x = distinct(rng, (3, 4))
    x[1, 1] = 0.0
    check_both(lambda a: f(a, axis=axis, include_initial=include_initial), x)


# --- order statistics
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint",
                                    "weibull", "median_unbiased", "inverted_cdf"])
@pytest.mark.parametrize("q", [0.37, [0.1, 0.5, 0.92]], ids=str)
def test_quantile_methods(method, q, rng):
    x = distinct(rng, (3, 5))
    for axis in (None, 0, 1):
        check_both(lambda a: np.quantile(a, q, axis=axis, method=method), x)
    check_both(lambda a: np.percentile(a, np.multiply(q, 100), axis=1, method=method,
                                       keepdims=True), x)


def test_median_of_even_length_averages_the_middle_two():
    g, = gradients_of_sum(np.median, [4.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 0.5])


@pytest.mark.parametrize("f, q", [(np.quantile, [0.23, 0.61]), (np.percentile, [23.0, 61.0]),
                                  (np.nanquantile, [0.3, 0.8]), (np.nanpercentile, 42.0)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_gradient_with_respect_to_q(f, q, rng):
    x = with_nans(rng, (3, 5)) if f.__name__.startswith("nan") else distinct(rng, (3, 5))
    check_both(lambda a, qq: f(a, qq, axis=1), x, np.array(q))
    check_both(lambda a, qq: f(a, qq), x, np.array(q))


def test_q_gradient_for_a_stepwise_method_is_refused(rng):
    x, q = nt.constant(distinct(rng, (5,))), nt.constant(0.3)
    with nt.GradientTape() as tape:
        tape.watch(q)
        y = np.quantile(x, q, method="lower")
    with pytest.raises(NoGradientRuleError, match="method='linear'"):
        tape.gradient(y, q)


@pytest.mark.parametrize("f", [np.var, np.std, np.nanvar, np.nanstd, np.nanmean])
def test_where_masks_var_std_and_nanmean(f, rng):
    x = distinct(rng, (3, 4))
    mask = np.array([[True, False, True, True], [True, True, False, True],
                     [False, True, True, False]])     # two or more in each row
    check_both(lambda a: f(a, axis=1, where=mask), x)
    check_both(lambda a: f(a, where=mask, keepdims=True), x)


# --- ufunc methods
@pytest.mark.parametrize("f", [
    lambda a: np.add.reduce(a), lambda a: np.add.reduce(a, axis=1, keepdims=True),
    lambda a: np.add.reduce(a, axis=None),
    lambda a: np.multiply.reduce(a, axis=(0, 1)), lambda a: np.multiply.reduce(a, initial=2.0),
    lambda a: np.maximum.reduce(a, axis=1), lambda a: np.minimum.reduce(a, keepdims=True),
    lambda a: np.fmax.reduce(a, axis=1), lambda a: np.fmin.reduce(a),
    lambda a: np.add.accumulate(a), lambda a: np.add.accumulate(a, axis=1),
    lambda a: np.multiply.accumulate(a, axis=1),
])
def test_ufunc_reduce_and_accumulate(f, rng):
    check_both(f, distinct(rng, (3, 4)))


@pytest.mark.parametrize("f", [lambda a: np.add.reduce(a, 1, where=a > 0),
                               lambda a: np.multiply.reduce(a, where=a > 0),
                               lambda a: np.maximum.reduce(a, 1, where=a < 0.5, initial=-9.0)])
def test_ufunc_reduce_with_where(f, rng):
    check_both(f, distinct(rng, (3, 4)))


@pytest.mark.parametrize("u", [np.add, np.multiply])
def test_accumulate_with_axis_none(u, rng):
    """numpy takes ``axis=None`` for a 1-d array (the random-program test found a
    TypeError in the backward pass)."""
    check_both(lambda a: u.accumulate(a, None), distinct(rng, (4,)))


@pytest.mark.parametrize("u", [np.add, np.subtract, np.multiply, np.divide],
                         ids=lambda u: u.__name__)
def test_ufunc_outer(u, rng):
    check_both(u.outer, distinct(rng, (2, 3)), distinct(rng, (4,)) + 3.0)
    check_both(u.outer, distinct(rng, (3,)), np.array(2.5))


def test_ufunc_methods_are_recorded_under_their_own_names(rng):
    x = nt.constant(distinct(rng, (2, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        np.multiply.accumulate(x, axis=1)
    assert [op.name for op in tape.ops] == ["np.multiply.accumulate"]


# --- dtypes and higher order
@pytest.mark.parametrize("f", [np.mean, np.prod, np.max, np.std, np.cumsum, np.cumprod,
                               np.median, np.nansum, lambda x: np.quantile(x, 0.3),
                               lambda x: np.add.reduce(x)])
def test_float32_in_float32_out(f, rng):
    x = nt.constant(distinct(rng, (3, 4)).astype(np.float32))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(f(x))
    assert tape.gradient(y, x).dtype == np.float32
    with nt.ForwardAccumulator(x, np.ones((3, 4), np.float32)) as acc:
        y = f(x)
    # numpy 1 computes a float32 quantile in float64; the tangent has its value's dtype
    assert acc.jvp(y).dtype == (np.float32 if NUMPY >= "2.0.0" else y.dtype)


def _zeros_in(x, *where):
    x = x.copy()
    for i in where:
        x[i] = 0.0
    return x


@pytest.mark.parametrize("f, make", [
    (lambda a: np.prod(a, axis=1), lambda r: distinct(r, (3, 4))),
    (lambda a: np.prod(a, axis=1),
     lambda r: _zeros_in(distinct(r, (3, 4)), (0, 1), (2, 2), (2, 3))),
    (np.prod, lambda r: _zeros_in(distinct(r, (3, 4)), (1, 1))),
    (lambda a: np.cumprod(a, axis=1),
     lambda r: _zeros_in(distinct(r, (3, 4)), (0, 1), (2, 2), (2, 3))),
    pytest.param(lambda a: np.cumulative_prod(a, axis=0, include_initial=True),
                 lambda r: _zeros_in(distinct(r, (3, 4)), (1, 2)),
                 marks=needs_numpy("cumulative_prod")),
    (lambda a: np.std(a, axis=0), lambda r: distinct(r, (3, 4))),
    (lambda a: np.nanvar(a, axis=1), lambda r: with_nans(r, (3, 4))),
    (lambda a: np.cumsum(a ** 2), lambda r: distinct(r, (3, 4))),
    (lambda a: np.median(a ** 3, axis=1), lambda r: distinct(r, (3, 4))),
    (lambda a: np.average(a ** 2, 1, np.arange(1.0, 5.0)), lambda r: distinct(r, (3, 4))),
    (lambda a: np.ptp(a, axis=1) ** 2, lambda r: distinct(r, (3, 4))),
    (lambda a: np.multiply.reduce(a, axis=0), lambda r: _zeros_in(distinct(r, (3, 4)), (1, 1))),
])
def test_second_derivative_by_nested_tapes(f, make, rng):
    check_second(f, make(rng))


def test_std_of_equal_values_has_zero_gradient_not_nan():
    g, = gradients_of_sum(lambda x: np.std(x, axis=1), [[2.0, 2.0], [1.0, 3.0]])
    np.testing.assert_array_equal(g, [[0.0, 0.0], [-0.5, 0.5]])


# --- differences and integrals (rules/differences.py)
@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, -1], ids=str)
def test_diff(n, axis, rng):
    x = distinct(rng, (3, 4))
    check_both(lambda a: np.diff(a, n=n, axis=axis), x)
    check_both(lambda a: np.diff(a, n=n, axis=axis, prepend=2.0, append=np.ones((3, 4))), x)


def test_ediff1d(rng):
    check_both(np.ediff1d, distinct(rng, (3, 4)))
    check_both(lambda a, end, begin: np.ediff1d(a, end, begin), distinct(rng, (3, 4)),
               distinct(rng, (4,)), np.array([1.0, 2.0]))
    check_both(lambda a: np.ediff1d(a, to_begin=[1.0]), distinct(rng, (5,)))


@pytest.mark.parametrize("axis", [0, 1, -1], ids=str)
def test_trapezoid(axis, rng):
    trapezoid = getattr(np, "trapezoid", None) or np.trapz    # numpy 1 calls it trapz
    y = distinct(rng, (3, 4))
    check_both(lambda a: trapezoid(a, axis=axis), y)
    check_both(lambda a, dx: trapezoid(a, None, dx, axis=axis), y, np.array(0.3))
    check_both(lambda a, x: trapezoid(a, x, axis=axis), y, np.cumsum(np.abs(y), axis=axis))
    n = y.shape[axis]
    check_both(lambda a, x: trapezoid(a, x, axis=axis), y, np.cumsum(rng.uniform(0.1, 1, n)))


# --- covariance and correlation (rules/statistics.py)
@pytest.mark.parametrize("f", [
    np.cov, lambda a: np.cov(a, rowvar=False), lambda a: np.cov(a, bias=True),
    lambda a: np.cov(a, ddof=2), np.corrcoef, lambda a: np.corrcoef(a, rowvar=False),
    lambda a: np.cov(a[0]), lambda a: np.corrcoef(a[0], a[1]),
])
def test_cov_and_corrcoef(f, rng):
    check_both(f, distinct(rng, (3, 5)))


def test_cov_and_corrcoef_of_two_operands(rng):
    x, y, y2 = distinct(rng, (3, 5)), distinct(rng, (5,)), distinct(rng, (2, 5))
    check_both(np.cov, x, y)
    check_both(np.cov, y, y2)
    check_both(lambda a, b: np.cov(a, b, rowvar=False), np.ascontiguousarray(x.T),
               np.ascontiguousarray(y2.T))
    check_both(np.corrcoef, x, y)
    check_second(np.corrcoef, x)
    check_second(np.cov, x)
def test_sum_with_where_sends_no_gradient_to_masked_out_elements(rng):
    mask = np.array([[True, False, True, True], [False, True, True, False], [True] * 4])
    check_both(lambda x: np.sum(x, axis=1, where=mask), distinct(rng, (3, 4)))
    g, = gradients_of_sum(lambda x: np.sum(x, where=mask), np.ones((3, 4)))
    np.testing.assert_array_equal(g, mask)


def test_trapezoid_of_complex_values():
    """Complex samples, sample points and spacing: the VJPs take conjugates (found by
    the random-program test)."""
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    rng = np.random.default_rng(3)
    y = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    x = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    check_both(lambda a, b: trapezoid(a, b, axis=1), y, x)
    check_both(lambda a, dx: trapezoid(a, None, dx, axis=0), y, np.array(0.3 - 0.2j))


@pytest.mark.parametrize("ny, nx", [(3, 2), (2, 3), (2, 4)])
def test_trapezoid_where_numpy_broadcasts_spacings_and_samples(ny, nx, rng):
    """numpy broadcasts the spacings of ``x`` against the pairs of ``y`` when one of them
    has length 1 (x of 2 points, y of 2 samples); the random-program test found the
    backward pass raising there."""
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    y = distinct(rng, (ny, 2))
    x = np.cumsum(np.abs(distinct(rng, (nx,)))) + 0.1
    check_both(lambda a, b: trapezoid(a, b, axis=0), y, x)
    check_both(lambda a, b: trapezoid(a, b, axis=0), y, np.stack([x, 2 * x], axis=1))
