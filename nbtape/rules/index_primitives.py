"""The two indexing primitives the tape records for ``x[idx]``: reading at an index,
and its adjoint, adding an array into zeros at that index.  Plain numpy (no tensors),
so the reverse pass and the batched Jacobians can name them without the engine.
"""
import numpy as np

from ..core.arrays import is_foreign


def index_value(x, idx):
    return x[idx]


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
    where = np.arange(size).reshape(shape)[idx]     # the flat position of each g entry
    # positions with g's own layout (chunks), as np.bincount on Dask needs
    pos = np.ravel(np.zeros_like(g, shape=where.shape, dtype=np.intp) + where)
    g = np.ravel(np.broadcast_to(g, where.shape))
    if g.dtype.kind == "c":
        flat = np.bincount(pos, weights=np.real(g), minlength=size) \
            + 1j * np.bincount(pos, weights=np.imag(g), minlength=size)
    else:
        flat = np.bincount(pos, weights=g, minlength=size)
    return np.reshape(flat.astype(g.dtype), shape)


def _has_none(idx):
    return idx is None or (type(idx) is tuple and any(i is None for i in idx))


def _basic(idx):
    if type(idx) is not tuple:
        idx = (idx,)
    return all(i is None or i is Ellipsis or type(i) in (int, slice) or isinstance(i, np.integer)
               for i in idx)
