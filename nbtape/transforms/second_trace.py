"""The checks that trace a step a second time: frozen draws and values shown as text.

``nt.function``'s first trace of a signature may hold a constant that would be right
only for this call: numbers drawn from a generator nbtape cannot record (one made inside
the step, one a helper keeps, Python's ``random``), or a number parsed back out of a
traced value's text (``print``/``repr`` is the one way out of a trace that is not refused
on the spot).  Neither shows in one trace, so the step is traced once more on the same
arguments, its prints hidden and its variables as the first trace found them: a
constant that differs between the two traces is refused, naming its line
(``check_draws``; ``check_shown`` has the second trace show other values as text).  A
draw that gave the same numbers twice is refused by the generator's state alone, and
one more trace that watches that state names the lines around it (``_draw_line``).

``f`` below is the ``Function`` being traced: its ``trace_once(args, kwargs, quiet=,
alter=, watch=)`` runs one trace and its ``python_function`` is the step.
"""
import inspect

import numpy as np

from ..diagnostics.errors import shown_from_user
from ..diagnostics.user_line import describe as describe_where, source_line
from .randomness import drawn, drawn_from, set_state
from .trace import Slot, TracingError


def check_draws(f, tracer, before, args, kwargs):
    """Refuse the trace if it froze a random draw (or another value that changes from
    call to call).  A draw from a generator the search reaches shows in its state; one
    from a generator it cannot reach (made inside the function, kept by a helper
    module) shows only in the program: when the program holds arrays or numbers made
    while it ran, the function is traced once more on the same inputs, its variables
    and prints left as the first trace left them, and a constant that differs between
    the two traces is refused at its line."""
    source, moved = drawn(before), drawn_from(before)
    if not source and not _suspicious(tracer.steps, f.python_function):
        return
    diff = _retrace_differs(f, tracer, args, kwargs)
    if diff is None and not source:
        return
    for g, state in before:
        set_state(g, state)
    step, what = diff if diff is not None else (None, None)
    at = _at(step)
    if what is None:
        why = f"it drew random numbers from {source}" + _draw_line(
            f, tracer, before, moved, args, kwargs)
    else:
        why = (f"run twice on the same inputs, it computed another {what}{at}: random "
               "numbers from a generator nbtape cannot record (np.random.default_rng() "
               "inside the function, a Generator a helper keeps, Python's random module) "
               "or another value that changes from call to call")
    tracer.restore()
    raise shown_from_user(TracingError(
        f"nt.function cannot trace this function: {why}, and a replay would reuse this "
        "first call's numbers for good (a dropout mask or noise drawn once). Instead, "
        "draw them with an nbtape generator made once outside the function "
        "(rng = nt.random.Generator(seed); rng.random(x.shape) inside, or "
        "nt.layers.Dropout(rate, seed=...)), whose draws every call makes afresh, or draw "
        "them outside and pass them in as an argument (step(x, rng.random(x.shape) < 0.5)). "
        "The variables were left as they were before this call."))


def _retrace(f, tracer, args, kwargs, alter=False, watch=None):
    """Trace ``f`` once more on the same arguments (prints hidden, the variables as the
    first trace found them, and left as it left them): the new tracer, or None when
    that trace failed."""
    first = [(v, v._tensor) for v, _ in tracer.before.values()]
    tracer.restore()
    try:
        second, _ = f.trace_once(args, kwargs, quiet=True, alter=alter, watch=watch)
        second.restore()
    except Exception:   # the same call failed the second time: it is not the same call
        second = None
    for v, t in first:
        v._tensor = t
    return second


def _retrace_differs(f, tracer, args, kwargs, alter=False):
    """``(step, what)`` of the first difference between ``tracer``'s program and a
    second trace's (``_retrace``), or None when the two are the same."""
    second = _retrace(f, tracer, args, kwargs, alter=alter)
    if second is None:
        return None, "result (its second run failed)"
    return _first_difference(tracer.steps, second.steps)


def _draw_line(f, tracer, before, gen, args, kwargs):
    """Where the numbers of a draw that repeated in both traces (a small sample can)
    enter the program, as words for the refusal: one more trace watches the generator
    ``gen`` that moved and notes the first call after its state moved (``Tracer.watch``)."""
    if gen is False:
        return ""
    state = next(s for g, s in before if g is gen)
    set_state(gen, state)
    second = _retrace(f, tracer, args, kwargs, watch=(gen, state))
    for g, s in before:
        set_state(g, s)
    if second is None or second.drawn_at is None:
        return ""
    after, before_line = second.drawn_at
    if after is None and before_line is None:
        return ""
    if after is None:
        return f", drawn before {_line_words(before_line)}, its first numpy call after the draw"
    if before_line is None:
        return f", drawn after {_line_words(after)}, its last numpy call"
    if after[:2] == before_line[:2]:        # the draw and its use on one line
        return f", drawn at {_line_words(after)}"
    return f", drawn between {_line_words(after)} and {_line_words(before_line)}"


