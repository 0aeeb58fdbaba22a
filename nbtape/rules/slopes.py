"""np.gradient: finite-difference slopes along each axis.

For fixed spacing the slopes are linear in ``f``: along an axis of length n they
are one n x n matrix ``D`` (numpy's own np.gradient of the identity) applied to
every line, so the VJP applies ``D^T`` and the JVP is np.gradient of the tangent.
A scalar spacing h scales the slopes by 1/h (its adjoint is -<g, slope>/h);
coordinate arrays as spacing are not differentiated (refused by name).
"""

import numpy as np

from ..diagnostics.errors import NoGradientRuleError
from ..core.registry import POSITIONAL, VARARGS, Rule, defmodes, defrule
from ..core.signature import Signature
from .util import conj, shape_of


def _axes(f, axis):
    nd = len(shape_of(f))
    if axis is None:
        return list(range(nd))
    return [a % nd for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis)]


def _spacings(varargs, n):
    if len(varargs) == 0:
        return [1.0] * n
    if len(varargs) == 1 and len(shape_of(varargs[0])) == 0:
        return [varargs[0]] * n
    return list(varargs)


def _layout(args, kw):
    f, varargs = args[0], args[1:]
    axes = _axes(f, kw.get("axis"))
    return f, axes, _spacings(varargs, len(axes)), kw.get("edge_order", 1)


def _slope_matrix(n, h, edge_order):
    return np.gradient(np.eye(n), h, axis=0, edge_order=edge_order)


def _gradient_vjp(g, ans, args, kw, needs):
    f, axes, hs, edge_order = _layout(args, kw)
    gs = list(g) if isinstance(ans, (tuple, list)) else [g]
    outs = list(ans) if isinstance(ans, (tuple, list)) else [ans]
    grads = [None] * len(args)
    if needs[0]:
        total = None
        for ax, h, gi in zip(axes, hs, gs):
            d = _slope_matrix(shape_of(f)[ax], h, edge_order)
            term = np.moveaxis(np.tensordot(np.transpose(d), gi, axes=([1], [ax])), 0, ax)
            total = term if total is None else total + term
        grads[0] = total
    for k in range(1, len(args)):
        if not needs[k]:
            continue
        if len(shape_of(args[k])) != 0:
            raise NoGradientRuleError(
                "nbtape's gradient for np.gradient does not support coordinate arrays as "
                "spacing (varargs): only a scalar spacing is differentiated. Pass scalar "
                "spacings, or compute the differences with np.diff.")
        # one scalar for every axis, or this axis's own
        idx = range(len(axes)) if len(args) == 2 else [k - 1]
        grads[k] = -sum(np.sum(np.real(conj(gs[i]) * outs[i])) for i in idx) / args[k]
    return grads


def _gradient_jvp(ts, ans, args, kw):
    f, axes, hs, edge_order = _layout(args, kw)
    several = isinstance(ans, (tuple, list))
    outs = list(ans) if several else [ans]
    total = [None] * len(outs)
    if ts[0] is not None:
        d = np.gradient(ts[0], *args[1:], **kw)
        total = list(d) if several else [d]
    for k in range(1, len(args)):
        t = ts[k]
        if t is None:
            continue
        if len(shape_of(args[k])) != 0:
            raise NoGradientRuleError(
                "nbtape's forward-mode rule for np.gradient does not support coordinate "
                "arrays as spacing (varargs): only a scalar spacing is differentiated.")
        idx = range(len(axes)) if len(args) == 2 else [k - 1]
        for i in idx:
            term = -outs[i] * t / args[k]
            total[i] = term if total[i] is None else total[i] + term
    total = [np.zeros_like(o) if t is None else t for o, t in zip(outs, total)]
    return type(ans)(total) if several else total[0]


_KEYWORD_FORM = Signature([("f", None)], keyword_only=("axis", "edge_order"))


def _mode(name, kind, multi):
    """A rule for one calling form: several axes or one (a tuple or an array), and f
    given by position (then varargs follow) or by keyword (then there are none)."""
    # np.gradient(f=x): numpy's signature has *varargs after f, so none is read from
    # np.gradient; naming f here lets the dispatcher bind it to the operand's place
    return Rule(np.gradient, name, kind=kind, multi=multi, nargs=1, vjp_all=_gradient_vjp,
                jvp_all=_gradient_jvp, signature=_KEYWORD_FORM if kind is POSITIONAL else None)


def _one_axis(args, kw):
    """np.gradient returns one array (not a tuple) for one axis."""
    f = args[0] if args else kw.get("f")
    return len(_axes(f, kw.get("axis"))) == 1


_FORMS = {(keyword, one): _mode("np.gradient", POSITIONAL if keyword else VARARGS, not one)
          for keyword in (False, True) for one in (False, True)}
defrule(np.gradient, _gradient_vjp, _gradient_jvp, kind=VARARGS, start=0, multi=True)
defmodes(np.gradient, lambda args, kw: ("f" in kw, _one_axis(args, kw)), _FORMS)
