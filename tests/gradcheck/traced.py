"""A program of ``gradcheck/programs.py`` run eagerly and through ``nt.function``.

``compare(prog)`` traces the program's gradient (reverse mode, under a
``GradientTape``) and its tangent (forward mode, under a ``ForwardAccumulator``) at the
program's inputs, replays both at other inputs of the same shapes, and compares the
replay with an eager run at those inputs bit for bit: values, dtypes and shapes.  A
replay at the traced inputs could not tell a frozen value from a replayed one.
"""
import warnings

import numpy as np

import nbtape as nt
from nbtape.transforms.trace import TracingError


def _scalar(env, targets, ws):
    total = 0.0
    for i, w in zip(targets, ws):
        total = total + np.real(np.sum(np.multiply(env[i], w)))
    return total


def same(a, b):
    """Whether ``a`` and ``b`` (tensors, arrays or None) are the same bit for bit."""
    if a is None or b is None:
        return a is None and b is None
    a = np.asarray(a.numpy() if isinstance(a, (nt.Tensor, nt.Variable)) else a)
    b = np.asarray(b.numpy() if isinstance(b, (nt.Tensor, nt.Variable)) else b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def _other_inputs(rng, xs):
    """Inputs near ``xs``, of the same types, shapes and dtypes (a numpy scalar stays
    one: the signature tells it from a 0-d array)."""
    out = []
    for x in xs:
        y = np.asarray(x * (1 + 0.01 * rng.standard_normal(x.shape))).astype(x.dtype) \
            if x.dtype.kind in "fc" else x
        out.append(y[()] if isinstance(x, np.generic) else y)
    return out


def compare(prog, seed=0):
    """``{"reverse": outcome, "forward": outcome}``: ``"ok"`` (the replay is eager's,
    bit for bit), ``"wrong"``, ``"eager fails"`` (numpy refuses the other inputs:
    nothing to compare), or the ``TracingError`` (a refusal)."""
    rng = np.random.default_rng(seed)
    xs1 = prog.inputs
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = prog.run(xs1)
        targets = [i for i in prog.targets if np.asarray(ref[i]).dtype.kind in "fc"]
        ws = [rng.standard_normal(np.shape(ref[i])) for i in targets]
        vs = [rng.standard_normal(x.shape).astype(x.dtype) for x in xs1]
        xs2 = _other_inputs(rng, xs1)

        def reverse(*xs):
            with nt.GradientTape() as tape:
                tape.watch(list(xs))
                env = prog.run(list(xs))
                h = _scalar(env, targets, ws)
            return [env[i] for i in targets] + [h] + list(tape.gradient(h, list(xs)))

        def forward(*xs):
            with nt.ForwardAccumulator(list(xs), vs) as acc:
                env = prog.run(list(xs))
            return [env[i] for i in targets] + [acc.jvp(env[i]) for i in targets]

        out = {}
        for mode, fn in (("reverse", reverse), ("forward", forward)):
            try:
                eager = fn(*[nt.constant(x) for x in xs2])
            except Exception:
                out[mode] = "eager fails"
                continue
            traced = nt.function(fn)
            try:
                traced(*xs1)
                got = traced(*xs2)
            except TracingError as e:
                out[mode] = e
                continue
            ok = len(got) == len(eager) and all(same(a, b) for a, b in zip(eager, got))
            out[mode] = "ok" if ok and traced.trace_count == 1 else "wrong"
    return out
