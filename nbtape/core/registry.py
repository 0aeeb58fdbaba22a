"""The gradient-rule registry: one ``Rule`` per numpy function.

A rule is written once, the way a math reference would state it::

    defvjp(np.sin, lambda g, ans, x: g * np.cos(x))
    defjvp(np.sin, lambda t, ans, x: t * np.cos(x))
    defderiv(np.sin, lambda ans, x: np.cos(x))          # both at once, elementwise

``nbtape.extend`` is the public face of this module (rule modules and users import
the common ``def*`` from there); the rest here serves the rule modules' rarer cases:
keyword operands (``defparam``), whole-function rules (``defrule``), modes with
another kind of result (``defmodes``, ``defvariant``) and the like.  Only this
module sets a ``Rule``'s fields: the constructor takes the fields of a rule made
for one call form, and the ``def*`` functions set those of registered rules.

A VJP takes the output's adjoint ``g``, the output ``ans`` and the function's
own arguments, and returns the adjoint of one argument (one lambda per
differentiable argument position).  A JVP takes one argument's tangent ``t``
and returns its contribution to the output tangent.  Broadcasting and dtype are
undone by the engine, so rules may return any broadcast-compatible value.

The registry reads which arguments each VJP actually uses (from the lambdas'
bytecode) so that a tape saves only those.

nbtape supports numpy 1.26 and 2.x, whose namespaces differ (``np.cumulative_sum``
is numpy 2 only, ``np.product`` numpy 1 only).  A rule for such a function names
it with ``numpy_function("cumulative_sum")``, which is None where it is missing,
and every ``def*`` below skips a None function.
"""

import numpy as np

from .reads import positional_params, vjp_reads
from .rule import POSITIONAL, SEQUENCE, VARARGS, Kind, Rule, name_of  # noqa: F401 (re-exported)

RULES = {}

# Rules of libraries nbtape does not depend on (scipy.special) load on first need:
# ``nbtape.rules`` says how when it is imported (the core never imports it), and the
# dispatcher asks when a ufunc has no rule.  Set once at import, never per call.
_LATE = []


def set_late_loader(load):
    """Called by ``nbtape.rules``: ``load()`` registers late rules, True when it did."""
    _LATE[:] = [load]


def late_rules():
    """Load the rules that load late; True when that registered something new.

    >>> import nbtape
    >>> late_rules() in (True, False)
    True
    """
    return bool(_LATE) and _LATE[0]()



def numpy_function(path):
    """``np.<path>`` (``"linalg.vecdot"``) if this numpy has it, else None.

    >>> numpy_function("linalg.norm") is np.linalg.norm, numpy_function("no_such_thing")
    (True, None)
    """
    obj = np
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def defalias(alias, fn):
    """Give another spelling of ``fn`` (an old or deprecated name) ``fn``'s rule.

    The rule computes ``fn``: numpy has already warned the caller of a deprecated
    alias, and the alias called again from inside nbtape would warn a second time.
    """
    if alias is not None and alias is not fn:
        RULES[alias] = rule_for(fn)


def rule_for(fn, create=True):
    """The registered rule of ``fn`` (made empty on first use unless ``create`` is false)."""
    r = RULES.get(fn)
    if r is None and create:
        r = RULES[fn] = Rule(fn)
    return r


def saved_rule(fn):
    """The given fields of ``fn``'s registered rule (None if it has none), for
    ``restore_rule``.

    >>> import numpy as np, nbtape
    >>> saved_rule(np.sin)["name"], saved_rule(object()) is None
    ('np.sin', True)
    """
    r = RULES.get(fn)
    return None if r is None else r.given()


def restore_rule(fn, fields):
    """Give ``fn``'s registered rule back the ``fields`` that ``saved_rule`` returned.

    >>> import numpy as np, nbtape
    >>> saved = saved_rule(np.sin); defnondiff(np.sin); restore_rule(np.sin, saved)
    >>> RULES[np.sin].nondiff
    False
    """
    rule_for(fn).restore(fields)


