"""The checks of tutorials 07 to 13, each with its reference answer.

The notebooks' data and models (11's points, 13's stack of layers) are repeated
here, so the checks do not read anything a learner can change in the notebook.
"""
import numpy as np

import nbtape as nt

from .feedback import (NotYet, a_seed, array, as_number, central_difference, entries, exercise,
                       listed, required, switched_off)

EXERCISES = {}


def _no_autodiff():
    """What 07 and 11 switch off while the learner's function runs: nbtape's tapes and
    transforms (07: read the paths yourself), and least-squares solvers (11)."""
    return [(nt, name, f"nt.{name}") for name in
            ("GradientTape", "ForwardAccumulator", "grad", "value_and_grad", "jacobian",
             "hessian")]


_POINTS_07 = [(0.7, 1.3), (-0.4, 2.1), (1.2, -0.6)]


def _draw07(rng):
    """A course's own three points for 07 (two decimals, as the self-check's)."""
    return {"points": np.round(rng.uniform(-1.5, 2.0, (3, 2)), 2).tolist()}


@exercise(EXERCISES, "07-chain-paths", draw=_draw07)
def chain_paths(dg, *, points=_POINTS_07):
    """07: ``dg(x, y)`` gives (dg/dx, dg/dy) of g = x y + e^x y from the chain picture's
    paths, at ``points`` other than the picture's, with nbtape's tapes switched off."""
    fn = required(dg, "dg", "a function of x and y that returns (dg_dx, dg_dy)")
    if not callable(fn):
        raise NotYet(f"`dg` should be a function of x and y, not a {type(fn).__name__}")
    for x, y in points:
        try:
            with switched_off(_no_autodiff(), "dg calls {name}: the exercise asks for the "
                              "products along the picture's paths, written out"):
                got = fn(x, y)
        except NotYet:
            raise
        except Exception as error:          # the learner's code: say what it raised
            raise NotYet(f"dg({x}, {y}) raised {type(error).__name__}: {error}") from None
        if got is None:
            raise NotYet("dg returns None: make it return the pair (dg_dx, dg_dy)")
        got = array(got, f"dg({x}, {y})", (2,))
        e = np.exp(x)
        want = np.array([y + e * y, x + e])
        close = np.isclose(got, want, atol=2e-3, rtol=0)
        if close.all():
            continue
        at = f"at x = {x}, y = {y}"
        if np.allclose(got[::-1], want, atol=2e-3, rtol=0):
            raise NotYet(f"{at} the two numbers are swapped: dg_dx comes first")
        wrong = [n for n, ok in zip(["dg_dx", "dg_dy"], close) if not ok]
        paths = {"dg_dx": (y, e * y), "dg_dy": (x, e)}
        for name in wrong:
            got_one = got[0 if name == "dg_dx" else 1]
            if any(np.isclose(got_one, p, atol=2e-3, rtol=0) for p in paths[name]):
                raise NotYet(f"{at}, {name} is one path's product: there are two paths "
                             "to g, and their products add up")
        if np.allclose(got, [1.3 + np.exp(0.7) * 1.3, 0.7 + np.exp(0.7)], atol=2e-3):
            raise NotYet(f"{at} dg gives the picture's numbers, at x = 0.7 and y = 1.3: "
                         "write each edge's label as a function of x and y")
        raise NotYet(f"{at} {' and '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} off: "
                     "multiply the edge labels along each path to g and add the paths")


def _f08(w):
    return np.sum(np.sin(w) * w ** 2) + w[0] * w[1] * w[2]


def _g08(w):
    return np.sum(np.exp(0.3 * w) * w) + np.prod(w[:3]) * w[4]


def _shortcuts_08():
    """The whole-Hessian shortcuts 08 switches off while the learner's function runs."""
    import nbtape.transforms.functional as functional
    return [(nt, "hessian", "nt.hessian"), (nt, "jacobian", "nt.jacobian"),
            (functional, "hessian", "nt.hessian"), (functional, "jacobian", "nt.jacobian"),
            (nt.GradientTape, "jacobian", "tape.jacobian"),
            (nt.GradientTape, "batch_jacobian", "tape.batch_jacobian")]


