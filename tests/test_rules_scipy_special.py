"""nbtape/rules/scipy_special.py: scipy.special's ufuncs against central differences in
reverse and forward mode (float64, random shapes, broadcasting between two arguments),
to second order for a few, refusals for their orders, and loaded only when needed.

Skipped where scipy is not installed.
"""
import subprocess
import sys

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

import nbtape as nt                                                   # noqa: E402
from gradcheck import check_both, check_second, rule_case_tests       # noqa: E402
from nbtape.diagnostics.errors import NoGradientRuleError             # noqa: E402
from nbtape.rules import load_late                                    # noqa: E402

load_late(force=True)
from nbtape.rules import scipy_special                                # noqa: E402


def _shape(rng):
    return tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 3)))


def unary(f, lo, hi):
    def make(rng):
        return [(f, rng.uniform(lo, hi, _shape(rng))), (f, rng.uniform(lo, hi, (3, 2)))]
    return make


def binary(f, lo, hi):
    """Two differentiable arguments, one broadcast against the other."""
    def make(rng):
        return [(f, rng.uniform(lo, hi, (3, 2)), rng.uniform(lo, hi, (2,))),
                (f, rng.uniform(lo, hi, _shape(rng)), rng.uniform(lo, hi, (1,)))]
    return make


def in_x(f, orders, lo, hi):
    """``f(order, x)``: differentiable in x only (the order is a plain value)."""
    def make(rng):
        return [(lambda x, n=n: f(n, x), rng.uniform(lo, hi, (3, 2))) for n in orders] + \
            [(lambda x: f(np.array([orders[0], orders[-1]]), x), rng.uniform(lo, hi, (3, 2)))]
    return make


def name(f):
    return f"scipy.special.{f.__name__.lstrip('_')}"


CASES = {name(f): make for f, make in [
    (sc.gamma, unary(sc.gamma, 0.2, 4.0)), (sc.gammaln, unary(sc.gammaln, 0.2, 6.0)),
    (sc.digamma, unary(sc.digamma, 0.3, 6.0)), (sc.rgamma, unary(sc.rgamma, -2.5, 4.0)),
    (sc._ufuncs._zeta, in_x(sc.zeta, [2.0, 3.5], 0.5, 5.0)),
    (sc.beta, binary(sc.beta, 0.3, 3.0)), (sc.betaln, binary(sc.betaln, 0.3, 3.0)),
    (sc.gammainc, in_x(sc.gammainc, [0.5, 2.0, 3.5], 0.2, 5.0)),
    (sc.gammaincc, in_x(sc.gammaincc, [0.5, 2.0, 3.5], 0.2, 5.0)),
    (sc.erf, unary(sc.erf, -2.5, 2.5)), (sc.erfc, unary(sc.erfc, -2.5, 2.5)),
    (sc.erfinv, unary(sc.erfinv, -0.9, 0.9)), (sc.erfcinv, unary(sc.erfcinv, 0.1, 1.9)),
    (sc.expit, unary(sc.expit, -6.0, 6.0)), (sc.logit, unary(sc.logit, 0.05, 0.95)),
    (sc.ndtr, unary(sc.ndtr, -3.0, 3.0)), (sc.ndtri, unary(sc.ndtri, 0.05, 0.95)),
    (sc.log_ndtr, unary(sc.log_ndtr, -20.0, 5.0)),
    (sc.i0, unary(sc.i0, -4.0, 4.0)), (sc.i1, unary(sc.i1, -4.0, 4.0)),
    (sc.iv, in_x(sc.iv, [0.0, 1.5, 3.0], 0.2, 4.0)),
    (sc.ive, in_x(sc.ive, [0.0, 1.5, 3.0], 0.2, 4.0)),
    (sc.j0, unary(sc.j0, -8.0, 8.0)), (sc.j1, unary(sc.j1, -8.0, 8.0)),
    (sc.jv, in_x(sc.jv, [0.0, 1.5, 3.0], 0.2, 8.0)),
    (sc.y0, unary(sc.y0, 0.3, 8.0)), (sc.y1, unary(sc.y1, 0.3, 8.0)),
    (sc.yv, in_x(sc.yv, [0.0, 1.5, 3.0], 0.3, 8.0)),
]}


