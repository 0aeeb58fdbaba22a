"""The hot path: run a numpy function on tensors and offer it to the recorders.

Every recorded operation, whether it came from an operator (``x * y``), a ufunc
(``np.sin(x)``) or a numpy function (``np.sum(x, axis=0)``), goes through
``apply``.  With nothing recording it costs one numpy call plus a wrap.
"""
import inspect

import numpy as np

from ._state import tls
from .rules.registry import POSITIONAL, SEQUENCE, VARARGS, RULES, Rule
from .tensor import Tensor, TensorLike
from .variable import Variable


def _read(a, stack):
    return a._read(stack) if type(a) is Variable else a


def _val(a):
    return a._value if type(a) is Tensor else a


def _wrap(out):
    if isinstance(out, (np.ndarray, np.generic)):
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


def apply(rule, args, kwargs=None, rule_kwargs=True):
    """Compute ``rule.fn(*args, **kwargs)`` and offer the op to every recorder.

    ``rule_kwargs=False`` keeps keyword arguments (a ufunc's ``dtype=``,
    ``casting=``) out of what the rules see.
    """
    stack = tls.stack
    if rule.kind is SEQUENCE:
        items = [_read(a, stack) for a in args[0]]
        rest = [_read(a, stack) for a in args[1:]]
        raw = [[_val(a) for a in items]]
        raw.extend(_val(a) for a in rest)
        args = (items, *rest)
    else:
        raw = []
        special = False         # a Variable to read, or a list operand to make an array
        for a in args:
            t = type(a)
            if t is Tensor:
                raw.append(a._value)
            elif t is Variable:
                special = True
                raw.append(a._tensor._value)
            else:
                special = special or t is list
                raw.append(a)
        if special:
            args = _special_args(rule, args, stack)
    if kwargs and rule.params and rule.kind is POSITIONAL:
        args, kwargs = _bind_operand_keywords(rule, args, kwargs)
        args = [_read(a, stack) for a in args]
        raw = [_val(a) for a in args]
    if kwargs:
        kwargs = {k: _read(v, stack) for k, v in kwargs.items()}
        out = rule.fn(*raw, **{k: _val(v) for k, v in kwargs.items()})
        if not rule_kwargs:
            kwargs = None
    else:
        kwargs = None
        out = rule.compute(*raw)
    if rule.multi:
        outs = _wrap_multi(out)
    elif isinstance(out, _ARRAYS):
        outs = Tensor(out)
    elif type(out) is tuple and out and isinstance(out[0], _ARRAYS):
        # this call returned several arrays where the rule expects one (e.g.
        # np.average(..., returned=True)): record them, but with no gradient rule
        rule = _several_outputs(rule)
        outs = _wrap_multi(out)
    else:
        outs = out
    if stack and not rule.nondiff:
        # Rule.operands, with its common case inlined (a method call per op shows)
        operands = args[:rule.nargs] if rule.kind is POSITIONAL and not rule.zero \
            else rule.operands(args)
        ids = [a._id if type(a) is Tensor else None for a in operands]
        for rec in stack:
            rec.record(rule, args, kwargs, operands, ids, outs)
    return outs


_ARRAYS = (np.ndarray, np.generic)


def _special_args(rule, args, stack):
    """Variables become their (recorded) reads; list operands become arrays, which
    is what the rules expect of a constant operand (``x @ [1.0, 2.0]``)."""
    n = rule.nargs if rule.kind is POSITIONAL else 0
    out = []
    for k, a in enumerate(args):
        t = type(a)
        if t is Variable:
            a = a._read(stack)
        elif t is list and k < n:
            a = np.asarray(a)
        out.append(a)
    return out


def _bind_operand_keywords(rule, args, kwargs):
    """Move keyword operands (``np.clip(x, min=t)``) into their positions.

    Only when a keyword holds a tensor: rules differentiate positional operands.
    """
    if not any(isinstance(v, TensorLike) for v in kwargs.values()):
        return args, kwargs
    names = [n for n, _ in rule.params]
    last = max((names.index(k) for k, v in kwargs.items()
                if k in names and isinstance(v, TensorLike)), default=-1)
    if last < len(args):
        return args, kwargs
    kwargs = dict(kwargs)
    args = list(args)
    for name, default in rule.params[len(args):last + 1]:
        if name in kwargs:
            args.append(kwargs.pop(name))
        elif default is not inspect.Parameter.empty:
            args.append(default)
        else:
            return args[:len(args)], kwargs
    return args, kwargs


def _several_outputs(rule):
    several = Rule(rule.fn, f"{rule.name} (returning several arrays)")
    several.kind, several.start, several.multi = VARARGS, 0, True
    return several


def apply_unknown(fn, args, kwargs, name=None):
    """A numpy function with no rule: compute it, and poison any recorded path."""
    stack = tls.stack
    raw, args = _unwrap_nested(tuple(args), stack)
    rawkw, kwargs = _unwrap_nested(tuple(kwargs.items()), stack) if kwargs else ((), ())
    out = fn(*raw, **dict(rawkw))
    multi = isinstance(out, (tuple, list)) and any(isinstance(o, np.ndarray) for o in out)
    outs = _wrap_multi(out) if multi else _wrap(out)
    if stack:
        operands = []
        _collect(args, operands)
        _collect(kwargs, operands)
        if operands:
            rule = Rule(fn, name)
            rule.kind, rule.start, rule.multi = "varargs", 0, multi
            ids = [a._id for a in operands]
            for rec in stack:
                rec.record(rule, list(operands), None, operands, ids, outs)
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
    if kwargs.get("out") is not None:
        raise TypeError(
            f"nbtape tensors are immutable, so np.{ufunc.__name__}(..., out=...) cannot "
            "write into one. Drop out= and use the returned tensor instead.")
    key = ufunc if method == "__call__" else (ufunc, method)
    rule = RULES.get(key)
    if rule is None or (kwargs and method == "__call__" and not rule.nondiff and (
            kwargs.get("where", True) is not True or _GUFUNC_KWARGS.intersection(kwargs))):
        name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if rule is not None:
            name += " with " + ", ".join(f"{k}=" for k in kwargs if k in _GUFUNC_KWARGS)
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        return apply_unknown(fn, inputs, kwargs, name)
    return apply(rule, inputs, kwargs, rule_kwargs=method != "__call__")


def array_function(func, args, kwargs):
    """``Tensor.__array_function__``: route numpy functions to their rules."""
    rule = RULES.get(func)
    if rule is None:
        return apply_unknown(func, args, kwargs)
    if rule.variant is not None:        # a mode with another kind of result (svd, qr)
        rule = rule.variant(args, kwargs)
    elif rule.composite is not None:    # built from recorded numpy calls (np.select)
        return rule.composite(*args, **kwargs)
    return apply(rule, args, kwargs)
