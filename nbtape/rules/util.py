"""Small helpers that gradient rules share: complex conjugates, shapes, numpy's
"not given" defaults, and a refusal for a keyword a rule does not support."""
import numpy as np

from ..core.arrays import shape_of  # noqa: F401  (rules read it here)
from ..core.state import keeps_every_call, tls
from ..diagnostics.errors import NoGradientRuleError

NV = np._NoValue            # numpy's default for a keyword that was not given


def conj(x):
    """``np.conj(x)`` for complex values; real values pass through untouched (and fast)."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        return x.conjugate() if isinstance(x, complex) else x
    return np.conj(x) if dt.kind == "c" else x


# Summing this many terms or more of a low-precision dtype (float16, float32, complex64)
# takes a float64 accumulator.  numpy adds along an outer axis one row at a time, so a
# float32 running sum of ones stops growing at 2**24 (each further 1.0 rounds away) and
# one of n terms may be off by about n * eps; past count * eps = 2**-8 that is too much
# for a gradient.  Below it (the usual batch) the sum stays in the dtype and costs nothing.
_ACCURATE_FROM = {"e": 4, "f": 1 << 15, "F": 1 << 15}
_NEVER = 1 << 62


def accurate_sum(g, axis, count, keepdims=False):
    """``g.sum(axis)``, with a float64 (complex128) accumulator when ``count`` terms of
    ``g``'s dtype would lose precision (see ``_ACCURATE_FROM``); the result keeps the dtype.

    >>> ones = np.broadcast_to(np.float32(1), (3 << 23, 2))     # 25 million rows
    >>> accurate_sum(ones, 0, 3 << 23)                           # not 2**24 = 16777216
    array([25165824., 25165824.], dtype=float32)
    """
    dt = g.dtype
    limit = _ACCURATE_FROM.get(dt.char)
    if limit is None or count < limit:
        if type(g) is np.ndarray:
            return np.add.reduce(g, axis=axis, keepdims=keepdims)
        return g.sum(axis=axis, keepdims=keepdims)
    wide = np.complex128 if dt.kind == "c" else np.float64
    if type(g) is np.ndarray:
        return np.add.reduce(g, axis=axis, dtype=wide, keepdims=keepdims).astype(dt)
    # a Tensor (recorded, for higher derivatives) or a Dask array
    return g.astype(wide).sum(axis=axis, keepdims=keepdims).astype(dt)


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def unbroadcast(g, shape, dtype):
    """Sum ``g`` down to ``shape`` (undoing broadcasting) and give it ``dtype``.

    >>> unbroadcast(np.ones((3, 2)), (1, 2), np.dtype("float32"))
    array([[3., 3.]], dtype=float32)
    """
    gshape = getattr(g, "shape", None)
    if gshape is None:
        g = np.asarray(g)
        gshape = g.shape
    # the usual: a plain array whose sums are exact in its own dtype (fewer terms than
    # accurate_sum widens for) is summed by numpy straight away
    plain = (gshape != shape and type(g) is np.ndarray
             and g.size < _ACCURATE_FROM.get(g.dtype.char, _NEVER))
    if gshape != shape and not shape:
        # down to a scalar (a loss's parameter): one full sum (ndarray.sum's Python
        # wrapper costs more than the sum of a small array)
        g = np.add.reduce(g, axis=None) if plain else accurate_sum(g, None, g.size)
        gshape = ()
    if gshape != shape:
        lead = len(gshape) - len(shape)
        # g.sum: the ndarray method is cheaper than np.sum's dispatch, and a Tensor's
        # method records the same op (np.add.reduce, what ndarray.sum calls, cheaper still)
        if lead > 0:
            axes = tuple(range(lead))
            g = (np.add.reduce(g, axis=0 if lead == 1 else axes) if plain
                 else accurate_sum(g, 0 if lead == 1 else axes, _count(gshape, axes)))
            gshape = g.shape
        if gshape != shape:     # (a bias's adjoint is done: its batch axis is summed)
            axes = tuple(i for i, (s, gs) in enumerate(zip(shape, gshape))
                         if s == 1 and gs != 1)
            if axes:
                g = (np.add.reduce(g, axis=axes, keepdims=True) if plain
                     else accurate_sum(g, axes, _count(gshape, axes), keepdims=True))
                gshape = g.shape
            if gshape != shape and not same_shape(gshape, shape):
                g = np.broadcast_to(g, shape)
    gd = g.dtype
    if gd != dtype:
        if gd.kind == "c" and dtype.kind != "c":
            g = np.real(g)
        if g.dtype != dtype:
            g = g.astype(dtype)
    return g


def known(shape):
    """False when an array's shape holds a length Dask does not know yet (``nan``: what a
    boolean mask leaves).

    >>> known((2, 3)), known((float("nan"), 3))
    (True, False)
    """
    return all(n == n for n in shape)


def same_shape(a, b):
    """Shapes equal where both are known: Dask gives a length it does not know yet (after
    a boolean mask) as ``nan``, a new float each time, so ``(nan,) != (nan,)``.

    >>> same_shape((float("nan"), 3), (float("nan"), 3)), same_shape((2,), (3,))
    (True, False)
    """
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


def normalize_axis(axis, ndim):
    """Axis (or tuple of axes) as a tuple of non-negative ints; None means all."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(a % ndim for a in axis) if ndim else ()
    return (axis % ndim,) if ndim else ()


