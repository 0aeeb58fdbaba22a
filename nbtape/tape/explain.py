"""``tape.explain(target, source)``: why a gradient is what it is.

Either the recorded path from ``source`` to ``target``, op by op with the user's
lines, or the exact place where the path breaks: never watched, watched after
use, replaced by a new object, left the tape through plain numpy, an integer
dtype, an ``assign``, ``stop_recording``, ``stop_gradient``, or a step with no
gradient rule (an object array among them) that ``gradient`` would refuse.
"""
import html
import linecache
import os
import re
import sys
import sysconfig

import numpy as np

from ..diagnostics import user_line
from ..diagnostics.user_line import PACKAGE_DIR
from .backward import forward_reach
from .breaks import ObjectArrayRule
from .numerics import finite, find_births, told
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable
from ..display import palette


class Explanation:
    """The answer: ``connected``, the ``path`` (list of steps) or the ``reasons``.

    ``str()`` reads as a short paragraph; in a notebook it shows as HTML.
    """

    def __init__(self, title, connected, steps, reasons, fix=None, extra_paths=0,
                 nonfinite=None):
        self.title = title
        self.nonfinite = nonfinite    # why the gradient is NaN or inf (numerics.py), or None
        self.connected = connected
        self.steps = steps            # [(label, where)] along one path
        self.reasons = reasons        # [str] why there is no gradient
        self.fix = fix
        self.extra_paths = extra_paths

    def __str__(self):
        lines = [self.title]
        if self.connected:
            for label, where in self.steps:
                lines.append("  " + label + _at(where))
            if self.extra_paths:
                lines.append("  " + _more_paths(self.extra_paths))
            lines.extend("  But: " + r for r in self.reasons)     # escapes along the way
            if self.nonfinite:
                lines.append("  But the gradient is not finite: " + self.nonfinite)
        else:
            lines.extend("  - " + r for r in self.reasons)
            if self.fix:
                lines.append("  Fix: " + self.fix)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        e = html.escape
        if self.connected:
            items = "".join(f"<li><code>{e(label)}</code>{e(_at(where))}</li>"
                            for label, where in self.steps)
            more = f"<p>{e(_more_paths(self.extra_paths))}</p>" if self.extra_paths else ""
            body = f"<ol>{items}</ol>{more}" + "".join(f"<p><b>But:</b> {e(r)}</p>"
                                                      for r in self.reasons)
            color = palette.GOOD_TEXT
            if self.nonfinite:
                body += (f"<p><b style='color:{palette.WARN_TEXT}'>But the gradient is not "
                         f"finite:</b> "
                         f"{e(self.nonfinite)}</p>")
        else:
            body = "<ul>" + "".join(f"<li>{e(r)}</li>" for r in self.reasons) + "</ul>"
            if self.fix:
                body += f"<p><b>Fix:</b> {e(self.fix)}</p>"
            color = palette.WARN_TEXT
        return (f"<div class='nbtape-explain'><b style='color:{color}'>{e(self.title)}</b>"
                f"{body}</div>")


def _more_paths(extra):
    """What the paths not listed are, in words (``extra`` of them besides the one shown).

    >>> print(_more_paths(1))
    (This is one of 2 paths from the source to the target: a value on the way is used more than once, as x is in x * x, and each use is a path of its own. The gradient is the sum of what every path contributes.)
    """
    return (f"(This is one of {extra + 1} paths from the source to the target: a value on the "
            "way is used more than once, as x is in x * x, and each use is a path of its own. "
            "The gradient is the sum of what every path contributes.)")


def _at(where):
    if not where:
        return ""
    line = user_line.source_line(where)
    return f"  ({user_line.describe(where)}" + (f": {line})" if line else ")")


def _label(obj, fallback):
    # a Variable's own name first; an unnamed one ("Variable") by the user's name for it
    if isinstance(obj, Variable):
        if obj.name != "Variable":
            return f"variable {obj.name!r}"
        return fallback if fallback != "the source" else "the source variable"
    return fallback


