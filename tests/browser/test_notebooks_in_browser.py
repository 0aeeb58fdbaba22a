"""Every tutorial notebook, run in JupyterLab in Chromium, shows what it should and no errors.

For each notebook in ``notebooks/``: open an output-free copy in Lab, Run All, and
check the rendered page: no tracebacks or stderr boxes, every cell ran, every tape
picture appears as a decoded SVG, every widget is drawn (no "Error displaying
widget"), and each cell shows at least the pictures and widgets its saved run showed.
Each cell with a picture, a widget or a problem is photographed.
"""
import pytest

from . import checks
from .notebooks import expectations, read, tutorial_notebooks

pytestmark = pytest.mark.slow

TUTORIALS = tutorial_notebooks()


def test_the_tutorials_are_there():
    # An empty parameter list would make the test below vanish quietly.
    assert TUTORIALS, "no tutorial notebooks found in notebooks/ (expected 01_*.ipynb ...)"


@pytest.mark.parametrize("saved", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs_cleanly_in_the_browser(saved, open_notebook, screenshots):
    nb = open_notebook(f"notebooks/{saved.name}")
    seconds = nb.run_all()
    cells = nb.cells()
    problems = checks.notebook_problems(cells, expectations(read(saved)))
    if nb.console.uncaught:
        problems.append(f"the page raised {len(nb.console.uncaught)} uncaught JavaScript "
                        f"error(s): {nb.console.uncaught[:3]}")

    shots = [nb.shot(nb.page, "after_run_all")]
    for cell in cells:
        if checks.worth_a_screenshot(cell, problems):
            shots.append(nb.shot(nb.cell(cell["index"]), f"cell_{cell['index']:02d}"))

    assert not problems, checks.report(
        f"notebooks/{saved.name} after Run All in JupyterLab ({seconds:.0f} s) shows "
        f"{len(problems)} problem(s) a student would see:",
        problems, shots, nb.console, screenshots.folder)