def expand_reduced(g, shape, axis, keepdims, like=None):
    """Broadcast a reduction's adjoint back over the reduced axes (of ``like``, the
    reduced array, when its lengths are unknown: see below)."""
    if not keepdims:
        if type(axis) is int and shape:     # np.sum(x, axis=1): the reduced axis back as 1
            a = axis % len(shape)
            if type(g) is np.ndarray and g.flags.c_contiguous and g.dtype.kind in "fc" \
                    and g.size and g.shape == shape[:a] + shape[a + 1:]:
                return _stretched(g, shape, a)
            kept = shape[:a] + (1,) + shape[a + 1:]
        else:
            axes = normalize_axis(axis, len(shape))
            kept = tuple(1 if i in axes else s for i, s in enumerate(shape)) if axes else None
        if kept is not None:
            g = g.reshape(kept) if type(g) is np.ndarray else np.reshape(g, kept)
    if like is not None and not known(shape):
        # Dask broadcasts to an unknown length as one block: laid out like the input
        # instead, the adjoint keeps its blocks (a masked selection's gradient needs them)
        return np.zeros_like(like, dtype=np.result_type(g)) + g
    return np.broadcast_to(g, shape)


def _stretched(g, shape, axis):
    """``np.broadcast_to(np.expand_dims(g, axis), shape)`` for a contiguous float array:
    the same read-only view (stride 0 along ``axis``), made without broadcast_to's
    iterator, which costs several times the view itself on a training step's arrays."""
    strides = g.strides
    out = np.ndarray(shape, g.dtype, g, 0, strides[:axis] + (0,) + strides[axis:])
    out.flags.writeable = False
    return out


def H(a):
    """Conjugate transpose of (a stack of) matrices.

    >>> H(np.array([[1, 2j], [3, 4]]))
    array([[1.-0.j, 3.-0.j],
           [0.-2.j, 4.-0.j]])
    """
    return conj(np.swapaxes(a, -1, -2))


def given(value):
    """True if a keyword argument was actually passed (numpy's default is ``np._NoValue``).

    >>> given(np._NoValue), given(None), given(2.0)
    (False, False, True)
    """
    return value is not NV and value is not None


def masked(where):
    """True if a ``where=`` mask was passed (numpy's defaults are ``np._NoValue`` or True).

    >>> masked(True), masked(np._NoValue), masked(np.array([True, False]))
    (False, False, True)
    """
    return where is not NV and where is not None and where is not True


def flag(keepdims):
    """``keepdims`` as a bool (numpy's default is ``np._NoValue``).

    >>> flag(np._NoValue), flag(True)
    (False, True)
    """
    return bool(keepdims) if keepdims is not NV else False


def refuse(name, what):
    """Raise for a keyword a rule cannot differentiate (instead of ignoring it).

    >>> refuse("np.var", "the where= argument")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NoGradientRuleError: nbtape's gradient for np.var does not support the where= argument.
    """
    raise NoGradientRuleError(
        f"nbtape's gradient for {name} does not support {what}. Compute the same "
        "value without it (for a mask, apply np.where to the input first), or take the "
        "gradient of a value that does not go through it.")


def value_of(x):
    """The plain array behind ``x``, for masks and indices that are constants of the
    rule (reading ``_value`` keeps the tape from noting an escape).

    >>> import nbtape as nt
    >>> value_of(nt.constant([1.0, 2.0]))
    array([1., 2.])
    """
    stack = tls.stack
    if stack and hasattr(x, "_value"):
        # nt.function's tracer (it keeps every call) is told: a value the rule reads in
        # Python would be frozen in the program, so a trace through it is refused
        for rec in stack:
            if keeps_every_call(rec):
                rec.note_escape(x, "a rule's reading of its operand's value")
    return np.asarray(getattr(x, "_value", x))
