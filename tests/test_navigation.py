"""Every tutorial links to the previous and the next one and to the contents.

The order of the path is the order of the tutorials' file names; ``tools/navigation.py``
writes the links (a cell after the Colab badge and one at the end) and the contents
(``notebooks/contents.ipynb``, notebook 1's list).  These tests read the links back
from the files, independently of the script, so a notebook added, removed or renamed
without re-running it fails here (``python3 tools/navigation.py`` fixes it).
"""
import doctest
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
NAMES = [p.name for p in TUTORIALS]
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")

_spec = importlib.util.spec_from_file_location("navigation", ROOT / "tools" / "navigation.py")
navigation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(navigation)


def _links(source):
    return {text: target for text, target in LINK.findall(source)}


def _by_word(links, word):
    found = [target for text, target in links.items() if word in text]
    return found[0] if len(found) == 1 else None


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_the_top_and_the_end_link_to_the_previous_the_next_and_the_contents(path):
    nb = nbformat.read(path, as_version=4)
    k = NAMES.index(path.name)
    top = nb.cells[1] if nb.cells[0].get("id") == "open-in-colab" else nb.cells[0]
    for where, cell in (("top", top), ("end", nb.cells[-1])):
        assert cell.cell_type == "markdown", f"{path.name}: no navigation at the {where}"
        links = _links(cell.source)
        assert _by_word(links, "Contents") == "contents.ipynb", f"{path.name} ({where})"
        expected_prev = NAMES[k - 1] if k > 0 else None
        expected_next = NAMES[k + 1] if k + 1 < len(NAMES) else None
        assert _by_word(links, "Previous") == expected_prev, f"{path.name} ({where})"
        assert _by_word(links, "Next") == expected_next, f"{path.name} ({where})"
        for target in links.values():
            assert (NOTEBOOKS / target).is_file(), f"{path.name} links to missing {target}"


def test_the_contents_list_every_tutorial_in_order():
    contents = nbformat.read(NOTEBOOKS / "contents.ipynb", as_version=4)
    listed = [t for c in contents.cells for t in LINK.findall(c.source)]
    assert [target for _, target in listed[:len(NAMES)]] == NAMES
    # notebook 1's own contents cell says the same
    first = nbformat.read(TUTORIALS[0], as_version=4)
    cell = next(c for c in first.cells if c.source.startswith("## Contents"))
    assert [target for _, target in LINK.findall(cell.source)] == NAMES
    # each entry is the notebook's own title
    for (text, target) in listed[:len(NAMES)]:
        heading = next(line for c in nbformat.read(NOTEBOOKS / target, as_version=4).cells
                       for line in c.source.splitlines() if line.startswith("# "))
        assert heading.endswith(text), (target, heading, text)


TEACHING = ROOT / "docs" / "teaching.md"
WEEK = re.compile(r"^- \*\*Week \d[^\n]*(?:\n  [^\n]*)*", re.M)
PLANNED = re.compile(r"\]\(\.\./notebooks/([^)\s]+\.ipynb)\)")


def _walk_next(first):
    """The tutorials met by clicking Next from ``first`` until a page has no Next."""
    walked, here = [], first
    while here is not None:
        assert here not in walked, f"the Next links go round in a circle at {here}"
        assert (NOTEBOOKS / here).is_file(), f"{walked[-1]}'s Next leads to a missing {here}"
        walked.append(here)
        nb = nbformat.read(NOTEBOOKS / here, as_version=4)
        top = nb.cells[1] if nb.cells[0].get("id") == "open-in-colab" else nb.cells[0]
        ahead = [_by_word(_links(cell.source), "Next") for cell in (top, nb.cells[-1])]
        assert ahead[0] == ahead[1], f"{here}: the top and the end send to different pages"
        if ahead[0] is None:
            assert "the last notebook of the path" in nb.cells[-1].source, \
                f"{here} has no Next link and does not say it is the last: a dead end"
        here = ahead[0]
    return walked


def test_clicking_next_from_the_first_notebook_follows_the_teachers_plan_to_the_end():
    walked = _walk_next(NAMES[0])
    # no dead end: every tutorial is reached, once, and only the last has no Next
    assert walked == NAMES
    # the three-week plan names the notebooks in the order Next takes the learner
    weeks = WEEK.findall(TEACHING.read_text(encoding="utf-8"))
    assert len(weeks) == 3, "docs/teaching.md's plan has three weeks"
    planned = [name for week in weeks for name in PLANNED.findall(week)]
    assert planned == walked, ("the plan in docs/teaching.md and the Next links disagree: "
                               "the first difference is at "
                               f"{next((a, b) for a, b in zip(planned + [None], walked + [None]) if a != b)}")


