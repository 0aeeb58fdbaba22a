"""Shape functions: reshape, transpose, broadcast, join, split, tile, flip, roll, pad.

Each is linear in its arrays, so its JVP is the function applied to the tangent.
Its VJP undoes the movement: reshape back, move the axes back, flip or roll back,
split what was joined, join what was split.  Functions that copy elements (tile,
repeat, the reflecting pad modes) are selections (see ``indexing``).
"""
import numpy as np

from ..extend import defjvp, deflinear, defvjp
from . import padding
from .indexing import defselection, positions, raw, unselect
from ..core.registry import POSITIONAL, SEQUENCE, VARARGS, defparam, defrule, numpy_function, defprimitive
from .util import shape_of


# --- same elements, new shape: VJP reshapes back, JVP reshapes forward --------------------
def _reshape_back(g, ans, x, *args, **kw):
    return np.reshape(g, shape_of(x))


def _reshape_forward(t, ans, x, *args, **kw):
    return np.reshape(t, shape_of(ans))


def _one_array(fn):
    """Record ``fn`` for one array per call (``np.atleast_2d(a, b)`` returns a tuple, and a
    rule has one output arity)."""
    def call(*arrays):
        if len(arrays) != 1:
            raise TypeError(f"nbtape records {fn.__name__} on one array at a time: write "
                            f"np.{fn.__name__}(a), np.{fn.__name__}(b) instead of "
                            f"np.{fn.__name__}(a, b) when they are tensors.")
        return fn(arrays[0])
    defprimitive(fn, fn=call)


for _fn in (np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d, np.atleast_3d):
    defvjp(_fn, _reshape_back)
    defjvp(_fn, _reshape_forward)
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _one_array(_fn)


def _order(x, order):
    """'C' or 'F': the element order ``order`` means for ``x`` (None: strided memory order)."""
    if order in ("C", "F"):
        return order
    flags = getattr(raw(x), "flags", None)
    if flags is None or flags.c_contiguous:
        return "C"
    if flags.f_contiguous:
        return "F"
    return "C" if order == "A" else None


def _memory_positions(x):
    # x's flat indices, laid out in memory as x is, read back in memory order
    pos = np.empty_like(raw(x), dtype=np.intp)
    np.copyto(pos, positions(x))
    return np.ravel(pos, order="K")


def _reshaped(g, shape, order):
    # order= only when not "C": Dask's reshape has no order= (and is always C order)
    return np.reshape(g, shape) if order == "C" else np.reshape(g, shape, order=order)


defvjp(np.reshape, lambda g, ans, a, shape=None, order="C", **kw:
       _reshaped(g, shape_of(a), _order(a, order)))
defjvp(np.reshape, lambda t, ans, a, shape=None, order="C", **kw:
       _reshaped(t, shape_of(ans), _order(a, order)))


def _ravel_vjp(g, ans, a, order="C"):
    o = _order(a, order)
    if o is None:
        return unselect(g, a, _memory_positions(a))
    return _reshaped(g, shape_of(a), o)


def _ravel_jvp(t, ans, a, order="C"):
    o = _order(a, order)
    if o is None:
        return np.take(np.ravel(t), _memory_positions(a))
    return np.ravel(t) if o == "C" else np.ravel(t, order=o)    # Dask's has no order=


defvjp(np.ravel, _ravel_vjp)
defjvp(np.ravel, _ravel_jvp)


# --- axes move: VJP moves them back -------------------------------------------------------
def _rollaxis_perm(ndim, axis, start):
    axis, start = axis % ndim, (start + ndim if start < 0 else start)
    axes = [k for k in range(ndim) if k != axis]
    axes.insert(start - (axis < start), axis)
    return axes


defvjp(np.swapaxes, lambda g, ans, x, axis1, axis2: np.swapaxes(g, axis1, axis2))
deflinear(np.swapaxes)
defvjp(np.moveaxis, lambda g, ans, x, source, destination: np.moveaxis(g, destination, source))
deflinear(np.moveaxis)
defvjp(np.rollaxis, lambda g, ans, x, axis, start=0:
       np.transpose(g, tuple(np.argsort(_rollaxis_perm(len(shape_of(x)), axis, start)).tolist())))
deflinear(np.rollaxis)
for _fn in (numpy_function("matrix_transpose"), numpy_function("linalg.matrix_transpose")):
    defvjp(_fn, lambda g, ans, x: np.swapaxes(g, -1, -2))
    deflinear(_fn)

