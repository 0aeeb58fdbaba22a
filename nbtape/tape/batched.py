"""One reverse pass for a batch of cotangents: the rows of a Jacobian together.

A Jacobian has one row per element of the target; running ``backward`` once per
row pays the whole pass (planning, bookkeeping, one VJP call per op) that many
times.  Here the seed carries a leading batch axis, ``(B,) + target.shape``, and
every op's VJP is applied to all ``B`` cotangents at once, as PyTorch's
``vmap(vjp)`` does.  Every adjoint in the pass has shape ``(B,) + shape``.

A VJP may take the batch axis only where it is known to treat a leading axis of
``g`` as just more rows:

* nbtape's own elementwise ufunc rules (``g * f'(x)``: numpy broadcasts from the
  right, so a leading axis passes through), checked to return ``(B,) + ans.shape``;
* the few structural rules below (sum, mean, basic indexing, matmul, reshape,
  transpose), written here for a batch axis.

Every other op runs its usual VJP once per row of the batch and the rows are
stacked (the same numbers as the per-row pass, only the bookkeeping is shared), so
a rule nobody has looked at can never give a wrong Jacobian.

>>> import numpy as np, nbtape as nt
>>> x = nt.constant([1.0, 2.0])
>>> with nt.GradientTape() as tape:
...     tape.watch(x)
...     y = np.sin(x) * x[0]
>>> tape.jacobian(y, x).numpy().round(3)
array([[ 1.382,  0.   ],
       [ 0.909, -0.416]])
"""
import math

import numpy as np

from .backward import backward, call_vjp, take_adjoint
from .records import METAS, Op
from .snapshot import check_op
from ..rules.index_primitives import add_at_index, index_value
from ..core.registry import POSITIONAL, RULES
from ..rules.util import accurate_sum, normalize_axis

# Adjoints of at most this many elements in all (a chunk of rows times the largest
# array the pass handles), so that a large Jacobian is built a chunk of rows at a time.
CHUNK_ELEMENTS = 1 << 22

_NV = np._NoValue


class _Unbatched(Exception):
    """This call of a rule cannot take the batch axis: run it row by row."""


