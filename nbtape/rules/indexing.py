"""Selecting elements: take, compress, diagonals, triangles, sort, where.

A *selection* copies elements of ``x`` into its output, perhaps several times,
perhaps dropping some.  Its JVP selects from the tangent the same way.  Its VJP
adds each output adjoint back to the element it came from, and to learn where
that was the selection is simply run again on ``positions(x)``: an array of
``x``'s shape holding each element's own flat index.  So one line registers a
selection, whatever its arguments mean (``mode="wrap"`` in ``take``, repeats in
``np.repeat``, a pad mode...).

Indexing with ``t[idx]`` lives in ``core_ops`` (``getitem``/``scatter_add``).
"""
import math

import numpy as np

from ..extend import defjvp, deflinear, defnondiff, defvjp
from .core_ops import scatter_add
from ..core.arrays import backend_name
from ..core.state import program_value, tls
from ..diagnostics.errors import NoGradientRuleError
from ..core.registry import numpy_function
from .index_primitives import laid_out_like
from .util import known, shape_of


def raw(a):
    """The plain value behind a non-differentiable argument (indices, masks, shifts).

    Inside rules running on tensors (higher-order derivatives), index arrays
    arrive as tensors; they only steer the computation, so use their values.

    >>> import nbtape as nt
    >>> raw(nt.constant([2, 0])), raw([1, 2])
    (array([2, 0]), [1, 2])
    """
    if tls.stack:
        # nt.function's tracer: a value of its program stays a tensor, so that what a
        # rule computes from it (positions, a permutation) is recorded, never frozen
        t = program_value(a)
        if t is not None:
            return t
    return getattr(a, "_value", a)


def _raw_kwargs(kw):
    return {k: raw(v) for k, v in kw.items() if k != "out"}


