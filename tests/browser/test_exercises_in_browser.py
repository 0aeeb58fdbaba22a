"""An exercise in JupyterLab after Run All: the solution stays folded, the check says what is wrong.

The solution is a ``<details>`` block in a markdown cell: after Run All only its summary
line shows (the code inside is not visible), a click on the summary unfolds it, and the
check cell above it says "not yet:" with a reason, so Run All neither ran nor showed the
answer.
"""
import re

import nbformat
import pytest

from nbtape.notebook.exercises.course import solution_code

from .notebooks import TUTORIALS

pytestmark = pytest.mark.slow

NAME = "03_gradient_tape_basics.ipynb"


def test_the_solution_stays_folded_after_run_all(open_notebook, screenshots):
    saved = nbformat.read(TUTORIALS / NAME, as_version=4)
    k = next(i for i, c in enumerate(saved.cells) if "solution" in c.metadata.get("tags", []))
    check = next(i for i, c in enumerate(saved.cells) if "exercises.check" in c.source)
    secret = solution_code(saved.cells[k]).splitlines()[-1]

    nb = open_notebook(f"notebooks/{NAME}")
    nb.run_all()
    cell = nb.cell(k)
    cell.scroll_into_view_if_needed()
    summary = cell.locator("details > summary")
    assert summary.is_visible() and summary.inner_text().strip() == (
        "One solution (open it after you have tried)")
    code = cell.locator("details pre")
    assert code.count() == 1 and not code.is_visible(), "the solution shows before a click"
    assert secret not in cell.inner_text()
    nb.wait_for_text(nb.cell(check).locator(".jp-OutputArea-output").first,
                     re.compile(r"not yet: \S"), 30, "the check's verdict")
    nb.shot(cell, "solution_folded")

    summary.click()
    code.wait_for(state="visible", timeout=5000)
    assert secret in code.inner_text()
    nb.shot(cell, "solution_open")
