"""Helpers that the matrix rules share (stacks of matrices: the last two axes)."""

import numpy as np

from ..core.registry import POSITIONAL, defrule
from .util import H, shape_of


def ndim(a):
    return len(shape_of(a))


def col(v):
    """A stack of vectors as a stack of one-column matrices."""
    return v[..., None]


def eye_like(a):
    return np.eye(shape_of(a)[-1])


def tr(m):
    return np.trace(m, axis1=-2, axis2=-1)


def diag(m):
    return np.diagonal(m, axis1=-2, axis2=-1)


def is_complex(a):
    return np.result_type(a).kind == "c"


def sym(a):
    """The Hermitian part."""
    return 0.5 * (a + H(a))


def safe_inv(s):
    """1/s, and 0 where s is 0."""
    return np.where(s == 0, 0.0, 1.0 / np.where(s == 0, 1.0, s))


def gaps(w):
    """F[i, j] = 1 / (w_j - w_i), and 0 where w_j == w_i (TensorFlow's choice).

    Eigenvector gradients are only defined for distinct eigenvalues; with repeated
    ones this drops the terms that mix their eigenvectors.  That is right only when the
    gradient reaching the eigenvectors does not couple two of one eigenspace: even a
    function that does not depend on the basis chosen (``V f(w) V^T``) loses the
    limit f'(w) of its divided differences there (TensorFlow loses it too), so eigh's
    rules put NaN where it does couple them (``undetermined``).
    """
    return safe_inv(w[..., None, :] - w[..., :, None])


def undetermined(w, m):
    """Where a repeated eigenvalue leaves the eigenvectors' derivative undetermined:
    ``w_i == w_j`` (i != j) while ``m`` (the adjoint or tangent seen in the eigenbasis)
    couples the two eigenvectors.  ``gaps`` drops those terms; a rule puts NaN there, so
    that the NaN warning names the op instead of a silently wrong gradient.

    >>> undetermined(np.array([2.0, 2.0, 5.0]), np.array([[0, 1, 0], [0, 0, 0], [1, 0, 0.]]))
    array([[False,  True, False],
           [False, False, False],
           [False, False, False]])
    """
    tied = (w[..., None, :] == w[..., :, None]) & (eye_like(m) == 0)
    size = np.abs(m)
    # rounding leaves ~1e-16 where a function does not couple them: not a coupling
    return tied & (size > 1e-9 * np.max(size, axis=(-2, -1), keepdims=True))


# numpy's eigh, eigvalsh and cholesky read one triangle of their input and ignore
# the imaginary part of its diagonal: they compute f(S) with S = hermitian(A).
def hermitian(a, lower=True):
    """The Hermitian matrix numpy reads from one triangle of ``a``.

    >>> hermitian(np.array([[1.0, 9.0], [2.0, 3.0]]))
    array([[1., 2.],
           [2., 3.]])
    """
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    d = diag(a)
    return strict + H(strict) + (np.real(d) if is_complex(d) else d)[..., None] * eye_like(a)


def triangle_adjoint(g, lower=True):
    """The adjoint of ``hermitian``: a gradient ``g`` on S back onto the triangle read.

    ``g`` needs no symmetry: only its Hermitian part is seen by Hermitian tangents.

    >>> triangle_adjoint(np.array([[1.0, 2.0], [4.0, 3.0]]))      # 2 + 4 lands below
    array([[1., 0.],
           [6., 3.]])
    """
    gh = g + H(g)
    d = 0.5 * diag(gh)
    strict = np.tril(gh, -1) if lower else np.triu(gh, 1)
    return strict + (np.real(d) if is_complex(d) else d)[..., None] * eye_like(g)


def defmatrix(fn, vjp_all, jvp_all, nargs=1, multi=True):
    """``defrule`` for an np.linalg function whose first ``nargs`` arguments are its
    operands, by position or by keyword (``np.linalg.solve(a, b=t)``: the dispatcher
    binds keywords to numpy's own signature, and ``operands`` reads them back).

    >>> import nbtape
    >>> from nbtape.core.registry import RULES
    >>> RULES[np.linalg.lstsq].nargs
    2
    """
    return defrule(fn, vjp_all, jvp_all, kind=POSITIONAL, multi=multi, nargs=nargs)


def operands(args, kw, names, ts=None):
    """The named leading arguments, given by position or by keyword (and, with
    ``ts``, their tangents: None for one given by keyword as a constant).

    >>> operands([1], {"b": 2}, ("a", "b"))
    [1, 2]
    """
    vals = [args[i] if i < len(args) else kw.get(n) for i, n in enumerate(names)]
    if ts is None:
        return vals
    return vals, list(ts) + [None] * (len(names) - len(ts))
