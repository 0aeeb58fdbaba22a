"""``np.linalg``: inverses, determinants, solves, factorizations and norms.

Matrix functions work on stacks of matrices (the last two axes); complex values
follow TensorFlow (conjugate transposes, ``_H``).  Caveats, as in TensorFlow:
cholesky and eigh read one triangle, and their gradients are those of f(sym(A))
(symmetric); eigenvector and singular-vector gradients need distinct
eigen/singular values (repeated ones drop the terms that would be infinite); svd
and qr are differentiated in their reduced forms only; the 2-norm of 0 gets the
zero subgradient instead of NaN.  Products and einsum live in ``products.py``.
"""
import numpy as np

from .products import _H, _ndim
from .registry import POSITIONAL, SEQUENCE, defjvp, defrule, defvjp, numpy_function, rule_for
from .util import conj, shape_of


# --- np.linalg: inverses and determinants -------------------------------------------------
def _eye_like(a):
    return np.eye(shape_of(a)[-1])


def _tr(m):
    return np.trace(m, axis1=-2, axis2=-1)


def _col(v):
    return v[..., None]


defvjp(np.linalg.inv, lambda g, ans, a: -_H(ans) @ g @ _H(ans))
defjvp(np.linalg.inv, lambda t, ans, a: -ans @ t @ ans)

# d det = det tr(A^-1 dA)
defvjp(np.linalg.det, lambda g, ans, a: _col(_col(g * conj(ans))) * _H(np.linalg.inv(a)))
defjvp(np.linalg.det, lambda t, ans, a: ans * _tr(np.linalg.solve(a, t)))


def _slogdet_vjp(g, ans, args, kw, needs):
    # d log|det| = Re tr(A^-1 dA); for complex A the sign (a phase) moves by
    # i sign Im tr(A^-1 dA), which adds -i Im(conj(g_sign) sign) to the scale.
    scale = g[1]
    if np.result_type(ans[0]).kind == "c":
        scale = scale - 1j * np.imag(conj(g[0]) * ans[0])
    return [_col(_col(scale)) * _H(np.linalg.inv(args[0]))]


def _slogdet_jvp(ts, ans, args, kw):
    d = _tr(np.linalg.solve(args[0], ts[0]))
    if np.result_type(ans[0]).kind == "c":
        return 1j * ans[0] * np.imag(d), np.real(d)
    return np.zeros_like(ans[0]), d


defrule(np.linalg.slogdet, _slogdet_vjp, _slogdet_jvp, kind=POSITIONAL, multi=True)


# solve(a, b): x = a^-1 b.  numpy 2 reads b as a vector only when it is 1-D; numpy 1
# whenever it has one axis fewer than a (then b may be a stack of vectors).
_NUMPY1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def _b_is_vector(a, b):
    return _ndim(b) == (_ndim(a) - 1 if _NUMPY1 else 1)


def _solve_vjps(g, ans, args, kw, needs):
    a, b = args[:2]
    vec = _b_is_vector(a, b)
    gb = np.linalg.solve(_H(a), _col(g) if vec else g)
    x = _col(ans) if vec else ans
    ga = -gb @ _H(x) if needs[0] else None
    return [ga, gb[..., 0] if vec else gb]


def _solve_jvp(ts, ans, args, kw):
    a, b = args[:2]
    ta, tb = ts[:2]
    vec = _b_is_vector(a, b)
    x = _col(ans) if vec else ans
    if tb is None:
        rhs = -ta @ x
    else:
        rhs = _col(tb) if vec else tb
        rhs = rhs if ta is None else rhs - ta @ x
    dx = np.linalg.solve(a, rhs)
    return dx[..., 0] if vec else dx


defrule(np.linalg.solve, _solve_vjps, _solve_jvp, kind=POSITIONAL, nargs=2)


def _pinv_vjp(g, ans, a, *args, **kw):
    p = ans
    return (-_H(p) @ g @ _H(p) + (np.eye(shape_of(a)[-2]) - a @ p) @ _H(g) @ p @ _H(p)
            + _H(p) @ p @ _H(g) @ (np.eye(shape_of(a)[-1]) - p @ a))


