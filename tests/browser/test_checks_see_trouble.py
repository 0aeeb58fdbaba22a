"""The checks themselves: shown a notebook of broken outputs, they must name each one.

The other browser tests pass when nothing is flagged, so a change in JupyterLab's DOM
(say, ipywidgets rewording "Error displaying widget") could make them pass without
looking.  This notebook breaks one thing per cell; every break must be reported.
"""
import pytest

from . import checks

pytestmark = pytest.mark.slow

# cell index -> words the problem for that cell must contain
EXPECTED = {
    0: "the widget area is empty",
    1: "Error displaying widget",
    2: "did not appear as a picture",
    3: "wrote to stderr",
    4: "raised ZeroDivisionError",
    5: "was not run",
}


def test_the_checks_report_each_kind_of_trouble(open_notebook):
    nb = open_notebook("purpose-built/broken_outputs.ipynb")
    nb.run_all()
    cells = nb.cells()
    problems = checks.notebook_problems(cells)
    shot = nb.shot(nb.page, "all_broken")
    missed = {k: words for k, words in EXPECTED.items()
              if not any(p.startswith(f"cell {k} ") and words in p for p in problems)}
    assert not missed, (
        f"The checks failed to see trouble a student would see; missed (cell: expected "
        f"words): {missed}\nproblems reported: {problems}\nscreenshot: {shot}\n"
        f"cells as read from the page: {[(c['index'], c['outputs']) for c in cells]}")