def test_the_walk_finds_a_dead_end_and_a_plan_out_of_order(tmp_path, monkeypatch):
    for path in TUTORIALS[:3]:
        shutil.copy(path, tmp_path / path.name)
    assert navigation.main(["--folder", str(tmp_path)]) == 0
    monkeypatch.setattr(sys.modules[__name__], "NOTEBOOKS", tmp_path)
    names = [p.name for p in TUTORIALS[:3]]
    assert _walk_next(names[0]) == names
    # a notebook whose end link lost its Next (and does not say it is the last)
    nb = nbformat.read(tmp_path / names[1], as_version=4)
    for cell in (nb.cells[1], nb.cells[-1]):
        cell.source = cell.source.split(" | [Next")[0]
    nbformat.write(nb, tmp_path / names[1])
    with pytest.raises(AssertionError, match="dead end"):
        _walk_next(names[0])


def test_the_magic_comes_in_week_one_and_tracing_after_12():
    weeks = [PLANNED.findall(w) for w in WEEK.findall(TEACHING.read_text(encoding="utf-8"))]
    assert weeks[0][:5] == ["01_what_is_autodiff.ipynb", "02_a_tape_from_scratch.ipynb",
                            "03_gradient_tape_basics.ipynb", "03b_broadcasting.ipynb",
                            "03c_the_tape_magic.ipynb"]
    assert "03d_more_of_the_tape_magic.ipynb" in weeks[0]
    assert weeks[2].index("15_tracing_a_step.ipynb") > weeks[2].index(
        "12_training_a_network.ipynb")


def test_the_script_has_nothing_left_to_do():
    assert navigation.main(["--check"]) == 0, \
        "a notebook's links are out of date: run python3 tools/navigation.py"


def test_a_new_notebook_is_linked_in_by_running_the_script_again(tmp_path, capsys):
    for path in TUTORIALS[-2:]:
        shutil.copy(path, tmp_path / path.name)
    extra = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 99. Tracing a step\n\n**Goal:** trace one step."),
        nbformat.v4.new_code_cell("1 + 1")])
    nbformat.write(extra, tmp_path / "99_tracing_a_step.ipynb")
    assert navigation.main(["--check", "--folder", str(tmp_path)]) == 1
    assert "99_tracing_a_step.ipynb" in capsys.readouterr().out
    assert navigation.main(["--folder", str(tmp_path)]) == 0
    assert navigation.main(["--check", "--folder", str(tmp_path)]) == 0
    before_last = nbformat.read(tmp_path / TUTORIALS[-1].name, as_version=4)
    assert _by_word(_links(before_last.cells[-1].source), "Next") == "99_tracing_a_step.ipynb"
    new = nbformat.read(tmp_path / "99_tracing_a_step.ipynb", as_version=4)
    assert [c.get("id") for c in (new.cells[0], new.cells[-1])] == ["nav-top", "nav-bottom"]
    assert _by_word(_links(new.cells[0].source), "Previous") == TUTORIALS[-1].name
    contents = (tmp_path / "contents.ipynb").read_text(encoding="utf-8")
    assert "[Tracing a step](99_tracing_a_step.ipynb): trace one step." in contents


def test_the_scripts_examples_run():
    # tools/ is not among pytest's doctest paths
    result = doctest.testmod(navigation)
    assert result.attempted >= 8 and result.failed == 0


def test_moving_the_links_keeps_their_cells_metadata():
    # tools/slides.py marks the link cells "skip"; putting them back in place keeps that
    es = [("1", "A", "01_a.ipynb"), ("2", "B", "02_b.ipynb")]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 2. B"),
                                         nbformat.v4.new_code_cell("1 + 1")])
    navigation.add_navigation(nb, "02_b.ipynb", es)
    for cell in nb.cells:
        if cell.get("id") in ("nav-top", "nav-bottom"):
            cell.metadata["slideshow"] = {"slide_type": "skip"}
    nb.cells.append(nb.cells.pop(0))                  # the top links misplaced: last
    nb.cells.insert(0, nb.cells.pop(-2))              # the bottom links first
    assert navigation.add_navigation(nb, "02_b.ipynb", es)
    assert [c.get("id", c.source[:6]) for c in nb.cells][::3] == ["nav-top", "nav-bottom"]
    assert all(c.metadata.get("slideshow") == {"slide_type": "skip"}
               for c in nb.cells if c.get("id") in ("nav-top", "nav-bottom"))
    assert not navigation.add_navigation(nb, "02_b.ipynb", es)
