"""Reductions: sum lives with the operators (core_ops); the rest are here."""
import numpy as np

from .registry import defjvp, defvjp
from .util import expand_reduced, shape_of


def _count(shape, axis):
    from .util import normalize_axis
    return int(np.prod([shape[a] for a in normalize_axis(axis, len(shape))]))


defvjp(np.mean, lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kw:
       expand_reduced(g, shape_of(x), axis, keepdims) / _count(shape_of(x), axis))
defjvp(np.mean, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kw:
       np.mean(t, axis=axis, keepdims=keepdims))
