"""Why is my gradient NaN?  Where a NaN or inf was born, and the known pattern behind it.

A gradient that comes out NaN or inf gets one warning at the user's line, naming the
source, how many elements, and where the first non-finite value was born: in the
forward pass (the op whose output first held one while its inputs did not), or in the
backward pass (the op whose adjoint contribution first held one while the cotangent
it was given did not), with the local values at that element, the pattern when it is
a known one (0 x inf behind a ``where``, sqrt or log at 0, overflow in ``exp``...) and
the fix.  Finding the birth re-walks the tape, so it costs something only when there
is a non-finite value to explain; the check itself is one pass over the results.
"""
import math

import numpy as np

from ..diagnostics.user_line import describe, source_line
from .nan_patterns import (DATA_FIX, DATA_PATTERN, backward_pattern, forward_pattern, headline,
                           sentence, nan_number)

_all = np.logical_and.reduce
_dot = np.dot
_isfinite = math.isfinite


def finite(value):
    """True when ``value`` (an array, a number or None) holds no NaN and no inf; a value
    of another array library (Dask, CuPy) or a non-float one counts as finite.

    >>> finite(np.array([1.0, 2.0])), finite(np.array([1.0, np.nan])), finite(None)
    (True, False, True)
    >>> finite(np.array([1e200, 1e200]))        # the dot overflows: the exact check decides
    True
    """
    if type(value) is np.ndarray and value.dtype.kind == "f" and value.itemsize <= 8:
        # the usual: a real gradient from the pass.  Its dot with itself is one BLAS call
        # (faster than isfinite().all() at any size, no temporary), and NaN or inf
        # whenever an element is; a finite dot proves every element finite.  When it is
        # not, an overflow of big finite values is told apart by the exact check.  (Its
        # floating-point warning is not shown: float_warnings ignores this module's.)
        if value.ndim == 0:         # a scalar's gradient: math's check, no numpy call
            return _isfinite(value)
        flat = value.reshape(-1)
        if flat.shape[0] <= 32:     # a bias's: Python floats cost less than a BLAS call
            return all(map(_isfinite, flat.tolist()))
        try:
            if _isfinite(_dot(flat, flat)):
                return True
        except (ArithmeticError, RuntimeWarning):   # np.seterr(all="raise"), -W error
            pass
        with np.errstate(all="ignore"):
            return bool(_all(np.isfinite(flat)))
    return _finite_other(value)


_concatenate = np.concatenate


def finite_all(values):
    """True when no array in ``values`` holds a NaN or inf (``finite`` of each).

    Many short gradients (a small network's) are checked together: one concatenation
    and one dot cost less than a check each.  When that says non-finite, the caller
    asks ``finite`` of each to find which.

    >>> finite_all([np.ones(3), np.zeros((2, 2)), np.array(1.0)])
    True
    >>> finite_all([np.ones(3), np.array([0.0, np.inf]), np.array(1.0)])
    False
    """
    if len(values) > 2:
        try:
            small = sum([v.nbytes for v in values]) <= 32768
        except AttributeError:      # (a value of another kind: each is checked alone)
            small = False
        if small:
            try:
                flat = _concatenate(values, axis=None)
            except (TypeError, ValueError):
                flat = None
            if type(flat) is np.ndarray and flat.dtype.kind == "f" and flat.itemsize <= 8:
                try:                # (finite's own test, without its checks of shape)
                    if _isfinite(_dot(flat, flat)):
                        return True
                except (ArithmeticError, RuntimeWarning):
                    pass
            if flat is not None:
                return finite(flat)
    for v in values:
        if not finite(v):
            return False
    return True


def _finite_other(value):
    t = type(value)
    if t is np.ndarray:     # complex, long double (exactly: no trip through a float64)
        if value.dtype.kind not in "fc":
            return True
        return bool(_all(np.isfinite(value), axis=None))
    if t is float or t is np.float64 or t is np.float32:
        return math.isfinite(value)
    if value is None or not isinstance(value, np.generic) or value.dtype.kind not in "fc":
        return True         # lazy or on a device (not computed for a check), or not float
    return bool(np.isfinite(value))


def count(value):
    """How many elements of ``value`` are NaN or inf: ``(nan, inf, size)``.

    >>> count(np.array([1.0, np.nan, np.inf, -np.inf]))
    (1, 2, 4)
    """
    a = np.asarray(value)
    return int(np.isnan(a).sum()), int(np.isinf(a).sum()), int(a.size)


