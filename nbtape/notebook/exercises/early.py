"""The checks of tutorials 01 to 06 (03b, 03c, 04b and 06b among them), each with its reference answer.

The notebook's data (05's ``data``, 05b's) is repeated here, so a learner who
changes the notebook's copy is still checked against the exercise as written.
"""
import math

import numpy as np

import nbtape as nt

from .feedback import (NotYet, a_seed, array, as_number, central_difference,
                       compare, entries, exercise, first_difference, record, required,
                       story)

EXERCISES = {}


@exercise(EXERCISES, "01-finite-difference")
def finite_difference(error):
    """01: the absolute error of the central difference of x**3 at 2 with h = 1e-5."""
    error = as_number(required(error, "error", "the absolute error as a float"), "error")
    fd = central_difference(lambda v: v ** 3, 2.0, h=1e-5)
    if np.isclose(error, abs(fd - 12.0), rtol=1e-3, atol=0):
        return
    if error < 0:
        raise NotYet("an absolute error is never negative: take abs() of the difference")
    if abs(error - 12.0) < 1e-3:
        raise NotYet("`error` is about the derivative itself; the exercise asks how far "
                     "the finite difference is from the tape's exact value")
    if error > 1e-6:
        raise NotYet(f"`error` is about 1e{math.floor(math.log10(error))}, far more than a "
                     "central difference with h = 1e-5 misses by: is h 1e-5, and the "
                     "difference (f(x + h) - f(x - h)) / (2 h), the central one?")
    raise NotYet("`error` is small, but not |central difference - exact| for this h: "
                 "subtract the tape's exact derivative from the finite difference")


@exercise(EXERCISES, "02-value-exp", draw=a_seed)
def value_exp(value_exp, Value, backward, *, seed=2):
    """02: ``value_exp`` gives e^v, and its backward rule the right gradient (at points
    drawn from ``seed``)."""
    fn = required(value_exp, "value_exp", "a function of one Value")
    rng = np.random.default_rng(seed)
    for x0 in np.round(rng.uniform(-2, 2, 3), 3):
        v = Value(float(x0))
        try:
            out = fn(v)
            if not isinstance(out, Value):
                raise NotYet(f"value_exp(Value({x0})) is a {type(out).__name__}: return a "
                             "new Value")
            if not math.isclose(out.data, math.exp(x0), rel_tol=1e-9):
                raise NotYet(f"value_exp(Value({x0})).data is {out.data:.6g}; "
                             f"e^{x0} is {math.exp(x0):.6g}")
            if not any(p is v for p in out.parents):
                raise NotYet("the Value that value_exp returns does not name its input "
                             "among its parents, so backward never reaches the input")
            v = Value(float(x0))
            g = v * fn(v)
            backward(g)
        except NotYet:
            raise
        except Exception as error:          # the learner's code: say what it raised
            raise NotYet(f"value_exp raised {type(error).__name__}: {error}") from None
        w = nt.Variable(float(x0))
        with nt.GradientTape() as tape:
            gw = w * np.exp(w)
        want = float(tape.gradient(gw, w))
        if not math.isclose(v.grad, want, rel_tol=1e-7, abs_tol=1e-12):
            raise NotYet(f"for g(x) = x * value_exp(x) at x = {x0}, your engine's gradient "
                         f"is {v.grad:.6g} and nbtape's tape gives {want:.6g}: "
                         "look at the backward rule")


_W03 = np.array([0.5, 2.0, 5.0])
# what a gradient of another function than f gives, and what to say (never the answer)
_OTHER_03 = [
    (2 * _W03, "`answer` is the gradient of sum(w ** 2): the `- 1` inside f is missing "
               "from what your tape recorded"),
    (np.ones(3), "`answer` is the gradient of sum(w - 1): the square inside f is "
                 "missing from what your tape recorded"),
    (2 * (_W03 - 1) / 3, "`answer` is a third of df/dw: it is the gradient of a mean, "
                         "and f is a sum (np.sum, not np.mean)"),
]
NONE_03 = ("`answer` is None: either it was never set, or tape.gradient(f, w) returned "
           "None, which means the tape saw no path from w to f (was f computed outside "
           "the `with` block, or did a value leave the tape through float() or "
           "np.asarray()? tape.explain(f, w) says where)")


