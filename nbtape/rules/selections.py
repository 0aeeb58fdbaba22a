"""Choosing elements among arrays or by rank: np.select, np.choose, np.partition.

select and choose are built from recorded ``np.where`` / ``np.take_along_axis``
steps on the tensors themselves (``defcomposite``), as HIPS autograd builds
select, so their gradients (of any order, both modes) are those of the steps.
partition is a selection whose permutation is read from its result.
"""
import numpy as np

from ..extend import defjvp, defvjp
from .indexing import positions, raw, unselect
from ..core.registry import defcomposite
from .util import shape_of


# --- select: the first true condition's choice, else the default -------------------------------
def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for i, c in enumerate(condlist):
        if np.result_type(raw(c)) != bool:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    out = default
    for c, x in zip(reversed(condlist), reversed(choicelist)):
        out = np.where(c, x, out)
    return out


defcomposite(np.select, _select)


# --- choose: choices[a[i]][i], the choices broadcast with the index array ---------------------
def _choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise TypeError("nbtape tensors are immutable, so np.choose(..., out=...) cannot write "
                        "into one. Drop out= and use the returned tensor instead.")
    items = [choices[k] for k in range(len(choices))]
    idx = np.asarray(raw(a))
    n = len(items)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif np.any((idx < 0) | (idx >= n)):
        raise ValueError("invalid entry in choice array")
    shape = np.broadcast_shapes(idx.shape, *[shape_of(c) for c in items])
    stacked = np.stack([np.broadcast_to(c, shape) for c in items])
    return np.take_along_axis(stacked, np.broadcast_to(idx, shape)[None], axis=0)[0]


defcomposite(np.choose, _choose)


# --- partition: output position j holds the element of the same rank in a ---------------------
def _sources(a, ans, axis):
    """Where each element of ``ans`` came from, along ``axis`` (-1 of the flat array if None).

    Pairing the k-th smallest of the result with the k-th smallest of the input
    reads numpy's own arrangement (argpartition may arrange the rest otherwise).
    """
    v, r = raw(a), raw(ans)
    if axis is None:
        v, axis = np.ravel(v), -1
    rank = np.argsort(np.argsort(r, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(np.argsort(v, axis=axis, kind="stable"), rank, axis), axis


def _partition_vjp(g, ans, a, kth, axis=-1, kind="introselect", order=None):
    src, ax = _sources(a, ans, axis)
    where = positions(a) if axis is not None else np.ravel(positions(a))
    return unselect(g, a, np.take_along_axis(where, src, ax))


def _partition_jvp(t, ans, a, kth, axis=-1, kind="introselect", order=None):
    src, ax = _sources(a, ans, axis)
    return np.take_along_axis(t if axis is not None else np.ravel(t), src, ax)


defvjp(np.partition, _partition_vjp)
defjvp(np.partition, _partition_jvp)
