"""A traced program (``trace.Tracer``'s steps) as a Python function, and as text.

``compile_program`` writes the steps out as the source of one straight-line Python
function, one line per numpy call, and compiles it with ``exec``: a replay is then a
plain Python call that runs those numpy calls on raw arrays, with no dispatch, no
recording and no loop over a list of steps (each of those costs more than a small
numpy call).  It is still pure Python, so it runs wherever nbtape runs (Pyodide too).
Calls of Python's operators (what ``x * y`` on tensors computes with) are written as
operators; every other function, constant and variable is a name in the function's
namespace.

``listing`` shows the same steps in numpy's words, as ``jax.make_jaxpr`` shows a JAX
program: what ``f.program(...)`` prints.
"""
import math
import operator

import numpy as np

from ..core.variable import Variable, replace_value
from .trace import ADD_REDUCE, Slot, kind_text, wrap

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
          operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
          operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
          operator.eq: "==", operator.ne: "!="}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}



class ShapeChanged(Exception):
    """Raised by a replay whose value of a data-dependent shape (a mask's count,
    ``np.nonzero``, ``np.unique``) is not the traced one: that program does not apply
    (``nt.function`` traces again).  ``undo``: ``(variable, tensor)`` pairs that give the
    variables the program had updated before it stopped their values back."""

    def __init__(self, undo=()):
        super().__init__("a data-dependent shape changed")
        self.undo = undo


# numpy functions whose result's shape depends on values, not only on shapes: a
# program checks it (a getitem is checked when a boolean mask of the program indexes)
DATA_SHAPED = frozenset((
    "np.nonzero", "np.flatnonzero", "np.argwhere", "np.unique", "np.unique_values",
    "np.unique_counts", "np.unique_inverse", "np.unique_all", "np.extract", "np.compress",
    "np.where", "np.trim_zeros", "np.setdiff1d", "np.intersect1d", "np.union1d",
    "np.setxor1d", "np.delete", "np.repeat", "np.bincount", "np.nanargmax"))


class NotFinite(ShapeChanged):
    """Raised by a replay whose scalar result (a loss) came out NaN or inf:
    ``nt.function`` runs that call eagerly instead, so that nbtape says where the
    value was born, as it says eagerly."""


class ReplayFailed(ShapeChanged):
    """Raised by a replay in which a numpy call raised (an index out of range: labels
    that the traced call's checks would have refused, say): ``nt.function`` gives the
    variables back their values and runs that call eagerly instead, so the error is
    the eager run's, said at the user's line, never a raw one from inside the program."""


def _raise_failed(undo):
    raise ReplayFailed([(v, t) for v, t in undo])


def _raise_changed(undo):
    raise ShapeChanged([(v, t) for v, t in undo])


def _raise_not_finite(undo):
    raise NotFinite([(v, t) for v, t in undo])


class _Names:
    """The namespace of a generated function: each constant gets a name."""

    def __init__(self):
        self.ns = {"_wrap": wrap, "_array": np.array, "_set": replace_value,
                   "_changed": _raise_changed, "_not_finite": _raise_not_finite,
                   "_failed": _raise_failed, "_Changed": ShapeChanged,
                   "_isfinite": math.isfinite}
        self._by_id = {}

    def const(self, value, hint="c"):
        key = id(value)
        name = self._by_id.get(key)
        if name is None:
            name = f"{hint}{len(self._by_id)}"
            self._by_id[key] = name
            self.ns[name] = captured(value)
        return name


def captured(value):
    """A constant as the program keeps it: a plain array that can still change (one the
    function closes over) is copied, read-only, when traced, as ``tf.function`` captures
    a numpy array; the replay never sees a later in-place change (it traces nothing
    again), and never a mix of the old and the new value.

    >>> a = np.ones(2); c = captured(a); a[:] = 5.0; c
    array([1., 1.])
    """
    if type(value) is np.ndarray and _changeable(value):
        value = value.copy()
        value.flags.writeable = False
    return value


def _changeable(a):
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return True
        a = a.base
    return False


def _render(a, names):
    """Python source for the argument template ``a``."""
    t = type(a)
    if t is Slot:
        return f"v{a.n}"
    if t is list:
        return "[" + ", ".join(_render(x, names) for x in a) + "]"
    if t is tuple:
        return "(" + "".join(_render(x, names) + ", " for x in a) + ")"
    if a is None or a is True or a is False or (t in (int, str) and len(repr(a)) < 40):
        return repr(a)
    return names.const(a)


