"""``nt.function``: TensorFlow's ``tf.function`` for nbtape (trace once, replay fast).

The first call with a new *input signature* traces: the function runs eagerly with a
``trace.Tracer`` recording every numpy call it makes (its tapes' backward passes and
its variable updates included), and ``program.compile_program`` writes those calls out
as one straight-line Python function.  Later calls with the same signature run that
function on the raw arrays: no dispatch, no recording, the same numpy calls in the same
order, so the same values bit for bit.

The signature, as in ``tf.function`` (``input_signature.py``): the arguments bound as
Python binds them, an array argument (an ``np.ndarray``, a tensor, a numpy scalar) by
its shape and dtype, a variable by its identity (its value is read when the program
runs, never baked in), any other Python value by value (a new value traces again),
lists, tuples, namedtuples, dataclasses and dicts by their structure.  Python code that
does not touch tensors (a ``print``, appending to a list, a Python counter) runs at
trace time only, as in TensorFlow.

A replay is right or refused: a value of data-dependent shape is checked by the program
(another shape traces again, ``program.ShapeChanged``), and a trace that froze a random
draw is refused (``_check_draws``: the generators ``randomness.py`` reaches, and a
second trace for those it cannot).
"""
import contextlib
import functools
import inspect
import io
import types
import warnings
import weakref

import numpy as np

from ..core.state import recording, tls
from ..core.tensor import Tensor
from ..diagnostics.errors import shown_from_user
from ..diagnostics.user_line import describe as describe_where, source_line
from .input_signature import Binder, describe_call, inputs, signature
from .program import NotFinite, Program, ShapeChanged
from .randomness import drawn, drawn_from, random_states, set_state
from .trace import Slot, Tracer, TracingError

# how many traces of one function before the retracing warning (TensorFlow's is 5)
RETRACE_WARNING = 5


def function(fn=None, *, reduce_retracing=False):
    """Trace ``fn`` once per input signature and replay its numpy calls afterwards.

    Use it as a decorator (``@nt.function``) or a call (``nt.function(step)``).  The
    first call with a new signature runs ``fn`` eagerly and records it; later calls
    replay the recorded numpy calls on raw arrays.  ``reduce_retracing`` is accepted
    for TensorFlow's signature and has no effect.

    >>> import numpy as np, nbtape as nt
    >>> w = nt.Variable([1.0, 2.0])
    >>> @nt.function
    ... def step(x):
    ...     with nt.GradientTape() as tape:
    ...         loss = np.sum((x * w) ** 2)
    ...     w.assign_sub(0.1 * tape.gradient(loss, w))
    ...     return loss
    >>> [round(float(step(np.array([1.0, 1.0]))), 6) for _ in range(3)]
    [5.0, 3.2, 2.048]
    >>> step.trace_count, w.numpy()
    (1, array([0.512, 1.024]))
    """
    if fn is None:
        return lambda f: Function(f)
    return Function(fn)


