"""Which arguments of a call are operands: the dispatcher's slow path.

A rule differentiates the arguments in numpy's positional order.  Calls that
give an operand by keyword (``np.sum(a=x)``, ``np.diff(x, prepend=p)``) are bound
to numpy's own signature first (``bind``).  A tensor that ends up in a parameter
the rule does not differentiate (``np.var(x, ddof=t)``) is recorded as an operand
of a *variant* of the rule whose derivative for it raises ``NoGradientRuleError``
naming the function and the parameter, when, and only when, a gradient or a
tangent flows through it (``operands``).  Nothing here runs for the common call
with positional operands only.
"""
from ..diagnostics import user_line
from ..diagnostics.errors import NoGradientRuleError
from .registry import POSITIONAL, SEQUENCE, Rule, variant
from .registry import operand_names  # noqa: F401  (the dispatcher's slow path asks here)
from .tensor import Tensor, TensorLike


def carries_tensor(v):
    """True for a tensor, or a list or tuple holding one (``np.stack(arrays=[x, y])``).

    >>> import nbtape as nt
    >>> carries_tensor(nt.constant(1.0)), carries_tensor([1.0, nt.constant(2.0)]), carries_tensor(2)
    (True, True, False)
    """
    if isinstance(v, TensorLike):
        return True
    t = type(v)
    return (t is list or t is tuple) and any(isinstance(e, TensorLike) for e in v)


def bind(rule, args, kwargs):
    """``(args, kwargs)`` with each operand given by keyword moved to its position.

    An argument moves when its parameter is one of the rule's operand positions,
    or when it holds a tensor; the parameters before it get numpy's defaults.

    >>> import numpy as np
    >>> from nbtape.core.registry import RULES
    >>> bind(RULES[np.diff], [], {"a": 1.0, "prepend": 0.0, "axis": 0})
    ([1.0, 1, 0, 0.0], {})
    """
    sig = rule.signature
    if sig is None or rule.kind not in (POSITIONAL, SEQUENCE):
        return args, kwargs
    n = len(args)
    operand_slots = rule.nargs if rule.kind is POSITIONAL else 1
    last = -1
    index = sig.index
    for name, v in kwargs.items():
        k = index.get(name)
        if k is not None and k >= n and k > last and (k < operand_slots or carries_tensor(v)):
            last = k
    if last < 0:
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for k in range(n, last + 1):
        name = sig.names[k]
        if name in kwargs:
            args.append(kwargs.pop(name))
        else:
            args.append(sig.defaults[k])      # numpy has already checked the call
    return args, kwargs


def _float_tensor(a):
    return type(a) is Tensor and a._value.dtype.kind in "fc"


def rule_and_operands(rule, args, kwargs):
    """``(rule, operands)`` to record for this call.

    The rule is ``rule`` itself unless tensors sit outside its operands: then a
    variant whose operands also include them (keyword operands with rules, such as
    ``np.var(x, mean=m)``, or refusals).

    >>> import numpy as np, nbtape as nt
    >>> from nbtape.core.registry import RULES
    >>> x, m = nt.constant([1.0, 2.0]), nt.constant(1.5)
    >>> rule, ops = rule_and_operands(RULES[np.var], [x], {"mean": m})
    >>> rule is RULES[np.var], rule.name, [o is m for o in ops]
    (False, 'np.var', [False, True])
    """
    kind = rule.kind
    if kind is POSITIONAL and not rule.zero and not kwargs:
        # np.sum(x, 1, keepdims=True): no tensor outside the operands
        n = rule.nargs
        for a in args[n:]:
            if type(a) is Tensor:
                break
        else:
            for k in rule.refused:
                if k < len(args) and type(args[k]) is Tensor:
                    break
            else:
                return rule, args[:n]
    extra = []                  # (parameter name, value) of tensors outside the operands
    sig = rule.signature
    if kind is SEQUENCE:
        base = list(args[0]) if args else []
        first = 1
    elif kind is POSITIONAL and not rule.zero:
        base = list(args[:rule.nargs])
        base += [None] * (rule.nargs - len(base))
        for k in rule.refused:
            if _float_tensor(base[k]):
                extra.append((_param_name(sig, k), base[k]))
                base[k] = None
        first = rule.nargs
    else:                       # varargs, and piecewise-constant rules: every argument
        base, first = rule.operands(args), len(args)
    extra += [(_param_name(sig, k), a) for k, a in enumerate(args[first:], first)
              if _float_tensor(a)]
    n_refused = len(extra)
    kwvjps, kwjvps = rule.kwvjps or {}, rule.kwjvps or {}
    if kwargs:
        extra += [(k, v) for k, v in kwargs.items() if _float_tensor(v)]
    if not extra:
        return rule, base
    names = [name for name, _ in extra]
    refused = n_refused or any(k not in kwvjps for k in names)
    where = user_line.caller_raw(3) if refused else None

    def make():
        vjps = [kwvjps.get(k) if i >= n_refused else None for i, k in enumerate(names)]
        jvps = [kwjvps.get(k) if i >= n_refused else None for i, k in enumerate(names)]
        vjps = [f or _refusing(rule.name, k, where) for f, k in zip(vjps, names)]
        return _variant(rule, names, vjps, jvps)
    # a refusal names its call, so it is made afresh; keyword operands are kept
    extended = make() if refused else variant(rule, tuple(names), make)
    return extended, base + [v for _, v in extra]


