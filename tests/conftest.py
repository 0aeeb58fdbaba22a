import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def rng(request):
    """A random generator for this test alone, seeded from the test's id: the same draws on
    every run, whatever ran before it and in whatever order (tests under ``@given`` make
    their own, since hypothesis calls them many times)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def draws():
    """The linear-algebra rule tests' inputs (``gradcheck.Draws``), made afresh for each
    test from seed 2: every such test starts from the same draws, whatever ran before."""
    from gradcheck import Draws
    return Draws(2)


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory):
    """nbtape's wheel, built once (from its sdist, which lies beside it) for every test of
    what ``pip install nbtape`` gets: building costs seconds each time."""
    from gradcheck import build_dist
    return build_dist(tmp_path_factory.mktemp("built") / "dist")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--random-order`` (pytest-random-order) notebook cells keep their order: they
    share one kernel and run top to bottom.  Tests and doctests are shuffled."""
    if not config.pluginmanager.hasplugin("random_order"):
        return
    keep = pytest.mark.random_order(disabled=True)
    for item in items:
        if type(item).__module__.split(".")[0] == "nbval":
            item.add_marker(keep)
