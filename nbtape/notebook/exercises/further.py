"""The checks of 05c, 07b, 10 and 15, and their "predict, then run" questions.

05c: a softmax that cannot overflow (run under ``nt.check_numerics``); 07b: a JVP by
hand, checked against ``nt.ForwardAccumulator`` with nbtape's autodiff switched off;
10: the checkpoint segment for a chain and a memory budget, and a predicted count of
layer calls; 15: a step whose noise is passed in, so that ``nt.function`` can trace it.  Like the others, each check says what is wrong, never the answer.
"""
import math
import warnings

import numpy as np

import nbtape as nt

from .feedback import (NotYet, a_seed, array, as_number, entries, exercise, required,
                       switched_off)

EXERCISES = {}


def _function(value, name, what):
    fn = required(value, name, what)
    if not callable(fn):
        raise NotYet(f"`{name}` should be a function, not a {type(fn).__name__}")
    return fn


def _called(fn, name, *args):
    """``fn(*args)``; whatever it raises (but ``NotYet``) is said as ``NotYet``."""
    try:
        out = fn(*args)
    except NotYet:
        raise
    except Exception as error:              # the learner's code: say what it raised
        raise NotYet(f"{name} raised {type(error).__name__}: {error}") from None
    if out is None:
        raise NotYet(f"{name} returns None: make it return the result")
    return out


# 05c ---------------------------------------------------------------------------------------
_LOGITS_05C = [np.array([1000.0, 1001.0, 1002.0]), np.array([-1000.0, 0.0, 5.0]),
               np.array([3.0, -2.0, 0.5, 700.0])]


def _softmax(z):
    shifted = np.exp(z - np.max(z))
    return shifted / shifted.sum()


@exercise(EXERCISES, "05c-stable-softmax")
def stable_softmax(softmax):
    """05c: ``softmax(z)`` gives probabilities and finite gradients for any logits."""
    fn = _function(softmax, "softmax", "a function of the logits z")
    for z in _LOGITS_05C:
        at = np.array2string(z, precision=0)
        x = nt.Variable(z)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                with nt.check_numerics(), nt.GradientTape() as tape:
                    p = fn(x)
                    if p is None:
                        raise NotYet("softmax returns None: make it return the "
                                     "probabilities")
                    loss = -np.log(p[-1])
                grad = tape.gradient(loss, x)
        except NotYet:
            raise
        except FloatingPointError as error:     # check_numerics stopped at a NaN or an inf
            raise NotYet(f"for the logits {at} your softmax makes a value that is not "
                         f"finite ({str(error).split('.')[0]}): subtract the largest "
                         "logit before taking exponentials") from None
        except Exception as error:          # the learner's code: say what it raised
            raise NotYet(f"softmax raised {type(error).__name__}: {error}") from None
        got = array(p, f"softmax({at})", z.shape)
        want = _softmax(z)
        if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
            if np.allclose(np.sum(got), 1.0):
                raise NotYet(f"softmax({at}) sums to 1 but {entries(got, want)} differ from "
                             "e^z / sum(e^z): subtract the same number from every logit")
            raise NotYet(f"softmax({at}) does not sum to 1: divide by the sum of the "
                         "exponentials")
        if grad is None:
            raise NotYet(f"no gradient reaches the logits {at}: keep the computation on "
                         "the tape (no float(), no np.asarray())")
        if not np.allclose(grad.numpy(), want - np.eye(len(z))[-1], atol=1e-9):
            raise NotYet(f"the gradient of -log(softmax(z)[-1]) at {at} is not p - e_last: "
                         "is the largest logit subtracted as a number of its own "
                         "(with a gradient), as np.max gives it?")


# 07b ---------------------------------------------------------------------------------------
_POINTS_07B = [(2.0, 5.0, 1.0, 0.0), (0.7, -1.3, 0.4, 2.0), (3.1, 0.2, -1.5, 0.8)]


def _draw07b(rng):
    """A course's own points and directions for 07b (x1 > 0: f takes ln x1)."""
    low, high = [0.3, -2.0, -2.0, -2.0], [3.5, 2.0, 2.0, 2.0]
    return {"points": np.round(rng.uniform(low, high, (3, 4)), 1).tolist()}


