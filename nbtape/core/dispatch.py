"""The hot path: run a numpy function on tensors and offer it to the recorders.

Every recorded operation, whether it came from an operator (``x * y``), a ufunc
(``np.sin(x)``) or a numpy function (``np.sum(x, axis=0)``), goes through
``apply``.  With nothing recording it costs one numpy call plus a wrap.
"""
import numpy as np

from .state import keeps_every_call, next_id, tls
from .arrays import SCALAR_METAS, is_foreign as _is_foreign
from .arrays import mixed_backends_error as _mixed_backends_error
from ..diagnostics.float_warnings import NUMPY_IS_SILENT, reissue, say_for_numpy
from .operands import bind as _bind, operand_names as _operand_names
from .operands import rule_and_operands as _operands
from .owned import own_result
from .registry import POSITIONAL, SEQUENCE, VARARGS, RULES, Rule, late_rules
from .tensor import Tensor, TensorLike
from ..diagnostics.user_line import numpy_fill
from .variable import Variable


_new = object.__new__


def _read(a, stack):
    return a._read(stack) if type(a) is Variable else a


def _val(a):
    return a._value if type(a) is Tensor else a


def _wrap(out):
    if isinstance(out, (np.ndarray, np.generic)) or _is_foreign(out):
        return Tensor(out)
    return out


def _wrap_multi(out):
    items = [_wrap(o) for o in out]
    if isinstance(out, list):
        return items
    if hasattr(out, "_fields"):
        return type(out)(*items)
    return tuple(items)


def _unwrap_nested(a, stack):
    """Unwrap tensors inside lists/tuples (for functions without a rule)."""
    t = type(a)
    if t is Variable:
        a = a._read(stack)
        t = Tensor
    if t is Tensor:
        return a._value, a
    if t is list or t is tuple:
        pairs = [_unwrap_nested(x, stack) for x in a]
        return t(p[0] for p in pairs), t(p[1] for p in pairs)
    return a, a


def operand_ids(operands):
    """The operands' tensor ids, ``None`` for a constant: a tuple (of ints and None,
    which the cyclic GC stops tracking), unrolled for the one- and two-operand ops
    that are nearly all of a tape.

    >>> import nbtape as nt
    >>> x = nt.constant(1.0)
    >>> operand_ids((x, 2.0)) == (x._id, None)
    True
    """
    n = len(operands)
    if n == 2:
        a, b = operands
        return (a._id if type(a) is Tensor else None, b._id if type(b) is Tensor else None)
    if n == 1:
        a = operands[0]
        return (a._id if type(a) is Tensor else None,)
    return tuple([a._id if type(a) is Tensor else None for a in operands])


