"""Generic makers: how to call a function of the rule registry in a random program.

A maker takes a ``programs.Builder`` and returns a ``Call``.  Ufuncs, ufunc methods
and functions whose arguments numpy's own signature explains need nothing but the
makers here: optional parameters are filled from ``OPTIONAL`` (by parameter name),
and the parameters a rule differentiates get operands.  ``program_table`` holds the
few functions a signature cannot describe, and ``makers()``.
"""
import inspect

import numpy as np

from nbtape.core.registry import RULES
from .programs import Call, Const, Lit, Reject, broadcast_partner, random_shape

P = inspect.Parameter


def _sig(*names, pos_only=0):
    return inspect.Signature([P(n, P.POSITIONAL_ONLY if k < pos_only else
                                P.POSITIONAL_OR_KEYWORD) for k, n in enumerate(names)])


REDUCE_SIG = _sig("array", "axis", "dtype", "out", "keepdims", "initial", "where")
ACCUMULATE_SIG = _sig("array", "axis", "dtype", "out")

# Domains of the ufuncs whose inputs numpy would reject or make nan (per operand).
UFUNC_DOMAINS = {"log": ("pos",), "log2": ("pos",), "log10": ("pos",), "sqrt": ("pos",),
                 "log1p": ("pos",), "arccosh": ("gt1",), "arcsin": ("unit",),
                 "arccos": ("unit",), "arctanh": ("unit",), "power": ("pos", None),
                 "float_power": ("pos", None), "reciprocal": ("pos",),
                 "divide": (None, "pos"), "remainder": (None, "pos"), "fmod": (None, "pos"),
                 "divmod": (None, "pos")}
FN_DOMAINS = {"np.emath.log": "pos", "np.emath.log2": "pos", "np.emath.log10": "pos",
              "np.emath.sqrt": "pos", "np.emath.arcsin": "unit", "np.emath.arccos": "unit",
              "np.emath.arctanh": "unit", "np.emath.logn": "gt1", "np.emath.power": "pos",
              "np.linalg.cholesky": "spd", "np.linalg.eigh": "spd", "np.linalg.eigvalsh": "spd"}


def nd(lo, hi=9):
    return lambda s: lo <= len(s) <= hi


def square(s):
    return len(s) >= 2 and s[-1] == s[-2]


def make_square(ch):
    n = 1 + ch.below(3)
    return (2,) * ch.below(2) + (n, n)


def _axis_of(chosen, default=-1):
    a = chosen.get("axis")
    return a.v if isinstance(a, Lit) else default


def _edge_shape(shape, chosen, default=-1):
    ax = _axis_of(chosen, default)
    if ax is None or not shape:
        raise Reject("axis")
    s = list(shape)
    s[ax] = 1
    return tuple(s)


def _mask(b, shape):
    if b.ch.flag(0.3):
        return Lit(True)
    m = np.random.default_rng(b.ch.below(1000)).random(broadcast_partner(b.ch, shape)) < 0.7
    return Const(m)


def _maybe_tensor(b, shape, dom=None):
    return b.const(shape, dom) if b.ch.flag(0.5) else \
        b.operand(ok=lambda s: s == shape, make=lambda c: shape, dom=dom)


def _q(b, shape, chosen):
    if b.ch.flag(0.3):
        return Lit(0.3)
    return _maybe_tensor(b, () if b.ch.flag(0.5) else (2,), "q")


def _weights(b, shape, chosen):
    ax = _axis_of(chosen, None)
    return _maybe_tensor(b, shape if ax is None or b.ch.flag(0.5) else (shape[ax],), "pos")


