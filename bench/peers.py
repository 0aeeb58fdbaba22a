"""The comparison columns: HIPS autograd and PyTorch doing the same workloads.

Both are optional.  ``available()`` lists the peers that import; ``run.py`` adds
a column for each.  Each peer is a small class with the same methods as the
``cases``/``handwritten`` modules, so the timing code treats all columns alike.
"""
import numpy as np

from problems import CHAIN_X0, LINE_EPOCHS, LINE_LR, rosenbrock
from timing import clock


def available(names=("autograd", "torch")):
    """``{name: peer}`` for those of ``names`` that import on this machine."""
    peers = {}
    for cls in (Autograd, Torch):
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
            for i in range(n):
                k = i & 3
                if k == 0:
                    y = y * 1.0001
                elif k == 1:
                    y = y + 0.0001
                elif k == 2:
                    y = anp.sin(y)
                else:
                    y = y - 0.0001
            return y
        t0 = clock()
        vjp, _ = self.ag.make_vjp(f)(x0)      # records the forward pass
        t1 = clock()
        g = vjp(1.0)
        t2 = clock()
        return t1 - t0, t2 - t1, float(g)

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


class Torch:
    NAME = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        self.version = torch.__version__

    def chain(self, n, x0=CHAIN_X0):
        torch = self.torch
        x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        t0 = clock()
        y = x
        for i in range(n):
            k = i & 3
            if k == 0:
                y = y * 1.0001
            elif k == 1:
                y = y + 0.0001
            elif k == 2:
                y = torch.sin(y)
            else:
                y = y - 0.0001
        t1 = clock()
        (g,) = torch.autograd.grad(y, x)
        t2 = clock()
        return t1 - t0, t2 - t1, float(g)

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


def _dist_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "?"
