#!/usr/bin/env python3
"""nbtape's own benchmark (issue 2): ratios against hand-written numpy, in one run.

    python3 bench/run.py [--quick] [--only a,b,...] [--json out.json] [--profile]
                         [--threads N] [--no-peers]

Sections: (a) chain  per-op cost of record+backward on a 2,000-op scalar chain,
                     and (a') the same chain on a length-16 vector
          (b) mlp    784-256-128-10 MLP forward+backward, float32 and float64
          (c) scaling  100k/10k chain time ratio, and one 1,000,000-op chain
          (d) memory   peak memory of (b)
          (e) line   the guides' y = m x + c loop, 2,000 epochs
          (f) hessian  nt.hessian of the 50-d Rosenbrock function
          (g) jacobian  a 100x100 Jacobian of a small MLP, and batch_jacobian over 64 rows
          (h) profile  top functions by tottime on the chain (also with --profile)
HIPS autograd, PyTorch and JAX (eager) columns appear when they import.  Not run in CI: timings
depend on the machine; see bench/README.md for how to read them.
"""
import argparse
import gc
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import env  # noqa: E402
import hotspots  # noqa: E402
import peers as peers_mod  # noqa: E402
import report  # noqa: E402
import sections  # noqa: E402
import timing  # noqa: E402


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats, no 1M chain, memory for nbtape and numpy only")
    p.add_argument("--only", default="",
                   help="comma-separated sections: letters a-h or names "
                        + ",".join(sections.NAMES))
    p.add_argument("--json", metavar="PATH", help="also write all results as JSON")
    p.add_argument("--profile", action="store_true", help="add (h), the per-op profile")
    p.add_argument("--threads", type=int, default=1,
                   help="BLAS threads for numpy, and torch's threads (default 1: on a shared "
                        "machine a second BLAS thread mostly waits for a busy core and makes "
                        "the MLP times erratic; 0 = the libraries' own defaults)")
    p.add_argument("--no-peers", action="store_true", help="skip the autograd, torch and jax columns")
    args = p.parse_args(argv)
    wanted = []
    for item in filter(None, (s.strip().lower() for s in args.only.split(","))):
        key = sections.NAMES.get(item, item)
        if key not in sections.SECTIONS and key != "h":
            p.error(f"unknown section {item!r}; choose from a-h or {', '.join(sections.NAMES)}")
        wanted.append(key)
    if not wanted:
        wanted = list(sections.SECTIONS) + (["h"] if args.profile else [])
    elif args.profile and "h" not in wanted:
        wanted.append("h")
    args.sections = sorted(set(wanted))
    return args


def limit_threads(n, peers):
    """Cap BLAS (all loaded pools, via threadpoolctl) and torch's intra-op threads."""
    if not n:
        return None
    from threadpoolctl import threadpool_limits
    if "torch" in peers:
        peers["torch"].torch.set_num_threads(n)
    return threadpool_limits(limits=n)


def main(argv=None):
    args = parse(argv)
    t_start = time.perf_counter()
    peers = {} if args.no_peers else peers_mod.available()
    limiter = limit_threads(args.threads, peers)   # noqa: F841  (kept alive for the run)
    if args.threads != 1:
        timing.use_wall_clock()     # CPU time would add up the threads
    info = env.describe(peers)
    info["threads_option"] = args.threads
    # Move everything imported so far (torch alone brings ~150k objects) to the GC's
    # permanent generation: full collections, ours between samples and those a tape
    # triggers, then walk only what the benchmark itself creates, as in a process that
    # never imported the peers.
    gc.collect()
    gc.freeze()
    info["clock"] = timing.clock_name()
    print("nbtape benchmark" + (" (--quick)" if args.quick else ""))
    for line in env.format_lines(info):
        print("  " + line)
    missing = [n for n in peers_mod.NAMES if n not in peers and not args.no_peers]
    if missing:
        print(f"  (no {' / '.join(missing)} column: pip install autograd torch==2.13.0 jax jaxlib)")
    print()

    ctx = sections.Context(args.quick, peers, args.threads or None)
    rows, timings = [], {}
    for key in args.sections:
        if key == "h":
            continue
        t0 = time.perf_counter()
        print(f"running ({key}) {sections.SECTIONS[key].__name__} ...", file=sys.stderr, flush=True)
        rows += sections.SECTIONS[key](ctx)
        timings[key] = time.perf_counter() - t0

    columns = [c for c in report.COLUMNS if c in ("nbtape", "numpy") or c in peers]
    if rows:
        print("\n".join(report.table(rows, columns)))
        extra = report.notes(rows)
        if extra:
            print("\nNotes:")
            print("\n".join(extra))
    prof = None
    if "h" in args.sections:
        prof = hotspots.profile_chain(repeat=2 if args.quick else 5)
        prof["micro_us"] = hotspots.micro_costs()
        prof["footprint"] = hotspots.op_footprint()
        print()
        print("\n".join(hotspots.format_lines(prof)))
        print()
        print("\n".join(hotspots.format_micro(prof["micro_us"])))
        print()
        print("\n".join(hotspots.format_footprint(prof["footprint"])))
    elapsed = time.perf_counter() - t_start
    print(f"\n(total {elapsed:.0f} s; per section: "
          + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()) + ")")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": info, "quick": args.quick, "rows": [r.to_json() for r in rows],
                       "details": ctx.details, "profile": prof, "seconds": elapsed}, f,
                      indent=1, default=str)
    failed = [r for r in rows if r.ok is False]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
