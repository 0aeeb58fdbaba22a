"""Transformations equal the code they transform: a property test over every rule.

For every rule in the registry (``gradcheck.program_table.makers()``, one maker per rule)
a small random program is built around that rule (fixed seed), made one real scalar
``h(*inputs)``, and differentiated several ways:

* ``plain``: ``h`` on variables under a ``GradientTape`` (and on constants under a
  ``ForwardAccumulator``), the reference;
* ``recompute``: ``nt.recompute_grad(h)``;
* ``custom_gradient``: a ``@nt.custom_gradient`` wrapper whose ``grad_fn`` returns the
  VJP of a tape of its own;
* ``custom_gradient_list``: the same, its inputs given as one list argument;
* ``recompute_random``: ``nt.recompute_grad`` of ``h`` times a draw from ``np.random``
  (against ``h`` times the same draw);
* ``deepcopy`` and ``pickle``: ``h`` on copies of the variables, gradients with respect
  to the copies.

Each must give the plain arm's gradients and tangents.  A program the plain arm refuses
(``NoGradientRuleError``) or cannot run is skipped, counted by reason; the counts are
printed (``pytest -s``) and checked to cover most rules.
"""
import collections
import copy
import pickle
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck.program_table import makers
from gradcheck.programs import Chooser, build
from nbtape.diagnostics.errors import NoGradientRuleError

SEED = 20260601
ARMS = ("recompute", "custom_gradient", "custom_gradient_list", "recompute_random", "deepcopy",
        "pickle")


def _scalar_of(prog, ws):
    """``h(*inputs)``: real(sum(w * y)) over the program's float targets."""
    def h(*xs):
        env = prog.run(list(xs))
        total = 0.0
        for i, w in zip(prog.targets, ws):
            total = total + np.real(np.sum(np.multiply(env[i], w)))
        return total
    return h


def _custom(h):
    @nt.custom_gradient
    def wrapped(*xs):
        with nt.GradientTape() as inner:
            inner.watch(list(xs))
            y = h(*xs)

        def grad_fn(dy):
            return inner.gradient(y, list(xs), output_gradients=dy)
        return y, grad_fn
    return wrapped


def _custom_list(h):
    @nt.custom_gradient
    def wrapped(xs):
        with nt.GradientTape() as inner:
            inner.watch(xs)
            y = h(*xs)

        def grad_fn(dy):
            return inner.gradient(y, xs, output_gradients=dy)     # the argument's structure
        return y, grad_fn
    return lambda *xs: wrapped(list(xs))


def _drawing(h):
    return lambda *xs: h(*xs) * np.random.uniform(0.5, 1.5)


def _function(arm, h):
    if arm in ("recompute", "recompute_random"):
        return nt.recompute_grad(h)
    if arm == "custom_gradient":
        return _custom(h)
    if arm == "custom_gradient_list":
        return _custom_list(h)
    return h


def _sources(arm, xs, make):
    vs = [make(x) for x in xs]
    if arm == "deepcopy":
        return copy.deepcopy(vs)
    if arm == "pickle":
        return pickle.loads(pickle.dumps(vs))
    return vs


def _gradients(arm, h, xs):
    vs = _sources(arm, xs, nt.Variable)
    f = _function(arm, h)
    with nt.GradientTape() as tape:
        y = f(*vs)
    return [None if g is None else g.numpy() for g in tape.gradient(y, vs)]


def _tangent(arm, h, xs, dirs):
    ts = _sources(arm, xs, nt.constant)
    f = _function(arm, h)
    with nt.ForwardAccumulator(ts, dirs) as acc:
        y = f(*ts)
    j = acc.jvp(y)
    return None if j is None else j.numpy()


def _same(got, want):
    """Equal to rounding, a None counting as zeros (the arms may differ in which they give)."""
    for g, w in zip(got, want):
        g = np.zeros(()) if g is None else g
        w = np.zeros(()) if w is None else w
        if np.shape(g) != np.shape(w) and np.size(g) > 1 and np.size(w) > 1:
            return False
        scale = float(np.max(np.abs(w), initial=1.0)) if np.all(np.isfinite(w)) else 1.0
        if not np.allclose(g, w, rtol=1e-9, atol=1e-12 * scale, equal_nan=True):
            return False
    return True


@pytest.fixture
def cases():
    """{rule: (h, inputs, directions, gradients, tangent)} for each rule's program the
    plain arm differentiates, and the counts of the rules skipped, by reason."""
    table = makers()
    out, skipped = {}, collections.Counter()
    for k, name in enumerate(sorted(table)):
        ch = Chooser(seed=[SEED, k])
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prog = build(ch, {name: table[name]}, max_calls=1)
            except Exception:
                prog = None
            if prog is None:
                skipped["no program built"] += 1
                continue
            ref = prog.run(prog.inputs)
            prog = prog.replace(targets=[i for i in prog.targets if ref[i].dtype.kind in "fc"])
            if not prog.targets:
                skipped["no float output"] += 1
                continue
            rng = np.random.default_rng([SEED, k])
            ws = [rng.standard_normal(np.shape(ref[i])) for i in prog.targets]
            dirs = [rng.standard_normal(x.shape).astype(x.dtype) for x in prog.inputs]
            h = _scalar_of(prog, ws)
            try:
                grads = _gradients("plain", h, prog.inputs)
                tangent = _tangent("plain", h, prog.inputs, dirs)
            except NoGradientRuleError:
                skipped["refused by the plain arm (NoGradientRuleError)"] += 1
                continue
            except Exception as e:      # the random-program test reports these
                skipped[f"the plain arm raised {type(e).__name__}"] += 1
                continue
        out[name] = (h, prog.inputs, dirs, grads, tangent)
    print(f"\ntransform equivalence: {len(table)} rules, {len(out)} programs compared per "
          f"arm, {sum(skipped.values())} skipped: {dict(skipped)}")
    return out, skipped, len(table)


def test_most_rules_are_compared(cases):
    compared, skipped, n_rules = cases
    assert n_rules > 200 and len(compared) >= 0.8 * n_rules, (len(compared), dict(skipped))


def _seeded(run, *args):
    np.random.seed(SEED % 2 ** 32)
    return run(*args)


def _mismatches(arm, compared):
    bad = []
    for name, (h, xs, dirs, grads, tangent) in compared.items():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if arm == "recompute_random":       # against h times the same draw
                    h = _drawing(h)
                    grads = _seeded(_gradients, "plain", h, xs)
                    tangent = _seeded(_tangent, "plain", h, xs, dirs)
                got = _seeded(_gradients, arm, h, xs)
                got_t = _seeded(_tangent, arm, h, xs, dirs)
            except Exception as e:
                bad.append(f"{name}: {type(e).__name__}: {str(e)[:120]}")
                continue
        if not _same(got, grads):
            bad.append(f"{name}: gradients differ")
        elif not _same([got_t], [tangent]):
            bad.append(f"{name}: tangents differ")
    print(f"\n{arm}: {len(compared) - len(bad)} of {len(compared)} programs equal")
    return bad


@pytest.mark.parametrize("arm", ARMS)
def test_each_transformation_gives_the_gradients_and_tangents_of_the_code(arm, cases):
    bad = _mismatches(arm, cases[0])
    assert not bad, f"{len(bad)} programs differ under {arm}:\n" + "\n".join(bad[:20])
