"""CuPy arrays on the tape (issue 17): the same code path as numpy, on a GPU.

Runs only where CuPy and a CUDA GPU are present (CI has neither); elsewhere each test
skips, saying which is missing.
"""
import numpy as np
import pytest

import nbtape as nt

def _why_not():
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed: these tests need CuPy and a CUDA GPU " \
               "(pip install cupy-cuda12x)"
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return None
    except Exception:       # no driver, no device: CuPy imports but cannot run
        pass
    return "CuPy is installed but no CUDA GPU is available"


@pytest.fixture(scope="module")
def cp():
    why = _why_not()
    if why:
        pytest.skip(why)
    import cupy
    return cupy


def test_the_gpu_benchmark_exits_cleanly_without_a_gpu():
    """bench/gpu_mlp.py measures where there is a GPU; elsewhere it says why not, exit 0."""
    import os
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(__file__), "..")
    if _why_not() is None:
        pytest.skip("a GPU is here: the benchmark would run (by hand: bench/gpu_mlp.py)")
    r = subprocess.run([sys.executable, os.path.join(root, "bench", "gpu_mlp.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "nothing to measure on this machine" in r.stdout


def _mlp_loss(X, y, W1, W2):
    h = np.maximum(X @ W1, 0.0)
    z = h @ W2
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=1))


def test_tensor_keeps_the_cupy_array_and_numpy_copies_it_to_the_host(cp):
    a = cp.arange(6.0).reshape(2, 3)
    t, v = nt.constant(a), nt.Variable(a)
    assert t.data is a and v.data is a
    assert isinstance((t * 2).data, cp.ndarray)
    host = t.numpy()
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, np.arange(6.0).reshape(2, 3))


def test_mlp_gradients_stay_on_the_gpu_and_equal_numpy(cp):
    rng = np.random.default_rng(17)
    Xn = rng.standard_normal((32, 10))
    yn = np.eye(4)[rng.integers(0, 4, 32)]
    W1n, W2n = rng.standard_normal((10, 16)) * 0.3, rng.standard_normal((16, 4)) * 0.3
    grads = {}
    for lib in (np, cp):
        W1, W2 = nt.Variable(lib.asarray(W1n)), nt.Variable(lib.asarray(W2n))
        with nt.GradientTape() as tape:
            loss = _mlp_loss(nt.constant(lib.asarray(Xn)), lib.asarray(yn), W1, W2)
        grads[lib] = tape.gradient(loss, [W1, W2])
    for gc, gn in zip(grads[cp], grads[np]):
        assert isinstance(gc.data, cp.ndarray)
        np.testing.assert_allclose(gc.numpy(), gn.numpy(), rtol=1e-10, atol=1e-12)


def test_forward_mode_on_the_gpu(cp):
    x = nt.constant(cp.linspace(0.1, 1.0, 5))
    with nt.ForwardAccumulator(x, cp.ones(5)) as acc:
        y = np.sum(np.sin(x) * x)
    j = acc.jvp(y)
    assert isinstance(j.data, cp.ndarray)
    xn = np.linspace(0.1, 1.0, 5)
    np.testing.assert_allclose(j.numpy(), np.sum(np.cos(xn) * xn + np.sin(xn)))


def test_cupy_with_numpy_is_a_clear_error(cp):
    with pytest.raises(TypeError, match=r"different libraries \(cupy and numpy\)"):
        nt.constant(cp.ones((2, 2))) @ nt.Variable(np.ones(2))
