"""``np.linalg``: inverses, determinants, solves, least squares and matrix powers.

Matrix functions work on stacks of matrices (the last two axes); complex values
follow TensorFlow (conjugate transposes, ``H``).  Factorizations live in
``eigen.py`` and ``factorizations.py``, norms in ``norms.py``, products and
einsum in ``products.py``.
"""
import numpy as np

from ..extend import defjvp, defvjp
from .matrix_util import col, defmatrix, diag, ndim, operands, tr, triangle_adjoint
from .matrix_util import hermitian as read_hermitian
from ..core.registry import SEQUENCE, defcomposite, defrule
from .util import H, conj, shape_of


# --- inverses and determinants ------------------------------------------------------------
defvjp(np.linalg.inv, lambda g, ans, a: -H(ans) @ g @ H(ans))
defjvp(np.linalg.inv, lambda t, ans, a: -ans @ t @ ans)


def adjugate(a):
    """adj(A) = det(A) A^-1, also where A is singular (d det = tr(adj(A) dA)).

    >>> adjugate(np.array([[1.0, 2.0], [2.0, 4.0]]))
    array([[ 4., -2.],
           [-2.,  1.]])
    """
    with np.errstate(all="ignore"):
        try:
            adj = col(col(np.linalg.det(a))) * np.linalg.inv(a)
            if np.all(np.isfinite(adj)):
                return adj
        except np.linalg.LinAlgError:
            pass
    # A = U S V^H gives adj(A) = det(U) det(V^H) V adj(S) U^H, and adj(S) is diagonal
    # with the products of the other singular values (no division by a zero one)
    u, s, vh = np.linalg.svd(a)
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.flip(np.concatenate([s[..., 1:], ones], axis=-1), -1),
                               axis=-1), -1)
    phase = np.linalg.det(u) * np.linalg.det(vh)
    return col(col(phase)) * (H(vh) * (before * after)[..., None, :]) @ H(u)


defvjp(np.linalg.det, lambda g, ans, a: col(col(g)) * H(adjugate(a)))
defjvp(np.linalg.det, lambda t, ans, a: tr(adjugate(a) @ t))


def _inverse_or_pole(a):
    """A^-1, the derivative of log|det A|; at a singular A (numpy's slogdet gives
    (0, -inf) there) adj(A) / det(A): infinite (NaN where adj(A) is 0), as the
    derivative of log at 0 is, instead of numpy's LinAlgError from inside the rule.

    >>> _inverse_or_pole(np.array([[1.0, 2.0], [2.0, 4.0]]))
    array([[ inf, -inf],
           [-inf,  inf]])
    """
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        with np.errstate(all="ignore"):
            return adjugate(a) / col(col(np.linalg.det(a)))


def _slogdet_vjp(g, ans, args, kw, needs):
    # d log|det| = Re tr(A^-1 dA); for complex A the sign (a phase) moves by
    # i sign Im tr(A^-1 dA), which adds -i Im(conj(g_sign) sign) to the scale.
    scale = g[1]
    if np.result_type(ans[0]).kind == "c":
        scale = scale - 1j * np.imag(conj(g[0]) * ans[0])
    return [col(col(scale)) * H(_inverse_or_pole(operands(args, kw, ("a",))[0]))]


def _slogdet_jvp(ts, ans, args, kw):
    a = operands(args, kw, ("a",))[0]
    try:
        d = tr(np.linalg.solve(a, ts[0]))
    except np.linalg.LinAlgError:
        with np.errstate(all="ignore"):         # inf x 0 in the sum: the NaN says it
            d = tr(_inverse_or_pole(a) @ ts[0])
    if np.result_type(ans[0]).kind == "c":
        return 1j * ans[0] * np.imag(d), np.real(d)
    return np.zeros_like(ans[0]), d


defmatrix(np.linalg.slogdet, _slogdet_vjp, _slogdet_jvp)