# Optional parameters, by name: (builder, operand shape, {name: chosen so far}) -> operand.
OPTIONAL = {
    "axis": lambda b, s, c: Lit(b.axis(s)),
    "keepdims": lambda b, s, c: Lit(b.ch.flag()),
    "ddof": lambda b, s, c: Lit(b.ch.below(2)),
    "initial": lambda b, s, c: b.small(),
    "where": lambda b, s, c: _mask(b, s),
    "prepend": lambda b, s, c: b.small() if b.ch.flag(0.3) else
    _maybe_tensor(b, _edge_shape(s, c)),
    "append": lambda b, s, c: b.small() if b.ch.flag(0.3) else
    _maybe_tensor(b, _edge_shape(s, c)),
    "n": lambda b, s, c: Lit(1 + b.ch.below(2)),
    "q": _q,
    "weights": _weights,
    "decimals": lambda b, s, c: Lit(b.ch.below(2)),
    "offset": lambda b, s, c: Lit(b.ch.below(3) - 1),
    "k": lambda b, s, c: Lit(b.ch.below(3) - 1),
    "to_end": lambda b, s, c: b.small((b.ch.below(3),)),
    "to_begin": lambda b, s, c: b.small(),
    "nan": lambda b, s, c: b.small(),
    "posinf": lambda b, s, c: b.small(),
    "neginf": lambda b, s, c: b.small(),
    "left": lambda b, s, c: b.small(),
    "right": lambda b, s, c: b.small(),
    "fill_value": lambda b, s, c: b.small(),
    "deg": lambda b, s, c: Lit(b.ch.flag()),
    "norm": lambda b, s, c: Lit(b.ch.pick([None, "ortho", "forward", "backward"])),
    "include_initial": lambda b, s, c: Lit(b.ch.flag()),
    "returned": lambda b, s, c: Lit(b.ch.flag()),
    "mean": lambda b, s, c: Call(np.mean, "np.mean", [b.operand(ok=lambda t: t == s)],
                                 {"axis": c.get("axis", Lit(None)), "keepdims": Lit(True)}),
    "shift": lambda b, s, c: Lit(b.ch.below(5) - 2),
    "upper": lambda b, s, c: Lit(b.ch.flag()),
    "UPLO": lambda b, s, c: Lit(b.ch.pick(["L", "U"])),
    "full_matrices": lambda b, s, c: Lit(b.ch.flag()),
    "compute_uv": lambda b, s, c: Lit(not b.ch.flag(0.3)),
    "rowvar": lambda b, s, c: Lit(not b.ch.flag(0.3)),
    "bias": lambda b, s, c: Lit(b.ch.flag()),
    "dx": lambda b, s, c: Lit(0.5),
}


def array_fn(fn, name, ok=None, make=None, dom=None, extra=None, method=None, skip=(),
             real=False):
    """A function of an array operand (its first parameter), optional parameters, and,
    where the rule says more parameters carry gradients, operands that broadcast with it."""
    sig = _sig_of(fn)
    rule = RULES.get(fn)
    names = list(sig.parameters) if sig else []
    if rule is not None and hasattr(rule, "differentiated"):
        operands = set(rule.differentiated())     # numpy's names of the operands
    else:
        operands = set(names[:rule.nargs if rule is not None else 1])
    operands.discard("out")

    def maker(b):
        x = b.operand(ok=ok, make=make, dom=dom, real=real)
        shape = np.shape(b.value(x))
        names = list(sig.parameters) if sig else [None]
        first = names[0] if sig and sig.parameters[names[0]].kind is not P.VAR_POSITIONAL \
            else None
        params, chosen = [(first, x)], {}
        for k, pname in enumerate(names[1:], 1):
            mk = (extra or {}).get(pname) or OPTIONAL.get(pname)
            required = sig.parameters[pname].default is P.empty
            if mk is None and pname in operands:
                mk = lambda b, s, c: b.other(s)      # noqa: E731
            if mk is None or pname in skip or not (required or b.ch.flag(0.5)):
                continue
            chosen[pname] = mk(b, shape, chosen)
            params.append((pname, chosen[pname]))
        if method and b.ch.flag(0.2):     # x.sum(...) rather than np.sum(x, ...)
            return Call(method, name, [x], dict(params[1:]), how="method")
        return b.call(fn, name, params)
    return maker


