"""Adding a function to nbtape: make it a primitive, and give its derivatives.

nbtape differentiates a call by looking up the rule of the function called.  A rule
is one line per derivative, in the conventions of HIPS autograd::

    defvjp(fn, lambda g, ans, x, y: ..., lambda g, ans, x, y: ...)   # reverse mode
    defjvp(fn, lambda t, ans, x, y: ..., lambda t, ans, x, y: ...)   # forward mode

A VJP takes the output's adjoint ``g``, the output ``ans`` and the function's own
arguments, and returns the adjoint of one argument (one VJP per argument, in order;
None for an argument with no gradient).  A JVP takes one argument's tangent ``t``
and returns its share of the output's tangent.  Rules receive and return plain
arrays (tensors when a gradient of the gradient is being recorded); the engine
undoes broadcasting and casts to the argument's dtype once, for every rule.

* ``defderiv(fn, *derivs)``: an elementwise function, by its derivative with
  respect to each argument, ``d(ans, *args)``; the VJP is ``g * conj(d)`` and the
  JVP ``t * d`` (complex values follow TensorFlow's convention).
* ``deflinear(fn, vjp)``: a function linear in its first argument is its own JVP;
  give its adjoint as the VJP.
* ``primitive(fn)``: a function of your own (not numpy's) that nbtape should treat as
  one step; numpy's functions need no ``primitive``, their calls already reach nbtape.
* ``defnondiff(fn)``, ``defzero(fn)``: the output is a constant (an index, a
  comparison), or the derivative is zero everywhere it exists (``floor``).

Rules given from outside nbtape are checked when they run: a derivative of the wrong
shape raises an error naming the function and the argument.

>>> import numpy as np, nbtape as nt
>>> from nbtape.extend import primitive, defderiv
>>> @primitive
... def softplus(x):
...     return np.logaddexp(0.0, x)
>>> _ = defderiv(softplus, lambda ans, x: 1 / (1 + np.exp(-x)))
>>> nt.grad(lambda x: np.sum(softplus(x)))(np.array([0.0, 2.0]))
array([0.5       , 0.88079708])
>>> nt.check_gradients(softplus, np.array([0.3, -1.2])) < 1e-8
True
>>> unregister(softplus)      # the registry is global: this example leaves no rule
"""
import functools
import inspect
import os
import sys

import numpy as np

from .diagnostics.user_line import PACKAGE_DIR
from .diagnostics.errors import InvalidArgumentError, NoGradientRuleError, user_facing
from .core import registry as _registry
from .core.primitive import primitive as _recordable
from .core.registry import RULES, defprimitive, restore_rule, saved_rule
from .core.signature import signature_of
from .core.arrays import shape_of

__all__ = ["primitive", "defvjp", "defjvp", "defderiv", "deflinear", "defnondiff", "defzero",
           "unregister"]

# The functions users gave rules, each with what ``unregister`` gives back: the fields
# of the built-in rule it overrode, or None for a function of the user's own.
_GIVEN_BY_USER = {}


def primitive(fn=None, *, name=None):
    """Make ``fn``, a function on plain arrays, one recorded step when given tensors.

    Called with tensors, the function runs on their values and the call is recorded
    with the rule that ``defvjp``, ``defjvp`` or ``defderiv`` give it (until then a
    gradient through it raises ``NoGradientRuleError``); called with plain values it
    is ``fn`` itself.  ``name`` is how the tape shows it (default: its ``__name__``).

    >>> import numpy as np, nbtape as nt
    >>> @primitive(name="cube")
    ... def cube(x):
    ...     return x ** 3
    >>> _ = defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = cube(x)
    >>> float(tape.gradient(y, x)), cube(2.0)
    (12.0, 8.0)
    >>> unregister(cube)
    """
    if fn is None:
        return functools.partial(primitive, name=name)
    if _dispatched(fn) or _key(fn) is not fn:
        return fn                       # numpy's own (its calls reach nbtape), or one already
    if not callable(fn):
        raise InvalidArgumentError(
            f"primitive() takes a function, not a {type(fn).__name__}; use it as a "
            "decorator (@primitive) on a function of plain arrays.")
    defprimitive(fn, name)
    _GIVEN_BY_USER.setdefault(fn, None)         # one's own: unregister forgets it
    return _recordable(fn)