@exercise(EXERCISES, "08-hessian-diagonal", draw=a_seed)
def hessian_diagonal(hessian_diagonal, *, seed=8):
    """08: the Hessian's diagonal from Hessian-vector products, on functions it has not
    seen (at points drawn from ``seed``)."""
    fn = required(hessian_diagonal, "hessian_diagonal", "a function of f and w")
    rng = np.random.default_rng(seed)
    cases = [("f (this notebook's)", _f08, np.linspace(-1.0, 1.0, 5)),
             ("another function", _g08, np.round(rng.uniform(-1, 1, 5), 3)),
             ("another function", _g08, np.round(rng.uniform(-1, 1, 5), 3))]
    for label, f, w0 in cases:
        want = np.diag(nt.hessian(f)(w0))
        with switched_off(_shortcuts_08(), "hessian_diagonal calls {name}, which builds "
                          "the whole Hessian: the exercise asks for one Hessian-vector "
                          "product per input instead (a ForwardAccumulator over a tape)"):
            try:
                got = fn(f, nt.constant(w0))
            except NotYet:
                raise
            except Exception as error:      # the learner's code: say what it raised
                raise NotYet(f"hessian_diagonal raised {type(error).__name__}: "
                             f"{error}") from None
        got = array(required(got, "hessian_diagonal(f, w)", "the diagonal as an array"),
                    "hessian_diagonal(f, w)", (5,))
        if not np.allclose(got, want):
            raise NotYet(f"on {label} at w = {np.array2string(w0, precision=3)}, "
                         f"{entries(got, want)} of the diagonal are off: entry i of "
                         "H e_i is the i-th diagonal entry")


_FUNCTIONS_09 = {
    "log_cosh": nt.custom_gradient(lambda x: (np.log(np.cosh(x)),
                                              lambda dy: dy * np.tanh(x))),
    "swish": nt.custom_gradient(lambda x: (x / (1 + np.exp(-x)),
                                           lambda dy: dy * (1 / (1 + np.exp(-x)) + x / (
                                               1 + np.exp(-x)) * (1 - 1 / (1 + np.exp(-x)))))),
}


def _softsign(x):
    return x / (1 + np.abs(x))


@exercise(EXERCISES, "09-buggy", draw=a_seed)
def buggy(buggy, derivative, *, seed=90):
    """09: the one custom gradient that disagrees with finite differences, and its right
    derivative (a function: not a 1-in-3 guess), at points drawn from ``seed``."""
    names = ["log_cosh", "swish", "softsign"]
    name = required(buggy, "buggy", "a name as a string, such as \"swish\"")
    if name not in names:
        raise NotYet(f"`buggy` should be one of {', '.join(map(repr, names))}, "
                     f"not {name!r}")
    if name in _FUNCTIONS_09:
        points = np.random.default_rng(9).standard_normal(6)
        worst = nt.check_gradients(_FUNCTIONS_09[name], points)
        raise NotYet(f"{name}'s gradient agrees with central finite differences at random "
                     f"points (the largest difference is {worst:.1e}): it is right")
    fn = required(derivative, "derivative", "a function of x: softsign's right derivative")
    points = np.round(np.random.default_rng(seed).uniform(-3, 3, 7), 3)
    try:
        values = [fn(p) for p in points]
        if any(v is None for v in values):
            raise NotYet("derivative returns None: make it return softsign's derivative at x")
        got = np.asarray([float(np.asarray(v)) for v in values])
    except NotYet:
        raise
    except Exception as error:              # the learner's code: say what it raised
        raise NotYet(f"derivative raised {type(error).__name__}: {error}") from None
    fd = np.array([central_difference(_softsign, p) for p in points])
    bad = ~np.isclose(got, fd, rtol=1e-4, atol=1e-6)
    if bad.any():
        at = ", ".join(f"{p:g}" for p in points[bad][:3])
        if np.allclose(got, 1 / (1 + points ** 2)):
            raise NotYet("`derivative` is the buggy one, 1 / (1 + x ** 2): differentiate "
                         "x / (1 + |x|) again (the quotient rule, with d|x|/dx = sign(x))")
        raise NotYet(f"`derivative` disagrees with a central finite difference of "
                     f"softsign at x = {at}")


def _least_squares():
    """The solvers 11 switches off while the learner's fit runs (the check's own
    least-squares answer is computed before)."""
    import numpy.polynomial.polynomial as polynomial
    return ([(np, "polyfit", "np.polyfit"), (np.linalg, "lstsq", "np.linalg.lstsq"),
             (np.linalg, "solve", "np.linalg.solve"), (np.linalg, "inv", "np.linalg.inv"),
             (np.linalg, "pinv", "np.linalg.pinv"),
             (polynomial, "polyfit", "np.polynomial.polynomial.polyfit")])


