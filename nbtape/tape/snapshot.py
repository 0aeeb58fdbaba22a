"""What a recorded op keeps for its gradient, kept as it was when the op ran.

Tensors are immutable, but a plain numpy operand is the user's: a buffer reused
in a loop (``buf[:] = row``) would otherwise change gradients after the fact.
Only arrays that can still change are guarded, so the common case (tensors and
Python numbers) costs one set lookup per argument.  A small array is copied (its
gradient stays right whatever the user does next); one of ``KEEP_BY_REFERENCE``
bytes or more (a batch ``X`` in ``X @ W``) is kept by reference with a
fingerprint of its bytes, checked when a gradient uses it, which raises
``ChangedOperandError`` if the array changed: copying the batch on every step
would cost as much memory as the batch, and the step's peak memory with it.

>>> import numpy as np
>>> buf = np.ones(2)
>>> kept = snapshot([buf, 2.0])
>>> buf[:] = 5.0
>>> kept[0]
array([1., 1.])
"""
import numpy as np

from ..core.owned import changeable
from ..core.state import tell_copied
from ..core.tensor import Tensor
from ..diagnostics.errors import NbtapeError
from ..diagnostics.user_line import describe, source_line

# saved arguments of these types cannot change after the op ran
KEPT_AS_IS = frozenset((Tensor, int, float, complex, bool, str, slice, type(None),
                         type(Ellipsis), np.float64, np.float32, np.int64, np.bool_))

# From this size on a plain operand is fingerprinted, not copied: a copy costs its size
# in memory on every step, two fingerprints (record, gradient) cost about eight copies'
# time but no memory; below it the copy is both cheap and exact (the gradient stays
# right, where a fingerprint can only refuse).  128 KiB, not 64: the weights of a
# 100x100 layer (80 KB, issue 35's Jacobian row) are copied in 2 us instead of two
# 16 us fingerprints, while a batch `X` (128 x 784, 401 KB) stays by reference, so the
# MLP step's peak memory does not move.
KEEP_BY_REFERENCE = 1 << 17

# The fingerprint is a multilinear hash over Z/2**64 of the array's 32-bit words, one
# value per block of _BLOCK words: sum(w[j] * word[j]) mod 2**64 with secret random w.
# A change moves some word by d, 0 < |d| < 2**32, so d has at most 31 trailing zero
# bits, and w[j] * d hits any one value mod 2**64 for at most 2**31 of the 2**64
# choices of w[j]: a changed block keeps its value with probability below 2**-32,
# whatever the change (a swap, a shuffle, a sign flip, one low bit).  Sums of
# elements or of samples are not sound that way (a shuffle keeps a sum, a sample
# misses most writes).  The words are widened to 64 bits inside einsum's own
# 64 KB buffer, so a fingerprint allocates nothing the size of the array.
_BLOCK = 8192
_WEIGHTS = np.random.default_rng().integers(0, 2**64, _BLOCK, dtype=np.uint64,
                                            endpoint=False)
_WEIGHTS.flags.writeable = False


class ChangedOperandError(NbtapeError, RuntimeError):
    """A plain array a recorded op kept by reference was written to before the
    gradient that needs it: the gradient would be wrong, so none is given."""


def fingerprint(a):
    """What ``check_kept`` compares: ``a``'s shape, strides and dtype and a hash of its
    bytes (``a`` C- or F-contiguous, without Python objects).

    >>> a = np.arange(20000.0)
    >>> f = fingerprint(a)
    >>> f == fingerprint(a)
    True
    >>> a[[7, 8]] = a[[8, 7]]           # a swap keeps every sum of the elements
    >>> f == fingerprint(a)
    False
    """
    b = a.ravel(order="K").view(np.uint8)       # a view: a is contiguous
    n = b.size >> 2
    words = b[:n << 2].view(np.uint32)
    m = n // _BLOCK
    parts = np.einsum("ij,j->i", words[:m * _BLOCK].reshape(m, _BLOCK), _WEIGHTS,
                      dtype=np.uint64, casting="unsafe")
    rest = words[m * _BLOCK:]
    last = np.einsum("i,i->", rest, _WEIGHTS[:rest.size], dtype=np.uint64, casting="unsafe")
    return (a.shape, a.strides, a.dtype, parts.tobytes(), int(last), b[n << 2:].tobytes())


def _by_reference(a):
    return type(a) is np.ndarray and a.nbytes >= KEEP_BY_REFERENCE and \
        not a.dtype.hasobject and (a.flags.c_contiguous or a.flags.f_contiguous)


def snapshot(values, records=None):
    """``values`` (a list or tuple, nested) with every changeable array copied, or, given
    the ``records`` of the tape about to append the op, a large one kept as it is with
    its fingerprint in ``records.guards`` under the op's position, for ``check_kept``."""
    out = []
    for a in values:
        t = type(a)
        if t is list or t is tuple:
            a = t(snapshot(a, records))
        elif t not in KEPT_AS_IS and changeable(a):
            if records is not None and _by_reference(a):
                records.guards.setdefault(len(records), []).append((a, fingerprint(a)))
            else:
                copy = a.copy()
                tell_copied(a, copy)
                a = copy
        out.append(a)
    return out


def check_kept(records, k):
    """Raise ``ChangedOperandError`` if a plain array the op at position ``k`` of
    ``records`` kept by reference (``records.guards[k]``: ``(array, fingerprint)``
    pairs) changed since the op ran.  A pass calls it for the ops it steps through.

    >>> import nbtape as nt
    >>> x, big = nt.Variable(np.ones(3)), np.ones((9000, 3))
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = np.sum(big @ x)
    >>> float(tape.gradient(y, x)[0])
    9000.0
    >>> big[0, 0] = 2.0
    >>> tape.gradient(y, x)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nbtape.tape.snapshot.ChangedOperandError: The plain numpy array (float64, shape (9000, 3)) ...
    """
    _check(records.guards.get(k, ()), lambda: records.view(k))


def check_op(op):
    """``check_kept`` for one op (an ``Op`` view), for a step taken on its own."""
    _check(op.guards, lambda: op)


def _check(guards, view):
    for a, seen in guards:
        if fingerprint(a) != seen:
            raise _changed(view(), a)


def _changed(op, a):
    where = op.where
    line = source_line(where)
    at = describe(where) + (f": {line}" if line else "")
    return ChangedOperandError(
        f"The plain numpy array ({a.dtype}, shape {a.shape}) that {op.name} used (called at "
        f"{at}) was changed in place after that call, so a gradient through it would be "
        "wrong and none is given. nbtape copies small arrays but keeps large ones "
        f"({KEEP_BY_REFERENCE // 1024} KiB or more) by reference, to spare the memory. Ask "
        "for the gradient before writing to the array again, or pass a copy the loop does "
        "not reuse (nt.constant(arr) or arr.copy()).")


def snapshot_kwargs(kwargs, records=None):
    for v in kwargs.values():
        if type(v) not in KEPT_AS_IS:
            return dict(zip(kwargs, snapshot(kwargs.values(), records)))
    return kwargs
