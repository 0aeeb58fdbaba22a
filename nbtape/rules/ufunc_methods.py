"""Ufunc methods: ``np.add.reduce``, ``np.multiply.accumulate``, ``np.add.outer``, ...

numpy routes ``ufunc.method(tensor)`` through ``__array_ufunc__``, and the
dispatcher looks the rule up under the key ``(ufunc, method)``.  The
derivatives are those of the matching functions (``add.reduce`` is ``sum``,
``multiply.accumulate`` is ``cumprod``, ``maximum.reduce`` is ``max``), except
that ``reduce`` and ``accumulate`` default to ``axis=0``.
"""
import numpy as np

from ..extend import defjvp, defvjp
from .cumulative import cumprod_jvp, cumprod_vjp, rev_cumsum
from .reductions import (argmax_share, def_extreme_initial, def_prod_initial, prod_parts,
                         reduce_back, spread)
from ..core.registry import defparam, defprimitive
from .util import NV, conj, masked, shape_of


def method_key(ufunc, method):
    """Register ``ufunc.method`` in the rule table; returns its key ``(ufunc, method)``.

    >>> import numpy as np
    >>> from nbtape.core.registry import RULES
    >>> RULES[method_key(np.add, "reduce")].name
    'np.add.reduce'
    """
    key = (ufunc, method)
    # the rule runs the bound method (the key itself is not callable)
    defprimitive(key, f"np.{ufunc.__name__}.{method}", fn=getattr(ufunc, method))
    return key


def _axis(x, axis):
    # accumulate takes axis=None for a 1-d array (numpy refuses it for more axes)
    return 0 if axis is None else axis % max(len(shape_of(x)), 1)


# --- reduce ----------------------------------------------------------------------------------
def _sum_vjp(g, ans, x, axis=0, dtype=None, out=None, keepdims=False, initial=NV, where=True):
    s = spread(g, x, axis, keepdims)
    return s * where if masked(where) else s


def _sum_jvp(t, ans, x, axis=0, dtype=None, out=None, keepdims=False, initial=NV, where=True):
    return reduce_back(t * where if masked(where) else t, x, axis, keepdims)


def _prod_vjp(g, ans, x, axis=0, dtype=None, out=None, keepdims=False, initial=NV, where=True):
    return spread(g, x, axis, keepdims) * conj(prod_parts(x, axis, initial, where))


def _prod_jvp(t, ans, x, axis=0, dtype=None, out=None, keepdims=False, initial=NV, where=True):
    return reduce_back(t * prod_parts(x, axis, initial, where), x, axis, keepdims)


def _extreme_vjp(g, ans, x, axis=0, dtype=None, out=None, keepdims=False, initial=NV,
                 where=True):
    return spread(g, x, axis, keepdims) * argmax_share(x, ans, axis, keepdims, where, initial)


def _extreme_jvp(t, ans, x, axis=0, dtype=None, out=None, keepdims=False, initial=NV,
                 where=True):
    return reduce_back(t * argmax_share(x, ans, axis, keepdims, where, initial),
                       x, axis, keepdims)


_key = method_key(np.add, "reduce")
defvjp(_key, _sum_vjp)
defjvp(_key, _sum_jvp)
defparam(_key, "initial", lambda g, ans, x, *args, **kw: g, lambda t, ans, x, *args, **kw: t)
_key = method_key(np.multiply, "reduce")
defvjp(_key, _prod_vjp)
defjvp(_key, _prod_jvp)
def_prod_initial(_key, np.multiply.reduce, axis=0)
for _u in (np.maximum, np.minimum, np.fmax, np.fmin):
    _key = method_key(_u, "reduce")
    defvjp(_key, _extreme_vjp)
    defjvp(_key, _extreme_jvp)
    def_extreme_initial(_key, dtype_param=True, axis=0)

# --- accumulate ----------------------------------------------------------------------------------
_key = method_key(np.add, "accumulate")
defvjp(_key, lambda g, ans, x, axis=0, dtype=None, out=None: rev_cumsum(g, _axis(x, axis)))
defjvp(_key, lambda t, ans, x, axis=0, dtype=None, out=None: np.add.accumulate(t, axis=axis))
_key = method_key(np.multiply, "accumulate")
defvjp(_key, lambda g, ans, x, axis=0, dtype=None, out=None:
       cumprod_vjp(g, ans, x, _axis(x, axis)))
defjvp(_key, lambda t, ans, x, axis=0, dtype=None, out=None:
       cumprod_jvp(t, ans, x, _axis(x, axis)))


# --- outer: x's axes come first, y's last
def _over_y(v, y):
    """Sum the trailing (y) axes away: an adjoint for x."""
    k = np.ndim(y)
    return np.sum(v, axis=tuple(range(-k, 0))) if k else v


def _over_x(v, x):
    """Sum the leading (x) axes away: an adjoint for y."""
    k = np.ndim(x)
    return np.sum(v, axis=tuple(range(k))) if k else v


def _lead(x, y):
    """``x`` with a length-1 axis for each of y's, so it broadcasts like outer's output."""
    return np.reshape(x, shape_of(x) + (1,) * np.ndim(y))


_key = method_key(np.add, "outer")
defvjp(_key, lambda g, ans, x, y: _over_y(g, y),
             lambda g, ans, x, y: _over_x(g, x))
defjvp(_key, lambda t, ans, x, y: _lead(t, y),
             lambda t, ans, x, y: t)
_key = method_key(np.subtract, "outer")
defvjp(_key, lambda g, ans, x, y: _over_y(g, y),
             lambda g, ans, x, y: -_over_x(g, x))
defjvp(_key, lambda t, ans, x, y: _lead(t, y),
             lambda t, ans, x, y: -t)
_key = method_key(np.multiply, "outer")
defvjp(_key, lambda g, ans, x, y: _over_y(g * conj(y), y),
             lambda g, ans, x, y: _over_x(g * conj(_lead(x, y)), x))
defjvp(_key, lambda t, ans, x, y: np.multiply.outer(t, y),
             lambda t, ans, x, y: np.multiply.outer(x, t))
_key = method_key(np.divide, "outer")
defvjp(_key, lambda g, ans, x, y: _over_y(g / conj(y), y),
             lambda g, ans, x, y: _over_x(-g * conj(ans / y), x))
defjvp(_key, lambda t, ans, x, y: np.divide.outer(t, y),
             lambda t, ans, x, y: -t * ans / y)
