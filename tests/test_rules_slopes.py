"""nbtape/rules/slopes.py: np.gradient against finite differences, both modes."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, check_reverse_over_forward


def weighted(parts):
    """One array from np.gradient's result (an array, or one per axis)."""
    if isinstance(parts, (tuple, list)):
        return sum((k + 1.0) * p for k, p in enumerate(parts))
    return parts


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("shape, kw", [((5,), {}), ((4, 3), {}), ((4, 3), {"axis": 0}),
                                       ((3, 4, 3), {"axis": (0, 2)}), ((3, 4), {"axis": -1})])
def test_gradient_of_f(shape, kw, edge_order):
    rng = np.random.default_rng(0)
    check_both(lambda f: weighted(np.gradient(f, edge_order=edge_order, **kw)),
               rng.standard_normal(shape))


def test_gradient_with_spacings():
    rng = np.random.default_rng(1)
    f = rng.standard_normal((4, 3))
    check_both(lambda f, h: weighted(np.gradient(f, h)), f, np.array(0.7))
    check_both(lambda f, h, k: weighted(np.gradient(f, h, k)), f, np.array(0.7), np.array(2.0))
    check_both(lambda f, h: np.gradient(f, h, axis=1), f, np.array(1.3))
    x = np.cumsum(1 + rng.random(4))                     # coordinates: f only
    check_both(lambda f: weighted(np.gradient(f, x, 0.5, edge_order=2)), f)


def test_gradient_refuses_coordinate_arrays_by_name():
    rng = np.random.default_rng(2)
    f = nt.constant(rng.standard_normal(4))
    x = nt.constant(np.cumsum(1 + rng.random(4)))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.sum(np.gradient(f, x))
    with pytest.raises(nt.NoGradientRuleError, match="np.gradient.*spacing"):
        t.gradient(y, x)
    with nt.ForwardAccumulator(x, np.ones(4)) as acc:
        y = np.gradient(f, x)
    np.testing.assert_allclose(y.numpy(), np.gradient(f.numpy(), x.numpy()))
    with pytest.raises(nt.NoGradientRuleError, match="np.gradient"):
        acc.jvp(y)


def test_gradient_values_types_and_second_order():
    rng = np.random.default_rng(3)
    f = rng.standard_normal((3, 4))
    got, want = np.gradient(nt.constant(f)), np.gradient(f)
    assert type(got) is type(want) and len(got) == 2
    assert isinstance(np.gradient(nt.constant(f[0])), nt.Tensor)
    check_hvp(lambda f: np.gradient(f ** 3), f[0])
    check_reverse_over_forward(lambda f: np.gradient(f ** 2, axis=0), f)


def test_gradient_of_f_given_by_keyword():
    rng = np.random.default_rng(4)
    check_both(lambda f: weighted(np.gradient(f=f)), rng.standard_normal((3, 4)))
    check_both(lambda f: np.gradient(f=f, axis=0, edge_order=2), rng.standard_normal((4, 2)))