def _call_source(step, names):
    out, name, fn, args, kwargs = step[1:6]
    if kwargs is None and len(args) == 2 and fn in _INFIX:
        expr = f"{_render(args[0], names)} {_INFIX[fn]} {_render(args[1], names)}"
    elif kwargs is None and len(args) == 1 and fn in _PREFIX:
        expr = f"{_PREFIX[fn]}{_render(args[0], names)}"
    else:
        parts = [_render(a, names) for a in args]
        if fn is ADD_REDUCE and "axis" not in (kwargs or {}):
            parts.append("axis=None")       # np.sum's default; np.add.reduce's is 0
        for k, v in (kwargs or {}).items():
            parts.append(f"{k}={_render(v, names)}" if k.isidentifier()
                         else f"**{{{k!r}: {_render(v, names)}}}")
        hint = "".join(ch for ch in name.rpartition(".")[2] if ch.isalnum()) or "f"
        expr = f"{names.const(fn, hint + '_')}({', '.join(parts)})"
    if out is None:
        return [expr]
    if type(out) is tuple:
        targets = [f"v{n}" if n is not None else "_" for n in out]
        return [f"{', '.join(targets)}, = {expr}" if len(targets) == 1
                else f"{', '.join(targets)} = {expr}"]
    return [f"v{out} = {expr}"]


def _assign_source(step, names):
    _, n, var, how, cur, src, dtype, fresh = step
    v = names.const(var, "var")
    s = _render(src, names)
    if how == "assign":
        value = f"_array({s}, dtype={names.const(dtype, 'dtype')})"
    else:
        value = f"v{cur} {'+' if how == 'assign_add' else '-'} {s}"
        if not fresh:
            value = f"_array({value}, dtype={names.const(dtype, 'dtype')})"
    return [f"v{n} = {value}", f"v{n}.flags.writeable = False", f"_set({v}, v{n})"]


def _result_source(r, names):
    t = type(r)
    if t is Slot:
        return f"_wrap(v{r.n})"
    if t is list:
        return "[" + ", ".join(_result_source(x, names) for x in r) + "]"
    if t is tuple and not hasattr(r, "_fields"):
        return "(" + "".join(_result_source(x, names) + ", " for x in r) + ")"
    if t is tuple:
        fields = ", ".join(_result_source(x, names) for x in r)
        return f"{names.const(type(r), 'tuple')}({fields})"
    if t is dict:
        return "{" + ", ".join(f"{names.const(k, 'key')}: {_result_source(x, names)}"
                               for k, x in r.items()) + "}"
    return names.const(r, "result")


# a value of at least this many elements is freed (``del``) after its last use, as
# torch.fx's generated code does: a replay's peak memory is then at most the eager
# run's; a smaller one is left to the function's end (a del costs a little time)
FREE_FROM = 1024


def _slots_in(a, out):
    t = type(a)
    if t is Slot:
        out.append(a.n)
    elif t is list or t is tuple:
        for x in a:
            _slots_in(x, out)
    elif t is dict:
        for x in a.values():
            _slots_in(x, out)
    return out


def _last_uses(steps, result, kinds):
    """``{k: [slots]}``: the large values made by calls whose last use is step ``k``."""
    made = set()
    for step in steps:
        if step[0] == "call" and step[1] is not None:
            for n in (step[1] if type(step[1]) is tuple else (step[1],)):
                kind = kinds.get(n) if n is not None else None
                if kind is not None and math.prod(kind[1]) >= FREE_FROM:
                    made.add(n)
    last = {}
    for k, step in enumerate(steps):
        if step[0] == "call":
            used = _slots_in((step[4], step[5]), [])
        elif step[0] == "assign":
            used = _slots_in((step[4], step[5]), [])
        else:
            continue
        for n in used:
            if n in made:
                last[n] = k
    for n in _slots_in(result, []):
        last.pop(n, None)
    out = {}
    for n, k in last.items():
        out.setdefault(k, []).append(n)
    return out


def _scalar_results(steps, result, kinds):
    """``{k: [slot]}``: the real scalar results (a loss) that step ``k`` makes."""
    wanted = {n for n in _slots_in(result, []) if kinds.get(n) is not None
              and kinds[n][1] == () and np.dtype(kinds[n][0]).kind == "f"}
    out = {}
    for k, step in enumerate(steps):
        if step[0] == "call" and type(step[1]) is int and step[1] in wanted:
            out.setdefault(k, []).append(step[1])
    return out


