"""``recompute_grad``: gradient checkpointing, as TensorFlow's ``tf.recompute_grad``.

The forward pass runs ``f`` with no recorder listening, so no tape keeps ``f``'s
intermediate values; each tape records one op, from ``f``'s inputs (and the variables
it read) to its outputs.  That op's reverse rule runs ``f`` again under a tape of its
own and takes that tape's gradient; its forward rule runs ``f`` again under an
accumulator.  Recorders outside see the re-run, so gradients of gradients and mixed
forward/reverse derivatives work as they do without checkpointing.

The re-run must compute what the first run computed, or its gradient is that of
another computation.  So it reads the variables' values as ``f`` first read them,
and the random generators' states as they were (the ones ``randomness.py`` finds:
numpy's and Python's global generators, and those ``f`` is given or can reach), restored afterwards so the user's stream goes on untouched (PyTorch's
checkpoint does the same).  What nbtape cannot replay (a generator it cannot see, a
side effect) is caught: the re-run's outputs are compared bit for bit with the first
run's, and a difference raises instead of giving another gradient.
"""
import functools

import numpy as np

from ..core.arrays import is_foreign
from ..core.state import keeps_every_call, only, tls
from ..core.recorder import Listener
from ..diagnostics.errors import InvalidArgumentError, NbtapeError, user_facing
from ..core.registry import VARARGS, Rule
from ..core.structure import flatten, unflatten
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable, holding
from .randomness import random_states, replayed


class RecomputeMismatchError(NbtapeError, RuntimeError):
    """``recompute_grad``'s re-run of ``f`` computed other values than its first run."""


class _Reads(Listener):
    """Stands alone on the stack while ``f`` runs forward: notes the variables it reads
    and the tensors it uses that it did not make (its inputs, and any it closes over).
    A ``Recorder`` (nbtape/core/recorder.py)."""

    def __init__(self):
        self.variables = {}
        self.held = []          # (variable, the tensor it held when f first read it)
        self.used = {}          # id -> float tensor used by an op of f, made outside it
        self.made = set()

    def on_variable_read(self, v):
        if v._id not in self.variables:
            self.variables[v._id] = v
            self.held.append((v, v._tensor))

    def record(self, rule, args, kwargs, operands, ids, outs):
        made = self.made
        for t, i in zip(operands, ids):
            if i is not None and i not in made and t.dtype.kind in "fc":
                self.used.setdefault(i, t)
        if type(outs) is Tensor:
            made.add(outs._id)
        elif isinstance(outs, (tuple, list)):
            made.update(o._id for o in outs if type(o) is Tensor)


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def recompute_grad(f):
    """Wrap ``f`` so that tapes keep only its inputs and outputs, not its intermediates.

    ``recompute_grad(f)(*args)`` has the values and gradients of ``f(*args)``; the
    reverse pass runs ``f`` once more to get what its rules need (memory for time).
    Wrap each segment of a deep chain: the tape then holds one value per segment.
    Gradients flow to ``f``'s tensor arguments (positional or keyword), to the
    variables it reads and to tensors it closes over; ``f`` must compute the same
    values when it runs again.

    >>> import numpy as np, nbtape as nt
    >>> block = nt.recompute_grad(lambda x: np.sin(np.sin(x)))
    >>> x = nt.constant(0.5)
    >>> with nt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = block(x)
    >>> g = t.gradient(y, x)
    >>> bool(np.isclose(g, np.cos(np.sin(0.5)) * np.cos(0.5)))
    True
    """
    if not callable(f):
        raise TypeError(
            f"nt.recompute_grad takes a function, not a {type(f).__name__}: write "
            "`block = nt.recompute_grad(f)` and call `block(x)`, or put "
            "`@nt.recompute_grad` (no parentheses) above `def f(...)`.")

    @user_facing
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        stack = tls.stack
        if not stack:
            return f(*args, **kwargs)
        reads = _Reads()
        states = random_states(f, args, kwargs)
        # nothing records f's steps: that is the point (but nt.function's tracer, which
        # keeps every call, sees them: its replay computes them as the first run did)
        with only([reads] + [r for r in stack if keeps_every_call(r)]):
            result = f(*args, **kwargs)
            inputs = {id(a) for a in flatten((args, kwargs))}
            outs = [_output(f, o, inputs) for o in flatten(result)]
        packed = unflatten(result, outs) if isinstance(result, (list, tuple, dict)) \
            else outs[0]
        tensors = [a for a in flatten((args, kwargs)) if isinstance(a, TensorLike)]
        known = {a._id for a in tensors} | set(reads.variables)
        variables = [v for i, v in reads.variables.items()
                     if not any(a is v for a in tensors)]
        # a tensor f closes over is an input too: its gradient must not go missing
        captured = [t for i, t in reads.used.items() if i not in known]
        # reading through the real stack lets tapes auto-watch what f read
        operands = [a.value() if isinstance(a, Variable) else a for a in tensors]
        operands += [v.value() for v in variables] + captured
        if not operands:
            return packed
        sources = tensors + variables + captured
        rule = _rule(f, args, kwargs, sources, outs, reads.held, states)
        ids = [t._id for t in operands]
        rec_outs = tuple(outs) if rule.multi else outs[0]
        for rec in stack:
            rec.record(rule, operands, None, operands, ids, rec_outs)
        return packed
    return wrapper