def _pinv_jvp(t, ans, a, *args, **kw):
    p = ans
    return (-p @ t @ p + p @ _H(p) @ _H(t) @ (np.eye(shape_of(a)[-2]) - a @ p)
            + (np.eye(shape_of(a)[-1]) - p @ a) @ _H(t) @ _H(p) @ p)


# valid where the rank does not change (Golub and Pereyra)
defvjp(np.linalg.pinv, _pinv_vjp)
defjvp(np.linalg.pinv, _pinv_jvp)


# matrix_power: d(A^n) = sum_k A^k dA A^(n-1-k); negative n goes through inv(A)
def _power_terms(left, middle, right, n):
    total, lp = None, None
    for k in range(n):
        term = middle if lp is None else lp @ middle
        rest = np.linalg.matrix_power(right, n - 1 - k)
        term = term @ rest
        total = term if total is None else total + term
        lp = left if lp is None else lp @ left
    return total


def _matrix_power_vjp(g, ans, a, n):
    if n == 0:
        return np.zeros_like(g)
    if n > 0:
        return _power_terms(_H(a), g, _H(a), n)
    b = np.linalg.inv(a)
    gb = _power_terms(_H(b), g, _H(b), -n)
    return -_H(b) @ gb @ _H(b)


def _matrix_power_jvp(t, ans, a, n):
    if n == 0:
        return np.zeros_like(t)
    if n > 0:
        return _power_terms(a, t, a, n)
    b = np.linalg.inv(a)
    return _power_terms(b, -b @ t @ b, b, -n)


defvjp(np.linalg.matrix_power, _matrix_power_vjp)
defjvp(np.linalg.matrix_power, _matrix_power_jvp)


# multi_dot: a chain of matmuls; a 1-D first (last) array is a row (column)
def _as_chain(xs):
    mats = list(xs)
    if _ndim(mats[0]) == 1:
        mats[0] = np.reshape(mats[0], (1, -1))
    if _ndim(mats[-1]) == 1:
        mats[-1] = np.reshape(mats[-1], (-1, 1))
    return mats


def _multi_dot_vjp(g, ans, args, kw, needs):
    mats = _as_chain(args[0])
    g = np.reshape(g, (shape_of(mats[0])[0], shape_of(mats[-1])[-1]))
    n = len(mats)
    left = [None] * n       # left[k] = H(mats[0] @ ... @ mats[k-1])
    for k in range(1, n):
        left[k] = _H(mats[0]) if k == 1 else _H(mats[k - 1]) @ left[k - 1]
    grads, right = [None] * n, g
    for k in range(n - 1, -1, -1):
        if needs[k]:
            gk = right if left[k] is None else left[k] @ right
            grads[k] = np.reshape(gk, shape_of(args[0][k]))
        right = right @ _H(mats[k])
    return grads


def _multi_dot_jvp(ts, ans, args, kw):
    xs = list(args[0])
    total = None
    for k, t in enumerate(ts):
        if t is not None:
            term = np.linalg.multi_dot(xs[:k] + [t] + xs[k + 1:])
            total = term if total is None else total + term
    return total


defrule(np.linalg.multi_dot, _multi_dot_vjp, _multi_dot_jvp, kind=SEQUENCE)


# --- np.linalg: factorizations of symmetric (Hermitian) matrices --------------------------
# numpy reads one triangle only; nbtape's gradients are those of f(sym(A)), the
# symmetric (Hermitian) part, so they are symmetric too.
def _sym(a):
    return 0.5 * (a + _H(a))


def _phi(x):
    """The lower triangle with the diagonal halved."""
    return np.tril(x) - 0.5 * x * _eye_like(x)


def _cholesky_vjp(g, ans, a, upper=False):
    low, gl = (_H(ans), _H(g)) if upper else (ans, g)
    inv = np.linalg.inv(low)
    return _sym(_H(inv) @ _phi(_H(low) @ gl) @ inv)


