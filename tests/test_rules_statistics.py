"""nbtape/rules/statistics.py: np.cov with frequency and analytic weights, both modes."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp


def observations(rng, shape):
    return rng.standard_normal(shape) + np.arange(shape[-1])


@pytest.mark.parametrize("kw", [{}, {"bias": True}, {"ddof": 0}, {"ddof": 2}])
def test_cov_with_weights_of_both_kinds(kw):
    rng = np.random.default_rng(0)
    x, y = observations(rng, (3, 6)), observations(rng, (6,))
    fw, aw = np.array([1, 2, 1, 3, 1, 2]), 0.5 + rng.random(6)
    check_both(lambda x: np.cov(x, fweights=fw, **kw), x)
    check_both(lambda x: np.cov(x, aweights=aw, **kw), x)
    check_both(lambda x, y: np.cov(x, y, fweights=fw, aweights=aw, **kw), x, y)
    check_both(lambda x: np.cov(x.T, rowvar=False, aweights=aw, **kw), x)


@pytest.mark.parametrize("kw", [{}, {"bias": True}, {"ddof": 0}, {"ddof": 2},
                                {"fweights": np.array([1, 2, 1, 3, 1, 2])}])
def test_cov_differentiates_its_analytic_weights(kw):
    rng = np.random.default_rng(1)
    x, aw = observations(rng, (2, 6)), 0.5 + rng.random(6)
    check_both(lambda x, a: np.cov(x, aweights=a, **kw), x, aw)
    check_both(lambda a: np.cov(x, None, True, False, None, None, a), aw)


def test_forward_mode_of_weighted_cov_is_not_the_unweighted_one():
    rng = np.random.default_rng(2)
    x0, aw = observations(rng, (2, 5)), 0.5 + rng.random(5)
    x, v = nt.constant(x0), rng.standard_normal((2, 5))
    with nt.ForwardAccumulator(x, v) as acc:
        c = np.cov(x, aweights=aw)
    eps = 1e-6
    num = (np.cov(x0 + eps * v, aweights=aw) - np.cov(x0 - eps * v, aweights=aw)) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(c).numpy(), num, rtol=1e-6, atol=1e-8)


def test_second_order_through_weighted_cov():
    rng = np.random.default_rng(3)
    x, aw = observations(rng, (2, 5)), 0.5 + rng.random(5)
    check_hvp(lambda x: np.cov(x, aweights=aw), x)
    check_hvp(lambda a: np.cov(x, aweights=a), aw)
