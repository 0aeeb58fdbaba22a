"""``np.linalg`` eigendecompositions: eigh, eigvalsh (Hermitian) and eig, eigvals.

eigh and eigvalsh read one triangle of their input (``UPLO='L'``, the default,
or ``'U'``) and ignore the imaginary part of its diagonal, so their gradient lives
on that triangle, as in TensorFlow and autograd (``matrix_util.triangle_adjoint``).

Eigenvector gradients need distinct eigenvalues: where two are equal and the gradient
(or tangent) couples their eigenvectors, eigh's is NaN, which the NaN warning names
(TensorFlow drops those terms, silently wrong even for ``V f(w) V^T``).  They are
those of functions that do not see the phase (sign) numpy picks for each
eigenvector; eig's need a diagonalizable matrix.  numpy normalizes eigenvectors to
unit length, and the rules keep that constraint.
"""
import numpy as np

from ..extend import defjvp, defvjp
from .matrix_util import (col, defmatrix, diag, eye_like, gaps, hermitian, is_complex, operands,
                          triangle_adjoint, undetermined)
from .util import H


def _lower(args, kw):
    uplo = operands(args, kw, ("a", "UPLO"))[1]
    return uplo is None or str(uplo).upper() == "L"


# --- eigh: A = V diag(w) V^H ----------------------------------------------------------------
def _eigh_vjp(g, ans, args, kw, needs):
    w, v = ans
    gw, gv = g
    m = H(v) @ gv
    inner = np.where(undetermined(w, m), np.nan, col(gw) * eye_like(v) + gaps(w) * m)
    return [triangle_adjoint(v @ inner @ H(v), _lower(args, kw))]


def _eigh_jvp(ts, ans, args, kw):
    w, v = ans
    m = H(v) @ hermitian(ts[0], _lower(args, kw)) @ v
    return np.real(diag(m)), v @ np.where(undetermined(w, m), np.nan, gaps(w) * m)


defmatrix(np.linalg.eigh, _eigh_vjp, _eigh_jvp)
# d w_i = v_i^H dS v_i
defvjp(np.linalg.eigvalsh, lambda g, ans, a, UPLO="L":
       (lambda w, v: triangle_adjoint((v * g[..., None, :]) @ H(v), UPLO.upper() == "L"))(
           *np.linalg.eigh(a, UPLO)))
defjvp(np.linalg.eigvalsh, lambda t, ans, a, UPLO="L":
       (lambda w, v: np.real(diag(H(v) @ hermitian(t, UPLO.upper() == "L") @ v)))(
           *np.linalg.eigh(a, UPLO)))


# --- eig: A = V diag(w) V^-1, columns of V of unit length -------------------------------------
# With P = V^-1 dA V: dw = diag(P), and dV = V (F o P) (F from gaps) less the part
# along each v_i that would change its length.  The adjoint of a real A is the
# real part (numpy's eig of a real matrix may return complex values).
def _real_like(g, a):
    return g if is_complex(a) else np.real(g)


def _eig_vjp(g, ans, args, kw, needs):
    w, v = ans
    gw, gv = g
    vh = H(v)
    m = vh @ gv
    mid = col(gw) * eye_like(v) + np.conj(gaps(w)) * (m - (vh @ v) * np.real(diag(m))[..., None, :])
    return [_real_like(np.linalg.solve(vh, mid @ vh), operands(args, kw, ("a",))[0])]


def _eig_jvp(ts, ans, args, kw):
    w, v = ans
    p = np.linalg.solve(v, ts[0] @ v)
    dv = v @ (gaps(w) * p)
    dv = dv - v * np.real(diag(H(v) @ dv))[..., None, :]
    return diag(p), dv


defmatrix(np.linalg.eig, _eig_vjp, _eig_jvp)
defvjp(np.linalg.eigvals, lambda g, ans, a: (lambda w, v: _real_like(
    np.linalg.solve(H(v), col(g) * H(v)), a))(*np.linalg.eig(a)))
defjvp(np.linalg.eigvals, lambda t, ans, a: (lambda w, v: diag(np.linalg.solve(v, t @ v)))(
    *np.linalg.eig(a)))