# --- broadcasting: the engine sums each adjoint back to its operand's shape ---------------
defvjp(np.broadcast_to, lambda g, ans, x, shape, **k: g)
deflinear(np.broadcast_to)
defrule(np.broadcast_arrays,
        lambda g, ans, args, kw, needs: list(g),
        lambda ts, ans, args, kw: tuple(None if t is None else np.broadcast_to(t, shape_of(a))
                                        for t, a in zip(ts, ans)),
        kind=VARARGS, multi=True)


# --- joining: VJP splits the adjoint at the operands' (promoted) sizes --------------------
def _at_least(n):
    """The shape ``np.atleast_{n}d`` gives an array of shape ``s``."""
    def promote(s):
        if len(s) >= n:
            return s
        if n == 3:
            return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)]
        return (1,) * (n - len(s)) + tuple(s)
    return promote


def _column(s):
    return s if len(s) >= 2 else ((*s, 1) if s else (1, 1))


def _flat(s):
    return (int(np.prod(s)),)


def _stacked(axis):
    def promote(s):
        ax = axis % (len(s) + 1)
        return (*s[:ax], 1, *s[ax:])
    return promote


def _join_layout(fn, xs, args, kw):
    """(promote, axis): each operand's shape in the result, and the joining axis."""
    axis = args[0] if args else kw.get("axis", 0)
    if fn is np.concatenate:
        return (_flat, 0) if axis is None else ((lambda s: s), axis)
    if fn is np.stack:
        return _stacked(axis), axis
    if fn is np.hstack:
        return _at_least(1), (0 if xs and len(shape_of(xs[0])) <= 1 else 1)
    return {np.vstack: (_at_least(2), 0), np.dstack: (_at_least(3), 2),
            np.column_stack: (_column, 1)}[fn]


def _split_to(g, xs, promote, axis):
    sizes = [promote(tuple(shape_of(x)))[axis] for x in xs]
    # slices, not np.split: Dask has no split (and slicing is lazy there)
    axis %= len(shape_of(g))
    ends = np.cumsum(sizes).tolist()
    lead = (slice(None),) * axis
    parts = [g[lead + (slice(e - n, e),)] for n, e in zip(sizes, ends)]
    return [np.reshape(p, shape_of(x)) for p, x in zip(parts, xs)]


def _zeros_for_missing(ts, xs):
    ref = next(t for t in ts if t is not None)
    return [t if t is not None else np.zeros(shape_of(x), np.result_type(ref))
            for t, x in zip(ts, xs)]


def _defjoin(fn):
    def vjp(g, ans, args, kw, needs):
        promote, axis = _join_layout(fn, args[0], args[1:], kw)
        return _split_to(g, args[0], promote, axis)

    def jvp(ts, ans, args, kw):
        return fn(_zeros_for_missing(ts, args[0]), *args[1:], **kw)
    defrule(fn, vjp, jvp, kind=SEQUENCE)


for _fn in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack):
    _defjoin(_fn)


def _append_part(k):
    def vjp(g, ans, arr, values, axis=None):
        xs = (arr, values)
        if axis is None:
            return _split_to(np.ravel(g), xs, _flat, 0)[k]
        return _split_to(g, xs, lambda s: s, axis)[k]
    return vjp


defvjp(np.append, _append_part(0), _append_part(1))
defjvp(np.append,
       lambda t, ans, arr, values, axis=None:
       np.append(t, np.zeros(shape_of(values), t.dtype), axis),
       lambda t, ans, arr, values, axis=None:
       np.append(np.zeros(shape_of(arr), t.dtype), t, axis))


# --- splitting: VJP joins the (zero-filled) adjoints back ---------------------------------
def _defsplit(fn, axis_of):
    defrule(fn, lambda g, ans, args, kw, needs: [np.concatenate(list(g), axis=axis_of(args, kw))],
            lambda ts, ans, args, kw: fn(ts[0], *args[1:], **kw),
            kind=POSITIONAL, multi=True)


_defsplit(np.split, lambda args, kw: args[2] if len(args) > 2 else kw.get("axis", 0))
_defsplit(np.array_split, lambda args, kw: args[2] if len(args) > 2 else kw.get("axis", 0))
_defsplit(np.hsplit, lambda args, kw: 1 if len(shape_of(args[0])) > 1 else 0)
_defsplit(np.vsplit, lambda args, kw: 0)
_defsplit(np.dsplit, lambda args, kw: 2)
unstack = numpy_function("unstack")                  # numpy >= 2.1
defrule(unstack, lambda g, ans, args, kw, needs: [np.stack(list(g), axis=kw.get("axis", 0))],
        lambda ts, ans, args, kw: unstack(ts[0], **kw), kind=POSITIONAL, multi=True)