_QUADRATIC_11 = (0.8, -1.2, 0.5)


def _data11(seed, coefficients):
    """The check's own noisy points from another quadratic (not the notebook's)."""
    rng = np.random.default_rng(seed)
    x = np.linspace(-2.0, 2.0, 25)
    a, b, c = coefficients
    return x, a * x ** 2 + b * x + c + rng.normal(0.0, 0.3, x.shape)


def _draw11(rng):
    """A course's own quadratic and noise for 11 (coefficients in the self-check's range)."""
    return {"seed": int(rng.integers(2 ** 31)),
            "coefficients": np.round(rng.uniform([0.4, -1.5, -1.0], [1.2, 1.5, 1.0]),
                                     2).tolist()}


@exercise(EXERCISES, "11-quadratic-fit", draw=_draw11)
def quadratic_fit(fit_quadratic, *, seed=11, coefficients=_QUADRATIC_11):
    """11: ``fit_quadratic(x, y)`` finds (a, b, c) by gradient descent, on the check's own
    noisy data (``coefficients`` plus noise drawn from ``seed``), with least-squares
    solvers switched off."""
    fn = required(fit_quadratic, "fit_quadratic", "a function of (x, y) that returns (a, b, c)")
    if not callable(fn):
        raise NotYet(f"`fit_quadratic` should be a function of x and y, not a "
                     f"{type(fn).__name__}")
    x, y = _data11(seed, coefficients)
    want = np.polyfit(x, y, 2)
    try:
        with switched_off(_least_squares(), "fit_quadratic calls {name}: the exercise asks "
                          "for the training loop (a tape and an optimizer), not a solver"):
            got = fn(x.copy(), y.copy())
    except NotYet:
        raise
    except Exception as error:              # the learner's code: say what it raised
        raise NotYet(f"fit_quadratic raised {type(error).__name__}: {error}") from None
    if got is None:
        raise NotYet("fit_quadratic returns None: make it return (a, b, c)")
    got = array(got, "fit_quadratic(x, y)", (3,))
    close = np.isclose(got, want, atol=1e-2, rtol=0)
    if close.all():
        return
    if np.allclose(got[::-1], want, atol=1e-2, rtol=0):
        raise NotYet("the order is (a, b, c): a goes with x ** 2, c is the constant")
    if np.allclose(got, coefficients, atol=1e-2):
        raise NotYet("on the check's points fit_quadratic returns round numbers: it should "
                     "return what the loop finds on the x and y it is given")
    coefficients = nt.Variable(got)
    with nt.GradientTape() as tape:
        a, b, c = coefficients[0], coefficients[1], coefficients[2]
        loss = np.mean((a * x ** 2 + b * x + c - y) ** 2)
    slope = tape.gradient(loss, coefficients).numpy()
    off = ", ".join(n for n, ok in zip("abc", close) if not ok)
    raise NotYet(f"on the check's own noisy points, {off} {'is' if ',' not in off else 'are'} "
                 f"off by more than 0.01: the mean squared error at the (a, b, c) returned is "
                 f"{float(loss):.4g} and its gradient there is "
                 f"{np.array2string(slope, precision=3)}, not zero (more steps, or a "
                 "different learning rate? does it fit the x and y it is given?)")


@exercise(EXERCISES, "12-clip-global", draw=a_seed)
def clip_global(clip_global, *, seed=12):
    """12: the same as ``nt.clip_by_global_norm``, when clipping and when not (on
    gradients drawn from ``seed``)."""
    fn = required(clip_global, "clip_global", "a function of (grads, clip_norm)")
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s) for s in [(4, 3), (3,), (3, 2)]]
    norm = float(np.sqrt(sum(np.sum(g ** 2) for g in grads)))
    import nbtape.training.clip as clip
    for limit in [0.5, 100.0]:
        expected, _ = nt.clip_by_global_norm(grads, limit)
        try:
            with switched_off([(nt, "clip_by_global_norm", "nt.clip_by_global_norm"),
                               (clip, "clip_by_global_norm", "nt.clip_by_global_norm")],
                              "clip_global calls {name}: the exercise asks for it in "
                              "plain numpy (the norm of all the arrays together, then one "
                              "scale)"):
                got = fn([g.copy() for g in grads], limit)
        except NotYet:
            raise
        except Exception as error:          # the learner's code: say what it raised
            raise NotYet(f"clip_global raised {type(error).__name__}: {error}") from None
        got = listed(got, "clip_global(grads, clip_norm)", "a list of arrays")
        if len(got) != len(grads):
            raise NotYet(f"clip_global returns {len(got)} arrays for {len(grads)} gradients")
        got = [np.asarray(g) for g in got]
        for g, original in zip(got, grads):
            if g.shape != original.shape:
                raise NotYet(f"clip_global turns an array of shape {original.shape} into "
                             f"shape {g.shape}")
        if all(np.allclose(g, np.asarray(e)) for g, e in zip(got, expected)):
            continue
        if limit > norm:
            raise NotYet(f"gradients whose global norm ({norm:.3g}) is below the limit "
                         f"({limit:g}) should come back unchanged")
        new = float(np.sqrt(sum(np.sum(g ** 2) for g in got)))
        scales = {round(float(np.linalg.norm(g) / np.linalg.norm(o)), 9)
                  for g, o in zip(got, grads)}
        if len(scales) > 1:
            raise NotYet("the arrays are scaled by different factors: global clipping scales "
                         "them all by one factor (clip_by_norm scales each on its own)")
        raise NotYet(f"with the limit {limit:g}, the global norm of what clip_global returns "
                     f"is {new:.4g}: it should be the limit")