def apply(rule, args, kwargs=None, rule_kwargs=True):
    """Compute ``rule.fn(*args, **kwargs)`` and offer the op to every recorder.

    ``rule_kwargs=False`` keeps keyword arguments (a ufunc's ``dtype=``,
    ``casting=``) out of what the rules see.
    """
    stack = tls.stack
    if kwargs:
        return _apply_keywords(rule, args, kwargs, rule_kwargs, stack)
    if rule.kind is SEQUENCE:
        args, raw = _sequence_args(args, stack)
    else:
        n = len(args)
        if n == 2:          # x * y and np.sin(x), unrolled: nearly every op is one of them
            a, b = args
            ta, tb = type(a), type(b)
            # a Variable to read, or a list operand to make an array
            special = ta is Variable or tb is Variable or ta is list or tb is list
            raw = (a._value if ta is Tensor else a, b._value if tb is Tensor else b)
        elif n == 1:
            a = args[0]
            ta = type(a)
            special = ta is Variable or ta is list
            raw = (a._value if ta is Tensor else a,)
        else:
            raw, special = _raw_args(args)
        if special:
            args = _special_args(rule, args, stack)
            raw = [a._value if type(a) is Tensor else a for a in args]
    try:
        out = rule.compute(*raw)
    except (TypeError, ValueError) as e:    # free until raised (Python 3.11)
        if stack:
            tell_raised(rule, args, None, e, stack)
        err = _mixed_backends_error(rule.name, raw, e)
        if err is None:
            raise
        raise err from e
    except RuntimeWarning as w:     # numpy's overflow/invalid, said at the user's line
        out = reissue(w, rule.name, rule.compute, *raw)
    if NUMPY_IS_SILENT:             # WebAssembly: numpy cannot notice, nbtape says it
        say_for_numpy(rule.name, raw, out)
    if rule.multi or (type(out) not in _ARRAY_TYPES and not isinstance(out, _ARRAYS)):
        return _finish(rule, args, None, out, stack, False)
    outs = _new(Tensor)     # Tensor(out) without its __init__ frame (a call per op shows)
    outs._value = out
    outs._id = next_id()
    if len(raw) > 2 or (rule.zero and len(raw) == 2):
        # np.clip(c, a, b, buf) returns buf, np.fix(x, buf) too: a tensor is immutable, so
        # it gets its own copy, whether a tape records the call or not
        own_result(outs, raw, None)
    if stack and not rule.nondiff:
        # the common case inlined (a call per op shows): positional operands in place
        fast = rule.fast
        if len(args) <= fast:
            operands = args
        else:
            operands = None
            if fast == rule.nargs:      # x[i], np.sum(x, 1): no tensor past the operands?
                for a in args[fast:]:
                    if type(a) is Tensor:
                        break
                else:
                    operands = args[:fast]
            if operands is None:
                rule, operands = _operands(rule, args, None)
        n = len(operands)
        if n == 2:          # operand_ids inlined
            a, b = operands
            ids = (a._id if type(a) is Tensor else None, b._id if type(b) is Tensor else None)
        elif n == 1:
            a = operands[0]
            ids = (a._id if type(a) is Tensor else None,)
        else:
            ids = operand_ids(operands)
        for rec in stack:
            rec.record(rule, args, None, operands, ids, outs)
    elif stack:
        offer_constant(rule, args, None, outs, stack)
    return outs


def _sequence_args(args, stack):
    """``(args, raw)`` of a call whose first argument is a sequence of operands
    (``np.stack([a, b])``): variables read, and the plain values numpy computes with."""
    items = [_read(a, stack) for a in args[0]]
    rest = [_read(a, stack) for a in args[1:]]
    raw = [[_val(a) for a in items]]
    raw.extend(_val(a) for a in rest)
    return (items, *rest), raw


def _raw_args(args):
    """``(raw, special)`` for a call of three or more arguments: the plain values numpy
    computes with, and whether one is a variable to read or a list to make an array."""
    raw = []
    special = False
    for a in args:
        t = type(a)
        if t is Tensor:
            raw.append(a._value)
        else:
            special = special or t is Variable or t is list
            raw.append(a)
    return raw, special


def tell_raised(rule, args, kwargs, error, stack):
    """A call raised ``error`` (numpy's ``LinAlgError``, a ``ValueError``): tell the
    recorders that keep every call (their optional ``note_raised``).  ``nt.function``'s
    tracer refuses a trace whose function caught such an error itself, since a replay
    would always take the branch that this one call took."""
    for rec in stack:
        if keeps_every_call(rec):
            rec.note_raised(rule, args, kwargs, error)


def offer_constant(rule, args, kwargs, outs, stack):
    """A call no tape keeps (a comparison, ``np.argmax``: ``rule.nondiff``) offered to
    the recorders that keep every call (``records_all``: ``nt.function``'s tracer, whose
    replay must compute the mask a comparison makes).

    >>> import nbtape as nt
    >>> with nt.GradientTape() as tape:
    ...     _ = nt.constant(1.0) > 0
    >>> len(tape.ops)
    0
    """
    for rec in stack:
        if keeps_every_call(rec):
            rec.record(rule, args, kwargs, (), (), outs)


