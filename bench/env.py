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
        "commit": _commit(),
    }
    if "OPENBLAS_CORETYPE" in os.environ or "OPENBLAS_L2_SIZE" in os.environ:
        info["blas_without_env"] = _native_kernel()
    for name, peer in peers.items():
        info[name] = peer.version
    if "torch" in peers:
        torch = peers["torch"].torch
        info["torch_threads"] = torch.get_num_threads()
        info["torch_blas"] = "MKL" if torch.backends.mkl.is_available() else "bundled"
    return info


def _commit():
    """The engine's commit, and whether nbtape/ has uncommitted changes (read-only git):
    of the nbtape actually imported (PYTHONPATH may point at another checkout)."""
    import subprocess
    import nbtape
    root = os.path.dirname(os.path.dirname(os.path.abspath(nbtape.__file__)))
    if not os.path.exists(os.path.join(root, ".git")):
        return None

    def git(*args):
        out = subprocess.run(["git", "--no-optional-locks", *args], cwd=root,
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() if out.returncode == 0 else None
    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "nbtape")
    except (OSError, subprocess.SubprocessError):
        return None
    if head is None:
        return None
    return head + (" + uncommitted changes in nbtape/" if dirty else "")


def _loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _blas():
    """numpy's BLAS library, kernel ('architecture') and threads, via threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return [{"note": "pip install threadpoolctl to see the BLAS kernel"}]
    keys = ("internal_api", "version", "architecture", "num_threads", "filepath")
    pools = [d for d in threadpool_info() if d.get("user_api") == "blas"]
    # torch may load its own BLAS too; numpy's is the one that matters for nbtape
    mine = [d for d in pools if "numpy" in (d.get("filepath") or "")] or pools
    return [{k: d.get(k) for k in keys} for d in mine]


def _native_kernel():
    """The kernel OpenBLAS would pick on its own: ask a child process without the overrides."""
    import subprocess
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    code = ("import numpy, threadpoolctl; print([d.get('architecture') for d in "
            "threadpoolctl.threadpool_info() if d.get('user_api') == 'blas'][0])")
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=60)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def format_lines(info):
    out = [f"python {info['python']} ({info['machine']}, {info['cpus']} cpus, "
           f"load {info['loadavg']:.2f})" if info["loadavg"] is not None else
           f"python {info['python']} ({info['machine']}, {info['cpus']} cpus)"]
    versions = [f"numpy {info['numpy']}", f"nbtape {info['nbtape']}"
                + (f" ({info['commit']})" if info.get("commit") else "")]
    versions += [f"{k} {info[k]}" for k in ("autograd", "torch", "jax") if k in info]
    out.append(", ".join(versions))
    for b in info["blas"]:
        out.append("numpy BLAS: " + ", ".join(f"{k}={v}" for k, v in b.items()
                                               if k != "filepath" and v is not None))
    out.append("BLAS env: " + (", ".join(f"{k}={v}" for k, v in info["env"].items())
                               or "none of " + "/".join(BLAS_VARS[:2]) + " set"))
    native = info.get("blas_without_env")
    if native and native not in [b.get("architecture") for b in info["blas"]]:
        out.append(f"NOTE: without those variables OpenBLAS would use its {native} kernel; the "
                   "numpy-based columns share the slower kernel, so their ratios stay fair, "
                   "but torch (own BLAS) is not slowed")
    if "clock" in info:
        out.append(f"clock: {info['clock']} time ({'process CPU time' if info['clock'] == 'cpu' else 'perf_counter'}), "
                   f"threads option {info.get('threads_option')}")
    if "torch_threads" in info:
        out.append(f"torch: {info['torch_threads']} threads, BLAS {info['torch_blas']}")
    return out


if __name__ == "__main__":
    print("\n".join(format_lines(describe({}))), file=sys.stdout)
