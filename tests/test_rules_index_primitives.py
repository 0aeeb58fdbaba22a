"""nbtape/rules/index_primitives.py: reading ``x[idx]`` and its adjoint, adding an
array into zeros at an index (repeated fancy indices add up), checked as an adjoint
pair for every kind of index, and the lazy (bincount) version against the eager one."""
import numpy as np
import pytest

from nbtape.rules.index_primitives import (_basic, _has_none, _scatter_add_lazily,
                                           add_at_index, index_value)

SHAPE = (4, 5, 3)
INDICES = [
    (1,), (slice(1, 3),), (slice(None, None, -2), 2), (Ellipsis, 0), (None, 1, slice(2)),
    (np.int64(2),), (np.array([0, 2, 2, 3]),), (np.array([[1, 1], [0, 3]]), slice(1, 4)),
    (np.array([3, 0, 3]), np.array([4, 4, 1])), (Ellipsis, np.array([2, 0, 2])),
    (np.array([True, False, True, True]),), ([0, 0, 1],),
]


@pytest.mark.parametrize("idx", INDICES, ids=str)
@pytest.mark.parametrize("complex_", [False, True])
def test_add_at_index_is_the_adjoint_of_index_value(idx, complex_, rng):
    """<x[idx], g> == <x, add_at_index(g, idx, x.shape)>."""
    idx = idx if len(idx) > 1 else idx[0]
    x = rng.standard_normal(SHAPE)
    y = index_value(x, idx)
    np.testing.assert_array_equal(y, x[idx])
    g = rng.standard_normal(y.shape)
    if complex_:
        g = g + 1j * rng.standard_normal(y.shape)
    back = add_at_index(g, idx, SHAPE)
    assert back.shape == SHAPE and back.dtype == g.dtype
    np.testing.assert_allclose(np.sum(y * g), np.sum(x * back), rtol=1e-12)


def test_repeated_positions_add_up():
    out = add_at_index(np.array([1.0, 2.0, 4.0]), np.array([1, 1, 3]), (5,))
    np.testing.assert_array_equal(out, [0, 3, 0, 4, 0])
    out = add_at_index(np.ones((2, 2)), (np.array([0, 0]), slice(None)), (3, 2))
    np.testing.assert_array_equal(out, [[2, 2], [0, 0], [0, 0]])


def test_basic_indices_write_and_broadcast_g():
    out = add_at_index(7.0, (slice(None), 1), (2, 3))
    np.testing.assert_array_equal(out, [[0, 7, 0], [0, 7, 0]])
    assert add_at_index(np.float32(1.0), 0, (2,)).dtype == np.float32


@pytest.mark.parametrize("idx", INDICES, ids=str)
def test_the_lazy_scatter_matches_the_eager_one(idx, rng):
    idx = idx if len(idx) > 1 else idx[0]
    g = rng.standard_normal(np.zeros(SHAPE)[idx].shape)
    g = g + 1j * rng.standard_normal(g.shape)
    np.testing.assert_allclose(_scatter_add_lazily(g, idx, SHAPE), add_at_index(g, idx, SHAPE),
                               rtol=1e-12, atol=1e-15)


def test_which_indices_are_basic():
    assert _basic(3) and _basic(slice(2)) and _basic((Ellipsis, None, np.int32(1)))
    assert not _basic(np.array([1])) and not _basic([0, 1]) and not _basic((0, [1]))
    assert not _basic(np.array(True))
    assert _has_none(None) and _has_none((0, None)) and not _has_none((0, slice(1)))