def _path(ops, reach, start, target_id):
    """One path of op indices from ``start`` to ``target_id`` (shortest back-trace)."""
    path, cur = [], target_id
    while cur != start:
        k = reach.get(cur)
        if k is None:
            return None
        path.append(k)
        op = ops[k]
        cur = next(i for i in op.in_ids if i is not None and i in reach
                   and (reach[i] is None or reach[i] < k))
    return path[::-1]


def explain(tape, target, source):
    """See ``GradientTape.explain``.

    >>> import nbtape as nt
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as t:
    ...     y = x * x
    >>> print(t.explain(y, x).reasons[0][:36])
    `x` is an nt.Tensor that this tape n
    """
    if isinstance(target, (int, float, complex, np.ndarray, np.generic)):
        target = Tensor(np.asarray(target))     # a plain value: it left the tape somewhere
    if not isinstance(source, TensorLike) or not isinstance(target, TensorLike):
        raise TypeError("explain(target, source) takes nbtape tensors or variables.")
    ops = tape.ops
    sid, tid = source._id, target._id
    name = _user_name(source)
    src = _label(source, f"`{name}`" if name else "the source")
    title_none = f"No gradient: the target does not depend on {src} on this tape."

    early = _before_the_records(tape, source, src, title_none)
    if early is not None:
        return early

    if tid == sid:
        # d(x)/d(x) is the identity, watched or not (as tape.gradient gives it, after
        # TensorFlow: see GradientTape._seeds)
        watched = tape.watched.get(sid)
        return Explanation(f"Connected: the target is {src} itself, so the gradient is the "
                           "identity (ones of its shape), through 0 recorded op(s), whether "
                           "or not the tape watched it.", True,
                           [(f"{src}", watched.where if watched is not None else None)], [])

    if not tape.tracks(sid):
        unused = _unused(tape, ops, source, target, src, name)
        if unused:
            return Explanation(title_none, False, [], unused)
        return Explanation(title_none, False, [], _unwatched_reasons(tape, source, src, name),
                           fix=_unwatched_fix(tape, source, name))

    reach = forward_reach(tape.op_records, [sid])[1]
    blocked = _without_gradient(ops, reach, tid) if tid in reach else []
    if blocked:
        return Explanation(
            f"No gradient: the target depends on {src}, but tape.gradient raises "
            "NoGradientRuleError, because the path goes through a step nbtape cannot "
            "differentiate.", False, [], blocked,
            fix="rewrite that step with functions nbtape differentiates (nt.coverage() "
                "lists them), or wrap it in @nt.custom_gradient with your own derivative.")
    if tid in reach:
        watched = tape.watched.get(sid)
        steps = [(f"{src}", watched.where if watched is not None else None)]
        path = _path(ops, reach, sid, tid) or []
        for k in path:
            steps.append((f"-> {ops[k].rule.name} (op {k})", ops[k].where))
        n_paths = _count_paths(ops, reach, sid, tid)
        return Explanation(f"Connected: the gradient flows from the target back to {src} "
                           f"through {len(path)} recorded op(s).", True, steps,
                           _escapes(tape, reach, tid, src), extra_paths=max(0, n_paths - 1),
                           nonfinite=_nonfinite(tape, target, source))

    reasons = _breaks(tape, ops, reach, source, target, src)
    if not reasons:
        rebound = _rebound(ops, sid, name)
        if rebound:
            reason, x = rebound
            return Explanation(title_none, False, [], [reason],
                               fix=f"ask for the gradient with respect to the object the target "
                                   f"used (keep it under its own name before rebinding `{x}`), "
                                   f"or change a Variable in place with {x}.assign_add(...) "
                                   f"instead of `{x} = {x} + ...`.")
    if not reasons:
        reasons = ["no recorded operation connects them: the target was computed from "
                   "other values (or before this tape started recording)."]
    return Explanation(title_none, False, [], reasons)


