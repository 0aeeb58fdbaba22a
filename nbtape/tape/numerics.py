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

# op names whose derivative is infinite at 0, with what to say and what to do
_AT_ZERO = {
    "np.sqrt": ("sqrt at 0: the derivative 1/(2*sqrt(x)) is infinite at x = 0",
                "keep the square root's input away from 0 where you take its gradient, "
                "e.g. np.sqrt(x + 1e-12), or the double where: "
                "np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0)"),
    "np.cbrt": ("cbrt at 0: the derivative is infinite at x = 0",
                "keep the input away from 0, or use the double where"),
    "np.log": ("log at 0: the derivative 1/x is infinite at x = 0",
               "keep the logarithm's input positive (np.log(x + eps)), or use np.log1p / "
               "np.logaddexp for log(1 + ...)"),
    "np.log2": ("log2 at 0: the derivative is infinite at x = 0", "keep the input positive"),
    "np.log10": ("log10 at 0: the derivative is infinite at x = 0", "keep the input positive"),
    "np.true_divide": ("division by 0: the derivative of a / b is infinite where b = 0",
                       "keep the divisor away from 0 (b + eps), or mask it with the double "
                       "where"),
    "np.divide": ("division by 0: the derivative of a / b is infinite where b = 0",
                  "keep the divisor away from 0 (b + eps), or mask it with the double where"),
    "np.reciprocal": ("1/x at 0: the derivative is infinite at x = 0",
                      "keep the input away from 0"),
    "np.power": ("a power at 0: the derivative of x**p with p < 1 is infinite at x = 0",
                 "keep the base away from 0 (x + eps), or use the double where"),
    "np.arcsin": ("arcsin at +-1: its derivative is infinite there", "clip the input to "
                  "(-1 + eps, 1 - eps)"),
    "np.arccos": ("arccos at +-1: its derivative is infinite there", "clip the input to "
                  "(-1 + eps, 1 - eps)"),
    "np.linalg.norm": ("a norm at 0: the derivative x/|x| is 0/0 at x = 0",
                       "use np.sqrt(np.sum(x**2) + eps) where x can be 0"),
    "np.linalg.vector_norm": ("a norm at 0: the derivative x/|x| is 0/0 at x = 0",
                              "use np.sqrt(np.sum(x**2) + eps) where x can be 0"),
}
_OVERFLOW = {
    "np.exp": ("overflow in exp: e^x is inf past x = 88.7 in float32 (709.8 in float64)",
               "compute log(1 + e^x) as np.logaddexp(0, x), a softmax or log-sum-exp with "
               "nt.nn.softmax / nt.nn.logsumexp (they subtract the maximum first), or give "
               "the function a custom gradient that stays finite"),
    "np.expm1": ("overflow in expm1", "rewrite it so that the exponent stays small"),
    "np.exp2": ("overflow in exp2", "rewrite it so that the exponent stays small"),
    "np.cosh": ("overflow in cosh", "rewrite it with np.logaddexp"),
    "np.sinh": ("overflow in sinh", "rewrite it with np.logaddexp"),
    "np.power": ("overflow in a power", "rescale before raising to the power"),
    "np.square": ("overflow in a square", "rescale before squaring"),
    "np.multiply": ("overflow in a product", "rescale the factors"),
}
_ZERO_TIMES_INF = (
    "0 x inf: the cotangent reaching this op was 0 at this element (a branch that "
    "np.where, a mask, np.clip or np.nan_to_num throws away still has its gradient "
    "taken), and the op's local derivative there is infinite, so the chain rule gives "
    "0 x inf = NaN")
_ZERO_TIMES_INF_FIX = (
    "make the discarded branch safe where it is discarded (the \"double where\"): "
    "np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0) instead of "
    "np.where(x > 0, np.sqrt(x), 0.0)")


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
        at = f"element {list(self.index)} of " if self.index else ""
        vals = ", ".join(f"{k} = {_number(v)}" for k, v in self.values.items()
                         if v is not None)
        op = f"op {self.position}, " if self.position is not None else ""
        text = (f"it was born in the {self.phase} pass at {self.name} ({op}"
                f"{self.line()}), {at}its {'output' if self.phase == 'forward' else 'adjoint'}"
                + (f" ({vals})" if vals else "") + f". {_sentence(self.pattern)}.")
        return text + (f" Fix: {self.fix}." if self.fix else "")

    def __repr__(self):
        return f"<Birth {self.phase} {self.name} op {self.position} {list(self.index)}>"


def _sentence(text):
    """``text`` as the start of a sentence: capitalised, unless it starts with code (an
    op's name such as ``np.log`` keeps its spelling).

    >>> _sentence("sqrt at 0"), _sentence("np.log's derivative"), _sentence("custom_gradient(f)")
    ('Sqrt at 0', "np.log's derivative", 'custom_gradient(f)')
    """
    first = text.split(" ", 1)[0]
    if any(c in first for c in "._(") or not text:
        return text
    return text[0].upper() + text[1:]


def _number(v):
    if isinstance(v, float):
        if math.isfinite(v):
            return repr(v)
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    return repr(v)


