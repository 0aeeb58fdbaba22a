"""The benchmark's sections, (a) to (g) of issues 2 and 16; each returns table rows.

Every section runs nbtape, the hand-written numpy baseline and the available
peers interleaved in one measurement (see ``timing.py``), checks that they
computed the same numbers, and turns best times into ratios.
"""
import json
import os
import subprocess
import sys

import numpy as np

import cases
import handwritten
import problems
from report import Row
from timing import Timed, in_a_row, interleaved, without_gc

HERE = os.path.dirname(os.path.abspath(__file__))


class Context:
    def __init__(self, quick, peers, threads=None):
        self.quick = quick
        self.peers = peers          # {name: peer object} for the importable peers
        self.threads = threads      # BLAS threads (None: library default)
        self.details = {}           # extra facts for --json

    def reps(self, full, quick):
        return quick if self.quick else full


def _ratio(stats, a, b, key="total"):
    sa, sb = stats[a][key], stats[b][key]
    return sa.best / sb.best, sa.median / sb.median


def _values(stats, key, scale):
    return ({n: s[key].best * scale for n, s in stats.items() if key in s},
            {n: s[key].spread for n, s in stats.items() if key in s})


def _chain_timed(fn, n):
    def run():
        t_rec, t_back, g = fn(n)
        return Timed({"total": t_rec + t_back, "record": t_rec, "backward": t_back}, g)
    return run


# (a) --------------------------------------------------------------------------------------------
def scalar_chain(ctx, n=2000):
    number = 20000

    def bare():
        # scaled to "n ops" so that it sits in the same unit as the chains
        return Timed({"total": handwritten.bare_op_loop(number) * n / number})

    traced = cases.TracedChain(n)
    fns = {"nbtape": _chain_timed(cases.chain, n), "numpy": bare,
           "plain loop": _chain_timed(handwritten.chain, n), FN: _chain_timed(traced.run, n)}
    for name, peer in ctx.peers.items():
        fns[name] = _chain_timed(peer.chain, n)
    for name in ["nbtape", *ctx.peers]:
        fns[name + " nogc"] = without_gc(fns[name])
    stats, results = interleaved(fns, ctx.reps(15, 5))
    fn_rows = _traced_rows("a", "  with nt.function: a replay of the traced record+backward",
                           "us/op", stats, us_per(n), 0.2, "torch")
    fn_stats = stats.pop(FN)
    if results.pop(FN) != results["nbtape"]:
        fn_rows[0].ok = False
        fn_rows[0].note += " -- WRONG: the replay's gradient is not eager's"
    nogc = {k[:-5]: stats.pop(k) for k in list(stats) if k.endswith(" nogc")}
    us = 1e6 / n
    wrong = _wrong_chain(results, n, problems.CHAIN_X0)
    vals, noise = _values(stats, "total", us)
    plain = vals.pop("plain loop")
    noise.pop("plain loop")
    ratio = _ratio(stats, "nbtape", "numpy")
    rows = []
    torch_ok, target = _torch_target(vals, CHAIN_TARGET)
    rows.append(Row("a", f"scalar op, record+backward ({n:,}-op chain) vs bare np.multiply "
                         "on a 0-d array", "us/op", vals, noise, *ratio, target,
                    False if wrong else torch_ok,
                    note=("WRONG gradient from " + ", ".join(wrong)) if wrong else ""))
    for key in ("record", "backward"):
        v, nz = _values(stats, key, us)
        v.pop("plain loop", None), v.pop("numpy", None)
        rows.append(Row("a", f"  of which {key}", "us/op", v, nz))
    v, nz = _values(nogc, "total", us)
    rows.append(Row("a", "  same, cyclic GC off (diagnostic: the rest is GC)", "us/op", v, nz))
    rows.append(Row("a", "same Python loop on 0-d arrays, no tape (the loop's own cost)", "us/op",
                    {"nbtape": vals["nbtape"], "numpy": plain},
                    ratio=vals["nbtape"] / plain,
                    ratio_median=(stats["nbtape"]["total"].median
                                  / stats["plain loop"]["total"].median)))
    return rows + fn_rows + _first_call(ctx, n, fn_stats) + vector_chain(ctx, n)