# --- solve(a, b): x = a^-1 b --------------------------------------------------------------
# numpy 2 reads b as a vector only when it is 1-D; numpy 1 whenever it has one
# axis fewer than a (then b may be a stack of vectors).
_NUMPY1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def _b_is_vector(a, b):
    return ndim(b) == (ndim(a) - 1 if _NUMPY1 else 1)


def _solve_vjps(g, ans, args, kw, needs):
    a, b = operands(args, kw, ("a", "b"))
    vec = _b_is_vector(a, b)
    gb = np.linalg.solve(H(a), col(g) if vec else g)
    x = col(ans) if vec else ans
    ga = -gb @ H(x) if needs[0] else None
    return [ga, gb[..., 0] if vec else gb]


def _solve_jvp(ts, ans, args, kw):
    (a, b), (ta, tb) = operands(args, kw, ("a", "b"), ts)
    vec = _b_is_vector(a, b)
    x = col(ans) if vec else ans
    if tb is None:
        rhs = -ta @ x
    else:
        rhs = col(tb) if vec else tb
        rhs = rhs if ta is None else rhs - ta @ x
    dx = np.linalg.solve(a, rhs)
    return dx[..., 0] if vec else dx


defmatrix(np.linalg.solve, _solve_vjps, _solve_jvp, nargs=2, multi=False)


# --- pseudo-inverse and least squares (valid where the rank does not change) --------------
def _pinv_adjoint(g, p, a):
    """The adjoint of P = pinv(A) (Golub and Pereyra), from P's adjoint ``g``."""
    return (-H(p) @ g @ H(p) + (np.eye(shape_of(a)[-2]) - a @ p) @ H(g) @ p @ H(p)
            + H(p) @ p @ H(g) @ (np.eye(shape_of(a)[-1]) - p @ a))


def _pinv_tangent(t, p, a):
    """The tangent of P = pinv(A) along ``t``."""
    return (-p @ t @ p + p @ H(p) @ H(t) @ (np.eye(shape_of(a)[-2]) - a @ p)
            + (np.eye(shape_of(a)[-1]) - p @ a) @ H(t) @ H(p) @ p)


# hermitian=True reads the lower triangle only (numpy goes through eigh)
def _pinv_vjp(g, ans, a, rcond=None, hermitian=False, **kw):
    if hermitian:
        return triangle_adjoint(_pinv_adjoint(g, ans, read_hermitian(a)))
    return _pinv_adjoint(g, ans, a)


def _pinv_jvp(t, ans, a, rcond=None, hermitian=False, **kw):
    if hermitian:
        return _pinv_tangent(read_hermitian(t), ans, read_hermitian(a))
    return _pinv_tangent(t, ans, a)


defvjp(np.linalg.pinv, _pinv_vjp)
defjvp(np.linalg.pinv, _pinv_jvp)


# lstsq(a, b) -> (x, residuals, rank, s), with x = pinv(a) b; the residuals
# |b - a x|^2 move only with the error e = b - a x (x is optimal: a^H e = 0)
def _lstsq_parts(a, b, rcond):
    vec = ndim(b) == 1
    p = np.linalg.pinv(a) if rcond is None else np.linalg.pinv(a, rcond)
    return vec, p, col(b) if vec else b


def _lstsq_vjp(g, ans, args, kw, needs):
    a, b, rcond = operands(args, kw, ("a", "b", "rcond"))
    gx, gres, _, gs = g
    vec, p, bm = _lstsq_parts(a, b, rcond)
    x = col(ans[0]) if vec else ans[0]
    gx = col(gx) if vec else gx
    ga = _pinv_adjoint(gx @ H(bm), p, a)
    gb = H(p) @ gx
    if shape_of(ans[1])[0]:                 # residuals, given when a is tall and full rank
        e = 2 * (bm - a @ x) * np.real(gres)
        ga = ga - e @ H(x)
        gb = gb + e
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    ga = ga + (u * gs[None, :]) @ vh
    return [ga if needs[0] else None, (gb[:, 0] if vec else gb) if needs[1:2] == [True] else None]