def backward_pattern(name, values, forward_bad):
    g, contribution, x, out = (values.get("cotangent"), values.get("contribution"),
                               values.get("input"), values.get("output"))
    if name.startswith("custom_gradient") or name.startswith("recompute_grad"):
        return (f"the gradient function of {name} returned a non-finite value",
                "check the function your custom gradient returns at this element")
    if g == 0 and contribution is not None and contribution != contribution:
        if forward_bad and name in _OVERFLOW:
            return (_ZERO_TIMES_INF + f"; here the forward value itself overflowed "
                    f"({_OVERFLOW[name][0]})", _OVERFLOW[name][1])
        return _ZERO_TIMES_INF, _ZERO_TIMES_INF_FIX
    zero = (x == 0 if x is not None else out == 0 if out is not None else False)
    if name in _AT_ZERO and (zero or name.startswith(("np.arcs", "np.arcc"))
                             or "divide" in name or "norm" in name):
        return _AT_ZERO[name]
    if name in _OVERFLOW:
        return _OVERFLOW[name]
    return (f"{name}'s derivative is not finite at this element", None)


def forward_pattern(name, values):
    x, out = values.get("input"), values.get("output")
    if name in _OVERFLOW and out is not None and out in (math.inf, -math.inf):
        return _OVERFLOW[name]
    if name in ("np.log", "np.log2", "np.log10") and x == 0:
        return ("log of 0 is -inf", "keep the logarithm's input positive")
    if name in ("np.true_divide", "np.divide", "np.reciprocal"):
        return ("a division by 0", "keep the divisor away from 0")
    if name in ("np.subtract", "np.add") and out != out:
        return ("inf - inf: two infinite values cancelled into NaN",
                "find where the infinities came from (an overflow, a log of 0)")
    if name == "np.multiply" and out != out:
        return ("0 x inf in a product", "find where the infinity came from")
    if name in ("np.sqrt", "np.log") and x is not None and x < 0:
        return (f"{name} of a negative number is NaN", "keep the input non-negative")
    return (f"{name} gave a non-finite value from finite inputs", None)


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
    from .backward import forward_reach, reverse_step, take_adjoint
    positions, reach = forward_reach(records, source_ids)
    adj = dict(seeds)
    forward = forward_birth(records)
    for k in reversed(positions):
        op = records.view(k)
        g = take_adjoint(adj, op.rule, op.record, ())
        if g is None:
            continue
        if op.rule.multi:
            continue        # a several-output op passes its adjoints on unchanged in kind
        needs = [i is not None and i in reach for i in op.in_ids]
        if not any(needs):
            continue
        grads = reverse_step(op, g, needs)
        g_ok = finite(g)
        for p, (i, gi) in enumerate(zip(op.in_ids, grads)):
            if gi is None:
                continue
            gv = getattr(gi, "_value", gi)
            if g_ok and not finite(gv):
                index = first_bad(gv)
                shape = np.shape(gv)
                args = op.args or ()
                x = args[p] if p < len(args) else None
                carried = value_at(x, index, shape)
                if isinstance(carried, float) and not math.isfinite(carried):
                    adj[i] = gi if i not in adj else adj[i] + gi
                    continue        # a NaN the forward pass brought here: not born here
                values = {"input": carried,
                          "output": value_at(op.ans if op.ans is not None else op.out,
                                             index, shape),
                          "cotangent": value_at(g, index, shape) if np.ndim(g) <= len(shape)
                          else None,
                          "contribution": value_at(gv, index, None)}
                pattern, fix = backward_pattern(op.name, values,
                                                 forward is not None and forward.position == k)
                return Birth("backward", k, op.name, op.where, index, values, pattern, fix)
            adj[i] = gi if i not in adj else adj[i] + gi
    return None


def nonfinite_message(what, value, birth, forward_already):
    """The one warning's text: ``what`` (the source) has N non-finite elements, and why."""
    nan, inf, size = count(value)
    kinds = " and ".join(s for s in (f"{nan} NaN" if nan else "", f"{inf} inf" if inf else "")
                         if s)
    head = f"The gradient with respect to {what} has {kinds} element(s) (of {size})"
    if forward_already:
        head += " (the target's own value is not finite either: the forward pass already " \
                "made a NaN or inf)"
    if birth is None:
        return (head + ". nbtape could not find where it was born (this tape did not keep "
                "the values it would need): run the computation inside "
                "`with nt.check_numerics():` to stop at the op that makes it.")
    return head + "; " + birth.story()


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


def explain_nonfinite(records, seeds, targets, sources, results, bad):
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
    ('np.exp', 'The gradient with respect to `x` has 1 NaN element')
    """
    forward_bad = any(not finite(getattr(t, "_value", t)) for t in targets)
    ids = [sources[k]._id for k in bad]
    # the backward pass first (a NaN the forward pass carried into a step is not born
    # there); a target that is not finite itself may have made it forward
    birth = backward_birth(records, seeds, ids)
    if birth is None and forward_bad:
        birth = forward_birth(records)
    first = bad[0]
    text = nonfinite_message(_label(sources[first], first, len(sources)),
                             getattr(results[first], "_value", results[first]), birth,
                             forward_bad)
    if len(bad) > 1:
        text += (f" ({len(bad) - 1} more source(s) have non-finite gradients; the first "
                 "birth explains them too, or fix it and ask again.)")
    return text, birth
