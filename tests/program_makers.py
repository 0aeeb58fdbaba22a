"""How to call each function of the rule registry in a random program.

``makers()`` gives one maker per entry of ``nbtape.rules.registry.RULES`` that carries
a gradient, so a rule added tomorrow is fuzzed at once: ufuncs, ufunc methods and
functions whose arguments numpy's own signature explains need nothing here (optional
parameters are filled from ``OPTIONAL``, by parameter name); the table ``SPECIAL``
holds only what a signature cannot say (a square matrix, an increasing ``xp``, a
subscripts string).  A maker takes a ``programs.Builder`` and returns a ``Call``.
"""
import inspect

import numpy as np

from nbtape.rules.registry import RULES
from programs import Call, Const, Lit, Reject, Seq, broadcast_partner, random_shape

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


def _q(b, shape, chosen, scale=1.0):
    dom = "q" if scale == 1.0 else "pct"
    if b.ch.flag(0.3):
        return Lit(0.3 * scale)
    return _maybe_tensor(b, () if b.ch.flag(0.5) else (2,), dom)


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


def two_arrays(fn, name, partner, ok=nd(1), swap=False):
    """``fn(a, b)`` where ``partner(builder, a's shape)`` gives b."""
    def maker(b):
        x = b.operand(ok=ok)
        y = partner(b, np.shape(b.value(x)))
        names = [p for p in (_sig_of(fn) or inspect.Signature()).parameters][:2] or [None, None]
        params = list(zip(names, [y, x] if swap and b.ch.flag(0.5) else [x, y]))
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


def sequence(fn, name, axis=True, same=True):
    """``fn([a, b, ...], axis=...)`` for the stacking functions."""
    def maker(b):
        x = b.operand(ok=nd(1) if name != "np.stack" else None)
        shape = np.shape(b.value(x))
        items = [x]
        for _ in range(b.ch.below(3)):
            items.append(same_shape(b, shape) if same else b.const(shape))
        if b.ch.flag(0.3):
            items = items[::-1]
        params = [(next(iter(_sig_of(fn).parameters)), Seq(items, tup=b.ch.flag(0.3)))]
        if axis and b.ch.flag(0.5):
            params.append(("axis", Lit(b.axis(shape + (1,) if name == "np.stack" else shape,
                                              none=False))))
        return b.call(fn, name, params)
    return maker


def einsum(b):
    specs = {1: ["i->i", "i->", "ij->ji", "ij->i", "ii->i", "ii->", "ijk->kj"],
             2: ["i,i->", "i,j->ij", "ij,j->i", "ij,jk->ik", "ij,ij->j"]}
    spec = b.ch.pick(specs[1 + b.ch.below(2)])
    ins = spec.split("->")[0].split(",")
    sizes = {c: 1 + b.ch.below(3) for c in "ijk"}
    if "ii" in spec:
        sizes["j"] = sizes["i"]
    ops = []
    for term in ins:
        shape = tuple(sizes[c] for c in term) if "ii" not in term else (sizes["i"],) * 2
        ops.append(b.operand(ok=lambda s, w=shape: s == w, make=lambda c, w=shape: w)
                   if not ops or b.ch.flag(0.5) else b.const(shape))
    return Call(np.einsum, "np.einsum", [Lit(spec)] + ops)


def getitem(b):
    x = b.operand(ok=nd(1))
    shape = np.shape(b.value(x))
    ch = b.ch
    kind = ch.below(5)
    if kind == 0:
        idx = ch.below(shape[0]) - (shape[0] if ch.flag() else 0)
    elif kind == 1:
        idx = slice(ch.below(2) or None, None, ch.pick([None, 2, -1]))
    elif kind == 2:
        idx = (Ellipsis, None, ch.below(shape[-1]))
    elif kind == 3:
        idx = np.array([ch.below(shape[0]) for _ in range(1 + ch.below(3))])
    else:
        idx = np.random.default_rng(ch.below(1000)).random(shape) < 0.6
    return Call("getitem", "getitem", [x, Lit(idx)], how="getitem")


def astype(b):
    x = b.operand()
    dt = Lit(np.complex128 if b.ch.flag(0.3) else np.float64)
    if b.ch.flag(0.5) and hasattr(np, "astype"):
        return b.call(np.astype, "np.astype", [("x", x), ("dtype", dt)])
    return Call("astype", "astype", [x, dt], how="method")


def where(b):
    x = b.operand()
    shape = np.shape(b.value(x))
    cond = Call(np.greater, "np.greater", [x, Lit(0.1)]) if b.ch.flag(0.5) else \
        Const(np.random.default_rng(b.ch.below(1000)).random(broadcast_partner(b.ch, shape))
              > 0.5)
    y = b.other(shape)
    return Call(np.where, "np.where", [cond] + ([x, y] if b.ch.flag() else [y, x]))


