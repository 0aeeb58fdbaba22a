"""Elementwise functions (numpy ufuncs): one line per derivative.

Each VJP reads ``g * conj(f'(x))`` and each JVP ``t * f'(x)``: TensorFlow's
convention for holomorphic functions, which for real inputs is the ordinary
chain rule (``conj`` is free on real values).  Derivatives are written in terms
of ``ans`` (the output) where that is cheaper than recomputing from ``x``.

Ties and kinks follow TensorFlow: ``maximum(x, y)`` sends the whole gradient to
``x`` where ``x >= y`` (``minimum`` where ``x <= y``); ``fmax``/``fmin`` send it
to whichever argument is not NaN.  Functions that are piecewise constant
(``floor``, ``sign``, ...) have a zero gradient; predicates (``isnan``, ...)
have constant, unrecorded outputs.

The operator ufuncs (add, multiply, power, absolute, ...) live in ``core_ops``.
"""
import math

import numpy as np

from ..extend import defderiv, defjvp, defnondiff, defvjp, defzero
from ..core.registry import POSITIONAL, defrule, numpy_function
from .util import conj

LN2, LN10 = math.log(2.0), math.log(10.0)
DEG = math.pi / 180.0

# --- powers and roots -----------------------------------------------------------------
defderiv(np.square, lambda ans, x: 2 * x)
defderiv(np.sqrt, lambda ans, x: 0.5 / ans)
# quotients stay a defvjp/defjvp pair (cbrt, log*, arcsin, ...): g / d is one pass and
# rounds once, where defderiv's g * (1 / d) takes two and rounds differently
defvjp(np.cbrt, lambda g, ans, x: g / (3 * ans ** 2))
defjvp(np.cbrt, lambda t, ans, x: t / (3 * ans ** 2))
defderiv(np.reciprocal, lambda ans, x: -(ans ** 2))
# the JVPs multiply t * y first, defderiv's t * (y * ...) would round differently
# y x**(y-1) reads the exponent 1 where y = 0: x**0 has derivative 0 (not 0 * 0**-1 = NaN)
defvjp(np.float_power,
       lambda g, ans, x, y: g * conj(y * np.float_power(x, np.where(y, y - 1, 1.0))),
       lambda g, ans, x, y: g * conj(np.log(np.where(x == 0, 1.0, x)) * ans))
defjvp(np.float_power,
       lambda t, ans, x, y: t * y * np.float_power(x, np.where(y, y - 1, 1.0)),
       lambda t, ans, x, y: t * np.log(np.where(x == 0, 1.0, x)) * ans)

# --- exponentials and logarithms ----------------------------------------------------------
defderiv(np.exp, lambda ans, x: ans)
defderiv(np.exp2, lambda ans, x: ans * LN2)
defderiv(np.expm1, lambda ans, x: ans + 1)
# quotients (see cbrt)
defvjp(np.log, lambda g, ans, x: g / conj(x))
defjvp(np.log, lambda t, ans, x: t / x)
defvjp(np.log2, lambda g, ans, x: g / conj(x * LN2))
defjvp(np.log2, lambda t, ans, x: t / (x * LN2))
defvjp(np.log10, lambda g, ans, x: g / conj(x * LN10))
defjvp(np.log10, lambda t, ans, x: t / (x * LN10))
defvjp(np.log1p, lambda g, ans, x: g / conj(1 + x))
defjvp(np.log1p, lambda t, ans, x: t / (1 + x))
# log(e^x + e^y): each argument's share is its softmax weight
defderiv(np.logaddexp, lambda ans, x, y: np.exp(x - ans), lambda ans, x, y: np.exp(y - ans))
defderiv(np.logaddexp2, lambda ans, x, y: np.exp2(x - ans), lambda ans, x, y: np.exp2(y - ans))

