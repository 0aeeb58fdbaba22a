"""The comparison columns: HIPS autograd, PyTorch and JAX (eager) doing the same workloads.

All are optional.  ``available()`` lists the peers that import; ``run.py`` adds
a column for each.  Each peer is a small class with the same methods as the
``cases``/``handwritten`` modules, so the timing code treats all columns alike.
"""
import numpy as np

from problems import CHAIN_X0, LINE_EPOCHS, LINE_LR, chain_ops, jac_mlp, rosenbrock
from timing import clock

NAMES = ("autograd", "torch", "jax")


def available(names=NAMES):
    """``{name: peer}`` for those of ``names`` that import on this machine."""
    peers = {}
    for cls in (Autograd, Torch, Jax):
        if cls.NAME in names:
            try:
                peers[cls.NAME] = cls()
            except ImportError:
                pass
    return peers


class Autograd:
    NAME = "autograd"

    def __init__(self):
        import autograd
        import autograd.numpy as anp
        self.ag, self.anp = autograd, anp
        self.version = getattr(autograd, "__version__", None) or _dist_version("autograd")

    def chain(self, n, x0=CHAIN_X0):
        anp = self.anp

        def f(y):
            return chain_ops(y, n, anp.sin)
        t0 = clock()
        vjp, y = self.ag.make_vjp(f)(x0)      # records the forward pass
        t1 = clock()
        g = vjp(np.ones_like(y))
        t2 = clock()
        return t1 - t0, t2 - t1, _result(g)

    def mlp(self, params, x, onehot):
        anp, ag = self.anp, self.ag

        def loss_fn(ps):
            w1, b1, w2, b2, w3, b3 = ps
            h = anp.maximum(anp.dot(x, w1) + b1, 0)
            h = anp.maximum(anp.dot(h, w2) + b2, 0)
            z = anp.dot(h, w3) + b3
            z = z - anp.max(z, axis=1, keepdims=True)
            logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
            return -anp.mean(anp.sum(onehot * logp, axis=1))
        vg = ag.value_and_grad(loss_fn)

        class Step:
            desc = "value_and_grad"

            def step(self_):
                loss, grads = vg(list(params))
                return float(loss), list(grads)
        return Step()

    def line_fit(self, x, y, epochs=LINE_EPOCHS, lr=LINE_LR):
        anp = self.anp

        def loss(m, c):
            return anp.mean((y - (m * x + c)) ** 2)
        grads = self.ag.grad(loss, argnum=(0, 1))
        m, c = 0.0, 0.0
        for _ in range(epochs):
            dm, dc = grads(m, c)
            m = m - lr * dm
            c = c - lr * dc
        return float(m), float(c)

    def rosen_hessian(self, x0):
        return np.asarray(self.ag.hessian(rosenbrock)(x0))

    def mlp_jacobian(self, params, x):
        return np.asarray(self.ag.jacobian(lambda v: jac_mlp(params, v, self.anp.tanh))(x))

    mlp_batch_jacobian = None      # autograd has no batch_jacobian (nor vmap)


class Torch:
    NAME = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        self.version = torch.__version__

    def chain(self, n, x0=CHAIN_X0):
        torch = self.torch
        x = torch.tensor(np.asarray(x0), dtype=torch.float64, requires_grad=True)
        t0 = clock()
        y = x
        y = chain_ops(y, n, torch.sin)
        t1 = clock()
        (g,) = torch.autograd.grad(y, x, torch.ones_like(y))
        t2 = clock()
        return t1 - t0, t2 - t1, _result(g.numpy())

    def mlp(self, params, x, onehot):
        torch = self.torch
        ps = [torch.tensor(p, requires_grad=True) for p in params]
        xt, oh = torch.from_numpy(x), torch.from_numpy(onehot)

        class Step:
            desc = "loss.backward via autograd.grad"

            def step(self_):
                w1, b1, w2, b2, w3, b3 = ps
                h = torch.relu(xt @ w1 + b1)
                h = torch.relu(h @ w2 + b2)
                logp = torch.log_softmax(h @ w3 + b3, dim=1)
                loss = -(oh * logp).sum(dim=1).mean()
                grads = torch.autograd.grad(loss, ps)
                return float(loss.detach()), [g.numpy() for g in grads]
        return Step()

    def line_fit(self, x, y, epochs=LINE_EPOCHS, lr=LINE_LR):
        torch = self.torch
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        m = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
        c = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
        for _ in range(epochs):
            loss = ((yt - (m * xt + c)) ** 2).mean()
            dm, dc = torch.autograd.grad(loss, (m, c))
            with torch.no_grad():
                m -= lr * dm
                c -= lr * dc
        return float(m.detach()), float(c.detach())

    def rosen_hessian(self, x0):
        torch = self.torch
        return torch.func.hessian(rosenbrock)(torch.from_numpy(x0)).numpy()

    def _jac_fn(self, params):
        torch = self.torch
        ps = [torch.from_numpy(p) for p in params]
        return lambda v: jac_mlp(ps, v, torch.tanh)

    def mlp_jacobian(self, params, x):
        torch = self.torch
        return torch.func.jacrev(self._jac_fn(params))(torch.from_numpy(x)).numpy()

    def mlp_batch_jacobian(self, params, xs):
        torch = self.torch
        return torch.func.vmap(torch.func.jacrev(self._jac_fn(params)))(
            torch.from_numpy(xs)).numpy()


