"""``Tensor``: an immutable numpy value that tapes can follow.

Operators, numpy ufuncs and numpy functions on a tensor all go through
``nbtape.core.dispatch.apply``, which needs ``Tensor``; so ``nbtape/rules/operators.py``
(imported by the package first thing) gives ``TensorLike`` those methods, and
the imports run one way: tensor <- dispatch <- operators.
"""
import numpy as np

from . import reprs
from .state import next_id, tls
from ..diagnostics.user_line import numpy_fill
from .arrays import is_foreign as _is_foreign, to_numpy as _to_numpy


def note_escape(t, how):
    """Tell active tapes that ``t`` left as a plain value (cheap when none are)."""
    for rec in tls.stack:
        rec.note_escape(t, how)


class TensorLike:
    """Operators and the numpy protocol, shared by ``Tensor`` and ``Variable``."""

    __slots__ = ()
    __array_priority__ = 100.0
    # numpy's protocols, the Python operators, T/real/imag, [] and astype are given to
    # this class by nbtape/rules/operators.py: they run through dispatch, which needs Tensor.

    def __array__(self, dtype=None, copy=None):
        if tls.stack:
            note_escape(self._leaf(tls.stack), numpy_fill("np.asarray"))
        v = self._value
        if type(v) is not np.ndarray:       # (an ndarray is its own np.asarray)
            v = np.asarray(v) if not _is_foreign(v) else _to_numpy(v)   # explicit: computes
        if dtype is not None and v.dtype != dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        v = v.view()
        v.flags.writeable = False   # a tensor is immutable, even through asarray
        return v

    # attributes ----------------------------------------------------------------
    @property
    def shape(self):
        return np.shape(self._value)

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return np.ndim(self._value)

    @property
    def size(self):
        return np.size(self._value) if not _is_foreign(self._value) else self._value.size

    @property
    def data(self):
        """The backing array, unconverted: an ``np.ndarray`` (read-only), or the Dask or
        CuPy array the tensor was made from (a Dask value stays lazy).

        >>> import nbtape as nt
        >>> nt.constant([1.0, 2.0]).data
        array([1., 2.])
        """
        if tls.stack:
            note_escape(self._leaf(tls.stack), ".data")
        return self._value

    def numpy(self):
        """The value as a new ``np.ndarray`` (a copy: the tensor stays immutable).

        A Dask value is computed (by the scheduler in use, e.g. a ``dask.distributed``
        client), a CuPy value is copied to the host.

        >>> import nbtape as nt
        >>> nt.constant([1.0, 2.0]).numpy()
        array([1., 2.])
        """
        if tls.stack:
            note_escape(self._leaf(tls.stack), ".numpy()")
        v = self._value
        return np.array(v) if not _is_foreign(v) else _to_numpy(v)

    def item(self):
        if tls.stack:
            note_escape(self._leaf(tls.stack), ".item()")
        return _to_numpy(self._value).item()

    def tolist(self):
        if tls.stack:
            note_escape(self._leaf(tls.stack), ".tolist()")
        return _to_numpy(self._value).tolist()

    # Python protocol ---------------------------------------------------------------
    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor (a scalar) is undefined")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor (a scalar)")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self):
        if tls.stack:
            note_escape(self._leaf(tls.stack), "bool()")
        return bool(self._value)

    def __float__(self):
        if tls.stack:
            note_escape(self._leaf(tls.stack), "float()")
        if np.ndim(self._value):
            raise TypeError(
                f"float() needs a scalar tensor, and this one has shape {self.shape}. Use "
                "t.item() for the single value of a size-1 tensor, or index it (t[0, 0]).")
        return float(self._value)

    def __int__(self):
        if tls.stack:
            note_escape(self._leaf(tls.stack), "int()")
        return int(self._value)

    def __complex__(self):
        if tls.stack:
            note_escape(self._leaf(tls.stack), "complex()")
        return complex(self._value)

    def __index__(self):
        # (operator.index, range(), list indices); integers are never followed, but a
        # watched bool or integer value is noted like float() is
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        if tls.stack:
            note_escape(self._leaf(tls.stack), "operator.index()")
        return int(self._value)

    def __round__(self, ndigits=None):
        # round(t) as round(ndarray): np.round, recorded (a zero gradient almost everywhere)
        return np.round(self, 0 if ndigits is None else ndigits)

    def __contains__(self, value):
        # `v in t` as for an ndarray: a plain bool, never differentiable
        return bool(np.any(_to_numpy(self._value) == _to_numpy(getattr(value, "_value", value))))

    def __setitem__(self, idx, value):
        raise TypeError(
            "nbtape tensors are immutable, so item assignment is not recorded. Build the "
            "new value instead, e.g. with np.where(mask, new, x) or np.concatenate, or "
            "use nt.Variable(...).assign(...) for state that changes.")

    __hash__ = object.__hash__

    # ndarray methods, so array code runs unchanged ----------------------------------------
    def reshape(self, *shape, **kwargs):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, **kwargs)

    def transpose(self, *axes):
        return np.transpose(self, (axes[0] if len(axes) == 1 else axes) or None)

    def flatten(self):
        return np.ravel(self)

    def copy(self):
        return np.copy(self)

    def conjugate(self):
        return np.conjugate(self)

    def sort(self, *a, **k):
        raise TypeError("ndarray.sort() sorts in place, and tensors are immutable: "
                        "use np.sort(x) instead.")

    def partition(self, *a, **k):
        raise TypeError("ndarray.partition() works in place, and tensors are immutable: "
                        "use np.partition(x, kth) instead.")

    def compress(self, condition, axis=None):
        return np.compress(condition, self, axis=axis)

    @property
    def mT(self):
        """The matrix transpose (the last two axes swapped), recorded, as ``ndarray.mT``."""
        if self.ndim < 2:
            raise ValueError(f"matrix transpose needs at least 2 dimensions; this tensor "
                             f"has shape {self.shape}. Use t.T for a 1-d or 0-d tensor.")
        return np.swapaxes(self, -1, -2)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def _repr_html_(self):
        return reprs.html("tensor", self)


