"""``np.emath``: square roots, logarithms and inverse trig that go complex outside
their real domain (``np.emath.sqrt(-4) == 2j``).

The derivatives are the usual ones, computed with ``np.emath`` so they take the
same branch as the function.  A real input with a complex output gets the real
part of ``g * conj(f'(x))``, as TensorFlow's convention asks; the engine takes
that real part when it casts the adjoint to the input's dtype.
"""
import math

import numpy as np

from ..extend import defderiv, defjvp, defvjp
from ..core.registry import defprimitive
from .util import conj

em = np.emath
LN2, LN10 = math.log(2.0), math.log(10.0)

defderiv(em.sqrt, lambda ans, x: 0.5 / ans)
# quotients (log*, logn, arcsin, arccos, arctanh) and power's JVP (t * p first) stay a
# defvjp/defjvp pair: as defderiv they would round differently, and a quotient take two passes
defvjp(em.log, lambda g, ans, x: g / conj(x))
defjvp(em.log, lambda t, ans, x: t / x)
defvjp(em.log2, lambda g, ans, x: g / conj(x * LN2))
defjvp(em.log2, lambda t, ans, x: t / (x * LN2))
defvjp(em.log10, lambda g, ans, x: g / conj(x * LN10))
defjvp(em.log10, lambda t, ans, x: t / (x * LN10))
# logn(n, x) = log(x) / log(n)
defvjp(em.logn, lambda g, ans, n, x: -g * conj(ans / (n * em.log(n))),
                lambda g, ans, n, x: g / conj(x * em.log(n)))
defjvp(em.logn, lambda t, ans, n, x: -t * ans / (n * em.log(n)),
                lambda t, ans, n, x: t / (x * em.log(n)))
# p x**(p-1) reads the exponent 1 where p = 0 (x**0 has derivative 0, not 0 * inf)
defvjp(em.power, lambda g, ans, x, p: g * conj(p * em.power(x, np.where(p, p - 1, 1.0))),
                 lambda g, ans, x, p: g * conj(em.log(np.where(x == 0, 1.0, x)) * ans))
defjvp(em.power, lambda t, ans, x, p: t * p * em.power(x, np.where(p, p - 1, 1.0)),
                 lambda t, ans, x, p: t * em.log(np.where(x == 0, 1.0, x)) * ans)


def _root(x):
    """sqrt(1 - x**2) on the branch numpy's arcsin takes: for real |x| > 1 numpy reads the
    cut from the side where the root is -i sign(x) sqrt(x**2 - 1)."""
    if getattr(x, "dtype", np.dtype(float)).kind == "c":
        return np.sqrt(1 - x ** 2)
    s = np.sqrt(np.abs(1 - x ** 2))
    return np.where(np.abs(x) <= 1, s, -1j * np.sign(x) * s)


defvjp(em.arcsin, lambda g, ans, x: g / conj(_root(x)))
defjvp(em.arcsin, lambda t, ans, x: t / _root(x))
defvjp(em.arccos, lambda g, ans, x: -g / conj(_root(x)))
defjvp(em.arccos, lambda t, ans, x: -t / _root(x))
defvjp(em.arctanh, lambda g, ans, x: g / conj(1 - x ** 2))
defjvp(em.arctanh, lambda t, ans, x: t / (1 - x ** 2))

for _f in (em.sqrt, em.log, em.log2, em.log10, em.logn, em.power, em.arcsin, em.arccos,
           em.arctanh):
    defprimitive(_f, "np.emath." + _f.__name__)
