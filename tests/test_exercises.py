"""nt.exercises: each check passes the right answer, and says what is wrong with a wrong one.

For every exercise: a right answer is "correct"; each typical wrong answer (nothing, the
wrong shape, a sign, a tape that lost the gradient, a missing ``watch``, an escape
through ``float``) gets its own sentence, and no sentence holds the answer.  The
course module (nbgrader layout) is tested in ``test_exercises_course.py``.
"""
import contextlib
import io
import math

import numpy as np
import pytest

import nbtape as nt
from nbtape.notebook.exercises import Feedback, check, exercises, feedback
from nbtape.extend import defderiv, primitive
from nbtape.notebook.exercises.feedback import compare, first_difference, NotYet
from gradcheck import no_rules_left_behind


@pytest.fixture(autouse=True)
def _forget_the_rules_a_test_gives():
    # an answer (06b's log_cosh) registers a rule of its own: leave none behind
    with no_rules_left_behind():
        yield



# notebook 02's engine, small: enough for value_exp's check --------------------------------
class Value:
    def __init__(self, data, parents=(), backward_rule=None):
        self.data, self.grad, self.parents, self.backward_rule = float(data), 0.0, parents, backward_rule

    def __mul__(self, other):
        return Value(self.data * other.data, (self, other),
                     lambda g: (g * other.data, g * self.data))


def backward(root):
    order, seen = [], set()

    def visit(v):
        if id(v) not in seen:
            seen.add(id(v))
            for p in v.parents:
                visit(p)
            order.append(v)
    visit(root)
    for v in order:
        v.grad = 0.0
    root.grad = 1.0
    for v in reversed(order):
        if v.backward_rule is not None:
            for p, g in zip(v.parents, v.backward_rule(v.grad)):
                p.grad += g


def _exp_right(v):
    e = math.exp(v.data)
    return Value(e, (v,), lambda g: (g * e,))


def _exp_wrong_rule(v):
    e = math.exp(v.data)
    return Value(e, (v,), lambda g: (g,))


def _exp_no_parent(v):
    return Value(math.exp(v.data))


# references and wrong answers ----------------------------------------------------------------
_DATA = np.array([1.0, 2.0, 3.0])


def _fixed(w):
    return np.mean((w * _DATA + 0.5 - 2 * _DATA) ** 2)


def _escapes(w):
    shifted = w * _DATA + 0.5
    return np.mean((nt.constant(np.array([float(p) for p in shifted])) - 2 * _DATA) ** 2)


_DATA_NAN = np.array([2.0, 0.0, 0.5, 3.0])


def _nan_loss(w):
    z = w * _DATA_NAN
    return np.mean(np.where(z > 1, np.log(z), z - 1) ** 2)


def _finite(w):
    z = w * _DATA_NAN
    return np.mean(np.where(z > 1, np.log(np.where(z > 1, z, 1.0)), z - 1) ** 2)


@nt.custom_gradient
def _ste(x):
    return np.round(x), lambda dy: dy


@nt.custom_gradient
def _ste_zero(x):
    return np.round(x), lambda dy: dy * 0.0


def _hdiag(f, w):
    def hvp(v):
        with nt.ForwardAccumulator(w, v) as acc:
            with nt.GradientTape() as tape:
                tape.watch(w)
                value = f(w)
            grad = tape.gradient(value, w)
        return acc.jvp(grad).numpy()
    return np.array([hvp(np.eye(len(w))[i])[i] for i in range(len(w))])


def _hdiag_cheat(f, w):
    return np.diag(nt.hessian(f)(np.asarray(w)))


def _hdiag_tape_jacobian(f, w):
    with nt.GradientTape() as outer:
        outer.watch(w)
        with nt.GradientTape() as inner:
            inner.watch(w)
            value = f(w)
        grad = inner.gradient(value, w)
    return np.diag(outer.jacobian(grad, w).numpy())


def _dg(x, y):
    return (y * 1.0 + np.exp(x) * y * 1.0, x * 1.0 + np.exp(x) * 1.0)


def _dg_by_tape(x, y):
    x, y = nt.Variable(x), nt.Variable(y)
    with nt.GradientTape() as tape:
        g = x * y + np.exp(x) * y
    return [float(v) for v in tape.gradient(g, [x, y])]