def partition(b):
    x = b.operand(ok=nd(1))
    shape = np.shape(b.value(x))
    params = [("a", x), ("kth", Lit(b.ch.below(shape[-1])))]
    if b.ch.flag(0.3):
        params.append(("axis", Lit(-1)))
    return b.call(np.partition, "np.partition", params)


def choose(b):
    x = b.operand()
    shape = np.shape(b.value(x))
    n = 2 + b.ch.below(2)
    idx = Const(np.random.default_rng(b.ch.below(1000)).integers(0, n, shape))
    items = [x] + [same_shape(b, shape) for _ in range(n - 1)]
    return b.call(np.choose, "np.choose", [("a", idx), ("choices", Seq(items))])


def select(b):
    x = b.operand()
    shape = np.shape(b.value(x))
    rng = np.random.default_rng(b.ch.below(1000))
    conds = Seq([Const(rng.random(shape) < 0.5) for _ in range(2)])
    params = [("condlist", conds), ("choicelist", Seq([x, b.other(shape, scalar=False)]))]
    if b.ch.flag(0.4):
        params.append(("default", b.small()))
    return b.call(np.select, "np.select", params)


def clip(b):
    x = b.operand()
    shape = np.shape(b.value(x))
    lo = Lit(-0.5) if b.ch.flag(0.4) else b.other(shape, scalar=False)
    hi = Lit(None) if b.ch.flag(0.2) else Lit(0.75)
    if b.ch.flag(0.4):
        return b.call(np.clip, "np.clip", [("a", x), ("min", lo), ("max", hi)])
    return b.call(np.clip, "np.clip", [("a", x), ("a_min", lo), ("a_max", hi)])


def interp(b):
    n = 2 + b.ch.below(3)
    xp = Const(np.sort(np.random.default_rng(b.ch.below(1000)).uniform(-2, 2, n)))
    x = b.operand()
    fp = _maybe_tensor(b, (n,))
    params = [("x", x), ("xp", xp), ("fp", fp)]
    for k in ("left", "right"):
        if b.ch.flag(0.3):
            params.append((k, b.small()))
    return b.call(np.interp, "np.interp", params)


def shape_fn(fn, name, arg, ok=nd(1)):
    """``fn(x, <arg(builder, shape)>)`` for the reshaping functions."""
    def maker(b):
        x = b.operand(ok=ok)
        shape = np.shape(b.value(x))
        names = list(_sig_of(fn).parameters)
        params = [(names[0], x)]
        for pname, val in zip(names[1:], arg(b, shape)):
            params.append((pname, val))
        return b.call(fn, name, params)
    return maker


def _perm(b, shape):
    p = list(range(len(shape)))
    np.random.default_rng(b.ch.below(100)).shuffle(p)
    return [Lit(tuple(p))]


def _pad(b, shape):
    mode = b.ch.pick(["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp",
                      "mean", "maximum", "minimum", "median"])
    return [Lit(b.ch.below(2) + 1), Lit(mode)]


def pad(b):
    x = b.operand(ok=nd(1))
    out = b.call(np.pad, "np.pad", [("array", x)] + list(zip(("pad_width", "mode"),
                                                             _pad(b, np.shape(b.value(x))))))
    if out.kwargs.get("mode", out.args[-1] if len(out.args) > 2 else None) is not None:
        mode = (out.kwargs.get("mode") or out.args[2]).v
        if mode == "constant" and b.ch.flag(0.5):
            out.kwargs["constant_values"] = b.small()
        if mode in ("reflect", "symmetric") and b.ch.flag(0.3):
            out.kwargs["reflect_type"] = Lit("odd")
    return out


def split(fn, name, ok=nd(1)):
    def maker(b):
        x = b.operand(ok=ok)
        params = [("ary", x), ("indices_or_sections", Lit(b.ch.pick([1, 2, [1], [1, 2]])))]
        if name in ("np.split", "np.array_split") and b.ch.flag(0.4):
            params.append(("axis", Lit(b.axis(np.shape(b.value(x)), none=False))))
        return b.call(fn, name, params)
    return maker


def _first_name(fn):
    return next(iter(_sig_of(fn).parameters))