def defprimitive(key, name=None, fn=None, compute=None):
    """Register ``key`` (a function, or ``(ufunc, method)``) as a primitive, the rule
    for it named ``name`` and computing ``fn`` (default: ``key`` itself; ``compute``:
    what runs for calls without keywords, if faster).  Its derivatives come from the
    other ``def*`` functions.

    >>> import numpy as np
    >>> RULES[np.emath.sqrt].name, RULES[np.add].compute
    ('np.emath.sqrt', <built-in function add>)
    """
    r = rule_for(key)
    if name:
        r.name = name
    if fn is not None:
        r.fn = r.compute = fn
    if compute is not None:
        r.compute = compute
    return r


def operand_names(rule):
    """numpy's names of the rule's operand positions (a keyword among them needs binding).

    >>> import numpy as np
    >>> sorted(operand_names(RULES[np.linalg.solve]))
    ['a', 'b']
    """
    sig = rule.signature
    kind = rule.kind
    n = rule.nargs if kind is POSITIONAL else 1 if kind is SEQUENCE else 0
    rule.operand_names = frozenset(name for k, name in enumerate(sig.names[:n])
                                   if k not in rule.refused) if sig else frozenset()
    return rule.operand_names


def variant(rule, key, make):
    """``rule``'s variant for ``key``, made by ``make()`` on first use and kept.

    >>> import numpy as np
    >>> r = Rule(np.var)                    # not registered: the example leaves no trace
    >>> v = variant(r, ("mean",), lambda: Rule(np.var, base=r))
    >>> v is variant(r, ("mean",), None), v.base is r
    (True, True)
    """
    variants = rule.variants
    v = variants.get(key) if variants else None
    if v is None:
        v = make()
        rule.variants = {**(variants or {}), key: v}
    return v


def _compute_save(rule):
    """Decide which positional arguments (and whether ``ans``) the VJPs need."""
    read = vjp_reads(rule.vjps)
    if read is None:
        rule.save, rule.save_ans = None, True
        return
    rule.save, rule.save_ans = read


def defvjp(fn, *vjps, name=None):
    """Register per-argument VJPs: ``vjp(g, ans, *args, **kwargs) -> adjoint``.

    >>> import numpy as np, nbtape
    >>> RULES[np.sin].name, RULES[np.sin].save   # the VJP of sin keeps x
    ('np.sin', (True,))
    """
    if fn is None:
        return None
    r = rule_for(fn)
    if name:
        r.name = name
    r.kind = POSITIONAL
    r.vjps = tuple(vjps)
    r.nargs = max(r.nargs, len(r.vjps))
    _compute_save(r)
    return r


def defjvp(fn, *jvps):
    """Register per-argument JVPs: ``jvp(t, ans, *args, **kwargs) -> tangent``."""
    if fn is None:
        return None
    r = rule_for(fn)
    r.jvps = tuple(jvps)
    r.nargs = max(r.nargs, len(r.jvps))
    return r


def defparam(fn, param, vjp, jvp=None):
    """Register the VJP and JVP of the operand numpy calls ``param``.

    ``np.diff(x, prepend=p)``: ``defparam(np.diff, "prepend", vjp, jvp)`` puts the rule
    in ``prepend``'s position (a tensor given for a parameter in between refuses), or, for a
    keyword-only parameter (``np.var(x, mean=m)``), among the keyword operands.  The
    VJP and JVP take the function's arguments like the others do.

    >>> import numpy as np, nbtape
    >>> r = RULES[np.diff]           # diff(a, n, axis, prepend, append): n, axis are not operands
    >>> r.nargs, sorted(r.refused), sorted(RULES[np.var].kwvjps)
    (5, [1, 2], ['mean'])
    """
    if fn is None:
        return None
    r = rule_for(fn)
    sig = r.signature
    k = sig.index.get(param) if sig else None
    if k is None:
        r.kwvjps = {**(r.kwvjps or {}), param: vjp}
        if jvp is not None:
            r.kwjvps = {**(r.kwjvps or {}), param: jvp}
        return r

    def padded(fns, new):
        fns = list(fns) + [None] * (k + 1 - len(fns))
        fns[k] = new
        return tuple(fns)
    # the parameters in between (axis=, dtype=, ...) are not operands: a tensor there refuses
    r.refused = r.refused.union(range(r.nargs, k)).difference((k,))
    r.vjps = padded(r.vjps, vjp)
    if jvp is not None:
        r.jvps = padded(r.jvps, jvp)
    r.nargs = max(r.nargs, k + 1)
    _compute_save(r)
    return r