def _cholesky_jvp(t, ans, a, upper=False):
    low = _H(ans) if upper else ans
    inv = np.linalg.inv(low)
    dl = low @ _phi(inv @ _sym(t) @ _H(inv))
    return _H(dl) if upper else dl


defvjp(np.linalg.cholesky, _cholesky_vjp)
defjvp(np.linalg.cholesky, _cholesky_jvp)


def _gaps(w):
    """F[i, j] = 1 / (w_j - w_i), and 0 where w_j == w_i (TensorFlow's choice).

    Eigenvector gradients are only defined for distinct eigenvalues; with repeated
    ones this drops the terms that mix their eigenvectors, which is right only for
    functions that do not depend on the basis chosen inside the eigenspace.
    """
    d = w[..., None, :] - w[..., :, None]
    return np.where(d == 0, 0.0, 1.0 / np.where(d == 0, 1.0, d))


def _eigh_vjp(g, ans, args, kw, needs):
    w, v = ans
    gw, gv = g
    inner = _col(gw) * _eye_like(v) + _gaps(w) * (_H(v) @ gv)
    return [_sym(v @ inner @ _H(v))]


def _eigh_jvp(ts, ans, args, kw):
    w, v = ans
    m = _H(v) @ _sym(ts[0]) @ v
    return np.real(np.diagonal(m, axis1=-2, axis2=-1)), v @ (_gaps(w) * m)


defrule(np.linalg.eigh, _eigh_vjp, _eigh_jvp, kind=POSITIONAL, multi=True)
defvjp(np.linalg.eigvalsh, lambda g, ans, a, UPLO="L":
       (lambda w, v: _sym((v * g[..., None, :]) @ _H(v)))(*np.linalg.eigh(a, UPLO)))
defjvp(np.linalg.eigvalsh, lambda t, ans, a, UPLO="L":
       (lambda w, v: np.real(np.diagonal(_H(v) @ _sym(t) @ v, axis1=-2, axis2=-1)))(
           *np.linalg.eigh(a, UPLO)))


# --- singular values and norms ------------------------------------------------------------
# d s_i = Re(u_i^H dA v_i) for distinct singular values.  On tensors the SVD
# below is an op without a rule, so a second derivative says so instead of
# silently treating u and v as constants.
def _svd(a):
    return np.linalg.svd(a, full_matrices=False)


svdvals = numpy_function("linalg.svdvals")           # numpy 2 only
defvjp(svdvals, lambda g, ans, x:
       (lambda u, s, vh: (u * g[..., None, :]) @ vh)(*_svd(x)))
defjvp(svdvals, lambda t, ans, x:
       (lambda u, s, vh: np.real(np.diagonal(_H(u) @ t @ _H(vh), axis1=-2, axis2=-1)))(*_svd(x)))


def _safe_inv(s):
    return np.where(s == 0, 0.0, 1.0 / np.where(s == 0, 1.0, s))


def _svd_gaps(s):
    """F[i, j] = 1 / (s_j^2 - s_i^2), 0 on the diagonal (and for repeated values)."""
    return _gaps(s ** 2)


def _needs_thin(m, n, full, what):
    if full and m != n:
        raise NotImplementedError(
            f"nbtape differentiates {what} of a non-square matrix only in its reduced form: "
            "the extra columns of the complete factor are not determined by the matrix. Use "
            + ("full_matrices=False." if what == "svd" else "mode='reduced'."))


def _svd_vjp(g, ans, args, kw, needs):
    a = args[0]
    full = args[1] if len(args) > 1 else kw.get("full_matrices", True)
    m, n = shape_of(a)[-2:]
    _needs_thin(m, n, full, "svd")
    u, s, vh = ans
    gu, gs, gv = g[0], g[1], _H(g[2])
    v, s_inv = _H(vh), _safe_inv(s)
    f = _svd_gaps(s)
    j, k = f * (_H(u) @ gu), f * (vh @ gv)
    inner = (_col(gs) * _eye_like(u[..., :1, :]) + (j + _H(j)) * s[..., None, :]
             + _col(s) * (k + _H(k)))
    if np.result_type(u).kind == "c":       # the phase that numpy's gauge leaves to U
        inner = inner + 1j * np.imag(np.diagonal(_H(u) @ gu, axis1=-2, axis2=-1))[..., None] \
            * s_inv[..., None] * _eye_like(u[..., :1, :])
    ga = u @ inner @ vh
    if m > n:
        ga = ga + (gu - u @ (_H(u) @ gu)) * s_inv[..., None, :] @ vh
    if n > m:
        ga = ga + u @ (s_inv[..., :, None] * _H(gv - v @ (vh @ gv)))
    return [ga]


