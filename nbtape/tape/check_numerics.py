"""``nt.check_numerics()``: stop at the first op that makes a NaN or inf.

Inside the ``with`` block a listener (a ``Recorder``, core/recorder.py) sits on the
recording stack and looks at every op's output: the first one holding a NaN or inf
that its inputs did not hold raises ``NumericsError`` naming the op, the user's line,
the element, the local values and the pattern (numerics.py).  A gradient asked for
inside the block runs its reverse pass on tensors (as any pass with a recorder
outside does), so the listener sees the backward ops too, and says which forward op's
derivative made the value.  Off by default: it costs a check per op.
"""
import sys

import numpy as np

from ..core.state import pop_recorder, push_recorder
from ..core.recorder import Listener
from ..core.tensor import Tensor, TensorLike
from .backward import step_in_progress
from ..diagnostics import user_line
from ..diagnostics.errors import NumericsError, shown_from_user, warn_user
from .nan_patterns import backward_pattern, forward_pattern
from .numerics import Birth, explain_nonfinite, finite, first_bad, nonfinite_results, value_at


class _Checking(Listener):
    """The listener ``check_numerics`` puts on the stack (a Recorder that records
    nothing and raises at the first op whose output turns non-finite)."""

    def record(self, rule, args, kwargs, operands, ids, outs):
        for out in (outs if rule.multi else (outs,)):
            value = out._value if type(out) is Tensor else out
            if finite(value):
                continue
            ins = [a._value if isinstance(a, Tensor) else a for a in operands]
            if not all(finite(v) for v in _plain_operands(args, kwargs, ins)):
                continue        # carried in, not born here (a -np.inf of the user's too)
            raise shown_from_user(NumericsError(_message(rule, ins, value)))


def _tangent_in_progress():
    """The name of the rule whose tangent (JVP) an accumulator computes on this thread now
    (the innermost), or None: the error names that derivative, not an op inside its rule.
    (Found by the frame of ``forward.call_jvp``: forward imports this module.)

    >>> _tangent_in_progress() is None
    True
    """
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "call_jvp" and f.f_globals.get("__name__") == _FORWARD:
            return f.f_locals["rule"].name
        f = f.f_back
    return None


_FORWARD = __name__.rsplit(".", 1)[0] + ".forward"


def _plain_operands(args, kwargs, ins):
    """The values an op was given: its tensor operands' arrays and the plain numbers and
    arrays among its arguments (``np.where(mask, x, -np.inf)``'s ``-np.inf`` is an input,
    though no tensor).

    >>> [float(v) for v in _plain_operands((1.0, [2.0, np.inf]), {"b": 3.0}, [])]
    [1.0, 2.0, inf, 3.0]
    """
    out = [v for v in ins if isinstance(v, (np.ndarray, np.generic))]
    todo = list(args) + list((kwargs or {}).values())
    while todo:
        a = todo.pop(0)
        if isinstance(a, (list, tuple)):
            todo[:0] = list(a)
        elif isinstance(a, Tensor):
            out.append(a._value)
        elif isinstance(a, (float, np.ndarray, np.generic)) and not isinstance(a, bool):
            out.append(a)
    return out


def _message(rule, ins, value):
    index = first_bad(value)
    shape = np.shape(value)
    first = ins[0] if ins else None
    values = {"input": value_at(first, index, shape), "output": value_at(value, index, None)}
    step = step_in_progress()
    where = user_line.caller()
    tangent = _tangent_in_progress() if step is None else None
    if tangent is not None:
        local = [value_at(v, index, shape) for v in ins]
        values = {f"operand {j} of {rule.name}": v for j, v in enumerate(local)}
        values["result"] = value_at(value, index, None)
        pattern, fix = backward_pattern(tangent, {"input": 0.0 if 0.0 in local else None},
                                        False)
        birth = Birth("forward-mode", None, tangent, where, index, values, pattern, fix)
        head = (f"nt.check_numerics: {rule.name}, computing the derivative of {tangent} in "
                "forward mode (its tangent), made a NaN or inf from finite values")
    elif step is None:
        pattern, fix = forward_pattern(rule.name, values)
        birth = Birth("forward", None, rule.name, where, index, values, pattern, fix)
        head = f"nt.check_numerics: {rule.name} made a NaN or inf from finite inputs"
    else:
        name, op_where = step
        local = [value_at(v, index, shape) for v in ins]
        values = {f"operand {j} of {rule.name}": v for j, v in enumerate(local)}
        values["result"] = value_at(value, index, None)
        pattern, fix = backward_pattern(name, {"input": 0.0 if 0.0 in local else None}, False)
        birth = Birth("backward", None, name, op_where, index, values, pattern, fix)
        head = (f"nt.check_numerics: {rule.name}, computing the derivative of {name} in the "
                f"backward pass, made a NaN or inf from finite values (in the gradient asked "
                f"for at {user_line.describe(where)})")
    return head + "; " + birth.story()


def say_nonfinite(text, values):
    """Say ``text`` about non-finite ``values`` the way numpy's own error state says
    invalid values (NaN) or overflows (inf only): a warning at the user's line (numpy's
    default), nothing under ``np.errstate(invalid="ignore")``, a ``NumericsError``
    under ``"raise"``: a user who silenced numpy's NaN warnings hears none from nbtape.

    >>> import warnings
    >>> with np.errstate(invalid="ignore"), warnings.catch_warnings():
    ...     warnings.simplefilter("error")
    ...     say_nonfinite("quiet", [np.array([np.nan])])
    """
    nan = any(np.isnan(getattr(v, "_value", v)).any() for v in values)
    mode = np.geterr()["invalid" if nan else "over"]
    if mode == "ignore":
        return
    if mode == "raise":
        raise shown_from_user(NumericsError(text))
    warn_user(text, RuntimeWarning)


def say_where_born(records, seeds, targets, sources, results, what="gradient"):
    """Say (``say_nonfinite``) that some of ``results`` (a pass's, against ``sources``)
    are not finite and where the first NaN or inf was born; return the ``Birth`` (or
    None).  ``seeds`` None is a Jacobian's: its rows add up to the gradient of the sum.

    >>> import nbtape as nt
    >>> say_where_born(None, {}, [], [], [nt.constant(1.0)]) is None
    True
    """
    bad = nonfinite_results(results)
    if not bad:
        return None
    if seeds is None:
        seeds = {t._id: np.ones_like(t._value) for t in targets
                 if isinstance(t, TensorLike) and t.dtype.kind in "fc"}
    text, birth = explain_nonfinite(records, seeds, targets, sources, results, bad, what)
    say_nonfinite(text, [results[k] for k in bad])
    return birth


class check_numerics:
    """Context manager: raise at the first op, forward or backward, whose output has a
    NaN or inf that its inputs did not have.

    >>> import numpy as np, nbtape as nt
    >>> x = nt.constant(np.array([1.0, 0.0]))
    >>> with nt.check_numerics():
    ...     y = np.log(x)                       # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NumericsError: nt.check_numerics: np.log made a NaN or inf from finite inputs; ...
    """

    __slots__ = ("_listener",)

    def __enter__(self):
        self._listener = _Checking()
        push_recorder(self._listener)
        return self

    def __exit__(self, *exc):
        pop_recorder(self._listener)
        return False
