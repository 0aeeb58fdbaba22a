"""numpy's own parameters for a rule's function, so that keywords find their operands.

numpy accepts most operands by keyword (``np.sum(a=x)``, ``np.diff(x, prepend=p)``),
and ``__array_function__`` hands them over as keywords.  A rule's VJPs take the
function's arguments in numpy's positional order, so the dispatcher binds a call
with keywords to the signature read here (once per rule) before recording it.
"""
import inspect

import numpy as np

_EMPTY = inspect.Parameter.empty

# ufunc methods hide most of their parameters in **kwargs (numpy 2), or have no
# signature at all (numpy 1); numpy passes them all as keywords anyway
_UFUNC_METHODS = {
    "reduce": (("array", _EMPTY), ("axis", 0), ("dtype", None), ("out", None),
               ("keepdims", False), ("initial", np._NoValue), ("where", True)),
    "accumulate": (("array", _EMPTY), ("axis", 0), ("dtype", None), ("out", None)),
    "reduceat": (("array", _EMPTY), ("indices", _EMPTY), ("axis", 0), ("dtype", None),
                 ("out", None)),
    "outer": (("A", _EMPTY), ("B", _EMPTY)),
}


class Signature:
    """Where each of a function's parameters goes.

    ``names``/``defaults``: the parameters that can be given by position, in order
    (``positional`` of them only by position); ``keyword_only``: the rest of the
    named ones; ``more_keywords``: the function takes ``**kwargs`` too.

    >>> s = signature_of(np.diff)
    >>> s.names, s.index["prepend"]
    (('a', 'n', 'axis', 'prepend', 'append'), 3)
    """

    __slots__ = ("names", "defaults", "index", "positional", "keyword_only", "more_keywords")

    def __init__(self, params, positional=0, keyword_only=(), more_keywords=False):
        self.names = tuple(n for n, _ in params)
        self.defaults = tuple(d for _, d in params)
        self.index = {n: k for k, n in enumerate(self.names)}
        self.positional = positional
        self.keyword_only = frozenset(keyword_only)
        self.more_keywords = more_keywords

    def accepts(self, name):
        """True if ``name=`` is one of the function's keywords."""
        return ((name in self.index and self.index[name] >= self.positional)
                or name in self.keyword_only or self.more_keywords)


def signature_of(fn, fallback=None):
    """numpy's signature of ``fn`` (a function, a ufunc, or a ufunc's method).

    ``fallback``, a VJP (``g, ans, *args``), names the parameters of a function
    whose signature Python cannot read (numpy 1's functions written in C).
    """
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, tuple) or isinstance(owner, np.ufunc):
        method = fn[1] if isinstance(fn, tuple) else fn.__name__
        params = _UFUNC_METHODS.get(method, ())
        if method == "outer":
            return Signature(params, positional=2, more_keywords=True)
        return Signature(params, more_keywords=True)     # numpy takes array= too
    if isinstance(fn, np.ufunc):
        names = ("x",) if fn.nin == 1 else tuple(f"x{k + 1}" for k in range(fn.nin))
        return Signature([(n, _EMPTY) for n in names], positional=fn.nin, more_keywords=True)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = None
    by_position = params is not None      # *args: its operands are positional only
    if params is None or any(p.kind is p.VAR_POSITIONAL for p in params):
        if fallback is None:
            return None
        try:
            params = list(inspect.signature(fallback).parameters.values())[2:]
        except (TypeError, ValueError):
            return None
        if by_position:
            params = [p.replace(kind=p.POSITIONAL_ONLY) if p.kind is p.POSITIONAL_OR_KEYWORD
                      else p for p in params]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return Signature([(p.name, p.default) for p in positional],
                     positional=sum(p.kind is p.POSITIONAL_ONLY for p in positional),
                     keyword_only=[p.name for p in params if p.kind is p.KEYWORD_ONLY],
                     more_keywords=any(p.kind is p.VAR_KEYWORD for p in params))
