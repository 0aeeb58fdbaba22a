"""Shape functions: reshape, broadcasting, joining, selecting."""
import numpy as np

from .registry import POSITIONAL, SEQUENCE, defjvp, defnondiff, defrule, defvjp, deflinear
from .util import shape_of


defvjp(np.reshape, lambda g, ans, x, *a, **k: np.reshape(g, shape_of(x)))
defjvp(np.reshape, lambda t, ans, x, *a, **k: np.reshape(t, shape_of(ans)))
defvjp(np.broadcast_to, lambda g, ans, x, shape, **k: g)   # the engine sums g back
deflinear(np.broadcast_to)
defvjp(np.swapaxes, lambda g, ans, x, a1, a2: np.swapaxes(g, a1, a2))
deflinear(np.swapaxes)
defvjp(np.where, None,
       lambda g, ans, c, x, y: np.where(c, g, 0.0),
       lambda g, ans, c, x, y: np.where(c, 0.0, g))
defjvp(np.where, None,
       lambda t, ans, c, x, y: np.where(c, t, 0.0),
       lambda t, ans, c, x, y: np.where(c, 0.0, t))


def _split_along(g, xs, axis):
    sizes = np.cumsum([shape_of(x)[axis] for x in xs])[:-1]
    return np.split(g, sizes, axis=axis)


def _concat_vjp(g, ans, args, kw, needs):
    xs, axis = args[0], (args[1] if len(args) > 1 else kw.get("axis", 0))
    if axis is None:
        parts = np.split(g, np.cumsum([np.size(np.asarray(shape_of(x))) for x in xs])[:-1])
        return [np.reshape(p, shape_of(x)) for p, x in zip(parts, xs)]
    return _split_along(g, xs, axis)


def _concat_jvp(ts, ans, args, kw):
    xs, rest = args[0], args[1:]
    ts = [t if t is not None else np.zeros(shape_of(x)) for t, x in zip(ts, xs)]
    return np.concatenate(ts, *rest, **kw)


defrule(np.concatenate, _concat_vjp, _concat_jvp, kind=SEQUENCE)


def _stack_vjp(g, ans, args, kw, needs):
    axis = args[1] if len(args) > 1 else kw.get("axis", 0)
    n = len(args[0])
    return [np.take(g, k, axis=axis) for k in range(n)]


def _stack_jvp(ts, ans, args, kw):
    xs, rest = args[0], args[1:]
    ts = [t if t is not None else np.zeros(shape_of(x)) for t, x in zip(ts, xs)]
    return np.stack(ts, *rest, **kw)


defrule(np.stack, _stack_vjp, _stack_jvp, kind=SEQUENCE)


def _split_vjp(g, ans, args, kw, needs):
    x = args[0]
    axis = args[2] if len(args) > 2 else kw.get("axis", 0)
    return [np.concatenate(list(g), axis=axis)]


defrule(np.split, _split_vjp, lambda ts, ans, args, kw: np.split(ts[0], *args[1:], **kw),
        kind=POSITIONAL, multi=True)


def _take_vjp(g, ans, x, indices, axis=None, **kw):
    from .core_ops import scatter_add
    shape = shape_of(x)
    if axis is None:
        flat = scatter_add(g, (np.asarray(indices),), (int(np.prod(shape)),))
        return np.reshape(flat, shape)
    axis = axis % len(shape)
    idx = (slice(None),) * axis + (np.asarray(indices),)
    return scatter_add(g, idx, shape)


defvjp(np.take, _take_vjp)
defjvp(np.take, lambda t, ans, x, indices, axis=None, **kw: np.take(t, indices, axis=axis))

defnondiff(np.shape, np.ndim, np.size, np.zeros_like, np.ones_like, np.empty_like,
           np.argmax, np.argmin, np.argsort, np.nonzero, np.result_type,
           np.allclose, np.isclose, np.array_equal, np.count_nonzero)