def defrule(fn, vjp_all=None, jvp_all=None, kind=SEQUENCE, start=0, multi=False, name=None,
            nargs=1):
    """Register whole-function rules for sequence, varargs or multi-output functions.

    ``kind`` is SEQUENCE (operands are ``args[0]``), VARARGS (``args[start:]``) or
    POSITIONAL (the first ``nargs`` arguments).
    ``vjp_all(g, ans, args, kwargs, needs)`` returns one adjoint per operand
    (``None`` where ``needs`` is false); ``jvp_all(tangents, ans, args, kwargs)``
    gets one tangent per operand, ``None`` for operands without one.
    """
    if fn is None:
        return None
    r = rule_for(fn)
    if name:
        r.name = name
    r.kind, r.start, r.multi, r.nargs = kind, start, multi, nargs
    if vjp_all is not None:
        r.vjp_all = vjp_all
    if jvp_all is not None:
        r.jvp_all = jvp_all
    r.save, r.save_ans = None, True
    return r


def defmodes(fn, choose, modes):
    """Calls of ``fn`` in other modes get other rules: ``choose(args, kwargs)`` gives
    the key in ``modes`` (a dict of unregistered Rules) of a call's mode, or None for
    the registered rule.  The dispatcher asks before recording each call.

    >>> import numpy as np, nbtape
    >>> r = RULES[np.gradient]
    >>> r.variants[r.choose((np.ones(3),), {})].multi   # one axis: one array, not a tuple
    False
    """
    if fn is None:
        return None
    rule = rule_for(fn)
    rule.variants = {**(rule.variants or {}), **modes}
    rule.choose = choose
    return rule


def defvariant(fn, choose, name, vjp, jvp):
    """A mode of ``fn`` that returns another kind of result gets its own rule.

    ``np.linalg.svd(a, compute_uv=False)`` returns one array where the rule for
    ``svd`` expects a tuple: ``choose(args, kwargs)`` says whether a call is in
    that mode, and then it is recorded with a rule (a variant, not in the registry)
    made of the first argument's ``vjp`` and ``jvp``.

    >>> import numpy as np, nbtape
    >>> r = RULES[np.linalg.svd]
    >>> r.variants[r.choose((np.eye(2),), {"compute_uv": False})].name
    'np.linalg.svd (compute_uv=False)'
    """
    if fn is None:
        return None
    mode = Rule(fn, name, nargs=1)
    mode.vjps, mode.jvps = (vjp,), (jvp,)
    _compute_save(mode)
    defmodes(fn, lambda args, kwargs: name if choose(args, kwargs or {}) else None,
             {name: mode})
    return mode


def defcomposite(fn, impl):
    """``fn`` computed by ``impl`` from numpy calls that have rules, on the tensors
    themselves, so every step is recorded (as HIPS autograd builds ``np.select``
    from ``np.where``).  ``impl`` takes ``fn``'s arguments and gives its result.

    >>> import numpy as np, nbtape as nt
    >>> x = nt.constant([-1.0, 2.0])
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = np.select([x > 0], [x ** 2], default=x)    # recorded as np.where steps
    >>> tape.gradient(y, x).numpy()
    array([1., 4.])
    """
    if fn is not None:
        rule_for(fn).composite = impl


def defseveral(fn, vjp_all, jvp_all, nargs=1):
    """Rules for the calls of ``fn`` that return several arrays where it usually returns
    one (``np.average(..., returned=True)``): ``defrule``'s ``vjp_all`` and ``jvp_all``,
    operands the first ``nargs`` arguments.

    >>> import numpy as np, nbtape
    >>> RULES[np.average].several.name
    'np.average (returning several arrays)'
    """
    if fn is None:
        return None
    several = Rule(fn, f"{name_of(fn)} (returning several arrays)", nargs=nargs, multi=True,
                   vjp_all=vjp_all, jvp_all=jvp_all)
    rule_for(fn).several = several
    return several


def defnondiff(*fns):
    """Functions whose output is a constant: comparisons, argmax, shape queries."""
    for fn in fns:
        if fn is not None:
            rule_for(fn).nondiff = True


def defzero(*fns):
    """Piecewise-constant functions: defined, and their derivative is zero."""
    for fn in fns:
        if fn is None:
            continue
        r = rule_for(fn)
        r.zero = True
        r.save, r.save_ans = (), False


