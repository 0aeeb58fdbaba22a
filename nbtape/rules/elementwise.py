"""Elementwise numpy functions that are not ufuncs: clip, round, sinc, angle, ...

``np.clip`` follows TensorFlow's ``clip_by_value``: a value exactly on a bound
passes its gradient to ``x``, and a bound receives the gradient of the
elements it clipped.
"""
import math

import numpy as np

from ..extend import defderiv, defjvp, defnondiff, defvjp, defzero
from .core_ops import scatter_add
from ..core.registry import defalias, defparam, numpy_function
from .util import conj, refuse, shape_of, value_of


def _bounds(a_min, a_max, kw):
    # numpy >= 2.1 also spells the bounds min=/max=; a missing bound is np._NoValue
    lo, hi = kw.get("min", a_min), kw.get("max", a_max)
    return (None if lo is np._NoValue else lo), (None if hi is np._NoValue else hi)


def _clip_masks(x, a_min, a_max, kw):
    """Where ``x``, the lower bound and the upper bound set the output."""
    lo, hi = _bounds(a_min, a_max, kw)
    # clip(x) = minimum(maximum(x, lo), hi), each tie going to the first argument
    up = x if lo is None else np.maximum(x, lo)
    keep = True if hi is None else (up <= hi)
    from_x = keep if lo is None else (x >= lo) & keep
    from_lo = None if lo is None else (x < lo) & keep
    from_hi = None if hi is None else ~keep
    return from_x, from_lo, from_hi


defderiv(np.clip,
         lambda ans, x, a_min=None, a_max=None, out=None, **kw:
         _clip_masks(x, a_min, a_max, kw)[0],
         lambda ans, x, a_min=None, a_max=None, out=None, **kw:
         _clip_masks(x, a_min, a_max, kw)[1],
         lambda ans, x, a_min=None, a_max=None, out=None, **kw:
         _clip_masks(x, a_min, a_max, kw)[2])
# numpy >= 2.1's keyword-only spellings of the bounds
defparam(np.clip, "min", lambda g, ans, x, a_min=None, a_max=None, out=None, **kw:
         g * _clip_masks(x, a_min, a_max, kw)[1],
         lambda t, ans, x, a_min=None, a_max=None, out=None, **kw:
         t * _clip_masks(x, a_min, a_max, kw)[1])
defparam(np.clip, "max", lambda g, ans, x, a_min=None, a_max=None, out=None, **kw:
         g * _clip_masks(x, a_min, a_max, kw)[2],
         lambda t, ans, x, a_min=None, a_max=None, out=None, **kw:
         t * _clip_masks(x, a_min, a_max, kw)[2])

defzero(np.round, np.around, np.fix)
defalias(numpy_function("round_"), np.round)        # numpy 1 only, deprecated


# sinc(x) = sin(pi x) / (pi x); its derivative (cos(pi x) - sinc(x)) / x tends to 0 at 0
def _dsinc(x, ans):
    return np.where(x == 0, 0.0, (np.cos(math.pi * x) - ans) / np.where(x == 0, 1.0, x))


defderiv(np.sinc, lambda ans, x: _dsinc(x, ans))

