"""The checks of tutorials 07 to 14, each with its reference answer.

The notebooks' data and models (11's points, 13's stack of layers) are repeated
here, so the checks do not read anything a learner can change in the notebook.
"""
import numpy as np

import nbtape as nt

from .feedback import (NotYet, array, as_number, entries, exercise,
                       first_difference, listed, required, story, switched_off)

EXERCISES = {}


@exercise(EXERCISES, "07-chain-paths")
def chain_paths(answer):
    """07: (dg/dx, dg/dy) of g = x y + e^x y at (0.7, 1.3), read off the chain picture."""
    required(answer, "answer", "the pair (dg_dx, dg_dy)")
    got = array(answer, "answer", (2,))
    x, y, e = 0.7, 1.3, np.exp(0.7)
    want = np.array([y + e * y, x + e])
    close = np.isclose(got, want, atol=2e-3, rtol=0)
    if close.all():
        return
    if np.allclose(got[::-1], want, atol=2e-3, rtol=0):
        raise NotYet("the two numbers are swapped: answer = (dg_dx, dg_dy)")
    wrong = [n for n, ok in zip(["dg_dx", "dg_dy"], close) if not ok]
    paths = {"dg_dx": (y, e * y), "dg_dy": (x, e)}
    for name in wrong:
        got_one = got[0 if name == "dg_dx" else 1]
        if any(np.isclose(got_one, p, atol=2e-3, rtol=0) for p in paths[name]):
            raise NotYet(f"{name} is one path's product: there are two paths to g, and "
                         "their products add up")
    raise NotYet(f"{' and '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} off: multiply "
                 "the edge labels along each path to g and add the paths")


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


@exercise(EXERCISES, "08-hessian-diagonal")
def hessian_diagonal(hessian_diagonal):
    """08: the Hessian's diagonal from Hessian-vector products, on functions it has not seen."""
    fn = required(hessian_diagonal, "hessian_diagonal", "a function of f and w")
    rng = np.random.default_rng(8)
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


@exercise(EXERCISES, "09-buggy")
def buggy(buggy):
    """09: the one custom gradient that disagrees with finite differences."""
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


_X11 = np.linspace(-2.0, 2.0, 21)
_Y11 = np.array([8.5, 7.16, 5.94, 4.84, 3.86, 3.0, 2.26, 1.64, 1.14, 0.76, 0.5,
                 0.36, 0.34, 0.44, 0.66, 1.0, 1.46, 2.04, 2.74, 3.56, 4.5])


@exercise(EXERCISES, "11-quadratic-fit")
def quadratic_fit(answer):
    """11: (a, b, c) of the least-squares quadratic through the points."""
    got = array(required(answer, "answer", "the tuple (a, b, c) of floats"), "answer", (3,))
    want = np.polyfit(_X11, _Y11, 2)
    close = np.isclose(got, want, atol=1e-2, rtol=0)
    if close.all():
        return
    if np.allclose(got[::-1], want, atol=1e-2, rtol=0):
        raise NotYet("the order is (a, b, c): a goes with x ** 2, c is the constant")
    coefficients = nt.Variable(got)
    with nt.GradientTape() as tape:
        a, b, c = coefficients[0], coefficients[1], coefficients[2]
        loss = np.mean((a * _X11 ** 2 + b * _X11 + c - _Y11) ** 2)
    slope = tape.gradient(loss, coefficients).numpy()
    off = ", ".join(n for n, ok in zip("abc", close) if not ok)
    raise NotYet(f"{off} {'is' if off.count(',') == 0 else 'are'} off by more than 0.01: the "
                 f"mean squared error at your (a, b, c) is {float(loss):.4g} and its gradient "
                 f"there is {np.array2string(slope, precision=3)}, not zero (more steps, "
                 "or a different learning rate?)")


@exercise(EXERCISES, "12-clip-global")
def clip_global(clip_global):
    """12: the same as ``nt.clip_by_global_norm``, when clipping and when not."""
    fn = required(clip_global, "clip_global", "a function of (grads, clip_norm)")
    rng = np.random.default_rng(12)
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
def closer_to(closer_to):
    """13, part 2: which stack's first-to-last ratio tanh's is closer to."""
    name = required(closer_to, "closer_to", "\"sigmoid\" or \"relu\"")
    if name not in ("sigmoid", "relu"):
        raise NotYet(f"`closer_to` should be \"sigmoid\" or \"relu\", not {name!r}")
    orders = [abs(np.log10(n[0] / n[-1])) for n in
              (_norms13(np.tanh, 1.0), _norms13(nt.nn.sigmoid, 1.0), _norms13(nt.nn.relu, 2.0))]
    nearer = "sigmoid" if abs(orders[0] - orders[1]) < abs(orders[0] - orders[2]) else "relu"
    if name != nearer:
        raise NotYet("not that one: compare log10(first / last) of tanh's norms with the "
                     "sigmoid's and ReLU's")


def _reference_disc():
    r = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(r)
        area = np.pi * r ** 2
    return tape


@exercise(EXERCISES, "14-tape-magic")
def tape_magic(answer, disc, area, r):
    """14: the tape ``disc`` follows ``r``, and ``answer`` is d(area)/dr from it."""
    if not isinstance(disc, nt.GradientTape):
        raise NotYet("`disc` should be the tape that the %%tape cell made")
    try:
        grad = disc.gradient(area, r)
    except Exception as error:              # a tape used up, or odd values
        raise NotYet(f"disc.gradient(area, r) raised {type(error).__name__}: "
                     f"{error}") from None
    if grad is None:
        where = first_difference(disc, _reference_disc())
        raise NotYet("the tape disc does not follow r: " + story(disc, area, r)
                     + (f" Compared with the reference: {where}." if where else ""))
    if not np.isclose(float(grad), 2 * np.pi * float(r)):
        raise NotYet("the tape's gradient is not d(area)/dr of area = pi r ** 2: "
                     "is the cell's second line still as required?")
    got = as_number(required(answer, "answer", "d(area)/dr as a float"), "answer")
    if not np.isclose(got, float(grad)):
        raise NotYet("`answer` is not the gradient that the tape disc gives: read it with "
                     "disc.gradient(area, r)")
