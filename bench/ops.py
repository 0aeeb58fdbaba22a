"""Per-op cost, this checkout against another one, paired in one run.

    python3 bench/ops.py                      # this checkout alone: us per op, record and backward
    python3 bench/ops.py --against ../old     # both, interleaved, with the ratio new/old per op

Each op is recorded on small operands (a scalar and a length-16 vector), so what is
measured is nbtape's own per-op cost, not numpy's arithmetic: the marginal cost of one
more recorded op and its reverse step (tapes of 21 calls against tapes of 1), and the
fixed cost of a tape, its one op and its gradient.  With ``--against``, the other checkout runs the
same script in a child process (``PYTHONPATH`` set to it) and the two alternate round by
round, so a slow spell of the machine hits both; the table gives each side's best
round and the ratio this/other (below 1: this checkout is faster).  The clock is CPU
time (see ``timing.py``).  This is the check behind "no op got slower" when the engine
is restructured.

Two whole workloads follow the ops, because a regression can hide between the ops
(issue 35: the memory fix's fingerprints cost the MLP step 10% and no single op showed
it): the MLP step of ``run.py``'s (b) with the batch a plain numpy array, as a user's
loop passes it, against the same step written by hand in numpy, and ``nt.jacobian`` of
a 100-100-100 tanh net with plain 100x100 weights (80 KB each) against the Jacobian by
hand; each as us per call and as a ratio to numpy's.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

# name -> (operands maker, function); operands are made with numpy from a seed
OPS = {
    "add": ("xy", lambda x, y: x + y),
    "multiply": ("xy", lambda x, y: x * y),
    "divide": ("xy", lambda x, y: x / y),
    "power 2": ("x", lambda x: x ** 2),
    "negative": ("x", lambda x: -x),
    "np.sin": ("x", lambda x: np.sin(x)),
    "np.exp": ("x", lambda x: np.exp(x)),
    "np.tanh": ("x", lambda x: np.tanh(x)),
    "np.log": ("p", lambda x: np.log(x)),
    "np.sqrt": ("p", lambda x: np.sqrt(x)),
    "np.maximum": ("xy", lambda x, y: np.maximum(x, y)),
    "np.where": ("xy", lambda x, y: np.where(x > 0, x, y)),
    "np.sum": ("x", lambda x: np.sum(x)),
    "np.mean": ("x", lambda x: np.mean(x)),
    "getitem": ("v", lambda x: x[1:3]),
    "np.reshape": ("v", lambda x: np.reshape(x, (4, 4))),
    "transpose": ("m", lambda x: x.T),
    "matmul": ("mm", lambda a, b: a @ b),
    "np.concatenate": ("vv", lambda a, b: np.concatenate([a, b])),
    "np.clip": ("x", lambda x: np.clip(x, -0.5, 0.5)),
}


def _operands(kind, shape, nt):
    rng = np.random.default_rng(0)
    if kind in ("v", "vv"):
        shape = (16,)
    if kind in ("m", "mm"):
        shape = (4, 4)

    def draw(positive=False):
        a = rng.standard_normal(shape) if shape else np.float64(rng.standard_normal())
        return nt.Variable(np.abs(a) + 0.5 if positive else a)
    if kind in ("xy", "vv", "mm"):
        return [draw(), draw()]
    return [draw(kind == "p")]


def measure(repeats, number, ops_per_tape=20):
    """``{op: {"scalar": us, "vector": us, "fixed": us}}``: the marginal cost of one more
    recorded op (record + its reverse step), from tapes of 1 and of ``ops_per_tape + 1``
    calls (``(t_many - t_one) / ops_per_tape``), and the fixed cost of a one-op tape and
    its gradient; each the best of ``repeats`` rounds of ``number`` tapes."""
    import gc
    import nbtape as nt
    out = {}

    def best_time(fn, xs, k):
        best = float("inf")
        for _ in range(repeats):
            gc.collect()
            t0 = time.process_time()
            for _ in range(number):
                with nt.GradientTape() as tape:
                    ys = [fn(*xs) for _ in range(k)]
                tape.gradient(ys, xs)
            best = min(best, (time.process_time() - t0) / number)
        return best

    for name, (kind, fn) in OPS.items():
        row = {}
        for label, shape in (("scalar", ()), ("vector", (16,))):
            xs = _operands(kind, shape, nt)
            one = best_time(fn, xs, 1)
            many = best_time(fn, xs, ops_per_tape + 1)
            row[label] = (many - one) / ops_per_tape * 1e6
            if label == "scalar":
                row["fixed"] = one * 1e6
        out[name] = row
    return out


def _mlp_step(nt, dtype, batch=128, sizes=(784, 256, 128, 10)):
    """``(nbtape step, hand-written numpy step)`` of run.py's (b) MLP, the batch plain."""
    rng = np.random.default_rng(0)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [(rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype), np.zeros(b, dtype)]
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    onehot = np.eye(sizes[-1], dtype=dtype)[rng.integers(0, sizes[-1], batch)]
    variables = [nt.Variable(p) for p in params]

    def log_softmax(z):
        m = np.max(z, axis=1, keepdims=True)
        return z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))

    def taped():
        w1, b1, w2, b2, w3, b3 = variables
        with nt.GradientTape() as tape:
            h = np.maximum(x @ w1 + b1, 0.0)
            h = np.maximum(h @ w2 + b2, 0.0)
            loss = -np.mean(np.sum(onehot * log_softmax(h @ w3 + b3), axis=1))
        return tape.gradient(loss, variables)

    def by_hand():
        w1, b1, w2, b2, w3, b3 = params
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0.0)
        z2 = h1 @ w2 + b2
        h2 = np.maximum(z2, 0.0)
        z3 = h2 @ w3 + b3
        e = np.exp(z3 - np.max(z3, axis=1, keepdims=True))
        g3 = (e / np.sum(e, axis=1, keepdims=True) - onehot) / len(x)
        g2 = (g3 @ w3.T) * (z2 > 0)
        g1 = (g2 @ w2.T) * (z1 > 0)
        return [x.T @ g1, g1.sum(0), h1.T @ g2, g2.sum(0), h2.T @ g3, g3.sum(0)]
    return taped, by_hand