def _finish(rule, args, kwargs, out, stack, kw_tensors):
    """Wrap ``out`` and offer the op to the recorders (``kw_tensors``: ``kwargs`` may
    hold tensors)."""
    if rule.multi:
        outs = _wrap_multi(out)
    elif isinstance(out, _ARRAYS):
        outs = Tensor(out)
    elif type(out) is complex:
        # 1j * s: Python's complex takes numpy's float64 (a float subclass) itself
        outs = Tensor(np.complex128(out))
    elif _is_foreign(out):
        outs = Tensor(out)          # a Dask or CuPy array (nbtape.core.arrays)
    elif type(out) is tuple and out and (isinstance(out[0], _ARRAYS) or _is_foreign(out[0])):
        # this call returned several arrays where the rule expects one (e.g.
        # np.average(..., returned=True)): record them, with the rule for that
        rule = rule.several or _several_outputs(rule)
        outs = _wrap_multi(out)
    else:
        outs = out
    if kwargs or len(args) > 2 or (rule.zero and len(args) == 2):
        own_result(outs, args, kwargs)      # an out= buffer (see apply)
    if stack and not rule.nondiff:
        # the common case inlined: positional operands only (a call per op shows)
        if len(args) <= rule.fast and not kw_tensors:
            operands = args
        else:
            rule, operands = _operands(rule, args, kwargs)
        ids = operand_ids(operands)
        for rec in stack:
            rec.record(rule, args, kwargs, operands, ids, outs)
    elif stack:
        offer_constant(rule, args, kwargs, outs, stack)
    return outs


def _apply_keywords(rule, args, kwargs, rule_kwargs, stack):
    """``apply`` for a call with keywords: numpy computes the call as given; the
    tape records it bound to numpy's signature (operands in their positions)."""
    for v in kwargs.values():
        t = type(v)
        if t is Tensor or t is Variable or t is list or t is tuple:
            break
    else:
        # the common case, np.sum(x, axis=1): keywords are options, operands are in place
        names = rule.operand_names
        if (names if names is not None else _operand_names(rule)).isdisjoint(kwargs):
            raw = []
            for a in args:
                t = type(a)
                if t is Tensor:
                    raw.append(a._value)
                elif t is Variable or t is list or t is tuple:
                    break
                else:
                    raw.append(a)
            else:
                out = _compute(rule, raw, kwargs, args, kwargs, stack)
                return _finish(rule, args, kwargs if rule_kwargs else None, out, stack, False)
    args = [_read_nested(a, stack) for a in args]
    kwargs = {k: _read_nested(v, stack) for k, v in kwargs.items()}
    raw = [_raw_nested(a) for a in args]
    rawkw = {k: _raw_nested(v) for k, v in kwargs.items()}
    out = _compute(rule, raw, rawkw, args, kwargs, stack)
    if not stack or rule.nondiff:
        outs = _finish(rule, args, None, out, (), False)
        if stack:
            offer_constant(rule, args, kwargs, outs, stack)
        return outs
    args, kwargs = _bind(rule, args, kwargs)
    seq = 1 if rule.kind is SEQUENCE else 0     # a sequence operand stays a list
    n = rule.nargs if rule.kind is POSITIONAL else 0
    args = [_as_operand(a, k < n) if k >= seq else a for k, a in enumerate(args)]
    kwargs = {k: _as_operand(v, False) for k, v in kwargs.items()}
    return _finish(rule, args, kwargs if rule_kwargs else None, out, stack, True)


def _compute(rule, raw, rawkw, args, kwargs, stack):
    """``rule.fn(*raw, **rawkw)`` for a call with keywords, with what ``apply`` does
    around its own (inlined) call: numpy's warnings said at the user's line, a raise
    told to the recorders (a trace must know the branch the user's ``except`` took),
    and on WebAssembly, where numpy cannot notice an overflow, nbtape saying it."""
    try:
        out = rule.fn(*raw, **rawkw)
    except RuntimeWarning as w:     # said at the user's line (float_warnings)
        out = reissue(w, rule.name, rule.fn, *raw, **rawkw)
    except (TypeError, ValueError) as e:
        if stack:
            tell_raised(rule, args, kwargs, e, stack)
        raise
    if NUMPY_IS_SILENT:
        say_for_numpy(rule.name, raw, out)
    return out


