"""Differences and integrals along an axis: diff, ediff1d, trapezoid (numpy 1: trapz).

All three are linear in their data, so the VJP is the transposed stencil: the
adjoint of ``y_i = x_{i+1} - x_i`` is ``xbar_k = ybar_{k-1} - ybar_k`` (with
zeros past either end).  ``trapezoid`` is also differentiable in the sample
points ``x`` and the spacing ``dx``.
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..core.registry import defalias, defparam, numpy_function
from .util import conj, given, shape_of


def _slab(v, axis, length):
    """Zeros shaped like ``v`` but ``length`` long along ``axis``."""
    shape = list(shape_of(v))
    shape[axis] = length
    return np.zeros(shape, dtype=np.result_type(v))


def diff_transpose(g, axis):
    """Adjoint of one ``np.diff`` step along ``axis``.

    >>> diff_transpose(np.array([1.0, 10.0]), 0)      # np.diff of [a, b, c] is [b-a, c-b]
    array([-1., -9., 10.])
    """
    zero = _slab(g, axis, 1)
    return np.concatenate([zero, g], axis=axis) - np.concatenate([g, zero], axis=axis)


def _extra(v, axis):
    """How many elements ``prepend``/``append`` add along ``axis`` (a scalar adds one)."""
    if not given(v):
        return 0
    return 1 if np.ndim(v) == 0 else shape_of(v)[axis]


def _diff_adjoint(g, a, n, axis, prepend, append):
    """The adjoint of ``concatenate([prepend, a, append])``, and where ``a`` starts in it."""
    ax = axis % len(shape_of(a))
    for _ in range(n):
        g = diff_transpose(g, ax)
    return g, ax, _extra(prepend, ax)


def _along(ax, start, stop):
    return (slice(None),) * ax + (slice(start, stop),)


def _diff_vjp(g, ans, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    g, ax, start = _diff_adjoint(g, a, n, axis, prepend, append)
    return g[_along(ax, start, start + shape_of(a)[ax])]


def _diff_vjp_prepend(g, ans, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    g, ax, start = _diff_adjoint(g, a, n, axis, prepend, append)
    return g[_along(ax, 0, start)]      # a scalar prepend: the engine sums the slab


def _diff_vjp_append(g, ans, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    g, ax, start = _diff_adjoint(g, a, n, axis, prepend, append)
    return g[_along(ax, start + shape_of(a)[ax], None)]


def _diff_tangent(part, t, a, n, axis, prepend, append):
    """The tangent of ``np.diff`` from the tangent ``t`` of one part (0 a, 1 prepend, 2 append)."""
    ax = axis % len(shape_of(a))
    shapes = [list(shape_of(a)) for _ in range(3)]
    shapes[0][ax], shapes[2][ax] = _extra(prepend, ax), _extra(append, ax)
    dtype = np.result_type(t)
    pieces = [np.zeros(s, dtype) for s in shapes]
    pieces[(1, 0, 2)[part]] = t if part == 0 else np.broadcast_to(t, shapes[(1, 0, 2)[part]])
    return np.diff(np.concatenate(pieces, axis=ax), n=n, axis=ax)


def _diff_jvp(part):
    def jvp(t, ans, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
        return _diff_tangent(part, t, a, n, axis, prepend, append)
    return jvp


defvjp(np.diff, _diff_vjp)
defjvp(np.diff, _diff_jvp(0))
defparam(np.diff, "prepend", _diff_vjp_prepend, _diff_jvp(1))
defparam(np.diff, "append", _diff_vjp_append, _diff_jvp(2))


# ediff1d(a, to_end, to_begin) = [*to_begin, *diff(a.ravel()), *to_end]
def _sizes(to_end, to_begin):
    return (0 if to_end is None else int(np.size(to_end)),
            0 if to_begin is None else int(np.size(to_begin)))


def _ediff_vjp_a(g, ans, ary, to_end=None, to_begin=None):
    size = int(np.prod(shape_of(ary), dtype=np.int64))
    if size == 0:
        return np.zeros(shape_of(ary))
    ne, nb = _sizes(to_end, to_begin)
    middle = g[nb:shape_of(g)[0] - ne]
    return np.reshape(diff_transpose(middle, 0), shape_of(ary))


def _ediff_jvp_a(t, ans, ary, to_end=None, to_begin=None):
    ne, nb = _sizes(to_end, to_begin)
    inner = np.diff(np.reshape(t, (-1,)))
    return np.concatenate([np.zeros(nb), inner, np.zeros(ne)])


def _ediff_jvp_end(t, ans, ary, to_end=None, to_begin=None):
    ne = _sizes(to_end, to_begin)[0]
    return np.concatenate([np.zeros(shape_of(ans)[0] - ne), np.reshape(t, (-1,))])


def _ediff_jvp_begin(t, ans, ary, to_end=None, to_begin=None):
    nb = _sizes(to_end, to_begin)[1]
    return np.concatenate([np.reshape(t, (-1,)), np.zeros(shape_of(ans)[0] - nb)])


defvjp(np.ediff1d, _ediff_vjp_a,
       lambda g, ans, ary, to_end=None, to_begin=None:
       np.reshape(g[shape_of(g)[0] - _sizes(to_end, to_begin)[0]:], shape_of(to_end)),
       lambda g, ans, ary, to_end=None, to_begin=None:
       np.reshape(g[:_sizes(to_end, to_begin)[1]], shape_of(to_begin)))
defjvp(np.ediff1d, _ediff_jvp_a, _ediff_jvp_end, _ediff_jvp_begin)


# --- trapezoid: sum_i (x_{i+1} - x_i) (y_i + y_{i+1}) / 2 ------------------------------------
def _trap_layout(y, x, dx, axis):
    """``(axis, y with axis last, spacings d, weight of each y)``."""
    ax = axis % len(shape_of(y))
    yl = np.moveaxis(y, ax, -1)
    n = shape_of(yl)[-1]
    if x is None:
        ends = np.ones(n)
        if n >= 2:
            ends[0] = ends[-1] = 0.5
        else:
            ends[:] = 0.0
        return ax, yl, None, ends * dx
    xl = x if np.ndim(x) == 1 else np.moveaxis(x, ax, -1)
    d = _fit(xl[..., 1:] - xl[..., :-1], n - 1)
    zero = np.zeros(shape_of(d)[:-1] + (1,))
    return ax, yl, d, (np.concatenate([zero, d], axis=-1) + np.concatenate([d, zero], axis=-1)) / 2


def _fit(v, length):
    """``v`` made ``length`` long on its last axis, as numpy's broadcasting of the
    spacings against the pairs of samples reads it when one of them has length 1
    (``x`` of 2 points, or ``y`` of 2 samples): summed down to 1, or repeated."""
    k = shape_of(v)[-1]
    if k == length:
        return v
    return np.sum(v, axis=-1, keepdims=True) if length == 1 else v * np.ones(length)


def _x_coefficient(yl, k):
    """d trapezoid / d x_j = s_{j-1} - s_j, with s the mean of neighbouring y (fitted
    to the ``k`` spacings of x)."""
    s = _fit((yl[..., 1:] + yl[..., :-1]) / 2, k)
    zero = np.zeros(shape_of(s)[:-1] + (1,))
    return np.concatenate([zero, s], axis=-1) - np.concatenate([s, zero], axis=-1)


def _per_output(g):
    return np.reshape(g, shape_of(g) + (1,))


def _trap_vjp_y(g, ans, y, x=None, dx=1.0, axis=-1):
    ax, yl, d, w = _trap_layout(y, x, dx, axis)
    return np.moveaxis(_per_output(g) * conj(w), -1, ax)


def _trap_vjp_x(g, ans, y, x=None, dx=1.0, axis=-1):
    ax, yl, d, w = _trap_layout(y, x, dx, axis)
    full = _per_output(g) * conj(_x_coefficient(yl, _spacings(x, ax)))
    if np.ndim(x) == 1:
        return np.sum(full, axis=tuple(range(len(shape_of(full)) - 1)))
    return np.moveaxis(full, -1, ax)


def _trap_vjp_dx(g, ans, y, x=None, dx=1.0, axis=-1):
    if x is not None:               # numpy ignores dx when x is given
        return np.sum(g) * 0.0
    ax, yl, d, w = _trap_layout(y, None, 1.0, axis)
    return np.sum(g * conj(np.sum(yl * w, axis=-1)))


def _trap_jvp_x(t, ans, y, x=None, dx=1.0, axis=-1):
    ax, yl, d, w = _trap_layout(y, x, dx, axis)
    tl = t if np.ndim(t) == 1 else np.moveaxis(t, ax, -1)
    return np.sum(tl * _x_coefficient(yl, _spacings(x, ax)), axis=-1)


def _spacings(x, ax):
    return shape_of(x)[-1 if np.ndim(x) == 1 else ax] - 1


# numpy 2.0 renamed trapz to trapezoid; trapz was deprecated, then removed in 2.4
trapezoid = numpy_function("trapezoid") or numpy_function("trapz")
defvjp(trapezoid, _trap_vjp_y, _trap_vjp_x, _trap_vjp_dx)
defjvp(trapezoid,
       lambda t, ans, y, x=None, dx=1.0, axis=-1: trapezoid(t, x, dx, axis),
       _trap_jvp_x,
       lambda t, ans, y, x=None, dx=1.0, axis=-1:
       t * (trapezoid(y, None, 1.0, axis) if x is None else 0.0))
defalias(numpy_function("trapz"), trapezoid)