CHAIN_TARGET = 0.8          # issue 16: record+backward per op at most 0.8x PyTorch's
FN = "nt.function"          # the column of a traced workload's replays (issue 28)


def us_per(n):
    return 1e6 / n


def _traced_rows(section, case, unit, stats, scale, limit, against):
    """The row of ``nt.function``'s replays, from the same interleaved run as the eager
    row (its ratio to the numpy column is paired; ``against`` names the target's peer)."""
    vals = {"nbtape": stats[FN]["total"].best * scale, "numpy": stats["numpy"]["total"].best * scale}
    noise = {"nbtape": stats[FN]["total"].spread, "numpy": stats["numpy"]["total"].spread}
    if against in stats:
        vals[against] = stats[against]["total"].best * scale
        noise[against] = stats[against]["total"].spread
    ratio = _ratio(stats, FN, "numpy")
    if against == "numpy":
        ok, target = ratio[0] <= limit, f"<= {limit}x numpy"
    elif against in stats:
        rel = stats[FN]["total"].best / stats[against]["total"].best
        med = stats[FN]["total"].median / stats[against]["total"].median
        ok, target = rel <= limit, f"<= {limit}x {against}: {rel:.2f}x (med {med:.2f}x) {against}"
    else:
        ok, target = None, f"<= {limit}x {against} (not installed)"
    eager = stats["nbtape"]["total"].best / stats[FN]["total"].best
    return [Row(section, case, unit, vals, noise, *ratio, target, ok,
                note=f"nt.function's replay is {eager:.1f}x faster than the eager nbtape column")]


def _first_call(ctx, n, fn_stats):
    """(a): nt.function's first call (it traces: an eager run under its recorder, then
    the program compiled) against one eager record+backward, interleaved."""
    def first():
        return Timed({"total": cases.TracedChain(n).first})
    stats, _ = interleaved({"trace": first, "eager": _chain_timed(cases.chain, n)},
                           ctx.reps(7, 3))
    ratio = _ratio(stats, "trace", "eager")
    return [Row("a", f"  nt.function's first (tracing) call over one eager call ({n:,} ops)",
                "ms", {"nbtape": stats["trace"]["total"].best * 1e3}, {}, *ratio,
                note="the first call runs the step eagerly under the tracer and compiles "
                     "the program; every later call with the same signature replays it")]


def _wrong_chain(results, n, x0):
    _, exact = problems.chain_reference(n, x0)
    return [k for k, g in results.items() if g is not None and
            not np.max(np.abs(np.asarray(g) - exact)) <= 1e-9 * np.max(np.abs(exact))]


def _torch_target(vals, limit):
    """``(ok, target text)``: nbtape at most ``limit`` times the torch column."""
    if "torch" not in vals:
        return None, f"<= {limit}x torch"
    rel = vals["nbtape"] / vals["torch"]
    return rel <= limit, f"<= {limit}x torch: {rel:.2f}x torch"


def vector_chain(ctx, n):
    """(a'): the same chain on a length-16 vector (per op: one ufunc call on 16 floats)."""
    x0 = problems.chain_vector_x0()
    number = 20000

    def bare():
        return Timed({"total": handwritten.bare_op_loop(number, x0) * n / number})

    fns = {"nbtape": _chain_timed(lambda k: cases.chain(k, x0), n), "numpy": bare}
    for name, peer in ctx.peers.items():
        fns[name] = _chain_timed(lambda k, peer=peer: peer.chain(k, x0), n)
    stats, results = interleaved(fns, ctx.reps(15, 5))
    wrong = _wrong_chain(results, n, x0)
    vals, noise = _values(stats, "total", 1e6 / n)
    ok, target = _torch_target(vals, CHAIN_TARGET)
    rows = [Row("a'", f"the same chain on a length-{x0.size} vector vs bare np.multiply on it",
                "us/op", vals, noise, *_ratio(stats, "nbtape", "numpy"), target,
                False if wrong else ok,
                note=("WRONG gradient from " + ", ".join(wrong)) if wrong else "")]
    for key in ("record", "backward"):
        v, nz = _values(stats, key, 1e6 / n)
        v.pop("numpy", None)
        rows.append(Row("a'", f"  of which {key}", "us/op", v, nz))
    return rows


