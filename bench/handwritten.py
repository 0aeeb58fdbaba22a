"""The baselines: the same computations written by hand in plain numpy.

Written the way a careful person would write them in a notebook (no in-place
tricks, no preallocated buffers), so the ratio measures what the tape costs,
not how hard the baseline was tuned.
"""
import numpy as np

from problems import CHAIN_X0, LINE_EPOCHS, LINE_LR, chain_ops, jac_exact, rosen_hessian_exact
from timing import clock

NAME = "numpy"


# (a) -------------------------------------------------------------------------------------------
def bare_op_loop(number, x0=CHAIN_X0):
    """``number`` calls of ``np.multiply`` on ``x0`` as a float64 array (0-d: the issue's per-op
    baseline)."""
    a0 = np.array(x0, dtype=float)
    mul = np.multiply
    t0 = clock()
    for _ in range(number):
        mul(a0, 1.0001)
    return clock() - t0


def chain(n, x0=CHAIN_X0):
    """The chain's Python loop on a 0-d array with no tape (value only): the loop's own cost."""
    y = np.array(x0, dtype=float)
    t0 = clock()
    y = chain_ops(y, n, np.sin)
    return clock() - t0, 0.0, None


# (b)/(d) ---------------------------------------------------------------------------------------
class MLP:
    """Forward and a manual backward of the same net, loss and reduction as ``cases.MLP``."""

    def __init__(self, params, x, onehot):
        self.params, self.x, self.onehot = params, x, onehot
        self.desc = "manual backprop"

    def step(self):
        w1, b1, w2, b2, w3, b3 = self.params
        x, onehot = self.x, self.onehot
        batch = x.shape[0]
        # forward, keeping what the backward needs
        z1 = x @ w1 + b1
        a1 = np.maximum(z1, 0)
        z2 = a1 @ w2 + b2
        a2 = np.maximum(z2, 0)
        z3 = a2 @ w3 + b3
        z3 = z3 - z3.max(axis=1, keepdims=True)
        e = np.exp(z3)
        s = e.sum(axis=1, keepdims=True)
        logp = z3 - np.log(s)
        loss = -np.mean(np.sum(onehot * logp, axis=1))
        # backward: d(loss)/d(z3) of softmax cross-entropy, then the chain rule by hand
        dz3 = (e / s - onehot) / batch
        dw3 = a2.T @ dz3
        db3 = dz3.sum(axis=0)
        dz2 = (dz3 @ w3.T) * (z2 > 0)
        dw2 = a1.T @ dz2
        db2 = dz2.sum(axis=0)
        dz1 = (dz2 @ w2.T) * (z1 > 0)
        dw1 = x.T @ dz1
        db1 = dz1.sum(axis=0)
        return float(loss), [dw1, db1, dw2, db2, dw3, db3]


# (e) -------------------------------------------------------------------------------------------
def line_fit(x, y, epochs=LINE_EPOCHS, lr=LINE_LR):
    """The same SGD loop with the MSE gradient worked out on paper."""
    m = np.array(0.0)
    c = np.array(0.0)
    for _ in range(epochs):
        r = y - (m * x + c)
        dm = -2.0 * np.mean(r * x)
        dc = -2.0 * np.mean(r)
        m = m - lr * dm
        c = c - lr * dc
    return float(m), float(c)


# (f) -------------------------------------------------------------------------------------------
def rosen_hessian(x0):
    """The tridiagonal Hessian from its formula (a floor, not a peer: no autodiff at all)."""
    return rosen_hessian_exact(x0)


# (g) -------------------------------------------------------------------------------------------
def mlp_jacobian(params, x):
    """The chain rule by hand, one einsum (a floor, not a peer: no autodiff)."""
    return jac_exact(params, x)


mlp_batch_jacobian = mlp_jacobian
