"""nbtape/rules/elementwise.py: the elementwise functions that are not ufuncs (clip
with tensor bounds, sinc, nan_to_num with tensor replacements, np.astype, angle,
real_if_close, unwrap, interp in x, xp, fp, left and right) against central
differences in reverse and forward mode, on random shapes that broadcast; and their
exact answers where finite differences cannot look (clip's ties, sinc at 0, interp's
refusal of period=).

The rules checked are read from the registry: a rule added to elementwise.py without
a case here fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import NUMPY, gradients_of_sum, rule_case_tests
from nbtape.diagnostics.errors import NoGradientRuleError
from nbtape.rules import elementwise
from nbtape.core.registry import RULES


def broadcast_shapes(rng, k):
    """``k`` random shapes (up to 3 axes, sides up to 3) that broadcast together."""
    base = [int(n) for n in rng.integers(1, 4, rng.integers(1, 4))]

    def one():
        s = [1 if rng.random() < 0.3 else n for n in base]
        return tuple(s[rng.integers(0, len(s) + 1):])
    return [one() for _ in range(k)]


def clip_cases(rng):
    out = []
    for _ in range(2):
        sx, slo, shi = broadcast_shapes(rng, 3)
        x = rng.uniform(-2.0, 2.0, sx)
        lo, hi = rng.uniform(-1.0, -0.2, slo), rng.uniform(0.2, 1.0, shi)
        out += [(np.clip, x, lo, hi),
                (lambda x, lo: np.clip(x, lo, None), x, lo),
                (lambda x, hi: np.clip(x, None, hi), x, hi),
                (lambda x: np.clip(x, -0.5, 0.5), x)]
        if NUMPY >= "2.1.0":                         # the bounds by min= and max=
            out.append((lambda x, lo, hi: np.clip(x, min=lo, max=hi), x, lo, hi))
    return out


def nan_to_num_cases(rng):
    x = rng.standard_normal((3, 4))
    x[0, 1], x[1, 2], x[2, 0], x[2, 3] = np.nan, np.inf, -np.inf, np.nan
    finite = np.where(np.isinf(x), 0.5, x)     # numpy's defaults for inf are huge: none here
    z = finite + 1j * rng.standard_normal((3, 4))
    z[0, 0] = complex(1.0, np.nan)
    z[1, 1] = complex(np.inf, -0.5)
    return [(np.nan_to_num, finite),
            (lambda x, n, p, m: np.nan_to_num(x, nan=n, posinf=p, neginf=m), x,
             rng.standard_normal(), rng.standard_normal(), rng.standard_normal()),
            (lambda x, n: np.nan_to_num(x, True, n), finite, rng.standard_normal()),
            (lambda z, n, p: np.nan_to_num(z, nan=n, posinf=p), z, rng.standard_normal(),
             rng.standard_normal())]


def angle_cases(rng):
    z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    return [(np.angle, z), (lambda z: np.angle(z, deg=True), z),
            (np.angle, rng.choice([-1.0, 1.0], 4) * rng.uniform(0.5, 2.0, 4))]


def interp_cases(rng):
    xp = np.cumsum(rng.uniform(0.3, 1.0, 5))
    fp = rng.standard_normal(5)
    x = rng.uniform(xp[0] - 1.0, xp[-1] + 1.0, tuple(broadcast_shapes(rng, 1)[0]))
    x = np.where(np.min(np.abs(x[..., None] - xp), axis=-1) < 1e-3, x + 2e-3, x)
    return [(np.interp, x, xp, fp),
            (lambda x, xp, fp, l, r: np.interp(x, xp, fp, left=l, right=r), x, xp, fp,
             rng.standard_normal(), rng.standard_normal()),
            (lambda x, xp, fp, r: np.interp(x, xp, fp, None, r), x, xp, fp, rng.standard_normal()),
            (lambda x, xp, fp, l: np.interp(x, xp, fp, l), np.array([-5.0, 0.3 + xp[0], 50.0]),
             xp, fp, rng.standard_normal()),
            (np.interp, x, xp, fp + 1j * rng.standard_normal(5))]


def _astype_cases(rng):
    x = rng.standard_normal((2, 3))
    return [(lambda x: np.astype(x, np.complex128) * (2 - 1j), x),
            (lambda x: np.astype(x, "float64", copy=False) ** 2, x)]


CASES = {
    "np.clip": clip_cases,
    "np.sinc": lambda rng: [(np.sinc, rng.standard_normal(s)) for s in broadcast_shapes(rng, 2)],
    "np.nan_to_num": nan_to_num_cases,
    "np.astype": _astype_cases,
    "np.angle": angle_cases,
    "np.real_if_close": lambda rng: [(np.real_if_close, rng.standard_normal((3, 2)))],
    "np.unwrap": lambda rng: [(lambda p: np.unwrap(4 * p), rng.standard_normal(6)),
                              (lambda p: np.unwrap(4 * p, axis=0, period=5.0),
                               rng.standard_normal((5, 2)))],
    "np.interp": interp_cases,
}
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(elementwise, CASES)


def test_clip_ties_go_to_x_and_clipped_elements_to_their_bound():
    gx, glo, ghi = gradients_of_sum(np.clip, [-2.0, -1.0, 0.0, 1.0, 3.0], [-1.0] * 5, [1.0] * 5)
    np.testing.assert_array_equal(gx, [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(glo, [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 0, 0, 1])
    # crossed bounds: numpy gives a_max; so does the gradient
    gx, glo, ghi = gradients_of_sum(np.clip, [0.0], [1.0], [-1.0])
    assert (gx, glo, ghi) == ([0.0], [0.0], [1.0])


def test_sinc_at_zero_and_zero_gradient_functions():
    g, = gradients_of_sum(np.sinc, [0.0, 0.5])
    np.testing.assert_allclose(g, [0.0, -4.0 / np.pi])
    for f in (np.round, np.around, np.fix):
        g, = gradients_of_sum(f, [0.3, 1.7, -2.2])
        np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
        assert RULES[f].zero
    for f in (np.isposinf, np.isneginf, np.iscomplex, np.isreal):
        assert RULES[f].nondiff
    old = getattr(np, "round_", None)           # numpy 1's deprecated spelling
    assert old is None or RULES[old] is RULES[np.round]


def test_nan_to_num_passes_no_gradient_through_replaced_values():
    g, = gradients_of_sum(np.nan_to_num, [1.0, np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0])
    g, n, p, m = gradients_of_sum(lambda x, n, p, m: np.nan_to_num(x, nan=n, posinf=p, neginf=m),
                                  [np.nan, np.nan, np.inf, 2.0], 0.0, 9.0, -9.0)
    assert (n, p, m) == (2.0, 1.0, 0.0)


def test_angle_of_real_values_is_flat():
    g, = gradients_of_sum(np.angle, [-1.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])


def test_interp_refuses_a_period():
    x = nt.constant([0.5, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.interp(x, [0.0, 1.0, 2.0], [0.0, 2.0, 3.0], period=2.0)
    with pytest.raises(NoGradientRuleError, match="period="):
        tape.gradient(y, x)


def test_interp_slopes_are_exact():
    gx, gxp, gfp = gradients_of_sum(np.interp, [0.5, 1.5], [0.0, 1.0, 2.0], [0.0, 2.0, 3.0])
    np.testing.assert_allclose(gx, [2.0, 1.0])
    np.testing.assert_allclose(gfp, [0.5, 1.0, 0.5])
    np.testing.assert_allclose(gxp, [-1.0, -1.5, -0.5])

