"""``Variable``: mutable state (weights) that tapes watch when they read it."""
import contextlib

import numpy as np

from . import reprs
from .state import next_id, tls
from .arrays import is_foreign as _is_foreign, to_numpy as _to_numpy
from ..diagnostics.errors import InvalidArgumentError, user_facing
from .observe import Observable
from .tensor import Tensor, TensorLike, note_escape


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
        if _is_foreign(initial_value):
            # a Dask or CuPy array stays itself (see nbtape.core.arrays)
            arr = initial_value if dtype is None or np.dtype(dtype) == initial_value.dtype \
                else initial_value.astype(dtype)
        else:
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

    @property
    def dtype(self):
        return self._tensor._value.dtype     # TensorLike's, without the _value property

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
    def _assign(self, arr, how, source=None):
        cur = self._tensor._value
        if _is_foreign(cur):
            # the variable stays in its library (a Dask value stays lazy; numpy's like=
            # makes a numpy value one of the variable's kind)
            arr = arr if _is_foreign(arr) else np.asarray(arr, like=cur)
            arr = arr if arr.dtype == self.dtype else arr.astype(self.dtype)
        else:
            # a numpy variable holds numpy: a Dask or CuPy value is computed/copied in
            arr = np.array(_to_numpy(arr) if _is_foreign(arr) else arr, dtype=cur.dtype)
            arr.flags.writeable = False
        before = self._tensor
        self._tensor = self._new_value(arr)
        # the recorders are told once the variable holds its new value (a recorder that
        # looks at it sees the value the assignment made; ``before`` is what it held),
        # and before its observers, whose own numpy calls then see a known value
        for rec in tls.stack:
            rec.on_assign(self, source, how, before)
        if self._observers:
            self._notify("assign", value=self._tensor)
        return self

    def _set_value(self, arr):
        self._tensor = self._new_value(arr)
        if self._observers:
            self._notify("assign", value=self._tensor)
        return self

    @user_facing
    def assign(self, value):
        """Replace the value (not differentiable).  The value must have the variable's
        shape, and a dtype it can hold without loss (as in TensorFlow).

        >>> import nbtape as nt
        >>> nt.Variable([1.0, 2.0]).assign([3.0, 4.0]).numpy()
        array([3., 4.])
        """
        value = _read_if_variable(value)
        new = self._checked(value, "assign")
        # the source: the tensor given, or the plain array made of a constant (a tracer
        # replays the assignment with it)
        src = value if isinstance(value, TensorLike) else new
        if new.shape != self.shape:
            raise InvalidArgumentError(
                f"cannot assign a value of shape {new.shape} to {_label(self)} of "
                f"shape {self.shape}; variables keep their shape (make a new nt.Variable "
                "for a different shape).")
        return self._assign(new, "assign", src)

    @user_facing
    def assign_add(self, delta):
        """``v += delta`` in place (not differentiable); ``delta`` has the variable's
        shape (or broadcasts to it, like a scalar).

        >>> import nbtape as nt
        >>> nt.Variable([1.0, 2.0]).assign_add(0.5).numpy()
        array([1.5, 2.5])
        """
        delta = _read_if_variable(delta)
        d = self._checked(delta, "assign_add")
        src = delta if isinstance(delta, TensorLike) else d
        return self._assign(self._tensor._value + d, "assign_add", src)

    @user_facing
    def assign_sub(self, delta):
        """``v -= delta`` in place (not differentiable); ``delta`` has the variable's
        shape (or broadcasts to it, like a scalar)."""
        delta = _read_if_variable(delta)
        d = self._checked(delta, "assign_sub")
        src = delta if isinstance(delta, TensorLike) else d
        return self._assign(self._tensor._value - d, "assign_sub", src)

    def _checked(self, value, how):
        """``value`` as a plain array, after checking the variable can hold it."""
        arr = _plain(value)
        arr = arr if _is_foreign(arr) else np.asarray(arr)
        cur = self._tensor._value
        dtype = cur.dtype
        if arr.dtype != dtype and not np.can_cast(arr.dtype, dtype, casting="same_kind"):
            raise InvalidArgumentError(_dtype_message(self, arr, how))
        if how != "assign" and arr.shape != cur.shape:
            try:
                fits = np.broadcast_shapes(arr.shape, self.shape) == self.shape
            except ValueError:
                fits = False
            if not fits:
                raise InvalidArgumentError(
                    f"{how} got a delta of shape {arr.shape} for {_label(self)} of "
                    f"shape {self.shape}: the delta must have the variable's shape (or "
                    "broadcast to it, like a scalar), since a variable keeps its shape. "
                    "Check that the delta belongs to this variable (gradients and variables "
                    "zipped in the same order), or make a new nt.Variable for another shape.")
        return arr

    # copies and pickles ---------------------------------------------------------------
    def __reduce__(self):
        # copy.copy, copy.deepcopy and pickle all come here.  A copy is a new variable with
        # its own identity (a fresh _id), as TensorFlow's deepcopy makes one: were the _id
        # kept, the tape would take the copy for the original (a DQN target network would
        # send its gradient into the model) and an unpickled variable would collide with a
        # fresh one of the new process.  Value, name, dtype and trainable are kept;
        # observers (widgets) stay with the original.
        if tls.stack:       # (the value, not a read: a copy does not watch the variable)
            note_escape(self._tensor, "a copy (copy.copy, copy.deepcopy or pickle)")
        v = self._tensor._value
        return (type(self), (v, self.trainable, self._name, v.dtype))

    def __repr__(self):
        return reprs.text("variable", self)

    def _repr_html_(self):
        return reprs.html("variable", self)