# nan_to_num replaces non-finite values by its nan=, posinf= and neginf= values; numpy's
# defaults (0 and the largest finite values) are constants
def _nan_to_num_param(test):
    def vjp(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
        return _replaced(g, x, test)

    def jvp(t, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
        if getattr(x, "dtype", np.dtype(float)).kind == "c":
            return t * test(np.real(x)) + 1j * t * test(np.imag(x))
        return t * test(x)
    return vjp, jvp


def _replaced(g, x, test):
    """The adjoint of a value put where ``test(x)``; for complex ``x`` numpy replaces in
    the real and imaginary parts separately."""
    if getattr(x, "dtype", np.dtype(float)).kind == "c":
        return np.real(g) * test(np.real(x)) + np.imag(g) * test(np.imag(x))
    return g * test(x)


def _kept(t, x):
    """``t`` where x is finite, part by part for complex x (numpy replaces each part alone)."""
    if getattr(x, "dtype", np.dtype(float)).kind == "c":
        return np.real(t) * np.isfinite(np.real(x)) + 1j * np.imag(t) * np.isfinite(np.imag(x))
    return t * np.isfinite(x)


# complex x: each part kept on its own, not a product g * conj(d)
defvjp(np.nan_to_num, lambda g, ans, x, *a, **k: _kept(g, x))
defjvp(np.nan_to_num, lambda t, ans, x, *a, **k: _kept(t, x))
defparam(np.nan_to_num, "nan", *_nan_to_num_param(np.isnan))
defparam(np.nan_to_num, "posinf", *_nan_to_num_param(np.isposinf))
defparam(np.nan_to_num, "neginf", *_nan_to_num_param(np.isneginf))

# np.astype (numpy >= 2.1), like the method: the engine casts the adjoint back
_astype = numpy_function("astype")
defvjp(_astype, lambda g, ans, x, dtype, **kw: g)
defjvp(_astype, lambda t, ans, x, dtype, **kw: _astype(t, dtype))


# angle(z) = atan2(Im z, Re z) is real-valued, so its gradient is
# d/dRe + i d/dIm = i z / |z|^2 (zero for real z, where it is piecewise constant)
def _abs2(z):
    return np.real(z * conj(z))


def _angle_vjp(g, ans, z, deg=False):
    scale = 180.0 / math.pi if deg else 1.0
    if getattr(z, "dtype", np.dtype(float)).kind != "c":
        return g * 0.0
    r2 = _abs2(z)
    return g * scale * 1j * z / np.where(r2 == 0, 1.0, r2)


def _angle_jvp(t, ans, z, deg=False):
    scale = 180.0 / math.pi if deg else 1.0
    if getattr(z, "dtype", np.dtype(float)).kind != "c":
        return np.real(t) * 0.0
    r2 = _abs2(z)
    return scale * np.imag(conj(z) * t) / np.where(r2 == 0, 1.0, r2)


defvjp(np.angle, _angle_vjp)
defjvp(np.angle, _angle_jvp)

# real_if_close only drops a negligible imaginary part; unwrap adds multiples of 2*pi (g
# passes as it is: no product g * 1)
defvjp(np.real_if_close, lambda g, ans, a, *r, **k: g)
defjvp(np.real_if_close, lambda t, ans, a, *r, **k: t)
defvjp(np.unwrap, lambda g, ans, p, *r, **k: g)
defjvp(np.unwrap, lambda t, ans, p, *r, **k: t)

defnondiff(np.isneginf, np.isposinf, np.iscomplex, np.isreal, np.iscomplexobj, np.isrealobj)


# --- interp: piecewise-linear, f = fp_i + slope_i (x - xp_i) on [xp_i, xp_i+1] ----------------
def _interp_parts(x, xp, fp, left, right, period):
    """Interval index, its slope, the position inside it, and which points are inside.

    The interval is read from the values (a constant of the rule); outside
    ``[xp[0], xp[-1]]`` the value is the end (or left/right), flat in ``x``.
    """
    if period is not None:
        refuse("np.interp", "period= (periodic interpolation)")
    xv, xpv = value_of(x), value_of(xp)
    n = xpv.shape[0]
    idx = np.clip(np.searchsorted(xpv, xv, side="right") - 1, 0, max(n - 2, 0))
    nxt = np.minimum(idx + 1, n - 1)
    width = xp[nxt] - xp[idx]
    safe = np.where(width == 0, 1.0, width)
    slope = (fp[nxt] - fp[idx]) / safe
    inside = (xv >= xpv[0]) & (xv <= xpv[-1]) & (value_of(width) != 0)
    lam = np.where(inside, (x - xp[idx]) / safe, np.where(xv > xpv[-1], 1.0, 0.0))
    return idx, nxt, slope, lam, inside, safe


def _outside(x, xp, right):
    """Where ``x`` lies left (or right) of the sample points: there the value is left= (right=)."""
    xv, xpv = value_of(x), value_of(xp)
    return xv > xpv[-1] if right else xv < xpv[0]


def _interp_vjp_x(g, ans, x, xp, fp, left=None, right=None, period=None):
    idx, nxt, slope, lam, inside, safe = _interp_parts(x, xp, fp, left, right, period)
    return g * conj(slope) * inside


def _interp_fp_weights(x, xp, fp, left, right, period):
    """``(idx, nxt, w_idx, w_nxt)``: fp's share in each output (none where left/right rule)."""
    idx, nxt, slope, lam, inside, safe = _interp_parts(x, xp, fp, left, right, period)
    xv, xpv = value_of(x), value_of(xp)
    active = ~(((xv < xpv[0]) & (left is not None)) | ((xv > xpv[-1]) & (right is not None)))
    return idx, nxt, (1 - lam) * active, lam * active


def _interp_vjp_fp(g, ans, x, xp, fp, left=None, right=None, period=None):
    idx, nxt, w0, w1 = _interp_fp_weights(x, xp, fp, left, right, period)
    shape = shape_of(fp)
    return scatter_add(g * w0, (idx,), shape) + scatter_add(g * w1, (nxt,), shape)


def _interp_xp_shares(x, xp, fp, left, right, period):
    idx, nxt, slope, lam, inside, safe = _interp_parts(x, xp, fp, left, right, period)
    # df/dxp_i = slope (x - xp_{i+1}) / width, df/dxp_{i+1} = -slope (x - xp_i) / width
    return (idx, nxt, slope * (x - xp[nxt]) / safe * inside,
            -slope * (x - xp[idx]) / safe * inside)


def _interp_vjp_xp(g, ans, x, xp, fp, left=None, right=None, period=None):
    idx, nxt, d0, d1 = _interp_xp_shares(x, xp, fp, left, right, period)
    shape = shape_of(xp)
    return (scatter_add(np.real(g * conj(d0)), (idx,), shape)
            + scatter_add(np.real(g * conj(d1)), (nxt,), shape))


def _interp_jvp_fp(t, ans, x, xp, fp, left=None, right=None, period=None):
    idx, nxt, w0, w1 = _interp_fp_weights(x, xp, fp, left, right, period)
    return t[idx] * w0 + t[nxt] * w1


def _interp_jvp_xp(t, ans, x, xp, fp, left=None, right=None, period=None):
    idx, nxt, d0, d1 = _interp_xp_shares(x, xp, fp, left, right, period)
    return t[idx] * d0 + t[nxt] * d1


defvjp(np.interp, _interp_vjp_x, _interp_vjp_xp, _interp_vjp_fp)
def _interp_jvp_x(t, ans, x, xp, fp, left=None, right=None, period=None):
    idx, nxt, slope, lam, inside, safe = _interp_parts(x, xp, fp, left, right, period)
    return t * slope * inside


defjvp(np.interp, _interp_jvp_x, _interp_jvp_xp, _interp_jvp_fp)
defparam(np.interp, "left",
         lambda g, ans, x, xp, fp, left=None, right=None, period=None: g * _outside(x, xp, False),
         lambda t, ans, x, xp, fp, left=None, right=None, period=None: t * _outside(x, xp, False))
defparam(np.interp, "right",
         lambda g, ans, x, xp, fp, left=None, right=None, period=None: g * _outside(x, xp, True),
         lambda t, ans, x, xp, fp, left=None, right=None, period=None: t * _outside(x, xp, True))
