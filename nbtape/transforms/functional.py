"""Functional forms: ``grad``, ``value_and_grad``, ``jacobian``, ``hessian``.

They take plain Python functions of arrays.  Given numpy inputs they return
numpy arrays; given tensors they return tensors (so they nest: ``hessian`` is
``jacobian(grad(f))``).
"""
import functools

import numpy as np

from ..diagnostics.errors import user_facing
from ..tape.gradient_tape import GradientTape, UnconnectedGradients
from ..core.tensor import Tensor, TensorLike


def _argnums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _as_source(x, position):
    if isinstance(x, TensorLike):
        return x, False
    arr = np.asarray(x)
    if arr.dtype.kind not in "fc":
        hint = f" (did you mean {float(arr.ravel()[0])!r}?)" if arr.size and arr.dtype.kind in "iub" else ""
        raise TypeError(f"argument {position} has dtype {arr.dtype}; gradients need float or "
                        f"complex values{hint}.")
    return Tensor(arr), True


def _out(g, plain):
    if g is None:
        return None
    return np.asarray(g._value) if plain and isinstance(g, TensorLike) else g


def _prepare(args, nums):
    args = list(args)
    plain = False
    for i in nums:
        if i >= len(args):
            raise TypeError(f"argnums {i} is out of range for {len(args)} argument(s)")
        args[i], was_plain = _as_source(args[i], i)
        plain = plain or was_plain
    return args, plain


def value_and_grad(f, argnums=0):
    """``g(*args) -> (f(*args), df/dargs)``.

    >>> import nbtape as nt
    >>> nt.value_and_grad(lambda x: x ** 2)(3.0)
    (array(9.), array(6.))
    """
    nums = _argnums(argnums)

    @functools.wraps(f)
    @user_facing
    def wrapper(*args, **kwargs):
        args, plain = _prepare(args, nums)
        with GradientTape() as tape:
            for i in nums:
                tape.watch(args[i])
            y = f(*args, **kwargs)
        if not isinstance(y, TensorLike):
            y = Tensor(np.asarray(y))
        if y.shape != ():
            raise ValueError(f"grad needs a function with a scalar output; this one returned "
                             f"shape {y.shape}. Use nt.jacobian for vector outputs, or reduce "
                             "the output (e.g. np.sum) first.")
        gs = tape.gradient(y, [args[i] for i in nums],
                           unconnected_gradients=UnconnectedGradients.ZERO)
        gs = [_out(g, plain) for g in gs]
        value = _out(y, plain)
        return value, (gs[0] if isinstance(argnums, int) else tuple(gs))
    return wrapper


def grad(f, argnums=0):
    """``df/dx`` as a function.

    >>> import numpy as np, nbtape as nt
    >>> nt.grad(np.sin)(0.0)
    array(1.)
    """
    vg = value_and_grad(f, argnums)

    @functools.wraps(f)
    @user_facing
    def wrapper(*args, **kwargs):
        return vg(*args, **kwargs)[1]
    return wrapper


def jacobian(f, argnums=0):
    """The Jacobian of ``f`` as a function: shape ``output.shape + input.shape``.

    >>> import numpy as np, nbtape as nt
    >>> nt.jacobian(lambda x: x * 2)(np.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """
    nums = _argnums(argnums)

    @functools.wraps(f)
    @user_facing
    def wrapper(*args, **kwargs):
        args, plain = _prepare(args, nums)
        with GradientTape(persistent=True) as tape:
            for i in nums:
                tape.watch(args[i])
            y = f(*args, **kwargs)
        sources = [args[i] for i in nums]
        outputs = list(y) if isinstance(y, (tuple, list)) else [y]
        outputs = [o if isinstance(o, TensorLike) else Tensor(np.asarray(o)) for o in outputs]
        rows = []
        for k, o in enumerate(outputs):
            js = tape.jacobian(o, sources, unconnected_gradients=UnconnectedGradients.ZERO)
            js = [_out(j, plain) for j in js]
            rows.append(js[0] if isinstance(argnums, int) else tuple(js))
        # like jax.jacobian: a tuple of outputs gives a tuple of Jacobians
        return type(y)(rows) if isinstance(y, (tuple, list)) else rows[0]
    return wrapper


def hessian(f, argnums=0):
    """The Hessian of a scalar ``f``: ``jacobian(grad(f))``.

    >>> import numpy as np, nbtape as nt
    >>> nt.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacobian(grad(f, argnums), argnums)
