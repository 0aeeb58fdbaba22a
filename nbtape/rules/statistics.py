"""Covariance and correlation matrices: np.cov and np.corrcoef.

With ``X`` the variables-by-observations matrix and ``Xc`` its centred copy,
``cov = Xc Xc^H / (N - ddof)``, so ``d cov`` pulls back to
``(G + G^H) Xc / (N - ddof)`` (the centring drops out, because the rows of
``Xc`` sum to zero).  ``corrcoef = cov / sqrt(d_i d_j)`` with ``d = diag(cov)``
adds the derivative of the normalisation.  Frequency and analytic weights
weight the centred observations; the analytic weights are differentiated too.
"""
import numpy as np

from ..extend import defjvp, defvjp
from .indexing import raw
from ..core.registry import defparam
from .util import conj, shape_of


def _rows(v, rowvar):
    """numpy's layout: at least 2-D, one variable per row."""
    v2 = np.reshape(v, (1, -1)) if len(shape_of(v)) < 2 else v
    return v2 if rowvar or shape_of(v2)[0] == 1 else np.swapaxes(v2, 0, 1)


def _weights(fweights, aweights):
    """numpy's observation weights w = fweights * aweights (None: unweighted)."""
    if fweights is None and aweights is None:
        return None
    w = 1.0 if fweights is None else np.asarray(raw(fweights), dtype=float)
    return w if aweights is None else w * aweights


def _layout(m, y, rowvar, w=None):
    """``(X centred, rows of m)``: both operands stacked as variables."""
    xm = _rows(m, rowvar)
    x = xm if y is None else np.concatenate([xm, _rows(y, rowvar)], axis=0)
    return x - _mean(x, w), shape_of(xm)[0]


def _mean(x, w):
    if w is None:
        return np.mean(x, axis=1, keepdims=True)
    return np.sum(x * w, axis=1, keepdims=True) / np.sum(w)


def _factor(x, bias, ddof, w=None, aweights=None):
    if ddof is None:
        ddof = 0 if bias else 1
    if w is None:
        return shape_of(x)[1] - ddof
    v1 = np.sum(w)
    if ddof == 0:
        return v1
    if aweights is None:
        return v1 - ddof
    return v1 - ddof * np.sum(w * aweights) / v1


def _square(g, k):
    return np.reshape(g, (k, k))


def _split(full, k_m, m, y, rowvar, which):
    part = full[:k_m] if which == 0 else full[k_m:]
    v = m if which == 0 else y
    if len(shape_of(v)) < 2:
        return np.reshape(part, shape_of(v))
    return part if rowvar or shape_of(v)[0] == 1 else np.swapaxes(part, 0, 1)


def cov_pullback(g, m, y, rowvar, bias, ddof, which, fweights=None, aweights=None):
    """Adjoint of ``np.cov`` for its first (``which=0``) or second operand.

    With weights, the centred observations are weighted: ``(G + G^H) Xc W / fact``
    (the weighted mean drops out as the plain one does, since ``Xc w = 0``).

    >>> m = np.array([[1.0, 2.0, 4.0]])
    >>> cov_pullback(np.array(1.0), m, None, True, False, None, 0)   # d var / d m
    array([[-1.33333333, -0.33333333,  1.66666667]])
    """
    w = _weights(fweights, aweights)
    xc, k_m = _layout(m, y, rowvar, w)
    k = shape_of(xc)[0]
    gk = _square(g, k)
    xw = xc if w is None else xc * w
    full = np.matmul(gk + conj(np.swapaxes(gk, 0, 1)), xw) / _factor(xc, bias, ddof, w, aweights)
    return _split(full, k_m, m, y, rowvar, which)


def _aweights_pullback(g, m, y, rowvar, bias, ddof, fweights, aweights):
    """Adjoint of the analytic weights: C = sum_k w_k xc_k xc_k^H / fact(a)."""
    w = _weights(fweights, aweights)
    f = 1.0 if fweights is None else np.asarray(raw(fweights), dtype=float)
    xc, _ = _layout(m, y, rowvar, w)
    gk = _square(g, shape_of(xc)[0])
    fact = _factor(xc, bias, ddof, w, aweights)
    c = np.matmul(xc * w, conj(np.swapaxes(xc, 0, 1))) / fact
    quad = np.real(np.sum(conj(xc) * np.matmul(gk, xc), axis=0))    # xc_k^H G xc_k
    if ddof is None:
        ddof = 0 if bias else 1
    v1 = np.sum(w)
    dfact = f if ddof == 0 else f * (1 - ddof * (2 * aweights / v1
                                                 - np.sum(w * aweights) / v1 ** 2))
    return f * quad / fact - np.real(np.sum(conj(gk) * c)) * dfact / fact


