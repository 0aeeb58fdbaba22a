"""``nt.function``: TensorFlow's ``tf.function`` for nbtape (trace once, replay fast).

The first call with a new *input signature* traces: the function runs eagerly with a
``trace.Tracer`` recording every numpy call it makes (its tapes' backward passes and
its variable updates included), and ``program.compile_program`` writes those calls out
as one straight-line Python function.  Later calls with the same signature run that
function on the raw arrays: no dispatch, no recording, the same numpy calls in the same
order, so the same values bit for bit.

The signature, as in ``tf.function``: an array argument (an ``np.ndarray``, a tensor, a
numpy scalar) by its shape and dtype, a variable by its identity (its value is read
when the program runs, never baked in), any other Python value by value (a new value
traces again), lists, tuples and dicts by their structure.  Python code that does not
touch tensors (a ``print``, appending to a list, a Python counter) runs at trace time
only, as in TensorFlow.
"""
import functools
import inspect
import warnings

import numpy as np

from ..core.state import recording, tls
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable
from ..diagnostics.errors import shown_from_user
from .program import compile_program, listing, wrap
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
    call with those arguments replays.
    """

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.trace_count = 0
        self._cache = {}            # signature -> (replay function, guards)
        self._shown = {}            # signature -> (steps, result, kinds), for program()
        self._last = None           # the arguments' descriptions at the last trace
        self._warned = False
        try:
            self._params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            self._params = []

    def __get__(self, obj, objtype=None):
        # a decorated method: the instance is an argument (by identity) of the program
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def experimental_get_tracing_count(self):
        """TensorFlow's name for ``trace_count``."""
        return self.trace_count

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (pytest and IPython hide this frame)
        if tls.stack:
            # inside a recording tape the function runs eagerly, so the tape sees (and
            # can differentiate) every op
            return self.python_function(*args, **kwargs)
        key, leaves = signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is not None:
            replay, guards = entry
            for obj, attr, value in guards:
                if getattr(obj, attr) != value:
                    break
            else:
                return replay(*leaves)
        return self._trace(key, args, kwargs)[0]

    # tracing ---------------------------------------------------------------------------
    def _trace(self, key, args, kwargs, keep_variables=True):
        tracer = Tracer()
        targs, tkwargs = _inputs(tracer, args, kwargs, self._params)
        before = _random_states(self.python_function, args, kwargs)
        entered = recording(tracer)
        entered.__enter__()
        try:
            out = self.python_function(*targs, **tkwargs)
            tracer.finish()
        except TracingError as e:
            tracer.restore()
            raise shown_from_user(e)
        except BaseException:
            if tracer.refused is not None:      # the user's code caught the refusal
                tracer.restore()
                raise tracer.refused from None
            raise
        finally:
            entered.__exit__(None, None, None)
        if tracer.refused is not None:
            tracer.restore()
            raise shown_from_user(tracer.refused)
        if tracer.created and keep_variables:
            # the first call made variables (a model building its weights, with random
            # initial values): it stays an eager call, and the next call traces, as
            # tf.function traces twice then
            return out, None
        drawn = _random_drawn(before)
        if drawn:
            tracer.restore()
            raise TracingError(
                f"nt.function cannot trace this function: it drew random numbers "
                f"({drawn}), and a replay would reuse the numbers of this first call (a "
                "dropout mask or noise drawn once, for good). Instead, draw them outside "
                "and pass them in as an argument (step(x, rng.random(x.shape) < 0.5)): "
                "each call then gets fresh ones. The variables were left as they were "
                "before this call.")
        result = _result(tracer, out)
        replay = compile_program(tracer.steps, result)
        self._cache[key] = (replay, tracer.guards)
        self._shown[key] = (tracer.steps, result, tracer.kinds)
        self.trace_count += 1
        self._note_retrace(args, kwargs)
        if not keep_variables:
            tracer.restore()
        return out, key

    def _note_retrace(self, args, kwargs):
        now = _describe(args, kwargs, self._params)
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
        return Program(*self._program_of(args, kwargs))

    def graph(self, *args, **kwargs):
        """A ``graphviz.Digraph`` of the program ``program(*args)`` lists: inputs and
        variable reads, numpy calls (the backward pass's in another colour), updates.
        """
        from .drawing import draw_program      # graphviz, imported only to draw
        return draw_program(*self._program_of(args, kwargs), name=self.__name__)

    def __repr__(self):
        return f"<nt.function {self.__name__}: traced {self.trace_count} time(s)>"


class Program:
    """``f.program(...)``: the traced steps; shown as text, ``steps`` for a program."""

    def __init__(self, steps, result, kinds):
        self.steps, self.result, self.kinds = steps, result, kinds

    def __str__(self):
        return listing(self.steps, self.result, self.kinds)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


# the signature -------------------------------------------------------------------------
def signature(args, kwargs):
    """``(key, leaves)``: the input signature of a call (hashable) and its arrays in
    order, the program's inputs.

    >>> key, leaves = signature((np.zeros(2), 3), {})
    >>> key == signature((np.ones(2), 3), {})[0], key == signature((np.ones(2), 4), {})[0]
    (True, False)
    """
    key, leaves = [], []
    for a in args:
        _walk(a, key, leaves)
    if kwargs:
        for k in sorted(kwargs):
            key.append(k)
            _walk(kwargs[k], key, leaves)
    return tuple(key), leaves


