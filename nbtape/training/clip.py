"""Clipping values and gradients, as TensorFlow's ``clip_by_*`` functions.

All of them take tensors, variables or plain arrays (plain in, plain out) and
are differentiable, so they can be used inside a tape or inside a
``custom_gradient``'s backward function (clipping the incoming gradient).
"""
import numpy as np

from ..core.primitive import primitive
from ..core.registry import defjvp, defvjp
from ..core.tensor import TensorLike


def _value(t):
    """A tensor or variable as it is; anything else as a numpy array."""
    return t if isinstance(t, TensorLike) else np.asarray(t)


def _plain(v):
    return np.asarray(v._value if isinstance(v, TensorLike) else v)


def _like(v, t):
    """A bound given as a plain number takes ``t``'s dtype (float32 stays float32)."""
    if isinstance(v, TensorLike):
        return v
    dtype = t.dtype if t.dtype.kind in "fc" else np.result_type(float)
    return np.asarray(v, dtype=dtype)


# --- clip_by_value -------------------------------------------------------------------------
@primitive
def _clip(t, lo, hi):
    return np.minimum(np.maximum(t, lo), hi)


# TensorFlow's rule: the gradient passes where lo <= t <= hi, and goes to the
# bound that was applied elsewhere.
defvjp(_clip.raw,
       lambda g, ans, t, lo, hi: np.where(np.logical_or(t < lo, t > hi), 0.0, g),
       lambda g, ans, t, lo, hi: np.where(t < lo, g, 0.0),
       lambda g, ans, t, lo, hi: np.where(t > hi, g, 0.0),
       name="clip_by_value")
defjvp(_clip.raw,
       lambda d, ans, t, lo, hi: np.where(np.logical_or(t < lo, t > hi), 0.0, d),
       lambda d, ans, t, lo, hi: np.where(t < lo, d, 0.0),
       lambda d, ans, t, lo, hi: np.where(t > hi, d, 0.0))


def clip_by_value(t, clip_value_min, clip_value_max):
    """Clip ``t`` elementwise to ``[clip_value_min, clip_value_max]``.

    The gradient is 1 where ``t`` lies inside the bounds (inclusive) and 0 where
    a bound replaced it, as in TensorFlow.

    >>> import numpy as np, nbtape as nt
    >>> nt.clip_by_value(np.array([-3.0, 0.5, 7.0]), -1.0, 1.0)
    array([-1. ,  0.5,  1. ])
    >>> x = nt.constant([-3.0, 0.5, 7.0])
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = nt.clip_by_value(x, -1.0, 1.0)
    >>> tape.gradient(y, x).numpy()
    array([0., 1., 0.])
    """
    t = _value(t)
    lo, hi = _like(clip_value_min, t), _like(clip_value_max, t)
    if np.any(_plain(lo) > _plain(hi)):
        raise ValueError(
            f"clip_by_value got clip_value_min {_plain(lo)} greater than clip_value_max "
            f"{_plain(hi)}, so no value can satisfy both bounds. Swap the two arguments "
            "(the minimum comes first).")
    return _clip(t, lo, hi)


# --- norms ---------------------------------------------------------------------------------------
def _squares(t, axes=None, keepdims=False):
    """Sum of |t|^2 (real even for complex t), differentiable."""
    sq = np.real(t * np.conj(t)) if t.dtype.kind == "c" else t * t
    return np.sum(sq, axis=axes, keepdims=keepdims)


def _check_clip_norm(clip_norm, fn):
    if np.any(_plain(clip_norm) <= 0):
        raise ValueError(
            f"{fn} needs a positive clip_norm, got {_plain(clip_norm)}: it is the largest "
            "norm the result may have. Pass a number greater than 0.")


def _safe_sqrt(s):
    # sqrt'(0) is infinite: take the root only where s > 0, so a zero input gives a
    # zero norm with a finite (zero) gradient instead of NaN
    positive = s > 0
    return np.where(positive, np.sqrt(np.where(positive, s, 1.0)), s)