def unregister(fn):
    """Undo the rules given for ``fn``: a function of one's own forgets its rule, and a
    numpy function whose built-in rule was overridden gets the built-in one back (tests
    and examples that add rules to the global registry use this to leave none behind).

    >>> import numpy as np, nbtape as nt
    >>> _ = defvjp(np.sin, lambda g, ans, x: 2 * g)        # a (wrong) override
    >>> float(nt.grad(np.sin)(0.0))
    2.0
    >>> unregister(np.sin)                                   # the built-in rule is back
    >>> float(nt.grad(np.sin)(0.0))
    1.0
    """
    key = _key(fn)
    if key not in _GIVEN_BY_USER:
        return                          # nbtape's own rule, never overridden: keep it
    saved = _GIVEN_BY_USER.pop(key)
    if saved is None:
        RULES.pop(key, None)
    else:
        restore_rule(key, saved)


@user_facing
def defvjp(fn, *vjps, name=None):
    """Give ``fn`` one VJP per argument: ``vjp(g, ans, *args, **kwargs) -> adjoint``.

    ``fn`` is a ``primitive`` or a numpy function (``None`` is skipped, so a function
    that only some numpy versions have can be written ``getattr(np, "name", None)``).
    Returns the rule.

    >>> import numpy as np, nbtape as nt
    >>> @primitive
    ... def scale(x, a):
    ...     return a * x
    >>> _ = defvjp(scale, lambda g, ans, x, a: g * a, lambda g, ans, x, a: g * x)
    >>> [float(d) for d in nt.grad(scale, argnums=(0, 1))(2.0, 3.0)]
    [3.0, 2.0]
    >>> unregister(scale)
    """
    if fn is None:
        return None
    key, vjps = _prepared(fn, vjps, "defvjp", 2, "VJP", "g, ans", _checked_vjp)
    return _with_several(fn, key, _registry.defvjp(key, *vjps, name=name))


@user_facing
def defjvp(fn, *jvps):
    """Give ``fn`` one JVP per argument: ``jvp(t, ans, *args, **kwargs) -> tangent``
    (that argument's share of the output's tangent; the shares are added).  Returns
    the rule.

    >>> import numpy as np, nbtape as nt
    >>> @primitive
    ... def scale(x, a):
    ...     return a * x
    >>> _ = defjvp(scale, lambda t, ans, x, a: t * a, lambda t, ans, x, a: t * x)
    >>> x = nt.constant(2.0)
    >>> with nt.ForwardAccumulator(x, 1.0) as acc:
    ...     y = scale(x, 3.0)
    >>> float(acc.jvp(y))
    3.0
    >>> unregister(scale)
    """
    if fn is None:
        return None
    key, jvps = _prepared(fn, jvps, "defjvp", 2, "JVP", "t, ans", _checked_jvp)
    return _with_several(fn, key, _registry.defjvp(key, *jvps))


@user_facing
def defderiv(fn, *derivs, name=None):
    """Give an elementwise ``fn`` its derivative with respect to each argument,
    ``d(ans, *args, **kwargs)``: the VJP is ``g * conj(d)``, the JVP ``t * d``.
    Returns the rule.

    >>> import numpy as np, nbtape as nt
    >>> @primitive
    ... def hypot2(x, y):
    ...     return x * x + y * y
    >>> _ = defderiv(hypot2, lambda ans, x, y: 2 * x, lambda ans, x, y: 2 * y)
    >>> [float(d) for d in nt.grad(hypot2, argnums=(0, 1))(1.0, 3.0)]
    [2.0, 6.0]
    >>> unregister(hypot2)
    """
    if fn is None:
        return None
    key, derivs = _prepared(fn, derivs, "defderiv", 1, "derivative", "ans",
                            _checked_derivative)
    return _with_several(fn, key, _registry.defderiv(key, *derivs, name=name))


