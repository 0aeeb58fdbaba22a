"""``np.linalg`` norms: norm, vector_norm, matrix_norm, and the condition number cond.

Each norm's VJP is g times its gradient D (TensorFlow's convention for complex
x: d|z|/dz = z/|z|); its JVP is Re <D, t> summed over the reduced axes.  The
norm of 0 gets the zero subgradient instead of NaN; ties of the max/min norms
share the gradient equally.  ``cond(x, p)`` is s_max/s_min for p None/2 (s_min/s_max
for -2), else ``norm(x, p) * norm(inv(x), p)``; it is infinite at a singular matrix,
where its gradient refuses.
"""
import numpy as np

from ..diagnostics.errors import NoGradientRuleError
from ..extend import defjvp, defvjp
from .matrix_util import ndim
from ..core.registry import numpy_function
from .util import H, conj, shape_of


def _svd(a):
    return np.linalg.svd(a, full_matrices=False)


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
    nd = ndim(x)
    if axis is None and ord is not None and nd == 2:
        return ord, True, (0, 1), keepdims
    axes = _axes(axis, nd)
    return ord, len(axes) == 2 and axis is not None, axes, keepdims


def _vector_norm_args(x, axis=None, keepdims=False, ord=2):
    return ord, False, _axes(axis, ndim(x)), keepdims


def _matrix_norm_args(x, keepdims=False, ord="fro"):
    return ord, True, _axes((-2, -1), ndim(x)), keepdims


_defnorm(np.linalg.norm, _norm_args)
_defnorm(numpy_function("linalg.vector_norm"), _vector_norm_args)    # numpy 2 only
_defnorm(numpy_function("linalg.matrix_norm"), _matrix_norm_args)


def _cond_dir(x, ans, p=None):
    """The gradient of each matrix's condition number (``ans``, one per matrix)."""
    if not np.all(np.isfinite(ans)):
        raise NoGradientRuleError(
            "np.linalg.cond is infinite (or NaN) here: the matrix is singular (or holds "
            "NaN), and its condition number has no gradient there. Keep the matrix "
            "invertible (e.g. add a small multiple of the identity).")
    if p in (None, 2, -2):
        u, s, vh = _svd(x)
        big, small = s[..., :1, None], s[..., -1:, None]     # (..., 1, 1)
        d_big = u[..., :, :1] @ vh[..., :1, :]               # d s_max = <d_big, dx>
        d_small = u[..., :, -1:] @ vh[..., -1:, :]
        if p == -2:
            return d_small / big - small / big ** 2 * d_big
        return d_big / small - big / small ** 2 * d_small
    inv = np.linalg.inv(x)
    axes = (ndim(x) - 2, ndim(x) - 1)
    n = np.linalg.norm(x, p, axis=(-2, -1), keepdims=True)
    m = np.linalg.norm(inv, p, axis=(-2, -1), keepdims=True)
    # d norm(inv(x)) = <D_inv, -inv dx inv> = <-inv^H D_inv inv^H, dx>
    return m * _matrix_dir(x, n, p, axes) - n * (H(inv) @ _matrix_dir(inv, m, p, axes) @ H(inv))


# cond is real-valued, but numpy 1 returns it as complex for a complex matrix (except for
# p None/2): the imaginary part of its adjoint meets a constant zero, hence np.real(g)
defvjp(np.linalg.cond,
       lambda g, ans, x, p=None: np.real(g)[..., None, None] * _cond_dir(x, ans, p))
defjvp(np.linalg.cond, lambda t, ans, x, p=None:
       np.sum(np.real(conj(_cond_dir(x, ans, p)) * t), axis=(-2, -1)))
