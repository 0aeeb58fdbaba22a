"""Random programs over the whole rule registry, against numpy and finite differences.

Each program is a short chain of numpy calls (``gradcheck/programs.py`` builds it, with a maker
per registry entry from ``gradcheck/program_table.py``) on float or complex inputs: operands
positional or by keyword, plain-array constants and Python scalars mixed in,
broadcasting and 0-d shapes.  Each is run four ways: on plain arrays (numpy's value),
on tensors with no tape (the same value, shape and dtype), under a ``GradientTape``
(the gradient along a random direction against central differences at two step sizes)
and under a ``ForwardAccumulator`` (the tangent, likewise).  The outcome is one of

* ``ok``;
* ``wrong``: a value, gradient or tangent silently differs (or is None, or has the
  wrong shape or dtype);
* ``crash``: an exception other than ``NoGradientRuleError`` in a program numpy runs;
* ``refused``: ``NoGradientRuleError`` (a refusal that says why is allowed);
* ``unsmooth``: the two step sizes disagree, the point cannot be judged.

A wrong or crashing program is shrunk (by shrinking its recorded random choices) to a
short reproducer.  CI runs a fixed budget with a fixed seed; the long run is

    python tests/test_random_programs.py --seed 1 --budget 20000 [--minutes 10]

which prints the counts and one shrunk reproducer per class.
"""
import argparse
import collections
import re
import sys
import time
import warnings

import numpy as np

import nbtape as nt
from gradcheck import directional_differences, judge
from nbtape.diagnostics.errors import NoGradientRuleError
from gradcheck.program_table import makers
from gradcheck.programs import Builder, Chooser, Reject, _refs, build
from gradcheck.traced import compare
from nbtape.transforms.trace import TracingError

CI_SEED, CI_BUDGET = 20261123, 3000
TRACED_BUDGET = 400     # programs run both ways, eagerly and through nt.function
SEVERITY = ("crash", "wrong", "refused", "unsmooth", "ok")


class Result(collections.namedtuple("Result", "outcome mode detail")):
    @property
    def key(self):
        return self.outcome, self.mode, self.detail


def _short(e):
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {re.sub(r'[0-9]+', '#', msg)[:90]}"


def _real(t):
    return t.numpy() if isinstance(t, (nt.Tensor, nt.Variable)) else np.asarray(t)


def _weights(rng, values):
    ws = []
    for v in values:
        w = rng.standard_normal(np.shape(v))
        ws.append(w + 1j * rng.standard_normal(np.shape(v)) if v.dtype.kind == "c" else w)
    return ws


def _direction(rng, x):
    v = rng.standard_normal(x.shape)
    return v + 1j * rng.standard_normal(x.shape) if x.dtype.kind == "c" else v


def _scalar(env, targets, ws):
    """real(sum(w * y)) over the targets: one real number that every target feeds."""
    total = 0.0
    for i, w in zip(targets, ws):
        total = total + np.real(np.sum(np.multiply(env[i], w)))
    return total


def _dot(g, v):
    return float(np.real(np.sum(np.conj(g) * v)))


def check(prog, seed=0, each=None):
    """Run ``prog`` four ways; the worst ``Result`` (``each`` gets all three)."""
    rng = np.random.default_rng(seed)
    xs = prog.inputs
    vs = [_direction(rng, x) for x in xs]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = prog.run(xs)
        targets = [i for i in prog.targets if ref[i].dtype.kind in "fc"]
        prog = prog.replace(targets=targets)
        ws = _weights(rng, [ref[i] for i in prog.targets])
        try:
            diffs = directional_differences(
                lambda *a: _scalar(prog.run(a), prog.targets, ws), xs, vs)
        except Exception:       # numpy refuses a nearby point (a solve turned singular)
            diffs = [np.nan, np.nan]                # then the point is not judged
        scale = sum(float(np.sum(np.abs(ref[i]))) for i in prog.targets)
        results = [_values(prog, xs, ref), _reverse(prog, xs, vs, ws, diffs, scale),
                   _forward(prog, xs, vs, ws, diffs, scale)]
    if each is not None:
        each.extend(results)
    return min(results, key=lambda r: SEVERITY.index(r.outcome))


