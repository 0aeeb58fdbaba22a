"""Reductions: mean, prod, max/min, ptp, var/std, average (sum is in core_ops).

Conventions shared by the reduction families (nan-, cumulative, order
statistics, ufunc methods), whose modules import the helpers below:

* ``prod`` never divides, so zeros in the input give exact gradients.
* ``max``/``min`` share the gradient evenly among tied maxima, like
  TensorFlow's ``reduce_max``.
* ``where=`` masks are honoured by ``sum``, ``mean``, ``prod``, ``max``/``min``,
  ``var``/``std``, their nan- forms and the ufunc ``reduce`` methods.
* A tensor given as ``initial=`` (sums, products, max/min) or as ``mean=``
  (var/std) is an operand like the array: it gets its own gradient.
"""
import math

import numpy as np

from ..extend import defjvp, defnondiff, defvjp
from ..core.registry import defalias, defparam, defseveral, numpy_function
from .util import (NV, conj, expand_reduced, flag, given, masked, normalize_axis, shape_of,
                   value_of)

def _count(shape, axis):
    """How many elements each output of a reduction over ``axis`` combines."""
    return math.prod(shape[a] for a in normalize_axis(axis, len(shape)))


def kept(v, shape, axis, keepdims):
    """A reduction's output reshaped with its reduced axes as length 1 (no broadcast).

    >>> kept(np.array([1.0, 2.0]), (2, 3), 1, False).shape
    (2, 1)
    """
    if flag(keepdims):
        return v
    axes = normalize_axis(axis, len(shape))
    if not axes:
        return v
    return np.reshape(v, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def spread(g, x, axis, keepdims):
    """A reduction's adjoint broadcast back over the input's shape.

    >>> spread(np.array([1.0, 2.0]), np.zeros((2, 3)), 1, False)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    return expand_reduced(g, shape_of(x), axis, flag(keepdims), x)


def reduce_back(v, x, axis, keepdims):
    """Sum a full-shape tangent over the reduced axes, as the reduction's output.

    >>> reduce_back(np.ones((2, 3)), np.zeros((2, 3)), 0, True)
    array([[2., 2., 2.]])
    """
    return np.sum(v, axis=normalize_axis(axis, len(shape_of(x))), keepdims=flag(keepdims))


# --- mean ---------------------------------------------------------------------------------
def _mean_vjp(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, *, where=NV):
    if not masked(where):
        shape = shape_of(x)
        if axis is None and isinstance(g, (np.ndarray, np.generic)):
            # np.mean(loss): one filled array (a broadcast view and a divide cost 4x more);
            # np.full's own steps, without its Python wrapper
            v = g / math.prod(shape)
            out = np.empty(shape, v.dtype)
            out[...] = v        # (g has ones for axes with keepdims=True)
            return out
        return spread(g, x, axis, keepdims) / _count(shape, axis)
    w = np.broadcast_to(where, shape_of(x))
    n = np.sum(w, axis=normalize_axis(axis, len(shape_of(x))), keepdims=True)
    return spread(g, x, axis, keepdims) * w / n


def _mean_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=False, *, where=NV):
    if not masked(where):
        return np.mean(t, axis=axis, keepdims=flag(keepdims))
    return np.mean(t, axis=axis, keepdims=flag(keepdims), where=where)


defvjp(np.mean, _mean_vjp)
defjvp(np.mean, _mean_jvp)


# --- prod ------------------------------------------------------------------------------------
def _prod_except(x, axes):
    """For each element, the product of the *other* elements of its reduced group.

    Computed as (exclusive cumulative product from the left) times (from the
    right), so a zero anywhere gives exact results where dividing would give NaN.
    """
    shape = shape_of(x)
    nd = len(shape)
    rest = [a for a in range(nd) if a not in axes]
    perm = rest + list(axes)
    n = math.prod(shape[a] for a in axes)
    if n == 0:
        return x * 0
    y = np.transpose(x, perm) if perm != list(range(nd)) else x
    lead = tuple(shape[a] for a in rest)
    y = np.reshape(y, lead + (n,))
    ones = np.ones_like(y, shape=lead + (1,))
    left = np.concatenate([ones, np.cumprod(y, axis=-1)[..., :-1]], axis=-1)
    # [..., :-1][..., ::-1], not [..., -2::-1]: Dask gets that slice wrong for n = 1
    right = np.concatenate([np.cumprod(y[..., ::-1], axis=-1)[..., :-1][..., ::-1], ones],
                           axis=-1)
    out = np.reshape(left * right, tuple(shape[a] for a in perm))
    return np.transpose(out, tuple(np.argsort(perm))) if perm != list(range(nd)) else out


def prod_parts(x, axis, initial, where):
    """d prod / dx: the product of the other elements (times ``initial``, inside ``where``).

    >>> prod_parts(np.array([2.0, 0.0, 3.0]), None, np._NoValue, np._NoValue)
    array([0., 6., 0.])
    """
    axes = normalize_axis(axis, len(shape_of(x)))
    if masked(where):
        x = np.where(where, x, 1)
    pe = _prod_except(x, axes)
    if given(initial):
        pe = pe * initial
    return pe * where if masked(where) else pe


def _prod_vjp(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=NV,
              where=NV):
    return spread(g, x, axis, keepdims) * conj(prod_parts(x, axis, initial, where))


def _prod_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=NV,
              where=NV):
    return reduce_back(t * prod_parts(x, axis, initial, where), x, axis, keepdims)


defvjp(np.prod, _prod_vjp)
defjvp(np.prod, _prod_jvp)


def def_prod_initial(fn, product, axis=None):
    """``initial=`` of a product: it multiplies the product of the elements."""
    def rest(x, axis, keepdims, where):
        return product(x, axis=axis, keepdims=flag(keepdims),
                       where=where if masked(where) else True)

    def vjp(g, ans, x, axis=axis, dtype=None, out=None, keepdims=False, initial=NV, where=NV):
        return g * conj(rest(x, axis, keepdims, where))

    def jvp(t, ans, x, axis=axis, dtype=None, out=None, keepdims=False, initial=NV, where=NV):
        return t * rest(x, axis, keepdims, where)
    defparam(fn, "initial", vjp, jvp)


def_prod_initial(np.prod, np.prod)
defalias(numpy_function("product"), np.prod)        # numpy 1 only, deprecated


# --- max and min: ties share the gradient evenly ----------------------------------------------
def _extreme_ties(x, ans, axis, keepdims, where, initial):
    """Which elements equal the extreme value, and how many values (``initial`` too) tie."""
    mask = x == kept(ans, shape_of(x), axis, keepdims)
    if masked(where):
        mask = mask & where
    ties = np.sum(mask, axis=normalize_axis(axis, len(shape_of(x))), keepdims=True)
    if given(initial):
        ties = ties + (kept(ans, shape_of(x), axis, keepdims) == initial)
    return mask, np.maximum(ties, 1)


def argmax_share(x, ans, axis, keepdims, where=NV, initial=NV):
    """Weights (summing to 1 per output, with ``initial``'s) on the elements equal to
    the extreme value.

    >>> argmax_share(np.array([1.0, 3.0, 3.0]), np.float64(3.0), None, False)
    array([0. , 0.5, 0.5])
    """
    mask, ties = _extreme_ties(x, ans, axis, keepdims, where, initial)
    return mask / ties


def initial_share(x, ans, axis, keepdims, where=NV, initial=NV):
    """``initial``'s weight in a max/min, output-shaped (it ties like an element).

    >>> float(initial_share(np.array([1.0, 3.0]), np.float64(3.0), None, False, NV, 3.0))
    0.5
    """
    mask, ties = _extreme_ties(x, ans, axis, keepdims, where, initial)
    share = (kept(ans, shape_of(x), axis, keepdims) == initial) / ties
    return np.reshape(share, shape_of(ans))


def _extreme_vjp(g, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV):
    return spread(g, x, axis, keepdims) * argmax_share(x, ans, axis, keepdims, where, initial)


def _extreme_jvp(t, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV):
    return reduce_back(t * argmax_share(x, ans, axis, keepdims, where, initial),
                       x, axis, keepdims)


def def_extreme_initial(fn, dtype_param=False, axis=None):
    """``initial=`` of a max or min: a value that competes like one more element.

    ``dtype_param``: the function takes ``dtype`` after ``axis`` (``np.maximum.reduce``).
    """
    if dtype_param:
        def vjp(g, ans, x, axis=axis, dtype=None, out=None, keepdims=False, initial=NV,
                where=NV):
            return g * initial_share(x, ans, axis, keepdims, where, initial)

        def jvp(t, ans, x, axis=axis, dtype=None, out=None, keepdims=False, initial=NV,
                where=NV):
            return t * initial_share(x, ans, axis, keepdims, where, initial)
    else:
        def vjp(g, ans, x, axis=axis, out=None, keepdims=False, initial=NV, where=NV):
            return g * initial_share(x, ans, axis, keepdims, where, initial)

        def jvp(t, ans, x, axis=axis, out=None, keepdims=False, initial=NV, where=NV):
            return t * initial_share(x, ans, axis, keepdims, where, initial)
    defparam(fn, "initial", vjp, jvp)


for _f in (np.max, np.min, np.amax, np.amin):
    defvjp(_f, _extreme_vjp)
    defjvp(_f, _extreme_jvp)
    def_extreme_initial(_f)


def _ptp_share(x, axis, keepdims):
    axes = normalize_axis(axis, len(shape_of(x)))
    hi = np.max(x, axis=axes, keepdims=True)
    lo = np.min(x, axis=axes, keepdims=True)
    return argmax_share(x, hi, axes, True) - argmax_share(x, lo, axes, True)


defvjp(np.ptp, lambda g, ans, x, axis=None, out=None, keepdims=False:
       spread(g, x, axis, keepdims) * _ptp_share(x, axis, keepdims))
defjvp(np.ptp, lambda t, ans, x, axis=None, out=None, keepdims=False:
       reduce_back(t * _ptp_share(x, axis, keepdims), x, axis, keepdims))


# --- variance and standard deviation -----------------------------------------------------------
def _centered(x, axis, ddof, correction, where, mean, nan=False):
    """``(x - mean, n - ddof)`` over ``axis``: zero where ``where`` is false (or, with
    ``nan``, where x is NaN); ``mean`` is numpy's ``mean=`` when given."""
    ddof = correction if given(correction) else ddof
    axes = normalize_axis(axis, len(shape_of(x)))
    ok = ~np.isnan(x) if nan else None
    if nan and given(mean) and np.asarray(x).dtype.kind != "c":
        mean = np.real(mean)    # nanvar subtracts in place into real x, dropping Im(mean)
    if masked(where):
        w = np.broadcast_to(value_of(where), shape_of(x))
        ok = w if ok is None else ok & w
    if ok is None:
        m = mean if given(mean) else np.mean(x, axis=axes, keepdims=True)
        return x - m, _count(shape_of(x), axis) - ddof
    x = np.where(ok, x, 0)
    n = np.sum(ok, axis=axes, keepdims=True)
    m = mean if given(mean) else np.sum(x, axis=axes, keepdims=True) / n
    return (x - m) * ok, n - ddof


def var_vjp(g, x, axis, ddof, keepdims, correction, where, mean=NV, nan=False, wrt_mean=False):
    """Adjoint of (nan)var: ``2 (x - mean) / (n - ddof)`` (the mean's own dependence on x
    sums to zero); with ``wrt_mean``, that of numpy's ``mean=`` (the negative, summed).

    >>> var_vjp(1.0, np.array([1.0, 3.0]), None, 0, False, NV, NV)
    array([-1.,  1.])
    """
    c, n = _centered(x, axis, ddof, correction, where, mean, nan)
    # real x with a complex mean=: numpy sums (x - mean)**2, holomorphic, so conjugate
    grad = spread(g, x, axis, keepdims) * (conj(c) if _holomorphic(x, c) else c) * 2 / n
    return -grad if wrt_mean else grad


def var_jvp(t, x, axis, ddof, keepdims, correction, where, mean=NV, nan=False, wrt_mean=False):
    """Tangent of (nan)var: ``sum(2 Re(conj(x - mean) t)) / (n - ddof)`` (``t`` is mean='s
    tangent with ``wrt_mean``, and counts negatively).

    >>> float(var_jvp(np.array([1.0, 0.0]), np.array([1.0, 3.0]), None, 0, False, NV, NV))
    -1.0
    """
    c, n = _centered(x, axis, ddof, correction, where, mean, nan)
    if wrt_mean:
        t = -t
    if _holomorphic(x, c):
        prod = c * t
    else:
        prod = np.real(conj(c) * t) if c.dtype.kind == "c" else c * t
    return reduce_back(prod * 2 / n, x, axis, keepdims)


def _holomorphic(x, c):
    """Is var ``sum((x - mean)**2)`` (real x, complex mean=) rather than ``sum(|x - mean|**2)``?"""
    return c.dtype.kind == "c" and np.asarray(x).dtype.kind != "c"


def twice_std(std):
    """``2 * std`` as a divisor.  Where std is 0 every deviation is 0 too, and the
    gradient is taken as 0 (the subgradient at the kink) rather than 0/0 = NaN.

    >>> twice_std(np.array([0.0, 1.5]))
    array([2., 3.])
    """
    return 2 * np.where(std == 0, 1.0, std)


def defvariance(fn, std, nan=False):
    """Rules for var/std (``std``: divide by ``2 std``) and their nan- forms, in ``x``
    and in numpy's ``mean=``."""
    def vjp(wrt_mean):
        def f(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
              where=NV, mean=NV, correction=NV):
            v = var_vjp(g, x, axis, ddof, keepdims, correction, where, mean, nan, wrt_mean)
            return v / twice_std(conj(kept(ans, shape_of(x), axis, keepdims))) if std else v
        return f

    def jvp(wrt_mean):
        def f(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
              where=NV, mean=NV, correction=NV):
            v = var_jvp(t, x, axis, ddof, keepdims, correction, where, mean, nan, wrt_mean)
            return v / twice_std(ans) if std else v
        return f
    defvjp(fn, vjp(False))
    defjvp(fn, jvp(False))
    defparam(fn, "mean", vjp(True), jvp(True))


defvariance(np.var, std=False)
defvariance(np.std, std=True)


# --- weighted average --------------------------------------------------------------------------
def _weights_like(a, axis, weights):
    """``weights`` shaped to broadcast against ``a`` (numpy allows a 1-D weight per axis)."""
    shape = shape_of(a)
    ws = shape_of(weights)
    if ws == shape:
        return weights
    ax = normalize_axis(axis, len(shape))[0]
    return np.reshape(weights, tuple(s if i == ax else 1 for i, s in enumerate(shape)))


def _average_parts(a, axis, weights):
    axes = normalize_axis(axis, len(shape_of(a)))
    wb = _weights_like(a, axis, weights)
    total = np.sum(np.broadcast_to(wb, shape_of(a)), axis=axes, keepdims=True)
    return axes, wb, total


def _average_vjp_a(g, ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    if weights is None:
        return spread(g, a, axis, keepdims) / _count(shape_of(a), axis)
    axes, wb, total = _average_parts(a, axis, weights)
    return spread(g, a, axis, keepdims) * conj(wb / total)


def _average_vjp_w(g, ans, a, axis=None, weights=None, returned=False, *, keepdims=False,
                   full=False):
    # d avg / d w_i = (a_i - avg) / sum(w)
    axes, wb, total = _average_parts(a, axis, weights)
    adjoint = spread(g, a, axis, keepdims) * conj(
        (a - kept(ans, shape_of(a), axis, keepdims)) / total)
    return adjoint if full else _to_weights(adjoint, a, weights, axes)


def _to_weights(full, a, weights, axes):
    """An adjoint over ``a``'s shape summed down to that of ``weights`` (maybe 1-D)."""
    if shape_of(weights) == shape_of(a):
        return full
    return np.sum(full, axis=tuple(i for i in range(len(shape_of(a))) if i != axes[0]))


def _average_jvp_a(t, ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    if weights is None:
        return np.mean(t, axis=axis, keepdims=flag(keepdims))
    axes, wb, total = _average_parts(a, axis, weights)
    return reduce_back(t * wb / total, a, axis, keepdims)


def _average_jvp_w(t, ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    axes, wb, total = _average_parts(a, axis, weights)
    tb = _weights_like(a, axis, t)
    return reduce_back(tb * (a - kept(ans, shape_of(a), axis, keepdims)) / total,
                       a, axis, keepdims)


defvjp(np.average, _average_vjp_a, None, _average_vjp_w)
defjvp(np.average, _average_jvp_a, None, _average_jvp_w)


# returned=True adds the sum of the weights (broadcast like the average) as a second output
def _average_call(args, kw):
    c = dict(zip(("a", "axis", "weights", "returned"), args), **kw)
    return c["a"], c.get("axis"), c.get("weights"), c.get("keepdims", False)


def _average_returned_vjp(g, ans, args, kw, needs):
    a, axis, weights, keepdims = _average_call(args, kw)
    (ga, gs), avg = g, ans[0]
    grads = [_average_vjp_a(ga, avg, a, axis, weights, keepdims=keepdims) if needs[0] else None]
    grads += [None] * (len(needs) - 1)
    if len(needs) > 2 and needs[2]:
        axes = normalize_axis(axis, len(shape_of(a)))
        full = _average_vjp_w(ga, avg, a, axis, weights, keepdims=keepdims, full=True) \
            + spread(gs, a, axis, keepdims)
        grads[2] = _to_weights(full, a, weights, axes)
    return grads


def _average_returned_jvp(ts, ans, args, kw):
    a, axis, weights, keepdims = _average_call(args, kw)
    avg = ans[0]
    ta, tw = ts[0], (ts[2] if len(ts) > 2 else None)
    parts = [f(t, avg, a, axis, weights, keepdims=keepdims)
             for f, t in ((_average_jvp_a, ta), (_average_jvp_w, tw)) if t is not None]
    t_avg = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    t_sum = None if tw is None else np.broadcast_to(
        reduce_back(np.broadcast_to(_weights_like(a, axis, tw), shape_of(a)), a, axis, keepdims),
        shape_of(avg))
    return (t_avg, t_sum)


defseveral(np.average, _average_returned_vjp, _average_returned_jvp, nargs=3)

defnondiff(np.all, np.any)
defalias(numpy_function("alltrue"), np.all)         # numpy 1 only, deprecated
defalias(numpy_function("sometrue"), np.any)
