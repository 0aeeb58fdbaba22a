"""nbtape/rules/cross.py: np.cross and np.linalg.cross against finite differences."""
import numpy as np
import pytest

from gradcheck import check_both, check_hvp, needs_numpy


def two_d(values):
    """numpy 2 deprecates 2-vectors in np.cross (it still computes them)."""
    return pytest.param(*values, marks=pytest.mark.filterwarnings("ignore::DeprecationWarning"))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("ashape, bshape, kw", [
    ((3,), (3,), {}),
    ((4, 3), (3,), {}),
    ((2, 1, 3), (4, 3), {}),
    ((3, 4), (4, 3), {"axisa": 0}),
    ((3, 2), (2, 3), {"axisa": 0, "axisb": -1, "axisc": 0}),
    ((3, 2), (3, 2), {"axis": 0}),
    two_d(((2,), (2,), {})),                # two 2-vectors: the z component alone
    two_d(((4, 2), (4, 3), {})),            # a 2-vector and a 3-vector
    two_d(((3,), (5, 2), {})),
])
def test_cross(ashape, bshape, kw, complex_):
    rng = np.random.default_rng(0)

    def draw(shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if complex_ else x
    check_both(lambda a, b: np.cross(a, b, **kw), draw(ashape), draw(bshape))


@needs_numpy("linalg.cross")
def test_linalg_cross():
    rng = np.random.default_rng(1)
    check_both(np.linalg.cross, rng.standard_normal((2, 3)), rng.standard_normal((3,)))
    check_both(lambda a, b: np.linalg.cross(a, b, axis=0), rng.standard_normal((3, 2)),
               rng.standard_normal((3, 2)))


def test_cross_with_a_constant_and_second_order():
    rng = np.random.default_rng(2)
    c = rng.standard_normal(3)
    check_both(lambda a: np.cross(a, c), rng.standard_normal((2, 3)))
    check_hvp(lambda a: np.cross(a, a[::-1]), rng.standard_normal(3))