@user_facing
def deflinear(fn, vjp=None):
    """``fn`` is linear in its first argument: its JVP is ``fn`` applied to the tangent
    (the other arguments as given); ``vjp(g, ans, x, *args, **kwargs)``, the adjoint,
    is its VJP.  Returns the rule.

    >>> import numpy as np, nbtape as nt
    >>> @primitive
    ... def running_sum(x):
    ...     return np.cumsum(x)
    >>> _ = deflinear(running_sum, lambda g, ans, x: np.cumsum(g[::-1])[::-1])
    >>> x = nt.constant([1.0, 2.0, 3.0])
    >>> with nt.ForwardAccumulator(x, np.array([1.0, 0.0, 0.0])) as acc:
    ...     y = running_sum(x)
    >>> acc.jvp(y).numpy(), nt.grad(lambda x: np.sum(running_sum(x)))(x.numpy())
    (array([1., 1., 1.]), array([3., 2., 1.]))
    >>> unregister(running_sum)
    """
    if fn is None:
        return None
    key, vjps = _prepared(fn, (vjp,) if vjp is not None else (), "deflinear", 2, "VJP",
                          "g, ans", _checked_vjp)
    # the JVP calls fn as the user calls it, so that on tensors it is recorded too
    return _with_several(fn, key, _registry.deflinear(key, vjps[0] if vjps else None, call=fn))


@user_facing
def defnondiff(*fns):
    """``fn``'s output is a constant (an index, a comparison): no gradient flows
    through it, and a tape records nothing for it.

    >>> import numpy as np, nbtape as nt
    >>> @primitive
    ... def count_positive(x):
    ...     return np.sum(x > 0)
    >>> defnondiff(count_positive)
    >>> x = nt.constant([1.0, -2.0])
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = np.sum(x) * count_positive(x)     # the count is a constant factor
    >>> tape.gradient(y, x).numpy()
    array([1., 1.])
    >>> unregister(count_positive)
    """
    user = _from_user()
    _registry.defnondiff(*[_target(fn, "defnondiff", user) for fn in fns if fn is not None])


@user_facing
def defzero(*fns):
    """``fn`` is piecewise constant (``floor``, ``sign``): its derivative is zero
    wherever it exists, so a gradient through it is zero, not None.

    >>> import numpy as np, nbtape as nt
    >>> @primitive
    ... def step(x):
    ...     return np.where(x > 0, 1.0, 0.0)
    >>> defzero(step)
    >>> nt.grad(lambda x: np.sum(step(x) * x))(np.array([-1.0, 2.0]))
    array([0., 1.])
    >>> unregister(step)
    """
    user = _from_user()
    _registry.defzero(*[_target(fn, "defzero", user) for fn in fns if fn is not None])


# --- what a rule is for ---------------------------------------------------------------
def _dispatched(fn):
    """True for numpy functions whose calls on tensors reach nbtape by themselves."""
    return isinstance(fn, np.ufunc) or type(fn).__name__ == "_ArrayFunctionDispatcher"


def _key(fn):
    raw = getattr(fn, "raw", None)
    return raw if raw is not None and raw in RULES else fn


def _unregistered_primitive(fn):
    """The function of a primitive of one's own whose rule ``unregister`` took, or None."""
    raw = getattr(fn, "raw", None)
    if raw is None or raw in RULES or getattr(fn, "__wrapped__", None) is not raw:
        return None
    return raw


def _target(fn, what, user):
    """The registry key of ``fn``, or a clear error when its calls never reach nbtape."""
    key = _key(fn)
    raw = _unregistered_primitive(fn) if user else None
    if raw is not None:                 # still a primitive: give it its bare rule again
        defprimitive(raw, getattr(fn, "rule_name", None))
        _GIVEN_BY_USER.setdefault(raw, None)
        return raw
    if key in RULES or _dispatched(fn) or not user:
        if user and key not in _GIVEN_BY_USER:     # the first override: keep the built-in
            r = RULES.get(key)
            built_in = r is not None and (r.has_vjp or r.has_jvp or r.nondiff or r.stop)
            _GIVEN_BY_USER[key] = saved_rule(key) if built_in else None
        return key
    name = getattr(fn, "__name__", repr(fn))
    raise InvalidArgumentError(
        f"{what}({name}, ...): nbtape never sees the calls of {name}, so a rule for it "
        f"would never be used. Make it a primitive first: put @nbtape.extend.primitive "
        f"above 'def {name}' (or write {name} = primitive({name})), then give its rule. "
        "numpy's own functions and ufuncs need no primitive.")