def _times_conj(g, d):
    """``g * conj(d)`` (``util.conj`` inlined: this runs once per op in every reverse pass)."""
    dt = getattr(d, "dtype", None)
    if dt is not None:
        return g * np.conj(d) if dt.kind == "c" else g * d
    return g * (d.conjugate() if type(d) is complex else d)


def _derivative_vjp(d):
    # a derivative of one or two arguments and no more (no default, *args, **kwargs or
    # keyword-only) gets a VJP without *args, whose call costs less per op; a real ndarray
    # (float64 the most common) skips _times_conj's call
    code = getattr(d, "__code__", None)
    n = -1 if code is None or code.co_flags & 0x0C or code.co_kwonlyargcount or \
        _has_defaults(d) else len(positional_params(d) or ())
    ndarray, float64 = np.ndarray, np.dtype(np.float64)
    if n == 2:
        def vjp(g, ans, x):
            dx = d(ans, x)
            if type(dx) is ndarray and (dx.dtype is float64 or dx.dtype.kind != "c"):
                return g * dx
            return _times_conj(g, dx)
    elif n == 3:
        def vjp(g, ans, x, y):
            dx = d(ans, x, y)
            if type(dx) is ndarray and (dx.dtype is float64 or dx.dtype.kind != "c"):
                return g * dx
            return _times_conj(g, dx)
    else:
        def vjp(g, ans, *args, **kwargs):
            return _times_conj(g, d(ans, *args, **kwargs))
    vjp.derivative = d                  # what _compute_save reads
    return vjp


def _derivative_jvp(d):
    code = getattr(d, "__code__", None)      # the arities _derivative_vjp takes without *args
    n = -1 if code is None or code.co_flags & 0x0C or code.co_kwonlyargcount or \
        _has_defaults(d) else len(positional_params(d) or ())
    if n == 2:
        def jvp(t, ans, x):
            return t * d(ans, x)
    elif n == 3:
        def jvp(t, ans, x, y):
            return t * d(ans, x, y)
    else:
        def jvp(t, ans, *args, **kwargs):
            return t * d(ans, *args, **kwargs)
    return jvp


def _has_defaults(fn):
    return bool(getattr(fn, "__defaults__", None) or getattr(fn, "__kwdefaults__", None))


def defderiv(fn, *derivs, name=None):
    """Register an elementwise function by its derivatives, one per argument:
    ``d(ans, *args, **kwargs)`` is the derivative with respect to that argument (None:
    not differentiable there).  The VJP is ``g * conj(d)``, the JVP ``t * d``.

    >>> import numpy as np, nbtape
    >>> r = RULES[np.sin]
    >>> float(r.vjps[0](2.0, None, 0.0)), float(r.jvps[0](3.0, None, 0.0)), r.save_ans
    (2.0, 3.0, False)
    """
    if fn is None:
        return None
    defvjp(fn, *[None if d is None else _derivative_vjp(d) for d in derivs], name=name)
    return defjvp(fn, *[None if d is None else _derivative_jvp(d) for d in derivs])


def deflinear(fn, vjp=None, call=None):
    """A function linear in its first argument: its JVP is the function itself
    applied to the tangent (``call``, default ``fn``, computes it); ``vjp``, the
    adjoint, if given, is registered as its VJP.

    >>> import numpy as np, nbtape
    >>> float(RULES[np.flip].jvps[0](np.array([1.0, 2.0]), None, np.zeros(2))[0])
    2.0
    """
    if fn is None:
        return None
    apply_to = fn if call is None else call

    def jvp(t, ans, x, *args, **kwargs):
        return apply_to(t, *args, **kwargs)
    if vjp is not None:
        defvjp(fn, vjp)
    return defjvp(fn, jvp)


def defstop(fn, name):
    """Register ``fn`` (an identity) as a stop: recorded, so explain and the pictures
    show where a path was cut, never followed by a pass, keeping nothing.

    >>> r = defstop(lambda x: x, "cut here")
    >>> r.stop, r.save, r.save_ans, r.name
    (True, (), False, 'cut here')
    >>> del RULES[r.fn]
    """
    r = rule_for(fn)
    r.name, r.stop, r.nargs = name, True, 1
    r.save, r.save_ans = (), False
    return r
