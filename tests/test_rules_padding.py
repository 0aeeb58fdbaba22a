"""nbtape/rules/padding.py: np.pad's computed modes against finite differences, both modes."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, check_reverse_over_forward


def distinct(rng, shape):
    """Values with no ties (maximum, minimum and median are smooth there)."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) + 0.1 * rng.random(shape)


@pytest.mark.parametrize("mode, kw", [
    ("linear_ramp", {}), ("linear_ramp", {"end_values": (1.0, -2.0)}),
    ("mean", {}), ("mean", {"stat_length": 2}), ("mean", {"stat_length": ((1, 2), (3, 1))}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("median", {}),
    ("median", {"stat_length": ((2, 3), (1, 2))}),
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
])
@pytest.mark.parametrize("shape, pad_width", [((5,), 2), ((5,), (1, 3)), ((4, 3), ((2, 1), (0, 2))),
                                              ((4, 3), 3), ((2, 3, 4), ((1, 0), (2, 1), (0, 3)))])
def test_pad_modes(shape, pad_width, mode, kw):
    if "stat_length" in kw and len(shape) != 2 and not np.isscalar(kw["stat_length"]):
        pytest.skip("per-axis stat lengths are written for 2-D inputs")
    rng = np.random.default_rng(0)
    check_both(lambda x: np.pad(x, pad_width, mode, **kw), distinct(rng, shape))


def test_pad_reflections_wider_than_the_array():
    rng = np.random.default_rng(1)
    check_both(lambda x: np.pad(x, 7, "reflect", reflect_type="odd"), rng.standard_normal(3))
    check_both(lambda x: np.pad(x, (5, 6), "symmetric", reflect_type="odd"),
               rng.standard_normal(2))


def test_pad_second_order_and_mixed_mode():
    rng = np.random.default_rng(2)
    x = distinct(rng, (3, 4))
    check_hvp(lambda x: np.pad(x, 2, "mean"), x)
    check_hvp(lambda x: np.pad(x ** 2, 1, "maximum"), x)
    check_reverse_over_forward(lambda x: np.pad(x, 1, "median"), x)
    check_reverse_over_forward(lambda x: np.pad(x, 2, "linear_ramp", end_values=3.0), x)


def test_pad_maximum_with_ties_shares_the_gradient():
    x = nt.constant(np.array([1.0, 3.0, 3.0]))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.sum(np.pad(x, (0, 2), "maximum"))
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [1.0, 2.0, 2.0])


@pytest.mark.parametrize("mode", ["empty", lambda vector, width, axis, kw: None])
def test_pad_modes_without_a_gradient_are_refused_by_name(mode):
    x = nt.constant(np.arange(3.0))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.pad(x, 1, mode)
    with pytest.raises(nt.NoGradientRuleError, match=r"np\.pad.*mode="):
        t.gradient(y, x)
    with nt.ForwardAccumulator(x, np.ones(3)) as acc:
        y = np.pad(x, 1, mode)
    with pytest.raises(nt.NoGradientRuleError, match=r"np\.pad.*mode="):
        acc.jvp(y)