@exercise(EXERCISES, "03-gradient")
def gradient(answer):
    """03: df/dw for f(w) = sum((w - 1)^2) at w = [0.5, 2, 5]."""
    if answer is None:
        raise NotYet(NONE_03)
    got = array(answer, "answer", (3,))
    want = 2 * (_W03 - 1)
    if np.allclose(got, want):
        return
    if np.allclose(got, -want):
        raise NotYet("every entry has the wrong sign: the derivative of (w - 1) ** 2 "
                     "with respect to w is positive where w > 1")
    if np.allclose(got, want / 2):
        raise NotYet("every entry is half of what it should be: the derivative of a "
                     "square brings down a factor")
    for other, said in _OTHER_03:
        if np.allclose(got, other):
            raise NotYet(said)
    if np.allclose(got, (_W03 - 1) ** 2):
        raise NotYet("`answer` holds values of f, not of its gradient: ask the tape for "
                     "tape.gradient(f, w)")
    where = entries(got, want)
    raise NotYet(f"{where} of `answer` {'differs' if where.startswith('entry ') else 'differ'}"
                 " from df/dw of f(w) = "
                 "sum((w - 1) ** 2): your tape recorded another function; compare what "
                 "runs inside your `with` block with f, term by term")


def _scores_gradient():
    """03b's ``g_scores``, made here as the notebook makes it (same seed, same model)."""
    rng = np.random.default_rng(1)
    x = nt.constant(rng.standard_normal((5, 3)))
    W = nt.Variable(rng.standard_normal((3, 2)))
    b = nt.Variable([0.1, -0.2])
    with nt.GradientTape() as tape:
        scores = x @ W + b
        loss = np.sum(np.tanh(scores) ** 2)
    return tape.gradient(loss, scores).numpy()


@exercise(EXERCISES, "03b-bias-gradient")
def bias_gradient(answer):
    """03b: the bias's gradient, summed from the scores' gradient over the broadcast rows."""
    required(answer, "answer", "the gradient with respect to b, an array of shape (2,)")
    shape = np.shape(answer.numpy() if hasattr(answer, "numpy") else answer)
    if shape == (5, 2):
        raise NotYet("`answer` has the shape of the scores, (5, 2): b has shape (2,), so "
                     "the gradients of the rows it was stretched over have to be combined")
    if shape == (5,):
        raise NotYet("`answer` has shape (5,), one number per example: b was stretched "
                     "along the rows (axis 0), so combine along that axis, not axis 1")
    if shape == ():
        raise NotYet("`answer` is one number: b has two entries, and each keeps its own "
                     "gradient; combine along the axis b was stretched over only")
    got = array(answer, "answer", (2,))
    g = _scores_gradient()
    want = np.sum(g, axis=0)
    if np.allclose(got, want):
        return
    if np.allclose(got, np.mean(g, axis=0)):
        raise NotYet("every entry is a fifth of what it should be: each row's gradient "
                     "reaches b in full, so the rows add up rather than average")
    if np.allclose(got, -want):
        raise NotYet("every entry has the wrong sign")
    if np.allclose(got, g[0]) or np.allclose(got, g[-1]):
        raise NotYet("`answer` is one row of g_scores: b was used by all 5 rows, and "
                     "every row adds its share")
    raise NotYet(f"{entries(got, want)} of `answer` differ from the gradient the tape gives "
                 "for b: combine g_scores along the axis that b was broadcast over")


def _reference_disc():
    r = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(r)
        area = np.pi * r ** 2
    return tape


@exercise(EXERCISES, "03c-tape-magic")
def tape_magic(answer, disc, area, r):
    """03c: the tape ``disc`` follows ``r``, and ``answer`` is d(area)/dr from it."""
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


