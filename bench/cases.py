"""The benchmark workloads written with nbtape, the way a user would write them.

Every function takes plain numpy data from ``problems.py`` and returns plain
numpy results, so ``run.py`` can compare them with the other implementations.
Timers sit inside the functions where a workload has two phases (record, then
backward), so the split costs nothing extra to report.
"""
import numpy as np

import nbtape as nt

from problems import CHAIN_X0, LINE_EPOCHS, LINE_LR, chain_ops, jac_mlp, rosenbrock
from timing import clock

NAME = "nbtape"


# (a)/(c) ---------------------------------------------------------------------------------------
def chain(n, x0=CHAIN_X0):
    """Record an ``n``-op scalar chain and differentiate it: ``(t_record, t_backward, dy/dx)``."""
    x = nt.Variable(x0)
    t0 = clock()
    with nt.GradientTape() as tape:
        y = x
        y = chain_ops(y, n, np.sin)
    t1 = clock()
    g = tape.gradient(y, x)
    t2 = clock()
    return t1 - t0, t2 - t1, as_result(g)


def as_result(g):
    """A float for a scalar, else a plain array (every column returns the same kinds)."""
    g = np.array(g)
    return float(g) if g.ndim == 0 else g


# (b)/(d) ---------------------------------------------------------------------------------------
def _optional(module, attr):
    """``nt.<module>.<attr>`` if another engineer has landed it, else None."""
    try:
        return getattr(getattr(nt, module), attr)
    except (AttributeError, ImportError):
        # (nbtape's lazy __getattr__ raises ModuleNotFoundError, not AttributeError,
        # for a module that does not exist yet, so hasattr() is not enough here.)
        return None


def _relu_fallback(h):
    # The comparison is non-differentiable, so the gradient is g * (h > 0): the same
    # mask the hand-written backward uses.
    return h * (h > 0)


def _log_softmax_fallback(z):
    # Shift by the row max (a plain constant: softmax does not depend on it) so exp
    # cannot overflow; then z - logsumexp(z).
    z = z - np.max(np.asarray(z), axis=1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))


def mlp_pieces():
    """``(relu, log_softmax, description)``: nbtape's own if present, else fallbacks."""
    relu = _optional("nn", "relu")
    log_softmax = _optional("nn", "log_softmax")
    desc = ("relu=" + ("nt.nn.relu" if relu else "h*(h>0)") + ", log_softmax="
            + ("nt.nn.log_softmax" if log_softmax else "z-log(sum(exp(z)))"))
    return relu or _relu_fallback, log_softmax or _log_softmax_fallback, desc


class MLP:
    """Forward + backward of the 784-256-128-10 MLP, softmax cross-entropy, mean over batch.

    ``plain=True`` keeps the batch and labels as the plain numpy arrays they are, as a
    user's loop does (``X @ W1``): the tape must then guard them against later writes."""

    def __init__(self, params, x, onehot, plain=False):
        self.params = [nt.Variable(p) for p in params]
        self.x = x if plain else nt.constant(x)
        self.onehot = onehot if plain else nt.constant(onehot)
        self.relu, self.log_softmax, self.desc = mlp_pieces()

    def step(self):
        """Loss and gradients (plain arrays), one tape."""
        w1, b1, w2, b2, w3, b3 = self.params
        relu = self.relu
        with nt.GradientTape() as tape:
            h = relu(self.x @ w1 + b1)
            h = relu(h @ w2 + b2)
            logp = self.log_softmax(h @ w3 + b3)
            loss = -np.mean(np.sum(self.onehot * logp, axis=1))
        grads = tape.gradient(loss, self.params)
        # np.asarray is a view (no copy) once the tape is closed: .numpy() would copy
        # 1.6 MB for dW1 and charge nbtape for it.
        return float(loss), [np.asarray(g) for g in grads]


# (e) -------------------------------------------------------------------------------------------
def line_fit(x, y, epochs=LINE_EPOCHS, lr=LINE_LR):
    """The guides' loop: a tape per epoch, gradients, ``assign_sub``.  Returns (m, c)."""
    m = nt.Variable(0.0)
    c = nt.Variable(0.0)
    for _ in range(epochs):
        with nt.GradientTape() as tape:
            y_hat = m * x + c
            loss = np.mean((y - y_hat) ** 2)
        dm, dc = tape.gradient(loss, [m, c])
        m.assign_sub(lr * dm)
        c.assign_sub(lr * dc)
    return float(m.numpy()), float(c.numpy())


# (f) -------------------------------------------------------------------------------------------
def rosen_hessian(x0):
    return np.asarray(nt.hessian(rosenbrock)(x0))


# (g) -------------------------------------------------------------------------------------------
def mlp_jacobian(params, x):
    """``nt.jacobian`` of the small MLP at one point: (100, 100)."""
    return np.asarray(nt.jacobian(lambda v: jac_mlp(params, v))(x))


def mlp_batch_jacobian(params, xs):
    """``tape.batch_jacobian`` over a batch of points: (64, 100, 100)."""
    x = nt.constant(xs)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = jac_mlp(params, x)
    return np.asarray(tape.batch_jacobian(y, x))


# nt.function: the same workloads traced once and replayed (issue 28) --------------------------
class TracedChain:
    """(a) with ``nt.function``: the chain's record+backward traced once; ``run`` times a
    replay.  ``first`` is the tracing call's time."""

    def __init__(self, n, x0=CHAIN_X0):
        x = nt.Variable(x0)

        def step():
            with nt.GradientTape() as tape:
                y = chain_ops(x, n, np.sin)
            return tape.gradient(y, x)

        self.step = nt.function(step)
        t0 = clock()
        self.step()
        self.first = clock() - t0

    def run(self, n=None):
        t0 = clock()
        g = self.step()
        return clock() - t0, 0.0, as_result(g)


class TracedMLP(MLP):
    """(b) with ``nt.function``: the same step (one tape, loss and gradients) replayed."""

    def __init__(self, params, x, onehot):
        super().__init__(params, x, onehot)
        ws, relu, log_softmax, x, onehot = self.params, self.relu, self.log_softmax, \
            self.x, self.onehot

        @nt.function
        def step():
            w1, b1, w2, b2, w3, b3 = ws
            with nt.GradientTape() as tape:
                h = relu(x @ w1 + b1)
                h = relu(h @ w2 + b2)
                logp = log_softmax(h @ w3 + b3)
                loss = -np.mean(np.sum(onehot * logp, axis=1))
            return loss, tape.gradient(loss, ws)

        self.traced = step

    def step(self):
        loss, grads = self.traced()
        return float(loss), [np.asarray(g) for g in grads]


def traced_line_fit(x, y, epochs=LINE_EPOCHS, lr=LINE_LR):
    """(e) with ``nt.function``: the guides' epoch traced at the first epoch, replayed
    for the rest (the tracing call is inside the timed loop)."""
    m = nt.Variable(0.0)
    c = nt.Variable(0.0)

    @nt.function
    def epoch():
        with nt.GradientTape() as tape:
            y_hat = m * x + c
            loss = np.mean((y - y_hat) ** 2)
        dm, dc = tape.gradient(loss, [m, c])
        m.assign_sub(lr * dm)
        c.assign_sub(lr * dc)

    for _ in range(epochs):
        epoch()
    return float(m.numpy()), float(c.numpy())
