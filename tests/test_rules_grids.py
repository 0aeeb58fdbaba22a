"""nbtape/rules/grids.py: linspace, logspace, geomspace and meshgrid against finite differences."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, since_numpy


@pytest.mark.parametrize("kw", [{}, {"num": 5}, {"num": 4, "endpoint": False}, {"num": 1},
                                {"num": 3, "axis": -1}])
@pytest.mark.parametrize("sshape, eshape", [((), ()), ((2,), ()), ((3, 1), (2,)), ((), (2, 3))])
def test_linspace(sshape, eshape, kw):
    rng = np.random.default_rng(0)
    start, stop = rng.standard_normal(sshape), rng.standard_normal(eshape)
    check_both(lambda a, b: np.linspace(a, b, **kw), start, stop)
    if len(sshape) + len(eshape):
        check_both(lambda a, b: np.linspace(a, b, 3, axis=1), start, stop)


def test_linspace_with_one_constant_end_and_complex_ends():
    rng = np.random.default_rng(1)
    check_both(lambda b: np.linspace(0.0, b, 4), rng.standard_normal(2))
    check_both(lambda a, b: np.linspace(a, b, 4), rng.standard_normal(2) + 1j,
               rng.standard_normal(2) - 2j)
    check_hvp(lambda a: np.linspace(a, a ** 2, 5), rng.standard_normal(2))


@pytest.mark.parametrize("kw", [{"num": 4}, {"num": 3, "base": 2.0}, {"num": 3, "axis": -1},
                                {"num": 5, "endpoint": False}])
def test_logspace(kw):
    rng = np.random.default_rng(2)
    check_both(lambda a, b: np.logspace(a, b, **kw), rng.standard_normal(2), rng.standard_normal(2))


def test_logspace_with_a_tensor_base():
    rng = np.random.default_rng(3)
    check_both(lambda a, b, base: np.logspace(a, b, 4, base=base), rng.standard_normal(2),
               rng.standard_normal(2), 1.5 + rng.random(2))
    check_both(lambda a, b, base: np.logspace(a, b, 3, base=base, axis=-1),
               rng.standard_normal(2), rng.standard_normal(2), 1.5 + rng.random(2))
    check_both(lambda base: np.logspace(0.5, 2.0, 3, base=base), np.array(3.0))


@pytest.mark.parametrize("axis", [0, -1, 1])
@pytest.mark.parametrize("sshape, eshape, bshape", [((), (), (1,)), ((), (), (2,)),
                                                    ((2,), (), (3, 1)), ((3, 1), (), ())])
def test_logspace_broadcasts_start_stop_and_base(sshape, eshape, bshape, axis):
    # numpy pads all three to their common ndim, so the samples' axis counts the base's dims
    rng = np.random.default_rng(5)
    start, stop = rng.standard_normal(sshape), rng.standard_normal(eshape)
    base = 1.5 + rng.random(bshape)
    check_both(lambda a, b, c: np.logspace(a, b, 3, base=c, axis=axis), start, stop, base)
    check_both(lambda a, b, c: np.logspace(a, b, base=c), np.array(1.0), np.array(0.3985),
               np.array([1.0]))


@pytest.mark.parametrize("kw", [{"num": 4}, {"num": 3, "axis": -1}, {"num": 5, "endpoint": False}])
def test_geomspace(kw):
    rng = np.random.default_rng(4)
    check_both(lambda a, b: np.geomspace(a, b, **kw), 1 + rng.random(2), 2 + rng.random(2))
    check_both(lambda a, b: np.geomspace(a, b, **kw), -1 - rng.random(2), -3 - rng.random(2))


# numpy 1's geomspace writes its sign back into an operand of start's shape, which
# fails (in numpy itself, on plain arrays) when stop's shape is wider
@since_numpy("2.0.0", "np.geomspace broadcasting start against stop")
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("sshape, eshape", [((1,), ()), ((), (2,)), ((3, 1), (2,))])
def test_geomspace_broadcasts_start_and_stop(sshape, eshape, axis):
    rng = np.random.default_rng(6)
    start, stop = -1 - rng.random(sshape), -2 - rng.random(eshape)
    check_both(lambda a, b: np.geomspace(a, b, 4, axis=axis), start, stop)
    check_both(lambda a, b: np.geomspace(start=a, stop=b, axis=-1), np.array([-0.0426]),
               np.array(-0.0426))


@pytest.mark.parametrize("kw", [{}, {"indexing": "ij"}, {"sparse": True}, {"copy": False},
                                {"sparse": True, "indexing": "ij"}])
def test_meshgrid(kw):
    rng = np.random.default_rng(5)
    x, y, z = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(4)
    check_both(lambda x, y: np.meshgrid(x, y, **kw)[0] * np.meshgrid(x, y, **kw)[1], x, y)
    check_both(lambda x, y, z: sum(g * w for g, w in zip(np.meshgrid(x, y, z, **kw),
                                                         (1.0, 2.0, 3.0))), x, y, z)
    check_both(lambda x: np.meshgrid(x, **kw)[0], x)


def test_meshgrid_returns_what_numpy_returns():
    x, y = np.arange(3.0), np.arange(2.0)
    got, want = np.meshgrid(nt.constant(x), y), np.meshgrid(x, y)
    assert type(got) is type(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