# --- copies of elements: selections -------------------------------------------------------
defselection(np.tile)
defselection(np.repeat)


# --- reversals and rotations: VJP turns back ----------------------------------------------
defvjp(np.flip, lambda g, ans, m, axis=None: np.flip(g, axis))
deflinear(np.flip)
defvjp(np.fliplr, lambda g, ans, m: np.fliplr(g))
deflinear(np.fliplr)
defvjp(np.flipud, lambda g, ans, m: np.flipud(g))
deflinear(np.flipud)
defvjp(np.rot90, lambda g, ans, m, k=1, axes=(0, 1): np.rot90(g, -k, axes))
deflinear(np.rot90)
defvjp(np.roll, lambda g, ans, a, shift, axis=None: np.roll(g, np.negative(raw(shift)), axis))
deflinear(np.roll)


# --- pad: crop the adjoint (constant mode), or a selection (edge, reflect, symmetric, wrap)
_SELECTING_PADS = ("edge", "reflect", "symmetric", "wrap")


def _pad_mode(mode, kw):
    even = kw.get("reflect_type", "even") == "even"
    if mode == "constant" or (mode in _SELECTING_PADS and even):
        return mode
    padding.supported(mode, kw)         # or refused by name (NoGradientRuleError)
    return "computed"


def _pad_before(pad_width, nd):
    """How much ``np.pad`` adds before each axis (pad_width: int, pairs, or {axis: width})."""
    pw = raw(pad_width)
    if isinstance(pw, dict):
        before = [0] * nd
        for ax, w in pw.items():
            before[ax % nd] = int(np.broadcast_to(w, (2,))[0])
        return before
    return [int(b) for b in np.broadcast_to(np.asarray(pw), (nd, 2))[:, 0]]


def _pad_vjp(g, ans, array, pad_width, mode="constant", **kw):
    shape = shape_of(array)
    kind = _pad_mode(mode, kw)
    if kind == "computed":
        return padding.pad_vjp(g, array, pad_width, mode, kw)
    if kind == "constant":
        before = _pad_before(pad_width, len(shape))
        return g[tuple(slice(b, b + n) for b, n in zip(before, shape))]
    return unselect(g, array, np.pad(positions(array), raw(pad_width), mode, **kw))


def _pad_jvp(t, ans, array, pad_width, mode="constant", **kw):
    kind = _pad_mode(mode, kw)
    if kind == "computed":
        return padding.pad_jvp(t, array, pad_width, mode, kw)
    if kind == "constant":
        return np.pad(t, pad_width)     # the fill value is a constant: its tangent is zero
    return np.pad(t, pad_width, mode, **kw)


defvjp(np.pad, _pad_vjp)
defjvp(np.pad, _pad_jvp)


# constant_values=: numpy pads one axis after another, so each axis's pad covers the
# earlier axes' pads too; its (before, after) values get the adjoint of those regions
def _pad_regions(shape, before, after):
    """Index tuples of each axis's (before, after) pad, in the padded array."""
    regions = []
    for ax, (n, b, a) in enumerate(zip(shape, before, after)):
        inner = tuple(slice(bb, bb + nn) for nn, bb in zip(shape[ax + 1:], before[ax + 1:]))
        lead = (slice(None),) * ax
        regions.append((lead + (slice(0, b),) + inner, lead + (slice(b + n, None),) + inner))
    return regions


def _pad_widths(array, pad_width):
    nd = len(shape_of(array))
    pw = raw(pad_width)
    if isinstance(pw, dict):
        widths = np.zeros((nd, 2), dtype=int)
        for ax, w in pw.items():
            widths[ax % nd] = np.broadcast_to(w, (2,))
        return widths
    return np.broadcast_to(np.asarray(pw), (nd, 2))


def _pad_values_vjp(g, ans, array, pad_width, mode="constant", **kw):
    widths = _pad_widths(array, pad_width)
    regions = _pad_regions(shape_of(array), widths[:, 0], widths[:, 1])
    # one (before, after) pair per axis: the engine sums them down to constant_values' shape
    return np.stack([np.stack([np.sum(g[r]) for r in pair]) for pair in regions])


def _pad_values_jvp(t, ans, array, pad_width, mode="constant", **kw):
    return np.pad(np.zeros(shape_of(array), np.result_type(t)), raw(pad_width),
                  constant_values=t)


defparam(np.pad, "constant_values", _pad_values_vjp, _pad_values_jvp)