def _softsign_derivative(x):
    return 1 / (1 + np.abs(x)) ** 2


def _fit_by_descent(x, y):
    a, b, c = (nt.Variable(0.0) for _ in "abc")
    optimizer = nt.optimizers.SGD(learning_rate=0.05)
    for _ in range(500):
        with nt.GradientTape() as tape:
            loss = nt.losses.mean_squared_error(y, a * x ** 2 + b * x + c)
        optimizer.apply_gradients(zip(tape.gradient(loss, [a, b, c]), [a, b, c]))
    return tuple(float(v.numpy()) for v in (a, b, c))


def _orders(norms):
    return float(np.log10(norms[0] / norms[-1]))


def _softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def _jvp(x1, x2, t1, t2):
    return t1 / x1 + (t1 * x2 + x1 * t2) - np.cos(x2) * t2


def _jvp_by_accumulator(x1, x2, t1, t2):
    p = [nt.Variable(x1), nt.Variable(x2)]
    with nt.ForwardAccumulator(p, [t1, t2]) as acc:
        f = np.log(p[0]) + p[0] * p[1] - np.sin(p[1])
    return float(acc.jvp(f))


def _segment(length, memory):
    peaks = {s: math.ceil(length / s) + s for s in range(1, length + 1)}
    best = min(peaks, key=lambda s: (peaks[s], s))
    return best if peaks[best] <= memory else None


def _segment_never_none(length, memory):
    return math.isqrt(length)


def _noisy_loss(x, noise):
    return np.sum((x + 0.1 * noise) ** 2)


def _noisy_inside(x, noise):                 # draws its own noise: no trace
    return np.sum((x + 0.1 * np.random.normal(size=x.shape)) ** 2)


def _clip(grads, limit):
    norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
    return [g * min(1.0, limit / norm) for g in grads]


def _clip_always(grads, limit):
    norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
    return [g * (limit / norm) for g in grads]


def _clip_each(grads, limit):
    return [g * min(1.0, limit / np.linalg.norm(g)) for g in grads]


def _disc(watch):
    r = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        if watch:
            tape.watch(r)
        area = np.pi * r ** 2
    return tape, area, r


# 03b's g_scores, 04b's kink, 06b's primitive with its rule (right and wrong) -----------------
def _g_scores():
    rng = np.random.default_rng(1)
    x = nt.constant(rng.standard_normal((5, 3)))
    W = nt.Variable(rng.standard_normal((3, 2)))
    b = nt.Variable([0.1, -0.2])
    with nt.GradientTape() as tape:
        loss = np.sum(np.tanh(x @ W + b) ** 2)
    return tape.gradient(loss, [b])[0].numpy(), _scores_grad(x, W, b)


def _scores_grad(x, W, b):
    with nt.GradientTape() as tape:
        scores = x @ W + b
        loss = np.sum(np.tanh(scores) ** 2)
    return tape.gradient(loss, scores).numpy()


_GB, _GS = _g_scores()


class _LogCosh(tuple):
    """06b's wrong answers: the primitive is made (its rule registered) inside the test,
    not at import, so the test's fixture forgets it afterwards."""

    def __new__(cls, derivative=None):
        made = super().__new__(cls)
        made.derivative = derivative
        return made

    def args(self):
        return (_log_cosh(self.derivative),)


def _log_cosh(derivative=None):
    """A fresh 06b primitive, given ``derivative`` (``d(ans, x)``) with defderiv when not None."""
    @primitive
    def log_cosh(x):
        return np.logaddexp(x, -x) - np.log(2.0)
    if derivative is not None:
        defderiv(log_cosh, derivative)
    return log_cosh


_H = 1e-5
_ERROR01 = abs(((2 + _H) ** 3 - (2 - _H) ** 3) / (2 * _H) - 12.0)
def _norms(activation, scale):
    """Notebook 13's stack, written out here as the notebook has it (seeds included)."""
    x = np.random.default_rng(1).standard_normal((32, 64))
    rng = np.random.default_rng(0)
    ws = [nt.Variable(rng.standard_normal((64, 64)) * np.sqrt(scale / 64)) for _ in range(20)]
    with nt.GradientTape() as tape:
        h = x
        for w in ws:
            h = activation(h @ w)
        loss = np.mean(h ** 2)
    return np.array([np.linalg.norm(g.numpy()) for g in tape.gradient(loss, ws)])


