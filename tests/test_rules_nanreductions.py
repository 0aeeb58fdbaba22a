"""nbtape/rules/nanreductions.py: nansum, nanmean, nanmax, nanmin, nanprod, nanvar and
nanstd against central differences in reverse and forward mode, on random shapes with
NaNs, every axis form, keepdims, where= masks and tensor initial= values; a NaN element
gets a zero gradient and the others what the plain reduction gives them.

The rules checked are read from the registry (those whose VJPs this module defines;
nanvar and nanstd are registered here through ``reductions.defvariance``): a rule added
without a case here fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np
import pytest

from gradcheck import gradients_of_sum, rule_case_tests
from nbtape.rules import nanreductions
from nbtape.core.registry import RULES


def with_nans(rng, shape):
    """Distinct values (no ties) with NaNs at (0, 0, ...) and, where every side is 3 or
    more, at (1, 1, ...): a line along any axes then keeps two numbers or more."""
    n = int(np.prod(shape))
    x = (rng.permutation(n) / n * 2 - 1 + 0.01 * rng.standard_normal(n) + 0.05).reshape(shape)
    x[(0,) * len(shape)] = np.nan
    if min(shape) > 2:
        x[(1,) * len(shape)] = np.nan
    return x


def random_call(rng):
    """A random shape (sides 3 or 4), axis (None, one, or a tuple) and keepdims."""
    shape = tuple(int(n) for n in rng.integers(3, 5, rng.integers(1, 4)))
    nd = len(shape)
    axis = [None, int(rng.integers(-nd, nd)),
            tuple(int(a) for a in rng.choice(nd, int(rng.integers(1, nd + 1)), replace=False))
            ][int(rng.integers(0, 3))]
    return shape, axis, bool(rng.integers(0, 2))


def reduction(f, initial=None, where=False, ddof=False):
    def make(rng):
        out = []
        for _ in range(3):
            shape, axis, keep = random_call(rng)
            x = with_nans(rng, shape)
            out.append((lambda x, axis=axis, keep=keep: f(x, axis=axis, keepdims=keep), x))
        shape, axis, keep = random_call(rng)
        x = with_nans(rng, shape)
        if initial is not None:
            out.append((lambda x, i, axis=axis: f(x, axis=axis, initial=i), x, initial(rng)))
        if where:                   # at least 2 numbers left in each line
            shape = tuple(int(n) for n in rng.integers(4, 6, rng.integers(1, 3)))
            x = with_nans(rng, shape)
            mask = np.ones(shape, bool)
            mask[(-1,) * len(shape)] = False
            extra = {"initial": -5.0} if f in (np.nanmax, np.nanmin) else {}
            out.append((lambda x: f(x, axis=-1, where=mask, **extra), x))
        if ddof:
            out.append((lambda x: f(x, axis=0, ddof=1), with_nans(rng, (4, 3))))
        return out
    return make


CASES = {
    "np.nansum": reduction(np.nansum, initial=lambda rng: rng.standard_normal(), where=True),
    "np.nanmean": reduction(np.nanmean, where=True),
    "np.nanmax": reduction(np.nanmax, initial=lambda rng: np.array(0.3), where=True),
    "np.nanmin": reduction(np.nanmin, initial=lambda rng: np.array(-0.3), where=True),
    "np.nanprod": reduction(np.nanprod, initial=lambda rng: rng.uniform(0.5, 2.0), where=True),
    "np.nanvar": reduction(np.nanvar, where=True, ddof=True),
    "np.nanstd": reduction(np.nanstd, where=True, ddof=True),
}
NAMES = sorted(CASES)
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(nanreductions, CASES)


def test_every_case_has_both_modes():
    for name in CASES:
        assert RULES[getattr(np, name[3:])].has_vjp and RULES[getattr(np, name[3:])].has_jvp


@pytest.mark.parametrize("name", NAMES)
def test_nan_elements_get_a_zero_gradient_and_the_rest_the_plain_one(name, rng):
    nanf = getattr(np, name[3:])
    plain = getattr(np, name[6:])              # nansum -> sum, nanvar -> var
    x = with_nans(rng, (3, 4))
    g, = gradients_of_sum(lambda a: nanf(a, axis=1), x)
    assert np.all(g[np.isnan(x)] == 0.0) and np.all(np.isfinite(g))
    for i in range(3):                         # each row: the plain reduction of its numbers
        row = x[i][~np.isnan(x[i])]
        want, = gradients_of_sum(plain, row)
        np.testing.assert_allclose(g[i][~np.isnan(x[i])], want, rtol=1e-12)


def test_nanmax_ties_share_and_nanargmax_is_constant():
    g, = gradients_of_sum(np.nanmax, [2.0, np.nan, 2.0, 1.0])
    np.testing.assert_array_equal(g, [0.5, 0.0, 0.5, 0.0])
    g, i = gradients_of_sum(lambda x, i: np.nanmax(x, initial=i), [1.0, np.nan], 3.0)
    assert g.tolist() == [0.0, 0.0] and i == 1.0
    assert RULES[np.nanargmax].nondiff and RULES[np.nanargmin].nondiff


def test_nanprod_with_a_zero_is_exact():
    g, = gradients_of_sum(np.nanprod, [2.0, 0.0, np.nan, 3.0])
    np.testing.assert_array_equal(g, [0.0, 6.0, 0.0, 0.0])