def _method(name):
    fn = getattr(np, name)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``np.{name}(x, ...)``, recorded."
    return method


for _name in ("sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod",
              "ravel", "squeeze", "swapaxes", "dot", "clip", "conj", "round", "repeat",
              "take", "diagonal", "trace", "argmax", "argmin", "argsort", "all", "any",
              "nonzero", "searchsorted", "argpartition", "choose"):
    setattr(TensorLike, _name, _method(_name))


class Tensor(TensorLike):
    """An immutable array value that tapes can follow.

    >>> import numpy as np, nbtape as nt
    >>> x = nt.constant([1.0, 2.0])
    >>> np.sin(x).shape, (x * 2).numpy()
    ((2,), array([2., 4.]))
    """

    __slots__ = ("_value", "_id", "__weakref__")

    def __init__(self, value):
        self._value = value
        self._id = next_id()

    def _leaf(self, stack=None):
        return self

    # copies and pickles: a new value with its own identity (the tape's _id) ----------------
    def __copy__(self):
        # as ndarray.copy: recorded (np.copy) when a tape follows the tensor, so the
        # gradient flows through the copy; the copy never shares the original's _id
        return np.copy(self)

    def __deepcopy__(self, memo):
        return np.copy(self)

    def __reduce__(self):
        # an unpickled tensor is a new constant: its old _id would collide with the ids
        # of the new process
        if tls.stack:
            note_escape(self, "pickle")
        return (constant, (self._value,))

    def __repr__(self):
        return reprs.text("tensor", self)


def constant(value, dtype=None):
    """A ``Tensor`` holding ``value`` (not watched unless ``tape.watch`` is called).

    Python floats become float64, as in numpy; pass ``dtype`` to choose.

    >>> import nbtape as nt
    >>> nt.constant(3.0).dtype, nt.constant([1, 2], dtype="float32").dtype
    (dtype('float64'), dtype('float32'))
    """
    if isinstance(value, TensorLike):
        # like tf.constant: an existing tensor stays itself (and stays on the tape);
        # a variable is read; a dtype change is a recorded cast
        t = value.value() if not isinstance(value, Tensor) else value
        if dtype is None or np.dtype(dtype) == t.dtype:
            return t
        return t.astype(dtype)
    if _is_foreign(value):
        # a Dask or CuPy array stays itself (a Dask one stays lazy): rules run on it
        return Tensor(value if dtype is None or np.dtype(dtype) == value.dtype
                      else value.astype(dtype))
    arr = np.array(value, dtype=dtype)
    if arr.dtype == object:
        raise TypeError(f"nt.constant cannot hold {type(value).__name__} values; "
                        "give it numbers, lists of numbers or a numpy array.")
    arr.flags.writeable = False
    return Tensor(arr)