def chunk_size(rows, records, reached, target_size):
    """How many rows one pass takes: all of them unless the adjoints would be large."""
    largest = max([target_size] + [math.prod(m[0]) for k in reached[0] for m in records[k][METAS]
                                   if m is not None], default=1)
    return max(1, min(rows, CHUNK_ELEMENTS // max(1, largest)))


def backward_batched(records, seeds, source_ids, reached):
    """The reverse pass of ``backward`` on plain arrays, for a batch of cotangents.

    ``seeds`` maps target ids to arrays of shape ``(B,) + target.shape``; returns
    ``{source id: adjoint of shape (B,) + source.shape}`` for the sources reached.
    """
    positions, reach = reached      # forward_reach(records, source_ids)
    keep = set(source_ids)
    adj = dict(seeds)
    batch = next(iter(seeds.values())).shape[0]
    for k in reversed(positions):
        op = Op(records, k)         # a pass over a batch: a view per op costs little
        g = take_adjoint(adj, op.rule, op.record, keep)
        if g is None:
            continue
        check_op(op)
        in_ids = op.in_ids
        needs = [i is not None and i in reach for i in in_ids]
        try:
            grads = _vjp_batched(op, g, needs, batch)
        except Exception:
            # _Unbatched, or a rule that failed on the batch axis: the row-by-row step
            # gives the per-row pass's numbers, or raises its error (e.g. no rule)
            grads = _vjp_rows(records, k, g, needs, reach, batch)
        for i, need, gi in zip(in_ids, needs, grads):
            if not need or gi is None:
                continue
            prev = adj.get(i)
            adj[i] = gi if prev is None else prev + gi
    return adj


def _vjp_rows(records, k, g, needs, reach, batch):
    """The usual reverse step of the op at ``k``, once per row (any rule, multi-output
    ones too)."""
    op = Op(records, k)
    one = records.only(k)
    wanted = [i for i, n in zip(op.in_ids, needs) if n]
    rows = []
    for b in range(batch):
        if op.rule.multi:
            seeds = {o: x[b] for o, x in zip(op.out_ids, g) if x is not None}
        else:
            seeds = {op.out_ids[0]: g[b]}
        rows.append(backward(one, seeds, wanted, False, reached=([0], reach)))
    grads, done = [], set()
    for i, need, meta in zip(op.in_ids, needs, op.metas):
        # one entry per operand id: backward already summed an id used twice (x * x)
        if not need or i in done or all(i not in r for r in rows):
            grads.append(None)
            continue
        done.add(i)
        zero = np.zeros(meta[0], dtype=meta[1])
        grads.append(np.stack([r.get(i, zero) for r in rows]))
    return grads


def _vjp_batched(op, g, needs, batch):
    rule = op.rule
    special = _SPECIAL.get(id(rule))
    if rule.multi or not rule.has_vjp or (special is None and not _elementwise(rule)):
        raise _Unbatched
    args = [a._value if hasattr(a, "_value") else a for a in op.args]
    kwargs = op.kwargs
    if kwargs and any(hasattr(v, "_value") for v in kwargs.values()):
        raise _Unbatched
    ans = op.ans
    ans = getattr(ans, "_value", ans)
    if special is not None:
        grads = special(g, args, kwargs or {}, needs, op.metas)
    else:
        if kwargs:
            raise _Unbatched       # where=, out=, dtype=: leave them to the row-by-row path
        grads = call_vjp(rule, g, ans, args, None, needs)
        want = np.shape(g)         # (B,) + the output's shape (ans itself may not be kept)
        if any(gi is not None and np.shape(gi) != want for gi in grads):
            raise _Unbatched
    return [_unbroadcast(gi, meta[0], meta[1], batch) if need and gi is not None else None
            for gi, meta, need in zip(grads, op.metas, needs)]


def _elementwise(rule):
    """One of nbtape's own rules for a numpy ufunc, one VJP per operand."""
    if rule.zero:
        return True            # zeros_like(g): any shape
    if not isinstance(rule.fn, np.ufunc) or rule.kind is not POSITIONAL or rule.vjp_all \
            is not None or not rule.vjps:
        return False
    return all(f is None or getattr(f, "__module__", "").startswith(_OWN_VJPS)
               for f in rule.vjps)


# where nbtape's own VJPs are made: written in a rule module, or by the registry from an
# elementwise derivative (defderiv)
_OWN_VJPS = ("nbtape.rules.", "nbtape.core.registry")


def _count(shape, axes):
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _unbroadcast(g, shape, dtype, batch):
    """``rules.util.unbroadcast`` for ``(B,) + shape``: the batch axis is never summed."""
    gshape = np.shape(g)
    if len(gshape) < 1 + len(shape) or gshape[0] != batch:
        raise _Unbatched
    g = np.asarray(g)
    lead = len(gshape) - 1 - len(shape)
    if lead:
        lead_axes = tuple(range(1, 1 + lead))
        g = accurate_sum(g, lead_axes, _count(gshape, lead_axes))
    axes = tuple(1 + k for k, (s, gs) in enumerate(zip(shape, g.shape[1:])) if s == 1 and gs != 1)
    if axes:
        g = accurate_sum(g, axes, _count(g.shape, axes), keepdims=True)
    if g.shape[1:] != shape:
        g = np.broadcast_to(g, (batch,) + shape)
    if g.dtype != dtype:
        if g.dtype.kind == "c" and dtype.kind != "c":
            g = np.real(g)
        if g.dtype != dtype:
            g = g.astype(dtype)
    return g


# --- structural rules, written for a leading batch axis ------------------------------------
def _reduced(g, shape, axis, keepdims):
    """A reduction's batched adjoint broadcast back over ``(B,) + shape``."""
    if not keepdims:
        axes = normalize_axis(axis, len(shape))
        g = np.reshape(g, g.shape[:1] + tuple(1 if i in axes else s for i, s in enumerate(shape)))
    return np.broadcast_to(g, g.shape[:1] + tuple(shape))


def _reduction_args(args, kwargs):
    """``(x, axis, keepdims)`` of a plain sum/mean call; anything more is row by row."""
    names = ("axis", "dtype", "out", "keepdims")
    if len(args) > 1 + len(names):
        raise _Unbatched
    bound = dict(zip(names, args[1:]), **kwargs)
    if set(bound) - set(names) or any(bound.get(k) not in (None, _NV) for k in ("dtype", "out")):
        raise _Unbatched
    axis = bound.get("axis")
    return args[0], None if axis is _NV else axis, bound.get("keepdims") is True


def _sum(g, args, kwargs, needs, metas):
    x, axis, keepdims = _reduction_args(args, kwargs)
    return [_reduced(g, np.shape(x), axis, keepdims)]


def _mean(g, args, kwargs, needs, metas):
    x, axis, keepdims = _reduction_args(args, kwargs)
    shape = np.shape(x)
    count = math.prod(shape[a] for a in normalize_axis(axis, len(shape)))
    return [_reduced(g, shape, axis, keepdims) / count]


def _basic_index(idx):
    """``(slice(None),) + idx`` when ``idx`` is basic indexing (ints, slices, None, ...):
    then the batch axis stays first and every row is indexed as before."""
    t = idx if type(idx) is tuple else (idx,)
    if all(i is None or i is Ellipsis or type(i) in (int, slice) or isinstance(i, np.integer)
           for i in t):
        return (slice(None),) + t
    raise _Unbatched       # fancy indices may move the indexed axes to the front


def _getitem(g, args, kwargs, needs, metas):
    x, idx = args
    out = np.zeros((g.shape[0],) + np.shape(x), dtype=np.result_type(g))
    out[_basic_index(idx)] = g
    return [out]


def _scatter_add(g, args, kwargs, needs, metas):
    _, idx, _ = args
    return [g[_basic_index(idx)], None, None]


def _matmul(g, args, kwargs, needs, metas):
    x, y = args
    if kwargs or np.ndim(x) == 1 and np.ndim(y) == 1:
        raise _Unbatched       # the y adjoint g * x would pair the batch with x's axis
    # nbtape's matmul VJPs index g only from the right (g[..., None], swapaxes(-1, -2))
    return call_vjp(RULES[np.matmul], g, None, args, None, needs)


def _reshape(g, args, kwargs, needs, metas):
    order = args[2] if len(args) > 2 else kwargs.get("order", "C")
    if order != "C" or len(args) > 3 or set(kwargs) - {"order", "shape", "newshape", "copy"}:
        raise _Unbatched       # "F" and "A" orders do not keep a leading axis apart
    return [np.reshape(g, g.shape[:1] + tuple(metas[0][0]))]


def _transpose(g, args, kwargs, needs, metas):
    axes = args[1] if len(args) > 1 else kwargs.get("axes")
    n = len(metas[0][0])
    perm = tuple(range(n))[::-1] if axes is None else tuple(a % n for a in axes)
    return [np.transpose(g, (0,) + tuple(1 + int(i) for i in np.argsort(perm)))]


_SPECIAL = {id(RULES[np.sum]): _sum, id(RULES[np.mean]): _mean,
            id(RULES[index_value]): _getitem, id(RULES[add_at_index]): _scatter_add,
            id(RULES[np.matmul]): _matmul, id(RULES[np.reshape]): _reshape,
            id(RULES[np.transpose]): _transpose}