# (b) --------------------------------------------------------------------------------------------
def _max_rel_err(grads, ref):
    return max(float(np.max(np.abs(np.asarray(g, dtype=np.float64) - r)) / max(np.max(np.abs(r)), 1e-30))
               for g, r in zip(grads, ref))


MLP_STEPS = 10      # steps per sample, back to back (timing.in_a_row)
PLAIN = "nbtape-plain"      # (b)/(d)'s nbtape with the batch a plain array, not a constant


def mlp(ctx):
    rows = []
    for dtype in ("float32", "float64"):
        params, x, onehot = problems.mlp_data(np.dtype(dtype))
        steps = {"nbtape": cases.MLP(params, x, onehot),
                 "numpy": handwritten.MLP(params, x, onehot),
                 FN: cases.TracedMLP(params, x, onehot)}
        for name, peer in ctx.peers.items():
            steps[name] = peer.mlp(params, x, onehot)
        # the batch as a user's loop has it, a plain array (the tape guards it): its own row
        steps[PLAIN] = cases.MLP(params, x, onehot, plain=True)
        stats, results = interleaved({k: in_a_row(s.step, MLP_STEPS) for k, s in steps.items()},
                                     ctx.reps(20, 6), warmup=1)
        ref_loss, ref_grads = results["numpy"]
        ref_grads = [np.asarray(g, dtype=np.float64) for g in ref_grads]
        tol = 1e-4 if dtype == "float32" else 1e-10
        errs = {k: _max_rel_err(r[1], ref_grads) for k, r in results.items() if k != "numpy"}
        wrong = {k: e for k, e in errs.items() if not e < tol}
        dtypes = {k: str(np.asarray(r[1][0]).dtype) for k, r in results.items()}
        vals, noise = _values(stats, "total", 1e3)
        plain = vals.pop(PLAIN), noise.pop(PLAIN)
        ratio = _ratio(stats, "nbtape", "numpy")
        note = f"nbtape uses {steps['nbtape'].desc}; max rel. grad error vs hand-written: " + \
            ", ".join(f"{k} {e:.1e}" for k, e in errs.items())
        if wrong:
            note += " -- WRONG: " + ", ".join(wrong)
        if dtypes["nbtape"] != dtype:
            note += f" -- nbtape's gradients came back {dtypes['nbtape']}"
        fn_row = _traced_rows("b", f"  with nt.function, {dtype}: a replay of the traced step",
                              "ms", stats, 1e3, 1.03, "numpy")
        vals.pop(FN), noise.pop(FN)
        rows.append(Row("b", f"MLP 784-256-128-10, batch 128, fwd+bwd, {dtype}", "ms", vals, noise,
                        *ratio, "<= 1.10x numpy", ratio[0] <= 1.10 and not wrong, note))
        rows.append(Row("b", "  same, the batch a plain numpy array (kept by reference, "
                             "fingerprinted; diagnostic)", "ms",
                        {"nbtape": plain[0], "numpy": vals["numpy"]},
                        {"nbtape": plain[1], "numpy": noise["numpy"]},
                        *_ratio(stats, PLAIN, "numpy")))
        rows += fn_row
        ctx.details[f"mlp_{dtype}_grad_err"] = errs
    rows.append(_mlp_overhead(ctx))
    return rows


