"""scipy.special's ufuncs, the ones autograd differentiates (gamma and its logs, the
error functions, the normal CDF, Bessel functions, the incomplete gamma in ``x``).

scipy is not a dependency: this module is loaded only once ``scipy.special`` is in use
(``load_late`` in ``rules/__init__.py``: the first scipy ufunc a tensor meets, or
``nt.coverage()``), so ``import nbtape`` never imports scipy (about 0.8 s).  Each
derivative is written with these same ufuncs, so second derivatives work too.  Orders
(the Bessel functions' ``v``), ``zeta``'s ``s`` and ``gammainc``'s ``a`` are not
differentiable: a gradient there raises ``NoGradientRuleError``.  ``polygamma`` converts
its arguments with ``np.asarray`` (a Python function, not a ufunc), so the tape cannot
follow it: ``(-1)**(n+1) * gamma(n+1) * zeta(n+1, x)`` is the same, differentiable.

>>> import numpy as np, scipy.special as sc, nbtape as nt
>>> x = nt.constant(2.5)
>>> with nt.GradientTape() as tape:
...     tape.watch(x)
...     y = sc.gammaln(x)
>>> bool(np.isclose(float(tape.gradient(y, x)), sc.digamma(2.5)))
True
"""
import math

import numpy as np
import scipy.special as sc

from ..diagnostics.errors import NoGradientRuleError
from ..extend import defderiv

SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2 * math.pi)


def _name(f):
    return f"scipy.special.{f.__name__.lstrip('_')}"


def _deriv(f, *derivs):
    defderiv(f, *derivs, name=_name(f))


def _not_in(what):
    """The derivative in an argument nbtape (like autograd) does not differentiate: a
    gradient that reaches it raises, naming the function, instead of a silent None."""
    def refuse(ans, *args):
        raise NoGradientRuleError(
            f"the gradient of {what} is not implemented (nbtape differentiates it in x "
            "only, as autograd does). Pass that argument as a plain number or array, or "
            "wrap it in nt.stop_gradient if it does not depend on what you differentiate.")
    return refuse


# scipy.special.zeta(s, q) and polygamma(n, x) are Python functions: zeta calls the
# Hurwitz zeta ufunc, which reaches tensors; polygamma converts them with np.asarray
# (a None gradient that says so) -- for n >= 1 use (-1)**(n+1) n! zeta(n+1, x)
_zeta = getattr(getattr(sc, "_ufuncs", None), "_zeta", None)


# --- gamma and its relatives ------------------------------------------------------------
_deriv(sc.gamma, lambda ans, x: ans * sc.digamma(x))
_deriv(sc.gammaln, lambda ans, x: sc.digamma(x))
# digamma' = polygamma(1, x) = zeta(2, x), as a ufunc so that it differentiates again
_deriv(sc.digamma, lambda ans, x: _zeta(2.0, x))        # (sc.psi is sc.digamma)
_deriv(_zeta, _not_in("scipy.special.zeta in s"), lambda ans, s, q: -s * _zeta(s + 1, q))
def _drgamma(ans, x):
    """d(1/gamma)/dx.  -ans * digamma(x) is 0 * inf at the poles of gamma (x = 0, -1, ...)
    where the true derivative is (-1)**n n!; for x <= 0 the reflection formula
    1/gamma(x) = sin(pi x) gamma(1 - x) / pi differentiates with no pole in sight.  Each
    branch reads a safe stand-in where the other is chosen (the double where), so that
    neither a warning nor a NaN in the branch not taken reaches a second derivative."""
    left = x <= 0
    xl = np.where(left, x, 0.0)
    xr = np.where(left, 1.0, x)
    reflected = sc.gamma(1 - xl) * (np.cos(np.pi * xl)
                                    - np.sin(np.pi * xl) * sc.digamma(1 - xl) / np.pi)
    return np.where(left, reflected, -ans * sc.digamma(xr))


_deriv(sc.rgamma, _drgamma)
_deriv(sc.beta, lambda ans, a, b: ans * (sc.digamma(a) - sc.digamma(a + b)),
       lambda ans, a, b: ans * (sc.digamma(b) - sc.digamma(a + b)))