def _walk(a, key, leaves):
    t = type(a)
    if t is np.ndarray:
        key.append((a.shape, a.dtype))
        leaves.append(a)
    elif t is Tensor:
        v = a._value
        if isinstance(v, np.generic):
            v = np.asarray(v)
        key.append((v.shape, v.dtype) if type(v) is np.ndarray else (type(v), id(v)))
        leaves.append(v)
    elif t is Variable:
        key.append(("variable", id(a), a))      # by identity (the program reads it)
    elif t is list or t is tuple:
        key.append((t, len(a)))
        for x in a:
            _walk(x, key, leaves)
    elif t is dict:
        key.append((dict, tuple(a)))
        for x in a.values():
            _walk(x, key, leaves)
    elif isinstance(a, np.generic):
        # a numpy scalar is a 0-d array, as nt.constant makes it (numpy's scalar
        # arithmetic can round otherwise than its array loops)
        key.append(((), a.dtype))
        leaves.append(np.asarray(a))
    else:
        try:
            hash(a)
            key.append((t, a))
        except TypeError:       # an unhashable object: by identity
            key.append((t, id(a), "id"))


def _inputs(tracer, args, kwargs, params):
    """The arguments as the traced function sees them: each array a new tensor that
    the tracer knows as an input (named after its parameter)."""
    def convert(a, label):
        t = type(a)
        if t is np.ndarray or t is Tensor or isinstance(a, np.generic):
            v = a._value if t is Tensor else a
            v = np.asarray(v) if isinstance(v, np.generic) else v
            if not isinstance(v, (np.ndarray, np.generic)):
                tracer.refuse_foreign()
            x = wrap(v)
            tracer.add_input(x, label)
            return x
        if t is list or t is tuple:
            return t(convert(x, f"{label}[{k}]") for k, x in enumerate(a))
        if t is dict:
            return {k: convert(x, f"{label}[{k!r}]") for k, x in a.items()}
        return a

    names = params + [f"arg{k}" for k in range(len(params), len(args))]
    targs = [convert(a, names[k] if not names[k].startswith("*") else f"arg{k}")
             for k, a in enumerate(args)]
    tkwargs = {k: convert(v, k) for k, v in kwargs.items()}
    return targs, tkwargs


def _describe(args, kwargs, params):
    names = params + [f"arg{k}" for k in range(len(params), len(args))]
    out = {}
    for k, a in enumerate(args):
        out[names[k]] = _short(a)
    for k, v in kwargs.items():
        out[k] = _short(v)
    return out


def _short(a):
    if isinstance(a, (np.ndarray, np.generic, TensorLike)):
        return f"{a.dtype}{list(np.shape(a))}" if not isinstance(a, Variable) else repr(a.name)
    if isinstance(a, (list, tuple, dict)):
        return f"a {type(a).__name__} of {len(a)}"
    text = repr(a)
    return text if len(text) < 40 else type(a).__name__


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


# random numbers --------------------------------------------------------------------------
def _random_states(fn, args, kwargs):
    """The state of numpy's global generator and of every ``Generator``/``RandomState``
    the function can reach (closure, globals it names, arguments, their attributes)."""
    found = {}
    seeds = list(args) + list(kwargs.values())
    code = getattr(fn, "__code__", None)
    if code is not None:
        seeds += [c.cell_contents for c in (fn.__closure__ or ()) if _filled(c)]
        names = set(code.co_names)
        for const in code.co_consts:
            if inspect.iscode(const):
                names.update(const.co_names)
        g = getattr(fn, "__globals__", {})
        seeds += [g[n] for n in names if n in g]
    _find_generators(seeds, found, 3, set())
    states = [(None, np.random.get_state(legacy=False))]
    states += [(gen, _state_of(gen)) for gen in found.values()]
    return states


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


_GENERATORS = (np.random.Generator, np.random.RandomState)


def _find_generators(objs, found, depth, seen):
    for o in objs:
        if id(o) in seen or isinstance(o, (np.ndarray, TensorLike, str, bytes, int, float)):
            continue
        seen.add(id(o))
        if isinstance(o, _GENERATORS):
            found[id(o)] = o
            continue
        if depth <= 0:
            continue
        if isinstance(o, dict):
            inner = list(o.values())
        elif isinstance(o, (list, tuple, set)):
            inner = list(o)
        elif hasattr(o, "__dict__") and not (inspect.ismodule(o) or inspect.isroutine(o)
                                             or inspect.isclass(o)):
            inner = list(vars(o).values())      # a model, a layer: its attributes
        else:
            continue
        _find_generators(inner[:200], found, depth - 1, seen)


def _state_of(gen):
    if isinstance(gen, np.random.RandomState):
        return gen.get_state(legacy=False)
    return gen.bit_generator.state


def _same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _random_drawn(before):
    """What drew random numbers since ``before`` (``_random_states``), or ''."""
    for gen, state in before:
        now = np.random.get_state(legacy=False) if gen is None else _state_of(gen)
        if not _same(state, now):
            return ("np.random's global generator, e.g. np.random.rand or "
                    "np.random.normal" if gen is None else
                    f"a {type(gen).__name__}'s methods, e.g. rng.normal")
    return ""
