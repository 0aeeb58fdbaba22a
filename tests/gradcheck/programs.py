"""Random short numpy programs on tensors: build, run, render (for test_random_programs).

A program is a list of calls.  Each call takes its operands from a pool that holds the
program's inputs and every earlier result, so calls chain; an operand can also be a
plain-array constant or a Python scalar, passed positionally or by keyword wherever
numpy's signature allows it.  Every random decision goes through a ``Chooser`` (a
list of small integers, 0 being the simplest choice), so a program is replayed from
its choices and shrunk by shrinking them.  Programs are built against numpy itself:
a call that numpy rejects on plain arrays (or that warns, or gives a non-finite
value) is dropped and another is drawn, so every program is one numpy runs cleanly.
"""
import copy
import inspect
import warnings

import numpy as np

SIMPLE_FLOATS = (0.5, 2.0, -1.5, 3, 1j, 0.5 + 2j)   # Python scalars mixed into programs


class Reject(Exception):
    """The drawn call does not fit (numpy rejects it, or no operand fits)."""


class Chooser:
    """Small integers from a seeded generator, or replayed from a recorded prefix."""

    def __init__(self, seed=None, prefix=None):
        self.rng = None if seed is None else np.random.default_rng(seed)
        self.prefix = list(prefix or ())
        self.log = []

    def below(self, n):
        if n <= 0:
            raise Reject("nothing to choose from")
        k = len(self.log)
        if k < len(self.prefix):
            v = self.prefix[k]
            v = v if v < n else v % n
        elif self.rng is not None:
            v = int(self.rng.integers(n))
        else:
            v = 0
        self.log.append(v)
        return v

    def flag(self, p=0.5):
        """True with probability p (0, the simplest choice, is False)."""
        return self.below(100) >= 100 - int(100 * p)

    def pick(self, seq):
        return seq[self.below(len(seq))]


# ---- operands -------------------------------------------------------------------------------
class Ref:
    """Pool entry ``i`` (an input or an earlier result), optionally moved into a domain."""
    def __init__(self, i, dom=None):
        self.i, self.dom = i, dom


class Const:
    """A plain numpy array written into the program."""
    def __init__(self, a):
        self.a = a


class Lit:
    """A Python literal: a scalar, a tuple, a string, None, True..."""
    def __init__(self, v):
        self.v = v


class Seq:
    """A list (or tuple) of operands, for ``np.stack([...])`` and friends."""
    def __init__(self, items, tup=False):
        self.items, self.tup = items, tup


class Call:
    """``fn(*args, **kwargs)``; ``how`` is "fn", "method" (on args[0]), "op" or "getitem"."""
    def __init__(self, fn, name, args, kwargs=None, how="fn"):
        self.fn, self.name, self.args, self.kwargs, self.how = fn, name, list(args), \
            dict(kwargs or {}), how


# Moves an operand into a function's domain, with recorded ops (so they are tested too).
DOMAINS = {
    "pos": (lambda x: x * x + 0.5, "({0} * {0} + 0.5)"),
    "gt1": (lambda x: x * x + 1.25, "({0} * {0} + 1.25)"),
    "unit": (lambda x: np.sin(x) * 0.75, "(np.sin({0}) * 0.75)"),
    "q": (lambda x: np.sin(x) * 0.4 + 0.5, "(np.sin({0}) * 0.4 + 0.5)"),
    "spd": (lambda x: x @ np.swapaxes(x, -1, -2) + 3.0 * np.eye(x.shape[-1]),
            "({0} @ np.swapaxes({0}, -1, -2) + 3.0 * np.eye({0}.shape[-1]))"),
}

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "/": lambda a, b: a / b, "**": lambda a, b: a ** b, "@": lambda a, b: a @ b,
       "neg": lambda a: -a, "abs": lambda a: abs(a)}


def evaluate(arg, env):
    """The value of an operand or call, with pool values ``env``."""
    t = type(arg)
    if t is Ref:
        v = env[arg.i]
        return DOMAINS[arg.dom][0](v) if arg.dom else v
    if t is Const:
        return arg.a.copy()
    if t is Lit:
        return arg.v
    if t is Seq:
        items = [evaluate(a, env) for a in arg.items]
        return tuple(items) if arg.tup else items
    args = [evaluate(a, env) for a in arg.args]
    kwargs = {k: evaluate(a, env) for k, a in arg.kwargs.items()}
    if arg.how == "fn":
        return arg.fn(*args, **kwargs)
    if arg.how == "method":
        return getattr(args[0], arg.fn)(*args[1:], **kwargs)
    if arg.how == "getitem":
        return args[0][args[1]]
    return OPS[arg.fn](*args)