def _values(prog, xs, ref):
    try:
        got = prog.run(prog.wrap(nt))
    except NoGradientRuleError as e:
        return Result("refused", "value", _short(e))
    except Exception as e:
        return Result("crash", "value", _short(e))
    for k, (r, g) in enumerate(zip(ref, got)):
        if not isinstance(g, (nt.Tensor, nt.Variable, np.ndarray, np.generic)):
            return Result("wrong", "value", f"a {type(g).__name__}, not a tensor")
        g = _real(g)
        if g.shape != r.shape or g.dtype != r.dtype:
            return Result("wrong", "value", "shape or dtype differs from numpy's")
        if not np.allclose(g, r, rtol=1e-9, atol=1e-12, equal_nan=True):
            return Result("wrong", "value", "value differs from numpy's")
    return Result("ok", "value", "")


def _verdict(mode, derivative, diffs, scale):
    # A nan from 0 * inf (cbrt at an exact 0 reached through floor or imag) is what
    # every autodiff system gives; such a point is not smooth, and is not judged.
    ok = judge(derivative, diffs, scale) if np.isfinite(derivative) else None
    if ok is None:
        return Result("unsmooth", mode, "")
    if ok:
        return Result("ok", mode, "")
    return Result("wrong", mode, "differs from finite differences")


def _reverse(prog, xs, vs, ws, diffs, scale):
    ts = prog.wrap(nt)
    try:
        with nt.GradientTape() as tape:
            tape.watch(ts)
            h = _scalar(prog.run(ts), prog.targets, ws)
        grads = tape.gradient(h, ts)
    except NoGradientRuleError as e:
        return Result("refused", "reverse", _short(e))
    except Exception as e:
        return Result("crash", "reverse", _short(e))
    total = 0.0
    for g, x, v in zip(grads, xs, vs):
        if g is None:       # counts as zero: wrong exactly when the derivative is not
            continue
        g = _real(g)
        if g.shape != x.shape or g.dtype != x.dtype:
            return Result("wrong", "reverse", "gradient shape or dtype is not the source's")
        total += _dot(g, v)
    return _verdict("reverse", total, diffs, scale)


def _forward(prog, xs, vs, ws, diffs, scale):
    ts = prog.wrap(nt)
    try:
        with nt.ForwardAccumulator(ts, [v.astype(x.dtype) for v, x in zip(vs, xs)]) as acc:
            env = prog.run(ts)
        jvps = [acc.jvp(env[i]) for i in prog.targets]
    except NoGradientRuleError as e:
        return Result("refused", "forward", _short(e))
    except Exception as e:
        return Result("crash", "forward", _short(e))
    total = 0.0
    for j, i, w in zip(jvps, prog.targets, ws):
        if j is None:
            continue
        total += float(np.real(np.sum(_real(j) * w)))
    return _verdict("forward", total, diffs, scale)


def culprit(prog):
    """The last call, as ``name(keywords=)``."""
    c = prog.calls[-1]
    return f"{prog.names()[-1]}({', '.join(n + '=' for n in c.kwargs)})"


def program(seed, index, table):
    return build(Chooser(seed=[seed, index]), table)


def shrink(prog, key, budget=200):
    """A short program with the same outcome, mode and detail: calls are cut (their
    results become inputs) from the last to the first, then unused targets dropped."""
    tries = 0
    best = prog.compact()
    j = len(best.calls) - 1
    while j >= 0 and tries < budget:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = best.run(best.inputs)
        for cand in (best.cut(j, values).compact(),):
            tries += 1
            if cand.calls and check(cand).key == key:
                best = cand
        j = min(j - 1, len(best.calls) - 1)
    for k in range(len(best.inputs)):       # smaller inputs: the first entries along an axis
        for axis in range(best.inputs[k].ndim):
            x = best.inputs[k]
            if x.shape[axis] > 1 and tries < budget:
                tries += 1
                inputs = list(best.inputs)
                inputs[k] = np.take(x, range(x.shape[axis] - 1), axis=axis)
                cand = best.replace(inputs=inputs)
                try:
                    if check(cand).key == key:
                        best = cand
                except Exception:           # numpy itself refuses the smaller program
                    pass
    for t in list(best.targets):
        if len(best.targets) > 1 and tries < budget:
            tries += 1
            cand = best.replace(targets=[u for u in best.targets if u != t]).compact()
            if check(cand).key == key:
                best = cand
    return best


