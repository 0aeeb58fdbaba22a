"""Every tutorial in a real Jupyter kernel, run by the ``colab`` row of the environment matrix.

``test_environments.py`` passes this file to pytest inside the environment it builds
with Colab's stack (IPython 7.34.0, ipywidgets 7.7.1, numpy 2.1.3): the name does not
start with ``test_``, so the development suite, where nbval already runs every
notebook against its stored outputs, does not collect it.  Stored outputs depend on
the IPython that made them, so here each tutorial is run as a front end runs it
(nbclient) and must end with the errors its stored outputs show (the cells meant to
fail) and no other.  The tutorials are found by globbing ``notebooks/``: a new one is
included without editing this file.
"""
import concurrent.futures
from pathlib import Path

import nbformat
import pytest

from test_kernel_cells import NOTEBOOKS, errors, execute

TUTORIALS = sorted(NOTEBOOKS.glob("*.ipynb"))
# Two kernels at a time: on a 2-core machine the 15 tutorials took 53-107 s so (IPython 7.34,
# Python 3.13; four kernels: 57 s, the work is CPU-bound once kernels have started).
WORKERS = 2


@pytest.fixture(scope="module")
def runs():
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS)
    jobs = {p.name: pool.submit(execute, nbformat.read(p, as_version=4)) for p in TUTORIALS}
    yield jobs
    pool.shutdown(wait=True, cancel_futures=True)


def test_the_tutorials_are_found():
    assert len(TUTORIALS) >= 9 and all(isinstance(p, Path) for p in TUTORIALS)


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_the_tutorial_runs_in_a_real_kernel(runs, path):
    ran = runs[path.name].result()
    stored = nbformat.read(path, as_version=4)
    assert errors(ran) == errors(stored)
    assert all(c.execution_count for c in ran.cells if c.cell_type == "code" and c.source)
