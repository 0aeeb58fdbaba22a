"""``np.linalg`` factorizations: cholesky, svd (and svdvals), qr.

cholesky reads the lower triangle of its input (the upper one with ``upper=True``),
and ``svd(hermitian=True)`` reads the lower triangle: their gradients live there
(``matrix_util.triangle_adjoint``).  Singular-vector gradients need distinct
singular values (where two are equal and the adjoint or tangent couples their
vectors, the result is NaN, which the NaN warning names) and see no sign or phase
numpy picks.  The extra columns of a complete factor (``svd`` with
``full_matrices=True`` or ``qr`` with ``mode='complete'`` of a non-square matrix)
are not determined by the matrix: a gradient that reaches them is refused, and one
that does not (singular values only, R only) is given.
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..diagnostics.errors import NoGradientRuleError
from .matrix_util import (col, defmatrix, diag, eye_like, gaps, hermitian, is_complex, operands,
                          safe_inv, triangle_adjoint, undetermined)
from ..core.registry import defvariant, numpy_function
from .util import H, shape_of


# --- cholesky: A = L L^H --------------------------------------------------------------------
def _phi(x):
    """The lower triangle with the diagonal halved."""
    return np.tril(x) - 0.5 * x * eye_like(x)


def _cholesky_vjp(g, ans, a, upper=False):
    low, gl = (H(ans), H(g)) if upper else (ans, g)
    inv = np.linalg.inv(low)
    return triangle_adjoint(H(inv) @ _phi(H(low) @ gl) @ inv, lower=not upper)


def _cholesky_jvp(t, ans, a, upper=False):
    low = H(ans) if upper else ans
    inv = np.linalg.inv(low)
    dl = low @ _phi(inv @ hermitian(t, lower=not upper) @ H(inv))
    return H(dl) if upper else dl


defvjp(np.linalg.cholesky, _cholesky_vjp)
defjvp(np.linalg.cholesky, _cholesky_jvp)


# --- singular values: d s_i = Re(u_i^H dA v_i) ----------------------------------------------
# On tensors the SVD below is an op with its own rule, so a second derivative
# follows it (and says so where it cannot).
def _svd(a):
    return np.linalg.svd(a, full_matrices=False)


def _s_adjoint(g, a):
    u, s, vh = _svd(a)
    return (u * g[..., None, :]) @ vh


def _s_tangent(t, a):
    u, s, vh = _svd(a)
    return np.real(diag(H(u) @ t @ H(vh)))


svdvals = numpy_function("linalg.svdvals")           # numpy 2 only
defvjp(svdvals, lambda g, ans, x: _s_adjoint(g, x))
defjvp(svdvals, lambda t, ans, x: _s_tangent(t, x))


def _reads(a, hermitian_):
    return hermitian(a) if hermitian_ else a


def _svd_s_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    ga = _s_adjoint(g, _reads(a, hermitian))
    return triangle_adjoint(ga) if hermitian else ga


def _svd_s_jvp(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    return _s_tangent(_reads(t, hermitian), _reads(a, hermitian))


# --- svd: A = U diag(s) V^H -----------------------------------------------------------------
def _svd_options(args, kw):
    _, full, _, herm = operands(args, kw, ("a", "full_matrices", "compute_uv", "hermitian"))
    return full is None or full, bool(herm)


def _nonzero(x):
    return bool(np.any(x != 0))


def _refuse_extra(what, option, instead):
    return NoGradientRuleError(
        f"nbtape's gradient for {what} does not reach the extra columns of the complete "
        f"factor ({option}) of a non-square matrix: they are not determined by the matrix. "
        f"Use {instead}, or use only the singular values / the part of the factor that the "
        "reduced form has.")


_SVD_REFUSAL = ("np.linalg.svd", "full_matrices=True", "full_matrices=False")


def _thin_svd_adjoints(g, ans, m, n):
    """The reduced factors and their adjoints; refuses an adjoint on the extra columns."""
    u, s, vh = ans
    gu, gs, gvh = g
    k = min(m, n)
    if shape_of(u)[-1] != k or shape_of(vh)[-2] != k:      # full_matrices=True, non-square
        if _nonzero(gu[..., k:]) or _nonzero(gvh[..., k:, :]):
            raise _refuse_extra(*_SVD_REFUSAL)
        u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
    return u, s, vh, gu, gs, gvh


def _svd_vjp(g, ans, args, kw, needs):
    a = operands(args, kw, ("a",))[0]
    full, herm = _svd_options(args, kw)
    m, n = shape_of(a)[-2:]
    u, s, vh, gu, gs, gvh = _thin_svd_adjoints(g, ans, m, n)
    a = _reads(a, herm)
    gv = H(gvh)
    v, s_inv = H(vh), safe_inv(s)
    f = gaps(s ** 2)
    uu, vv = H(u) @ gu, vh @ gv
    j, k = f * uu, f * vv
    inner = (col(gs) * eye_like(u[..., :1, :]) + (j + H(j)) * s[..., None, :]
             + col(s) * (k + H(k)))
    # repeated singular values: NaN where the adjoints couple two of their vectors (as eigh)
    inner = np.where(undetermined(s ** 2, uu) | undetermined(s ** 2, vv), np.nan, inner)
    if is_complex(u):       # the phase that numpy's gauge leaves to U
        inner = inner + 1j * np.imag(diag(H(u) @ gu))[..., None] \
            * s_inv[..., None] * eye_like(u[..., :1, :])
    ga = u @ inner @ vh
    if m > n:
        ga = ga + (gu - u @ (H(u) @ gu)) * s_inv[..., None, :] @ vh
    if n > m:
        ga = ga + u @ (s_inv[..., :, None] * H(gv - v @ (vh @ gv)))
    return [triangle_adjoint(ga) if herm else ga]


def _svd_jvp(ts, ans, args, kw):
    a, t = operands(args, kw, ("a",))[0], ts[0]
    full, herm = _svd_options(args, kw)
    m, n = shape_of(a)[-2:]
    a, t = _reads(a, herm), _reads(t, herm)
    u, s, vh = ans
    k = min(m, n)
    extra = full and m != n
    if extra:
        u, vh = u[..., :k], vh[..., :k, :]
    v, s_inv, f = H(vh), safe_inv(s), gaps(s ** 2)
    dp = H(u) @ t @ v
    ds = np.real(diag(dp))
    dps, sdp = dp * s[..., None, :], col(s) * dp
    tied = undetermined(s ** 2, dp)         # a tangent that couples two of a repeated s
    du = u @ np.where(tied, np.nan, f * (dps + H(dps)))
    dv = v @ np.where(tied, np.nan, f * (sdp + H(sdp)))
    if is_complex(u):
        du = du + u * (1j * np.imag(diag(dp)) * s_inv)[..., None, :]
    if m > n:
        du = du + (t @ v - u @ dp) * s_inv[..., None, :]
    if n > m:
        dv = dv + (H(t) @ u - v @ H(dp)) * s_inv[..., None, :]
    if extra:               # the singular values' tangent alone is determined
        return _refuse_extra(*_SVD_REFUSAL), ds, _refuse_extra(*_SVD_REFUSAL)
    return du, ds, H(dv)


defmatrix(np.linalg.svd, _svd_vjp, _svd_jvp)
def _values_only(args, kw):
    compute_uv = operands(args, kw, ("a", "full_matrices", "compute_uv"))[2]
    return compute_uv is not None and not compute_uv


defvariant(np.linalg.svd, _values_only, "np.linalg.svd (compute_uv=False)",
           _svd_s_vjp, _svd_s_jvp)


# --- qr: A = Q R -----------------------------------------------------------------------------
def _qr_mode(args, kw):
    return operands(args, kw, ("a", "mode"))[1] or "reduced"


def _refuse_mode(mode):
    if mode not in ("reduced", "complete", "r"):
        raise NoGradientRuleError(
            f"nbtape's gradient for np.linalg.qr does not support mode={mode!r} (its result is "
            "LAPACK's raw factors): use mode='reduced', 'complete' or 'r'.")


def _copyltu(y):
    """The adjoint of X = tril(C, -1) - tril(C, -1)^H (+ i Im diag C): Q^H dQ from C."""
    out = np.tril(y - H(y), -1)
    if is_complex(y):
        out = out + 1j * np.imag(y) * eye_like(y)
    return out


def _rank_deficient(r):
    """A (numerically) zero on R's diagonal: A's leading columns are dependent, Q is
    not determined by A there, and QR has no derivative."""
    d = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    big = np.max(np.abs(r), axis=(-2, -1))[..., None]
    return bool(np.any(d <= 100 * shape_of(r)[-1] * np.finfo(np.float64).eps * big))


def _qr_singular():
    return NoGradientRuleError(
        "np.linalg.qr has no derivative at this matrix: its columns are linearly dependent "
        "(R has a zero on its diagonal), so Q is not determined by the matrix there. nbtape "
        "cannot give a gradient through this call; QR of a matrix of full column rank has "
        "one.")


def _qr_square_or_tall(q, r, gq, gr):
    if _rank_deficient(r):
        raise _qr_singular()
    qgq, rgr = H(q) @ gq, gr @ H(r)
    gc = rgr + _copyltu(qgq - rgr)
    b = gq + q @ (gc - qgq)
    return H(np.linalg.solve(r, H(b)))      # b R^-H


def _qr_adjoint(a, q, r, gq, gr):
    """The adjoint of A from those of its reduced factors Q (m x k) and R (k x n).

    A wide A = [X | Y] is Q [U | V]: X = Q U is a square QR, and Y = Q V moves Q's
    adjoint by Y gV^H (TensorFlow's rule).
    """
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_square_or_tall(q, r, gq, gr)
    y, u, gu, gv = a[..., :, m:], r[..., :, :m], gr[..., :, :m], gr[..., :, m:]
    gx = _qr_square_or_tall(q, u, gq + y @ H(gv), gu)
    return np.concatenate([gx, q @ gv], axis=-1)


def _qr_tangent(a, t, q, r):
    """The tangents of the reduced factors (Q, R) along ``t``."""
    m, n = shape_of(a)[-2:]
    if m < n:
        dq, du = _qr_tangent(a[..., :, :m], t[..., :, :m], q, r[..., :, :m])
        dv = H(dq) @ a[..., :, m:] + H(q) @ t[..., :, m:]
        return dq, np.concatenate([du, dv], axis=-1)
    if _rank_deficient(r):          # forward mode stops the tangents, the values run
        raise _qr_singular()
    c = H(np.linalg.solve(H(r), H(H(q) @ t)))   # Q^H dA R^-1
    low = np.tril(c, -1)
    x = low - H(low)
    if is_complex(c):
        x = x + 1j * np.imag(c) * eye_like(c)
    dq = q @ x + (t - q @ (H(q) @ t)) @ np.linalg.inv(r)
    return dq, (c - x) @ r


_QR_REFUSAL = ("np.linalg.qr", "mode='complete'", "mode='reduced'")


def _qr_vjp(g, ans, args, kw, needs):
    a = operands(args, kw, ("a",))[0]
    mode = _qr_mode(args, kw)
    _refuse_mode(mode)
    m, n = shape_of(a)[-2:]
    (q, r), (gq, gr) = ans, g
    if mode == "complete" and m > n:
        if _nonzero(gq[..., n:]):
            raise _refuse_extra(*_QR_REFUSAL)
        q, r, gq, gr = q[..., :n], r[..., :n, :], gq[..., :n], gr[..., :n, :]
    return [_qr_adjoint(a, q, r, gq, gr)]


def _qr_jvp(ts, ans, args, kw):
    a = operands(args, kw, ("a",))[0]
    mode = _qr_mode(args, kw)
    _refuse_mode(mode)
    m, n = shape_of(a)[-2:]
    q, r = ans
    if mode == "complete" and m > n:
        dq, dr = _qr_tangent(a, ts[0], q[..., :n], r[..., :n, :])
        pad = [(0, 0)] * (len(shape_of(dr)) - 2) + [(0, m - n), (0, 0)]
        return _refuse_extra(*_QR_REFUSAL), np.pad(dr, pad)
    return _qr_tangent(a, ts[0], q, r)


def _qr_r_vjp(g, ans, a, mode="reduced"):
    q, r = np.linalg.qr(a)
    return _qr_adjoint(a, q, r, np.zeros_like(q), g)


def _qr_r_jvp(t, ans, a, mode="reduced"):
    return _qr_tangent(a, t, *np.linalg.qr(a))[1]


defmatrix(np.linalg.qr, _qr_vjp, _qr_jvp)
defvariant(np.linalg.qr, lambda args, kw: _qr_mode(args, kw) == "r",
           "np.linalg.qr (mode='r')", _qr_r_vjp, _qr_r_jvp)