def _guarded(steps, kinds):
    """``{k: [(slot, shape)]}``: the values of data-dependent shape step ``k`` makes."""
    out = {}
    for k, step in enumerate(steps):
        if step[0] != "call" or step[1] is None:
            continue
        name = step[2].split(" (")[0]       # "np.nonzero (returning several arrays)"
        if name == "getitem":
            index = _slots_in(step[4][1:], [])
            if not any(kinds.get(n, (None,))[0] == np.bool_ for n in index):
                continue
        elif name not in DATA_SHAPED:
            continue
        outs = step[1] if type(step[1]) is tuple else (step[1],)
        checks = [(n, kinds[n][1]) for n in outs if n is not None and n in kinds]
        if checks:
            out[k] = checks
    return out


def source(steps, result, kinds=None):
    """``(source, namespace)`` of the replay function of ``steps`` returning ``result``
    (a template: ``Slot``s, constants, lists, tuples and dicts).  Given the values'
    ``kinds`` (slot -> dtype and shape), a large value is freed after its last use.

    >>> import operator
    >>> steps = [("input", 0, "x"),
    ...          ("call", 1, "np.multiply", operator.mul, (Slot(0), Slot(0)), None, "forward")]
    >>> print(source(steps, Slot(1))[0])
    def replay(v0):
        try:
            v1 = v0 * v0
            return _wrap(v1)
        except _Changed:
            raise
        except Exception:
            _failed(())
    """
    names = _Names()
    inputs = [f"v{s[1]}" for s in steps if s[0] == "input"]
    lines = []
    free = _last_uses(steps, result, kinds) if kinds else {}
    guarded = _guarded(steps, kinds) if kinds else {}
    finite = _scalar_results(steps, result, kinds) if kinds else {}
    # the variables a program updates: given back their values when a check fails (the
    # program then does not apply to this call) or a numpy call raises (that call runs
    # eagerly instead, and says its error as eagerly)
    updated = [s[2] for s in steps if s[0] == "assign"]
    undo, head = "()", []
    if updated:
        pairs = ", ".join(f"({n}, {n}._tensor)" for n in
                          dict.fromkeys(names.const(v, "var") for v in updated))
        head.append(f"_undo = ({pairs},)")
        undo = "_undo"
    for k, step in enumerate(steps):
        kind = step[0]
        if kind == "call":
            lines += _call_source(step, names)
            for n, shape in guarded.get(k, ()):
                lines.append(f"if v{n}.shape != {shape!r}: _changed({undo})")
            for n in finite.get(k, ()):
                lines.append(f"if not _isfinite(v{n}): _not_finite({undo})")
        elif kind == "read":
            lines.append(f"v{step[1]} = {names.const(step[2], 'var')}._tensor._value")
        elif kind == "assign":
            lines += _assign_source(step, names)
        if k in free:
            lines.append("del " + ", ".join(f"v{n}" for n in sorted(free[k])))
    lines.append(f"return {_result_source(result, names)}")
    # (a try costs nothing until something raises)
    body = "".join(f"    {line}\n" for line in head) + "    try:\n" + "".join(
        f"        {line}\n" for line in lines) + (
        f"    except _Changed:\n        raise\n    except Exception:\n        _failed({undo})\n")
    return f"def replay({', '.join(inputs)}):\n{body}".rstrip("\n"), names.ns


def compile_program(steps, result, kinds=None):
    """The replay function of ``steps`` (see ``source``), compiled.

    >>> import operator
    >>> steps = [("input", 0, "x"),
    ...          ("call", 1, "np.multiply", operator.mul, (Slot(0), 3.0), None, "forward")]
    >>> compile_program(steps, Slot(1))(np.array(2.0))
    nt.Tensor(6.0, shape=(), dtype=float64)
    """
    text, ns = source(steps, result, kinds)
    code = compile(text, "<nt.function program>", "exec")
    exec(code, ns)      # defines replay in ns: the program as one Python function
    return ns["replay"]