def _svd_jvp(ts, ans, args, kw):
    a, t = args[0], ts[0]
    full = args[1] if len(args) > 1 else kw.get("full_matrices", True)
    m, n = shape_of(a)[-2:]
    _needs_thin(m, n, full, "svd")
    u, s, vh = ans
    v, s_inv, f = _H(vh), _safe_inv(s), _svd_gaps(s)
    dp = _H(u) @ t @ v
    ds = np.real(np.diagonal(dp, axis1=-2, axis2=-1))
    dps, sdp = dp * s[..., None, :], _col(s) * dp
    du = u @ (f * (dps + _H(dps)))
    dv = v @ (f * (sdp + _H(sdp)))
    if np.result_type(u).kind == "c":
        du = du + u * (1j * np.imag(np.diagonal(dp, axis1=-2, axis2=-1)) * s_inv)[..., None, :]
    if m > n:
        du = du + (t @ v - u @ dp) * s_inv[..., None, :]
    if n > m:
        dv = dv + (_H(t) @ u - v @ _H(dp)) * s_inv[..., None, :]
    return du, ds, _H(dv)


def _qr_parts(a, args, kw):
    mode = args[1] if len(args) > 1 else kw.get("mode", "reduced")
    m, n = shape_of(a)[-2:]
    if mode not in ("reduced", "complete") or m < n:
        raise NotImplementedError(
            "nbtape differentiates np.linalg.qr for matrices with at least as many rows as "
            f"columns, in mode 'reduced' (or 'complete' when square), not a {m}x{n} matrix "
            f"in mode {mode!r}.")
    _needs_thin(m, n, mode == "complete", "qr")


def _copyltu(y):
    """The adjoint of X = tril(C, -1) - tril(C, -1)^H (+ i Im diag C): Q^H dQ from C."""
    out = np.tril(y - _H(y), -1)
    if np.result_type(y).kind == "c":
        out = out + 1j * np.imag(y) * _eye_like(y)
    return out


def _qr_vjp(g, ans, args, kw, needs):
    _qr_parts(args[0], args, kw)
    q, r = ans
    gq, gr = g
    qgq, rgr = _H(q) @ gq, gr @ _H(r)
    gc = rgr + _copyltu(qgq - rgr)
    b = gq + q @ (gc - qgq)
    return [_H(np.linalg.solve(r, _H(b)))]      # b R^-H


def _qr_jvp(ts, ans, args, kw):
    _qr_parts(args[0], args, kw)
    q, r = ans
    t = ts[0]
    c = _H(np.linalg.solve(_H(r), _H(_H(q) @ t)))   # Q^H dA R^-1
    low = np.tril(c, -1)
    x = low - _H(low)
    if np.result_type(c).kind == "c":
        x = x + 1j * np.imag(c) * _eye_like(c)
    dq = q @ x + (t - q @ (_H(q) @ t)) @ np.linalg.inv(r)
    return dq, (c - x) @ r


def _tuple_modes_only(fn, returns_one, instead):
    """Record ``fn`` in its modes that return a tuple: a rule has one output arity."""
    def call(*args, **kw):
        if returns_one(*args[1:], **kw):
            raise TypeError(f"on nbtape tensors, use {instead}: this mode of "
                            f"np.linalg.{fn.__name__} returns a single array, and nbtape "
                            "records it with its tuple-returning rule.")
        return fn(*args, **kw)
    rule = rule_for(fn)
    rule.fn = rule.compute = call