def _before_the_records(tape, source, src, title_none):
    """The answer that needs no records (a retired tape, an integer or bool source), or
    None."""
    if getattr(tape, "retired", None):
        return Explanation(f"No answer: this tape was retired ({tape.retired}), so its "
                           "records are gone and it cannot say how the target depends on "
                           f"{src}.", False, [],
                           [f"the tape was retired: {tape.retired}"],
                           fix="ask the tape that replaced it, or record the computation "
                               "on a new tape.")
    if source.dtype.kind not in "fc":
        return Explanation(title_none, False, [], [
            f"{src} has dtype {source.dtype}: integer and bool values are never "
            "differentiable, so the tape does not follow them."],
            fix="make it a float, e.g. nt.Variable(2.0) instead of nt.Variable(2).")
    return None


def _nonfinite(tape, target, source):
    """Where a NaN or inf in this gradient was born (numerics.py), or None when it is
    finite.  A used non-persistent tape dropped what a new search needs: it says what
    its gradient found."""
    if tape.consumed:
        birth = tape.last_nonfinite
        return None if birth is None else birth.story()
    value = target._value
    if not isinstance(value, (np.ndarray, np.generic)) or value.dtype.kind not in "fc":
        return None
    forward_bad = not finite(value)
    # the same story as the warning's (numerics.find_births): the forward pass first
    birth, then = find_births(tape.op_records, {target._id: np.ones_like(value)},
                              [source._id], forward_bad)
    if birth is None:
        return ("the target's own value is not finite: the forward pass made it"
                if forward_bad else None)
    head = ("the target's own value is not finite either (the forward pass made a NaN or "
            "inf); " if forward_bad else "")
    return head + told(birth, then)


def _without_gradient(ops, reach, tid):
    """Reasons for each op on a path to the target that has no gradient rule."""
    back = {tid}
    reasons = []
    for op in reversed(ops):
        if op.rule.stop or not any(o in back for o in op.out_ids if o is not None):
            continue
        if not any(i in reach for i in op.in_ids if i is not None):
            continue
        back.update(i for i in op.in_ids if i is not None)
        if op.rule.has_vjp:
            continue
        if isinstance(op.rule, ObjectArrayRule):
            name, where = op.rule.origin
            reasons.append(f"the values became a numpy object array (dtype=object) in {name} "
                           f"at {user_line.describe(where)}{_code(where)}: object arrays hold "
                           "Python objects, which nbtape cannot differentiate.")
        else:
            reasons.append(f"{op.rule.name} at {user_line.describe(op.where)}{_code(op.where)} "
                           "has no gradient rule.")
    return list(dict.fromkeys(reversed(reasons)))     # tape order, each once


def _count_paths(ops, reach, sid, tid, cap=1000):
    counts = {sid: 1}
    for k, op in enumerate(ops):
        if op.rule.stop:
            continue
        c = sum(counts.get(i, 0) for i in op.in_ids if i is not None)
        if c:
            for o in op.out_ids:
                if o is not None:
                    counts[o] = min(cap, counts.get(o, 0) + c)
    return counts.get(tid, 0)


