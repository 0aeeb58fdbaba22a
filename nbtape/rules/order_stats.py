"""Order statistics: median, quantile, percentile and their NaN-skipping versions.

Every numpy quantile method is, for a fixed sort order, a blend of two sorted
neighbours: ``(1 - gamma) * s[lo] + gamma * s[lo + 1]``.  Locally the quantile
is therefore a fixed linear combination of the input, and the gradient puts
those two weights on the two elements it took (one element if the value falls
exactly on it; tied elements are told apart by a stable sort).  The position
``lo + gamma`` is read off by applying the very same numpy function to
``0, 1, ..., n-1``, so every ``method=`` numpy offers is handled without
restating its formula.

The derivative with respect to ``q`` itself is supported for the default
``method="linear"``, where the position moves as ``q * (n - 1)``.
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..diagnostics.errors import NoGradientRuleError
from .util import flag, normalize_axis, refuse, shape_of, value_of


def _lines(xv, axes):
    """Move the reduced axes last and merge them: ``(lines, n)`` plus how to undo it."""
    shape = xv.shape
    rest = [a for a in range(xv.ndim) if a not in axes]
    perm = rest + list(axes)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    y = np.transpose(xv, perm).reshape(-1, n)
    moved = tuple(shape[a] for a in perm)
    return y, perm, moved


def _back(w, qshape, perm, moved):
    """Weights ``(Q, lines, n)`` back to ``q.shape + x.shape``."""
    w = w.reshape(qshape + moved)
    k = len(qshape)
    return np.transpose(w, tuple(range(k)) + tuple(k + p for p in np.argsort(perm)))


def quantile_weights(x, q, axis, method, nan, scale=1.0):
    """``(W, Wq)``: the value is ``sum(W * x)`` over the reduced axes, and its
    derivative in ``q`` (for ``method="linear"``) is ``sum(Wq * x)``; both have
    shape ``q.shape + x.shape``.

    >>> w, wq = quantile_weights(np.array([3.0, 1.0, 2.0]), 0.25, None, "linear", False)
    >>> w           # position 0.25 * (3 - 1) = 0.5: halfway between the sorted 1 and 2
    array([0. , 0.5, 0.5])
    """
    xv = value_of(x)
    qv = np.asarray(value_of(q), dtype=float) * scale
    axes = normalize_axis(axis, xv.ndim)
    y, perm, moved = _lines(xv, axes)
    lines, n = y.shape
    order = np.argsort(y, axis=-1, kind="stable")     # NaNs sort last
    isnan = np.isnan(y)
    counts = n - isnan.sum(axis=-1) if nan else np.full(lines, n)
    flat_q = qv.reshape(-1)
    w = np.zeros((flat_q.size, lines, n))
    wq = np.zeros_like(w)
    qi = np.arange(flat_q.size)[:, None]
    for c in np.unique(counts):
        if c == 0:
            continue
        rows = np.nonzero(counts == c)[0]
        pos = np.quantile(np.arange(c, dtype=float), flat_q, method=method)
        lo = np.floor(pos).astype(np.int64)
        gamma = pos - lo
        hi = np.minimum(lo + 1, c - 1)
        ri = rows[None, :]
        at_lo, at_hi = order[rows][:, lo].T, order[rows][:, hi].T
        np.add.at(w, (qi, ri, at_lo), (1 - gamma)[:, None])
        np.add.at(w, (qi, ri, at_hi), gamma[:, None])
        np.add.at(wq, (qi, ri, at_hi), float(c - 1))
        np.add.at(wq, (qi, ri, at_lo), -float(c - 1))
    if not nan:
        # numpy's answer for a line holding a NaN is NaN: so is its gradient
        w[:, isnan.any(axis=-1), :] = np.nan
    return _back(w, qv.shape, perm, moved), _back(wq, qv.shape, perm, moved)


def _kept_shape(x, q, axis, keepdims):
    shape = shape_of(x)
    axes = normalize_axis(axis, len(shape))
    return shape_of(q) + tuple(1 if i in axes else s for i, s in enumerate(shape))


def _check(name, method, weights, interpolation):
    if weights is not None:
        refuse(name, "weights= (weighted quantiles)")
    return interpolation if interpolation is not None else method


def _vjp_a(g, ans, x, q, axis, method, keepdims, nan, scale=1.0):
    w, _ = quantile_weights(x, q, axis, method, nan, scale)
    k = len(shape_of(q))
    gk = np.reshape(g, _kept_shape(x, q, axis, keepdims))
    return np.sum(gk * w, axis=tuple(range(k))) if k else gk * w


def _jvp_a(t, ans, x, q, axis, method, keepdims, nan, scale=1.0):
    w, _ = quantile_weights(x, q, axis, method, nan, scale)
    k = len(shape_of(q))
    axes = normalize_axis(axis, len(shape_of(x)))
    return np.sum(w * t, axis=tuple(k + a for a in axes), keepdims=flag(keepdims))


def _q_slope(x, q, axis, method, nan, scale, name):
    if method != "linear":
        raise NoGradientRuleError(
            f"nbtape differentiates {name} with respect to q only for method='linear' "
            f"(this call uses method={method!r}, whose position in the sorted data is not "
            "a smooth function of q). Keep q constant, or use method='linear'.")
    _, wq = quantile_weights(x, q, axis, method, nan, scale)
    k = len(shape_of(q))
    axes = normalize_axis(axis, len(shape_of(x)))
    if nan:
        x = np.where(np.isnan(x), 0.0, x)    # their weight is 0, and 0 * NaN would be NaN
    return np.sum(wq * x, axis=tuple(k + a for a in axes), keepdims=True) * scale


def _vjp_q(g, ans, x, q, axis, method, keepdims, nan, scale, name):
    slope = _q_slope(x, q, axis, method, nan, scale, name)
    gk = np.reshape(g, np.shape(slope))
    k = len(shape_of(q))
    return np.sum(gk * slope, axis=tuple(range(k, np.ndim(slope))))


def _jvp_q(t, ans, x, q, axis, method, keepdims, nan, scale, name):
    slope = _q_slope(x, q, axis, method, nan, scale, name)
    k = len(shape_of(q))
    extra = np.ndim(slope) - k
    tk = np.reshape(t, np.shape(t) + (1,) * extra)
    return np.reshape(tk * slope, shape_of(ans))


def _register(fn, nan, scale):
    name = "np." + fn.__name__

    def vjp_a(g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear",
              keepdims=False, *, weights=None, interpolation=None):
        return _vjp_a(g, ans, a, q, axis, _check(name, method, weights, interpolation),
                      keepdims, nan, scale)

    def vjp_q(g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear",
              keepdims=False, *, weights=None, interpolation=None):
        return _vjp_q(g, ans, a, q, axis, _check(name, method, weights, interpolation),
                      keepdims, nan, scale, name)

    def jvp_a(t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear",
              keepdims=False, *, weights=None, interpolation=None):
        return _jvp_a(t, ans, a, q, axis, _check(name, method, weights, interpolation),
                      keepdims, nan, scale)

    def jvp_q(t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear",
              keepdims=False, *, weights=None, interpolation=None):
        return _jvp_q(t, ans, a, q, axis, _check(name, method, weights, interpolation),
                      keepdims, nan, scale, name)

    defvjp(fn, vjp_a, vjp_q)
    defjvp(fn, jvp_a, jvp_q)


_register(np.quantile, nan=False, scale=1.0)
_register(np.nanquantile, nan=True, scale=1.0)
_register(np.percentile, nan=False, scale=0.01)
_register(np.nanpercentile, nan=True, scale=0.01)

# the median is the 0.5 quantile ("linear" averages the two middle values, as median does)
defvjp(np.median, lambda g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False:
       _vjp_a(g, ans, a, 0.5, axis, "linear", keepdims, False))
defjvp(np.median, lambda t, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False:
       _jvp_a(t, ans, a, 0.5, axis, "linear", keepdims, False))
defvjp(np.nanmedian, lambda g, ans, a, axis=None, out=None, overwrite_input=False,
       keepdims=False: _vjp_a(g, ans, a, 0.5, axis, "linear", keepdims, True))
defjvp(np.nanmedian, lambda t, ans, a, axis=None, out=None, overwrite_input=False,
       keepdims=False: _jvp_a(t, ans, a, 0.5, axis, "linear", keepdims, True))
