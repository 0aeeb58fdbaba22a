"""Discrete convolution and correlation of 1-D sequences: np.convolve, np.correlate.

Both are bilinear, so a JVP applies the function to one tangent at a time.  Each
mode is a slice of the full result, so a VJP places ``g`` into the full length
and correlates it with the other operand (``valid`` mode) - the adjoint of a
convolution.  ``correlate(a, v)`` is ``convolve(a, conj(v[::-1]))``.
"""
import numpy as np

from ..extend import defjvp, defvjp
from .util import conj, shape_of


def _offset(n, m, mode, reversed_):
    """Where a mode's result starts inside the full one (numpy's centring)."""
    if mode in ("full", 2):
        return 0
    k = min(n, m) - 1
    if mode in ("valid", 0):
        return k
    # 'same': correlate with the longer operand second reverses the swapped result
    return k - k // 2 if reversed_ and n < m else k // 2


def _full(g, n, m, mode, reversed_=False):
    s = _offset(n, m, mode, reversed_)
    return np.pad(g, (s, n + m - 1 - s - shape_of(g)[0]))      # np.pad: recorded on tensors


def _adjoint(gfull, other):
    """The adjoint of one operand of the full convolution with ``other``."""
    return np.correlate(gfull, other, "valid")


def _convolve_vjp(which):
    def vjp(g, ans, a, v, mode="full"):
        a, v = np.atleast_1d(a), np.atleast_1d(v)      # numpy reads a 0-d operand as 1-d
        full = _full(g, shape_of(a)[0], shape_of(v)[0], mode)
        return _adjoint(full, v if which == 0 else a)
    return vjp


def _correlate_vjp(which):
    def vjp(g, ans, a, v, mode="valid"):
        full = _full(g, shape_of(a)[0], shape_of(v)[0], mode, reversed_=True)
        if which == 0:
            return _adjoint(full, conj(v[::-1]))
        return conj(_adjoint(full, a)[::-1])
    return vjp


defvjp(np.convolve, _convolve_vjp(0), _convolve_vjp(1))
defjvp(np.convolve, lambda t, ans, a, v, mode="full": np.convolve(t, v, mode),
       lambda t, ans, a, v, mode="full": np.convolve(a, t, mode))
defvjp(np.correlate, _correlate_vjp(0), _correlate_vjp(1))
defjvp(np.correlate, lambda t, ans, a, v, mode="valid": np.correlate(t, v, mode),
       lambda t, ans, a, v, mode="valid": np.correlate(a, t, mode))
