"""A tensor owns its array: a result that is a plain, changeable argument's memory
(an ``out=`` buffer numpy returns, a view of an operand) gets its own copy, so a
tensor stays immutable whatever the user writes into their arrays afterwards.

>>> import numpy as np
>>> from nbtape.core.tensor import Tensor
>>> buf = np.ones(2)
>>> out = Tensor(buf)
>>> own_result(out, [buf], None)
>>> buf[:] = 5.0
>>> np.asarray(out)
array([1., 1.])
"""
import numpy as np

from .arrays import is_foreign as _is_foreign
from .tensor import Tensor


def changeable(a):
    """True when ``a`` is an array whose values can still change, so that keeping it by
    reference is no proof of what an op saw.  A read-only flag proves nothing on its own:
    numpy lets whoever holds the array that owns the memory set ``writeable`` back on
    (a loader that refills a "read-only" buffer in place), so only memory that cannot
    change is safe: an immutable ``bytes`` object behind a read-only view.  A tensor's
    value never reaches this (the tape keeps tensors as they are); a Dask or CuPy array
    counts as changeable (``d[0] = 1`` rebinds a Dask array in place): its ``.copy()`` is
    lazy for Dask, a device copy for CuPy.

    >>> frozen = np.ones(2)
    >>> frozen.flags.writeable = False
    >>> changeable(np.ones(2)), changeable(frozen), changeable(2.0)
    (True, True, False)
    >>> changeable(np.frombuffer(b"\\x00" * 16))          # immutable bytes underneath
    False
    """
    if _is_foreign(a):
        return True
    if not isinstance(a, np.ndarray):
        return False
    while True:
        if a.flags.writeable:
            return True
        base = a.base
        if base is None:
            return True         # it owns its memory: its holder can turn writeable back on
        if not isinstance(base, np.ndarray):
            return type(base) is not bytes
        a = base


def own_outputs(outs, args, kwargs=None):
    """Give each output tensor that shares memory with a plain, changeable argument its
    own copy: a function's ``out=`` buffer (``np.clip(x, 0, 1, out=buf)`` returns
    ``buf``) or a view of a plain operand (``np.broadcast_arrays(buf, x)``).  A tensor
    is immutable, and an op that later keeps it must see it as it was.

    >>> from nbtape.core.tensor import Tensor
    >>> buf = np.ones(2)
    >>> outs = (Tensor(buf[:]), Tensor(np.zeros(2)))
    >>> own_outputs(outs, [buf])
    >>> buf[:] = 5.0
    >>> np.asarray(outs[0])
    array([1., 1.])
    """
    plain = [a for a in _flat(args) if type(a) is np.ndarray and changeable(a)]
    if kwargs:
        plain += [a for a in kwargs.values() if type(a) is np.ndarray and changeable(a)]
    if not plain:
        return
    for o in outs:
        if type(o) is Tensor and type(o._value) is np.ndarray and any(
                np.may_share_memory(o._value, a) for a in plain):
            o._value = o._value.copy()


def own_result(out, args, kwargs):
    """Give the tensor ``out`` its own copy when its value is one of the arguments: an
    ``out=`` buffer, which numpy returns (``np.sum(x, 0, None, buf)`` is ``buf``).  An
    identity test per argument (the tape asks only for calls that can hold an out=).

    >>> from nbtape.core.tensor import Tensor
    >>> buf = np.ones(2)
    >>> out = Tensor(buf)
    >>> own_result(out, [out, buf], None)
    >>> buf[:] = 5.0
    >>> np.asarray(out)
    array([1., 1.])
    """
    if type(out) is not Tensor:
        return
    v = out._value
    for a in args:
        if a is v:
            break
    else:
        if not kwargs or all(a is not v for a in kwargs.values()):
            return
    if changeable(v):
        out._value = v.copy()


def _flat(args):
    for a in args:
        if type(a) is list or type(a) is tuple:
            yield from _flat(a)
        else:
            yield a
