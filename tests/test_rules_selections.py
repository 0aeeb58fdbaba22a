"""nbtape/rules/selections.py: np.select, np.choose, np.partition against finite differences."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp


def test_select():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    check_both(lambda x: np.select([x < -0.5, x > 0.5], [x ** 2, np.sin(x)]), x)
    check_both(lambda x, d: np.select([x < 0], [x * 3], default=d), x, rng.standard_normal(4))
    check_both(lambda x, y: np.select([x > 0, y > 0], [x, y], 0.5), x, rng.standard_normal(4))
    check_hvp(lambda x: np.select([x > 0], [x ** 3], x), x)


def test_select_matches_numpy_values_dtypes_and_errors():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(5).astype(np.float32)
    got = np.select([nt.constant(x) > 0], [nt.constant(x)])
    want = np.select([x > 0], [x])
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError):
        np.select([nt.constant(x) > 0], [])
    with pytest.raises(TypeError, match="boolean"):
        np.select([nt.constant(x)], [nt.constant(x)])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose(mode):
    rng = np.random.default_rng(2)
    idx = np.array([[0, 2, 1], [1, 0, 2]]) if mode == "raise" else np.array([[0, 4, -1],
                                                                           [1, 3, 2]])
    choices = [rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 1))]
    check_both(lambda a, b, c: np.choose(idx, [a, b, c], mode=mode), *choices)
    stacked = rng.standard_normal((3, 2, 3))
    check_both(lambda s: np.choose(idx, s, mode=mode), stacked)
    np.testing.assert_array_equal(np.choose(idx, nt.constant(stacked), mode=mode).numpy(),
                                  np.choose(idx, stacked, mode=mode))


def test_choose_with_a_tensor_index_and_errors():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    idx = nt.constant(np.array([0, 1, 1, 0]))
    check_both(lambda a, b: np.choose(idx, (a, b)), a, b)
    with pytest.raises(ValueError, match="invalid entry"):
        np.choose(np.array([0, 2]), [nt.constant(a[:2]), b[:2]])


@pytest.mark.parametrize("shape, kth, axis", [((7,), 3, -1), ((7,), [1, 4], -1),
                                              ((3, 5), 2, 1), ((4, 3), 1, 0), ((2, 3, 4), 0, None)])
def test_partition(shape, kth, axis):
    rng = np.random.default_rng(4)
    x = rng.permutation(np.prod(shape)).reshape(shape) + 0.1 * rng.standard_normal(shape)
    check_both(lambda x: np.partition(x, kth, axis=axis), x)
    check_hvp(lambda x: np.partition(x, kth, axis=axis) ** 2, x)
