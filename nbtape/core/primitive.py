"""``primitive``: a function of plain arrays made one recorded step when given tensors.

The one wrapper behind ``nbtape.extend.primitive`` (the public, checked face) and the
engine's own primitives (``getitem``, ``astype``, the activations of ``nt.nn``).
"""
import functools

from .dispatch import apply as _apply
from .registry import RULES, VARARGS, Rule, rule_for
from .tensor import TensorLike as _TensorLike


def primitive(fn):
    """Make ``fn`` (a function on plain arrays) recordable when given tensors.

    >>> import numpy as np, nbtape as nt
    >>> from nbtape.core.registry import RULES, defvjp
    >>> @primitive
    ... def double(x):
    ...     return 2 * x
    >>> _ = defvjp(double.raw, lambda g, ans, x: 2 * g)
    >>> x = nt.constant(1.5)
    >>> with nt.GradientTape() as t:
    ...     t.watch(x); y = double(x)
    >>> float(t.gradient(y, x))
    2.0
    >>> del RULES[double.raw]          # the registry is global: this example leaves no rule
    """
    name = rule_for(fn).name

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for a in args:
            if isinstance(a, _TensorLike):
                break
        else:
            for a in kwargs.values():
                if isinstance(a, _TensorLike):
                    break
            else:
                return fn(*args, **kwargs)
        # Until a rule is given, every tensor argument is an operand with no gradient
        # rule, so a gradient through the call raises instead of skipping it.  The rule
        # is looked up at each call: one unregistered (a re-run cell) is gone, not kept.
        rule = RULES.get(fn)
        if rule is not None and (rule.vjps or rule.jvps or rule.nondiff or rule.has_vjp
                                 or rule.has_jvp):
            return _apply(rule, args, kwargs)
        return _apply(_without_rule(fn, rule.name if rule is not None else name), args, kwargs)
    wrapper.raw = fn
    wrapper.rule_name = name
    return wrapper


def _without_rule(fn, name):
    return Rule(fn, name, kind=VARARGS)
