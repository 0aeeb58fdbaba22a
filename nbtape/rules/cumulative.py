"""Running sums and products: cumsum, cumprod, cumulative_sum/prod, nancumsum/prod.

The adjoint of a running sum is a running sum taken from the other end.  The
running product never divides by an element that is zero: before the first
zero of a line the usual ``ans / x`` holds, the first zero's gradient is the
running product with that zero left out, and everything after it has none.
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..core.registry import defalias, numpy_function
from .util import conj, shape_of, value_of


def flip(x, axis):
    """``x`` reversed along ``axis`` (by slicing, so tapes can follow it).

    >>> flip(np.arange(3), 0)
    array([2, 1, 0])
    """
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def rev_cumsum(g, axis):
    """Sums from each position to the end of ``axis``: the adjoint of ``cumsum``.

    >>> rev_cumsum(np.array([1.0, 2.0, 3.0]), 0)
    array([6., 5., 3.])
    """
    return flip(np.cumsum(flip(g, axis), axis=axis), axis)


def _along(x, axis):
    """``(x, axis)`` ready for a line-by-line scan; ``axis=None`` scans the flattened array."""
    if axis is None:
        return np.reshape(x, (-1,)), 0
    return x, axis % max(len(shape_of(x)), 1)


def _exclusive_cumprod(x):
    """Products of everything before each position along the last axis."""
    ones = np.ones(shape_of(x)[:-1] + (1,), dtype=x.dtype)
    return np.concatenate([ones, np.cumprod(x[..., :-1], axis=-1)], axis=-1)


def _has_zero(x):
    return bool(np.any(value_of(x) == 0))


def cumprod_vjp(g, ans, x, axis):
    """Adjoint of ``cumprod`` along ``axis``: sum over j >= i of g_j * d(ans_j)/d(x_i).

    >>> x = np.array([2.0, 0.0, 3.0])
    >>> cumprod_vjp(np.ones(3), np.cumprod(x), x, 0)    # d/dx of x0 + x0 x1 + x0 x1 x2
    array([1., 8., 0.])
    """
    if not _has_zero(x):
        return rev_cumsum(g * conj(ans), axis) / conj(x)
    # With zeros, S_i = g_i + x_{i+1} S_{i+1} (from the end) and grad_i = prefix_i * S_i:
    # a polynomial in x, so it stays exact for higher derivatives too.
    gl, xl = np.swapaxes(g, axis, -1), conj(np.swapaxes(x, axis, -1))
    n = shape_of(xl)[-1]
    acc = [gl[..., n - 1]]
    for i in range(n - 2, -1, -1):
        acc.append(gl[..., i] + xl[..., i + 1] * acc[-1])
    grad = _exclusive_cumprod(xl) * np.stack(acc[::-1], axis=-1)
    return np.swapaxes(grad, axis, -1)


def cumprod_jvp(t, ans, x, axis):
    """Tangent of ``cumprod`` along ``axis``: sum over i <= j of t_i * d(ans_j)/d(x_i).

    >>> x = np.array([2.0, 0.0, 3.0])
    >>> cumprod_jvp(np.array([0.0, 1.0, 0.0]), np.cumprod(x), x, 0)
    array([0., 2., 6.])
    """
    if not _has_zero(x):
        return ans * np.cumsum(t / x, axis=axis)
    # D_j = x_j D_{j-1} + prefix_j t_j, the forward twin of the recursion above
    tl, xl = np.swapaxes(t, axis, -1), np.swapaxes(x, axis, -1)
    prefix = _exclusive_cumprod(xl)
    out = [tl[..., 0]]
    for j in range(1, shape_of(xl)[-1]):
        out.append(xl[..., j] * out[-1] + prefix[..., j] * tl[..., j])
    return np.swapaxes(np.stack(out, axis=-1), axis, -1)


def _cumsum_vjp(g, ans, x, axis=None, dtype=None, out=None):
    if axis is None:
        return np.reshape(rev_cumsum(g, 0), shape_of(x))
    return rev_cumsum(g, axis % len(shape_of(x)))


def _cumprod_vjp(g, ans, x, axis=None, dtype=None, out=None):
    xs, ax = _along(x, axis)
    return np.reshape(cumprod_vjp(g, ans, xs, ax), shape_of(x))


def _cumprod_jvp(t, ans, x, axis=None, dtype=None, out=None):
    xs, ax = _along(x, axis)
    return cumprod_jvp(_along(t, axis)[0], ans, xs, ax)


defvjp(np.cumsum, _cumsum_vjp)
defjvp(np.cumsum, lambda t, ans, x, axis=None, dtype=None, out=None: np.cumsum(t, axis=axis))
defvjp(np.cumprod, _cumprod_vjp)
defjvp(np.cumprod, _cumprod_jvp)
defalias(numpy_function("cumproduct"), np.cumprod)     # numpy 1 only, deprecated


# --- the array-API spellings (numpy >= 2.1): keyword-only axis, optional leading identity -----
cumulative_sum = numpy_function("cumulative_sum")
cumulative_prod = numpy_function("cumulative_prod")


def _drop_initial(v, axis, include_initial):
    return v[(slice(None),) * axis + (slice(1, None),)] if include_initial else v


def _add_initial(v, axis, include_initial):
    if not include_initial:
        return v
    shape = list(shape_of(v))
    shape[axis] = 1
    return np.concatenate([np.zeros(shape, dtype=v.dtype), v], axis=axis)


def _cumulative_axis(x, axis):
    return 0 if axis is None else axis % len(shape_of(x))


defvjp(cumulative_sum, lambda g, ans, x, *, axis=None, dtype=None, out=None,
       include_initial=False: rev_cumsum(_drop_initial(g, _cumulative_axis(x, axis),
                                                      include_initial),
                                         _cumulative_axis(x, axis)))
defjvp(cumulative_sum, lambda t, ans, x, *, axis=None, dtype=None, out=None,
       include_initial=False: cumulative_sum(t, axis=axis, include_initial=include_initial))


def _at_least_1d(v):
    """numpy takes a 0-d input of the cumulative_* functions as one element."""
    return np.reshape(v, (1,)) if len(shape_of(v)) == 0 else v


def _cumulative_prod_vjp(g, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    x = _at_least_1d(x)
    ax = _cumulative_axis(x, axis)
    return cumprod_vjp(_drop_initial(g, ax, include_initial),
                       _drop_initial(ans, ax, include_initial), x, ax)


def _cumulative_prod_jvp(t, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    x, t = _at_least_1d(x), _at_least_1d(t)
    ax = _cumulative_axis(x, axis)
    inner = cumprod_jvp(t, _drop_initial(ans, ax, include_initial), x, ax)
    return _add_initial(inner, ax, include_initial)


defvjp(cumulative_prod, _cumulative_prod_vjp)
defjvp(cumulative_prod, _cumulative_prod_jvp)


# --- NaN-skipping versions: a NaN counts as 0 in a sum and as 1 in a product -----------------
defvjp(np.nancumsum, lambda g, ans, x, axis=None, dtype=None, out=None:
       _cumsum_vjp(g, ans, x, axis) * ~np.isnan(x))
defjvp(np.nancumsum, lambda t, ans, x, axis=None, dtype=None, out=None:
       np.cumsum(np.where(np.isnan(x), 0, t), axis=axis))
defvjp(np.nancumprod, lambda g, ans, x, axis=None, dtype=None, out=None:
       _cumprod_vjp(g, ans, np.where(np.isnan(x), 1, x), axis) * ~np.isnan(x))
defjvp(np.nancumprod, lambda t, ans, x, axis=None, dtype=None, out=None:
       _cumprod_jvp(np.where(np.isnan(x), 0, t), ans, np.where(np.isnan(x), 1, x), axis))
