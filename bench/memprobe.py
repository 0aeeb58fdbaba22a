"""Child process for the memory measurements: ``python3 bench/memprobe.py MODE ...``.

A fresh process per measurement, so that what one implementation allocated (or
the allocator kept cached) cannot be charged to the next one.  Prints one JSON
object on stdout.

    memprobe.py mlp IMPL DTYPE   peak memory of one MLP forward+backward (d); IMPL
                                 nbtape-plain: the batch a plain array, not a constant
    memprobe.py chain N          one N-op chain, its times and the process's peak RSS (c)

Two meters for the MLP step, both taken after a warm-up step (the first step
pays one-off costs, e.g. OpenBLAS's work buffers, that are not the step's):

* tracemalloc: the peak of bytes allocated during the step.  Exact and immune to
  the allocator, but it sees only allocations reported to Python's tracer (numpy
  reports its data buffers; PyTorch does not, so torch gets no tracemalloc figure).
* RSS: the kernel's peak resident set (VmHWM) during the step minus the resident
  set before it.  Sees everything, torch included, but counts whole pages and
  whatever the allocator chooses to keep mapped.  The peak is reset by writing 5
  to /proc/self/clear_refs (Linux >= 4.0).
"""
import gc
import json
import sys
import tracemalloc


def _status(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss():
    """The process's peak resident set so far, in bytes."""
    hwm = _status("VmHWM")
    if hwm is not None:
        return hwm
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _make_mlp(impl, dtype):
    import numpy as np
    from problems import mlp_data
    params, x, onehot = mlp_data(np.dtype(dtype))
    if impl in ("nbtape", "nbtape-plain"):
        import cases
        return cases.MLP(params, x, onehot, impl == "nbtape-plain"), params, x, onehot
    if impl == "numpy":
        import handwritten
        return handwritten.MLP(params, x, onehot), params, x, onehot
    import peers
    peer = peers.available((impl,))[impl]
    return peer.mlp(params, x, onehot), params, x, onehot


def mlp(impl, dtype):
    step, params, x, onehot = _make_mlp(impl, dtype)
    inputs = sum(p.nbytes for p in params) + x.nbytes + onehot.nbytes
    step.step()                     # warm-up: one-off allocations are not the step's
    gc.collect()
    out = {"impl": impl, "dtype": dtype, "inputs_bytes": inputs}

    if impl != "torch":
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        step.step()
        out["tracemalloc_step_peak"] = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        gc.collect()

    if _reset_peak_rss():
        before = _status("VmRSS")
        step.step()
        out["rss_step_peak"] = peak_rss() - before
        out["rss_total_peak"] = peak_rss()
    print(json.dumps(out))


def chain(n):
    import nbtape  # noqa: F401  (import cost is not the chain's)
    import cases
    from problems import chain_reference
    gc.collect()
    before = _status("VmRSS")
    out = {"n": n}
    try:
        t_rec, t_back, g = cases.chain(n)
    except RecursionError as e:      # the requirement: this must never happen
        out.update(recursion_error=True, error=str(e)[:200])
    else:
        _, exact = chain_reference(n)
        out.update(recursion_error=False, t_record=t_rec, t_backward=t_back, grad=g,
                   grad_exact=exact, rel_err=abs(g - exact) / abs(exact))
    out["rss_before"] = before
    out["rss_peak"] = peak_rss()
    print(json.dumps(out))


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "mlp":
        mlp(*args)
    elif mode == "chain":
        chain(int(args[0]))
    else:
        raise SystemExit(__doc__)