def run(seed, budget, minutes=None, shrink_budget=150, out=sys.stdout):
    """Run ``budget`` programs (or until ``minutes``): counts, and the classes of
    wrong, crash and refused, each with a shrunk reproducer."""
    table = makers()
    counts, per_mode = collections.Counter(), collections.Counter()
    classes = {}       # (outcome, mode, detail, culprit call) -> [count, program, index]
    start = time.time()
    n = 0
    for index in range(budget):
        if minutes is not None and time.time() - start > 60 * minutes:
            break
        prog = program(seed, index, table)
        if prog is None:
            continue
        n += 1
        each = []
        r = check(prog, each=each)
        counts[r.outcome] += 1
        per_mode.update((e.mode, e.outcome) for e in each)
        if r.outcome in ("wrong", "crash", "refused"):
            if r.outcome != "refused":
                prog = shrink(prog, r.key, shrink_budget) if shrink_budget else prog
            key = r.key + (culprit(prog) if r.outcome != "refused" else "",)
            classes.setdefault(key, [0, prog, index])[0] += 1
    print(f"seed {seed}, budget {budget}: {n} programs in {time.time() - start:.0f}s: " +
          ", ".join(f"{k} {counts[k]}" for k in SEVERITY), file=out)
    for mode in ("value", "reverse", "forward"):
        print(f"  {mode:7} alone: " + ", ".join(f"{k} {per_mode[mode, k]}" for k in SEVERITY
                                                if k != "unsmooth" or mode != "value"), file=out)
    summary = collections.defaultdict(lambda: [0, set()])
    for (outcome, mode, detail, call), (count, prog, _) in classes.items():
        kw = any(True for a in prog.calls[-1].kwargs.values() for _ in _refs(a)) \
            if outcome == "wrong" else False
        if outcome == "refused":          # one class per message, naming the functions
            fns = re.findall(r"np\.[\w.#]+", detail)
            detail = re.sub(r"np\.[\w.#]+", "np.<f>", detail)[:70]
            call = fns[0] if fns else ""
        group = summary[outcome, mode, detail if outcome != "wrong" else
                        "a tensor passed by keyword" if kw else "positional operands"]
        group[0] += count
        group[1].add(call.split("(")[0])
    print("\nclasses (outcome, mode, what): programs, functions", file=out)
    for (outcome, mode, what), (count, names) in sorted(summary.items(), key=lambda kv: (
            SEVERITY.index(kv[0][0]), -kv[1][0])):
        print(f"  {outcome:7} {mode:7} {what}: {count}; {', '.join(sorted(names))}", file=out)
    for key, (count, prog, index) in sorted(classes.items(), key=lambda kv: (
            SEVERITY.index(kv[0][0]), -kv[1][0])):
        outcome, mode, detail, call = key
        print(f"\n[{outcome}] {mode}: {call} {detail or ''} ({count} programs, e.g. #{index})",
              file=out)
        if outcome != "refused":
            print("    " + prog.source().replace("\n", "\n    "), file=out)
        out.flush()
    return counts, classes


def test_random_programs_ci_budget():
    """A fixed seed and budget: no wrong value, gradient or tangent, and no crash."""
    table = makers()
    bad = []
    for index in range(CI_BUDGET):
        prog = program(CI_SEED, index, table)
        if prog is None:
            continue
        r = check(prog)
        if r.outcome in ("wrong", "crash") and all(r.key != b[0] for b in bad):
            bad.append((r.key, shrink(prog, r.key)))
    assert not bad, "\n\n".join(f"{k[0]} in {k[1]} mode ({k[2]}):\n{p.source()}"
                                for k, p in bad)


