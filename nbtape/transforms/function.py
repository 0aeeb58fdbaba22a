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
draw, or a number parsed out of a traced value's text, is refused (``second_trace``: the
generators ``randomness.py`` reaches, and a second trace for the rest).
"""
import contextlib
import functools
import io
import types
import warnings
import weakref

from ..core.state import recording, tls
from ..core.tensor import Tensor
from ..diagnostics.errors import shown_from_user
from .input_signature import Binder, describe_call, inputs, signature
from .program import NotFinite, Program, ReplayFailed, ShapeChanged
from .randomness import random_states
from .second_trace import check_draws, check_shown
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
                    if isinstance(e, (NotFinite, ReplayFailed)):
                        # a NaN or inf loss, or a numpy call that raised: this call runs
                        # eagerly, so nbtape says where the value was born, or says the
                        # error, as it does eagerly (the same values)
                        return self._run(args, kwargs)
        return self._trace(key, args, kwargs)[0]

    # tracing ---------------------------------------------------------------------------
    def trace_once(self, args, kwargs, quiet=False, alter=False, watch=None):
        """Run the function under a new tracer; ``(tracer, out)``, or raise its refusal
        (the variables given back their values).  ``alter``: the trace that checks what a
        value shown as text became (``second_trace.check_shown``); ``watch``: ``(generator, state)``,
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
        tracer, out = self.trace_once(args, kwargs)
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
        check_draws(self, tracer, before, args, kwargs)
        check_shown(self, tracer, args, kwargs)
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