class Function:
    """What ``nt.function`` returns: call it like the function it wraps.

    ``trace_count`` counts the traces so far (``experimental_get_tracing_count()``
    is TensorFlow's name for it); ``program(*args)`` and ``graph(*args)`` show what a
    call with those arguments replays.  A decorated method traces per instance, as in
    TensorFlow (``obj.method`` is a ``Function`` of its own).
    """

    def __init__(self, fn, instance=None):
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.trace_count = 0
        self._instance = instance   # a method's object (a weak reference) or None
        self._cache = {}            # signature -> (replay function, guards)
        self._shown = {}            # signature -> its newest Program, for program()
        self._built = set()         # signatures whose first call made variables
        self._last = None           # the arguments' descriptions at the last trace
        self._warned = False
        self._methods = {}          # id(instance) -> (weak reference, its Function)
        self._binder = Binder(fn, skip_first=instance is not None)

    def __get__(self, obj, objtype=None):
        # a decorated method: each instance has its own traces (a Function bound to it)
        if obj is None:
            return self
        entry = self._methods.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        try:
            ref = weakref.ref(obj, functools.partial(_forget, self._methods, id(obj)))
        except TypeError:       # an object without weak references: kept alive
            ref = functools.partial(_same_object, obj)
        bound = Function(self.python_function, instance=ref)
        self._methods[id(obj)] = (ref, bound)
        return bound

    def experimental_get_tracing_count(self):
        """TensorFlow's name for ``trace_count``."""
        return self.trace_count

    def _run(self, args, kwargs):
        if self._instance is None:
            return self.python_function(*args, **kwargs)
        return self.python_function(self._instance(), *args, **kwargs)

    def _target(self):
        """What the random-generator search looks into: the function (a method bound)."""
        if self._instance is None:
            return self.python_function
        return types.MethodType(self.python_function, self._instance())

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (pytest and IPython hide this frame)
        if tls.stack:
            # inside a recording tape the function runs eagerly, so the tape sees (and
            # can differentiate) every op
            return self._run(args, kwargs)
        args, kwargs = self._binder.bind(args, kwargs)
        key, leaves = signature(args, kwargs)
        for replay, guards in self._cache.get(key, ()):
            for obj, attr, value in guards:
                if (obj() if attr is None else getattr(obj, attr)) != value:
                    break
            else:
                try:
                    return replay(*leaves)
                except ShapeChanged as e:   # a mask's count, np.unique's: another program
                    for v, t in e.undo:
                        v._tensor = t
                    if isinstance(e, NotFinite):
                        # a NaN or inf loss: this call runs eagerly, so nbtape says
                        # where it was born as it does eagerly (the same values)
                        return self._run(args, kwargs)
        return self._trace(key, args, kwargs)[0]

    # tracing ---------------------------------------------------------------------------
    def _trace_once(self, args, kwargs, quiet=False, alter=False, watch=None):
        """Run the function under a new tracer; ``(tracer, out)``, or raise its refusal
        (the variables given back their values).  ``alter``: the trace that checks what a
        value shown as text became (``_check_shown``); ``watch``: ``(generator, state)``,
        the trace that looks for the line of a draw from it (``_draw_line``)."""
        tracer = Tracer(alter, watch)
        targs, tkwargs = inputs(tracer, args, kwargs, self._binder.labels)
        entered = recording(tracer)
        entered.__enter__()
        try:
            with _quiet() if quiet else contextlib.nullcontext():
                out = self._run(targs, tkwargs)
            tracer.finish()
        except TracingError as e:
            tracer.restore()
            raise shown_from_user(e)
        except BaseException:
            if tracer.refused is not None:      # the user's code caught the refusal
                tracer.restore()
                raise tracer.refused from None
            tracer.restore()
            raise
        finally:
            entered.__exit__(None, None, None)
        if tracer.refused is not None:
            tracer.restore()
            raise shown_from_user(tracer.refused)
        if tracer.raised is not None:       # a numpy error the function caught itself
            tracer.restore()
            raise shown_from_user(TracingError(tracer.raised_message()))
        return tracer, out

    def _trace(self, key, args, kwargs, keep_variables=True):
        before = random_states(self._target(), args, kwargs)
        tracer, out = self._trace_once(args, kwargs)
        if tracer.created:
            if key in self._built:
                tracer.restore()
                raise shown_from_user(ValueError(
                    f"{self.__name__} creates a new nt.Variable each time it is traced, "
                    "and nt.function keeps only the variables made by the first call "
                    "(as tf.function does). Create the variables once, outside the "
                    "function or on its first call only (a model that builds its weights "
                    "when first called does this), and pass or close over them."))
            self._built.add(key)
            if keep_variables:
                # the first call made variables (a model building its weights, with
                # random initial values): it stays an eager call, and the next call
                # traces, as tf.function traces twice then
                return out, None
            tracer.restore()
            return self._trace(key, args, kwargs, keep_variables)
        _check_draws(self, tracer, before, args, kwargs)
        _check_shown(self, tracer, args, kwargs)
        result = _result(tracer, out)
        program = Program(tracer.steps, result, tracer.kinds)
        replay = program.compile()
        # a guard (a learning rate) that changed, or a data-dependent shape, traces
        # again: the newest program is tried first
        self._cache[key] = [(replay, tracer.guards)] + self._cache.get(key, [])[:7]
        self._shown[key] = program
        self.trace_count += 1
        self._note_retrace(args, kwargs)
        if not keep_variables:
            tracer.restore()
        return out, key

    def _note_retrace(self, args, kwargs):
        now = describe_call(args, kwargs, self._binder.labels)
        last, self._last = self._last, now
        if self.trace_count < RETRACE_WARNING or self._warned or last is None:
            return
        self._warned = True
        changed = [f"{name} (was {last[name]}, now {value})" for name, value in now.items()
                   if last.get(name) != value]
        what = "; ".join(changed) or "the arguments' structure"
        warnings.warn(
            f"{self.__name__} has been traced {self.trace_count} times: each call with a "
            f"new input signature traces it again, which is as slow as running it "
            f"eagerly. The last retrace was for {what}. Pass arrays (whose values are "
            "not part of the signature) rather than Python numbers that change, and "
            "keep shapes and dtypes the same from call to call.", UserWarning, stacklevel=4)

    # showing the program ---------------------------------------------------------------
    def _program_of(self, args, kwargs):
        args, kwargs = self._binder.bind(args, kwargs)
        key, _ = signature(args, kwargs)
        if key not in self._shown:
            self._trace(key, args, kwargs, keep_variables=False)
        return self._shown[key]     # (a first call that builds variables traces once more)

    def program(self, *args, **kwargs):
        """The numpy calls a call with these arguments replays, forward and backward,
        as text (like ``jax.make_jaxpr``).  Traces first if needed (running the
        function once, then giving its variables back their values).

        >>> import numpy as np, nbtape as nt
        >>> @nt.function
        ... def f(x):
        ...     return np.sum(np.sin(x))
        >>> print(f.program(np.zeros(3)))
        { lambda x:float64[3] .
          v1:float64[3] = np.sin(x)
          v2:float64 = np.sum(v1)
          in v2 }
        """
        return self._program_of(args, kwargs)

    def graph(self, *args, **kwargs):
        """A ``graphviz.Digraph`` of the program ``program(*args)`` lists: inputs and
        variable reads, numpy calls (the backward pass's in another colour), updates.
        """
        return self._program_of(args, kwargs).graph(name=self.__name__)

    def __repr__(self):
        return f"<nt.function {self.__name__}: traced {self.trace_count} time(s)>"


