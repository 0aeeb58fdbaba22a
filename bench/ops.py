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


def _child(path, repeats, number):
    env = dict(os.environ, PYTHONPATH=str(path))
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import ops, nbtape; "
            f"print(json.dumps([nbtape.__file__, ops.measure({repeats}, {number})]))")
    # cwd too: ``python -c`` puts the working directory ahead of PYTHONPATH on sys.path
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(path), capture_output=True,
                         text=True, check=True)
    where, got = json.loads(res.stdout.strip().splitlines()[-1])
    if not pathlib.Path(where).resolve().is_relative_to(path):
        raise RuntimeError(f"the child for {path} imported nbtape from {where}")
    return got


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
    for r in range(args.rounds):
        for side, path in (sides.items() if r % 2 == 0 else reversed(list(sides.items()))):
            got = _child(path.resolve(), args.repeats, args.number)
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
    if ratios:
        ratios.sort()
        print(f"per-op ratio this/other (scalar and vector): median {ratios[len(ratios) // 2]:.2f}, "
              f"max {ratios[-1]:.2f}, min {ratios[0]:.2f}")


if __name__ == "__main__":
    main()