def _param_name(sig, k):
    return sig.names[k] if sig and k < len(sig.names) else f"argument {k}"


def _refusing(name, param, where):
    """A VJP for a parameter nbtape does not differentiate: it raises, naming the call."""
    def refuse(*args, **kwargs):
        at = f" (in the call at {user_line.describe(where)})" if where else ""
        raise NoGradientRuleError(refusal(name, param, at))
    return refuse


def _variant(base, names, vjps, jvps):
    """``base`` with extra operands: ``vjps``/``jvps`` say what each one's derivative is."""
    from ..tape.backward import call_vjp
    from ..tape.forward import call_jvp
    n_extra = len(names)

    def vjp_all(g, ans, args, kw, needs):
        n = len(needs) - n_extra
        if any(needs[:n]) and not base.has_vjp:     # a primitive with no rule yet
            raise NoGradientRuleError(
                f"nbtape has no gradient rule for {base.name}, and the gradient you asked for "
                "flows through it. Give it one (nbtape.extend.defvjp or defderiv), wrap it in "
                "@nt.custom_gradient, or cut the path with nt.stop_gradient if no gradient "
                "should flow there.")
        grads = list(call_vjp(base, g, ans, args, kw, needs[:n])) if any(needs[:n]) \
            else [None] * n
        for f, need in zip(vjps, needs[n:]):
            grads.append(f(g, ans, *args, **kw) if need else None)
        return grads

    def jvp_all(tangents, ans, args, kw):
        n = len(tangents) - n_extra
        for name, f, t in zip(names, jvps, tangents[n:]):
            if t is not None and f is None:
                return _no_tangent(base, name, ans)
        total = None
        if any(t is not None for t in tangents[:n]):
            if not base.has_jvp and not base.has_vjp:
                return _no_tangent(base, None, ans)
            total = call_jvp(base, tangents[:n], ans, args, kw)
        for f, t in zip(jvps, tangents[n:]):
            if t is not None:
                c = f(t, ans, *args, **kw)
                total = c if total is None else total + c
        return total

    return Rule(base.fn, base.name, kind=base.kind, start=base.start, nargs=base.nargs,
                multi=base.multi, vjp_all=vjp_all, jvp_all=jvp_all, base=base)


def _no_tangent(rule, param, ans):
    """A tangent that cannot be computed: ``acc.jvp`` raises if it is asked for it."""
    from ..tape.forward import NoJvp      # forward mode's own marker for a refused tangent
    what = rule.name if param is None else f"{rule.name} with respect to its {param}= argument"
    refused = NoJvp(what, user_line.caller())
    return [refused] * len(ans) if rule.multi else refused


def refusal(name, param, where=""):
    """The message of a refused operand: the function, the parameter (and the call).

    >>> print(refusal("np.var", "ddof"))        # doctest: +ELLIPSIS
    nbtape cannot differentiate np.var with respect to its ddof= argument, ...
    """
    return (f"nbtape cannot differentiate {name} with respect to its {param}= argument{where}, "
            "and the gradient you asked for flows into it through a tensor passed there. "
            "Pass a constant there instead (a plain array, or nt.stop_gradient(...) if a zero "
            "gradient is what you mean), or rewrite that step with functions nt.coverage() "
            "lists.")