def render(arg):
    """Python source for an operand or call."""
    t = type(arg)
    if t is Ref:
        return DOMAINS[arg.dom][1].format(f"v{arg.i}") if arg.dom else f"v{arg.i}"
    if t is Const:
        return f"np.array({arg.a.tolist()!r})" if arg.a.dtype.kind != "b" else \
            f"np.array({arg.a.tolist()!r}, dtype=bool)"
    if t is Lit:
        v = arg.v
        if isinstance(v, type) or isinstance(v, np.dtype):
            return "np." + np.dtype(v).name
        return repr(v)
    if t is Seq:
        inner = ", ".join(render(a) for a in arg.items)
        return f"({inner},)" if arg.tup else f"[{inner}]"
    args = [render(a) for a in arg.args]
    if arg.how == "op":
        if arg.fn == "neg":
            return f"-{args[0]}"
        if arg.fn == "abs":
            return f"abs({args[0]})"
        return f"{args[0]} {arg.fn} {args[1]}"
    if arg.how == "getitem":
        return f"{args[0]}[{_index_src(arg.args[1].v)}]"
    parts = args[1:] if arg.how == "method" else args
    parts = parts + [f"{k}={render(a)}" for k, a in arg.kwargs.items()]
    head = f"{args[0]}.{arg.fn}" if arg.how == "method" else arg.name
    return f"{head}({', '.join(parts)})"


