"""The cross product: np.cross and np.linalg.cross.

``<g, a x b> = <a, b x g> = <b, g x a>``, so each VJP is another cross product.
numpy also accepts 2-vectors (their z is 0; two of them give the z component
alone): the rules pad them to 3-vectors and crop the adjoint back.  With the
vectors along the last axis (``moveaxis``), broadcasting is the engine's.
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..core.registry import numpy_function
from .util import conj, shape_of


def _axes(axisa=-1, axisb=-1, axisc=-1, axis=None):
    return (axis, axis, axis) if axis is not None else (axisa, axisb, axisc)


def _last(x, ax):
    """x with its vector axis last, padded to 3 components."""
    x = np.moveaxis(x, ax, -1)
    n = shape_of(x)[-1]
    return np.pad(x, [(0, 0)] * (len(shape_of(x)) - 1) + [(0, 3 - n)]) if n == 2 else x


def _cross_adjoint(which, g, ans, a, b, axes):
    axa, axb, axc = axes
    x, y = (b, axb) if which == 0 else (a, axa)
    mine, ax = (a, axa) if which == 0 else (b, axb)
    nd = len(shape_of(mine))
    ax = ax - nd if ax >= 0 else ax         # from the end: mine may be broadcast
    if shape_of(a)[axa] == 2 and shape_of(b)[axb] == 2:
        gl = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)     # z only
    else:
        gl = _last(g, axc)
    y3 = conj(_last(x, y))
    out = np.cross(y3, gl) if which == 0 else np.cross(gl, y3)
    out = out[..., :shape_of(mine)[ax]]
    return np.moveaxis(out, -1, ax)


def _padded_cross(x, y, axx, axy, axc):
    """numpy's cross product, computed on 3-vectors (no warning about 2-vectors)."""
    c = np.cross(_last(x, axx), _last(y, axy))
    if shape_of(x)[axx] == 2 and shape_of(y)[axy] == 2:
        return c[..., 2]
    return np.moveaxis(c, -1, axc)


def _defcross(fn, signature):
    def vjp(which):
        return lambda g, ans, a, b, *args, **kw: _cross_adjoint(which, g, ans, a, b,
                                                                signature(*args, **kw))

    def jvp(which):
        def tangent(t, ans, a, b, *args, **kw):
            axa, axb, axc = signature(*args, **kw)
            return _padded_cross(t, b, axa, axb, axc) if which == 0 \
                else _padded_cross(a, t, axa, axb, axc)
        return tangent
    defvjp(fn, vjp(0), vjp(1))
    defjvp(fn, jvp(0), jvp(1))


_defcross(np.cross, _axes)
_defcross(numpy_function("linalg.cross"),                  # numpy 2 only
          lambda axis=-1: (axis, axis, axis))