RIGHT = {
    "01-finite-difference": lambda: (_ERROR01,),
    "02-value-exp": lambda: (_exp_right, Value, backward),
    "03-gradient": lambda: (nt.constant([-1.0, 2.0, 8.0]),),
    "03b-bias-gradient": lambda: (np.sum(_GS, axis=0),),
    "04-third-derivative": lambda: (8 * np.exp(0.6),),
    "04b-hinge-kink": lambda: (np.array([0.0, -0.5, -1.0]),),
    "05-fixed-loss": lambda: (_fixed,),
    "05b-born-in": lambda: ("np.log",),
    "05b-fixed-loss": lambda: (_finite,),
    "06-round-ste": lambda: (_ste,),
    "06b-log-cosh": lambda: (_log_cosh(lambda ans, x: np.tanh(x)),),
    "07-chain-paths": lambda: (_dg,),
    "08-hessian-diagonal": lambda: (_hdiag,),
    "09-buggy": lambda: ("softsign", _softsign_derivative),
    "11-quadratic-fit": lambda: (_fit_by_descent,),
    "12-clip-global": lambda: (_clip,),
    "13-tanh-norms": lambda: (_norms(np.tanh, 1.0),),
    "13-closer-to": lambda: ("relu", _orders(_norms(np.tanh, 1.0))),
    "03c-tape-magic": lambda: (6 * np.pi,) + _disc(True),
    "05c-stable-softmax": lambda: (_softmax,),
    "07b-jvp-by-hand": lambda: (_jvp,),
    "07b-predict-passes": lambda: ((1000, 1),),
    "10-checkpoint-segment": lambda: (_segment,),
    "10-predict-calls": lambda: (800,),
    "15-traceable-step": lambda: (_noisy_loss,),
}