class Jax:
    """JAX in eager mode (no ``jit``: every op dispatched on its own, as in the others)."""
    NAME = "jax"

    def __init__(self):
        import os
        # one intra-op thread, like torch.set_num_threads(1) (must precede the import)
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                           "intra_op_parallelism_threads=1")
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)       # float64, as the other columns
        jax.config.update("jax_platforms", "cpu")
        self.jax, self.jnp = jax, jnp
        self.version = jax.__version__

    def chain(self, n, x0=CHAIN_X0):
        jnp = self.jnp

        def f(y):
            return chain_ops(y, n, jnp.sin)
        x = jnp.asarray(x0, dtype=jnp.float64)
        t0 = clock()
        y, vjp = self.jax.vjp(f, x)          # records the forward pass
        t1 = clock()
        (g,) = vjp(jnp.ones_like(y))
        g = np.asarray(g)                     # waits for the result
        t2 = clock()
        return t1 - t0, t2 - t1, _result(g)

    def mlp(self, params, x, onehot):
        jax, jnp = self.jax, self.jnp

        def loss_fn(ps):
            w1, b1, w2, b2, w3, b3 = ps
            h = jax.nn.relu(x @ w1 + b1)
            h = jax.nn.relu(h @ w2 + b2)
            logp = jax.nn.log_softmax(h @ w3 + b3, axis=1)
            return -jnp.mean(jnp.sum(onehot * logp, axis=1))
        vg = jax.value_and_grad(loss_fn)
        ps = [jnp.asarray(p) for p in params]
        x, onehot = jnp.asarray(x), jnp.asarray(onehot)

        class Step:
            desc = "value_and_grad, eager"

            def step(self_):
                loss, grads = vg(ps)
                return float(loss), [np.asarray(g) for g in grads]
        return Step()

    def line_fit(self, x, y, epochs=LINE_EPOCHS, lr=LINE_LR):
        jnp = self.jnp
        xj, yj = jnp.asarray(x), jnp.asarray(y)

        def loss(m, c):
            return jnp.mean((yj - (m * xj + c)) ** 2)
        grads = self.jax.grad(loss, argnums=(0, 1))
        m, c = jnp.asarray(0.0), jnp.asarray(0.0)
        for _ in range(epochs):
            dm, dc = grads(m, c)
            m = m - lr * dm
            c = c - lr * dc
        return float(m), float(c)

    def rosen_hessian(self, x0):
        return np.asarray(self.jax.hessian(rosenbrock)(self.jnp.asarray(x0)))

    def mlp_jacobian(self, params, x):
        jnp = self.jnp
        ps = [jnp.asarray(p) for p in params]
        return np.asarray(self.jax.jacrev(lambda v: jac_mlp(ps, v, jnp.tanh))(jnp.asarray(x)))

    def mlp_batch_jacobian(self, params, xs):
        jax, jnp = self.jax, self.jnp
        ps = [jnp.asarray(p) for p in params]
        f = jax.vmap(jax.jacrev(lambda v: jac_mlp(ps, v, jnp.tanh)))
        return np.asarray(f(jnp.asarray(xs)))


def _result(g):
    """A float for a scalar, else a plain array."""
    g = np.array(g)
    return float(g) if g.ndim == 0 else g


def _dist_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "?"