_deriv(sc.betaln, lambda ans, a, b: sc.digamma(a) - sc.digamma(a + b),
       lambda ans, a, b: sc.digamma(b) - sc.digamma(a + b))
# the regularized incomplete gamma functions, in x: the gamma density
def _gamma_density(a, x):
    """x**(a-1) e**-x / gamma(a), as one exp.  At a = 1 the log term is 0 * log(0) = NaN at
    x = 0, where the density is 1: the log reads x = 1 there (a where, not a product with
    0, so that its derivative is 0 too)."""
    return np.exp((a - 1) * np.log(np.where(a == 1, 1.0, x)) - x - sc.gammaln(a))


_deriv(sc.gammainc, _not_in("scipy.special.gammainc in a"), lambda ans, a, x: _gamma_density(a, x))
_deriv(sc.gammaincc, _not_in("scipy.special.gammaincc in a"),
       lambda ans, a, x: -_gamma_density(a, x))

# --- error functions and the normal distribution ------------------------------------------
_deriv(sc.erf, lambda ans, x: 2 / SQRT_PI * np.exp(-x * x))
_deriv(sc.erfc, lambda ans, x: -2 / SQRT_PI * np.exp(-x * x))
_deriv(sc.erfinv, lambda ans, x: SQRT_PI / 2 * np.exp(ans * ans))
_deriv(sc.erfcinv, lambda ans, x: -SQRT_PI / 2 * np.exp(ans * ans))
_deriv(sc.expit, lambda ans, x: ans * (1 - ans))
_deriv(sc.logit, lambda ans, x: 1 / (x * (1 - x)))
_deriv(sc.ndtr, lambda ans, x: np.exp(-x * x / 2) / SQRT_2PI)
_deriv(sc.ndtri, lambda ans, x: SQRT_2PI * np.exp(ans * ans / 2))
# pdf / cdf, as one exp: finite far in the left tail, where both underflow
_deriv(sc.log_ndtr, lambda ans, x: np.exp(-x * x / 2 - ans) / SQRT_2PI)

# --- Bessel functions (in x; the order v is not differentiable) ---------------------------
_deriv(sc.i0, lambda ans, x: sc.i1(x))
_deriv(sc.i1, lambda ans, x: (sc.i0(x) + sc.iv(2, x)) / 2)
_deriv(sc.iv, _not_in("scipy.special.iv in its order v"), lambda ans, v, x: (sc.iv(v - 1, x) + sc.iv(v + 1, x)) / 2)
# ive = iv * exp(-|x|)
_deriv(sc.ive, _not_in("scipy.special.ive in its order v"),
       lambda ans, v, x: (sc.ive(v - 1, x) + sc.ive(v + 1, x)) / 2 - np.sign(x) * ans)
_deriv(sc.j0, lambda ans, x: -sc.j1(x))
_deriv(sc.j1, lambda ans, x: (sc.j0(x) - sc.jv(2, x)) / 2)
_deriv(sc.jv, _not_in("scipy.special.jv in its order v"), lambda ans, v, x: (sc.jv(v - 1, x) - sc.jv(v + 1, x)) / 2)
_deriv(sc.y0, lambda ans, x: -sc.y1(x))
_deriv(sc.y1, lambda ans, x: (sc.y0(x) - sc.yv(2, x)) / 2)
_deriv(sc.yv, _not_in("scipy.special.yv in its order v"), lambda ans, v, x: (sc.yv(v - 1, x) - sc.yv(v + 1, x)) / 2)

DIFFERENTIATED = ("gamma", "gammaln", "digamma", "psi", "zeta", "rgamma", "beta",
                  "betaln", "gammainc", "gammaincc", "erf", "erfc", "erfinv", "erfcinv",
                  "expit", "logit", "ndtr", "ndtri", "log_ndtr", "i0", "i1", "iv", "ive",
                  "j0", "j1", "jv", "y0", "y1", "yv")
