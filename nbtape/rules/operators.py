"""The Python operators, numpy's protocols and a few ndarray methods of tensors.

``tensor.py`` defines the value types; ``dispatch.py`` runs numpy on them and so
imports ``tensor``; this module imports both (and the operator rules) and installs
these methods on ``TensorLike``, as autograd's ``numpy_boxes`` does for its boxes.
The package imports it before anything computes, so every import runs one way.
The operators call ``apply`` directly (no numpy protocol round trip), since per-op
overhead is what a scalar loop feels.
"""
import numpy as np

from ..core.arrays import is_foreign
from ..core.dispatch import apply, array_function, array_ufunc
from .core_ops import OPERATOR_RULES as _R
from ..core.registry import RULES
from ..core.state import tls
from ..core.tensor import TensorLike
from ..core.variable import Variable

# one module global per operator rule: a dict lookup less on every operator call
_R_ABSOLUTE = _R["absolute"]
_R_ADD = _R["add"]
_R_ASTYPE = _R["astype"]
_R_BITWISE_AND = _R["bitwise_and"]
_R_BITWISE_OR = _R["bitwise_or"]
_R_BITWISE_XOR = _R["bitwise_xor"]
_R_DIVMOD = _R["divmod"]
_R_EQUAL = _R["equal"]
_R_FLOOR_DIVIDE = _R["floor_divide"]
_R_GETITEM = _R["getitem"]
_R_GREATER = _R["greater"]
_R_GREATER_EQUAL = _R["greater_equal"]
_R_IMAG = _R["imag"]
_R_INVERT = _R["invert"]
_R_LESS = _R["less"]
_R_LESS_EQUAL = _R["less_equal"]
_R_LEFT_SHIFT = _R["left_shift"]
_R_MATMUL = _R["matmul"]
_R_MULTIPLY = _R["multiply"]
_R_NEGATIVE = _R["negative"]
_R_NOT_EQUAL = _R["not_equal"]
_R_POSITIVE = _R["positive"]
_R_POWER = _R["power"]
_R_REAL = _R["real"]
_R_REMAINDER = _R["remainder"]
_R_RIGHT_SHIFT = _R["right_shift"]
_R_SUBTRACT = _R["subtract"]
_R_TRANSPOSE = _R["transpose"]
_R_TRUE_DIVIDE = _R["true_divide"]


class _Operators:
    """The methods below, gathered so they read as one class; installed on TensorLike."""

    # numpy protocol --------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not kwargs and method == "__call__":     # np.sin(x): straight to apply
            rule = RULES.get(ufunc)
            if rule is not None:
                return apply(rule, inputs)
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        rule = RULES.get(func)
        if rule is not None and rule.choose is None and rule.composite is None:
            return apply(rule, args, kwargs)       # np.sum(x, axis=1): straight to apply
        return array_function(func, args, kwargs)

    @property
    def T(self):
        return apply(_R_TRANSPOSE, (self,))

    @property
    def real(self):
        return apply(_R_REAL, (self,))

    @property
    def imag(self):
        return apply(_R_IMAG, (self,))

    def __getitem__(self, idx):
        return apply(_R_GETITEM, (self, _index_value(idx)))

    # operators -------------------------------------------------------------------------
    def __add__(self, o): return apply(_R_ADD, (self, o))
    def __radd__(self, o): return apply(_R_ADD, (o, self))
    def __sub__(self, o): return apply(_R_SUBTRACT, (self, o))
    def __rsub__(self, o): return apply(_R_SUBTRACT, (o, self))
    def __mul__(self, o): return apply(_R_MULTIPLY, (self, o))
    def __rmul__(self, o): return apply(_R_MULTIPLY, (o, self))
    def __truediv__(self, o): return apply(_R_TRUE_DIVIDE, (self, o))
    def __rtruediv__(self, o): return apply(_R_TRUE_DIVIDE, (o, self))
    def __floordiv__(self, o): return apply(_R_FLOOR_DIVIDE, (self, o))
    def __rfloordiv__(self, o): return apply(_R_FLOOR_DIVIDE, (o, self))
    def __mod__(self, o): return apply(_R_REMAINDER, (self, o))
    def __rmod__(self, o): return apply(_R_REMAINDER, (o, self))
    def __pow__(self, o): return apply(_R_POWER, (self, o))
    def __rpow__(self, o): return apply(_R_POWER, (o, self))
    def __matmul__(self, o): return apply(_R_MATMUL, (self, o))
    def __rmatmul__(self, o): return apply(_R_MATMUL, (o, self))
    def __neg__(self): return apply(_R_NEGATIVE, (self,))
    def __pos__(self): return apply(_R_POSITIVE, (self,))
    def __abs__(self): return apply(_R_ABSOLUTE, (self,))
    def __lt__(self, o): return apply(_R_LESS, (self, o))
    def __le__(self, o): return apply(_R_LESS_EQUAL, (self, o))
    def __gt__(self, o): return apply(_R_GREATER, (self, o))
    def __ge__(self, o): return apply(_R_GREATER_EQUAL, (self, o))
    def __eq__(self, o): return apply(_R_EQUAL, (self, o))
    def __ne__(self, o): return apply(_R_NOT_EQUAL, (self, o))
    def __invert__(self): return apply(_R_INVERT, (self,))
    def __and__(self, o): return apply(_R_BITWISE_AND, (self, o))
    def __or__(self, o): return apply(_R_BITWISE_OR, (self, o))
    def __xor__(self, o): return apply(_R_BITWISE_XOR, (self, o))
    def __rand__(self, o): return apply(_R_BITWISE_AND, (o, self))
    def __ror__(self, o): return apply(_R_BITWISE_OR, (o, self))
    def __rxor__(self, o): return apply(_R_BITWISE_XOR, (o, self))
    def __lshift__(self, o): return apply(_R_LEFT_SHIFT, (self, o))
    def __rlshift__(self, o): return apply(_R_LEFT_SHIFT, (o, self))
    def __rshift__(self, o): return apply(_R_RIGHT_SHIFT, (self, o))
    def __rrshift__(self, o): return apply(_R_RIGHT_SHIFT, (o, self))
    def __divmod__(self, o): return apply(_R_DIVMOD, (self, o))
    def __rdivmod__(self, o): return apply(_R_DIVMOD, (o, self))

    def astype(self, dtype, copy=True):
        return apply(_R_ASTYPE, (self, np.dtype(dtype)))


def _index_value(idx):
    t = type(idx)
    if t is tuple:
        return tuple(_index_value(i) for i in idx)
    if isinstance(idx, TensorLike):
        if t is Variable and tls.stack:
            idx = idx.value()       # a read the recorders see (nt.function replays it)
        v = idx._value
        return np.asarray(v) if not is_foreign(v) else v
    if t is list and any(isinstance(i, TensorLike) for i in idx):
        return [_index_value(i) for i in idx]
    return idx


# Python's own class entries are left alone; so is __hash__, which a class that defines
# __eq__ gets as None (a tensor hashes by identity, as TensorLike says).
_NOT_METHODS = ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__",
                "__firstlineno__", "__static_attributes__")
for _name, _member in list(vars(_Operators).items()):
    if _name not in _NOT_METHODS:
        setattr(TensorLike, _name, _member)