# (id, the wrong answer, words the feedback must hold, text it must not hold: the answer)
WRONG = [
    ("01-finite-difference", (None,), "is still None", None),
    ("01-finite-difference", (12.0,), "the derivative itself", None),
    ("01-finite-difference", (-_ERROR01,), "never negative", None),
    ("01-finite-difference", (1e-5,), "is h 1e-5", None),
    ("01-finite-difference", (1e-9,), "subtract the tape's exact", "2.1"),
    ("02-value-exp", (lambda v: 3.0, Value, backward), "return a new Value", None),
    ("02-value-exp", (_exp_no_parent, Value, backward), "among its parents", None),
    ("02-value-exp", (_exp_wrong_rule, Value, backward), "backward rule", None),
    ("03-gradient", ([1.0, 2.0],), "shape (2,); the exercise asks for shape (3,)", None),
    ("03-gradient", ([1.0, -2.0, -8.0],), "wrong sign", None),
    ("03-gradient", ([-0.5, 1.0, 4.0],), "half", None),
    ("03-gradient", ([-1.0, 2.0, 7.0],), "entry 2", "8"),
    # what the learner did, not what to do (issue 41): a tape that recorded another f,
    # and a None that tape.gradient returned
    ("03-gradient", ([1.0, 4.0, 10.0],), "the `- 1` inside f is missing", None),
    ("03-gradient", ([1.0, 1.0, 1.0],), "the square inside f is missing", None),
    ("03-gradient", ([-1 / 3, 2 / 3, 8 / 3],), "np.sum, not np.mean", None),
    ("03-gradient", ([0.0, 3.0, 9.0],), "your tape recorded another function", "8"),
    ("03-gradient", (None,), "tape.gradient(f, w) returned None", None),
    ("03b-bias-gradient", (None,), "is still None", None),
    ("03b-bias-gradient", (_GS,), "the shape of the scores", None),
    ("03b-bias-gradient", (np.sum(_GS, axis=1),), "not axis 1", None),
    ("03b-bias-gradient", (np.sum(_GS),), "is one number", None),
    ("03b-bias-gradient", (np.mean(_GS, axis=0),), "a fifth", f"{_GB[0]:.3}"),
    ("03b-bias-gradient", (-np.sum(_GS, axis=0),), "wrong sign", None),
    ("03b-bias-gradient", (_GS[0],), "one row of g_scores", None),
    ("03b-bias-gradient", (np.array([1.0, 2.0]),), "entries 0 and 1", f"{_GB[0]:.3}"),
    ("04b-hinge-kink", (None,), "is still None", None),
    ("04b-hinge-kink", ([0.0, -1.0],), "shape (2,); the exercise asks for shape (3,)", None),
    ("04b-hinge-kink", ([0.0, 0.0, 1.0],), "wrong sign", None),
    ("04b-hinge-kink", ([1.0, 0.0, 0.0],), "max(0, s - 1)", None),
    ("04b-hinge-kink", ([0.0, 0.0, -0.5],), "at s = 0.5", "-1"),
    ("04b-hinge-kink", ([0.0, 0.5, -1.0],), "not a subgradient", "-1"),
    ("04-third-derivative", (4 * np.exp(0.6),), "the second derivative", "14.5"),
    ("04-third-derivative", (3.0,), "not the third derivative", "14.5"),
    ("05-fixed-loss", (_escapes,), "left the tape through float()", None),
    ("05-fixed-loss", (lambda w: _fixed(w) * 2,), "not the value", None),
    ("05-fixed-loss", (lambda w: nt.stop_gradient(_fixed(w)),), "no gradient", None),
    ("05b-born-in", ("np.exp",), "another op than 'np.exp'", "log"),
    ("05b-born-in", (3,), "should be a string", None),
    ("05b-fixed-loss", (_nan_loss,), "not finite", None),
    ("06-round-ste", (np.round,), "is zero", None),
    ("06-round-ste", (_ste_zero,), "is zero", None),
    ("06-round-ste", (lambda x: x,), "np.round's values", None),
    ("06b-log-cosh", (None,), "is still None", None),
    ("06b-log-cosh", _LogCosh(), "no gradient rule yet", "tanh"),
    ("06b-log-cosh", _LogCosh(lambda ans, x: -np.tanh(x)), "wrong sign", "tanh"),
    ("06b-log-cosh", _LogCosh(lambda ans, x: 1 - np.tanh(x) ** 2), "second derivative",
     "tanh"),
    ("06b-log-cosh", _LogCosh(lambda ans, x: np.tanh(ans)), "function of the input x",
     "tanh"),
    ("06b-log-cosh", _LogCosh(lambda ans, x: x), "differs from central finite", "tanh"),
    ("07-chain-paths", (lambda x, y: (x + np.exp(x), y + np.exp(x) * y),), "swapped", None),
    ("07-chain-paths", (lambda x, y: (y, x + np.exp(x)),), "one path's product", None),
    ("07-chain-paths", (lambda x, y: (1.0, 2.0),), "dg_dx and dg_dy are off", None),
    ("07-chain-paths", (lambda x, y: (1.3 + np.exp(0.7) * 1.3, 0.7 + np.exp(0.7)),),
     "the picture's numbers", None),
    ("07-chain-paths", (_dg_by_tape,), "dg calls nt.GradientTape", None),
    ("07-chain-paths", ((4.0, 2.7),), "should be a function", None),
    ("08-hessian-diagonal", (_hdiag_cheat,), "calls nt.hessian", None),
    ("08-hessian-diagonal", (lambda f, w: np.diag(nt.jacobian(nt.grad(f))(w)),),
     "calls nt.jacobian", None),
    ("08-hessian-diagonal", (_hdiag_tape_jacobian,), "calls tape.jacobian", None),
    ("08-hessian-diagonal", (lambda f, w: np.zeros(5),), "of the diagonal are off", None),
    ("08-hessian-diagonal", (lambda f, w: np.zeros(4),), "shape (4,)", None),
    ("09-buggy", ("swish", None), "agrees with central finite differences", "softsign"),
    ("09-buggy", ("sin", None), "should be one of", None),
    ("09-buggy", ("softsign", None), "`derivative` is still None", None),
    ("09-buggy", ("softsign", lambda x: 1 / (1 + x ** 2)), "is the buggy one", None),
    ("09-buggy", ("softsign", lambda x: 1 / (1 + x) ** 2), "disagrees with a central", None),
    ("11-quadratic-fit", (lambda x, y: np.polyfit(x, y, 2),), "calls np.polyfit", None),
    ("11-quadratic-fit", (lambda x, y: np.linalg.lstsq(np.stack([x ** 2, x, x ** 0], 1), y)[0],),
     "calls np.linalg.lstsq", None),
    ("11-quadratic-fit", (lambda x, y: (0.5, -1.0, 1.0),), "its gradient there is", None),
    ("11-quadratic-fit", (lambda x, y: (1.0, 2.0),), "shape (2,)", None),
    ("11-quadratic-fit", ((0.5, -1.0, 1.0),), "should be a function", None),
    ("12-clip-global", (lambda g, n: g[:2],), "returns 2 arrays for 3", None),
    ("12-clip-global", (_clip_always,), "come back unchanged", None),
    ("12-clip-global", (_clip_each,), "different factors", None),
    ("12-clip-global", (lambda g, n: nt.clip_by_global_norm(g, n)[0],),
     "calls nt.clip_by_global_norm", None),
    ("12-clip-global", (lambda g, n: (x * 1.0 for x in g),), "is a generator: return a list",
     None),
    ("12-clip-global", (lambda g, n: map(np.copy, g),), "is a map: return a list", None),
    ("13-tanh-norms", (map(float, range(20)),), "is a map", None),
    ("13-tanh-norms", (np.ones(20),), "the way the cells above measure", "gradient_norms("),
    ("13-tanh-norms", (np.ones(19),), "shape (19,)", None),
    ("13-tanh-norms", (None,), "is still None", None),
    ("13-tanh-norms", (_norms(np.tanh, 1.0)[::-1],), "in reverse", None),
    ("13-tanh-norms", (_norms(np.tanh, 2.0),), "ReLU's weights", None),
    ("13-tanh-norms", (_norms(nt.nn.sigmoid, 1.0),), "sigmoid stack's norms", None),
    ("13-closer-to", ("sigmoid", _orders(_norms(np.tanh, 1.0))), "not that one", "relu\""),
    ("13-closer-to", ("tanh", _orders(_norms(np.tanh, 1.0))), "should be \"sigmoid\" or", None),
    ("13-closer-to", ("relu", None), "`tanh_orders` is still None", None),
    ("13-closer-to", ("relu", -_orders(_norms(np.tanh, 1.0))), "wrong sign", None),
    ("13-closer-to", ("relu", 1.0), "is not log10(first / last)", None),
    ("05c-stable-softmax", (lambda z: np.exp(z) / np.sum(np.exp(z)),), "subtract the largest",
     None),
    ("05c-stable-softmax", (lambda z: np.exp(z - np.max(z)),), "does not sum to 1", None),
    ("05c-stable-softmax", (lambda z: np.exp(z - 1000.0) / np.sum(np.exp(z - 1000.0)),),
     "not finite", None),
    ("05c-stable-softmax", (lambda z: nt.constant(_softmax(np.asarray(z))),),
     "no gradient reaches", None),
    ("05c-stable-softmax", (3.0,), "should be a function", None),
    ("07b-jvp-by-hand", (lambda x1, x2, t1, t2: t1 * x2 + x1 * t2 - np.cos(x2) * t2,),
     "misses the tangent of ln x1", None),
    ("07b-jvp-by-hand", (lambda x1, x2, t1, t2: t1 / x1 + t1 * x2 + x1 * t2 + np.cos(x2) * t2,),
     "wrong sign", None),
    ("07b-jvp-by-hand", (_jvp_by_accumulator,), "jvp calls nt.ForwardAccumulator", None),
    ("07b-jvp-by-hand", (lambda x1, x2, t1, t2: None,), "returns None", None),
    ("07b-predict-passes", ((1, 1000),), "swapped", None),
    ("07b-predict-passes", ((2, 2),), "along one input direction", "1000"),
    ("10-checkpoint-segment", (lambda n, m: 30,), "more than the memory", None),
    ("10-checkpoint-segment", (lambda n, m: 20,), "another length keeps fewer", None),
    ("10-checkpoint-segment", (lambda n, m: 1,), "more than the memory", None),
    ("10-checkpoint-segment", (lambda n, m: None,), "a segment fits", None),
    ("10-checkpoint-segment", (_segment_never_none,), "return None", None),
    ("10-checkpoint-segment", (lambda n, m: 20.0,), "a whole number", None),
    ("10-predict-calls", (400,), "forward pass alone", "800"),
    ("10-predict-calls", (7,), "count the forward pass", "800"),
    ("15-traceable-step", (_noisy_inside,), "draw the noise outside", None),
    ("15-traceable-step", (lambda x, noise: np.sum(x ** 2),), "use its noise argument", None),
    ("15-traceable-step", (lambda x: np.sum(x ** 2),), "second argument", None),
    ("03c-tape-magic", (None,) + _disc(False), "never watched", None),
    ("03c-tape-magic", (None,) + _disc(False), "recorded no ops where the reference", None),
    ("03c-tape-magic", (1.0,) + _disc(True), "not the gradient that the tape disc gives", "18.8"),
]


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_the_right_answer_passes(id):
    verdict = feedback(id, *RIGHT[id]())
    assert verdict.passed, verdict.message


