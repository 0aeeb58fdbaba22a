"""(h) Where the per-op time goes: cProfile of the 2,000-op chain, top functions by tottime.

cProfile's own overhead inflates every call by roughly the same amount, so read the
table for shares and call counts (calls per op = how often a function runs for one
recorded op), not for absolute speed.
"""
import cProfile
import os
import pstats
import timeit

import numpy as np

import cases
import nbtape as nt
from timing import clock

_HERE = os.path.dirname(os.path.abspath(__file__))


def profile_chain(n=2000, repeat=5, top=18):
    """Profile ``repeat`` chains of ``n`` ops; return rows sorted by tottime."""
    cases.chain(n)                      # warm-up (imports, caches)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeat):
        cases.chain(n)
    prof.disable()
    st = pstats.Stats(prof)
    ops = n * repeat
    total = st.total_tt
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, _callers) in st.stats.items():
        rows.append({
            "function": f"{_short(filename)}:{line}({func})",
            "calls_per_op": nc / ops,
            "tottime_us_per_op": tt / ops * 1e6,
            "cumtime_us_per_op": ct / ops * 1e6,
            "share": tt / total if total else 0.0,
        })
    rows.sort(key=lambda r: -r["tottime_us_per_op"])
    return {"ops": ops, "total_us_per_op": total / ops * 1e6, "rows": rows[:top]}


def _short(filename):
    """nbtape/dispatch.py rather than a long site-packages path."""
    if filename.startswith("~") or filename.startswith("<"):
        return filename                 # builtins: '~' is cProfile's marker
    parts = filename.replace("\\", "/").split("/")
    for anchor in ("nbtape", "numpy", "bench"):
        if anchor in parts:
            k = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[k:])
    return parts[-1]


def format_lines(prof):
    out = [f"cProfile of {prof['ops']} recorded ops (chain, record + backward): "
           f"{prof['total_us_per_op']:.2f} us/op under the profiler",
           f"  {'tottime us/op':>13} {'share':>6} {'cumtime us/op':>13} {'calls/op':>8}  function"]
    for r in prof["rows"]:
        out.append(f"  {r['tottime_us_per_op']:13.3f} {r['share']:6.1%} "
                   f"{r['cumtime_us_per_op']:13.3f} {r['calls_per_op']:8.2f}  {r['function']}")
    return out


# Fixed costs a small loop pays (the classroom loop (e) is 5 ops per tape), measured
# with timeit (round-robin, best of 15, GC on, the benchmark's clock).  Differences
# between lines isolate a cost.
def _micro_cases():
    from nbtape.diagnostics import user_line as _where
    a0 = np.array(0.5)
    c = nt.constant(0.5)
    v = nt.Variable(0.5)

    def empty_tape():
        with nt.GradientTape():
            pass

    def tape_var_op():
        with nt.GradientTape():
            v * 2.0

    def tape_var_op_grad():
        with nt.GradientTape() as tape:
            y = v * 2.0
        tape.gradient(y, v)

    def assign_sub():
        v.assign_sub(0.0)

    tape = nt.GradientTape(persistent=True)

    def recorded_op():
        c * 1.0001

    def enter():
        tape.reset()
        tape.__enter__()
        tape.watch(c)

    return [
        ("bare np.multiply(a0, 1.0001), 0-d array", lambda: np.multiply(a0, 1.0001), None),
        ("Tensor * float, no tape (dispatch + wrap)", lambda: c * 1.0001, None),
        ("Tensor * float, recorded by a tape", recorded_op, (enter, lambda: tape.__exit__(None, None, None))),
        ("_where.caller() (the user's line, per recorded op)", lambda: _where.caller(), None),
        ("empty `with GradientTape():`", empty_tape, None),
        ("tape + 1 op on a Variable (auto-watch on first read)", tape_var_op, None),
        ("tape + 1 op on a Variable + gradient", tape_var_op_grad, None),
        ("Variable.assign_sub(0.0)", assign_sub, None),
    ]


def micro_costs(number=1000, repeat=15):
    """Best time per call of each case, the cases taken round-robin (as in ``timing``), so
    a slow spell of the machine hits them all instead of one."""
    cases_ = _micro_cases()
    best = [float("inf")] * len(cases_)
    for _ in range(repeat):
        for k, (label, fn, around) in enumerate(cases_):
            if around:
                around[0]()
            t = timeit.Timer(fn, timer=clock).timeit(number)
            if around:
                around[1]()
            best[k] = min(best[k], t)
    return [(label, b / number * 1e6) for (label, _, _), b in zip(cases_, best)]


