"""Covariance and correlation matrices: np.cov and np.corrcoef.

With ``X`` the variables-by-observations matrix and ``Xc`` its centred copy,
``cov = Xc Xc^H / (N - ddof)``, so ``d cov`` pulls back to
``(G + G^H) Xc / (N - ddof)`` (the centring drops out, because the rows of
``Xc`` sum to zero).  ``corrcoef = cov / sqrt(d_i d_j)`` with ``d = diag(cov)``
adds the derivative of the normalisation.  Frequency and analytic weights are
not supported (a gradient through them raises).
"""
import numpy as np

from .reductions import refuse
from .registry import defjvp, defvjp
from .util import conj, shape_of


def _rows(v, rowvar):
    """numpy's layout: at least 2-D, one variable per row."""
    v2 = np.reshape(v, (1, -1)) if len(shape_of(v)) < 2 else v
    return v2 if rowvar or shape_of(v2)[0] == 1 else np.swapaxes(v2, 0, 1)


def _layout(m, y, rowvar):
    """``(X centred, rows of m)``: both operands stacked as variables."""
    xm = _rows(m, rowvar)
    x = xm if y is None else np.concatenate([xm, _rows(y, rowvar)], axis=0)
    return x - np.mean(x, axis=1, keepdims=True), shape_of(xm)[0]


def _factor(x, bias, ddof):
    if ddof is None:
        ddof = 0 if bias else 1
    return shape_of(x)[1] - ddof


def _square(g, k):
    return np.reshape(g, (k, k))


def _split(full, k_m, m, y, rowvar, which):
    part = full[:k_m] if which == 0 else full[k_m:]
    v = m if which == 0 else y
    if len(shape_of(v)) < 2:
        return np.reshape(part, shape_of(v))
    return part if rowvar or shape_of(v)[0] == 1 else np.swapaxes(part, 0, 1)


def cov_pullback(g, m, y, rowvar, bias, ddof, which):
    """Adjoint of ``np.cov`` for its first (``which=0``) or second operand.

    >>> m = np.array([[1.0, 2.0, 4.0]])
    >>> cov_pullback(np.array(1.0), m, None, True, False, None, 0)   # d var / d m
    array([[-1.33333333, -0.33333333,  1.66666667]])
    """
    xc, k_m = _layout(m, y, rowvar)
    k = shape_of(xc)[0]
    gk = _square(g, k)
    full = np.matmul(gk + conj(np.swapaxes(gk, 0, 1)), xc) / _factor(xc, bias, ddof)
    return _split(full, k_m, m, y, rowvar, which)


def _weights_refused(fweights, aweights, name):
    if fweights is not None or aweights is not None:
        refuse(name, "fweights= or aweights=")


def _cov_vjp(which):
    def vjp(g, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
            aweights=None, *, dtype=None):
        _weights_refused(fweights, aweights, "np.cov")
        return cov_pullback(g, m, y, rowvar, bias, ddof, which)
    return vjp


def _cov_tangent(tm, ty, m, y, rowvar, bias, ddof, ans):
    xc, _ = _layout(m, y, rowvar)
    tm = np.zeros(shape_of(m)) if tm is None else tm
    tx = _rows(tm, rowvar)
    if y is not None:
        ty = np.zeros(shape_of(y)) if ty is None else ty
        tx = np.concatenate([tx, _rows(ty, rowvar)], axis=0)
    tc = tx - np.mean(tx, axis=1, keepdims=True)
    d = np.matmul(tc, conj(np.swapaxes(xc, 0, 1)))
    d = (d + conj(np.swapaxes(d, 0, 1))) / _factor(xc, bias, ddof)
    return np.reshape(d, shape_of(ans))


defvjp(np.cov, _cov_vjp(0), _cov_vjp(1))
defjvp(np.cov,
       lambda t, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
       aweights=None, *, dtype=None: _cov_tangent(t, None, m, y, rowvar, bias, ddof, ans),
       lambda t, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
       aweights=None, *, dtype=None: _cov_tangent(None, t, m, y, rowvar, bias, ddof, ans))


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
