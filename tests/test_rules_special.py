"""nbtape/rules/special.py: np.i0 and ``bessel_i1`` (its derivative, which numpy lacks)
against central differences in reverse and forward mode on both sides of the switch
between the power series and the large-argument expansion (|x| = 20), and to second
order; ``bessel_i1``'s values against scipy's and known answers.

The rules checked are read from the registry: a rule added to special.py without a
case here fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_second, gradients_of_sum, rule_case_tests
from nbtape.rules import special
from nbtape.core.registry import RULES


def spread(rng, shape):
    """Values from -30 to 30: the series below |x| = 20 and the expansion above."""
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.1, 30.0, shape)


def cases(f):
    def make(rng):
        shape = tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 3)))
        return [(f, spread(rng, shape)), (f, rng.standard_normal((3, 2))),
                (f, np.array([19.5, 20.5, -19.8, -20.2]))]
    return make


CASES = {"np.i0": cases(np.i0), "bessel_i1": cases(special.bessel_i1)}


def _check(f, *args):
    # large arguments: values near e^30, so the round-off of the differences is larger
    check_both(f, *args, rtol=1e-6, atol=1e-6 * float(np.max(np.abs(f(*args)))))


test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(special, CASES, _check)


@pytest.mark.parametrize("f", [np.i0, special.bessel_i1], ids=["i0", "bessel_i1"])
def test_second_order(f, rng):
    check_second(f, rng.uniform(-3.0, 3.0, (2, 3)))
    check_second(f, np.array([-0.0, 0.0, 21.0]), rtol=1e-4, atol=1e-2)


def test_bessel_i1_matches_scipy():
    sp = pytest.importorskip("scipy.special")
    x = np.array([1e-8, 0.5, -1.0, 5.0, 19.99, 20.0, 20.01, -25.0, 40.0, 100.0, 300.0, 700.0])
    np.testing.assert_allclose(special.bessel_i1(x), sp.i1(x), rtol=1e-14)


def test_bessel_i1_known_values_and_oddness():
    assert round(float(special.bessel_i1(1.0)), 12) == 0.565159103992
    assert float(special.bessel_i1(0.0)) == 0.0
    x = np.linspace(-25.0, 25.0, 11)
    np.testing.assert_array_equal(special.bessel_i1(-x), -special.bessel_i1(x))


def test_bessel_i1_is_the_derivative_of_i0_and_tends_to_one_half_at_zero():
    x = np.array([0.0, 0.7, -4.0, 25.0])
    g, = gradients_of_sum(np.i0, x)
    np.testing.assert_allclose(g, special.bessel_i1(x), rtol=1e-14)
    g, = gradients_of_sum(special.bessel_i1, [0.0])
    np.testing.assert_allclose(g, [0.5])


def test_bessel_i1_of_plain_values_is_a_plain_array_and_of_tensors_a_tensor():
    assert type(special.bessel_i1(np.ones(2))) is np.ndarray
    assert isinstance(special.bessel_i1(nt.constant(np.ones(2))), nt.Tensor)
    assert RULES[special.bessel_i1.raw].name == "bessel_i1"
