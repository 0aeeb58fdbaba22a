"""Elementwise numpy functions that are not ufuncs: clip, round, sinc, angle, ...

``np.clip`` follows TensorFlow's ``clip_by_value``: a value exactly on a bound
passes its gradient to ``x``, and a bound receives the gradient of the
elements it clipped.
"""
import math

import numpy as np

from .registry import defjvp, defnondiff, defvjp, defzero
from .util import conj


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


defvjp(np.clip,
       lambda g, ans, x, a_min=None, a_max=None, out=None, **kw:
       g * _clip_masks(x, a_min, a_max, kw)[0],
       lambda g, ans, x, a_min=None, a_max=None, out=None, **kw:
       g * _clip_masks(x, a_min, a_max, kw)[1],
       lambda g, ans, x, a_min=None, a_max=None, out=None, **kw:
       g * _clip_masks(x, a_min, a_max, kw)[2])
defjvp(np.clip,
       lambda t, ans, x, a_min=None, a_max=None, out=None, **kw:
       t * _clip_masks(x, a_min, a_max, kw)[0],
       lambda t, ans, x, a_min=None, a_max=None, out=None, **kw:
       t * _clip_masks(x, a_min, a_max, kw)[1],
       lambda t, ans, x, a_min=None, a_max=None, out=None, **kw:
       t * _clip_masks(x, a_min, a_max, kw)[2])

defzero(np.round, np.around, np.fix)


# sinc(x) = sin(pi x) / (pi x); its derivative (cos(pi x) - sinc(x)) / x tends to 0 at 0
def _dsinc(x, ans):
    return np.where(x == 0, 0.0, (np.cos(math.pi * x) - ans) / np.where(x == 0, 1.0, x))


defvjp(np.sinc, lambda g, ans, x: g * _dsinc(x, ans))
defjvp(np.sinc, lambda t, ans, x: t * _dsinc(x, ans))

# nan_to_num replaces non-finite values by constants
defvjp(np.nan_to_num, lambda g, ans, x, *a, **k: g * np.isfinite(x))
defjvp(np.nan_to_num, lambda t, ans, x, *a, **k: t * np.isfinite(x))


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

# real_if_close only drops a negligible imaginary part; unwrap adds multiples of 2*pi
defvjp(np.real_if_close, lambda g, ans, a, *r, **k: g)
defjvp(np.real_if_close, lambda t, ans, a, *r, **k: t)
defvjp(np.unwrap, lambda g, ans, p, *r, **k: g)
defjvp(np.unwrap, lambda t, ans, p, *r, **k: t)

defnondiff(np.isneginf, np.isposinf, np.iscomplex, np.isreal, np.iscomplexobj, np.isrealobj)