def _jacobian(nt, n=100):
    """``(nt.jacobian of a tanh net with plain n x n weights, the Jacobian by hand)``."""
    rng = np.random.default_rng(1)
    w1, w2 = (rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(2))
    b1, b2 = rng.standard_normal(n) * 0.1, rng.standard_normal(n) * 0.1
    x = rng.standard_normal(n)
    jac = nt.jacobian(lambda v: np.tanh(np.tanh(v @ w1 + b1) @ w2 + b2))

    def by_hand():
        h = np.tanh(x @ w1 + b1)
        y = np.tanh(h @ w2 + b2)
        return ((1 - y * y)[:, None] * w2.T) @ ((1 - h * h)[:, None] * w1.T)
    return lambda: jac(x), by_hand


def measure_workloads(repeats, number=20):
    """``{workload: {"nbtape": us, "numpy": us}}`` per call, each the best of ``repeats``
    rounds of ``number`` calls, the two interleaved."""
    import gc
    import nbtape as nt
    cases = {"MLP step f32, plain X": _mlp_step(nt, np.float32),
             "MLP step f64, plain X": _mlp_step(nt, np.float64),
             "jacobian 100x100": _jacobian(nt)}
    out = {}
    for name, (ours, theirs) in cases.items():
        best = {"nbtape": float("inf"), "numpy": float("inf")}
        ours(), theirs()
        for _ in range(repeats):
            for side, fn in (("nbtape", ours), ("numpy", theirs)):
                gc.collect()
                t0 = time.process_time()
                for _ in range(number):
                    fn()
                best[side] = min(best[side], (time.process_time() - t0) / number * 1e6)
        out[name] = best
    return out


def _child(path, repeats, number):
    env = dict(os.environ, PYTHONPATH=str(path))
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import ops, nbtape; "
            f"print(json.dumps([nbtape.__file__, ops.measure({repeats}, {number}), "
            f"ops.measure_workloads({repeats})]))")
    # cwd too: ``python -c`` puts the working directory ahead of PYTHONPATH on sys.path
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(path), capture_output=True,
                         text=True, check=True)
    where, got, workloads = json.loads(res.stdout.strip().splitlines()[-1])
    if not pathlib.Path(where).resolve().is_relative_to(path):
        raise RuntimeError(f"the child for {path} imported nbtape from {where}")
    return got, workloads


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", help="another nbtape checkout to compare with")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds per side")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--number", type=int, default=200)
    args = p.parse_args(argv)
    this = HERE.parent
    sides = {"this": this} if not args.against else {"this": this,
                                                     "other": pathlib.Path(args.against)}
    best = {s: {} for s in sides}
    loads = {s: {} for s in sides}
    for r in range(args.rounds):
        for side, path in (sides.items() if r % 2 == 0 else reversed(list(sides.items()))):
            got, workloads = _child(path.resolve(), args.repeats, args.number)
            for name, row in workloads.items():
                for k, v in row.items():
                    cur = loads[side].setdefault(name, {}).get(k)
                    loads[side][name][k] = v if cur is None else min(cur, v)
            for op, row in got.items():
                for k, v in row.items():
                    cur = best[side].setdefault(op, {}).get(k)
                    best[side][op][k] = v if cur is None else min(cur, v)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    head = f"{'op (us)':16} {'scalar':>8} {'vector':>8} {'fixed':>8}"
    if args.against:
        head += f" {'o.scalar':>8} {'o.vector':>8} {'o.fixed':>8} {'r.scalar':>8} " \
                f"{'r.vector':>8} {'r.fixed':>8}"
    print(head)
    ratios = []
    for op in OPS:
        a = best["this"][op]
        line = f"{op:16} {a['scalar']:8.2f} {a['vector']:8.2f} {a['fixed']:8.2f}"
        if args.against:
            b = best["other"][op]
            rs, rv, rf = (a[k] / b[k] for k in ("scalar", "vector", "fixed"))
            ratios += [rs, rv]
            line += (f" {b['scalar']:8.2f} {b['vector']:8.2f} {b['fixed']:8.2f} {rs:8.2f} "
                     f"{rv:8.2f} {rf:8.2f}")
        print(line)
    head = f"{'workload (us per call)':24} {'nbtape':>9} {'numpy':>9} {'x numpy':>8}"
    if args.against:
        head += f" {'o.nbtape':>9} {'o.x numpy':>9} {'this/other':>10}"
    print(head)
    for name, a in loads["this"].items():
        line = f"{name:24} {a['nbtape']:9.1f} {a['numpy']:9.1f} {a['nbtape'] / a['numpy']:8.3f}"
        if args.against:
            b = loads["other"][name]
            line += (f" {b['nbtape']:9.1f} {b['nbtape'] / b['numpy']:9.3f} "
                     f"{a['nbtape'] / b['nbtape']:10.3f}")
        print(line)
    if ratios:
        ratios.sort()
        print(f"per-op ratio this/other (scalar and vector): median {ratios[len(ratios) // 2]:.2f}, "
              f"max {ratios[-1]:.2f}, min {ratios[0]:.2f}")


if __name__ == "__main__":
    main()
