"""Between the notebook's namespace and the tape: ``--watch`` names, result names, labels.

The tape knows tensors by id; the learner knows them as ``x``, ``y``, ``z``.
These helpers translate, so summaries and pictures use the cell's own names.
"""
import keyword

import numpy as np
from IPython.core.error import UsageError

from ..core.tensor import Tensor, TensorLike, constant
from ..core.variable import Variable

_MISSING = object()


def is_identifier(name):
    """A name a cell could bind (``tape``, ``loss_1``), not a keyword.

    >>> is_identifier("z"), is_identifier("for"), is_identifier("1x")
    (True, False, False)
    """
    return name.isidentifier() and not keyword.iskeyword(name)


def visible_names(shell):
    """The user's own variables (IPython's ``%who`` view): no ``_`` names, no ``In``/``Out``.

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> shell.user_ns["w1"] = 3
    >>> "w1" in visible_names(shell) and "In" not in visible_names(shell)
    True
    >>> del shell.user_ns["w1"]
    """
    hidden = shell.user_ns_hidden
    return {k: v for k, v in shell.user_ns.items()
            if not k.startswith("_") and hidden.get(k, _MISSING) is not v}


def watchable(name, value):
    """The tensor or variable ``--watch name`` watches, or a ``UsageError`` saying why not.

    Python numbers become float (or complex) tensors, float arrays become tensors
    of their dtype, tensors and variables are watched as they are.

    >>> watchable("x", 3)
    nt.Tensor(3.0, shape=(), dtype=float64)
    >>> watchable("k", np.arange(3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    IPython.core.error.UsageError: %%tape --watch k: k is an int64 array, ... k.astype(float).
    """
    prefix = f"%%tape --watch {name}: {name}"
    if isinstance(value, TensorLike):
        if value.dtype.kind not in "fc":
            kind = "variable" if isinstance(value, Variable) else "tensor"
            raise UsageError(
                f"{prefix} is a {value.dtype} {kind}, and integer and bool values are never "
                f"differentiable. Make it float first, e.g. "
                f"{name} = nt.{'Variable' if kind == 'variable' else 'constant'}"
                f"({name}.numpy(), dtype=float).")
        return value
    if isinstance(value, bool) or isinstance(value, np.bool_):
        raise UsageError(f"{prefix} is a bool, and bools are never differentiable.")
    if isinstance(value, (int, float)):
        return constant(float(value))
    if isinstance(value, complex):
        return constant(value)
    if isinstance(value, (np.ndarray, np.generic, list, tuple)):
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and arr.dtype.kind in "fc":
            return constant(arr)
        if arr is not None and arr.dtype.kind in "iub":
            if isinstance(value, np.ndarray):
                what, fix = f"an {arr.dtype} array", f"{name} = {name}.astype(float)"
            elif isinstance(value, np.generic):
                what, fix = f"an {arr.dtype} number", f"{name} = float({name})"
            else:
                what, fix = f"a {type(value).__name__} of {arr.dtype} values", \
                    f"{name} = np.array({name}, dtype=float)"
            raise UsageError(f"{prefix} is {what}, and integer values are never "
                             f"differentiable. Make it float first, e.g. {fix}.")
    raise UsageError(
        f"{prefix} is a {type(value).__name__}, which cannot be differentiated: --watch "
        "takes numbers, float arrays, nt tensors and nt.Variables.")


def resolve_watch(ns, names):
    """``[(name, tensor_or_variable)]`` for ``--watch`` names; nothing is rebound yet.

    Every name is checked before any is rebound, so a bad name leaves the
    namespace untouched.

    >>> resolve_watch({"x": 2.0}, ["x"])
    [('x', nt.Tensor(2.0, shape=(), dtype=float64))]
    >>> resolve_watch({}, ["q"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    IPython.core.error.UsageError: %%tape --watch q: there is no variable named 'q' in ...
    """
    out = []
    for name in names:
        if not is_identifier(name):
            raise UsageError(f"%%tape --watch {name}: {name!r} is not a variable name.")
        if name not in ns:
            raise UsageError(f"%%tape --watch {name}: there is no variable named {name!r} in "
                             "the notebook; define it in an earlier cell first.")
        out.append((name, watchable(name, ns[name])))
    return out