defrule(np.linalg.svd, _svd_vjp, _svd_jvp, kind=POSITIONAL, multi=True)
_tuple_modes_only(np.linalg.svd, lambda full_matrices=True, compute_uv=True, hermitian=False:
                  not compute_uv, "np.linalg.svdvals(x)" if svdvals else
                  "np.linalg.svd(x, full_matrices=False).S")
defrule(np.linalg.qr, _qr_vjp, _qr_jvp, kind=POSITIONAL, multi=True)
_tuple_modes_only(np.linalg.qr, lambda mode="reduced": mode == "r", "np.linalg.qr(x).R")


# Each norm's VJP is g times its gradient D (TensorFlow's convention for complex
# x: d|z|/dz = z/|z|); its JVP is Re <D, t> summed over the reduced axes.
def _unit(x):
    """x/|x|, and 0 at 0 (the smallest subgradient)."""
    r = np.abs(x)
    return x / np.where(r == 0, 1, r)


def _ties(mask, axes):
    return mask / np.sum(mask, axis=axes, keepdims=True)


def _vector_dir(x, n, p, axes):
    """Gradient of the p-norm over ``axes`` (n: the norm, kept dims)."""
    if p is None or p == 2:
        return x / np.where(n == 0, 1, n)
    if p == 1:
        return _unit(x)
    if p == 0:
        return np.zeros(shape_of(x))
    if p in (np.inf, -np.inf):
        return _unit(x) * _ties(np.abs(x) == n, axes)
    return _unit(x) * (np.abs(x) / np.where(n == 0, 1, n)) ** (p - 1)


def _matrix_dir(x, n, p, axes):
    if p in (None, "fro"):
        return x / np.where(n == 0, 1, n)
    if p in (1, -1, np.inf, -np.inf):
        summed = axes[0] if p in (1, -1) else axes[1]     # columns' sums, or rows'
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        return _unit(x) * _ties(sums == n, axes)
    xm = np.moveaxis(x, axes, (-2, -1))
    u, s, vh = _svd(xm)
    if p == "nuc":
        d = u @ vh
    else:
        k = 0 if p == 2 else shape_of(s)[-1] - 1        # the largest or the smallest
        d = u[..., :, k:k + 1] @ vh[..., k:k + 1, :]
    return np.moveaxis(d, (-2, -1), axes)


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    return tuple(a % nd for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))


def _defnorm(fn, layout):
    """``layout(x, *args, **kw)`` gives ``(ord, matrix?, reduced axes, keepdims)``."""
    def direction(ans, x, args, kw):
        ord, matrix, axes, keepdims = layout(x, *args, **kw)
        n = ans if keepdims else np.expand_dims(ans, axes)
        return (_matrix_dir if matrix else _vector_dir)(x, n, ord, axes), axes, keepdims

    def vjp(g, ans, x, *args, **kw):
        d, axes, keepdims = direction(ans, x, args, kw)
        return (g if keepdims else np.expand_dims(g, axes)) * d

    def jvp(t, ans, x, *args, **kw):
        d, axes, keepdims = direction(ans, x, args, kw)
        return np.sum(np.real(conj(d) * t), axis=axes, keepdims=keepdims)
    defvjp(fn, vjp)
    defjvp(fn, jvp)


def _norm_args(x, ord=None, axis=None, keepdims=False):
    nd = _ndim(x)
    if axis is None and ord is not None and nd == 2:
        return ord, True, (0, 1), keepdims
    axes = _axes(axis, nd)
    return ord, len(axes) == 2 and axis is not None, axes, keepdims


def _vector_norm_args(x, axis=None, keepdims=False, ord=2):
    return ord, False, _axes(axis, _ndim(x)), keepdims


def _matrix_norm_args(x, keepdims=False, ord="fro"):
    return ord, True, _axes((-2, -1), _ndim(x)), keepdims


_defnorm(np.linalg.norm, _norm_args)
_defnorm(numpy_function("linalg.vector_norm"), _vector_norm_args)    # numpy 2 only
_defnorm(numpy_function("linalg.matrix_norm"), _matrix_norm_args)