def _cov_vjp(which):
    def vjp(g, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
            aweights=None, *, dtype=None):
        if which == 6:
            return _aweights_pullback(g, m, y, rowvar, bias, ddof, fweights, aweights)
        return cov_pullback(g, m, y, rowvar, bias, ddof, which, fweights, aweights)
    return vjp


def _cov_tangent(tm, ty, m, y, rowvar, bias, ddof, ans, fweights=None, aweights=None):
    w = _weights(fweights, aweights)
    xc, _ = _layout(m, y, rowvar, w)
    tm = np.zeros(shape_of(m)) if tm is None else tm
    tx = _rows(tm, rowvar)
    if y is not None:
        ty = np.zeros(shape_of(y)) if ty is None else ty
        tx = np.concatenate([tx, _rows(ty, rowvar)], axis=0)
    tc = tx - _mean(tx, w)
    d = np.matmul(tc if w is None else tc * w, conj(np.swapaxes(xc, 0, 1)))
    d = (d + conj(np.swapaxes(d, 0, 1))) / _factor(xc, bias, ddof, w, aweights)
    return np.reshape(d, shape_of(ans))


def _aweights_tangent(t, m, y, rowvar, bias, ddof, ans, fweights, aweights):
    w = _weights(fweights, aweights)
    f = 1.0 if fweights is None else np.asarray(raw(fweights), dtype=float)
    xc, _ = _layout(m, y, rowvar, w)
    fact = _factor(xc, bias, ddof, w, aweights)
    if ddof is None:
        ddof = 0 if bias else 1
    v1 = np.sum(w)
    dfact = f if ddof == 0 else f * (1 - ddof * (2 * aweights / v1
                                                 - np.sum(w * aweights) / v1 ** 2))
    c = np.matmul(xc * w, conj(np.swapaxes(xc, 0, 1))) / fact
    d = np.matmul(xc * (f * t), conj(np.swapaxes(xc, 0, 1))) / fact - c * np.sum(dfact * t) / fact
    return np.reshape(d, shape_of(ans))


def _cov_jvp(which):
    def jvp(t, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
            aweights=None, *, dtype=None):
        if which == 6:
            return _aweights_tangent(t, m, y, rowvar, bias, ddof, ans, fweights, aweights)
        tm, ty = (t, None) if which == 0 else (None, t)
        return _cov_tangent(tm, ty, m, y, rowvar, bias, ddof, ans, fweights, aweights)
    return jvp


# operands: m, y and aweights; a tensor at rowvar, bias, ddof or fweights (integers) refuses
defvjp(np.cov, _cov_vjp(0), _cov_vjp(1))
defjvp(np.cov, _cov_jvp(0), _cov_jvp(1))
defparam(np.cov, "aweights", _cov_vjp(6), _cov_jvp(6))


# --- corrcoef: R = C / (s s^T), s = sqrt(diag C)
def _corr_parts(m, y, rowvar):
    xc, _ = _layout(m, y, rowvar)
    c = np.matmul(xc, conj(np.swapaxes(xc, 0, 1))) / _factor(xc, False, None)
    s = np.sqrt(np.real(np.diagonal(c)))
    return c, s


def _corr_to_cov_adjoint(g, m, y, rowvar):
    c, s = _corr_parts(m, y, rowvar)
    k = shape_of(c)[0]
    gk = _square(g, k)
    outer = s[:, None] * s[None, :]
    r = c / outer
    # R_ij depends on C_kk through s_k: dR_ij/dC_kk = -R_ij (d_ik + d_jk) / (2 C_kk)
    pull = np.real(gk * conj(r))
    diag = -(np.sum(pull, axis=1) + np.sum(pull, axis=0)) / (2 * s ** 2)
    return gk / outer + np.eye(k) * diag[None, :]


def _corr_vjp(which):
    def vjp(g, ans, x, y=None, rowvar=True, *, dtype=None):
        gc = _corr_to_cov_adjoint(g, x, y, rowvar)
        return cov_pullback(gc, x, y, rowvar, False, None, which)
    return vjp


def _corr_jvp(which):
    def jvp(t, ans, x, y=None, rowvar=True, *, dtype=None):
        c, s = _corr_parts(x, y, rowvar)
        tm, ty = (t, None) if which == 0 else (None, t)
        dc = _cov_tangent(tm, ty, x, y, rowvar, False, None, c)
        ds = np.real(np.diagonal(dc)) / (2 * s)
        outer = s[:, None] * s[None, :]
        dr = dc / outer - (c / outer) * (ds[:, None] / s[:, None] + ds[None, :] / s[None, :])
        return np.reshape(dr, shape_of(ans))
    return jvp


defvjp(np.corrcoef, _corr_vjp(0), _corr_vjp(1))
defjvp(np.corrcoef, _corr_jvp(0), _corr_jvp(1))