def _show(a, labels):
    t = type(a)
    if t is Slot:
        return labels.get(a.n, f"v{a.n}")
    if t is list or t is tuple:
        inner = ", ".join(_show(x, labels) for x in a)
        return f"[{inner}]" if t is list else f"({inner}{',' if len(a) == 1 else ''})"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {_show(x, labels)}" for k, x in a.items()) + "}"
    if isinstance(a, (np.ndarray, np.generic)):
        if np.ndim(a) == 0:
            return repr(a.item())
        return f"<{a.dtype}{list(a.shape)} constant>"
    if isinstance(a, Variable):
        return f"<variable {a.name}>"
    if isinstance(a, np.dtype):
        return f"'{a}'"
    text = repr(a)
    return text if len(text) < 40 and "\n" not in text else f"<{type(a).__name__}>"


def listing(steps, result, kinds):
    """The program in numpy's words: one line per step, each value ``vN`` with its
    dtype and shape (``kinds``: slot -> ``(dtype, shape)``); the backward pass's calls
    under a heading of their own.

    >>> import operator
    >>> steps = [("input", 0, "x"),
    ...          ("call", 1, "np.multiply", operator.mul, (Slot(0), 3.0), None, "forward")]
    >>> kind = (np.dtype("float64"), (2,))
    >>> print(listing(steps, Slot(1), {0: kind, 1: kind}))
    { lambda x:float64[2] .
      v1:float64[2] = np.multiply(x, 3.0)
      in v1 }
    """
    labels = {s[1]: s[2] for s in steps if s[0] == "input"}
    inputs = " ".join(f"{labels[n]}:{kind_text(kinds.get(n))}" for n in labels)
    lines = []
    phase = "forward"
    for step in steps:
        kind = step[0]
        if kind == "call":
            out, name, _, args, kwargs, now = step[1:7]
            if now != phase and not (phase == "update" and now == "forward"):
                # (a call between two updates, the next update's step, stays under them)
                lines.append("# backward pass" if now == "backward" else
                             "# after the backward pass")
                phase = now
            parts = [_show(a, labels) for a in args]
            parts += [f"{k}={_show(v, labels)}" for k, v in (kwargs or {}).items()]
            call = f"{name}({', '.join(parts)})"
            if out is None:
                lines.append(call)
            elif type(out) is tuple:
                lines.append(", ".join(f"v{n}:{kind_text(kinds.get(n))}" if n is not None
                                       else "_" for n in out) + f" = {call}")
            else:
                lines.append(f"v{out}:{kind_text(kinds.get(out))} = {call}")
        elif kind == "read":
            lines.append(f"v{step[1]}:{kind_text(kinds.get(step[1]))} = read "
                         f"{_show(step[2], labels)}")
        elif kind == "assign":
            _, n, var, how, cur, src, _, _ = step
            op = {"assign": "", "assign_add": f"v{cur} + ", "assign_sub": f"v{cur} - "}[how]
            if phase != "update":
                lines.append("# updates")
                phase = "update"
            lines.append(f"{_show(var, labels)}.{how}(v{n} = {op}{_show(src, labels)})")
    body = "".join(f"  {line}\n" for line in lines)
    return f"{{ lambda {inputs} .\n{body}  in {_show(result, labels)} }}"


class Program:
    """A traced program: its ``steps`` (``trace.Input``, ``Read``, ``Call``, ``Assign``),
    its ``result`` (a template of ``Slot``s and constants) and its values' ``kinds``
    (slot -> dtype and shape).  ``str()`` (``text()``) lists it in numpy's words,
    ``source()`` is the replay function's Python, ``compile()`` that function,
    ``graph()`` a picture; ``f.program(...)`` returns one.

    >>> import operator
    >>> kind = (np.dtype("float64"), (2,))
    >>> p = Program([("input", 0, "x"),
    ...              ("call", 1, "np.multiply", operator.mul, (Slot(0), 3.0), None, "forward")],
    ...             Slot(1), {0: kind, 1: kind})
    >>> p.compile()(np.array([1.0, 2.0]))
    nt.Tensor([3.0 6.0], shape=(2,), dtype=float64)
    """

    def __init__(self, steps, result, kinds):
        self.steps, self.result, self.kinds = steps, result, kinds

    def text(self):
        return listing(self.steps, self.result, self.kinds)

    def source(self):
        return source(self.steps, self.result, self.kinds)[0]

    def compile(self):
        return compile_program(self.steps, self.result, self.kinds)

    def graph(self, name="f"):
        """A ``graphviz.Digraph`` of the program (graphviz imported only to draw)."""
        from .drawing import draw_program
        return draw_program(self.steps, self.result, self.kinds, name=name)

    def __str__(self):
        return self.text()

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))