@pytest.mark.parametrize("id", sorted(i for i, ex in exercises().items() if ex.draw))
def test_the_right_answer_passes_on_any_courses_data(id):
    """A course draws its own data for the checks that run a function (``variants``):
    the right answer passes on every course's, from ten seeds."""
    from nbtape.notebook.exercises.variants import draw_course
    for seed in range(10):
        verdict = feedback(id, *RIGHT[id](), **draw_course(seed)[id])
        assert verdict.passed, (seed, verdict.message)


def test_every_exercise_is_tested():
    assert sorted(RIGHT) == sorted(exercises())
    assert {w[0] for w in WRONG} == set(exercises())


@pytest.mark.parametrize("id, args, words, secret", WRONG,
                         ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG)])
def test_a_wrong_answer_says_what_is_wrong_and_not_the_answer(id, args, words, secret):
    verdict = feedback(id, *(args.args() if isinstance(args, _LogCosh) else args))
    assert not verdict.passed
    assert words in verdict.message, verdict.message
    if secret is not None:
        assert secret not in verdict.message, verdict.message


def test_check_prints_and_strict_raises():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check("03-gradient", [-1.0, 2.0, 8.0])
        check("03-gradient", None)
        with pytest.raises(AssertionError, match="03-gradient: not yet"):
            check("03-gradient", [0.0, 0.0, 0.0], strict=True)
        check("03-gradient", [-1.0, 2.0, 8.0], strict=True)
    lines = out.getvalue().splitlines()
    assert lines[0] == "correct" and lines[1].startswith("not yet: `answer` is None: either")
    assert lines[-1] == "correct"