def _read_nested(a, stack):
    t = type(a)
    if t is Variable:
        return a._read(stack)
    if t is list or t is tuple:
        return t(_read_nested(x, stack) for x in a)
    return a


def _raw_nested(a):
    t = type(a)
    if t is Tensor:
        return a._value
    if t is list or t is tuple:
        return t(_raw_nested(x) for x in a)
    return a


def _as_operand(a, operand):
    """A list holding float tensors as one recorded tensor; a list in an operand's
    place as an array (what rules expect of a constant operand); else ``a``."""
    t = type(a)
    if t is list or t is tuple:
        if _holds_float_tensor(a):
            return _stacked(a)
        if operand and t is list:
            return np.asarray(a)
    return a


def _holds_float_tensor(a):
    for x in a:
        t = type(x)
        if (t is Tensor and x._value.dtype.kind in "fc") or \
                ((t is list or t is tuple) and _holds_float_tensor(x)):
            return True
    return False


def _stacked(items):
    """``np.array(items)`` for a (nested) list holding tensors, recorded as ``np.stack``."""
    return np.stack([_stacked(x) if type(x) in (list, tuple) else x for x in items])


_ARRAYS = (np.ndarray, np.generic)
# the exact types of nearly every result: a set lookup, cheaper than isinstance on a scalar
_ARRAY_TYPES = frozenset(SCALAR_METAS) | {np.ndarray}


def _special_args(rule, args, stack):
    """Variables become their (recorded) reads; list operands become arrays, which
    is what the rules expect of a constant operand (``x @ [1.0, 2.0]``), or, when
    they hold tensors, a recorded ``np.stack`` of them."""
    if len(args) == 2:          # x @ w with w a variable: no list operand, no loop
        a, b = args
        ta, tb = type(a), type(b)
        if ta is not list and tb is not list:
            return (a._read(stack) if ta is Variable else a,
                    b._read(stack) if tb is Variable else b)
    n = rule.nargs if rule.kind is POSITIONAL else 0
    out = []
    for k, a in enumerate(args):
        t = type(a)
        if t is Variable:
            a = a._read(stack)
        elif t is list:
            a = _as_operand(_read_nested(a, stack), k < n)
        out.append(a)
    return tuple(out)       # the recorded arguments: a tuple, which the GC can untrack


def _several_outputs(rule):
    return Rule(rule.fn, f"{rule.name} (returning several arrays)", kind=VARARGS, multi=True)


def apply_unknown(fn, args, kwargs, name=None):
    """A numpy function with no rule: compute it, and poison any recorded path."""
    stack = tls.stack
    raw, args = _unwrap_nested(tuple(args), stack)
    rawkw, kwargs = _unwrap_nested(tuple(kwargs.items()), stack) if kwargs else ((), ())
    try:
        out = fn(*raw, **dict(rawkw))
    except RuntimeWarning as w:     # said at the user's line (float_warnings)
        out = reissue(w, name or getattr(fn, "__name__", "a numpy function"), fn, *raw,
                      **dict(rawkw))
    if NUMPY_IS_SILENT:
        say_for_numpy(name or getattr(fn, "__name__", "a numpy function"), raw, out)
    multi = isinstance(out, (tuple, list)) and any(
        isinstance(o, np.ndarray) or _is_foreign(o) for o in out)
    outs = _wrap_multi(out) if multi else _wrap(out)
    if stack:
        operands = []
        _collect(args, operands)
        _collect(kwargs, operands)
        if operands:
            rule = Rule(fn, name, kind=VARARGS, multi=multi)
            ids = [a._id for a in operands]
            for rec in stack:
                if keeps_every_call(rec):
                    # the whole call, constants included: a replay calls it again
                    rec.record(rule, args, dict(kwargs), operands, ids, outs)
                else:
                    rec.record(rule, list(operands), None, operands, ids, outs)
                if outs is None:
                    # np.copyto(plain, t), as np.nan_to_num(plain, nan=t) does inside:
                    # the values went into a plain array, and the tape cannot follow them
                    how = numpy_fill(rule.name)     # (np.full(shape, t, dtype))
                    for a in operands:
                        rec.note_escape(a, how)
    return outs