def cell_results(before, after, exclude=()):
    """Names the cell bound to tensors or variables: ``[(name, value)]``, namespace order.

    ``before`` is a copy of the namespace taken before the cell (it holds the old
    values, so a name rebound to a new object is told apart by identity).

    >>> y = constant(1.0)
    >>> [n for n, _ in cell_results({"a": y}, {"a": y, "b": constant(2.0), "c": 3})]
    ['b']
    """
    return [(k, v) for k, v in after.items()
            if isinstance(v, TensorLike) and k not in exclude
            and before.get(k, _MISSING) is not v]


def tensor_names(visible, prefer=()):
    """``{tensor_or_variable: name}`` for pictures; names in ``prefer`` win ties.

    >>> y = constant(1.0)
    >>> list(tensor_names({"a": y, "b": y}, prefer=[("b", y)]).values())
    ['b']
    """
    names = {}
    for k, v in visible.items():
        if isinstance(v, TensorLike) and v not in names:
            names[v] = k
    for k, v in prefer:
        names[v] = k
    return names


def label(obj, names):
    """The learner's name for a watched value: its namespace name, else its variable name.

    >>> label(Variable(1.0, name="kernel"), {})
    "'kernel'"
    """
    name = names.get(obj)
    if name is not None:
        return name
    if isinstance(obj, Variable):
        return repr(obj.name)
    return "a tensor"


def watched_objects(tape, candidates):
    """The values ``tape`` watches, in watch order: variables, and tensors found among
    ``candidates`` (the tape itself keeps only a watched tensor's id).

    >>> import nbtape as nt
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    >>> [o is x for o in watched_objects(tape, [x])]
    [True]
    """
    by_id = {}
    for c in candidates:
        if type(c) is Tensor:
            by_id.setdefault(c._id, c)
    out = []
    for i, w in sorted(tape.watched.items(), key=lambda kv: kv[1].serial):
        obj = tape.watched_object(i) if w.kind == "variable" else by_id.get(i)
        if obj is not None:
            out.append(obj)
    return out


def aliases(visible, replaced, used):
    """``{watched name: (alias, watched name)}`` for names the cell used that still hold
    the plain value a ``--watch`` name had before it was rebound to a tensor.

    ``replaced`` maps each rebound ``--watch`` name to its old value; ``used`` is
    the set of names the cell's code reads.

    >>> v = np.ones(2)
    >>> aliases({"x": constant(v), "xs": v, "k": 3}, {"x": v}, {"xs"})
    {'x': ('xs', 'x')}
    """
    out = {}
    for name, old in replaced.items():
        for k, value in visible.items():
            if value is old and k != name and k in used:
                out[name] = (k, name)
                break
    return out


def alias_text(alias, name):
    """Why a gradient through ``alias`` is missing: it is the value ``--watch`` replaced.

    >>> print(alias_text("xs", "x"))  # doctest: +ELLIPSIS
    `xs` still holds the plain value that `x` had before --watch made x a tensor...
    """
    return (f"`{alias}` still holds the plain value that `{name}` had before --watch made "
            f"{name} a tensor (--watch rebinds the name {name} only), and the cell computes "
            f"with {alias}, which the tape cannot follow: use {name} in the cell, or watch "
            f"{alias} too (--watch {name} {alias})")


def escape_text(tape, watch):
    """Where a value the cell computed from its watched values left the tape, or ``None``.

    >>> import nbtape as nt
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     z = np.asarray(x) ** 2
    >>> escape_text(tape, [("x", x)])  # doctest: +ELLIPSIS
    'x left the tape through np.asarray at line 3 of <doctest ...> (z = np.asarray(x) ** 2): ...'
    """
    from ..diagnostics import user_line
    names = {v._id: n for n, v in watch}
    for note in tape.notes:
        if note.kind != "escape":
            continue
        i, where, how = note.id, note.where, note.detail
        what = names.get(i, "a value computed from the watched values")
        line = user_line.source_line(where)
        code = f" ({line})" if line else ""
        return (f"{what} left the tape through {how} at {user_line.describe(where)}{code}: from "
                "there on it is a plain numpy value that the tape cannot follow. Keep it a "
                f"tensor: compute with it directly instead of through {how}")
    return None
