"""What the numbers were measured on: versions, BLAS kernel and threads, load.

OpenBLAS picks its kernel for the CPU at load time, unless ``OPENBLAS_CORETYPE``
forces one (and ``OPENBLAS_L2_SIZE`` changes its blocking); on this machine these
may be set and slow numpy's matmul.  The ratios stay fair because nbtape, autograd
and the hand-written baseline all call the same numpy in the same process, but the
absolute MLP times depend on it, so the kernel is printed with the results.
PyTorch ships its own BLAS, so its MLP column is not bound by this.
"""
import os
import platform
import sys

BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
             "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def describe(peers):
    import numpy as np
    import nbtape
    info = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "loadavg": _loadavg(),
        "numpy": np.__version__,
        "nbtape": getattr(nbtape, "__version__", "?"),
        "env": {k: os.environ[k] for k in BLAS_VARS if k in os.environ},
        "blas": _blas(),
    }
    for name, peer in peers.items():
        info[name] = peer.version
    if "torch" in peers:
        torch = peers["torch"].torch
        info["torch_threads"] = torch.get_num_threads()
        info["torch_blas"] = "MKL" if torch.backends.mkl.is_available() else "bundled"
    return info


def _loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _blas():
    """numpy's BLAS library, kernel ('architecture') and thread count, via threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return [{"note": "pip install threadpoolctl to see the BLAS kernel"}]
    return [{k: d.get(k) for k in ("internal_api", "version", "architecture", "num_threads",
                                     "filepath")}
            for d in threadpool_info() if d.get("user_api") == "blas"
            and "numpy" in (d.get("filepath") or "")] or \
           [{k: d.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
            for d in threadpool_info() if d.get("user_api") == "blas"]


def format_lines(info):
    out = [f"python {info['python']} ({info['machine']}, {info['cpus']} cpus, "
           f"load {info['loadavg']:.2f})" if info["loadavg"] is not None else
           f"python {info['python']} ({info['machine']}, {info['cpus']} cpus)"]
    versions = [f"numpy {info['numpy']}", f"nbtape {info['nbtape']}"]
    versions += [f"{k} {info[k]}" for k in ("autograd", "torch") if k in info]
    out.append(", ".join(versions))
    for b in info["blas"]:
        out.append("numpy BLAS: " + ", ".join(f"{k}={v}" for k, v in b.items()
                                               if k != "filepath" and v is not None))
    out.append("BLAS env: " + (", ".join(f"{k}={v}" for k, v in info["env"].items())
                               or "none of " + "/".join(BLAS_VARS[:2]) + " set"))
    if "clock" in info:
        out.append(f"clock: {info['clock']} time ({'process CPU time' if info['clock'] == 'cpu' else 'perf_counter'}), "
                   f"threads option {info.get('threads_option')}")
    if "torch_threads" in info:
        out.append(f"torch: {info['torch_threads']} threads, BLAS {info['torch_blas']}")
    return out


if __name__ == "__main__":
    print("\n".join(format_lines(describe({}))), file=sys.stdout)
