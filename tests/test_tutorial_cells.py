"""Every tutorial opens on Colab: its badge, and a first cell that installs nbtape if missing.

``tools/colab_cells.py`` writes those two cells; these tests check that every
notebook has them as that script writes them, and that the install cell does
nothing where nbtape imports (nbval, Binder, a checkout) and installs it where
it does not (a fresh Colab runtime).
"""
import importlib.util
import re
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))

_spec = importlib.util.spec_from_file_location("colab_cells", ROOT / "tools" / "colab_cells.py")
colab_cells = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(colab_cells)


def test_the_tutorials_are_there():
    assert len(TUTORIALS) >= 9


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_badge_first_and_install_cell_before_any_code(path):
    nb = nbformat.read(path, as_version=4)
    badge = nb.cells[0]
    assert badge.cell_type == "markdown" and badge.id == colab_cells.BADGE_ID
    # the badge and nothing else: no Colab instructions show outside Colab
    link = re.fullmatch(r"\[!\[Open in Colab\]\((\S+)\)\]\((\S+) '([^']*)'\)", badge.source)
    assert link, badge.source
    image, target, tooltip = link.groups()
    assert (NOTEBOOKS / image).is_file()
    assert target.startswith("https://colab.research.google.com/")
    # either the repository is known and the link opens this very notebook, or the
    # tooltip says how to get there; never a made-up address
    assert target.endswith(f"/notebooks/{path.name}") or (
        target == "https://colab.research.google.com/"
        and f"notebooks/{path.name} " in tooltip and "OWNER/REPO" in tooltip)
    code = [c for c in nb.cells if c.cell_type == "code"]
    repo = re.search(r"/github/([^/]+/[^/]+)/blob/", target)
    assert code[0].id == colab_cells.INSTALL_ID
    assert code[0].source == colab_cells.install_source(repo and repo.group(1))
    # the script is up to date with the notebook: running it again changes nothing
    assert not colab_cells.add_cells(nb, path.name, repo and repo.group(1))


def test_the_badge_is_a_picture():
    svg = ET.parse(NOTEBOOKS / "open_in_colab.svg").getroot()
    assert svg.tag.endswith("svg") and svg.get("aria-label") == "Open in Colab"


@pytest.fixture
def shell_with_fake_pip():
    sh = InteractiveShell.instance()
    line_magics = sh.magics_manager.magics["line"]
    real = line_magics.get("pip")
    calls = []
    # stands in for %pip: nothing is installed
    sh.register_magic_function(calls.append, "line", "pip")
    yield sh, calls
    line_magics["pip"] = real


def test_the_install_cell_does_nothing_where_nbtape_imports(shell_with_fake_pip):
    sh, calls = shell_with_fake_pip
    result = sh.run_cell(colab_cells.INSTALL)
    assert result.success and calls == []


def test_the_install_cell_installs_nbtape_where_it_is_missing(shell_with_fake_pip,
                                                              monkeypatch, capsys):
    sh, calls = shell_with_fake_pip
    monkeypatch.setitem(sys.modules, "nbtape", None)        # import nbtape fails
    result = sh.run_cell(colab_cells.INSTALL)
    assert result.success and calls == ['install --quiet "nbtape[notebook]"']
    assert "Colab" not in capsys.readouterr().out           # JupyterLite is not Colab


def test_the_colab_instructions_show_only_on_colab(shell_with_fake_pip, monkeypatch, capsys):
    sh, calls = shell_with_fake_pip
    assert sh.run_cell(colab_cells.INSTALL).success
    assert capsys.readouterr().out == ""                    # a checkout, nbval, Binder
    google = types.ModuleType("google")
    google.colab = types.ModuleType("google.colab")
    monkeypatch.setitem(sys.modules, "google", google)      # what Colab's kernel has
    monkeypatch.setitem(sys.modules, "google.colab", google.colab)
    assert sh.run_cell(colab_cells.INSTALL).success
    said = capsys.readouterr().out
    assert said.startswith("On Colab:") and "Save a copy in Drive" in said and calls == []


def test_before_the_first_release_the_cell_installs_from_the_repository(shell_with_fake_pip,
                                                                        monkeypatch):
    sh, calls = shell_with_fake_pip
    monkeypatch.setitem(sys.modules, "nbtape", None)        # not installed, nor on PyPI
    result = sh.run_cell(colab_cells.install_source("someone/nbtape"))
    assert result.success and calls == [
        'install --quiet "nbtape[notebook]"',
        'install --quiet "nbtape[notebook] @ git+https://github.com/someone/nbtape"']


def test_with_a_repository_the_badge_opens_the_notebook():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    assert colab_cells.add_cells(nb, "03c_the_tape_magic.ipynb", "someone/nbtape")
    assert nb.cells[0].source.startswith(
        "[![Open in Colab](open_in_colab.svg)](https://colab.research.google.com/github/"
        "someone/nbtape/blob/main/notebooks/03c_the_tape_magic.ipynb 'Run this notebook on "
        "Google Colab')")
    assert [c.id for c in nb.cells[:2]] == [colab_cells.BADGE_ID, colab_cells.INSTALL_ID]
    assert nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    assert "git+https://github.com/someone/nbtape" in nb.cells[1].source


def test_the_scripts_examples_run():
    # tools/ is not among pytest's doctest paths
    import doctest
    result = doctest.testmod(colab_cells)
    assert result.attempted >= 5 and result.failed == 0