# --- trigonometric ------------------------------------------------------------------------------
defderiv(np.sin, lambda ans, x: np.cos(x))
defderiv(np.cos, lambda ans, x: -np.sin(x))
defderiv(np.tan, lambda ans, x: 1 + ans ** 2)
# quotients (see cbrt)
defvjp(np.arcsin, lambda g, ans, x: g / conj(np.sqrt(1 - x ** 2)))
defjvp(np.arcsin, lambda t, ans, x: t / np.sqrt(1 - x ** 2))
defvjp(np.arccos, lambda g, ans, x: -g / conj(np.sqrt(1 - x ** 2)))
defjvp(np.arccos, lambda t, ans, x: -t / np.sqrt(1 - x ** 2))
defvjp(np.arctan, lambda g, ans, x: g / conj(1 + x ** 2))
defjvp(np.arctan, lambda t, ans, x: t / (1 + x ** 2))
# arctan2(y, x) is the angle of the point (x, y); (g * x) / r2 is rounded as written, where
# defderiv's g * (x / r2) would round differently (hypot likewise)
defvjp(np.arctan2, lambda g, ans, y, x: g * x / (x ** 2 + y ** 2),
                   lambda g, ans, y, x: -g * y / (x ** 2 + y ** 2))
defjvp(np.arctan2, lambda t, ans, y, x: t * x / (x ** 2 + y ** 2),
                   lambda t, ans, y, x: -t * y / (x ** 2 + y ** 2))
defvjp(np.hypot, lambda g, ans, x, y: g * x / ans,
                 lambda g, ans, x, y: g * y / ans)
defjvp(np.hypot, lambda t, ans, x, y: t * x / ans,
                 lambda t, ans, x, y: t * y / ans)
defderiv(np.deg2rad, lambda ans, x: DEG)
defderiv(np.radians, lambda ans, x: DEG)           # numpy keeps radians and deg2rad apart
# g / DEG is not g * (1 / DEG) to the last bit: rad2deg and degrees stay quotients
defvjp(np.rad2deg, lambda g, ans, x: g / DEG)
defjvp(np.rad2deg, lambda t, ans, x: t / DEG)
defvjp(np.degrees, lambda g, ans, x: g / DEG)
defjvp(np.degrees, lambda t, ans, x: t / DEG)

# --- hyperbolic
defderiv(np.sinh, lambda ans, x: np.cosh(x))
defderiv(np.cosh, lambda ans, x: np.sinh(x))
defderiv(np.tanh, lambda ans, x: 1 - ans ** 2)
# quotients (see cbrt)
defvjp(np.arcsinh, lambda g, ans, x: g / conj(np.sqrt(x ** 2 + 1)))
defjvp(np.arcsinh, lambda t, ans, x: t / np.sqrt(x ** 2 + 1))
# sqrt(x-1)*sqrt(x+1), not sqrt(x**2-1): the same for x > 1, and the right branch for complex x
defvjp(np.arccosh, lambda g, ans, x: g / conj(np.sqrt(x - 1) * np.sqrt(x + 1)))
defjvp(np.arccosh, lambda t, ans, x: t / (np.sqrt(x - 1) * np.sqrt(x + 1)))
defvjp(np.arctanh, lambda g, ans, x: g / conj(1 - x ** 2))
defjvp(np.arctanh, lambda t, ans, x: t / (1 - x ** 2))

# --- maxima and minima (ties: TensorFlow's choice, the first argument wins); hot (relu,
# clip_by_value), so a lambda per mode: defderiv's extra call and dtype test cost ~0.15 us a VJP
defvjp(np.maximum, lambda g, ans, x, y: g * (x >= y),
                   lambda g, ans, x, y: g * (x < y))
defjvp(np.maximum, lambda t, ans, x, y: t * (x >= y),
                   lambda t, ans, x, y: t * (x < y))
defvjp(np.minimum, lambda g, ans, x, y: g * (x <= y),
                   lambda g, ans, x, y: g * (x > y))
defjvp(np.minimum, lambda t, ans, x, y: t * (x <= y),
                   lambda t, ans, x, y: t * (x > y))
# fmax/fmin ignore a NaN, so the other argument gets the gradient
defderiv(np.fmax, lambda ans, x, y: (x >= y) | np.isnan(y),
                  lambda ans, x, y: ~((x >= y) | np.isnan(y)))
defderiv(np.fmin, lambda ans, x, y: (x <= y) | np.isnan(y),
                  lambda ans, x, y: ~((x <= y) | np.isnan(y)))

# --- signs, remainders, float manipulation
defderiv(np.fabs, lambda ans, x: np.sign(x))
# copysign(x, y) = |x| sign(y): the sign of y is piecewise constant (the signs are +-1, so
# g * (sx * sy) is (g * sx) * sy to the bit)
defderiv(np.copysign, lambda ans, x, y: np.copysign(1.0, x) * np.copysign(1.0, y),
                      lambda ans, x, y: 0.0)
