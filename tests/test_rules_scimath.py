"""nbtape/rules/scimath.py: the np.emath functions (sqrt, log, log2, log10, logn,
power, arcsin, arccos, arctanh) against central differences in reverse and forward
mode, on real inputs both inside and outside their real domain (where the output goes
complex and the real input's gradient is the real part), on complex inputs away from
the branch cuts, and for logn and power in both arguments with broadcasting.

The rules checked are read from the registry: a rule added to scimath.py without a
case here fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np

import nbtape as nt
from gradcheck import broadcast_pair, gradients_of_sum, rule_case_tests
from nbtape.rules import scimath
from nbtape.core.registry import RULES

em = np.emath


def wide(rng, shape):
    """Both sides of 0 and of +-1, away from both."""
    return rng.choice([-1.0, 1.0], shape) * rng.choice([0.2, 1.0], shape) * \
        rng.uniform(1.3, 2.5, shape)


def right_half(rng, shape):
    """Complex values away from the cut of sqrt and log (the negative real axis)."""
    return rng.uniform(0.3, 1.5, shape) + 1j * rng.uniform(-1.0, 1.0, shape)


def off_axis(rng, shape):
    """Complex values away from the real axis (the cuts of arcsin, arccos, arctanh)."""
    return rng.uniform(-2.0, 2.0, shape) + 1j * rng.choice([-1.0, 1.0], shape) * \
        rng.uniform(0.3, 1.0, shape)


def unary(f, complex_domain):
    def make(rng):
        s1, s2 = broadcast_pair(rng)
        return [(f, wide(rng, s1)), (f, complex_domain(rng, s2)), (f, wide(rng, ()))]
    return make


def logn_cases(rng):
    sn, sx = broadcast_pair(rng)
    return [(em.logn, rng.uniform(1.5, 3.0, sn), wide(rng, sx)),
            (em.logn, rng.choice([-1.0, 1.0], sn) * rng.uniform(1.5, 3.0, sn), wide(rng, sx)),
            (em.logn, rng.uniform(0.2, 0.6, ()), right_half(rng, sx))]


def power_cases(rng):
    sx, sp = broadcast_pair(rng)
    return [(em.power, wide(rng, sx), rng.standard_normal(sp)),
            (em.power, rng.uniform(0.5, 2.0, sx), rng.standard_normal(sp)),
            (lambda x: em.power(x, 2.5), wide(rng, sx)),
            (em.power, right_half(rng, sx), rng.standard_normal(sp))]


CASES = {
    "np.emath.sqrt": unary(em.sqrt, right_half),
    "np.emath.log": unary(em.log, right_half),
    "np.emath.log2": unary(em.log2, right_half),
    "np.emath.log10": unary(em.log10, right_half),
    "np.emath.arcsin": unary(em.arcsin, off_axis),
    "np.emath.arccos": unary(em.arccos, off_axis),
    "np.emath.arctanh": unary(em.arctanh, off_axis),
    "np.emath.logn": logn_cases,
    "np.emath.power": power_cases,
}
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(scimath, CASES)


def test_a_real_input_with_a_complex_output_gets_the_real_part():
    # sqrt(x) = i sqrt(-x) for x < 0: d/dx = -i / (2 sqrt(-x)); Re(g * conj(f')) = 0 for g = 1
    g, = gradients_of_sum(em.sqrt, [-4.0, 4.0])
    np.testing.assert_allclose(g, [0.0, 0.25])
    x = nt.constant([-4.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.imag(em.sqrt(x))                            # sqrt(-x), falling with x
    g = tape.gradient(y, x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), [-0.25])


def test_arcsin_outside_its_real_domain_follows_numpy_s_branch():
    for x0 in (-1.7, 1.7):
        x = nt.constant(x0)
        with nt.ForwardAccumulator(x, 1.0) as acc:
            y = em.arcsin(x)
        h = 1e-7
        want = (em.arcsin(x0 + h) - em.arcsin(x0 - h)) / (2 * h)
        np.testing.assert_allclose(complex(acc.jvp(y)), want, rtol=1e-6)


def test_rules_carry_the_emath_names():
    for f in (em.sqrt, em.log, em.logn, em.power, em.arccos):
        assert RULES[f].name == "np.emath." + f.__name__
