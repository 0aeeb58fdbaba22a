"""``Variable``: mutable state (weights) that tapes watch when they read it."""
import numpy as np

from ._state import next_id, tls
from .observe import Observable
from .tensor import Tensor, TensorLike


class Variable(TensorLike, Observable):
    """A mutable value.  Reads inside a tape are recorded; assignments are not.

    Every read of a variable shares the variable's identity, so a gradient with
    respect to it sums over all reads, as in TensorFlow.  ``assign`` replaces the
    value: what was computed from the old value stays on the tape, and nothing
    flows from the assigned value into later reads.

    >>> import nbtape as nt
    >>> v = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = v * v
    >>> float(tape.gradient(y, v))
    6.0
    >>> v.assign_sub(1.0).numpy()
    array(2.)
    """

    __slots__ = ("_tensor", "_id", "trainable", "_name", "_observers", "__weakref__")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if isinstance(initial_value, TensorLike):
            initial_value = initial_value._value
        if callable(initial_value):
            initial_value = initial_value()
        arr = np.array(initial_value, dtype=dtype)
        if arr.dtype == object:
            raise TypeError(f"nt.Variable cannot hold {type(initial_value).__name__} values")
        arr.flags.writeable = False
        self._id = next_id()
        self._tensor = self._new_value(arr)
        self.trainable = bool(trainable)
        self._name = name
        self._observers = None

    def _new_value(self, arr):
        t = Tensor(arr)
        t._id = self._id     # every read is the variable
        return t

    @property
    def name(self):
        return self._name if self._name is not None else "Variable"

    @property
    def _value(self):
        return self._tensor._value

    def _leaf(self, stack=None):
        # inside a tape, np.asarray(v) is a read (so the tape watches v) that escapes
        return self._read(stack) if stack else self._tensor

    def _read(self, stack):
        for rec in stack:
            rec.on_variable_read(self)
        return self._tensor

    def value(self):
        """The current value as a ``Tensor``.

        Inside a tape this is a read of the variable (the tape follows it); outside
        any tape it is a plain snapshot, a constant for tapes started later.
        """
        stack = tls.stack
        if not stack:
            return Tensor(self._tensor._value)
        return self._read(stack)

    def read_value(self):
        return self.value()

    # assignment ----------------------------------------------------------------
    def _assign(self, new, how, source=None):
        arr = np.array(new, dtype=self.dtype)
        if arr.shape != self.shape:
            raise ValueError(
                f"cannot assign a value of shape {arr.shape} to variable {self.name!r} of "
                f"shape {self.shape}; variables keep their shape (make a new nt.Variable "
                "for a different shape).")
        arr.flags.writeable = False
        for rec in tls.stack:
            rec.on_assign(self, source, how)
        self._tensor = self._new_value(arr)
        if self._observers:
            self._notify("assign", value=self._tensor)
        return self

    def assign(self, value):
        """Replace the value (not differentiable)."""
        value = _read_if_variable(value)
        src = value if isinstance(value, TensorLike) else None
        return self._assign(np.asarray(_plain(value)), "assign", src)

    def assign_add(self, delta):
        """``v += delta`` in place (not differentiable)."""
        delta = _read_if_variable(delta)
        src = delta if isinstance(delta, TensorLike) else None
        return self._assign(self._tensor._value + _plain(delta), "assign_add", src)

    def assign_sub(self, delta):
        """``v -= delta`` in place (not differentiable)."""
        delta = _read_if_variable(delta)
        src = delta if isinstance(delta, TensorLike) else None
        return self._assign(self._tensor._value - _plain(delta), "assign_sub", src)

    def __repr__(self):
        from .display import variable_repr
        return variable_repr(self)

    def _repr_html_(self):
        from .display import variable_html
        return variable_html(self)


def _read_if_variable(v):
    # reading a variable inside a tape watches it, as TensorFlow's read_value does
    return v._read(tls.stack) if isinstance(v, Variable) else v


def _plain(v):
    return v._value if isinstance(v, TensorLike) else v