# fmod(x, y) = x - trunc(x / y) * y; g passes to x as it is (no product g * 1: cheaper, and
# the same object), so fmod and nextafter stay defvjp/defjvp pairs
defvjp(np.fmod, lambda g, ans, x, y: g,
                lambda g, ans, x, y: -g * np.trunc(x / y))
defjvp(np.fmod, lambda t, ans, x, y: t,
                lambda t, ans, x, y: -t * np.trunc(x / y))
# ldexp(x, i) = x * 2**i, with an integer exponent (never differentiable); its adjoint is
# ldexp(g, i), an exact scaling, not a product g * d
defvjp(np.ldexp, lambda g, ans, x, i: np.ldexp(g, i))
defjvp(np.ldexp, lambda t, ans, x, i: np.ldexp(t, i))
# nextafter(x, y) is x moved by one ulp: the identity in x, constant in y
defvjp(np.nextafter, lambda g, ans, x, y: g,
                     lambda g, ans, x, y: g * 0.0)
defjvp(np.nextafter, lambda t, ans, x, y: t,
                     lambda t, ans, x, y: t * 0.0)
# heaviside(x, h0) is h0 exactly where x == 0, a step elsewhere
defderiv(np.heaviside, lambda ans, x, h0: 0.0, lambda ans, x, h0: x == 0)



_NUMPY_1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def _sign_derivative(d, x):
    """sign(z) = z/|z| for complex z is not holomorphic: a step d moves it by
    (d - z**2 conj(d) / |z|**2) / (2|z|), a VJP and a JVP alike (zero at z = 0).
    On reals sign is piecewise constant: zero, and so is numpy 1's complex sign (the
    sign of the real part, or of the imaginary part where that is zero)."""
    if not np.iscomplexobj(x) or _NUMPY_1:
        return d * 0.0
    r = np.abs(x)
    safe = np.where(r == 0, 1.0, r)
    return np.where(r == 0, 0.0, (d - x ** 2 * np.conj(d) / safe ** 2) / (2 * safe))


# not holomorphic for complex z: not a product g * conj(d)
defvjp(np.sign, lambda g, ans, x: _sign_derivative(g, x))
defjvp(np.sign, lambda t, ans, x: _sign_derivative(t, x))
defzero(np.floor, np.ceil, np.rint, np.trunc, np.spacing)

defnondiff(np.isnan, np.isinf, np.isfinite, np.signbit, np.isnat, np.gcd, np.lcm,
           np.left_shift, np.right_shift, numpy_function("bitwise_count"))


# --- ufuncs with two outputs
def _modf_vjp(g, ans, args, kw, needs):
    # modf(x) = (x - trunc(x), trunc(x)): only the fractional part moves with x
    return [g[0]]


def _modf_jvp(ts, ans, args, kw):
    return ts[0], np.zeros_like(ans[1])


def _divmod_vjp(g, ans, args, kw, needs):
    # divmod(x, y) = (floor(x / y), x - floor(x / y) * y)
    gr = g[1]
    return [gr if needs[0] else None, -gr * ans[0] if needs[1] else None]


def _divmod_jvp(ts, ans, args, kw):
    tr = None
    if ts[0] is not None:
        tr = ts[0]
    if ts[1] is not None:
        tr = -ts[1] * ans[0] if tr is None else tr - ts[1] * ans[0]
    return np.zeros_like(ans[0]), tr


def _frexp_vjp(g, ans, args, kw, needs):
    # x = m * 2**e with an integer e, so dm/dx = 2**-e
    return [np.ldexp(g[0], -ans[1])]


def _frexp_jvp(ts, ans, args, kw):
    return np.ldexp(ts[0], -ans[1]), None


defrule(np.modf, _modf_vjp, _modf_jvp, kind=POSITIONAL, multi=True, nargs=1)
defrule(np.divmod, _divmod_vjp, _divmod_jvp, kind=POSITIONAL, multi=True, nargs=2)
defrule(np.frexp, _frexp_vjp, _frexp_jvp, kind=POSITIONAL, multi=True, nargs=1)