# where the user's code ends: the interpreter's library and installed packages (IPython's
# run_code, pytest) are not the user's
_LIBRARY = tuple(os.path.abspath(p) + os.sep for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")})


def _user_frames():
    """The frames of the user's code around this call, nearest first."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(PACKAGE_DIR):
        f = f.f_back
    while f is not None and not os.path.abspath(f.f_code.co_filename).startswith(_LIBRARY):
        yield f
        f = f.f_back


def _rebinding_line(name):
    """Where the user's code does ``name = name + ...`` (or ``name += ...``), if it does.

    A Tensor the tape never saw may be a Variable that such a line replaced before the
    tape started (``x = x + 1`` at the end of an epoch loop): its code tells which.
    """
    assign = re.compile(rf"\s*{re.escape(name)}\s*(?:(?:[-+*/@%]|//|\*\*)=.*|=(?!=)(.*))$")
    for f in _user_frames():
        code = f.f_code
        lines = [line for _, _, line in code.co_lines() if line]
        if code.co_name == "<module>":      # IPython runs a cell one statement at a time
            lines = range(1, len(linecache.getlines(code.co_filename)) + 1)
        for lineno in sorted(set(lines)):
            where = (code.co_filename, lineno, code.co_name)
            text = user_line.source_line(where)
            m = assign.match(text.split("#")[0])
            rhs = m and m.group(1)
            if m and (rhs is None or re.search(rf"\b{re.escape(name)}\b",
                                               re.sub(r"(['\"]).*?\1", "", rhs))):
                return where, text
    return None


def _user_name(obj):
    """The name the caller's code binds to ``obj`` (found by identity), or None.

    The user asks about "x", not about "the source": the nearest frame outside nbtape
    says which of its names points at this very object. A name of the notebook or
    module comes first, so a helper's parameter (``def show(tape, target, source)``)
    does not hide the variable the user passed to it.
    """
    f = next(_user_frames(), None)
    if f is None:
        return None
    for scope in (f.f_globals, f.f_locals):
        names = [k for k, v in list(scope.items()) if v is obj and not k.startswith("_")]
        if names:
            own = obj.name if isinstance(obj, Variable) else None
            return own if own in names else names[0]
    return None


def _unused(tape, ops, source, target, src, name):
    """Reasons when the target was recorded on this tape without ever using the source."""
    if not tape.tracks(target._id) or source.dtype.kind not in "fc":
        return []
    if isinstance(source, Variable) and (not source.trainable
                                         or not tape.watch_accessed_variables):
        return []
    sid = source._id
    if any(n.kind == "stop_recording" and n.id == sid for n in tape.notes):
        return []
    if any(sid in op.all_ids for op in ops):
        return []                     # used but not followed: the unwatched reasons say why
    who = f"`{name}`" if name else src
    return [f"the target was computed on this tape without using {who}: nothing recorded "
            f"reads {who}, so the target does not depend on it and None is the right answer "
            "(pass unconnected_gradients='zero' to get zeros instead)."]


def _rebound(ops, sid, name):
    """``(reason, name)`` when the source is a new object made on the tape by `x = x + ...`."""
    made = next((op for op in ops if sid in op.out_ids), None)
    if made is None or not made.where:
        return None
    line = user_line.source_line(made.where)
    m = re.match(r"(\w+)\s*([-+*/@%]|//|\*\*)?=(?!=)(.*)", line)
    if not m or not (m.group(2) or re.search(rf"\b{m.group(1)}\b", m.group(3))):
        return None
    lhs = m.group(1)
    if name is not None and name != lhs:
        return None
    return (f"`{lhs}` was rebound at {user_line.describe(made.where)} ({line}): `{lhs}` now names "
            f"a new tensor made from the old `{lhs}`, and the target was computed from the "
            "old object, not from this one.", lhs)


def _unwatched_reasons(tape, source, src, name=None):
    if isinstance(source, Variable):
        if not source.trainable:
            return [f"{src} was created with trainable=False, and tapes watch only "
                    "trainable variables automatically."]
        paused = [n.where for n in tape.notes
                  if n.kind == "stop_recording" and n.id == source._id]
        if paused:
            return [f"{src} was read only inside tape.stop_recording() (at "
                    f"{user_line.describe(paused[0])}{_code(paused[0])}), where nothing is recorded."]
        if not tape.watch_accessed_variables:
            return [f"the tape was created with watch_accessed_variables=False and "
                    f"{src} was never passed to tape.watch()."]
        return [f"{src} was not read while the tape was recording, so nothing on the tape "
                "depends on it."]
    x = name or "x"
    who = f"`{name}`" if name else "the source"
    rebinding = name and _rebinding_line(name)
    if rebinding:
        where, line = rebinding
        return [f"{who} is an nt.Tensor that this tape never watched, and {user_line.describe(where)} "
                f"({line}) rebinds `{x}` to a new Tensor made from its old value: if `{x}` was a "
                f"Variable, that line replaced it, and the tape has no Variable to watch."]
    return [f"{who} is an nt.Tensor that this tape never watched: tensors (constants "
            f"and results computed outside the tape) are followed only after tape.watch({x}); "
            "nt.Variable reads are watched automatically."]


def _unwatched_fix(tape, source, name=None):
    if isinstance(source, Variable):
        if not source.trainable or not tape.watch_accessed_variables:
            return f"call tape.watch({name or 'v'}) inside the tape before using it."
        return f"compute the target from {name or 'the variable'} inside the tape's with block."
    x = name or "x"
    if name and _rebinding_line(name):
        return (f"change the Variable in place with {x}.assign_add(...) (or assign, assign_sub) "
                f"instead of rebinding `{x}`, so that it stays the Variable the tape watches.")
    return f"call tape.watch({x}) before computing with {x} inside the tape, or make it an nt.Variable."


def _breaks(tape, ops, reach, source, target, src):
    """Reasons, from the tape's ops and notes, why the path from source stops short.

    A value that stops being recorded cannot be followed to the target, so these
    are the places where something computed from the source left the tape.
    """
    stops, assigns, paused, escapes, casts = [], [], [], [], []
    for op in ops:
        if op.rule.stop and any(i in reach for i in op.in_ids if i is not None):
            stops.append(f"nt.stop_gradient at {user_line.describe(op.where)}"
                         f"{_code(op.where)} blocks the gradient on purpose.")
    for kind, i, where, detail in tape.notes:
        at = user_line.describe(where) + _code(where)
        if kind == "assign":
            how, sid = detail
            if sid is not None and sid in reach:
                assigns.append(f"{how} at {at} copied a value computed from {src} into a "
                               "variable; assignments are not differentiable, so later reads "
                               "of that variable start a new leaf.")
        elif i not in reach:
            continue
        elif kind == "dtype":
            name, dtype = detail[:2]
            casts.append(f"a value computed from {src} became {dtype} (an integer or bool "
                         f"dtype) through {name} at {at}: integer and bool values are never "
                         "differentiable, so the tape stops following it there (keep it a "
                         "float; np.round and np.floor give rounded floats).")
        elif kind == "escape":
            escapes.append(f"a value computed from {src} left the tape through {detail} at "
                           f"{at}: from there it is a plain value the tape cannot "
                           "follow (keep it a tensor; np.stack/np.concatenate build arrays "
                           "from tensors).")
        elif kind == "stop_recording":
            paused.append(f"{detail} used a value computed from {src} inside "
                          f"tape.stop_recording() at {at}: nothing there is recorded.")
    reasons = list(dict.fromkeys(stops + assigns + paused + casts + escapes))   # each once
    watched = tape.watched.get(source._id)
    if watched and isinstance(target, Tensor) and target._id < watched.serial:
        reasons.append(f"{src} was watched at {user_line.describe(watched.where)}, after the target "
                       "was computed: tape.watch(x) must come before the operations that use x.")
    if target.dtype.kind not in "fc":
        reasons.append(f"the target has dtype {target.dtype}, which is not differentiable.")
    if not reasons and not tape.tracks(target):
        reasons.append("the target was not recorded by this tape: it was computed outside the "
                       "tape's `with` block, or only from values the tape does not watch.")
    return reasons


def _escapes(tape, reach, tid, src):
    """Values computed from the source that left the tape on the way (``math.exp(v[0])``):
    if one came back as a plain number, the gradient misses its share."""
    return list(dict.fromkeys(
        f"a value computed from {src} also left the tape through {detail} at "
        f"{user_line.describe(where)}{_code(where)}: what was computed from that plain value "
        "is a constant to the tape, so if it flows into the target, its share of the "
        "gradient is missing (keep it a tensor: np.exp instead of math.exp, no float() or "
        "np.asarray on the way)."
        for kind, i, where, detail in tape.notes if kind == "escape" and i in reach and i != tid))


def _code(where):
    line = user_line.source_line(where)
    return f" ({line})" if line else ""
