"""Every tutorial's cells carry the slide types ``tools/slides.py`` reads from its structure:
up to date (the weekly decks are built from them), written idempotently, and nothing
but ``metadata.slideshow`` is touched."""
import doctest
import importlib.util
import json
import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))

_spec = importlib.util.spec_from_file_location("slides", ROOT / "tools" / "slides.py")
slides = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(slides)


def _kind(cell):
    return cell.metadata.get("slideshow", {}).get("slide_type")


def test_every_notebook_is_up_to_date():
    assert slides.main(["--check"]) == 0, \
        "a notebook's slide types are out of date: run python3 tools/slides.py"


def test_the_script_writes_only_slide_types_and_twice_changes_nothing(tmp_path, capsys):
    for path in TUTORIALS[:3]:
        raw = json.loads(path.read_text(encoding="utf-8"))
        for cell in raw["cells"]:
            cell["metadata"].pop("slideshow", None)
        (tmp_path / path.name).write_text(json.dumps(raw), encoding="utf-8")
    assert slides.main(["--folder", str(tmp_path)]) == 0
    assert capsys.readouterr().out.count("updated:") == 3
    for path in TUTORIALS[:3]:         # the same bytes as the repository's files
        assert (tmp_path / path.name).read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    assert slides.main(["--folder", str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""
    assert slides.main(["--folder", str(tmp_path), "--check"]) == 0


def test_check_names_a_notebook_left_behind(tmp_path, capsys):
    shutil.copy(TUTORIALS[0], tmp_path / TUTORIALS[0].name)
    nb = nbformat.read(tmp_path / TUTORIALS[0].name, as_version=4)
    nb.cells.insert(3, nbformat.v4.new_markdown_cell("## A new section"))
    nbformat.write(nb, tmp_path / TUTORIALS[0].name)
    assert slides.main(["--folder", str(tmp_path), "--check"]) == 1
    assert TUTORIALS[0].name in capsys.readouterr().out


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_headings_make_slides_and_answers_stay_out(path):
    nb = nbformat.read(path, as_version=4)
    title = next(c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("# "))
    assert _kind(title) == "slide"
    assert sum(_kind(c) == "slide" for c in nb.cells) > 1, f"{path.name} would be one slide"
    for cell in nb.cells:
        if cell.get("id") in ("open-in-colab", "nav-top", "nav-bottom", "install-nbtape",
                              "contents"):
            assert _kind(cell) == "skip", (path.name, cell.id, "a notebook's own cell")
        elif ("solution" in cell.metadata.get("tags", [])
                or cell.metadata.get("nbgrader", {}).get("grade")):
            assert _kind(cell) == "skip", (path.name, cell.id, "an answer on a slide")
        elif cell.cell_type == "markdown" and cell.source.startswith("## "):
            assert _kind(cell) == "slide", (path.name, cell.id)


def test_the_scripts_examples_run():
    # tools/ is not among pytest's doctest paths
    result = doctest.testmod(slides)
    assert result.attempted >= 2 and result.failed == 0
