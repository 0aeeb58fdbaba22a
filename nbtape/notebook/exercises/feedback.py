"""The words of a check: what is wrong with an answer, never what the answer is.

An exercise's check raises ``NotYet`` with one sentence about the first thing it
finds wrong (which part, the shape it expected, where a gradient goes wrong, what a
finite difference gives, the first op where the learner's tape leaves the
reference's); ``Feedback`` is what the learner reads.  The helpers here turn a
learner's value into a number or an array, or say why it is not one, and compare a
learner's function with the reference on the same inputs, values and gradients.
"""
import contextlib
import warnings
from typing import Callable, NamedTuple, Optional

import numpy as np

import nbtape as nt


class NotYet(Exception):
    """An answer is not right yet; the message says what is wrong (never the answer).

    >>> str(NotYet("`answer` is still None"))
    '`answer` is still None'
    """


class Feedback:
    """A check's verdict: ``passed`` and the sentence to show.

    >>> print(Feedback(False, "`answer` has shape (2,); the exercise asks for (3,)"))
    not yet: `answer` has shape (2,); the exercise asks for (3,)
    >>> bool(Feedback(True)), str(Feedback(True))
    (True, 'correct')
    """

    def __init__(self, passed, message=""):
        self.passed = bool(passed)
        self.message = message

    def __bool__(self):
        return self.passed

    def __str__(self):
        return "correct" if self.passed else f"not yet: {self.message}"

    __repr__ = __str__


class Exercise(NamedTuple):
    """One check: its id (``"03-gradient"``), its function, its points, and ``draw``:
    for a check that runs the learner's function on data of its own, what gives a
    course its own data (``draw(rng)``: the check's keyword arguments, as JSON), else
    None."""
    id: str
    run: Callable
    points: int
    draw: Optional[Callable] = None


def exercise(registry, id, points=1, draw=None):
    """Decorator: file the check under ``id`` in ``registry`` (a module's dict); ``draw``
    gives a course its own data for the check (see ``variants``).

    >>> table = {}
    >>> @exercise(table, "00-demo")
    ... def demo(answer):
    ...     if answer != 1:
    ...         raise NotYet("not one")
    >>> sorted(table), table["00-demo"].points
    (['00-demo'], 1)
    """
    def register(run):
        registry[id] = Exercise(id, run, points, draw)
        return run
    return register


def a_seed(rng):
    """A course's own seed for a check that draws its data from one (an ``Exercise``'s
    ``draw``).

    >>> a_seed(np.random.default_rng(0))
    {'seed': 1826701615}
    """
    return {"seed": int(rng.integers(2 ** 31))}


def required(value, name, what):
    """``value``, or ``NotYet`` saying that ``name`` is still None and what to put there.

    >>> required(3, "answer", "a float")
    3
    >>> required(None, "answer", "a float")
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: `answer` is still None: the exercise asks for a float
    """
    if value is None:
        raise NotYet(f"`{name}` is still None: the exercise asks for {what}")
    return value


def listed(value, name, what="a list"):
    """``value`` as a list when it is a list or a tuple, else ``NotYet`` saying what it is
    (a generator or a ``map(...)`` is read once and has no length: return a list).

    >>> listed((1, 2), "clip_global(grads, clip_norm)")
    [1, 2]
    >>> listed(map(abs, [1]), "clip_global(grads, clip_norm)")
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: clip_global(grads, clip_norm) is a map: return a list (wrap it in list(...))
    """
    required(value, name, what)
    if isinstance(value, (list, tuple)):
        return list(value)
    kind = type(value).__name__
    if hasattr(value, "__next__") or kind in ("map", "filter", "zip", "generator"):
        raise NotYet(f"{name} is a {kind}: return a list (wrap it in list(...))")
    raise NotYet(f"{name} should be {what}, not a {kind}")


def as_number(value, name):
    """``value`` as a float (a Tensor, a numpy scalar, a size-1 array), else ``NotYet``.

    >>> as_number(nt.constant(2.5), "answer")
    2.5
    >>> as_number([1.0, 2.0], "answer")
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: `answer` should be one number, not an array of shape (2,)
    """
    required(value, name, "a number")
    try:
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=float)
    except (TypeError, ValueError):
        raise NotYet(f"`{name}` should be a number, not a {type(value).__name__}") from None
    if array.size != 1:
        raise NotYet(f"`{name}` should be one number, not an array of shape {array.shape}")
    return float(array.reshape(()))