def _prepared(fn, rules, what, lead, kind, params, checked):
    """The registry key of ``fn`` and its ``rules``; rules given from outside nbtape are
    checked here (arity) and wrapped to check what they return (``checked``)."""
    user = _from_user(depth=3)      # the def* function's caller, past this helper
    nargs = RULES[fn].nargs if _dispatched(fn) and fn in RULES else 0
    key = _target(fn, what, user)
    if user:
        _check_arity(fn, key, rules, lead, what, kind, params)
        rules = [checked(f, fn, key, k) for k, f in enumerate(rules)]
        # an override replaces numpy's rule whole: an argument it gives no rule for
        # refuses by name (None is the user's word for "no gradient")
        rules += [_missing(fn, key, k, what, kind, len(rules)) for k in range(len(rules), nargs)]
    return key, rules


def _missing(fn, key, k, what, kind, given):
    """The rule of an argument an override of numpy's ``fn`` gave none for: it raises,
    naming the function and the argument (instead of an IndexError in the pass)."""
    name = RULES[key].name if key in RULES else getattr(fn, "__name__", repr(fn))
    arg = _arg_label(fn, key, k).rsplit(" ", 1)[-1]

    def refuse(*args, **kwargs):
        raise NoGradientRuleError(
            f"nbtape cannot differentiate {name} with respect to its argument {arg}: "
            f"{what}({getattr(fn, '__name__', name)}, ...) overrode its rule with {given} "
            f"{kind}(s), none for {arg}. Give one {kind} per argument, in order (None for "
            f"an argument with no gradient), or unregister({name}) for nbtape's own rule.")
    return refuse


def _from_user(depth=2):
    """True when the def* call came from outside nbtape (whose own rules are tested,
    not checked at run time)."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.endswith(os.sep + "errors.py") \
            and f.f_code.co_filename.startswith(PACKAGE_DIR):
        f = f.f_back                    # the @user_facing wrapper
    return f is not None and not f.f_code.co_filename.startswith(PACKAGE_DIR)


def _params(fn, key):
    """(names, number required) of ``fn``'s positional parameters, or None if unknown."""
    sig = signature_of(key)
    if not sig:
        return None
    required = 0
    for d in sig.defaults:
        if d is not inspect.Parameter.empty:
            break
        required += 1
    return sig.names, required


def _check_arity(fn, key, fns, lead, what, kind, lead_names):
    """Each rule takes ``lead`` leading arguments and then ``fn``'s own; there is at
    most one per argument."""
    params = _params(fn, key)
    name = getattr(fn, "__name__", repr(fn))
    if params is not None and len(fns) > len(params[0]) and not _takes_varargs(key):
        raise InvalidArgumentError(
            f"{what}({name}, ...) got {len(fns)} {kind}s, but {name} takes "
            f"{len(params[0])} argument(s) ({', '.join(params[0])}): give one {kind} per "
            "argument, in order (None for an argument with no gradient).")
    for k, f in enumerate(fns):
        if f is None:
            continue
        if not callable(f):
            raise InvalidArgumentError(
                f"{what}({name}, ...): {kind} number {k + 1} is a {type(f).__name__}, not a "
                f"function ({lead_names}, *args) -> value.")
        if params is None:
            continue                    # fn's parameters are unknown: nothing to compare
        need = lead + params[1]
        try:
            inspect.signature(f).bind(*range(need))
        except TypeError as e:
            args = ", ".join(params[0][:params[1]])
            raise InvalidArgumentError(
                f"{what}({name}, ...): {kind} number {k + 1} cannot be called as "
                f"f({lead_names}, {args}) ({e}). A {kind} takes {lead_names} first, then "
                f"all of {name}'s arguments, e.g. lambda {lead_names}, {args}: ...") from None
        except ValueError:
            pass                        # a signature Python cannot read: trust it


def _takes_varargs(fn):
    try:
        return any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return True                     # unknown: do not count its arguments


def _arg_label(fn, key, k):
    params = _params(fn, key)
    arg = params[0][k] if params is not None and k < len(params[0]) else f"number {k + 1}"
    return f"{getattr(fn, '__name__', repr(fn))}'s argument {arg}"


def _shape_error(what, label, got, want):
    return InvalidArgumentError(
        f"the {what} given for {label} returned a value of shape {got}, which does not "
        f"match {want}. A rule returns, for each element, the derivative there: make "
        "it broadcast to the shape given (for a reduction, reshape or spread g back over "
        "the input's shape).")


