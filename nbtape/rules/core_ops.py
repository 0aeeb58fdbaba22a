"""Rules behind Python's operators, indexing and casting.

The rest of numpy lives in the sibling modules (ufuncs, reductions, shapes,
linalg); this file holds only what ``Tensor``'s own operators need, so the hot
path never depends on import order.
"""
import math

import numpy as np

from ..core.arrays import is_foreign
from ..core.registry import defjvp, defnondiff, defparam, defprimitive, defvjp, defzero, rule_for
from .index_primitives import add_at_index as _scatter_add, index_value as _getitem
from .index_primitives import laid_out_like as _laid_out_like
from .util import conj, expand_reduced, known as _known, shape_of
from ..core.primitive import primitive


# --- internal primitives ------------------------------------------------------
def _astype(x, dtype):
    return (x if is_foreign(x) else np.asarray(x)).astype(dtype)


getitem, scatter_add, astype = primitive(_getitem), primitive(_scatter_add), primitive(_astype)

defprimitive(_getitem, "getitem")
defprimitive(_scatter_add, "scatter_add")
defprimitive(_astype, "astype")

_PLAIN_INDEX = (int, slice, type(None), type(Ellipsis), np.ndarray)


def _getitem_vjp(g, ans, x, idx):
    shape = shape_of(x)
    if type(g) is np.ndarray and type(idx) in _PLAIN_INDEX:    # x[1:3], x[i]: the usual
        return scatter_add(g, idx, shape)
    if not _known(shape_of(g)) or _foreign_index(idx):
        # a boolean mask or an index array of Dask: the picked lengths may be unknown
        # until computed, so pick the flat positions with the same index from positions
        # laid out like x (same blocks as g) and add g at them (block by block)
        where = getitem(_laid_out_like(getattr(x, "data", x)), idx)
        return np.reshape(scatter_add(g, where, (math.prod(shape),)), shape)
    return scatter_add(g, idx, shape)


def _foreign_index(idx):
    return any(is_foreign(getattr(i, "data", i))
               for i in (idx if type(idx) is tuple else (idx,)))


defvjp(_getitem, _getitem_vjp)
defjvp(_getitem, lambda t, ans, x, idx: getitem(t, idx))
defvjp(_scatter_add, lambda g, ans, x, idx, shape: getitem(g, idx))
defjvp(_scatter_add, lambda t, ans, x, idx, shape: scatter_add(t, idx, shape))
defvjp(_astype, lambda g, ans, x, dtype: g)
defjvp(_astype, lambda t, ans, x, dtype: astype(t, dtype))


# --- arithmetic ---------------------------------------------------------------------
# Written per mode, not as defderiv: g passes as it is (add, subtract, negative, positive,
# remainder's x: no product g * 1), conj(x) * g keeps its order (a complex product is not
# the same to the bit both ways round), quotients (true_divide) and power's JVP
# t * log(x) * ans round as written
defvjp(np.add, lambda g, ans, x, y: g,
               lambda g, ans, x, y: g)
defvjp(np.subtract, lambda g, ans, x, y: g,
                    lambda g, ans, x, y: -g)
defvjp(np.multiply, lambda g, ans, x, y: g * conj(y),
                    lambda g, ans, x, y: conj(x) * g)
defvjp(np.true_divide, lambda g, ans, x, y: g / conj(y),
                       lambda g, ans, x, y: -g * conj(ans / y))
defvjp(np.negative, lambda g, ans, x: -g)
defvjp(np.positive, lambda g, ans, x: g)
def _dpow(x, y):
    """d(x**y)/dx = y x**(y-1), written so that y = 0 gives 0 (not 0 * x**-1 = nan at 0)."""
    if type(y) in (int, float):
        return y * x ** (y - 1) if y else 0.0 * x
    return y * x ** np.where(y, y - 1, 1.0)


defvjp(np.power,
       lambda g, ans, x, y: g * conj(_dpow(x, y)),
       lambda g, ans, x, y: g * conj(np.log(np.where(x == 0, 1.0, x)) * ans))
defvjp(np.remainder, lambda g, ans, x, y: g,
                     lambda g, ans, x, y: -g * np.floor_divide(x, y))
defvjp(np.absolute, lambda g, ans, x: g * _abs_dir(x, ans))

defjvp(np.add, lambda t, ans, x, y: t,
               lambda t, ans, x, y: t)
defjvp(np.subtract, lambda t, ans, x, y: t,
                    lambda t, ans, x, y: -t)
defjvp(np.multiply, lambda t, ans, x, y: t * y,
                    lambda t, ans, x, y: x * t)
defjvp(np.true_divide, lambda t, ans, x, y: t / y,
                       lambda t, ans, x, y: -t * ans / y)
defjvp(np.negative, lambda t, ans, x: -t)
defjvp(np.positive, lambda t, ans, x: t)
defjvp(np.power,
       lambda t, ans, x, y: t * _dpow(x, y),
       lambda t, ans, x, y: t * np.log(np.where(x == 0, 1.0, x)) * ans)
defjvp(np.remainder, lambda t, ans, x, y: t,
                     lambda t, ans, x, y: -t * np.floor_divide(x, y))
defjvp(np.absolute, lambda t, ans, x: _abs_jvp(t, x, ans))


def _abs_dir(x, ans):
    # d|x| is sign(x) for reals; for complex z it is z/|z| (TensorFlow's convention)
    if getattr(x, "dtype", np.dtype(float)).kind == "c":
        return x / np.where(ans == 0, 1.0, ans)
    return np.sign(x)


def _abs_jvp(t, x, ans):
    if getattr(x, "dtype", np.dtype(float)).kind == "c":
        return np.real(np.conj(x) * t) / np.where(ans == 0, 1.0, ans)
    return t * np.sign(x)


