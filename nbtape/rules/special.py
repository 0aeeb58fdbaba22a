"""Special functions: ``np.i0``, the modified Bessel function of order 0.

Its derivative is ``I1``, which numpy does not provide, so it is computed here
(``bessel_i1``) from the two textbook expansions: the power series
``sum_k (x/2)^(2k+1) / (k! (k+1)!)`` for ``|x| <= 20`` and the large-argument
expansion ``e^x / sqrt(2 pi x) * (1 - 3/(8x) - 15/(2! (8x)^2) - ...)`` beyond.
``I1' = I0 - I1 / x`` closes the loop, so every order of derivative works.
"""
import math

import numpy as np

from ..extend import defderiv, primitive

_SWITCH = 20.0


def _series(a):
    half = a / 2
    term = half.copy()
    total = term.copy()
    sq = half * half
    for k in range(60):
        term = term * sq / ((k + 1) * (k + 2))
        total += term
    return total


def _asymptotic(a):
    # (-1)^k prod_j (4 - (2j-1)^2) / (k! (8a)^k), summed while the terms shrink
    term = np.ones_like(a)
    total = term.copy()
    for k in range(1, 41):
        term = term * -(4.0 - (2 * k - 1) ** 2) / (k * 8.0 * a)
        total += term
    with np.errstate(over="ignore"):
        return np.exp(a) / np.sqrt(2 * math.pi * a) * total


def _i1(x):
    x = np.asarray(x, dtype=np.result_type(x, 1.0))
    a = np.abs(x)
    small = a <= _SWITCH
    out = np.empty_like(a)
    with np.errstate(under="ignore"):
        out[small] = _series(a[small])
        out[~small] = _asymptotic(a[~small])
    return np.copysign(out, x)


bessel_i1 = primitive(_i1, name="bessel_i1")
bessel_i1.__doc__ = """The modified Bessel function of the first kind of order 1 (odd in x).

>>> round(float(bessel_i1(1.0)), 12), round(float(bessel_i1(-1.0)), 12)
(0.565159103992, -0.565159103992)
"""


def _di1(x, ans):
    # I1'(x) = I0(x) - I1(x) / x, which tends to 1/2 at x = 0
    return np.where(x == 0, 0.5, np.i0(x) - ans / np.where(x == 0, 1.0, x))


defderiv(_i1, lambda ans, x: _di1(x, ans))
defderiv(np.i0, lambda ans, x: bessel_i1(x))