def _fits(got, shape):
    try:
        np.broadcast_shapes(got, shape)
    except ValueError:
        return False
    return True


def _within(got, shape):
    """True if a value of shape ``got`` broadcasts to ``shape``."""
    return _fits(got, shape) and np.broadcast_shapes(got, shape) == tuple(shape)


def _none_error(what, label):
    return InvalidArgumentError(
        f"the {what} given for {label} returned None (a forgotten `return`?). A {what} "
        "returns a value; for an argument with no gradient, give None in place of the "
        f"{what} itself when defining the rule.")


def _output_shape(ans):
    """The shape an adjoint of ``ans`` may broadcast to (several outputs: theirs together),
    or None when unknown."""
    if isinstance(ans, (tuple, list)):
        try:
            return np.broadcast_shapes(*[shape_of(a) for a in ans])
        except ValueError:
            return None
    return shape_of(ans)


def _checked_vjp(f, fn, key, k):
    if f is None:
        return None
    label = _arg_label(fn, key, k)

    def vjp(g, ans, *args, **kwargs):
        out = f(g, ans, *args, **kwargs)
        if out is None:
            raise _none_error("VJP", label)
        if k < len(args):
            got, want = shape_of(out), shape_of(args[k])
            # an adjoint has the argument's shape, or differs from it only by the
            # broadcasting the call did: within the output's shape, and summed back down
            # to the argument's by the engine; anything else would be summed silently
            out_shape = _output_shape(ans)
            if got != want and not (_fits(got, want) and (
                    out_shape is None or _within(got, out_shape))):
                raise _shape_error("VJP", label, got, f"the argument's shape {want}, nor "
                                   f"what broadcasting to the output's {out_shape} explains")
        return out
    return vjp


def _checked_jvp(f, fn, key, k):
    if f is None:
        return None
    label = _arg_label(fn, key, k)

    def jvp(t, ans, *args, **kwargs):
        out = f(t, ans, *args, **kwargs)
        if out is None:
            raise _none_error("JVP", label)
        several = isinstance(ans, (tuple, list))
        if several and not (isinstance(out, (tuple, list)) and len(out) == len(ans)):
            raise InvalidArgumentError(
                f"the JVP given for {label} returned a {type(out).__name__}, but the call "
                f"returned {len(ans)} arrays: return a tuple of {len(ans)} tangents, one "
                "per output.")
        for o, a in zip(out, ans) if several else [(out, ans)]:
            if o is None:
                raise _none_error("JVP", label)
            if not _within(shape_of(o), shape_of(a)):
                raise _shape_error("JVP", label, shape_of(o), f"the output's shape "
                                   f"{shape_of(a)}")
        return out
    return jvp


def _checked_derivative(d, fn, key, k):
    if d is None:
        return None
    label = _arg_label(fn, key, k)

    def derivative(ans, *args, **kwargs):
        out = d(ans, *args, **kwargs)
        if out is None:
            raise _none_error("derivative", label)
        want = shape_of(ans)
        if not _within(shape_of(out), want):
            raise _shape_error("derivative", label, shape_of(out),
                               f"the output's shape {want} (an elementwise derivative)")
        return out
    return derivative


def _with_several(fn, key, rule):
    """Give a primitive of one's own a rule for calls that return several arrays (a
    tuple), made of its per-argument ones, as HIPS autograd and JAX have it: each VJP
    gets the tuple of the outputs' adjoints, each JVP returns a tuple of tangents."""
    if _dispatched(fn) or rule is None:
        return rule                     # numpy's own functions have their own rules
    vjps, jvps = rule.vjps, rule.jvps

    def vjp_all(g, ans, args, kwargs, needs):
        return [vjps[k](g, ans, *args, **kwargs) if n and k < len(vjps) and vjps[k]
                else None for k, n in enumerate(needs)]

    def jvp_all(tangents, ans, args, kwargs):
        total = None
        for f, t in zip(jvps, tangents):
            if t is not None and f is not None:
                c = f(t, ans, *args, **kwargs)
                total = list(c) if total is None else [a + b for a, b in zip(total, c)]
        return total
    _registry.defseveral(key, vjp_all if vjps else None, jvp_all if jvps else None,
                         nargs=rule.nargs)
    return rule