def _collect(a, into):
    if type(a) is Tensor:
        into.append(a)
    elif type(a) in (list, tuple):
        for x in a:
            _collect(x, into)


# keywords that change what a (g)ufunc computes: the rules don't model them
_GUFUNC_KWARGS = frozenset(("where", "axes", "axis", "keepdims", "signature"))


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Tensor.__array_ufunc__``: route ufunc calls to their rules."""
    if not kwargs and method == "__call__":      # the common case, kept short
        rule = RULES.get(ufunc)
        if rule is not None:
            return apply(rule, inputs)
    if kwargs.get("where", False) is True or (method != "__call__" and "array" in kwargs):
        # where=True is the default; ufunc.reduce(array=x) reaches us with x in both
        # inputs and kwargs
        kwargs = {k: v for k, v in kwargs.items()
                  if not (k == "where" and v is True) and not (k == "array" and inputs)}
        if not kwargs and method == "__call__":
            return array_ufunc(ufunc, method, inputs, kwargs)
    out = kwargs.get("out")
    if out is not None and not any(isinstance(o, TensorLike) for o in
                                   (out if type(out) is tuple else (out,))):
        return _into_array(ufunc, method, inputs, kwargs)
    if out is not None:
        raise TypeError(
            f"nbtape tensors are immutable, so np.{ufunc.__name__}(..., out=...) cannot "
            "write into one. Drop out= and use the returned tensor instead.")
    key = ufunc if method == "__call__" else (ufunc, method)
    rule = RULES.get(key)
    if rule is None and late_rules():    # a ufunc of scipy.special, say: its rules now
        rule = RULES.get(key)
    if rule is None or (kwargs and method == "__call__" and not rule.nondiff and (
            kwargs.get("where", True) is not True or _GUFUNC_KWARGS.intersection(kwargs))):
        name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if rule is not None:
            name += " with " + ", ".join(f"{k}=" for k in kwargs if k in _GUFUNC_KWARGS)
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        return apply_unknown(fn, inputs, kwargs, name)
    return apply(rule, inputs, kwargs, rule_kwargs=method != "__call__")


def _into_array(ufunc, method, inputs, kwargs):
    """``np.subtract(t, m, out=buffer)`` into a plain array (numpy's own code does this,
    e.g. ``np.nanvar`` with a tensor ``mean=``): the result is that array, off the tape."""
    stack = tls.stack
    raw = []
    for a in inputs:
        if isinstance(a, TensorLike):
            t = _read(a, stack)
            for rec in stack:
                rec.note_escape(t, f"np.{ufunc.__name__}(..., out=<an array>)")
            a = t._value
        raw.append(a)
    kwargs = {k: _raw_nested(_read_nested(v, stack)) for k, v in kwargs.items()}
    fn = ufunc if method == "__call__" else getattr(ufunc, method)
    try:
        out = fn(*raw, **kwargs)
    except RuntimeWarning as w:     # said at the user's line (float_warnings)
        return reissue(w, f"np.{ufunc.__name__}", fn, *raw, **kwargs)
    if NUMPY_IS_SILENT:
        say_for_numpy(f"np.{ufunc.__name__}", raw, out)
    return out


def array_function(func, args, kwargs):
    """``Tensor.__array_function__``: route numpy functions to their rules."""
    rule = RULES.get(func)
    if rule is None:
        return apply_unknown(func, args, kwargs)
    if rule.choose is not None:         # a mode with another kind of result (svd, qr)
        mode = rule.choose(args, kwargs)
        if mode is not None:
            rule = rule.variants[mode]
    elif rule.composite is not None:    # built from recorded numpy calls (np.select)
        return rule.composite(*args, **kwargs)
    return apply(rule, args, kwargs)