@exercise(EXERCISES, "04-third-derivative")
def third_derivative(answer):
    """04: the third derivative of e^(2x) at 0.3."""
    got = as_number(required(answer, "answer", "the third derivative as a float"), "answer")
    base = np.exp(0.6)
    if np.isclose(got, 8 * base):
        return
    for factor, what in [(1, "g itself (no gradient taken)"), (2, "the first derivative"),
                         (4, "the second derivative"), (16, "the fourth derivative")]:
        if np.isclose(got, factor * base):
            raise NotYet(f"`answer` is {what}: three nested tapes, each taking the gradient "
                         "of the one inside, give the third")
    raise NotYet("`answer` is not the third derivative of e^(2x) at 0.3: nest three "
                 "tapes and take the gradient of the gradient of the gradient")


@exercise(EXERCISES, "04b-hinge-kink")
def hinge_kink(answer):
    """04b: dL/ds of L = sum(max(0, 1 - s)) at s = [2, 1, 0.5]; any subgradient on the kink."""
    got = array(required(answer, "answer", "dL/ds as an array of shape (3,)"), "answer", (3,))
    off = [0.0, None, -1.0]                 # the slopes off the kink (s = 2 and s = 0.5)
    kink_ok = -1.0 <= got[1] <= 0.0         # the subgradients of max(0, 1 - s) at s = 1
    if np.isclose(got[0], off[0]) and np.isclose(got[2], off[2]) and kink_ok:
        return
    if np.isclose(got[0], 0.0) and np.isclose(got[2], 1.0):
        raise NotYet("the entry at s = 0.5 has the wrong sign: L = sum(max(0, 1 - s)) "
                     "falls as a score below 1 rises")
    if np.isclose(got[0], 1.0) and np.isclose(got[2], 0.0):
        raise NotYet("`answer` looks like the gradient of max(0, s - 1): the hinge is "
                     "relu(1 - s), which is zero for scores above 1")
    if not (np.isclose(got[0], off[0]) and np.isclose(got[2], off[2])):
        bad = [k for k in (0, 2) if not np.isclose(got[k], off[k])]
        where = " and ".join(f"s = {[2.0, 1.0, 0.5][k]}" for k in bad)
        raise NotYet(f"off the kink the gradient is the slope of a straight line, and at "
                     f"{where} `answer` does not agree with a central finite difference of L")
    raise NotYet(f"at s = 1, on the kink, `answer` holds {got[1]:.4g}: that is not a "
                 "subgradient of max(0, 1 - s) there, which lies between the slopes on "
                 "its two sides")


DATA_05 = np.array([1.0, 2.0, 3.0])


def _fixed_loss(w):
    return np.mean((w * DATA_05 + 0.5 - 2 * DATA_05) ** 2)


@exercise(EXERCISES, "05-fixed-loss")
def fixed_loss(fixed_loss):
    """05: the same loss as ``fit_loss``, with a gradient (values and gradients compared)."""
    fn = required(fixed_loss, "fixed_loss", "a function of w")
    compare(fn, _fixed_loss, [1.3, 0.4, -0.7], "fixed_loss")


DATA_05B = np.array([2.0, 0.0, 0.5, 3.0])


def _finite_loss(w):
    z = w * DATA_05B
    squashed = np.where(z > 1, np.log(np.where(z > 1, z, 1.0)), z - 1)
    return np.mean(squashed ** 2)


@exercise(EXERCISES, "05b-born-in")
def born_in(born_in):
    """05b, part 1: the op that ``explain`` says the NaN is born in."""
    name = required(born_in, "born_in", "the op's name as a string, such as \"np.exp\"")
    if not isinstance(name, str):
        raise NotYet(f"`born_in` should be a string such as \"np.exp\", not a "
                     f"{type(name).__name__}")
    if name.strip().replace("numpy.", "np.").removeprefix("np.") != "log":
        raise NotYet(f"explain names another op than {name!r}: run tape.explain(loss, w) "
                     "and read the line that says where the NaN was born")