def array(value, name, shape):
    """``value`` as a float array of ``shape``, else ``NotYet`` naming both shapes.

    >>> array(nt.constant([1.0, 2.0]), "answer", (2,))
    array([1., 2.])
    >>> array([1.0, 2.0], "answer", (3,))
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: `answer` has shape (2,); the exercise asks for shape (3,)
    """
    required(value, name, f"an array of shape {shape}")
    if hasattr(value, "__next__"):
        raise NotYet(f"`{name}` is a {type(value).__name__}: make it an array or a list "
                     "(wrap it in list(...))")
    try:
        out = np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=float)
    except (TypeError, ValueError):
        raise NotYet(f"`{name}` should be an array of numbers, not a "
                     f"{type(value).__name__}") from None
    if out.shape != tuple(shape):
        raise NotYet(f"`{name}` has shape {out.shape}; the exercise asks for shape {tuple(shape)}")
    return out


def entries(got, expected, rtol=1e-5, atol=1e-8):
    """The indices where ``got`` and ``expected`` differ, as a short phrase ('' if none).

    >>> entries(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.5]))
    'entries 1 and 2'
    >>> entries(np.ones(2), np.ones(2))
    ''
    """
    bad = [int(i) for i in np.flatnonzero(~np.isclose(got, expected, rtol=rtol, atol=atol))]
    if not bad:
        return ""
    if len(bad) == 1:
        return f"entry {bad[0]}"
    shown = ", ".join(str(i) for i in bad[:-1][:5])
    return f"entries {shown} and {bad[-1]}"


@contextlib.contextmanager
def switched_off(places, why):
    """While the learner's code runs, each ``(owner, name, label)`` in ``places`` refuses
    with ``NotYet(why.format(name=label))``; put back afterwards, whatever happens.

    >>> import math
    >>> with switched_off([(math, "sqrt", "math.sqrt")], "{name} is off"):
    ...     math.sqrt(4.0)
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: math.sqrt is off
    >>> math.sqrt(4.0)
    2.0
    """
    saved = [(owner, name, label, vars(owner)[name]) for owner, name, label in places]

    def refusing(label):
        def refused(*args, **kwargs):
            raise NotYet(why.format(name=label))
        return refused
    try:
        for owner, name, label, _ in saved:
            setattr(owner, name, refusing(label))
        yield
    finally:
        for owner, name, _, original in saved:
            setattr(owner, name, original)


def central_difference(fn, x, h=1e-6):
    """The central finite difference of a scalar ``fn`` at the scalar ``x``.

    >>> round(central_difference(lambda v: v ** 3, 2.0), 6)
    12.0
    """
    return (float(fn(x + h)) - float(fn(x - h))) / (2 * h)


def record(fn, *inputs):
    """``(value, gradients, tape, variables)``: ``fn`` run on ``nt.Variable`` copies of
    ``inputs`` under a persistent tape.

    Whatever ``fn`` raises is said as ``NotYet``, with the exception's own words.

    >>> value, grads, tape, _ = record(lambda v: v * v, 3.0)
    >>> float(value), float(grads[0]), [op.name for op in tape.ops]
    (9.0, 6.0, ['np.multiply'])
    """
    variables = [nt.Variable(np.array(x, dtype=float)) for x in inputs]
    name = getattr(fn, "__name__", "your function")
    try:
        # the check says what the tape's warnings would say, once, in its own words
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            with nt.GradientTape(persistent=True) as tape:
                value = fn(*variables)
            if value is None:
                raise NotYet(f"{name} returns None: make it return the result")
            grads = tape.gradient(value, variables)
    except NotYet:
        raise
    except Exception as error:              # the learner's code: say what it raised
        raise NotYet(f"{name}(...) raised {type(error).__name__}: {error}") from None
    return value, grads, tape, variables


