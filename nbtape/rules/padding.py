"""np.pad modes beyond selections: linear_ramp, mean, maximum, minimum, median, and
reflect/symmetric with ``reflect_type='odd'`` (constant and the selecting modes
live with np.pad's rule in ``shapes.py``).

numpy pads one axis after another (each later axis sees the earlier ones'
padding), so the rules do too.  For one axis, the linear modes (the ramp's end
values are constants) are a matrix ``D`` on every line, read from numpy itself as
the padding of the identity; maximum, minimum and median copy one element (or
average two) of a chunk, so their weights come from the values.
"""
import numpy as np

from ..diagnostics.errors import NoGradientRuleError
from .indexing import raw
from .util import shape_of

_LINEAR = ("linear_ramp", "mean", "reflect", "symmetric")
_STATS = {"maximum": np.max, "minimum": np.min, "median": np.median}


def supported(mode, kw):
    """Whether these rules handle ``mode`` (else: refuse by name).

    >>> supported("median", {})
    True
    """
    if mode in ("linear_ramp", "mean") or mode in _STATS:
        return True
    if mode in ("reflect", "symmetric") and kw.get("reflect_type", "even") == "odd":
        return True
    raise NoGradientRuleError(
        f"nbtape's gradient for np.pad does not support mode={mode!r}"
        + (" (its padding is uninitialized memory)" if mode == "empty" else "")
        + ": use 'constant', 'edge', 'reflect', 'symmetric', 'wrap', 'linear_ramp', "
        "'mean', 'maximum', 'minimum' or 'median'.")


def _pairs(v, nd):
    v = raw(v)
    if isinstance(v, dict):                     # numpy >= 2.4: {axis: width}
        out = np.zeros((nd, 2), dtype=int)
        for ax, w in v.items():
            out[ax % nd] = np.broadcast_to(w, (2,))
        return out
    return np.broadcast_to(np.asarray(v), (nd, 2))


def _steps(array, pad_width, mode, kw):
    """One ``(axis, before, after, stat lengths)`` per axis padded."""
    shape = shape_of(array)
    nd = len(shape)
    widths = _pairs(pad_width, nd)
    stats = kw.get("stat_length")
    lengths = _pairs(stats, nd) if stats is not None else None
    out = []
    for ax in range(nd):
        b, a = int(widths[ax][0]), int(widths[ax][1])
        if b or a:
            sl = (shape[ax], shape[ax]) if lengths is None else \
                tuple(min(int(s), shape[ax]) for s in lengths[ax])
            out.append((ax, b, a, sl))
    return out


def _matrix(n, b, a, sl, mode, kw):
    """The padding of one line of length n, as a (b + n + a) x n matrix."""
    opts = {}
    if mode == "mean":
        opts["stat_length"] = sl
    elif mode == "linear_ramp":
        opts["end_values"] = 0.0                # the ends are constants: no tangent
    else:
        opts["reflect_type"] = kw.get("reflect_type", "even")
    return np.pad(np.eye(n), ((b, a), (0, 0)), mode, **opts)


def _apply(d, v, ax):
    return np.moveaxis(np.tensordot(d, v, axes=([1], [ax])), 0, ax)


def _take(v, ax, start, stop):
    return v[(slice(None),) * ax + (slice(start, stop),)]


def _chunk_weights(chunk, mode, ax):
    """d stat(chunk) / d chunk along ``ax`` (ties share equally)."""
    if mode == "median":                # the middle element, or the mean of the middle two
        k = shape_of(chunk)[ax]
        order = np.argsort(chunk, axis=ax, kind="stable")
        w = np.zeros(shape_of(chunk))
        middle = sorted({(k - 1) // 2, k // 2})
        for r in middle:
            np.put_along_axis(w, _take(order, ax, r, r + 1), 1.0 / len(middle), ax)
        return w
    hit = chunk == _STATS[mode](chunk, axis=ax, keepdims=True)
    return hit / np.sum(hit, axis=ax, keepdims=True)


def _stat_weights(y, ax, b, a, sl, mode):
    """Weights of the left and right pads on the line elements (zero outside the chunks)."""
    n = shape_of(y)[ax]
    left, right = np.zeros(shape_of(y)), np.zeros(shape_of(y))
    idx = [slice(None)] * len(shape_of(y))
    if b:
        idx[ax] = slice(0, sl[0])
        left[tuple(idx)] = _chunk_weights(y[tuple(idx)], mode, ax)
    if a:
        idx[ax] = slice(n - sl[1], n)
        right[tuple(idx)] = _chunk_weights(y[tuple(idx)], mode, ax)
    return left, right


def _plan(array, pad_width, mode, kw):
    """Per axis: ``(axis, before, after, D)`` or ``(axis, before, after, (left, right))``."""
    y = np.asarray(raw(array))
    plan = []
    for ax, b, a, sl in _steps(y, pad_width, mode, kw):
        if mode in _STATS:
            plan.append((ax, b, a, _stat_weights(y, ax, b, a, sl, mode)))
            one = [(0, 0)] * y.ndim
            one[ax] = (b, a)
            y = np.pad(y, one, mode, stat_length=[sl if k == ax else (y.shape[k],) * 2
                                                  for k in range(y.ndim)])
        else:
            plan.append((ax, b, a, _matrix(shape_of(y)[ax], b, a, sl, mode, kw)))
            y = _apply(plan[-1][3], y, ax)
    return plan


def pad_vjp(g, array, pad_width, mode, kw):
    """The adjoint of ``np.pad(array, pad_width, mode, **kw)`` from the padded one's ``g``.

    >>> pad_vjp(np.ones(5), np.array([1.0, 2.0, 4.0]), 1, "mean", {})   # 2 pads of the mean
    array([1.66666667, 1.66666667, 1.66666667])
    """
    for ax, b, a, how in reversed(_plan(array, pad_width, mode, kw)):
        if isinstance(how, tuple):
            n = shape_of(g)[ax] - b - a
            gl = np.sum(_take(g, ax, 0, b), axis=ax, keepdims=True)
            gr = np.sum(_take(g, ax, b + n, b + n + a), axis=ax, keepdims=True)
            g = _take(g, ax, b, b + n) + how[0] * gl + how[1] * gr
        else:
            g = _apply(np.transpose(how), g, ax)
    return g


def pad_jvp(t, array, pad_width, mode, kw):
    """The tangent of ``np.pad(array, pad_width, mode, **kw)`` along ``t``.

    >>> pad_jvp(np.array([1.0, 0.0, 0.0]), np.array([1.0, 2.0, 4.0]), 1, "maximum", {})
    array([0., 1., 0., 0., 0.])
    """
    for ax, b, a, how in _plan(array, pad_width, mode, kw):
        if isinstance(how, tuple):
            size = list(shape_of(t))
            parts = []
            if b:
                size[ax] = b
                parts.append(np.broadcast_to(np.sum(how[0] * t, axis=ax, keepdims=True), size))
            parts.append(t)
            if a:
                size[ax] = a
                parts.append(np.broadcast_to(np.sum(how[1] * t, axis=ax, keepdims=True), size))
            t = np.concatenate(parts, axis=ax)
        else:
            t = _apply(how, t, ax)
    return t