def _axes(axes):
    """``axes`` as numpy takes them: TensorFlow takes a list (or a tensor) of axes, numpy
    only an int or a tuple."""
    if axes is None or isinstance(axes, (int, np.integer)):
        return axes
    return tuple(int(a) for a in np.ravel(_plain(axes)))


def clip_by_norm(t, clip_norm, axes=None):
    """Rescale ``t`` so that its L2 norm (over ``axes``, default all) is at most ``clip_norm``.

    Values whose norm is already at most ``clip_norm`` come back unchanged.
    Differentiable, so it can clip gradients inside a ``custom_gradient``.

    >>> import numpy as np, nbtape as nt
    >>> nt.clip_by_norm(np.array([3.0, 4.0]), 1.0)
    array([0.6, 0.8])
    >>> nt.clip_by_norm(np.array([0.3, 0.4]), 1.0)
    array([0.3, 0.4])
    >>> nt.clip_by_norm(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1])
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    t = _value(t)
    clip_norm = _like(clip_norm, t)
    _check_clip_norm(clip_norm, "clip_by_norm")
    norm = _safe_sqrt(_squares(t, _axes(axes), keepdims=True))
    # divide by max(norm, clip_norm): a factor of 1 when already short enough
    return t * clip_norm / np.where(norm > clip_norm, norm, clip_norm)


def _as_list(t_list, fn):
    if isinstance(t_list, (TensorLike, np.ndarray)) or not hasattr(t_list, "__iter__"):
        raise TypeError(
            f"{fn} expects a list (or tuple) of tensors, such as the gradients from "
            f"tape.gradient(loss, variables), not a single {type(t_list).__name__}. Wrap a "
            f"single tensor in a list: {fn}([t], ...).")
    return list(t_list)


def global_norm(t_list):
    """``sqrt(sum of squares of every element of every tensor)``; ``None`` entries are ignored.

    >>> import numpy as np, nbtape as nt
    >>> float(nt.global_norm([np.array([3.0]), None, np.array([[4.0]])]))
    5.0
    """
    total = None
    for t in _as_list(t_list, "global_norm"):
        if t is None:
            continue
        s = _squares(_value(t))
        total = s if total is None else total + s
    if total is None:
        return np.float64(0.0)
    return _safe_sqrt(total)


def clip_by_global_norm(t_list, clip_norm, use_norm=None):
    """Scale every tensor in ``t_list`` by the same factor so their global norm is <= ``clip_norm``.

    Returns ``(clipped_list, global_norm)``, the norm being the one *before*
    clipping, as TensorFlow does.  ``None`` entries stay ``None``.  If the
    global norm is infinite or NaN every clipped value is NaN (a loud failure
    rather than a silent huge step).

    >>> import numpy as np, nbtape as nt
    >>> clipped, norm = nt.clip_by_global_norm([np.array([3.0]), np.array([4.0])], 1.0)
    >>> float(norm), [c.tolist() for c in clipped]
    (5.0, [[0.6], [0.8]])
    """
    t_list = _as_list(t_list, "clip_by_global_norm")
    if use_norm is None:
        use_norm = global_norm(t_list)
    use_norm = _value(use_norm)
    clip_norm = _like(clip_norm, use_norm)
    _check_clip_norm(clip_norm, "clip_by_global_norm")
    with np.errstate(invalid="ignore"):
        scale = np.where(use_norm > clip_norm,
                         clip_norm / np.where(use_norm > 0, use_norm, 1.0), 1.0)
        # adds 0 for a finite norm and NaN otherwise, as TensorFlow does
        scale = scale + (use_norm - use_norm)
    clipped = []
    for t in t_list:
        if t is None:
            clipped.append(None)
            continue
        t = _value(t)
        s = scale if scale.dtype == t.dtype or t.dtype.kind not in "fc" else scale.astype(t.dtype)
        clipped.append(t * s)
    return clipped, use_norm