def compare(mine, reference, inputs, name):
    """``NotYet`` at the first input where ``mine`` and ``reference`` differ in value or
    gradient (scalar inputs: the message gives the central finite difference there).

    >>> compare(lambda v: v * 2.0, lambda v: v + v, [1.5, -0.2], "double")
    >>> compare(lambda v: v * 2.0, lambda v: v * v, [1.5], "square")
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: square(1.5) is 3, not the value the exercise asks for
    """
    for x in inputs:
        at = _show(x)
        value, grads, tape, variables = record(mine, x)
        want, want_grads, ref_tape, ref_vars = record(reference, x)
        got = np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=float)
        expected = np.asarray(want.numpy(), dtype=float)
        if got.shape != expected.shape:
            raise NotYet(f"{name}({at}) has shape {got.shape}; the exercise asks for "
                         f"shape {expected.shape}")
        if not np.allclose(got, expected, rtol=1e-6, atol=1e-9, equal_nan=True):
            raise NotYet(f"{name}({at}) is {_show(got)}, not the "
                         "value the exercise asks for")
        grad = grads[0]
        if grad is None:
            where = first_difference(tape, ref_tape)
            raise NotYet(f"{name} has no gradient at {at}: "
                         + story(tape, value, variables[0])
                         + (f" Compared with the reference: {where}." if where else ""))
        g = np.asarray(grad.numpy(), dtype=float)
        expected_g = np.asarray(want_grads[0].numpy(), dtype=float)
        if not np.all(np.isfinite(g)):
            raise NotYet(f"the gradient of {name} at {at} is not finite: "
                         + story(tape, value, variables[0]))
        if not np.allclose(g, expected_g, rtol=1e-5, atol=1e-8):
            said = f"the gradient of {name} at {at} is {_show(g)}"
            if np.ndim(x) == 0 and np.ndim(expected) == 0:
                fd = central_difference(lambda v: reference(nt.constant(v)), float(x))
                said += f"; a central finite difference of the loss there gives {fd:.4g}"
            where = first_difference(tape, ref_tape)
            raise NotYet(said + (f" ({where})" if where else ""))


def first_difference(mine, reference):
    """Where a learner's tape first leaves the reference's: '' when their ops agree.

    Names the op at which they differ, a value that left the tape (``np.asarray``,
    ``float``) and a tape that watched nothing.

    >>> x = nt.Variable(1.0)
    >>> with nt.GradientTape() as a:
    ...     y = np.sin(x) * x
    >>> with nt.GradientTape() as b:
    ...     y = np.cos(x) * x
    >>> first_difference(b, a)
    'op 0 of your tape is np.cos where the reference records np.sin'
    """
    escapes = [note for note in getattr(mine, "notes", ()) if note.kind == "escape"]
    names = [op.name for op in mine.ops]
    wanted = [op.name for op in reference.ops]
    for i, (got, want) in enumerate(zip(names, wanted)):
        if got != want:
            text = f"op {i} of your tape is {got} where the reference records {want}"
            break
    else:
        if len(names) == len(wanted):
            if not escapes:
                return ""
            return (f"your tape records the reference's ops, but a value left the tape "
                    f"through {escapes[0].detail}, and the tape cannot follow it from there")
        if not names:
            text = (f"your tape recorded no ops where the reference records {len(wanted)} "
                    f"(the first {wanted[0]}), so nothing it computed was watched")
        elif len(names) < len(wanted):
            text = (f"your tape stops after {len(names)} ops; the reference goes on with "
                    f"{wanted[len(names)]}")
        else:
            text = f"your tape records {names[len(wanted)]} after the reference's last op"
    if escapes:
        text += (f"; a value left the tape through {escapes[0].detail}, and the tape "
                 "cannot follow it from there")
    return text


def _show(value):
    """A number or an array in a few digits: ``3``, ``0.1235``, ``[1.5 2. ]``."""
    value = np.asarray(value)
    if value.ndim == 0:
        return f"{float(value):.4g}"
    return np.array2string(value, precision=4)


def story(tape, target, source):
    """What ``tape.explain(target, source)`` says, on one line."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return " ".join(str(tape.explain(target, source)).split())
    except Exception as error:              # an odd target: the check goes on without it
        return f"(explain could not read this tape: {error})"
