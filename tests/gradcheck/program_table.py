"""The table of makers for every registry entry: ``makers()``.

Every entry of ``nbtape.core.registry.RULES`` that carries a gradient gets a maker,
so a rule added tomorrow is fuzzed at once (``program_makers`` derives what it can
from numpy's signatures); ``special()`` holds only what a signature cannot say (a
square matrix, an increasing ``xp``, a subscripts string, a list of operands).
"""
import numpy as np

from nbtape.core.registry import RULES
from .program_makers import (FN_DOMAINS, METHODS, _matmul_partner, _maybe_tensor, _sig_of,
                            any_shape, array_fn, gufunc, make_square, nd, operator,
                            same_shape, solve_rhs, square, two_arrays, ufunc, ufunc_method)
from .programs import Call, Const, Lit, Seq, broadcast_partner


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


def tensorsolve(b):
    """``a`` of shape ``b.shape + Q`` with ``prod(Q) == b.size``."""
    bs = b.ch.pick([(2,), (3,), (2, 2)])
    a = b.operand(ok=lambda s: s == bs + (int(np.prod(bs)),),
                  make=lambda c: bs + (int(np.prod(bs)),))
    rhs = b.const(bs) if b.ch.flag(0.5) else b.operand(ok=lambda s: s == bs,
                                                       make=lambda c: bs)
    return b.call(np.linalg.tensorsolve, "np.linalg.tensorsolve", [("a", a), ("b", rhs)])


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
    # on the spd domain: well conditioned, so differences of the condition number are steady
    out["np.linalg.cond"] = array_fn(linalg.cond, "np.linalg.cond", dom="spd", extra={
        "p": lambda b, s, c: Lit(b.ch.pick([None, 2, -2, "fro", "nuc", 1, -1, np.inf]))}, **sq)
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
    out["np.linalg.tensorsolve"] = tensorsolve
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


def makers():
    """{name: maker} for every registry entry that can carry a gradient."""
    table = special()
    out = {"op" + op: operator(op) for op in ("+", "-", "*", "/", "**", "@", "neg", "abs")}
    for fn, rule in list(RULES.items()):
        if rule.nondiff or rule.stop or rule.name in out or rule.name.startswith("scipy."):
            continue            # (scipy.special's: tests/test_rules_scipy_special.py)
        name = rule.name
        if name in table:
            out[name] = table[name]
        elif isinstance(fn, np.ufunc):
            if fn.nin in (1, 2) and not fn.signature:
                out[name] = ufunc(fn, name)
            elif fn is np.matmul:
                out[name] = two_arrays(fn, name, _matmul_partner)
            else:
                out[name] = gufunc(fn, name)
        elif isinstance(fn, tuple):
            out[name] = ufunc_method(fn, name)
        elif name.startswith("np."):       # anything else: numpy's signature says enough
            ok = nd(1) if name.startswith("np.fft.") else None
            out[name] = array_fn(fn, name, ok=ok, dom=FN_DOMAINS.get(name),
                                 method=METHODS.get(name))
    return out