def _index_src(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    out = []
    for i in items:
        if isinstance(i, slice):
            out.append(":".join("" if v is None else str(v) for v in (i.start, i.stop, i.step))
                       .rstrip(":") or ":")
        elif i is None:
            out.append("None")
        elif i is Ellipsis:
            out.append("...")
        else:
            out.append(repr(i.tolist() if isinstance(i, np.ndarray) else i))
    return ", ".join(out) if len(items) != 1 or isinstance(idx, tuple) else out[0]


class Program:
    """Inputs (float or complex arrays) and calls, in pool order, and the target results."""

    def __init__(self, inputs, layout, targets, choices, variables=False):
        self.inputs, self.layout = inputs, layout      # layout: ("in", j) or (call, nouts)
        self.targets, self.choices = targets, choices
        self.variables = variables      # inputs are nt.Variable (else nt.constant)

    def replace(self, **kw):
        new = copy.copy(self)
        new.__dict__.update(kw)
        return new

    def wrap(self, nt):
        """The inputs as nbtape values."""
        make = nt.Variable if self.variables else nt.constant
        return [make(x) for x in self.inputs]

    @property
    def calls(self):
        return [c for c, _ in self.layout if c != "in"]

    def run(self, xs):
        """Every pool value (inputs and each call's results, in order) for inputs ``xs``."""
        env = []
        for c, n in self.layout:
            if c == "in":
                env.append(xs[n])
                continue
            out = evaluate(c, env)
            if n is None:
                env.append(out)
            else:
                out = list(out)
                if len(out) != n:
                    raise AssertionError(f"{render(c)} gave {len(out)} results, numpy {n}")
                env.extend(out)
        return env

    def source(self):
        """The program as Python a user could paste (the reproducer)."""
        lines = ["import numpy as np", "import nbtape as nt", ""]
        k = 0
        for c, n in self.layout:
            if c == "in":
                make = "nt.Variable" if self.variables else "nt.constant"
                lines.append(f"v{k} = {make}(np.array({self.inputs[n].tolist()!r}))")
                k += 1
                continue
            names = [f"v{k}"] if n is None else [f"v{k + j}" for j in range(n)]
            lhs = names[0] if n is None else ", ".join(names) + ("," if n == 1 else "")
            lines.append(f"{lhs} = {render(c)}")
            k += len(names)
        lines.append(f"# targets: {', '.join(f'v{i}' for i in self.targets)}")
        return "\n".join(lines)

    def slots(self):
        """``(layout position, call number or None)`` for each pool entry."""
        out, callno = [], -1
        for pos, (c, n) in enumerate(self.layout):
            if c != "in":
                callno += 1
            out += [(pos, None if c == "in" else callno)] * (1 if c == "in" or n is None else n)
        return out

    def cut(self, j, values):
        """Call ``j`` replaced by inputs holding its results ``values`` (the pool's)."""
        layout, inputs = [], list(self.inputs)
        slots = self.slots()
        for pos, (c, n) in enumerate(self.layout):
            mine = [i for i, (p, _) in enumerate(slots) if p == pos]
            if c != "in" and slots[mine[0]][1] == j:
                for i in mine:
                    layout.append(("in", len(inputs)))
                    inputs.append(np.asarray(values[i]))
            else:
                layout.append((c, n))
        targets = [t for t in self.targets if slots[t][1] != j]
        targets += [r.i for r in _refs(self.calls[j]) if r.i not in targets]
        return self.replace(inputs=inputs, layout=copy.deepcopy(layout), targets=targets)

    def compact(self):
        """Without the inputs and calls nothing uses (pool entries renumbered); an input
        is never a target."""
        slots = self.slots()
        prog = self.replace(targets=[t for t in self.targets if slots[t][1] is not None])
        while True:
            used = {r.i for c in prog.calls for r in _refs(c)} | set(prog.targets)
            slots = prog.slots()
            drop = [pos for pos, (c, n) in enumerate(prog.layout)
                    if not any(i in used for i, (p, _) in enumerate(slots) if p == pos)]
            if not drop:
                return prog
            pos = drop[-1]
            first = next(i for i, (p, _) in enumerate(slots) if p == pos)
            width = sum(1 for p, _ in slots if p == pos)
            layout = copy.deepcopy(prog.layout)
            del layout[pos]
            for c, _ in layout:
                if c != "in":
                    _shift(c, first + 1, -width)
            ins = [j for c, j in layout if c == "in"]
            inputs = [prog.inputs[j] for j in ins]
            layout = [("in", ins.index(n)) if c == "in" else (c, n) for c, n in layout]
            targets = [t - width if t > first else t for t in prog.targets]
            prog = prog.replace(inputs=inputs, layout=layout, targets=targets)

    def names(self):
        return [c.name if c.how == "fn" else f".{c.fn}" if c.how == "method" else c.fn
                for c in self.calls]


# ---- building ---------------------------------------------------------------------------------
def random_shape(ch, ndim=None, lo=0, hi=3):
    nd = lo + ch.below(hi - lo + 1) if ndim is None else ndim
    return tuple(1 + ch.below(3) for _ in range(nd))


def random_values(ch, shape, complex_=False):
    rng = np.random.default_rng(ch.below(1 << 20))
    v = rng.uniform(-1.5, 1.5, shape)
    if complex_:
        v = v + 1j * rng.uniform(-1.5, 1.5, shape)
    return v


def broadcast_partner(ch, shape):
    """A shape that broadcasts with ``shape`` (drop leading axes, set some to 1)."""
    s = list(shape[ch.below(len(shape) + 1):]) if ch.flag(0.4) else list(shape)
    s = [1 if ch.flag(0.25) else d for d in s]
    if ch.flag(0.15):
        s = [1] * ch.below(2) + s       # numpy broadcasting may also add axes
    return tuple(s)


class Builder:
    """The pool while a program is built; makers ask it for operands."""
    MAX_INPUTS = 3

    def __init__(self, ch):
        self.ch = ch
        self.inputs, self.values, self.layout = [], [], []
        self.used = set()
        self.complex_ok = ch.flag(0.1)
        self.variables = ch.flag(0.2)

    # -- operands
    def operand(self, ok=None, make=None, dom=None, real=False):
        """A pool entry (recent ones first) whose value passes ``ok``, else a new input."""
        ch, cands = self.ch, []
        kinds = "f" if real else "fc"
        for i in range(len(self.values) - 1, -1, -1):
            v = self.values[i]
            if v.dtype.kind in kinds and 0 < v.size <= 64 and (ok is None or ok(v.shape)):
                cands.append(i)
        fresh = len(self.inputs) < self.MAX_INPUTS and (not cands or ch.flag(0.15))
        if fresh:
            shape = make(ch) if make else random_shape(ch)
            if ok is not None and not ok(shape):
                raise Reject("no shape")
            return self.new_input(shape, dom, real)
        if not cands:
            raise Reject("no operand")
        # mostly the newest result, so calls chain
        i = cands[0] if not ch.flag(0.4) else cands[ch.below(len(cands))]
        self.used.add(i)
        return Ref(i, dom)

    def new_input(self, shape, dom=None, real=False):
        x = random_values(self.ch, shape, not real and self.complex_ok and self.ch.flag(0.5))
        self.layout.append(("in", len(self.inputs)))
        self.inputs.append(x)
        self.values.append(x)
        self.used.add(len(self.values) - 1)
        return Ref(len(self.values) - 1, dom)

    def value(self, ref):
        v = self.values[ref.i]
        return DOMAINS[ref.dom][0](v) if ref.dom else v

    def const(self, shape, dom=None):
        v = random_values(self.ch, shape)
        return Const(DOMAINS[dom][0](v) if dom else v)

    def other(self, shape, dom=None, scalar=True):
        """A second operand that broadcasts with ``shape``: tensor, constant or scalar."""
        ch = self.ch
        r = ch.below(10)
        if r < 2 and scalar:
            s = ch.pick(SIMPLE_FLOATS if self.complex_ok or ch.flag(0.1) else SIMPLE_FLOATS[:4])
            if dom and not (isinstance(s, (int, float)) and s > 0.4):
                s = 0.5
            return Lit(s)
        want = broadcast_partner(ch, shape)
        if r < 5:
            return self.const(want, dom)
        return self.operand(ok=lambda s: _broadcasts(s, shape), make=lambda c: want, dom=dom)

    def small(self, shape=(), dom=None):
        """A scalar-ish operand: a Python float, a 0-d constant or a 0-d tensor."""
        r = self.ch.below(3)
        if r == 0:
            return Lit(0.75 if dom else -0.25)
        if r == 1:
            return self.const(shape, dom)
        return self.operand(ok=lambda s: s == shape, make=lambda c: shape, dom=dom)

    def axis(self, shape, none=True):
        nd = len(shape)
        if nd == 0 or (none and self.ch.flag(0.3)):
            if not none:
                raise Reject("axis")
            return None
        return self.ch.below(2 * nd) - nd

    # -- calls
    def call(self, fn, name, params, how="fn", sig=None):
        """``fn`` with ``params`` [(name, operand)], positional as far as numpy allows,
        then (a random cut) by keyword."""
        sig = sig or _signature(fn)
        kinds = {p.name: p.kind for p in sig.parameters.values()} if sig else {}
        names = list(sig.parameters) if sig else []
        prefix = 0
        for k, (pname, _) in enumerate(params):
            kind = kinds.get(pname)
            if pname is None or (kind in (inspect.Parameter.POSITIONAL_ONLY,
                                          inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                 and k < len(names) and names[k] == pname):
                prefix = k + 1
            else:
                break
        keywordable = [k for k in range(prefix) if params[k][0] is not None and
                       kinds.get(params[k][0]) is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        cut = prefix
        if keywordable and self.ch.flag(0.35):
            cut = keywordable[self.ch.below(len(keywordable))]
        args = [a for _, a in params[:cut]]
        kwargs = {p: a for p, a in params[cut:]}
        return Call(fn, name, args, kwargs, how)

    def add(self, call):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                try:
                    out = evaluate(call, self.values)
                except Reject:
                    raise
                except Exception as e:          # numpy itself refuses: not a program
                    raise Reject(repr(e)) from None
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        n = len(outs) if isinstance(out, (tuple, list)) else None
        if not outs or len(outs) > 4:
            raise Reject("outputs")
        for o in outs:
            if not isinstance(o, (np.ndarray, np.generic)):
                raise Reject("not an array")
            if o.dtype.kind in "fc" and (not np.all(np.isfinite(o)) or o.size > 200
                                         or np.max(np.abs(o), initial=0) > 1e4):
                raise Reject("value")
        if not any(o.dtype.kind in "fc" for o in outs):
            raise Reject("no float output")
        self.layout.append((call, n))
        self.values.extend(np.asarray(o) for o in outs)
        return outs

    def snapshot(self):
        return len(self.inputs), len(self.layout), len(self.values), set(self.used)

    def restore(self, snap):
        ni, nl, nv, self.used = snap
        del self.inputs[ni:], self.layout[nl:], self.values[nv:]

    def program(self):
        ins = {i for i, (c, _) in enumerate(self._slots()) if c == "in"}
        targets = [i for i in range(len(self.values)) if i not in self.used
                   and i not in ins and self.values[i].dtype.kind in "fc"]
        return Program(list(self.inputs), list(self.layout), targets, list(self.ch.log),
                       self.variables)

    def _slots(self):
        """One (call or "in", k) per pool entry."""
        for c, n in self.layout:
            for k in range(1 if c == "in" or n is None else n):
                yield c, k


def _shift(arg, k, d):
    """Add ``d`` to every ref at or after pool index ``k``."""
    for r in _refs(arg):
        if r.i >= k:
            r.i += d


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


_SIGS = {}


def _signature(fn):
    if fn not in _SIGS:
        try:
            _SIGS[fn] = inspect.signature(fn)
        except (TypeError, ValueError):
            _SIGS[fn] = None
    return _SIGS[fn]


def build(ch, makers, max_calls=4, tries=30):
    """A random program: 1 to ``max_calls`` calls drawn from ``makers`` {name: maker}."""
    b = Builder(ch)
    names = sorted(makers)
    ncalls = 1 + ch.below(max_calls)
    for _ in range(ncalls):
        for _ in range(tries):
            snap = b.snapshot()
            name = ch.pick(names)
            try:
                call = makers[name](b)
                if not any(True for _ in _refs(call)):
                    raise Reject("no tensor operand")
                b.add(call)
                break
            except Reject:
                b.restore(snap)
    if not any(c != "in" for c, _ in b.layout):
        return None
    return b.program()


def _refs(arg):
    t = type(arg)
    if t is Ref:
        yield arg
    elif t is Seq:
        for a in arg.items:
            yield from _refs(a)
    elif t is Call:
        for a in list(arg.args) + list(arg.kwargs.values()):
            yield from _refs(a)