@exercise(EXERCISES, "05b-fixed-loss")
def finite_loss(fixed_loss):
    """05b, part 2: the same loss as ``loss_fn``, with a finite gradient."""
    fn = required(fixed_loss, "fixed_loss", "a function of w")
    compare(fn, _finite_loss, [0.7, 1.0, 1.6], "fixed_loss")


@exercise(EXERCISES, "06-round-ste", draw=a_seed)
def round_ste(round_ste, *, seed=6):
    """06: rounds forward, passes the arriving gradient back unchanged (on inputs drawn
    from ``seed``)."""
    fn = required(round_ste, "round_ste", "a function decorated with @nt.custom_gradient")
    rng = np.random.default_rng(seed)
    for shape in [(4,), (2, 3)]:
        x = np.round(rng.uniform(-3, 3, shape), 2)
        weights = rng.standard_normal(shape)

        def loss(v):
            return np.sum(weights * fn(v))

        rounded = fn(nt.constant(x))
        got = np.asarray(getattr(rounded, "numpy", lambda: rounded)())
        if got.shape != x.shape or not np.array_equal(got, np.round(x)):
            raise NotYet(f"round_ste of an array of shape {shape} does not give "
                         "np.round's values")
        value, grads, tape, variables = record(loss, x)
        g = grads[0]
        if g is None:
            raise NotYet("no gradient reaches the input of round_ste: "
                         + story(tape, value, variables[0]))
        g = np.asarray(g.numpy())
        if np.allclose(g, 0):
            raise NotYet("the gradient through round_ste is zero, np.round's own: the "
                         "custom gradient should pass dy back instead")
        if not np.allclose(g, weights):
            raise NotYet(f"for loss = sum(weights * round_ste(x)) with x of shape {shape}, "
                         "the gradient is not the arriving dy (the weights): "
                         f"{entries(g, weights)} differ")


POINTS_06B = np.array([-3.0, -0.4, 0.0, 0.7, 2.5])


@exercise(EXERCISES, "06b-log-cosh")
def log_cosh_rule(log_cosh):
    """06b: ``log_cosh`` (a ``primitive``) has the derivative tanh, in reverse and forward mode."""
    fn = required(log_cosh, "log_cosh", "the primitive log_cosh, given its derivative")
    x = nt.Variable(POINTS_06B)
    try:
        with nt.GradientTape() as tape:
            value = fn(x)
        g = tape.gradient(value, x)
    except nt.NoGradientRuleError:
        raise NotYet("log_cosh has no gradient rule yet: give it its derivative with "
                     "defderiv(log_cosh, ...)") from None
    except Exception as error:              # the learner's rule: say what it raised
        raise NotYet(f"the gradient of log_cosh raised {type(error).__name__}: "
                     f"{error}") from None
    got_value = np.asarray(value.numpy(), dtype=float)
    if not np.allclose(got_value, np.logaddexp(POINTS_06B, -POINTS_06B) - np.log(2.0)):
        raise NotYet("log_cosh no longer computes log(cosh(x)): keep the function as "
                     "given and only add its rule")
    if g is None:
        raise NotYet("no gradient reaches x through log_cosh: " + story(tape, value, x))
    got = np.asarray(g.numpy(), dtype=float)
    fd = np.array([central_difference(lambda v: np.logaddexp(v, -v), p)
                   for p in POINTS_06B])
    if np.allclose(got, fd, atol=1e-6):
        return
    if np.allclose(got, -fd, atol=1e-6):
        raise NotYet("the gradient of log_cosh has the wrong sign everywhere: log cosh x "
                     "rises for x > 0")
    if np.allclose(got, 1 - fd ** 2, atol=1e-6):
        raise NotYet("your rule gives the second derivative of log cosh x (the derivative "
                     "of its derivative): give the first")
    ans = got_value
    if np.allclose(got, np.tanh(ans), atol=1e-6):
        raise NotYet("your rule applies the derivative to `ans` (log cosh x, the output): "
                     "the derivative is a function of the input x")
    raise NotYet(f"the gradient of log_cosh at x = {_show_list(POINTS_06B)} differs from "
                 f"central finite differences at {entries(got, fd, atol=1e-6)}")


def _show_list(values):
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"