def _mlp_overhead(ctx, sizes=(4, 4, 4, 2), batch=2):
    """The same 13-op net on tiny arrays: the time is (almost) all per-op overhead, so
    nbtape minus numpy here is the tape's fixed cost per training step."""
    params, x, onehot = problems.mlp_data(np.dtype("float64"), sizes=sizes, batch=batch)
    steps = {"nbtape": cases.MLP(params, x, onehot), "numpy": handwritten.MLP(params, x, onehot)}
    for name, peer in ctx.peers.items():
        steps[name] = peer.mlp(params, x, onehot)
    stats, _ = interleaved({k: in_a_row(s.step, 2 * MLP_STEPS) for k, s in steps.items()},
                           ctx.reps(30, 10), warmup=1)
    vals, noise = _values(stats, "total", 1e6)
    extra = vals["nbtape"] - vals["numpy"]
    return Row("b", f"  same net at width {sizes[0]}, batch {batch} (per-step overhead only; "
                    "diagnostic)", "us", vals, noise, *_ratio(stats, "nbtape", "numpy"),
               note=f"the tape adds {extra:.0f} us per step to hand-written numpy; (b)'s "
                    "1.10x budget is 0.10 x the numpy column of the full-size rows")


# (c) --------------------------------------------------------------------------------------------
def _mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def scaling(ctx):
    small, big = 10_000, 100_000
    fns = {"10k": _chain_timed(cases.chain, small), "100k": _chain_timed(cases.chain, big)}
    fns["10k nogc"] = without_gc(fns["10k"])
    fns["100k nogc"] = without_gc(fns["100k"])
    stats, _ = interleaved(fns, ctx.reps(3, 2), warmup=0)
    rows = []
    for key in ("total", "record", "backward"):
        r_best, r_med = _ratio(stats, "100k", "10k", key)
        label = ("chain of 100k ops over chain of 10k ops, record+backward" if key == "total"
                 else f"  {key} only")
        rows.append(Row("c", label, "s (100k)", {"nbtape": stats["100k"][key].best},
                        {"nbtape": stats["100k"][key].spread}, r_best, r_med,
                        "<= 11x" if key == "total" else "",
                        r_best <= 11.0 if key == "total" else None))
    r_best, r_med = _ratio(stats, "100k nogc", "10k nogc")
    rows.append(Row("c", "  record+backward, cyclic GC off (diagnostic)", "s (100k)",
                    {"nbtape": stats["100k nogc"]["total"].best},
                    {"nbtape": stats["100k nogc"]["total"].spread}, r_best, r_med))
    if not ctx.quick:
        rows.append(_million(ctx, stats["10k"]["total"].best, stats["100k"]["total"].best))
    return rows


def _million(ctx, t_10k, t_100k, n=1_000_000):
    avail = _mem_available()
    if avail is not None and avail < 4 * 2**30:
        return Row("c", f"chain of {n:,} ops", "s", {}, note=f"skipped: only "
                   f"{avail / 2**30:.1f} GiB available (needs about 1 GiB, wants 4 free)")
    out = _child(["chain", str(n)], ctx.threads)
    ctx.details["million"] = out
    if out.get("recursion_error"):
        return Row("c", f"chain of {n:,} ops", "s", {}, target="no RecursionError", ok=False,
                   note="RecursionError: " + out.get("error", ""))
    total = out["t_record"] + out["t_backward"]
    return Row("c", f"chain of {n:,} ops, once, in its own process (ratio: over the 100k chain)",
               "s", {"nbtape": total}, ratio=total / t_100k, target="no RecursionError",
               ok=out["rel_err"] < 1e-6,
               note=f"no RecursionError; {total / n * 1e6:.1f} us/op against "
                    f"{t_10k / 1e4 * 1e6:.1f} at 10k and {t_100k / 1e5 * 1e6:.1f} at 100k; "
                    f"record {out['t_record']:.1f} s + backward "
                    f"{out['t_backward']:.1f} s; peak RSS {out['rss_peak'] / 2**20:,.0f} MB "
                    f"(before the chain {out['rss_before'] / 2**20:,.0f} MB); gradient rel. "
                    f"error {out['rel_err']:.1e}")


