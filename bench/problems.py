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


def chain_reference(n, x0=CHAIN_X0):
    """(value, dy/dx) of the chain in plain float arithmetic (forward-mode by hand)."""
    import math
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