def _no_autodiff():
    return [(nt, name, f"nt.{name}") for name in
            ("GradientTape", "ForwardAccumulator", "grad", "value_and_grad", "jacobian",
             "hessian")]


@exercise(EXERCISES, "07b-jvp-by-hand", draw=_draw07b)
def jvp_by_hand(jvp, *, points=_POINTS_07B):
    """07b: ``jvp(x1, x2, t1, t2)``, the tangent of f = ln x1 + x1 x2 - sin x2 carried by
    hand, against ``nt.ForwardAccumulator``, at the check's ``points`` and directions."""
    fn = _function(jvp, "jvp", "a function of (x1, x2, t1, t2)")
    for x1, x2, t1, t2 in points:
        with switched_off(_no_autodiff(), "jvp calls {name}: the exercise asks for the "
                          "tangents carried by hand, one forward rule per op"):
            got = as_number(_called(fn, f"jvp({x1}, {x2}, {t1}, {t2})", x1, x2, t1, t2),
                            f"jvp({x1}, {x2}, {t1}, {t2})")
        primals = [nt.Variable(x1), nt.Variable(x2)]
        with nt.ForwardAccumulator(primals, [np.float64(t1), np.float64(t2)]) as acc:
            f = np.log(primals[0]) + primals[0] * primals[1] - np.sin(primals[1])
        want = float(acc.jvp(f))
        if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
            continue
        at = f"at x = ({x1}, {x2}) along ({t1}, {t2})"
        for term, value in [("the tangent of ln x1 (t1 / x1)", t1 / x1),
                            ("the tangent of x1 x2 (t1 x2 + x1 t2)", t1 * x2 + x1 * t2),
                            ("the tangent of sin x2 (cos(x2) t2)", math.cos(x2) * t2)]:
            if value and math.isclose(got, want - value, rel_tol=1e-9, abs_tol=1e-12):
                raise NotYet(f"{at} jvp misses {term}")
        if math.isclose(got, want + 2 * math.cos(x2) * t2, rel_tol=1e-9):
            raise NotYet(f"{at} the tangent of - sin x2 has the wrong sign")
        raise NotYet(f"{at} jvp gives {got:.6g}, and the ForwardAccumulator another value: "
                     "carry one tangent per op, each by the op's forward rule")


@exercise(EXERCISES, "07b-predict-passes")
def predict_passes(passes):
    """07b, predict then run: (forward passes, reverse passes) for the gradient of one loss
    of 1000 inputs."""
    got = array(required(passes, "passes", "(forward passes, reverse passes)"), "passes",
                (2,))
    if np.allclose(got, [1000, 1]):
        return
    if np.allclose(got, [1, 1000]):
        raise NotYet("the two are swapped: forward mode carries one input direction per "
                     "pass, reverse mode one output")
    raise NotYet("a forward pass gives the derivative along one input direction, "
                 "a reverse pass the gradient of one output; run gradient_forward and "
                 "count its passes")


# 10 ----------------------------------------------------------------------------------------
def _peak(length, segment):
    """Notebook 10's model of checkpointing: the segments' inputs, plus one segment's
    activations while it is recomputed."""
    return math.ceil(length / segment) + segment


_CASES_10 = [(400, 40), (400, 45), (100, 25), (1000, 63), (1000, 70), (50, 14), (400, 39),
             (7, 6)]


def _smallest_peak(length):
    return min(_peak(length, s) for s in range(1, length + 1))


def _draw10(rng):
    """A course's own eight cases for 10: memory to spare, just enough, and too little."""
    cases = []
    for spare in [6, 3, 1, 0, 0, -1, -2, -4]:
        length = int(rng.integers(5, 1200))
        cases.append([length, _smallest_peak(length) + spare])
    order = rng.permutation(len(cases))
    return {"cases": [cases[i] for i in order]}