# --- matmul -----------------------------------------------------------------------------
def matmul_vjp_x(g, ans, x, y):
    """The adjoint of ``x`` in ``x @ y`` (products.py builds its dot rules on it too).

    >>> matmul_vjp_x(np.ones((1, 2)), None, np.ones((1, 3)), np.arange(6.0).reshape(3, 2))
    array([[1., 5., 9.]])
    """
    if type(y) is np.ndarray and y.ndim == 2 and y.dtype.kind != "c" and x.ndim >= 2:
        return np.matmul(g, y.T)    # a layer's weights: y.T is swapaxes(y), conj(y) is y
    if y.ndim == 1:
        return g[..., None] * conj(y)
    if x.ndim == 1:
        return np.matmul(conj(y), g[..., None])[..., 0]
    return np.matmul(g, conj(np.swapaxes(y, -1, -2)))


def matmul_vjp_y(g, ans, x, y):
    """The adjoint of ``y`` in ``x @ y``.

    >>> matmul_vjp_y(np.ones((1, 2)), None, np.array([[1.0, 2.0, 3.0]]), np.ones((3, 2)))
    array([[1., 1.],
           [2., 2.],
           [3., 3.]])
    """
    if type(x) is np.ndarray and x.ndim == 2 and x.dtype.kind != "c" and y.ndim >= 2:
        return np.matmul(x.T, g)    # a batch of inputs: x.T is swapaxes(x), conj(x) is x
    if x.ndim == 1 and y.ndim == 1:
        return g * conj(x)
    if x.ndim == 1:
        return conj(x)[:, None] * g[..., None, :]
    if y.ndim == 1:
        return np.matmul(conj(np.swapaxes(x, -1, -2)), g[..., None])[..., 0]
    return np.matmul(conj(np.swapaxes(x, -1, -2)), g)


defvjp(np.matmul, matmul_vjp_x, matmul_vjp_y)
defjvp(np.matmul, lambda t, ans, x, y: np.matmul(t, y),
                  lambda t, ans, x, y: np.matmul(x, t))


# --- complex parts ------------------------------------------------------------------------
defvjp(np.real, lambda g, ans, x: g)
defvjp(np.imag, lambda g, ans, x: 1j * g)
defvjp(np.conjugate, lambda g, ans, x: conj(g))
defjvp(np.real, lambda t, ans, x: np.real(t))
defjvp(np.imag, lambda t, ans, x: np.imag(t))
defjvp(np.conjugate, lambda t, ans, x: np.conjugate(t))


# --- transpose (the .T property) -------------------------------------------------------------
def _transpose_vjp(g, ans, x, axes=None):
    # axes may be negative (numpy takes them): argsort needs them as positions
    return np.transpose(g, None if axes is None else
                        tuple(np.argsort([a % np.ndim(g) for a in axes])))


defvjp(np.transpose, _transpose_vjp)
defjvp(np.transpose, lambda t, ans, x, axes=None: np.transpose(t, axes))


# --- sum (every unbroadcast needs it) ----------------------------------------------------------
def _sum_vjp(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=None,
             where=True):
    g = expand_reduced(g, shape_of(x), axis, keepdims is True, x)   # keepdims: np._NoValue
    return g if where is True or where is np._NoValue else np.where(where, g, 0.0)


defvjp(np.sum, _sum_vjp)
# where= only when given: Dask's sum has no where= (a Dask tangent stays lazy)
defjvp(np.sum, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=None,
       where=True: np.sum(t, axis=axis, keepdims=keepdims) if where is True or
       where is np._NoValue else np.sum(t, axis=axis, keepdims=keepdims, where=where))
# sum = initial + the elements: the engine sums g down to initial's shape
defparam(np.sum, "initial", lambda g, ans, x, *args, **kw: g,
         lambda t, ans, x, *args, **kw: t)


# --- constant-valued and piecewise-constant ------------------------------------------------------
defnondiff(np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
           np.invert, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.logical_and,
           np.logical_or, np.logical_xor, np.logical_not)
defzero(np.floor_divide)

# numpy scalars do arithmetic much faster through Python's operators than through
# a ufunc call, and for arrays the operators call the same ufuncs.
import operator  # noqa: E402
for _fn, _op in ((np.add, operator.add), (np.subtract, operator.sub),
                 (np.multiply, operator.mul), (np.true_divide, operator.truediv),
                 (np.negative, operator.neg), (np.power, operator.pow)):
    defprimitive(_fn, compute=_op)

OPERATOR_RULES = {
    "add": rule_for(np.add), "subtract": rule_for(np.subtract),
    "multiply": rule_for(np.multiply), "true_divide": rule_for(np.true_divide),
    "floor_divide": rule_for(np.floor_divide), "remainder": rule_for(np.remainder),
    "power": rule_for(np.power), "matmul": rule_for(np.matmul),
    "negative": rule_for(np.negative), "positive": rule_for(np.positive),
    "absolute": rule_for(np.absolute), "less": rule_for(np.less),
    "less_equal": rule_for(np.less_equal), "greater": rule_for(np.greater),
    "greater_equal": rule_for(np.greater_equal), "equal": rule_for(np.equal),
    "not_equal": rule_for(np.not_equal), "invert": rule_for(np.invert),
    "bitwise_and": rule_for(np.bitwise_and), "bitwise_or": rule_for(np.bitwise_or),
    "bitwise_xor": rule_for(np.bitwise_xor), "getitem": rule_for(_getitem),
    "astype": rule_for(_astype), "transpose": rule_for(np.transpose),
    "real": rule_for(np.real), "imag": rule_for(np.imag),
    "left_shift": rule_for(np.left_shift), "right_shift": rule_for(np.right_shift),
    "divmod": rule_for(np.divmod),
}
