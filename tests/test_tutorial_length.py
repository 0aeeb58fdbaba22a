"""Every tutorial fits one sitting, and the path says where its optional parts are.

A notebook of more than about 30 cells is more than one sitting: its advanced part
goes to a notebook of its own that sorts right after it (``07b_...``, ``11b_...``),
and an appendix says in its goal that it is optional.  The ``%%tape`` magic (3c)
needs only notebook 3, and notebook 3 sends the reader to it.
"""
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
MAX_CELLS = 32          # about 30 cells: badge, links and install cell included


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _markdown(path):
    return "\n".join("".join(c["source"]) for c in _cells(path) if c["cell_type"] == "markdown")


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_a_tutorial_fits_one_sitting(path):
    count = len(_cells(path))
    assert count <= MAX_CELLS, (
        f"{path.name} has {count} cells (at most {MAX_CELLS}): move an optional part to a "
        f"notebook of its own that sorts right after it")


def test_the_appendices_say_they_are_optional():
    appendices = [p for p in TUTORIALS if "appendix" in p.name or p.name.startswith("03d")]
    assert appendices
    for path in appendices:
        goal = _markdown(path).split("**Goal:**", 1)[1].split("\n\n", 1)[0]
        assert "optional" in goal, f"{path.name}'s goal does not say it is optional"


def test_the_posts_printout_is_only_in_its_appendix():
    assert "1.9022306" not in _markdown(NOTEBOOKS / "11_fitting_a_line.ipynb")
    assert "1.9022306" in _markdown(NOTEBOOKS / "11b_appendix_the_guides_printout.ipynb")
    link = "(11b_appendix_the_guides_printout.ipynb)"
    assert link in _markdown(NOTEBOOKS / "11_fitting_a_line.ipynb")


def test_the_memory_comparison_lives_in_notebook_10_only():
    memory = "forward_mode_by_hand"
    sources = {p.name: "".join("".join(c["source"]) for c in _cells(p)) for p in TUTORIALS}
    assert [name for name, text in sources.items() if memory in text] == [
        "10_the_memory_cost_of_reverse_mode.ipynb"]


def test_notebook_3_sends_the_reader_to_the_magic():
    cells = _cells(NOTEBOOKS / "03_gradient_tape_basics.ipynb")
    last_text = "".join(cells[-2]["source"])          # the cell just above the bottom links
    assert "(03c_the_tape_magic.ipynb)" in last_text and "%%tape" in last_text