@exercise(EXERCISES, "10-checkpoint-segment", draw=_draw10)
def checkpoint_segment(segment, *, cases=_CASES_10):
    """10: ``segment(length, memory)``: a segment length whose peak fits the memory (the
    fewest arrays when several fit), or None when none fits, for each of ``cases``."""
    fn = _function(segment, "segment", "a function of (length, memory)")
    for length, memory in cases:
        best = min(range(1, length + 1), key=lambda s: (_peak(length, s), s))
        fits = _peak(length, best) <= memory
        try:
            got = fn(length, memory)
        except Exception as error:          # the learner's code: say what it raised
            raise NotYet(f"segment raised {type(error).__name__}: {error}") from None
        case = f"for {length} layers and memory for {memory} arrays"
        if not fits:
            if got is not None:
                raise NotYet(f"{case} no segment fits (the smallest peak is "
                             f"{_peak(length, best)} arrays): return None")
            continue
        if got is None:
            raise NotYet(f"{case} a segment fits: return its length, not None")
        if not isinstance(got, (int, np.integer)) or not 1 <= got <= length:
            raise NotYet(f"{case} segment returns {got!r}: a whole number of layers from 1 "
                         f"to {length}")
        if _peak(length, int(got)) > memory:
            raise NotYet(f"{case} segments of {got} keep {_peak(length, int(got))} arrays at "
                         "the peak (one input per segment, plus one segment's activations): "
                         "more than the memory")
        if _peak(length, int(got)) > _peak(length, best):
            raise NotYet(f"{case} segments of {got} fit, but another length keeps fewer "
                         "arrays at the peak: about the square root of the length")


@exercise(EXERCISES, "10-predict-calls")
def predict_calls(calls):
    """10, predict then run: how often ``layer`` runs for 400 layers in segments of 20,
    forward and backward together."""
    got = as_number(required(calls, "calls", "a whole number"), "calls")
    if got == 800:
        return
    if got == 400:
        raise NotYet("that is the forward pass alone: the backward pass runs each segment "
                     "again")
    if got == 420 or got == 20:
        raise NotYet("each segment is recomputed whole, not one layer of it")
    raise NotYet("count the forward pass, then what the backward pass recomputes; "
                 "then run the cell with layer_calls and compare")


# 15 ----------------------------------------------------------------------------------------
_SHAPES_15 = [(4,), (4,), (4,)]


@exercise(EXERCISES, "15-traceable-step", draw=a_seed)
def traceable_step(noisy_loss, *, seed=15):
    """15: ``noisy_loss(x, noise)`` = sum((x + 0.1 noise) ** 2) with the noise passed in:
    traced once by ``nt.function`` for one signature, and every call uses its own noise."""
    fn = _function(noisy_loss, "noisy_loss", "a function of (x, noise)")
    traced = nt.function(getattr(fn, "python_function", None) or fn)
    rng = np.random.default_rng(seed)
    for shape in _SHAPES_15:
        x, noise = rng.normal(size=shape), rng.normal(size=shape)
        v = nt.Variable(x)
        try:
            got = traced(x, noise)          # (under a tape, nt.function runs eagerly)
            if got is None:
                raise NotYet("noisy_loss returns None: make it return the loss")
            with nt.GradientTape() as tape:
                grad = tape.gradient(fn(v, noise), v)
        except NotYet:
            raise
        except TypeError as error:
            raise NotYet(f"noisy_loss(x, noise) raised TypeError: {error}: it takes the "
                         "noise as its second argument") from None
        except Exception as error:          # a trace refused, or the learner's code
            said = " ".join(str(error).split())
            raise NotYet(f"nt.function cannot trace noisy_loss ({type(error).__name__}: "
                         f"{said[:160]}...): draw the noise outside the step and pass it "
                         "in") from None
        value = as_number(got, "noisy_loss(x, noise)")
        want = float(np.sum((x + 0.1 * noise) ** 2))
        if not math.isclose(value, want, rel_tol=1e-9):
            raise NotYet("noisy_loss(x, noise) is not sum((x + 0.1 * noise) ** 2) for the "
                         "noise it is given: does it use its noise argument, at every call?")
        if grad is None or not np.allclose(grad.numpy(), 2 * (x + 0.1 * noise)):
            raise NotYet("the gradient of noisy_loss with respect to x is not the loss's: "
                         "does the result keep its path to x?")
    if traced.trace_count != 1:
        raise NotYet(f"nt.function traced noisy_loss {traced.trace_count} times for one "
                     "input signature: something in it changes from call to call")
