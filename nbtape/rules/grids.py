"""Evenly spaced values and coordinate grids: linspace, logspace, geomspace, meshgrid.

``linspace(start, stop)`` is ``start + (stop - start) w`` with the fixed fractions
``w = linspace(0, 1)`` laid along ``axis``; logspace and geomspace are powers of
it.  meshgrid is built from recorded reshapes and broadcasts (``defcomposite``).
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..core.registry import defcomposite
from .util import conj, shape_of


def _fractions(num, endpoint, axis, *operands):
    """The fractions w along ``axis`` of the result, ones elsewhere (broadcastable), for
    the operands broadcast together (numpy pads each to their common ndim)."""
    w = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    nd = len(_common(*operands)) + 1
    shape = [1] * nd
    shape[axis % nd] = num
    return np.reshape(w, shape), axis % nd


def _common(*operands):
    return np.broadcast_shapes(*(shape_of(a) for a in operands))


def _along(t, axis, *operands):
    """A tangent (or value) of one operand broadcast to all of them, the sample axis put in."""
    return np.expand_dims(np.broadcast_to(t, _common(*operands)), axis)


def _lin_vjp(which):
    def vjp(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        w, ax = _fractions(num, endpoint, axis, start, stop)
        return np.sum(g * (w if which else 1 - w), axis=ax)
    return vjp


def _lin_jvp(which):
    def jvp(t, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        w, ax = _fractions(num, endpoint, axis, start, stop)
        return _along(t, ax, start, stop) * (w if which else 1 - w)
    return jvp


defvjp(np.linspace, _lin_vjp(0), _lin_vjp(1))
defjvp(np.linspace, _lin_jvp(0), _lin_jvp(1))


# logspace: y = base ** linspace(start, stop); dy = y ln(base) d(linspace) + y lin / base dbase
def _log_parts(start, stop, num, endpoint, base, axis):
    # numpy pads start, stop and base to their common ndim before laying out the samples
    w, ax = _fractions(num, endpoint, axis, start, stop, base)
    full = _common(start, stop, base)
    lin = np.linspace(np.broadcast_to(start, full), np.broadcast_to(stop, full), num,
                      endpoint=endpoint, axis=axis)
    return w, ax, lin, _along(base, ax, start, stop, base)


def _logspace_vjp(which):
    def vjp(g, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        w, ax, lin, b = _log_parts(start, stop, num, endpoint, base, axis)
        if which == 2:
            return np.sum(g * conj(ans * lin / b), axis=ax)
        return np.sum(g * conj(ans * np.log(b)) * (w if which else 1 - w), axis=ax)
    return vjp


def _logspace_jvp(which):
    def jvp(t, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        w, ax, lin, b = _log_parts(start, stop, num, endpoint, base, axis)
        dy = ans * lin / b if which == 2 else (w if which else 1 - w) * ans * np.log(b)
        return _along(t, ax, start, stop, base) * dy
    return jvp


# the operands are start, stop and base (the fifth argument)
defvjp(np.logspace, _logspace_vjp(0), _logspace_vjp(1), None, None, _logspace_vjp(2))
defjvp(np.logspace, _logspace_jvp(0), _logspace_jvp(1), None, None, _logspace_jvp(2))


# geomspace: y = start (stop / start) ** w, so dy = y ((1 - w) dstart / start + w dstop / stop)
def _geom_vjp(which):
    def vjp(g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        w, ax = _fractions(num, endpoint, axis, start, stop)
        end = _along(stop if which else start, ax, start, stop)
        return np.sum(g * conj(ans * (w if which else 1 - w) / end), axis=ax)
    return vjp


def _geom_jvp(which):
    def jvp(t, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        w, ax = _fractions(num, endpoint, axis, start, stop)
        end = _along(stop if which else start, ax, start, stop)
        return _along(t, ax, start, stop) * ans * (w if which else 1 - w) / end
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