def replace_value(var, arr):
    """Give ``var`` the plain array ``arr`` (already of its dtype and shape, never
    written to again) as its value, telling its observers: the end of an assignment,
    for a replay that computed the new value itself (``nt.function``'s program).

    >>> v = Variable([1.0, 2.0])
    >>> replace_value(v, np.array([3.0, 4.0])).numpy()
    array([3., 4.])
    """
    return var._set_value(arr)


def _label(var):
    return f"variable {var._name!r}" if var._name is not None else "a variable"


def _dtype_message(var, arr, how):
    verb = {"assign": "assign", "assign_add": "add", "assign_sub": "subtract"}[how]
    what = "value" if how == "assign" else "delta"
    vk, dk = arr.dtype.kind, var.dtype.kind
    if vk == "c":
        loss = "drop the imaginary part"
    elif vk == "f" and dk in "iu":
        loss = "truncate it to integers (0.5 would become 0)"
    elif dk == "b":
        loss = "turn every nonzero number into True"
    else:
        loss = "change the values"
    fix = ("make the variable complex (dtype='complex128')" if vk == "c" else
           "make the variable a float (nt.Variable(1.0), or dtype='float32')")
    return (f"cannot {verb} a {what} of dtype {arr.dtype} to {_label(var)} of dtype "
            f"{var.dtype}: casting would {loss}, so, as in TensorFlow, a variable only takes "
            f"values of its own kind of dtype. Pass a {what} of dtype {var.dtype} (round it "
            f"yourself with np.round(...).astype('{var.dtype}') if that is what you mean), or "
            f"{fix}.")


def _read_if_variable(v):
    # reading a variable inside a tape watches it, as TensorFlow's read_value does
    return v._read(tls.stack) if isinstance(v, Variable) else v


def _plain(v):
    return v._value if isinstance(v, TensorLike) else v


@contextlib.contextmanager
def holding(values):
    """Within the block, each variable of ``values`` (``(variable, tensor)`` pairs, the
    tensor one that the variable held) holds that tensor again; after it, what it held
    before the block.  ``recompute_grad``'s re-run reads what the first run read.

    >>> v = Variable(1.0); then = v._tensor; _ = v.assign(5.0)
    >>> with holding([(v, then)]):
    ...     float(v.numpy())
    1.0
    >>> float(v.numpy())
    5.0
    """
    now = [(v, v._tensor) for v, _ in values]
    for v, t in values:
        v._tensor = t       # the same id: tapes and rules see the variable itself
    try:
        yield
    finally:
        for v, t in now:
            v._tensor = t
