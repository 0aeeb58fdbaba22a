"""Evenly spaced values and coordinate grids: linspace, logspace, geomspace, meshgrid.

``linspace(start, stop)`` is ``start + (stop - start) w`` with the fixed fractions
``w = linspace(0, 1)`` laid along ``axis``; logspace and geomspace are powers of
it.  meshgrid is built from recorded reshapes and broadcasts (``defcomposite``).
"""
import numpy as np

from .registry import defcomposite, defjvp, defvjp
from .util import conj, shape_of


def _fractions(start, stop, num, endpoint, axis):
    """The fractions w along ``axis`` of the result, ones elsewhere (broadcastable)."""
    w = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    nd = len(np.broadcast_shapes(shape_of(start), shape_of(stop))) + 1
    shape = [1] * nd
    shape[axis % nd] = num
    return np.reshape(w, shape), axis % nd


def _along(t, start, stop, axis):
    """A tangent of ``start`` (or ``stop``) with the sample axis put in."""
    t = np.broadcast_to(t, np.broadcast_shapes(shape_of(start), shape_of(stop)))
    return np.expand_dims(t, axis)


def _lin_vjp(which):
    def vjp(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        w, ax = _fractions(start, stop, num, endpoint, axis)
        return np.sum(g * (w if which else 1 - w), axis=ax)
    return vjp


def _lin_jvp(which):
    def jvp(t, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        w, ax = _fractions(start, stop, num, endpoint, axis)
        return _along(t, start, stop, ax) * (w if which else 1 - w)
    return jvp


defvjp(np.linspace, _lin_vjp(0), _lin_vjp(1))
defjvp(np.linspace, _lin_jvp(0), _lin_jvp(1))


# logspace: y = base ** linspace(start, stop); dy = y ln(base) d(linspace) + y lin / base dbase
def _log_parts(start, stop, num, endpoint, base, axis):
    w, ax = _fractions(start, stop, num, endpoint, axis)
    lin = np.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    b = np.expand_dims(base, ax) if len(shape_of(base)) else base
    return w, ax, lin, b


def _logspace_vjp(which):
    def vjp(g, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        w, ax, lin, b = _log_parts(start, stop, num, endpoint, base, axis)
        if which == 2:
            gb = g * conj(ans * lin / b)
            return np.sum(gb, axis=ax) if len(shape_of(base)) else gb
        return np.sum(g * conj(ans * np.log(b)) * (w if which else 1 - w), axis=ax)
    return vjp


def _logspace_jvp(which):
    def jvp(t, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        w, ax, lin, b = _log_parts(start, stop, num, endpoint, base, axis)
        if which == 2:
            return (np.expand_dims(t, ax) if len(shape_of(base)) else t) * ans * lin / b
        return _along(t, start, stop, ax) * (w if which else 1 - w) * ans * np.log(b)
    return jvp


# the operands are start, stop and base (the fifth argument)
defvjp(np.logspace, _logspace_vjp(0), _logspace_vjp(1), None, None, _logspace_vjp(2))
defjvp(np.logspace, _logspace_jvp(0), _logspace_jvp(1), None, None, _logspace_jvp(2))


# geomspace: y = start (stop / start) ** w, so dy = y ((1 - w) dstart / start + w dstop / stop)
def _geom_vjp(which):
    def vjp(g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        w, ax = _fractions(start, stop, num, endpoint, axis)
        end = np.expand_dims(stop if which else start, ax)
        return np.sum(g * conj(ans * (w if which else 1 - w) / end), axis=ax)
    return vjp


def _geom_jvp(which):
    def jvp(t, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        w, ax = _fractions(start, stop, num, endpoint, axis)
        end = np.expand_dims(stop if which else start, ax)
        return _along(t, start, stop, ax) * ans * (w if which else 1 - w) / end
    return jvp


defvjp(np.geomspace, _geom_vjp(0), _geom_vjp(1))
defjvp(np.geomspace, _geom_jvp(0), _geom_jvp(1))


# --- meshgrid: each input reshaped along its own axis, then broadcast -------------------------
_GRID_TYPE = type(np.meshgrid(np.zeros(1)))          # a tuple in numpy 2, a list in numpy 1


def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * nd
        shape[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(np.reshape(x, shape))
    if not sparse and nd:
        out = np.broadcast_arrays(*out)
    if copy:
        out = [np.copy(x) for x in out]
    return _GRID_TYPE(out)


defcomposite(np.meshgrid, _meshgrid)