def _line_words(where):
    line = source_line(where)
    return describe_where(where) + (f" (`{line.strip()}`)" if line else "")


def _at(step):
    return "" if step is None or step.where is None else f" at {_line_words(step.where)}"


def check_shown(f, tracer, args, kwargs):
    """Refuse the trace if a value of the program shown as text (``print(loss)``,
    ``repr``, ``str``: the tracer's ``shown``) came back into it as a number.  Text is
    the one way out of a trace that is not refused on the spot (a print inside a step is
    fine, as in TensorFlow): the function is traced once more with other values shown
    (``Tracer.note_shown``), and a constant that differs then was parsed out of the
    text, which a replay would freeze at this first call's value."""
    if tracer.shown is None:
        return
    diff = _retrace_differs(f, tracer, args, kwargs, alter=True)
    if diff is None:
        return
    tracer.restore()
    step, what = diff
    raise shown_from_user(TracingError(
        f"nt.function cannot trace this function: a value of the traced call was shown "
        f"as text at {_line_words(tracer.shown)}, and with another value shown there the function "
        f"computed another {what}{_at(step)}: the text came back into the computation as "
        "a number (or a plain array), which a replay would freeze at this first call's "
        "value. Instead, compute on the tensor itself (numpy functions and operators "
        "on tensors are traced), and print or parse values outside the function, from "
        "what it returns. The variables were left as they were before this call."))


def _literals(fn, out=None):
    out = set() if out is None else out
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        for k in c.co_consts:
            if inspect.iscode(k):
                stack.append(k)
            elif type(k) in (int, float, complex):
                out.add(k)
    return out


def _suspect(a, lits):
    """Whether the constant ``a`` could be a draw: an array or numpy scalar made while
    the function ran (not one filled with a single value, such as a gradient's seed),
    or a Python float with a draw's many digits that is no literal of the function."""
    t = type(a)
    if t is Slot or a is None or t is bool or t is str:
        return False
    if t is list or t is tuple:
        return any(_suspect(x, lits) for x in a)
    if t is dict:
        return any(_suspect(x, lits) for x in a.values())
    if t is float:
        return a not in lits and len(repr(abs(a))) > 9
    if t is np.ndarray or isinstance(a, np.generic):
        if a.dtype.kind not in "biufc":
            return False
        if a.dtype.kind == "b" or np.size(a) == 0:
            return a.dtype.kind == "b"
        # an array of one value (a seed of ones, a mean's 1/n) is no draw; one number
        # is, unless it is 0 or 1
        first = a.flat[0] if t is np.ndarray else a
        if (np.size(a) > 1 or first in (0, 1)) and np.all(a == first):
            return False
        # nor is 0, 1, 2, ... (np.arange(classes), compared with labels)
        return not (np.size(a) > 2 and np.array_equal(np.ravel(a), np.arange(np.size(a))))
    return False


def _suspicious(steps, fn):
    lits = _literals(fn)
    for step in steps:
        if step[0] == "call":
            if _suspect(step.args, lits) or (step.kwargs and _suspect(step.kwargs, lits)):
                return True
        elif step[0] == "assign" and _suspect(step.src, lits):
            return True
    return False


def _same_constant(a, b):
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is Slot:
        return a.n == b.n
    if ta is list or ta is tuple:
        return len(a) == len(b) and all(_same_constant(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(_same_constant(a[k], b[k]) for k in a)
    if ta is np.ndarray or isinstance(a, np.generic):
        return a.dtype == b.dtype and np.shape(a) == np.shape(b) and np.array_equal(
            a, b, equal_nan=a.dtype.kind in "fc")
    if ta is float or ta is complex:
        return a == b or (a != a and b != b)
    try:
        return bool(a is b or a == b)
    except Exception:
        return False


def _first_difference(steps, others):
    """``(step, what)``: the first step of ``steps`` that ``others`` (a second trace of
    the same call) computes otherwise, or None when the two are the same program."""
    for step, other in zip(steps, others):
        if step[0] != other[0] or (step[0] == "call" and step.name != other.name):
            return step if step[0] == "call" else None, "program (other numpy calls)"
        if step[0] == "call" and not (
                _same_constant(step.args, other.args)
                and _same_constant(step.kwargs, other.kwargs)):
            return step, f"constant in {step.name}"
        if step[0] == "assign" and not _same_constant(step.src, other.src):
            return None, f"update of {step.variable.name}"
    if len(steps) != len(others):
        return None, "program (another number of numpy calls)"
    return None
