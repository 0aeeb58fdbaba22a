"""A call's input signature, as ``tf.function`` keys its traces, and its arrays.

The arguments are first bound as Python binds them (``bind``): ``f(x, y)``,
``f(x, y=y)`` and ``f(y=y, x=x)`` are one call, and a default is filled in, so none of
them traces again.  Then ``signature`` walks them in that order: an array (an
``np.ndarray``, a tensor, a numpy scalar) is keyed by its shape and dtype and is one of
the program's inputs; a variable by its identity (the program reads it); a list, a
tuple, a namedtuple, a dataclass and a dict by their structure (a dict's keys sorted:
their order does not matter, as in TensorFlow) and their items; any other value by
value, or, when it cannot be hashed, by its identity (the key keeps the object alive,
so its id cannot be reused by another object while the trace is cached).

``inputs`` walks the same way at trace time and gives the function its arguments with
each array a new tensor that the tracer knows as an input, holding a copy of the array:
an argument that is also closed over (``mse(targets)`` where ``mse`` closes over
``targets``) is then two values, as it is to the eager run.
"""
import dataclasses
import inspect

import numpy as np

from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable
from .trace import wrap


class ById:
    """An unhashable argument in a signature: equal only to itself (kept alive)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return type(other) is ById and other.obj is self.obj


class Binder:
    """Binds a call's arguments to ``fn``'s parameters: ``bind(args, kwargs)`` gives the
    positional and keyword arguments in the order of the parameters, defaults filled in.

    >>> b = Binder(lambda x, y, scale=2.0: None)
    >>> b.bind((1,), {"y": 2}), b.bind((), {"y": 2, "x": 1})
    (((1, 2, 2.0), {}), ((1, 2, 2.0), {}))
    """

    def __init__(self, fn, skip_first=False):
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):     # a builtin: taken as called
            self.sig, self.names, self.npos = None, [], -1
            return
        params = list(sig.parameters.values())
        if skip_first and params:
            params = params[1:]
            sig = sig.replace(parameters=params)
        self.sig = sig
        self.names = [p.name for p in params if p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        # a call with every parameter given by position needs no binding (the fast path)
        self.npos = len(params) if simple else -1

    def bind(self, args, kwargs):
        if (not kwargs and len(args) == self.npos) or self.sig is None:
            return args, kwargs
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs     # the function itself says what is wrong
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def labels(self, n):
        """Names for ``n`` positional arguments (``argK`` past the named ones)."""
        return [self.names[k] if k < len(self.names) else f"arg{k}" for k in range(n)]


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:       # keys that do not compare: their order is part of the key
        return list(d)


def _fields(a):
    """A dataclass instance's init fields, or None when it is not one (or has others)."""
    if not dataclasses.is_dataclass(a) or isinstance(a, type):
        return None
    fields = dataclasses.fields(a)
    if not all(f.init for f in fields):
        return None
    return [f.name for f in fields]


def signature(args, kwargs):
    """``(key, leaves)``: the input signature of a bound call (hashable) and its arrays
    in order, the program's inputs.

    >>> key, leaves = signature((np.zeros(2), 3), {})
    >>> key == signature((np.ones(2), 3), {})[0], key == signature((np.ones(2), 4), {})[0]
    (True, False)
    >>> signature(({"a": 1, "b": 2},), {})[0] == signature(({"b": 2, "a": 1},), {})[0]
    True
    """
    key, leaves = [], []
    for a in args:
        _walk(a, key, leaves)
    if kwargs:
        for k in sorted(kwargs):
            key.append(k)
            _walk(kwargs[k], key, leaves)
    return tuple(key), leaves


def _walk(a, key, leaves):
    t = type(a)
    if t is np.ndarray:
        key.append((a.shape, a.dtype))
        leaves.append(a)
    elif t is Tensor:
        v = a._value
        if isinstance(v, np.generic):
            v = np.asarray(v)
        key.append((v.shape, v.dtype) if type(v) is np.ndarray else (type(v), id(v)))
        leaves.append(v)
    elif t is Variable:
        key.append(("variable", id(a), a))      # by identity (the program reads it)
    elif t is list or t is tuple or (isinstance(a, tuple) and hasattr(a, "_fields")):
        key.append((t, len(a)))
        for x in a:
            _walk(x, key, leaves)
    elif t is dict:
        keys = _sorted_keys(a)
        key.append((dict, tuple(keys)))
        for k in keys:
            _walk(a[k], key, leaves)
    elif isinstance(a, np.generic):
        # a numpy scalar is a 0-d array, as nt.constant makes it (numpy's scalar
        # arithmetic can round otherwise than its array loops)
        key.append(((), a.dtype))
        leaves.append(np.asarray(a))
    elif (names := _fields(a)) is not None:
        key.append((t, tuple(names)))
        for name in names:
            _walk(getattr(a, name), key, leaves)
    else:
        try:
            hash(a)
            key.append((t, a))
        except TypeError:       # an unhashable object: by identity
            key.append((t, ById(a)))


def inputs(tracer, args, kwargs, labels):
    """The bound arguments as the traced function sees them: each array a new tensor
    (of a copy) that ``tracer`` knows as an input, added in ``signature``'s order."""
    def convert(a, label):
        t = type(a)
        if t is np.ndarray or t is Tensor or isinstance(a, np.generic):
            v = a._value if t is Tensor else a
            v = np.asarray(v) if isinstance(v, np.generic) else v
            if not isinstance(v, (np.ndarray, np.generic)):
                tracer.refuse_foreign()
            x = wrap(v.copy())      # its own array: never the same as a closed-over one
            tracer.add_input(x, label)
            return x
        if t is list or t is tuple:
            return t(convert(x, f"{label}[{k}]") for k, x in enumerate(a))
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return t(*[convert(getattr(a, f), f"{label}.{f}") for f in a._fields])
        if t is dict:
            done = {k: convert(a[k], f"{label}[{k!r}]") for k in _sorted_keys(a)}
            return {k: done[k] for k in a}
        names = _fields(a) if not isinstance(a, (TensorLike, str, int, float)) else None
        if names is not None:
            return dataclasses.replace(
                a, **{n: convert(getattr(a, n), f"{label}.{n}") for n in names})
        return a

    targs = [convert(a, name) for a, name in zip(args, labels(len(args)))]
    tkwargs = {k: convert(kwargs[k], k) for k in sorted(kwargs)}
    return targs, {k: tkwargs[k] for k in kwargs}


def describe_call(args, kwargs, labels):
    """``{name: short description}`` of a call's arguments, for the retracing warning."""
    out = {}
    for name, a in zip(labels(len(args)), args):
        out[name] = _short(a)
    for k, v in kwargs.items():
        out[k] = _short(v)
    return out


def _short(a):
    if isinstance(a, (np.ndarray, np.generic, TensorLike)):
        return f"{a.dtype}{list(np.shape(a))}" if not isinstance(a, Variable) else repr(a.name)
    if isinstance(a, (list, tuple, dict)):
        return f"a {type(a).__name__} of {len(a)}"
    text = repr(a)
    return text if len(text) < 40 else type(a).__name__