def format_micro(rows):
    out = ["Fixed costs (timeit, round-robin best of 15, GC on; differences between lines isolate a cost):"]
    out += [f"  {us:8.2f} us  {label}" for label, us in rows]
    return out


# What one recorded op leaves behind and how many calls it makes (phase 2's plan in
# bench/README.md is read off these): counted, not timed, so they do not depend on load.
def op_footprint(n=2000):
    """Per recorded op of the scalar chain: Python-level calls (record and backward apart),
    objects the live tape holds (all allocations, and those the cyclic GC tracks, by type)."""
    import gc
    import sys
    from collections import Counter

    def count_calls(fn):
        calls = Counter()

        def hook(frame, event, arg):
            if event == "call":
                calls["python"] += 1
            elif event == "c_call":
                calls["builtin"] += 1
        sys.setprofile(hook)
        try:
            out = fn()
        finally:
            sys.setprofile(None)
        return calls, out

    x = nt.Variable(0.5)
    cases.chain(n)                      # warm-up

    def record():
        tape = nt.GradientTape()
        with tape:
            y = x
            for i in range(n):
                k = i & 3
                y = y * 1.0001 if k == 0 else y + 0.0001 if k == 1 else \
                    np.sin(y) if k == 2 else y - 0.0001
        return tape, y

    def empty_loop():
        y = nt.constant(0.5)
        for i in range(n):
            k = i & 3
            y = y * 1.0001 if k == 0 else y + 0.0001 if k == 1 else \
                np.sin(y) if k == 2 else y - 0.0001
        return y

    rec_calls, (tape, y) = count_calls(record)
    bare_calls, _ = count_calls(empty_loop)
    back_calls, _ = count_calls(lambda: tape.gradient(y, x))

    gc.collect()
    gc.disable()
    try:
        before_tracked = {id(o) for o in gc.get_objects()}
        blocks0 = sys.getallocatedblocks()
        tape2, y2 = record()
        blocks = sys.getallocatedblocks() - blocks0
        new = [o for o in gc.get_objects() if id(o) not in before_tracked]
    finally:
        gc.enable()
    kinds = Counter(type(o).__name__ for o in new)
    # a collection stops tracking tuples that hold only untracked values (twice: a tuple
    # seen before the tuples inside it waits for the next one); what stays tracked is
    # what every later full collection walks
    gc.collect()
    gc.collect()
    kept = Counter(type(o).__name__ for o in new if gc.is_tracked(o))
    del tape2, y2, new
    return {
        "ops": n,
        "calls_record": {k: v / n for k, v in rec_calls.items()},
        "calls_no_tape": {k: v / n for k, v in bare_calls.items()},
        "calls_backward": {k: v / n for k, v in back_calls.items()},
        "blocks_per_op": blocks / n,
        "gc_tracked_per_op": sum(kinds.values()) / n,
        "gc_tracked_kinds": {k: v / n for k, v in kinds.most_common(8)},
        "gc_kept_per_op": sum(kept.values()) / n,
        "gc_kept_kinds": {k: v / n for k, v in kept.most_common(4)},
    }


def format_footprint(fp):
    def calls(d):
        return f"{d.get('python', 0):.1f} Python + {d.get('builtin', 0):.1f} builtin calls"
    kinds = ", ".join(f"{k} {v:.2f}" for k, v in fp["gc_tracked_kinds"].items())
    kept = ", ".join(f"{k} {v:.2f}" for k, v in fp["gc_kept_kinds"].items()) or "none"
    return [f"Per recorded op ({fp['ops']}-op chain, counted, not timed):",
            f"  record:   {calls(fp['calls_record'])} (the same loop on tensors with no tape: "
            f"{calls(fp['calls_no_tape'])})",
            f"  backward: {calls(fp['calls_backward'])}",
            f"  the live tape holds {fp['blocks_per_op']:.1f} allocated blocks per op, "
            f"{fp['gc_tracked_per_op']:.2f} of them GC-tracked objects ({kinds})",
            f"  still tracked after a collection (what each full collection walks): "
            f"{fp['gc_kept_per_op']:.2f} per op ({kept})"]