def test_a_renumbered_tutorials_old_id_still_checks():
    # notebook 14 (the %%tape magic) became 3c: a copy saved before still checks, strictly too
    right = (6 * np.pi,) + _disc(True)
    assert feedback("14-tape-magic", *right).passed
    assert not feedback("14-tape-magic", *((1.0,) + _disc(True))).passed
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check("14-tape-magic", *right, strict=True)
    assert out.getvalue().splitlines()[-1] == "correct"


def test_an_unknown_exercise_names_the_known_ones():
    with pytest.raises(ValueError, match="there is no exercise '99-x'.*03-gradient"):
        feedback("99-x", 1)


def test_nt_exercises_is_the_package():
    assert nt.exercises.check is check
    assert str(Feedback(False, "why")) == "not yet: why"


def test_first_difference_names_the_op_and_the_escape():
    x = nt.Variable(2.0)
    with nt.GradientTape() as reference:
        y = np.sin(x) * x
    with nt.GradientTape() as mine:
        y = nt.constant(float(np.cos(x))) * x
    said = first_difference(mine, reference)
    assert "np.sin" in said and "float()" in said
    with nt.GradientTape() as same:
        y = np.sin(x) * x
    assert first_difference(same, reference) == ""
    with nt.GradientTape() as empty:
        pass
    assert "no ops" in first_difference(empty, reference)


def test_compare_gives_the_finite_difference_where_a_gradient_is_wrong():
    @nt.custom_gradient
    def wrong_square(x):
        return x * x, lambda dy: dy * x          # half the true gradient

    with pytest.raises(NotYet, match=r"the gradient of sq at 1.5 is 1.5; a central finite "
                                     r"difference of the loss there gives 3"):
        compare(wrong_square, lambda v: v * v, [1.5], "sq")