def _sig_of(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def ufunc(u, name):
    doms = UFUNC_DOMAINS.get(u.__name__, ())

    def maker(b):
        d = list(doms) + [None] * 2
        x = b.operand(dom=d[0])
        args = [x]
        if u.nin == 2:
            shape = np.shape(b.value(x))
            y = Const(np.array([1, 2, 0])[: (shape or (1,))[-1]]) if u.__name__ == "ldexp" \
                else b.other(shape, dom=d[1])
            args = [y, x] if b.ch.flag(0.3) and d[0] is None else [x, y]
        kwargs = {"where": Lit(True)} if b.ch.flag(0.05) else {}
        return Call(u, name, args, kwargs)
    return maker


def gufunc(u, name):
    """A generalized ufunc (``np.vecdot``: ``(n),(n)->()``): operands with core shapes
    from its signature, sizes drawn once per letter, and a broadcast batch axis."""
    cores = [c.strip("()") for c in u.signature.split("->")[0].split("),(")]

    def maker(b):
        sizes, batch = {}, (2,) if b.ch.flag(0.3) else ()
        shapes = []
        for c in cores:
            dims = [d.rstrip("?") for d in c.split(",") if d]
            shapes.append(batch + tuple(sizes.setdefault(d, 1 + b.ch.below(3)) for d in dims))
        ops = [b.operand(ok=lambda s, w=shapes[0]: s == w, make=lambda c, w=shapes[0]: w)]
        ops += [b.const(w) if b.ch.flag(0.4) else
                b.operand(ok=lambda s, w=w: s == w, make=lambda c, w=w: w) for w in shapes[1:]]
        return Call(u, name, ops)
    return maker


def operator(op):
    def maker(b):
        if op in ("neg", "abs"):
            return Call(op, op, [b.operand()], how="op")
        x = b.operand(dom="pos" if op == "**" else None)
        shape = np.shape(b.value(x))
        if op == "@":
            return Call(op, op, [x, _matmul_partner(b, shape)], how="op")
        y = b.other(shape, dom="pos" if op == "/" else None)
        if op not in ("**", "/") and b.ch.flag(0.4):
            x, y = y, x
        return Call(op, op, [x, y], how="op")
    return maker


def _matmul_partner(b, shape):
    if not shape:
        raise Reject("matmul of a scalar")
    k = shape[-1]
    want = (k,) if b.ch.flag(0.3) else (k, 1 + b.ch.below(3))
    if b.ch.flag(0.4):
        return b.const(want)
    return b.operand(ok=lambda s: len(s) in (1, 2) and s[0] == k, make=lambda c: want)


def two_arrays(fn, name, partner, ok=nd(1)):
    """``fn(a, b)`` where ``partner(builder, a's shape)`` gives b."""
    def maker(b):
        x = b.operand(ok=ok)
        y = partner(b, np.shape(b.value(x)))
        names = [p for p in (_sig_of(fn) or inspect.Signature()).parameters][:2] or [None, None]
        params = list(zip(names, [x, y]))
        return b.call(fn, name, params)
    return maker


def same_shape(b, shape):
    return b.const(shape) if b.ch.flag(0.4) else \
        b.operand(ok=lambda s: s == shape, make=lambda c: shape)


def any_shape(b, shape):
    return b.const(random_shape(b.ch, lo=1, hi=2)) if b.ch.flag(0.5) else b.operand(ok=nd(1))


def solve_rhs(b, shape):
    n = shape[-1]
    want = (n,) if b.ch.flag(0.5) else (n, 1 + b.ch.below(2))
    return b.const(want) if b.ch.flag(0.4) else \
        b.operand(ok=lambda s: s == want, make=lambda c: want)


METHODS = {"np.sum": "sum", "np.mean": "mean", "np.prod": "prod", "np.max": "max",
           "np.min": "min", "np.std": "std", "np.var": "var", "np.cumsum": "cumsum",
           "np.cumprod": "cumprod"}


def ufunc_method(key, name):
    u, method = key
    if method == "outer":
        return lambda b: Call(u.outer, name, [b.operand(), b.other((), scalar=False)])
    sig = REDUCE_SIG if method == "reduce" else ACCUMULATE_SIG

    def maker(b):
        x = b.operand(ok=nd(1))
        shape = np.shape(b.value(x))
        params = [("array", x)]
        for pname in list(sig.parameters)[1:]:
            mk = OPTIONAL.get(pname)
            if mk is not None and b.ch.flag(0.4):
                params.append((pname, mk(b, shape, dict(params))))
        return b.call(getattr(u, method), name, params, sig=sig)
    return maker