def positions(x, g=None):
    """``x``'s shape, filled with each element's flat (C-order) index.

    Where the adjoint ``g`` has lengths Dask does not know (a boolean mask made them),
    the positions are laid out like ``x`` (its chunks): the selection then picks them
    in the same blocks as it picked ``x``'s values, which the scatter back needs.

    >>> positions(np.zeros((2, 3)))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    if g is not None and not known(shape_of(g)):
        return laid_out_like(raw(x))
    shape = shape_of(x)
    return np.arange(math.prod(shape)).reshape(shape)


def unselect(g, x, src):
    """Transpose of a selection: add ``g`` to the elements of ``x`` that ``src`` names.

    Repeated sources accumulate.

    >>> unselect(np.array([1., 2., 3.]), np.zeros(2), np.array([1, 0, 1]))
    array([2., 4.])
    """
    shape = shape_of(x)
    if known(shape_of(g)):
        g, src = np.ravel(g), np.ravel(src)
    # (Dask cannot ravel lengths it does not know: g and src keep their blocks)
    flat = scatter_add(g, src, (math.prod(shape),))
    return np.reshape(flat, shape)


def defselection(fn):
    """Register ``fn(x, *args, **kw)``, which only copies elements of ``x``.

    >>> import nbtape as nt
    >>> x = nt.constant([1.0, 2.0, 3.0])
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = np.take(x, [0, 0, 2])        # a selection: x[0] used twice
    >>> tape.gradient(y, x).numpy()
    array([2., 0., 1.])
    """
    def vjp(g, ans, x, *args, **kw):
        src = fn(positions(x, g), *map(raw, args), **_raw_kwargs(kw))
        if shape_of(src) != shape_of(g) and known(shape_of(g)):
            raise _other_value(fn, g, src)
        return unselect(g, x, src)
    defvjp(fn, vjp)
    return deflinear(fn)


def _other_value(fn, g, src):
    return NoGradientRuleError(
        f"np.{fn.__name__} gave a value of shape {shape_of(g)} on this "
        f"{backend_name(g)} array where numpy gives shape {shape_of(src)}, so its gradient "
        "cannot follow numpy's (Dask's np.take, for one, takes along axis 0 when no axis is "
        "given; numpy takes from the flattened array). Pass axis= explicitly, or "
        "np.ravel the array first.")


# --- selections ---------------------------------------------------------------------------
defselection(np.take)
defselection(np.take_along_axis)
defselection(np.diagonal)
defselection(numpy_function("linalg.diagonal"))       # numpy 2 only
defselection(np.delete)


def _triangle(fn):
    # triu/tril multiply by a 0/1 mask: their own transpose.  A 1-D input is first
    # broadcast to a square, which the engine's unbroadcast sums back.
    defvjp(fn, lambda g, ans, m, k=0: fn(g, k))
    defjvp(fn, lambda t, ans, m, k=0: fn(t, k))


_triangle(np.triu)
_triangle(np.tril)

# diag of a vector builds a matrix (its transpose reads the diagonal back);
# diag of a matrix is a selection.
defvjp(np.diag, lambda g, ans, v, k=0: np.diagonal(g, k) if len(shape_of(v)) == 1
       else unselect(g, v, np.diag(positions(v), k)))
deflinear(np.diag)
defvjp(np.diagflat, lambda g, ans, v, k=0: np.reshape(np.diagonal(g, k), shape_of(v)))
deflinear(np.diagflat)

defvjp(np.compress, None, lambda g, ans, c, a, axis=None, out=None:
       unselect(g, a, np.compress(raw(c), positions(a, g), axis)))
defjvp(np.compress, None, lambda t, ans, c, a, axis=None, out=None: np.compress(c, t, axis))
defvjp(np.extract, None,
       lambda g, ans, c, a: unselect(g, a, np.extract(raw(c), positions(a, g))))
defjvp(np.extract, None, lambda t, ans, c, a: np.extract(c, t))


# --- trace: the sum of a diagonal ---------------------------------------------------------
def _trace_vjp(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    shape = shape_of(a)
    eye = np.eye(shape[axis1], shape[axis2], k=offset)
    # g has a's shape without axis1, axis2: put those back last, as the identity
    return np.moveaxis(np.expand_dims(g, (-2, -1)) * eye, (-2, -1), (axis1, axis2))


defvjp(np.trace, _trace_vjp)
defjvp(np.trace, lambda t, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None:
       np.trace(t, offset, axis1, axis2))
linalg_trace = numpy_function("linalg.trace")            # numpy 2 only
defvjp(linalg_trace, lambda g, ans, x, offset=0, dtype=None:
       _trace_vjp(g, ans, x, offset, -2, -1))
defjvp(linalg_trace, lambda t, ans, x, offset=0, dtype=None: linalg_trace(t, offset=offset))


# --- sort: a selection whose permutation depends on the values ----------------------------
def _sorting(x, axis):
    """The permutation np.sort applies (along the flattened array when axis is None)."""
    v = raw(x)
    # ties get an arbitrary order: sort is not differentiable there anyway
    if axis is None:
        return np.argsort(np.ravel(v), kind="stable"), -1
    return np.argsort(v, axis=axis, kind="stable"), axis


def _sort_vjp(g, ans, a, axis=-1, kind=None, order=None, **kw):
    perm, ax = _sorting(a, axis)
    src = positions(a) if axis is not None else np.ravel(positions(a))
    return unselect(g, a, np.take_along_axis(src, perm, ax))


def _sort_jvp(t, ans, a, axis=-1, kind=None, order=None, **kw):
    perm, ax = _sorting(a, axis)
    return np.take_along_axis(t if axis is not None else np.ravel(t), perm, ax)


defvjp(np.sort, _sort_vjp)
defjvp(np.sort, _sort_jvp)


# --- where: route the adjoint to the branch that was taken --------------------------------
# (a selection, not a defderiv's g * c: an inf or nan in g stays out of the branch not taken)
defvjp(np.where, None,
       lambda g, ans, c, x, y: np.where(c, g, 0.0),
       lambda g, ans, c, x, y: np.where(c, 0.0, g))
defjvp(np.where, None,
       lambda t, ans, c, x, y: np.where(c, t, 0.0),
       lambda t, ans, c, x, y: np.where(c, 0.0, t))

# full_like depends on its fill value only (the engine sums g down to its shape); here and
# in copy g passes as it is, no defderiv product g * 1
defvjp(np.full_like, None, lambda g, ans, a, fill_value, *args, **kw: g)
defjvp(np.full_like, None, lambda t, ans, a, fill_value, *args, **kw: t)

# copy is the identity
defvjp(np.copy, lambda g, ans, a, *args, **kw: g)
defjvp(np.copy, lambda t, ans, a, *args, **kw: t)


# --- constant-valued: indices, shapes, counts, tests --------------------------------------
defnondiff(np.shape, np.ndim, np.size, np.zeros_like, np.ones_like, np.empty_like,
           np.argmax, np.argmin, np.argsort, np.argpartition, np.argwhere, np.nonzero,
           np.flatnonzero, np.searchsorted, np.digitize, np.lexsort, np.result_type,
           np.allclose, np.isclose, np.array_equal, np.array_equiv, np.count_nonzero,
           np.isin, np.tril_indices_from, np.triu_indices_from, np.diag_indices_from,
           np.ravel_multi_index, np.unravel_index, np.linalg.matrix_rank,
           numpy_function("in1d"))        # deprecated in numpy 2.0, removed in 2.4
