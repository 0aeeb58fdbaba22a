"""``recompute_grad``: gradient checkpointing, as TensorFlow's ``tf.recompute_grad``.

The forward pass runs ``f`` with no recorder listening, so no tape keeps ``f``'s
intermediate values; each tape records one op, from ``f``'s inputs (and the variables
it read) to its outputs.  That op's reverse rule runs ``f`` again under a tape of its
own and takes that tape's gradient; its forward rule runs ``f`` again under an
accumulator.  Recorders outside see the re-run, so gradients of gradients and mixed
forward/reverse derivatives work as they do without checkpointing.
"""
import functools

import numpy as np

from ..core.arrays import is_foreign
from ..core.state import tls
from ..diagnostics.errors import InvalidArgumentError, user_facing
from ..rules.registry import VARARGS, Rule
from ..core.structure import flatten, unflatten
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable


class _Reads:
    """Stands alone on the stack while ``f`` runs forward: notes the variables it reads
    and the tensors it uses that it did not make (its inputs, and any it closes over).
    A ``Recorder`` (nbtape/core/recorder.py)."""

    paused = None

    def __init__(self):
        self.variables = {}
        self.used = {}          # id -> float tensor used by an op of f, made outside it
        self.made = set()

    def on_variable_read(self, v):
        self.variables.setdefault(v._id, v)

    def record(self, rule, args, kwargs, operands, ids, outs):
        made = self.made
        for t, i in zip(operands, ids):
            if i is not None and i not in made and t.dtype.kind in "fc":
                self.used.setdefault(i, t)
        if type(outs) is Tensor:
            made.add(outs._id)
        elif isinstance(outs, (tuple, list)):
            made.update(o._id for o in outs if type(o) is Tensor)

    def note_escape(self, t, how):
        pass

    def on_assign(self, var, source, how):
        pass


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
        tls.stack = [reads]         # nothing records f's steps: that is the point
        try:
            result = f(*args, **kwargs)
            inputs = {id(a) for a in flatten((args, kwargs))}
            outs = [_output(f, o, inputs) for o in flatten(result)]
        finally:
            tls.stack = stack
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
        rule = _rule(f, args, kwargs, sources, len(outs))
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


def _rule(f, args, kwargs, sources, n_outs):
    multi = n_outs > 1

    def rerun():
        return flatten(f(*args, **kwargs))

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