def _lstsq_jvp(ts, ans, args, kw):
    (a, b, rcond), (ta, tb, _) = operands(args, kw, ("a", "b", "rcond"), ts)
    vec, p, bm = _lstsq_parts(a, b, rcond)
    x = col(ans[0]) if vec else ans[0]
    dx = 0.0
    dres = np.zeros_like(ans[1])
    e = bm - a @ x
    if ta is not None:
        dx = dx + _pinv_tangent(ta, p, a) @ bm
    if tb is not None:
        tbm = col(tb) if vec else tb
        dx = dx + p @ tbm
    if shape_of(ans[1])[0]:
        de = (0.0 if tb is None else (col(tb) if vec else tb)) \
            - (0.0 if ta is None else ta @ x)
        dres = 2 * np.sum(np.real(conj(e) * de), axis=0)
    ds = np.zeros_like(ans[3])
    if ta is not None:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        ds = np.real(diag(H(u) @ ta @ H(vh)))
    dx = np.broadcast_to(dx, shape_of(x))
    return dx[:, 0] if vec else dx, dres, None, ds


defmatrix(np.linalg.lstsq, _lstsq_vjp, _lstsq_jvp, nargs=2)


# --- tensorinv and tensorsolve: inv and solve of the arrays reshaped to matrices -----------
# built from recorded reshapes, inv and solve (defcomposite), in numpy's own steps
def _tensorinv(a, ind=2):
    shape = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    rows = int(np.prod(shape[ind:]))
    return np.reshape(np.linalg.inv(np.reshape(a, (rows, -1))), shape[ind:] + shape[:ind])


def _tensorsolve(a, b, axes=None):
    an = ndim(a)
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = np.transpose(a, order)
    shape = shape_of(a)[-(an - ndim(b)):]
    n = int(np.prod(shape))
    if int(np.prod(shape_of(a))) != n ** 2:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement "
            "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return np.reshape(np.linalg.solve(np.reshape(a, (n, n)), np.ravel(b)), shape)


defcomposite(np.linalg.tensorinv, _tensorinv)
defcomposite(np.linalg.tensorsolve, _tensorsolve)


# --- matrix_power: d(A^n) = sum_k A^k dA A^(n-1-k); negative n goes through inv(A) --------
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
        return _power_terms(H(a), g, H(a), n)
    b = np.linalg.inv(a)
    gb = _power_terms(H(b), g, H(b), -n)
    return -H(b) @ gb @ H(b)


def _matrix_power_jvp(t, ans, a, n):
    if n == 0:
        return np.zeros_like(t)
    if n > 0:
        return _power_terms(a, t, a, n)
    b = np.linalg.inv(a)
    return _power_terms(b, -b @ t @ b, b, -n)


defvjp(np.linalg.matrix_power, _matrix_power_vjp)
defjvp(np.linalg.matrix_power, _matrix_power_jvp)


# --- multi_dot: a chain of matmuls; a 1-D first (last) array is a row (column) ------------
def _as_chain(xs):
    mats = list(xs)
    if ndim(mats[0]) == 1:
        mats[0] = np.reshape(mats[0], (1, -1))
    if ndim(mats[-1]) == 1:
        mats[-1] = np.reshape(mats[-1], (-1, 1))
    return mats


def _multi_dot_vjp(g, ans, args, kw, needs):
    mats = _as_chain(args[0])
    g = np.reshape(g, (shape_of(mats[0])[0], shape_of(mats[-1])[-1]))
    n = len(mats)
    left = [None] * n       # left[k] = H(mats[0] @ ... @ mats[k-1])
    for k in range(1, n):
        left[k] = H(mats[0]) if k == 1 else H(mats[k - 1]) @ left[k - 1]
    grads, right = [None] * n, g
    for k in range(n - 1, -1, -1):
        if needs[k]:
            gk = right if left[k] is None else left[k] @ right
            grads[k] = np.reshape(gk, shape_of(args[0][k]))
        right = right @ H(mats[k])
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