def _child(args, threads=None):
    """Run ``memprobe.py`` in a fresh process with a predictable allocator; its JSON."""
    env = dict(os.environ)
    if threads:
        env.update(OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    # Fixed glibc thresholds: big arrays are mmap'ed and unmapped on free, so the
    # resident set follows what is alive instead of what malloc chose to keep.
    env.update(MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0",
               PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, os.path.join(HERE, "memprobe.py"), *args],
                          capture_output=True, text=True, env=env, cwd=HERE)
    if proc.returncode != 0:
        raise RuntimeError(f"memprobe {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# (d) --------------------------------------------------------------------------------------------
def memory(ctx):
    # no JAX column: XLA's buffers are invisible to tracemalloc, and its RSS is mostly XLA
    impls = ["nbtape", "numpy"] + ([] if ctx.quick else [p for p in ctx.peers if p != "jax"])
    rows = []
    mb = 1 / 2**20
    for dtype in ("float32", "float64"):
        res = {impl: _child(["mlp", impl, dtype], ctx.threads) for impl in impls}
        ctx.details[f"memory_{dtype}"] = res
        trace = {k: r["tracemalloc_step_peak"] * mb for k, r in res.items()
                 if "tracemalloc_step_peak" in r}
        ratio = trace["nbtape"] / trace["numpy"]
        rows.append(Row("d", f"MLP step peak above params+data, {dtype} (tracemalloc)", "MB",
                        trace, ratio=ratio, target="<= 1.1x numpy", ok=ratio <= 1.1))
        inputs = res["numpy"]["inputs_bytes"] * mb
        total = {k: v + inputs for k, v in trace.items()}
        rows.append(Row("d", f"  same, including params+data ({inputs:.2f} MB)", "MB", total,
                        ratio=total["nbtape"] / total["numpy"]))
        rss = {k: r["rss_step_peak"] * mb for k, r in res.items() if "rss_step_peak" in r}
        if rss.get("numpy"):
            rows.append(Row("d", "  same, by peak RSS (whole pages; sees torch too)", "MB", rss,
                            ratio=rss["nbtape"] / rss["numpy"]))
        # the batch as a plain array: issue 28's 1.22-1.27x came from copying it per step
        plain = _child(["mlp", PLAIN, dtype], ctx.threads)
        ctx.details[f"memory_{dtype}"][PLAIN] = plain
        peak = {"nbtape": plain["tracemalloc_step_peak"] * mb, "numpy": trace["numpy"]}
        ratio = peak["nbtape"] / peak["numpy"]
        rows.append(Row("d", "  same, the batch a plain numpy array (tracemalloc)", "MB", peak,
                        ratio=ratio, target="<= 1.05x numpy", ok=ratio <= 1.05))
    return rows


# (e) --------------------------------------------------------------------------------------------
def line_fit(ctx):
    x, y = problems.line_data()
    fns = {"nbtape": lambda: cases.line_fit(x, y), "numpy": lambda: handwritten.line_fit(x, y),
           FN: lambda: cases.traced_line_fit(x, y)}
    for name, peer in ctx.peers.items():
        fns[name] = lambda peer=peer: peer.line_fit(x, y)
    stats, results = interleaved(fns, ctx.reps(7, 3))
    fn_row = _traced_rows("e", "  with nt.function: the epoch traced once (inside the loop), "
                          "replayed", "ms", stats, 1e3, 0.2, "torch")
    fn_fit = results.pop(FN)
    stats.pop(FN)
    ref = results["numpy"]
    wrong = [k for k, (m, c) in results.items() if abs(m - ref[0]) > 1e-8 or abs(c - ref[1]) > 1e-8]
    vals, noise = _values(stats, "total", 1e3)
    ratio = _ratio(stats, "nbtape", "numpy")
    ok, target = _torch_target(vals, 1.0)
    ok = ok and not wrong if ok is not None else None
    m, c = results["nbtape"]
    note = f"{problems.LINE_EPOCHS} epochs, lr {problems.LINE_LR}: m = {m:.4f}, c = {c:.4f} " \
           f"(true 2, -8)" + (" -- WRONG: " + ", ".join(wrong) if wrong else "")
    if fn_fit != results["nbtape"]:
        fn_row[0].ok = False
        fn_row[0].note += f" -- WRONG: nt.function fitted {fn_fit}, eager {results['nbtape']}"
    return [Row("e", f"fit y = m x + c, 10 points, {problems.LINE_EPOCHS} epochs, whole loop",
                "ms", vals, noise, *ratio, target, ok, note)] + fn_row


# (f) --------------------------------------------------------------------------------------------
def hessian(ctx):
    x0 = problems.rosen_x0()
    fns = {"nbtape": lambda: cases.rosen_hessian(x0),
           "numpy": lambda: handwritten.rosen_hessian(x0)}
    for name, peer in ctx.peers.items():
        fns[name] = lambda peer=peer: peer.rosen_hessian(x0)
    stats, results = interleaved(fns, ctx.reps(20, 5))
    exact = problems.rosen_hessian_exact(x0)
    errs = {k: float(np.max(np.abs(np.asarray(h) - exact))) for k, h in results.items()}
    agree = all(e <= 1e-8 * np.max(np.abs(exact)) for e in errs.values())
    vals, noise = _values(stats, "total", 1e3)
    ratio = _ratio(stats, "nbtape", "numpy")
    ok, target = _torch_target(vals, 1.0)
    ok = ok and agree if ok is not None else None
    d = problems.ROSEN_DIM
    return [Row("f", f"nt.hessian of {d}-d Rosenbrock (numpy column: the formula by hand)", "ms",
                vals, noise, *ratio, target, ok),
            Row("f", "  max |H - H_exact| (all must agree)", "abs err", errs,
                target="all agree", ok=agree)]


# (g) --------------------------------------------------------------------------------------------
def jacobians(ctx):
    """A 100x100 Jacobian of a small MLP, and batch_jacobian of it over a batch of 64:
    against torch.func.jacrev / vmap(jacrev) (and jax's, eager)."""
    params, x, xs = problems.jac_data()
    rows = []
    for kind, point, label in (("mlp_jacobian", x, "nt.jacobian of a 100-64-100 tanh MLP "
                                "(100x100; numpy column: the chain rule by hand)"),
                               ("mlp_batch_jacobian", xs, f"tape.batch_jacobian of it over a "
                                f"batch of {len(xs)} (vs vmap(jacrev))")):
        fns = {"nbtape": lambda f=getattr(cases, kind): f(params, point),
               "numpy": lambda f=getattr(handwritten, kind): f(params, point)}
        for name, peer in ctx.peers.items():
            if getattr(peer, kind, None) is not None:
                fns[name] = lambda f=getattr(peer, kind): f(params, point)
        stats, results = interleaved(fns, ctx.reps(20, 5))
        exact = problems.jac_exact(params, point)
        errs = {k: float(np.max(np.abs(np.asarray(j) - exact))) for k, j in results.items()}
        wrong = [k for k, e in errs.items() if not e <= 1e-10 * np.max(np.abs(exact))]
        vals, noise = _values(stats, "total", 1e3)
        ok, target = _torch_target(vals, 1.0)
        rows.append(Row("g", label, "ms", vals, noise, *_ratio(stats, "nbtape", "numpy"), target,
                        False if wrong else ok,
                        note="max |J - J_exact|: " + ", ".join(f"{k} {e:.1e}" for k, e in
                                                               errs.items())
                        + (" -- WRONG: " + ", ".join(wrong) if wrong else "")))
    return rows


SECTIONS = {"a": scalar_chain, "b": mlp, "c": scaling, "d": memory, "e": line_fit, "f": hessian,
            "g": jacobians}
NAMES = {"chain": "a", "mlp": "b", "scaling": "c", "memory": "d", "line": "e", "hessian": "f",
         "jacobian": "g", "profile": "h"}