def first_bad(a):
    """The index of the first NaN or inf element of ``a`` (``()`` for a scalar)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return ()
    flat = int(np.flatnonzero(~np.isfinite(a))[0])
    return tuple(int(i) for i in np.unravel_index(flat, a.shape))


def value_at(a, index, shape):
    """``a`` at ``index`` of a result of ``shape`` (``a`` broadcast to it), as a float."""
    if a is None:
        return None
    a = np.asarray(getattr(a, "_value", a))
    try:
        v = np.broadcast_to(a, shape)[index] if shape is not None else a[index]
    except (ValueError, IndexError):
        return None
    return v.item() if hasattr(v, "item") else v


class Birth:
    """Where the first non-finite value of a gradient (or a value) was born.

    ``phase`` is ``"forward"`` or ``"backward"``; ``name`` the op (``"np.sqrt"``),
    ``where`` its user's line, ``index`` the element, ``values`` the local values at
    that element (``{"input": .., "output": .., "cotangent": .., "contribution": ..}``,
    those known), ``pattern`` what happened and ``fix`` what to do.
    """

    def __init__(self, phase, position, name, where, index, values, pattern, fix):
        self.phase, self.position, self.name, self.where = phase, position, name, where
        self.index, self.values, self.pattern, self.fix = index, values, pattern, fix

    def line(self):
        """'line 3 of a notebook cell: y = np.sqrt(x)' for the op."""
        text = source_line(self.where)
        return describe(self.where) + (f": {text}" if text else "")

    def story(self):
        """The birth in a few sentences, with the local values and the fix."""
        if self.phase == "seed":
            at = f" at element {list(self.index)}" if self.index else ""
            return (f"it came in with output_gradients, the seed you passed to the gradient "
                    f"call{at} ({nan_number(self.values.get('seed'))}): the values you pass "
                    f"weight the gradient, so a NaN or inf among them is in it too. "
                    f"Fix: {self.fix}.")
        if self.phase == "data":
            vals = ", ".join(f"{k} = {nan_number(v)}" for k, v in self.values.items()
                             if v is not None and k != "operand")
            at = f" at element {list(self.index)}" if self.index else ""
            op = f"op {self.position}, " if self.position is not None else ""
            return (f"it came in with the data: operand {self.values.get('operand')} of "
                    f"{self.name} ({op}{self.line()}) holds it{at}"
                    + (f" ({vals})" if vals else "") + f". {sentence(self.pattern)}."
                    + (f" Fix: {self.fix}." if self.fix else ""))
        at = f"element {list(self.index)} of " if self.index else ""
        vals = ", ".join(f"{k} = {nan_number(v)}" for k, v in self.values.items()
                         if v is not None)
        op = f"op {self.position}, " if self.position is not None else ""
        part, of = {"forward": ("the forward pass", "output"),
                    "forward-mode": ("forward mode", "tangent")}.get(
            self.phase, (f"the {self.phase} pass", "adjoint"))
        text = (f"it was born in {part} at {self.name} ({op}"
                f"{self.line()}), {at}its {of}"
                + (f" ({vals})" if vals else "") + f". {sentence(self.pattern)}.")
        return text + (f" Fix: {self.fix}." if self.fix else "")

    def __repr__(self):
        return f"<Birth {self.phase} {self.name} op {self.position} {list(self.index)}>"


def forward_birth(records):
    """The first op of ``records`` (a tape's ``Records``) whose kept output has a NaN or
    inf while the inputs it kept are finite; None if none is found (or outputs were not
    kept, as on a long tape).

    >>> import nbtape as nt
    >>> x = nt.Variable(np.float32(100.0))
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = np.log(1 + np.exp(x))
    >>> forward_birth(tape.op_records).name
    'np.exp'
    """
    for k in range(len(records)):
        op = records.view(k)
        out = op.out
        if out is None or isinstance(out, tuple):
            continue
        value = getattr(out, "_value", out)
        if finite(value):
            continue
        args = op.args or ()
        if not all(finite(getattr(a, "_value", a)) for a in args
                   if isinstance(a, (np.ndarray, np.generic, float)) or hasattr(a, "_value")):
            continue
        index = first_bad(value)
        shape = np.shape(value)
        first = next((a for a in args if hasattr(a, "shape") or isinstance(a, float)), None)
        values = {"input": value_at(first, index, shape),
                  "output": value_at(value, index, None)}
        pattern, fix = forward_pattern(op.name, values)
        return Birth("forward", k, op.name, op.where, index, values, pattern, fix)
    return None


def _carried(op, index, shape, made):
    """``(position, value, is data)`` of the first operand of ``op`` that holds a NaN or
    inf at ``index`` of a result of ``shape`` (the whole operand when it does not
    broadcast to it), or None.  ``is data``: no op of the tape made it (``made``, the
    ids of the tensors ops made), so it came in with the user's values."""
    args = op.args or ()
    ids = op.in_ids or ()
    aligned = len(ids) == len(args)     # positional operands: one id per argument
    for p, a in enumerate(args):
        raw = getattr(a, "_value", a)
        if not isinstance(raw, (np.ndarray, np.generic, float)):
            continue
        v = value_at(raw, index, shape)
        bad = (not math.isfinite(v)) if isinstance(v, float) else (
            v is None and not finite(raw))
        if bad:
            i = getattr(a, "_id", None)
            if i is None and aligned:
                i = ids[p]
            return p, v, i is None or i not in made
    return None


def _data_birth(op, k, index, shape, p, v, g, gv):
    kind = "an inf" if isinstance(v, float) and v == v else "a NaN"
    values = {"operand": p, "value": v,
              "cotangent": None if isinstance(g, (tuple, list)) or np.ndim(g) > len(shape)
              else value_at(g, index, shape),
              "contribution": value_at(gv, index, None)}
    return Birth("data", k, op.name, op.where, index, values,
                 DATA_PATTERN.replace("a NaN", kind, 1), DATA_FIX)


def backward_birth(records, seeds, source_ids):
    """The first op the reverse pass visits (from ``seeds``, ``{id: adjoint}``, back to
    ``source_ids``) whose adjoint contribution to an operand has a NaN or inf where the
    cotangent it was given has none; None if the pass makes none.

    >>> import nbtape as nt
    >>> x = nt.Variable(np.array([0.0, 4.0]))
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))
    >>> b = backward_birth(tape.op_records, {y._id: np.float64(1.0)}, [x._id])
    >>> b.name, b.index, b.values["cotangent"]
    ('np.sqrt', (0,), 0.0)
    """
    from .backward import forward_reach, raw_output, reverse_step, take_adjoint
    positions, reach = forward_reach(records, source_ids)
    adj = dict(seeds)
    forward = forward_birth(records)
    made = set()
    for k in range(len(records)):
        made.update(i for i in (records.view(k).out_ids or ()) if i is not None)
    for k in reversed(positions):
        op = records.view(k)
        g = take_adjoint(adj, op.rule, op.record, ())
        if g is None:
            continue
        if op.rule.multi:   # a several-output op (eigh): zeros for the outputs unused
            ans = op.ans
            if ans is None:
                continue
            ans = raw_output(ans)
            g = [x if x is not None else np.zeros_like(a) for x, a in zip(g, ans)]
            g = type(ans)(*g) if hasattr(ans, "_fields") else type(ans)(g)
        needs = [i is not None and i in reach for i in op.in_ids]
        if not any(needs):
            continue
        grads = reverse_step(op, g, needs)
        g_ok = all(map(finite, g)) if op.rule.multi else finite(g)
        for p, (i, gi) in enumerate(zip(op.in_ids, grads)):
            if gi is None:
                continue
            gv = getattr(gi, "_value", gi)
            if g_ok and not finite(gv):
                index = first_bad(gv)
                shape = np.shape(gv)
                args = op.args or ()
                x = args[p] if p < len(args) else None
                carried = _carried(op, index, shape, made)
                if carried is not None:
                    if carried[2]:          # the user's own values brought it
                        return _data_birth(op, k, index, shape, carried[0], carried[1],
                                           g, gv)
                    adj[i] = gi if i not in adj else adj[i] + gi
                    continue        # a NaN the forward pass brought here: not born here
                values = {"input": carried,
                          "output": None if op.rule.multi else value_at(
                              op.ans if op.ans is not None else op.out, index, shape),
                          "cotangent": None if op.rule.multi or np.ndim(g) > len(shape)
                          else value_at(g, index, shape),
                          "contribution": value_at(gv, index, None)}
                pattern, fix = backward_pattern(op.name, values,
                                                 forward is not None and forward.position == k)
                return Birth("backward", k, op.name, op.where, index, values, pattern, fix)
            adj[i] = gi if i not in adj else adj[i] + gi
    return None


def nonfinite_message(what, value, birth, forward_already, then=None, result="gradient"):
    """The one warning's text: a first line that says it all in short (``headline``),
    then the detail: ``what`` (the source) has N non-finite elements, and why (``then``:
    a second birth, the backward pass's, after the forward one said first)."""
    nan, inf, size = count(value)
    kinds = " and ".join(s for s in (f"{nan} NaN" if nan else "", f"{inf} inf" if inf else "")
                         if s)
    first = headline(kinds, result, what, birth) + "\n"
    head = first + f"The {result} with respect to {what} has {kinds} element(s) (of {size})"
    if forward_already:
        head += " (the target's own value is not finite either: the forward pass already " \
                "made a NaN or inf)"
    if birth is None:
        return (head + ". nbtape could not find where it was born (this tape did not keep "
                "the values it would need): run the computation inside "
                "`with nt.check_numerics():` to stop at the op that makes it.")
    return head + "; " + told(birth, then)


def seed_birth(seeds):
    """The first non-finite value among the seeds of a pass (``output_gradients``), or None.

    >>> seed_birth({1: np.array([np.nan, 1.0])}).index
    (0,)
    """
    for seed in seeds.values():
        value = getattr(seed, "_value", seed)
        if not finite(value):
            index = first_bad(value)
            kind = "the NaN" if np.isnan(np.asarray(value)[index]) else "the inf"
            return Birth("seed", None, "output_gradients", None, index,
                         {"seed": value_at(value, index, None)},
                         f"{kind} came in with output_gradients",
                         "check the output_gradients you pass "
                         "(np.isfinite(output_gradients).all())")
    return None


def _label(source, k, n):
    name = getattr(source, "name", None)
    if name and name != "Variable":         # "Variable" is every unnamed one's name
        return f"`{name}`"
    shape = getattr(source, "shape", None)
    return f"the source{f' {k}' if n > 1 else ''} (shape {shape})"


def nonfinite_results(results):
    """Positions of the results (tensors, arrays or None) that hold a NaN or inf: one
    pass over each, and nothing else on the common path."""
    bad = []
    for k, r in enumerate(results):
        if r is not None and not finite(getattr(r, "_value", r)):
            bad.append(k)
    return bad


def explain_nonfinite(records, seeds, targets, sources, results, bad, result="gradient"):
    """The warning's text for the non-finite results at positions ``bad`` and the
    ``Birth`` found (None if none): the backward pass is searched first (with the
    tape's records still whole), then the forward values.

    >>> import nbtape as nt
    >>> x = nt.Variable(np.float32(100.0), name="x")
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = np.log(1 + np.exp(x))
    >>> g = tape.gradient(y, x)          # doctest: +SKIP
    >>> text, birth = explain_nonfinite(tape.op_records, {y._id: np.float32(1)}, [y], [x],
    ...                                 [nt.constant(np.float32(np.nan))], [0])
    >>> birth.name, text[:50]
    ('np.exp', '1 NaN in the gradient of `x`, born at np.exp (line')
    """
    forward_bad = any(not finite(getattr(t, "_value", t)) for t in targets)
    ids = [sources[k]._id for k in bad]
    birth, then = find_births(records, seeds, ids, forward_bad)
    first = bad[0]
    text = nonfinite_message(_label(sources[first], first, len(sources)),
                             getattr(results[first], "_value", results[first]), birth,
                             forward_bad, then, result)
    if len(bad) > 1:
        text += (f" ({len(bad) - 1} more source(s) have non-finite gradients; the first "
                 "birth explains them too, or fix it and ask again.)")
    # the tape keeps the birth in the backward pass when there is one (the picture marks
    # the op whose step made the gradient's NaN); the text told the forward one first
    return text, then or birth


def find_births(records, seeds, source_ids, forward_bad):
    """``(birth, then)``: what to say first and, after it, the backward pass's birth.

    A seed the user gave that is not finite is the cause; a NaN that came in with the
    user's data is; else, when the target itself is not finite, the forward pass made
    it (said first, in a learner's words), then the backward pass's birth; else the
    backward pass's (a NaN the forward pass carried into a step is not born there).
    """
    birth = seed_birth(seeds)
    if birth is not None:
        return birth, None
    back = backward_birth(records, seeds, source_ids)
    if back is not None and back.phase == "data":
        return back, None
    forward = forward_birth(records) if forward_bad else None
    if forward is not None:
        return forward, back
    return back, None


def told(birth, then):
    """The story of ``birth``, and of ``then`` after it."""
    text = birth.story()
    if then is not None:
        text += " Then " + then.story().replace("it was born", "a NaN or inf was born", 1)
    return text