def _check(f, *args):
    check_both(f, *args, rtol=1e-5, atol=1e-7)


test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(scipy_special, CASES, _check)


@pytest.mark.parametrize("f", [sc.gamma, sc.erf, sc.log_ndtr, lambda x: sc.jv(1.5, x),
                               lambda x: sc.zeta(2.0, x)])
def test_second_derivatives(f, rng):
    check_second(f, rng.uniform(0.5, 3.0, (3,)))


@pytest.mark.parametrize("f, args", [(sc.zeta, (3.0, 2.0)), (sc.jv, (1.0, 2.0)),
                                     (sc.gammainc, (1.5, 2.0)), (sc.iv, (1.0, 2.0))])
def test_an_order_or_shape_argument_raises_by_name(f, args):
    order = nt.constant(args[0])
    with nt.GradientTape() as tape:
        tape.watch(order)
        y = f(order, args[1])
    with pytest.raises(NoGradientRuleError, match=f"scipy.special.{f.__name__}"):
        tape.gradient(y, order)
    with nt.ForwardAccumulator(order, 1.0) as acc:
        y = f(order, args[1])
    with pytest.raises(NoGradientRuleError, match=f"scipy.special.{f.__name__}"):
        acc.jvp(y)


def test_psi_is_digamma_and_every_autograd_function_is_listed():
    assert sc.psi is sc.digamma
    listed = {r.name for r in nt.coverage() if r.name.startswith("scipy.special.")}
    # (digamma is psi: one ufunc, listed by its own name)
    assert listed == {f"scipy.special.{n}" for n in scipy_special.DIFFERENTIATED if n != "digamma"}
    assert all(nt.coverage()[n].status == "differentiable" for n in listed)


def test_importing_nbtape_does_not_import_scipy():
    code = "import sys, nbtape; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    assert out.stdout.strip() == "False"


def _grad_and_jvp(f, x):
    xt = nt.constant(x)
    with nt.GradientTape() as tape:
        tape.watch(xt)
        y = np.sum(f(xt))
    with nt.ForwardAccumulator(xt, np.ones_like(x)) as acc:
        z = f(xt)
    return tape.gradient(y, xt).numpy(), acc.jvp(z).numpy()


def test_rgamma_at_the_poles_of_gamma_takes_the_limit():
    # 1/gamma(x) is entire: at x = -n its derivative is (-1)**n n!, not 0 * digamma's pole
    poles = np.array([0.0, -1.0, -2.0, -3.0])
    grad, jvp = _grad_and_jvp(sc.rgamma, poles)
    closed = np.array([1.0, -1.0, 2.0, -6.0])
    np.testing.assert_allclose(grad, closed, rtol=1e-12)
    np.testing.assert_allclose(jvp, closed, rtol=1e-12)
    h = 1e-6
    np.testing.assert_allclose((sc.rgamma(poles + h) - sc.rgamma(poles - h)) / (2 * h),
                               closed, rtol=1e-6)
    # and the second derivative there and around it (reflection formula, both sides of 0)
    check_second(sc.rgamma, np.array([0.0, -1.0, -2.0, -0.5, 0.7, 2.5]), rtol=1e-4)


def test_gammainc_at_a_1_and_x_0_is_the_density_1():
    # gammainc(1, x) = 1 - exp(-x): derivative 1 at 0 (the formula was 0 * log(0) there)
    grad, jvp = _grad_and_jvp(lambda x: sc.gammainc(1.0, x), np.array([0.0, 0.5]))
    np.testing.assert_allclose(grad, np.exp(-np.array([0.0, 0.5])), rtol=1e-12)
    np.testing.assert_allclose(jvp, grad, rtol=1e-12)
    grad, _ = _grad_and_jvp(lambda x: sc.gammaincc(1.0, x), np.array([0.0]))
    np.testing.assert_allclose(grad, [-1.0], rtol=1e-12)
