"""The two indexing primitives the tape records for ``x[idx]``: reading at an index,
and its adjoint, adding an array into zeros at that index.  Plain numpy (no tensors),
so the reverse pass and the batched Jacobians can name them without the engine.
"""
import numpy as np

from ..core.arrays import is_foreign
from .util import known, shape_of


def index_value(x, idx):
    return x[idx]


def laid_out_like(x):
    """Each element's flat (C-order) index, in an array laid out like ``x``: a Dask ``x``
    gives a Dask array of its chunks, so that a selection (or a boolean mask) picks its
    positions in the same blocks as it picks ``x``'s values.

    >>> laid_out_like(np.zeros((2, 3)))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    shape = shape_of(x)
    flat = np.arange(int(np.prod(shape))).reshape(shape)
    return np.zeros_like(x, dtype=np.intp) + flat if is_foreign(x) else flat


def add_at_index(g, idx, shape):
    if is_foreign(g):
        return _scatter_add_lazily(g, idx, shape)
    out = np.zeros(shape, dtype=np.result_type(g))
    if _basic(idx):
        out[idx] = g            # slices and ints never repeat a position
    else:
        np.add.at(out, idx, g)  # fancy indices may: add them all up
    return out


def _scatter_add_lazily(g, idx, shape):
    """``add_at_index`` for a Dask (or CuPy) adjoint: no ``np.add.at`` there, so fancy
    indices add up with a weighted ``np.bincount`` over the flat positions."""
    if _basic(idx) and not _has_none(idx):     # Dask's setitem takes no np.newaxis
        out = np.zeros_like(g, shape=shape)
        out[idx] = g
        return out
    size = int(np.prod(shape))
    if is_foreign(idx):
        # flat positions computed lazily (a selection's on positions laid out like x)
        if len(shape) != 1:
            raise _unsupported(idx, shape)
        where = np.where(idx < 0, idx + size, idx)
    else:
        where = np.arange(size).reshape(shape)[idx]     # the flat position of each g entry
    if known(shape_of(g)) and shape_of(g) != shape_of(where):
        g = np.broadcast_to(g, shape_of(where))
    if hasattr(g, "map_blocks"):
        # Dask: positions laid out like g (its chunks), counted block by block (no
        # ravel: Dask cannot ravel every layout, nor lengths a mask left unknown)
        pos = where if is_foreign(where) else np.zeros_like(g, dtype=np.intp) + where
        if known(shape_of(g)) and pos.chunks != g.chunks:
            g = g.rechunk(pos.chunks)
        return np.reshape(_bincount_by_block(pos, g, size), shape)
    pos, g = np.ravel(np.asarray(where, like=g) if is_foreign(g) else where), np.ravel(g)
    if g.dtype.kind == "c":
        flat = np.bincount(pos, weights=np.real(g), minlength=size) \
            + 1j * np.bincount(pos, weights=np.imag(g), minlength=size)
    else:
        flat = np.bincount(pos, weights=g, minlength=size)
    return np.reshape(flat.astype(g.dtype), shape)


def _bincount_by_block(pos, g, size):
    """``np.bincount(pos, weights=g, minlength=size)`` for Dask arrays of unknown lengths
    (a boolean mask picked them) or any layout: Dask's bincount needs known 1-D chunks,
    so each block pair is counted on its own and the counts summed (what Dask's
    bincount does inside).  ``pos`` is laid out like ``g``, or was picked from positions
    laid out like ``x`` by the same mask as ``g``'s value, so their blocks match."""
    nd = len(shape_of(g))
    if len(shape_of(pos)) != nd or pos.numblocks != g.numblocks:
        raise _unsupported(pos, (size,))

    def block(p, w):
        p, w = np.ravel(p), np.ravel(w)
        if w.dtype.kind == "c":
            out = np.bincount(p, weights=w.real, minlength=size) \
                + 1j * np.bincount(p, weights=w.imag, minlength=size)
        else:
            out = np.bincount(p, weights=w, minlength=size)
        return out.astype(w.dtype).reshape((1,) * nd + (size,))
    # map_blocks is the Dask array's own method: the engine never imports Dask
    parts = pos.map_blocks(block, g, new_axis=nd, dtype=g.dtype,
                           chunks=tuple((1,) * n for n in g.numblocks) + ((size,),))
    return parts.sum(axis=tuple(range(nd)))


def _unsupported(idx, shape):
    from ..diagnostics.errors import NoGradientRuleError
    return NoGradientRuleError(
        f"the gradient of indexing with a {type(idx).__module__.split('.')[0]} index array "
        f"into an array of shape {shape} is not implemented lazily: nbtape adds the "
        "adjoint back at flat positions, which needs the index as a numpy array or as a "
        "boolean mask of the whole array (or of its first axis). Compute the index first "
        "(idx.compute()), or index with a mask of x's own shape.")


def _has_none(idx):
    return idx is None or (type(idx) is tuple and any(i is None for i in idx))


def _basic(idx):
    if type(idx) is not tuple:
        idx = (idx,)
    return all(i is None or i is Ellipsis or type(i) in (int, slice) or isinstance(i, np.integer)
               for i in idx)