def _norms13(activation, scale):
    """Notebook 13's stack, as its cells build it (the same seeds)."""
    depth, width, batch = 20, 64, 32
    x = np.random.default_rng(1).standard_normal((batch, width))
    rng = np.random.default_rng(0)
    ws = [nt.Variable(rng.standard_normal((width, width)) * np.sqrt(scale / width))
          for _ in range(depth)]
    with nt.GradientTape() as tape:
        h = x
        for w in ws:
            h = activation(h @ w)
        loss = np.mean(h ** 2)
    return np.array([np.linalg.norm(g.numpy()) for g in tape.gradient(loss, ws)])


@exercise(EXERCISES, "13-tanh-norms")
def tanh_norms(tanh_norms):
    """13, part 1: the per-layer gradient norms of the tanh stack."""
    got = array(required(tanh_norms, "tanh_norms", "an array of 20 norms"), "tanh_norms", (20,))
    want = _norms13(np.tanh, 1.0)
    if np.allclose(got, want):
        return
    if np.allclose(got[::-1], want):
        raise NotYet("the norms are in reverse: the first layer (next to the input) first")
    if np.allclose(got, _norms13(nt.nn.sigmoid, 1.0)):
        raise NotYet("those are the sigmoid stack's norms: use np.tanh as the activation")
    if np.allclose(got, _norms13(np.tanh, 2.0)):
        raise NotYet("those norms come from ReLU's weights: use the sigmoid's, weights(1.0)")
    raise NotYet(f"{entries(got, want)} of `tanh_norms` differ from the tanh stack's "
                 "gradient norms: measure the tanh stack the way the cells above measure "
                 "the sigmoid's, with the same weights")


@exercise(EXERCISES, "13-closer-to")
def closer_to(closer_to, tanh_orders):
    """13, part 2: how many orders of magnitude tanh's first-to-last ratio spans (a number),
    and which stack's it is closer to."""
    got = as_number(required(tanh_orders, "tanh_orders", "log10(first / last) of tanh's "
                             "norms, a float"), "tanh_orders")
    tanh, sigmoid, relu = (np.log10(n[0] / n[-1]) for n in
                           (_norms13(np.tanh, 1.0), _norms13(nt.nn.sigmoid, 1.0),
                            _norms13(nt.nn.relu, 2.0)))
    if not np.isclose(got, tanh, atol=0.05, rtol=0):
        if np.isclose(got, -tanh, atol=0.05, rtol=0):
            raise NotYet("`tanh_orders` has the wrong sign: log10(first / last), the first "
                         "layer's norm over the last's")
        if np.isclose(got, tanh * np.log(10), atol=0.05, rtol=0):
            raise NotYet("`tanh_orders` is a natural logarithm: use np.log10")
        raise NotYet("`tanh_orders` is not log10(first / last) of tanh's norms (the first "
                     "layer's over the last layer's)")
    name = required(closer_to, "closer_to", "\"sigmoid\" or \"relu\"")
    if name not in ("sigmoid", "relu"):
        raise NotYet(f"`closer_to` should be \"sigmoid\" or \"relu\", not {name!r}")
    nearer = "sigmoid" if abs(tanh - sigmoid) < abs(tanh - relu) else "relu"
    if name != nearer:
        raise NotYet("not that one: compare tanh_orders with log10(first / last) of the "
                     "sigmoid's and ReLU's norms")