def special():
    """Makers for functions whose arguments a signature cannot describe."""
    linalg = np.linalg
    two = {  # name: (fn, ok for a, partner)
        "np.dot": (np.dot, nd(1, 2), lambda b, s: _matmul_partner(b, s)),
        "np.inner": (np.inner, nd(1), lambda b, s: b.const(s[-1:]) if b.ch.flag() else
                     b.operand(ok=lambda t: t[-1:] == s[-1:], make=lambda c: s[-1:])),
        "np.vdot": (np.vdot, nd(1), same_shape),
        "np.kron": (np.kron, nd(1, 2), any_shape),
        "np.outer": (np.outer, nd(0), any_shape),
        "np.linalg.outer": (getattr(linalg, "outer", None), nd(1, 1),
                            lambda b, s: b.operand(ok=nd(1, 1))),
        "np.linalg.matmul": (getattr(linalg, "matmul", None), nd(1, 2), _matmul_partner),
        "np.linalg.vecdot": (getattr(linalg, "vecdot", None), nd(1), same_shape),
        "np.tensordot": (np.tensordot, nd(2), same_shape),
        "np.linalg.tensordot": (getattr(linalg, "tensordot", None), nd(2), same_shape),
        "np.linalg.solve": (linalg.solve, lambda s: len(s) == 2 and square(s), solve_rhs),
        "np.append": (np.append, nd(0), any_shape),
        "np.cov": (np.cov, nd(1, 2), same_shape),
        "np.corrcoef": (np.corrcoef, nd(1, 2), same_shape),
        "np.linalg.lstsq": (getattr(linalg, "lstsq", None), nd(2, 2),
                            lambda b, s: b.const(s[:1])),
    }
    out = {n: two_arrays(f, n, p, ok) for n, (f, ok, p) in two.items() if f is not None}
    sq = {"ok": square, "make": make_square}
    # Eigen- and singular vectors are defined up to a phase (a sign for real ones, which
    # is locally constant): only real matrices, and only eig's eigenvalues, have a
    # derivative finite differences can check.
    for n in ("inv", "det", "slogdet", "pinv", "eigvals", "matrix_power"):
        f = getattr(linalg, n, None)
        if f is not None:
            out["np.linalg." + n] = array_fn(
                f, "np.linalg." + n, extra={"n": lambda b, s, c: Lit(b.ch.below(4) - 1)}, **sq)
    if hasattr(linalg, "eig"):
        eig = array_fn(linalg.eig, "np.linalg.eig", real=True, **sq)
        out["np.linalg.eig"] = lambda b: Call("getitem", "getitem", [eig(b), Lit(0)],
                                              how="getitem")
    for n in ("cholesky", "eigh", "eigvalsh"):
        out["np.linalg." + n] = array_fn(getattr(linalg, n), "np.linalg." + n, dom="spd",
                                         real=n == "eigh", **sq)
    for n in ("svd", "svdvals", "qr", "matrix_norm"):
        f = getattr(linalg, n, None)
        if f is not None:
            out["np.linalg." + n] = array_fn(
                f, "np.linalg." + n, ok=nd(2, 3), real=n == "svd", extra={
                    "mode": lambda b, s, c: Lit(b.ch.pick(["reduced", "complete", "r"])),
                    "ord": lambda b, s, c: Lit(b.ch.pick(["fro", "nuc", 1, 2, -1, np.inf]))})
    out["np.linalg.norm"] = array_fn(linalg.norm, "np.linalg.norm", extra={
        "ord": lambda b, s, c: Lit(b.ch.pick([None, 1, 2, np.inf] + (["fro"] if len(s) == 2
                                                                         else [])))})
    out["np.linalg.vector_norm"] = array_fn(linalg.vector_norm, "np.linalg.vector_norm", extra={
        "ord": lambda b, s, c: Lit(b.ch.pick([2, 1, 3, np.inf, -np.inf]))})
    out["np.linalg.multi_dot"] = lambda b: Call(linalg.multi_dot, "np.linalg.multi_dot", [
        Seq([b.operand(ok=lambda s: s == (2, 3), make=lambda c: (2, 3)), b.const((3, 2)),
             b.operand(ok=lambda s: s == (2,), make=lambda c: (2,))])])
    for n in ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"):
        out["np." + n] = sequence(getattr(np, n), "np." + n,
                                  axis=n in ("concatenate", "stack"))
    for n in ("split", "array_split", "hsplit", "vsplit", "dsplit"):
        out["np." + n] = split(getattr(np, n), "np." + n, ok=nd({"vsplit": 2, "dsplit": 3}
                                                                .get(n, 1)))
    out["np.broadcast_arrays"] = lambda b: Call(np.broadcast_arrays, "np.broadcast_arrays", [
        b.operand(), b.other((), scalar=False)])
    out["np.einsum"] = einsum
    out["getitem"] = getitem
    out["astype"] = out["np.astype"] = astype
    out["np.partition"] = partition
    out["np.choose"] = choose
    out["np.select"] = select
    out["np.where"] = where
    out["np.clip"] = clip
    out["np.interp"] = interp
    out["np.pad"] = pad
    shapes = {
        "np.transpose": (np.transpose, _perm, nd(0)),
        "np.reshape": (np.reshape, lambda b, s: [Lit(b.ch.pick([(-1,), (1, -1), (-1, 1)]))],
                       nd(0)),
        "np.broadcast_to": (np.broadcast_to, lambda b, s: [Lit((2,) + s)], nd(0)),
        "np.tile": (np.tile, lambda b, s: [Lit(b.ch.pick([2, (2, 1), (1, 1, 2)]))], nd(0)),
        "np.repeat": (np.repeat, lambda b, s: [Lit(2), Lit(b.axis(s))], nd(0)),
        "np.swapaxes": (np.swapaxes, lambda b, s: [Lit(0), Lit(-1)], nd(1)),
        "np.moveaxis": (np.moveaxis, lambda b, s: [Lit(0), Lit(-1)], nd(1)),
        "np.rollaxis": (np.rollaxis, lambda b, s: [Lit(-1), Lit(0)], nd(1)),
        "np.expand_dims": (np.expand_dims, lambda b, s: [Lit(b.ch.below(len(s) + 1))], nd(0)),
        "np.squeeze": (np.squeeze, lambda b, s: [Lit(None if 1 not in s else s.index(1))],
                       nd(0)),
        "np.rot90": (np.rot90, lambda b, s: [Lit(b.ch.below(4))], nd(2)),
        "np.roll": (np.roll, lambda b, s: [Lit(b.ch.below(3) - 1), Lit(b.axis(s))], nd(0)),
        "np.take": (np.take, lambda b, s: [Lit(b.ch.pick([0, [0, -1], [[0], [0]]])),
                                           Lit(b.axis(s))], nd(1)),
        "np.take_along_axis": (np.take_along_axis, lambda b, s: [
            Const(np.zeros((1,) * len(s), int)), Lit(-1)], nd(1)),
        "np.delete": (np.delete, lambda b, s: [Lit(0), Lit(b.axis(s))], nd(1)),
        "np.compress": (None, None, None),
        "np.extract": (None, None, None),
    }
    for n, (f, arg, ok) in shapes.items():
        if f is not None:
            out[n] = shape_fn(f, n, arg, ok)
    out["np.compress"] = lambda b: b.call(np.compress, "np.compress", [
        ("condition", Lit([True, False])), ("a", b.operand(ok=nd(1))), ("axis", Lit(0))])
    out["np.extract"] = lambda b: (lambda x: b.call(np.extract, "np.extract", [
        ("condition", Const(np.arange(np.size(b.value(x))).reshape(np.shape(b.value(x))) % 2
                            == 0)), ("arr", x)]))(b.operand())
    for n in ("fliplr", "rot90", "diagonal", "trace", "matrix_transpose", "triu", "tril"):
        if "np." + n not in out and hasattr(np, n):
            out["np." + n] = array_fn(getattr(np, n), "np." + n, ok=nd(2))
    for n in ("diagonal", "trace", "matrix_transpose"):
        f = getattr(linalg, n, None)
        if f is not None:
            out["np.linalg." + n] = array_fn(f, "np.linalg." + n, ok=nd(2))
    out["np.diag"] = array_fn(np.diag, "np.diag", ok=nd(1, 2))
    out["np.diagflat"] = array_fn(np.diagflat, "np.diagflat", ok=nd(1))
    out["np.trapezoid"] = array_fn(np.trapezoid, "np.trapezoid", ok=nd(1), extra={
        "x": lambda b, s, c: _maybe_tensor(b, s[-1:])})
    out["np.average"] = array_fn(np.average, "np.average", ok=nd(1))
    for n in ("rfft", "rfft2", "rfftn", "ihfft"):
        f = getattr(np.fft, n)
        out["np.fft." + n] = array_fn(f, "np.fft." + n, ok=nd(1 if "2" not in n else 2),
                                      skip=("s", "axes"))
    return out


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


def makers():
    """{name: maker} for every registry entry that can carry a gradient."""
    table = special()
    out = {"op" + op: operator(op) for op in ("+", "-", "*", "/", "**", "@", "neg", "abs")}
    for fn, rule in list(RULES.items()):
        if rule.nondiff or rule.stop or rule.name in out:
            continue
        name = rule.name
        if name in table:
            out[name] = table[name]
        elif isinstance(fn, np.ufunc):
            if fn.nin in (1, 2) and not fn.signature:
                out[name] = ufunc(fn, name)
            elif fn is np.matmul:
                out[name] = two_arrays(fn, name, _matmul_partner)
        elif isinstance(fn, tuple):
            out[name] = ufunc_method(fn, name)
        elif name.startswith("np."):       # anything else: numpy's signature says enough
            ok = nd(1) if name.startswith("np.fft.") else None
            out[name] = array_fn(fn, name, ok=ok, dom=FN_DOMAINS.get(name),
                                 method=METHODS.get(name))
    return out