def _from_numpy_or_core(key):
    fn = key[0] if isinstance(key, tuple) else key
    module = getattr(fn, "__module__", None) or ""
    return isinstance(fn, np.ufunc) or module.startswith(("numpy", "nbtape.rules"))


def test_random_programs_replay_through_nt_function_as_eager_runs_them():
    # each program's gradient and tangent, traced at its inputs and replayed at others,
    # against an eager run at those others: bit for bit, or a refusal that names the
    # rule reading a value in Python (tests/gradcheck/traced.py)
    table = makers()
    counts = collections.Counter()
    for index in range(TRACED_BUDGET):
        prog = program(CI_SEED, index, table)
        if prog is None:
            continue
        for mode, outcome in compare(prog).items():
            if isinstance(outcome, TracingError):
                assert "nbtape's own" in str(outcome), (mode, str(outcome), prog.source())
                counts["refused"] += 1
            else:
                assert outcome in ("ok", "eager fails"), (mode, outcome, prog.source())
                counts[outcome] += 1
    assert counts["ok"] > 0.8 * sum(counts.values()), counts


def test_the_registry_is_covered():
    """Every rule with a gradient gets a maker, so a new rule is fuzzed for free."""
    from nbtape.core.registry import RULES
    table = makers()
    # numpy's functions, ufuncs and ufunc methods, and nbtape's core primitives; not what
    # other modules or tests add when imported (nt.nn, nt.clip_*, doctest examples),
    # which would make this depend on the order tests run in
    # (scipy.special's ufuncs, registered once scipy is in use, have their own domains:
    # tests/test_rules_scipy_special.py checks them)
    names = {r.name for key, r in RULES.items() if not (r.nondiff or r.stop)
             and _from_numpy_or_core(key) and not r.name.startswith("scipy.")}
    internal = {"scatter_add", "stop_gradient", "bessel_i1"}
    assert names - internal <= set(table), sorted(names - internal - set(table))


def test_every_maker_makes_calls_numpy_runs():
    """No maker is dead weight: each gives, within a few tries, a call numpy runs
    (a new rule whose arguments numpy's signature cannot explain shows up here)."""
    dead = []
    for name, maker in sorted(makers().items()):
        for attempt in range(200):
            b = Builder(Chooser(seed=[CI_SEED, attempt]))
            try:
                b.add(maker(b))
                break
            except Reject:
                continue
        else:
            dead.append(name)
    assert not dead, f"add these to program_table.special(): {dead}"


def test_a_wrong_rule_is_caught_and_shrunk():
    """The test can fail: a VJP and a JVP off by a factor are found, and shrink."""
    from nbtape.core.registry import RULES
    rule = RULES[np.sin]
    saved = rule.vjps, rule.jvps
    table = {"np.sin": makers()["np.sin"]}
    try:
        rule.vjps = (lambda g, ans, x: 2 * g * np.cos(x),)
        rule.jvps = (lambda t, ans, x: 2 * t * np.cos(x),)
        results = [check(program(CI_SEED, i, table)) for i in range(5)]
        assert {(r.outcome, r.mode) for r in results} == {("wrong", "reverse")}
        prog = program(CI_SEED, 0, table)
        small = shrink(prog, results[0].key)
        assert small.names() == ["np.sin"] and check(small).key == results[0].key
        rule.vjps = saved[0]
        assert {check(program(CI_SEED, i, table)).key for i in range(5)} == {
            ("wrong", "forward", "differs from finite differences")}
    finally:
        rule.vjps, rule.jvps = saved
    assert {check(program(CI_SEED, i, table)).outcome for i in range(5)} == {"ok"}


def test_programs_replay_from_their_choices():
    table = makers()
    prog = program(CI_SEED, 3, table)
    again = build(Chooser(prefix=prog.choices), table)
    assert again.source() == prog.source()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=int, default=20000)
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--shrink", type=int, default=150, help="runs per shrink (0: none)")
    a = ap.parse_args()
    run(a.seed, a.budget, a.minutes, a.shrink)