def _result(tracer, out):
    """The template of what the function returned: its tensors that the program
    computes as slots; variables and constants as they are."""
    t = type(out)
    if t is Tensor:
        n = tracer.find(out)
        return Slot(n) if n is not None else out
    if t is list or (t is tuple and not hasattr(out, "_fields")):
        return t(_result(tracer, x) for x in out)
    if t is tuple:
        return t(*[_result(tracer, x) for x in out])
    if t is dict:
        return {k: _result(tracer, v) for k, v in out.items()}
    return out




def _forget(methods, key, _ref):
    methods.pop(key, None)


def _same_object(obj):
    return obj


@contextlib.contextmanager
def _quiet():
    """The checking trace's prints and warnings are not shown (the first trace's were)."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# frozen draws ------------------------------------------------------------------------------
def _check_draws(f, tracer, before, args, kwargs):
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
        second, _ = f._trace_once(args, kwargs, quiet=True, alter=alter, watch=watch)
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
    return f", drawn between {_line_words(after)} and {_line_words(before_line)}"


def _line_words(where):
    line = source_line(where)
    return describe_where(where) + (f" (`{line.strip()}`)" if line else "")


def _at(step):
    if step is None or step.where is None:
        return ""
    line = source_line(step.where)
    return f" at {describe_where(step.where)}" + (f" (`{line.strip()}`)" if line else "")


def _check_shown(f, tracer, args, kwargs):
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
    where = tracer.shown
    line = source_line(where)
    shown_at = describe_where(where) + (f" (`{line.strip()}`)" if line else "")
    raise shown_from_user(TracingError(
        f"nt.function cannot trace this function: a value of the traced call was shown "
        f"as text at {shown_at}, and with another value shown there the function "
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
