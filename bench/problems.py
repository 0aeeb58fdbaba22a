"""The benchmark problems, defined once so that every implementation gets the same data.

Each implementation (nbtape in ``cases.py``, plain numpy in ``handwritten.py``,
autograd and PyTorch in ``peers.py``) is handed these arrays and must compute the
same numbers; ``run.py`` checks that they agree before it trusts a timing.
"""
import numpy as np

# (a)/(c): the scalar chain.  Four op kinds in turn, so that the measured cost is an
# average over a binary op with a Python float, and a unary ufunc, not one special case.
CHAIN_X0 = 0.5
CHAIN_KINDS = ("y * 1.0001", "y + 0.0001", "np.sin(y)", "y - 0.0001")


def chain_ops(y, n, sin):
    """The chain itself on any array library (``sin`` is that library's): ``n`` ops,
    the four kinds of ``CHAIN_KINDS`` in turn."""
    for i in range(n):
        k = i & 3
        if k == 0:
            y = y * 1.0001
        elif k == 1:
            y = y + 0.0001
        elif k == 2:
            y = sin(y)
        else:
            y = y - 0.0001
    return y


# (a'): the same chain on a length-16 vector (every element its own chain, one op each)
CHAIN_VECTOR = 16


def chain_vector_x0(size=CHAIN_VECTOR):
    return np.linspace(0.1, 0.9, size)


def chain_reference(n, x0=CHAIN_X0):
    """(value, dy/dx) of the chain in plain float arithmetic (forward-mode by hand);
    for an array ``x0``, elementwise (the chain is elementwise, so dy/dx is diagonal)."""
    import math
    if np.ndim(x0):
        pairs = [chain_reference(n, float(v)) for v in np.ravel(x0)]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    y, d = x0, 1.0
    for i in range(n):
        k = i & 3
        if k == 0:
            y, d = y * 1.0001, d * 1.0001
        elif k == 1:
            y = y + 0.0001
        elif k == 2:
            y, d = math.sin(y), d * math.cos(y)
        else:
            y = y - 0.0001
    return y, d


# (b)/(d): the MLP.
MLP_SIZES = (784, 256, 128, 10)
MLP_BATCH = 128


def mlp_data(dtype, seed=0, sizes=MLP_SIZES, batch=MLP_BATCH):
    """``(params, x, onehot)``: He-initialised weights [W1, b1, W2, b2, W3, b3], a batch."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(dtype))
        params.append(np.zeros(fan_out, dtype=dtype))
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], batch)
    onehot = np.eye(sizes[-1], dtype=dtype)[labels]
    return params, x, onehot


# (e): the guides' classroom loop, y = m x + c from 10 points (the guide's line is
# y = 2x - 8), MSE loss, plain SGD, one tape per epoch.
LINE_EPOCHS = 2000
LINE_LR = 0.01


def line_data():
    x = np.linspace(-2.0, 7.0, 10)
    y = 2.0 * x - 8.0
    return x, y


# (f): the Rosenbrock function in 50 dimensions, at the classic starting point.
ROSEN_DIM = 50


def rosen_x0():
    return np.tile([-1.2, 1.0], ROSEN_DIM // 2)


def rosenbrock(x):
    """Written once for numpy-like namespaces: plain numpy, nbtape tensors and autograd."""
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def rosen_hessian_exact(x):
    """The Hessian by hand (tridiagonal): the reference the three engines must match."""
    n = len(x)
    h = np.zeros((n, n))
    i = np.arange(n - 1)
    h[i, i] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    h[i + 1, i + 1] += 200.0
    h[i, i + 1] = h[i + 1, i] = -400.0 * x[:-1]
    return h


# (g): Jacobians of a small MLP R^100 -> R^100 (100-64-100, tanh), at one point and over
# a batch of 64 points (one 100x100 Jacobian per row).
JAC_SIZES = (100, 64, 100)
JAC_BATCH = 64


def jac_data(seed=1, sizes=JAC_SIZES, batch=JAC_BATCH):
    """``(w1, b1, w2, b2), x, xs``: float64 weights, one input point, a batch of them."""
    rng = np.random.default_rng(seed)
    n, h, m = sizes
    params = (rng.standard_normal((n, h)) / np.sqrt(n), rng.standard_normal(h) * 0.1,
              rng.standard_normal((h, m)) / np.sqrt(h), rng.standard_normal(m) * 0.1)
    return params, rng.standard_normal(n), rng.standard_normal((batch, n))


def jac_mlp(params, x, tanh=np.tanh):
    """Written once for numpy-like namespaces (numpy, nbtape, autograd, jax): ``tanh``
    is the namespace's own."""
    w1, b1, w2, b2 = params
    return tanh(tanh(x @ w1 + b1) @ w2 + b2)


def jac_exact(params, x):
    """The Jacobian(s) by the chain rule by hand: ``(m, n)``, or ``(batch, m, n)``."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    y = np.tanh(h @ w2 + b2)
    # J = diag(1 - y^2) W2^T diag(1 - h^2) W1^T, per row of a batch
    return np.einsum("...m,hm,...h,nh->...mn", 1 - y ** 2, w2, 1 - h ** 2, w1, optimize=True)
