#!/usr/bin/env python3
"""The MLP step on a GPU: nbtape on CuPy arrays against PyTorch on the same GPU (issue 17).

    python3 bench/gpu_mlp.py [--repeats N] [--dtype float32|float64]

One forward+backward of (b)'s network (784-256-128-10, relu, softmax cross-entropy,
batch 128), the weights and data on the GPU: nbtape records numpy calls on CuPy arrays
(the rules run as CuPy kernels), PyTorch runs its own. Prints the median step time of
each, their ratio and the largest relative gradient difference. Needs CuPy, PyTorch
with CUDA, and a CUDA GPU; without them it says what is missing and exits with 0 (a
machine without a GPU has nothing to measure). Not run in CI.
"""
import argparse
import statistics
import sys
import time

import numpy as np

SIZES, BATCH = (784, 256, 128, 10), 128


def missing():
    """Why this machine cannot run the benchmark, or None."""
    try:
        import cupy as cp
    except ImportError:
        return "CuPy is not installed (pip install cupy-cuda12x)"
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            return "CuPy finds no CUDA GPU"
    except Exception as e:          # no driver or no device
        return f"CuPy cannot reach a CUDA GPU ({type(e).__name__}: {e})"
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed (pip install torch, a CUDA build)"
    if not torch.cuda.is_available():
        return "this PyTorch build has no CUDA, or sees no GPU"
    return None


def data(dtype, seed=0):
    rng = np.random.default_rng(seed)
    Ws = [rng.standard_normal((a, b)) * np.sqrt(2.0 / a) for a, b in zip(SIZES, SIZES[1:])]
    bs = [np.zeros(b) for b in SIZES[1:]]
    X = rng.standard_normal((BATCH, SIZES[0]))
    y = np.eye(SIZES[-1])[rng.integers(0, SIZES[-1], BATCH)]
    return [a.astype(dtype) for a in (*Ws, *bs, X, y)]


def nbtape_step(cp, nt, arrays):
    *params, X, y = arrays
    vs = [nt.Variable(cp.asarray(p)) for p in params]
    X, y = nt.constant(cp.asarray(X)), cp.asarray(y)
    n = len(vs) // 2

    def step():
        with nt.GradientTape() as tape:
            h = X
            for k in range(n):
                h = h @ vs[k] + vs[n + k]
                if k < n - 1:
                    h = np.maximum(h, 0.0)
            z = h - np.max(h, axis=1, keepdims=True)
            logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
            loss = -np.mean(np.sum(logp * y, axis=1))
        return tape.gradient(loss, vs)
    return step, lambda gs: [g.numpy() for g in gs]


def torch_step(torch, arrays):
    *params, X, y = arrays
    dev = torch.device("cuda")
    ps = [torch.tensor(p, device=dev, requires_grad=True) for p in params]
    X, y = torch.tensor(X, device=dev), torch.tensor(y, device=dev)
    n = len(ps) // 2

    def step():
        h = X
        for k in range(n):
            h = h @ ps[k] + ps[n + k]
            if k < n - 1:
                h = torch.relu(h)
        loss = -(torch.log_softmax(h, dim=1) * y).sum(dim=1).mean()
        return torch.autograd.grad(loss, ps)
    return step, lambda gs: [g.cpu().numpy() for g in gs]


def timed(step, sync, repeats):
    for _ in range(3):          # warm up: kernels compile, memory pools fill
        step()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    args = p.parse_args(argv)
    why = missing()
    if why:
        print(f"bench/gpu_mlp.py: nothing to measure on this machine: {why}.")
        return 0
    import cupy as cp
    import torch

    import nbtape as nt
    arrays = data(args.dtype)
    nb, nb_host = nbtape_step(cp, nt, arrays)
    th, th_host = torch_step(torch, arrays)
    diff = max(float(np.max(np.abs(a - b)) / (np.max(np.abs(b)) or 1.0))
               for a, b in zip(nb_host(nb()), th_host(th())))
    t_nb = timed(nb, cp.cuda.Device().synchronize, args.repeats)
    t_th = timed(th, torch.cuda.synchronize, args.repeats)
    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print(f"GPU: {name}; MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, {args.dtype}, "
          f"forward+backward, median of {args.repeats}")
    print(f"| nbtape on CuPy | PyTorch | ratio | max rel. grad difference |")
    print(f"|---|---|---|---|")
    print(f"| {t_nb * 1e3:.3f} ms | {t_th * 1e3:.3f} ms | {t_nb / t_th:.2f}x | {diff:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
