"""Running sums and products: cumsum, cumprod, cumulative_sum/prod, nancumsum/prod.

The adjoint of a running sum is a running sum taken from the other end.  The
running product never divides by an element that is zero: before the first
zero of a line the usual ``ans / x`` holds, the first zero's gradient is the
running product with that zero left out, and everything after it has none.
"""
import numpy as np

from .registry import defjvp, defvjp
from .util import conj, shape_of


def flip(x, axis):
    """``x`` reversed along ``axis`` (by slicing, so tapes can follow it)."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def rev_cumsum(g, axis):
    """Sums from each position to the end of ``axis``: the adjoint of ``cumsum``."""
    return flip(np.cumsum(flip(g, axis), axis=axis), axis)


def along(x, axis):
    """``(x, axis)`` ready for a line-by-line scan; ``axis=None`` scans the flattened array."""
    if axis is None:
        return np.reshape(x, (-1,)), 0
    return x, axis % max(len(shape_of(x)), 1)


def _zeros_split(x, axis):
    """Masks that locate each line's first zero: (before it, at it)."""
    zero = x == 0
    seen = np.cumsum(zero, axis=axis)
    return seen == 0, zero & (seen == 1)


def cumprod_vjp(g, ans, x, axis):
    before, first = _zeros_split(x, axis)
    without_first = np.cumprod(np.where(first, 1, x), axis=axis)
    return (rev_cumsum(g * conj(ans), axis) / conj(np.where(before, x, 1)) * before
            + rev_cumsum(g * conj(without_first), axis) * first)


def cumprod_jvp(t, ans, x, axis):
    before, first = _zeros_split(x, axis)
    without_first = np.cumprod(np.where(first, 1, x), axis=axis)
    t_first = np.sum(t * first, axis=axis, keepdims=True)
    return (ans * np.cumsum(t / np.where(before, x, 1) * before, axis=axis) * before
            + t_first * without_first * ~before)


def _cumsum_vjp(g, ans, x, axis=None, dtype=None, out=None):
    if axis is None:
        return np.reshape(rev_cumsum(g, 0), shape_of(x))
    return rev_cumsum(g, axis % len(shape_of(x)))


def _cumprod_vjp(g, ans, x, axis=None, dtype=None, out=None):
    xs, ax = along(x, axis)
    return np.reshape(cumprod_vjp(g, ans, xs, ax), shape_of(x))


def _cumprod_jvp(t, ans, x, axis=None, dtype=None, out=None):
    xs, ax = along(x, axis)
    return cumprod_jvp(along(t, axis)[0], ans, xs, ax)


defvjp(np.cumsum, _cumsum_vjp)
defjvp(np.cumsum, lambda t, ans, x, axis=None, dtype=None, out=None: np.cumsum(t, axis=axis))
defvjp(np.cumprod, _cumprod_vjp)
defjvp(np.cumprod, _cumprod_jvp)


# --- the array-API spellings: keyword-only axis, optional leading identity element ------------
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


defvjp(np.cumulative_sum, lambda g, ans, x, *, axis=None, dtype=None, out=None,
       include_initial=False: rev_cumsum(_drop_initial(g, _cumulative_axis(x, axis),
                                                      include_initial),
                                         _cumulative_axis(x, axis)))
defjvp(np.cumulative_sum, lambda t, ans, x, *, axis=None, dtype=None, out=None,
       include_initial=False: np.cumulative_sum(t, axis=axis, include_initial=include_initial))


def _cumulative_prod_vjp(g, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    ax = _cumulative_axis(x, axis)
    return cumprod_vjp(_drop_initial(g, ax, include_initial),
                       _drop_initial(ans, ax, include_initial), x, ax)


def _cumulative_prod_jvp(t, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    ax = _cumulative_axis(x, axis)
    inner = cumprod_jvp(t, _drop_initial(ans, ax, include_initial), x, ax)
    return _add_initial(inner, ax, include_initial)


defvjp(np.cumulative_prod, _cumulative_prod_vjp)
defjvp(np.cumulative_prod, _cumulative_prod_jvp)


# --- NaN-skipping versions: a NaN counts as 0 in a sum and as 1 in a product -----------------
defvjp(np.nancumsum, lambda g, ans, x, axis=None, dtype=None, out=None:
       _cumsum_vjp(g, ans, x, axis) * ~np.isnan(x))
defjvp(np.nancumsum, lambda t, ans, x, axis=None, dtype=None, out=None:
       np.cumsum(np.where(np.isnan(x), 0, t), axis=axis))
defvjp(np.nancumprod, lambda g, ans, x, axis=None, dtype=None, out=None:
       _cumprod_vjp(g, ans, np.where(np.isnan(x), 1, x), axis) * ~np.isnan(x))
defjvp(np.nancumprod, lambda t, ans, x, axis=None, dtype=None, out=None:
       _cumprod_jvp(np.where(np.isnan(x), 0, t), ans, np.where(np.isnan(x), 1, x), axis))