def _output(f, o, inputs):
    if type(o) is Tensor and id(o) not in inputs:
        return o                # made by the unrecorded run: no tape knows it
    if isinstance(o, TensorLike):   # an input passed through: the output is a new value
        return Tensor(o.data)       # (.data: a Dask array stays lazy, .numpy() computes)
    value = o if is_foreign(o) else np.asarray(o)
    if value.dtype.kind not in "biufc":
        raise InvalidArgumentError(
            f"{_name(f)} is wrapped with nt.recompute_grad, so it must return tensors or "
            f"arrays (or a list/tuple/dict of them); it returned a {type(o).__name__}. "
            "Return the computed values themselves.")
    return Tensor(value)


def _rule(f, args, kwargs, sources, outs, held, states):
    multi = len(outs) > 1
    first = [o._value for o in outs]

    def rerun():
        with holding(held), replayed(states):
            ys = flatten(f(*args, **kwargs))
        _check_same(f, ys, first)
        return ys

    def vjp_all(g, ans, _args, _kwargs, needs):
        from ..tape.gradient_tape import GradientTape
        raw = not tls.stack     # no recorder outside: the engine works on plain arrays
        dys = list(g) if multi else [g]
        wanted = [s for s, n in zip(sources, needs) if n]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(wanted)
            ys = rerun()
        # only float outputs carry a gradient (an int output's seed is the engine's zeros)
        pairs = [(y, d) for y, d in zip(ys, dys)
                 if d is not None and isinstance(y, TensorLike) and y.dtype.kind in "fc"]
        got = tape.gradient([y for y, _ in pairs], wanted,
                            output_gradients=[d for _, d in pairs]) if pairs else \
            [None] * len(wanted)
        got = iter(got)
        grads = [next(got) if n else None for n in needs]
        # the raw arrays (x.data: a Dask gradient stays lazy, np.asarray would compute it)
        return [x.data if raw and isinstance(x, TensorLike) else x for x in grads]

    def jvp_all(tangents, ans, _args, _kwargs):
        from ..tape.forward import ForwardAccumulator
        raw = not tls.stack
        pairs = [(s, t) for s, t in zip(sources, tangents) if t is not None]
        with ForwardAccumulator([s for s, _ in pairs], [t for _, t in pairs]) as acc:
            ys = rerun()
        ts = [acc.jvp(y) if isinstance(y, TensorLike) and y.dtype.kind in "fc" else None
              for y in ys]
        ts = [t.data if raw and isinstance(t, TensorLike) else t for t in ts]
        return ts if multi else ts[0]

    # the reverse pass needs the outputs' shapes only when there are several
    return Rule(f, name=f"recompute_grad({_name(f)})", kind=VARARGS, start=0, multi=multi,
                save_ans=multi, vjp_all=vjp_all, jvp_all=jvp_all)


def _same(a, b):
    if is_foreign(a) or is_foreign(b):
        return True             # a lazy or device array: not computed here to compare
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _check_same(f, ys, first):
    for k, (y, x) in enumerate(zip(ys, first)):
        if not _same(y._value if isinstance(y, TensorLike) else y, x):
            raise RecomputeMismatchError(
                f"{_name(f)} is wrapped with nt.recompute_grad, and running it again for the "
                f"gradient gave another value of its output {k} than its first run did, so "
                "the gradient would be that of another computation. nbtape replays the "
                "variables' values and numpy's random state it can see (the global "
                "np.random, and Generators passed to f or in its closure or globals); "
                "make f compute the same values when run again: pass a random Generator as "
                "an argument, undo side effects (appending to a list, changing a global), "
                "or do not wrap this function in recompute_grad.")
