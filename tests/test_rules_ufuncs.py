"""Elementwise rules (rules/ufuncs.py, elementwise.py, scimath.py) against finite differences."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import nbtape as nt
from gradcheck import check_both, check_second, gradients_of_sum, since_numpy



# --- input domains ---------------------------------------------------------------------------
def normal(rng, shape):
    return rng.standard_normal(shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def unit(rng, shape):          # inside (-1, 1), away from the ends
    return rng.uniform(-0.9, 0.9, shape)


def above1(rng, shape):
    return rng.uniform(1.2, 3.0, shape)


def nonzero(rng, shape):       # |x| in (0.5, 2): away from kinks at 0
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)


def wide(rng, shape):          # both sides of +-1 and of 0, for np.emath
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.5, shape)


def complex_(rng, shape):
    return rng.uniform(0.3, 1.2, shape) + 1j * rng.uniform(-0.8, 0.8, shape)


em = np.emath
UNARY = [
    (np.square, normal), (np.sqrt, positive), (np.cbrt, nonzero), (np.reciprocal, nonzero),
    (np.exp, normal), (np.exp2, normal), (np.expm1, normal), (np.log, positive),
    (np.log2, positive), (np.log10, positive), (np.log1p, positive),
    (np.sin, normal), (np.cos, normal), (np.tan, unit), (np.arcsin, unit), (np.arccos, unit),
    (np.arctan, normal), (np.sinh, normal), (np.cosh, normal), (np.tanh, normal),
    (np.arcsinh, normal), (np.arccosh, above1), (np.arctanh, unit),
    (np.deg2rad, normal), (np.rad2deg, normal), (np.degrees, normal), (np.radians, normal),
    (np.fabs, nonzero), (np.sinc, normal), (np.nan_to_num, normal),
    (lambda x: np.unwrap(4 * x), normal), (np.real_if_close, normal),
    (em.sqrt, wide), (em.log, wide), (em.log2, wide), (em.log10, wide),
    (em.arcsin, wide), (em.arccos, wide), (em.arctanh, wide),
    (lambda x: em.power(x, 2.5), wide),
]


@pytest.mark.parametrize("f, domain", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_matches_finite_differences(f, domain, rng):
    check_both(f, domain(rng, (3, 4)))


BINARY = [
    (np.float_power, positive, normal), (np.logaddexp, normal, normal),
    (np.logaddexp2, normal, normal), (np.arctan2, normal, nonzero),
    (np.hypot, nonzero, nonzero), (np.maximum, normal, normal), (np.minimum, normal, normal),
    (np.fmax, normal, normal), (np.fmin, normal, normal), (np.copysign, nonzero, nonzero),
    (np.fmod, normal, nonzero), (np.nextafter, normal, normal), (np.heaviside, nonzero, normal),
    (em.logn, above1, positive), (em.power, positive, normal),
]
SHAPES = [((3, 1), (4,)), ((2, 3), (3,)), ((), (3,)), ((4,), (2, 1))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("f, dx, dy", BINARY, ids=lambda v: getattr(v, "__name__", ""))
def test_binary_with_broadcasting(f, dx, dy, shapes, rng):
    check_both(f, dx(rng, shapes[0]), dy(rng, shapes[1]))


@settings(max_examples=8, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
def test_binary_broadcasting_any_shapes(shapes):
    rng = np.random.default_rng(0)
    x, y = nonzero(rng, shapes.input_shapes[0]), nonzero(rng, shapes.input_shapes[1])
    for f in (np.hypot, np.arctan2, np.logaddexp, np.maximum):
        check_both(f, x, y)


def test_ldexp_scales_by_a_power_of_two(rng):
    check_both(np.ldexp, normal(rng, (2, 3)), np.array([1, -2, 3]))


HOLOMORPHIC = [np.exp, np.log, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh, np.sqrt,
               np.square, np.reciprocal, np.exp2, np.expm1, np.log2, np.log10, np.log1p,
               np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh,
               lambda z: np.float_power(z, 1.5 + 0.5j), em.sqrt, em.log]


@pytest.mark.parametrize("f", HOLOMORPHIC, ids=lambda v: getattr(v, "__name__", ""))
def test_complex_inputs_follow_tensorflows_convention(f, rng):
    check_both(f, complex_(rng, (2, 3)))


def test_complex_gradient_value_for_exp():
    # f = |exp(z)|^2 = exp(2 Re z): TensorFlow's gradient is df/dRe + i df/dIm
    z = nt.constant(0.3 + 0.4j)
    with nt.GradientTape() as tape:
        tape.watch(z)
        e = np.exp(z)
        f = np.real(e * np.conj(e))
    assert np.isclose(complex(tape.gradient(f, z)), 2 * np.exp(0.6))


def test_angle_of_complex_and_real_inputs(rng):
    check_both(lambda z: np.angle(z, deg=True), complex_(rng, (2, 3)))
    x = nt.constant([-1.5, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.angle(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 0.0])


def test_emath_gives_complex_values_and_real_gradients_outside_the_domain():
    x = nt.constant([-4.0, 4.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = em.sqrt(x)
        loss = np.sum(np.imag(y))       # imag sqrt(-4) = sqrt(4): derivative -1/4 there
    assert y.dtype.kind == "c"
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [-0.25, 0.0])


# --- kinks and ties -----------------------------------------------------------------------------
def test_maximum_and_minimum_ties_go_to_the_first_argument():
    gx, gy = gradients_of_sum(np.maximum, [1.0, 2.0, 5.0], [1.0, 3.0, 4.0])
    np.testing.assert_array_equal(gx, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.0])
    gx, gy = gradients_of_sum(np.minimum, [1.0, 2.0, 5.0], [1.0, 3.0, 4.0])
    np.testing.assert_array_equal(gx, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 1.0])


def test_fmax_and_fmin_send_the_gradient_past_a_nan():
    gx, gy = gradients_of_sum(np.fmax, [np.nan, 2.0, 1.0], [3.0, np.nan, 4.0])
    np.testing.assert_array_equal(gx, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [1.0, 0.0, 1.0])
    gx, gy = gradients_of_sum(np.fmin, [np.nan, 2.0, 1.0], [3.0, np.nan, 4.0])
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(gy, [1.0, 0.0, 0.0])


def test_clip_follows_clip_by_value():
    x = [-2.0, -1.0, 0.5, 1.0, 3.0]
    gx, = gradients_of_sum(lambda v: np.clip(v, -1.0, 1.0), x)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])     # bounds included
    gx, glo, ghi = gradients_of_sum(np.clip, x, -1.0, 1.0)
    assert (glo, ghi) == (1.0, 1.0)                                   # one clipped each side


@pytest.mark.parametrize("f", [
    lambda x, lo, hi: np.clip(x, lo, hi),
    lambda x, lo, hi: np.clip(x, lo, None),
    lambda x, lo, hi: np.clip(x, None, hi) + 0 * lo,
    pytest.param(lambda x, lo, hi: np.clip(x, min=-0.2) + 0 * lo * hi,
                 marks=since_numpy("2.1.0", "np.clip(x, min=...)")),
    lambda x, lo, hi: x.clip(lo, hi),
])
def test_clip_with_array_bounds(f, rng):
    check_both(f, normal(rng, (3, 4)), normal(rng, (4,)) * 0.3 - 0.6,
               normal(rng, (3, 1)) * 0.3 + 0.6)


def test_heaviside_passes_gradient_to_h0_only_at_zero():
    gx, gh = gradients_of_sum(np.heaviside, [-1.0, 0.0, 2.0], [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(gx, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gh, [0.0, 1.0, 0.0])


def test_sinc_gradient_at_zero():
    # sinc'(x) = (cos(pi x) - sinc(x)) / x: 0 at x = 0, -2/pi * 2 = -4/pi at x = 0.5
    g, = gradients_of_sum(np.sinc, [0.0, 0.5])
    np.testing.assert_allclose(g, [0.0, -4 / np.pi], atol=1e-12)


def test_nan_to_num_cuts_the_gradient_at_non_finite_values():
    g, = gradients_of_sum(lambda v: np.nan_to_num(v, posinf=5.0), [1.0, np.nan, np.inf, -2.0])
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 1.0])


def test_nan_to_num_keeps_the_finite_part_of_complex_values():
    # complex(inf, 1) becomes complex(big, 1): the imaginary part still flows
    x = np.array([complex(np.inf, 1.0), complex(0.3, np.nan), complex(-0.2, 0.5)])
    with nt.GradientTape() as tape:
        xt = nt.constant(x)
        tape.watch(xt)
        y = np.sum(np.imag(np.nan_to_num(xt)) + 0.5 * np.real(np.nan_to_num(xt)))
    np.testing.assert_array_equal(tape.gradient(y, xt).numpy(), [1j, 0.5, 0.5 + 1j])
    xt = nt.constant(x)
    with nt.ForwardAccumulator(xt, np.array([1 + 1j, 1 + 1j, 1 + 1j])) as acc:
        y = np.nan_to_num(xt)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1j, 1, 1 + 1j])
    check_both(lambda v: np.nan_to_num(v), np.array([[0.35 - 0.2j, 1.5 + 0.7j]]))


@pytest.mark.parametrize("key", ["nan", "posinf", "neginf"])
def test_nan_to_num_replacements_in_complex_values(key):
    # numpy replaces in the real and imaginary parts separately, each by the real value
    x = np.array([[0.35 + 0j, complex(np.nan, 1.0), complex(2.0, np.inf),
                   complex(-np.inf, -np.inf), complex(np.inf, np.nan)]])
    fixed = dict(nan=0.5, posinf=2.0, neginf=-2.0)      # finite outputs: no overflow
    check_both(lambda x, t: np.nan_to_num(x, **{**fixed, key: t}), x, np.array(0.7), wrt=[1])
    check_both(lambda x, t: np.nan_to_num(x, nan=t, posinf=3.0, neginf=t), x, np.array(-1.3),
               wrt=[1])


# --- two outputs
def test_modf_divmod_frexp(rng):
    check_both(lambda x: np.modf(x)[0] * 2 + np.modf(x)[1], normal(rng, (3, 4)) * 3)
    check_both(lambda x, y: np.divmod(x, y)[1] + 3 * np.divmod(x, y)[0], normal(rng, (3, 4)),
               positive(rng, (4,)))
    check_both(lambda x: np.frexp(x)[0], normal(rng, (3, 4)) * 10)


# --- zero gradients and constants
ZERO = [np.sign, np.floor, np.ceil, np.rint, np.trunc, np.fix, np.round, np.around, np.spacing,
        lambda x: np.round(x, 2), lambda x: np.floor_divide(x, 0.7)]


@pytest.mark.parametrize("f", ZERO, ids=lambda v: getattr(v, "__name__", ""))
def test_piecewise_constant_functions_give_zeros_not_none(f, rng):
    x = nt.constant(normal(rng, (2, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(f(x))
    g = tape.gradient(y, x)
    assert g is not None
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 3)))
    with nt.ForwardAccumulator(x, np.ones((2, 3))) as acc:
        y = f(x)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), np.zeros((2, 3)))


NONDIFF = [np.isnan, np.isinf, np.isfinite, np.signbit, np.isneginf, np.isposinf,
           np.iscomplex, np.isreal]


@pytest.mark.parametrize("f", NONDIFF, ids=lambda v: v.__name__)
def test_predicates_give_tensors_that_are_not_recorded(f):
    x = nt.constant([1.0, np.nan, -np.inf])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert isinstance(y, nt.Tensor)
    assert np.array_equal(y.numpy(), f(np.array([1.0, np.nan, -np.inf])))
    assert len(tape._ops) == 0 and y._id not in tape._tracked


def test_integer_ufuncs_are_not_recorded():
    x = nt.constant(np.array([4, 6]))
    with nt.GradientTape() as tape:
        tape.watch(x)
        ys = [np.gcd(x, 4), np.lcm(x, 4), np.left_shift(x, 1), np.right_shift(x, 1)]
    assert len(tape._ops) == 0
    assert [int(y[0]) for y in ys] == [4, 4, 8, 2]


# --- dtypes
@pytest.mark.parametrize("f", [np.exp, np.tanh, np.arctan, np.sqrt, np.cbrt, np.log1p,
                               lambda x: np.hypot(x, 2.0), lambda x: np.logaddexp(x, 1.0),
                               lambda x: np.clip(x, 0.6, 1.2), np.sinc,
                               lambda x: np.maximum(x, 1.0)])
def test_float32_in_float32_out(f, rng):
    x = nt.constant(positive(rng, (3,)).astype(np.float32))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        s = np.sum(y)
    assert y.dtype == np.float32
    assert tape.gradient(s, x).dtype == np.float32
    with nt.ForwardAccumulator(x, np.ones(3, np.float32)) as acc:
        y = f(x)
    assert acc.jvp(y).dtype == np.float32


# --- higher order
@pytest.mark.parametrize("f, domain", [
    (np.tanh, normal), (np.exp, normal), (np.sinc, nonzero), (np.arcsin, unit),
    (np.arccosh, above1), (np.cbrt, positive), (np.reciprocal, nonzero), (np.tan, unit),
    (lambda x: np.logaddexp(x, x[::-1]), normal), (lambda x: np.hypot(x, 1.5), normal),
    (lambda x: np.arctan2(x, x[::-1]), nonzero), (lambda x: np.float_power(x, 2.5), positive),
    (lambda x: np.clip(x, -0.5, 0.5) ** 2, normal), (lambda x: np.maximum(x, 0.1) ** 3, normal),
    (em.sqrt, wide), (lambda x: np.exp2(np.log2(x) * 2), positive),
], ids=lambda v: getattr(v, "__name__", ""))
def test_second_derivative_by_nested_tapes(f, domain, rng):
    check_second(f, domain(rng, (4,)))


def test_no_warnings_from_rules_on_ordinary_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_both(np.sinc, np.array([0.0, 0.4, -1.1]))
        check_both(np.arctan2, np.array([0.2, -0.4]), np.array([1.0, 1.0]))


# --- interp
XP = np.array([-1.0, -0.2, 0.5, 1.3, 2.0])


def test_interp_in_all_three_arguments(rng):
    x, fp = rng.uniform(-1.6, 2.5, (3, 4)), normal(rng, (5,))
    check_both(np.interp, x, XP, fp)
    check_both(lambda a, b, c: np.interp(a, b, c, -3.0, 4.0), x, XP, fp)
    check_both(lambda a, c: np.interp(a, XP, c), x, fp + 1j * fp[::-1])
    check_second(lambda a: np.interp(a, XP, fp), x)


def test_interp_is_flat_outside_the_sample_points():
    g, = gradients_of_sum(lambda a: np.interp(a, XP, XP ** 2), [-5.0, 0.0, 5.0])
    np.testing.assert_allclose(g, [0.0, (0.25 - 0.04) / 0.7, 0.0])


# --- i0 and its derivative I1 (rules/special.py)
def test_i0_gradient_is_i1(rng):
    from nbtape.rules.special import bessel_i1
    x = np.linspace(-60, 60, 241)
    h = 1e-6 * np.maximum(1, np.abs(x))
    slope = (np.i0(x + h) - np.i0(x - h)) / (2 * h)
    np.testing.assert_allclose(bessel_i1(x), slope, rtol=1e-7)
    assert abs(float(bessel_i1(1.0)) - 0.5651591039924851) < 1e-14       # A&S table 9.8
    assert abs(float(bessel_i1(20.0)) / 4.245497338512777e7 - 1) < 1e-13
    check_both(np.i0, normal(rng, (3, 4)) * 5)
    check_second(np.i0, np.array([0.0, 3.0, -1.5]))
    check_second(np.i0, np.array([19.9, 20.1, -20.5]))      # both sides of the switch


def test_sign_of_complex_values_is_differentiable():
    """numpy 2's sign(z) = z/|z| is not piecewise constant off the real line (the
    random-program test found a zero gradient here)."""
    z = np.array([0.3 - 1.2j, -0.7 + 0.4j, 1.1 + 0.9j])
    check_both(np.sign, z)
    check_both(lambda z: np.sign(z) * z, z)


def test_sinc_of_complex_values():
    """sinc is holomorphic: its VJP takes the conjugate derivative (found by the
    random-program test)."""
    check_both(np.sinc, np.array([-1.3 + 1.5j, 0.4 - 0.2j]))


@pytest.mark.parametrize("power", [np.power, np.float_power, np.emath.power])
def test_x_to_the_0_has_derivative_0_at_x_0(power):
    # d(x**0)/dx is 0 everywhere; y * x**(y-1) would be 0 * inf = NaN at x = 0
    x, y = nt.constant(np.array([0.0, 0.0, 2.0])), nt.constant(np.array([0.0, 2.0, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with nt.GradientTape() as tape:
            tape.watch(x)
            z = np.sum(power(x, y))
        with nt.ForwardAccumulator(x, np.ones(3)) as acc:
            w = power(x, y)
        np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(np.real(acc.jvp(w).numpy()), [0.0, 0.0, 0.0])
