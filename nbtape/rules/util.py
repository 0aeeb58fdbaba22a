"""Small helpers that gradient rules share."""
import numpy as np


def conj(x):
    """``np.conj(x)`` for complex values; real values pass through untouched (and fast)."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        return x.conjugate() if isinstance(x, complex) else x
    return np.conj(x) if dt.kind == "c" else x


def shape_of(x):
    s = getattr(x, "shape", None)
    return s if s is not None else np.shape(x)


def unbroadcast(g, shape, dtype):
    """Sum ``g`` down to ``shape`` (undoing broadcasting) and give it ``dtype``.

    >>> unbroadcast(np.ones((3, 2)), (1, 2), np.dtype("float32"))
    array([[3., 3.]], dtype=float32)
    """
    gshape = getattr(g, "shape", None)
    if gshape is None:
        g = np.asarray(g)
        gshape = g.shape
    if gshape != shape:
        lead = len(gshape) - len(shape)
        # g.sum: the ndarray method is cheaper than np.sum's dispatch, and a Tensor's
        # method records the same op
        if lead > 0:
            g = g.sum(axis=tuple(range(lead)))
            gshape = g.shape
        axes = tuple(i for i, (s, gs) in enumerate(zip(shape, gshape)) if s == 1 and gs != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
            gshape = g.shape
        if gshape != shape:
            g = np.broadcast_to(g, shape)
    gd = g.dtype
    if gd != dtype:
        if gd.kind == "c" and dtype.kind != "c":
            g = np.real(g)
        if g.dtype != dtype:
            g = g.astype(dtype)
    return g


def normalize_axis(axis, ndim):
    """Axis (or tuple of axes) as a tuple of non-negative ints; None means all."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(a % ndim for a in axis) if ndim else ()
    return (axis % ndim,) if ndim else ()


def expand_reduced(g, shape, axis, keepdims):
    """Broadcast a reduction's adjoint back over the reduced axes."""
    if not keepdims:
        axes = normalize_axis(axis, len(shape))
        if axes:
            g = np.reshape(g, tuple(1 if i in axes else s for i, s in enumerate(shape)))
    return np.broadcast_to(g, shape)
