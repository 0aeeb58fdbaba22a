"""Give every cell of the tutorials its slide type, read from the notebook's structure.

    python3 tools/slides.py            # notebooks/, in place
    python3 tools/slides.py --check    # exit 1 (listing them) if any notebook is out of date

The weekly slide decks (``tools/decks.py``, ``jupyter nbconvert --to slides``) are
built from the tutorials' own cells; what makes a slide is each cell's
``metadata.slideshow.slide_type``.  This script sets it on every cell from the
notebook's structure alone, so prose can change freely and running the script
again puts the slides right; running it twice changes nothing.

- a ``#`` or ``##`` heading starts a slide, a deeper heading a sub-slide (below it);
- prose after code starts a sub-slide (explanation, code and output fit one screen);
  code after code too, so two outputs never share a screen;
- other cells join the slide before them (``-``);
- skipped: what only a notebook needs (the Colab badge, the navigation links, the
  install cell, the contents list), an exercise's check cell and the sentence
  introducing it, and the folded solutions: the exercise is set in class, its answer
  is not shown.

Only ``slideshow`` is written; every other key of a cell's metadata is kept, and
nothing else of the notebook changes (no notebook needs re-running afterwards).
"""
import argparse
import re
import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# cells only a notebook needs (tools/colab_cells.py's badge and install cell,
# tools/navigation.py's links and contents list)
NOTEBOOK_ONLY = {"open-in-colab", "install-nbtape", "nav-top", "nav-bottom", "contents"}
_HEADING = re.compile(r"^(#+) ")


def _heading_level(cell):
    if cell.cell_type != "markdown":
        return 0
    m = _HEADING.match(cell.source.lstrip())
    return len(m.group(1)) if m else 0


def _is_check(cell):
    return cell.cell_type == "code" and bool(cell.metadata.get("nbgrader", {}).get("grade"))


def _is_solution(cell):
    return "solution" in cell.metadata.get("tags", [])


def slide_types(cells):
    """The slide type of each cell (a list as long as ``cells``).

    >>> md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    >>> slide_types([md("# 1. Title"), code("import numpy"), md("More."), md("Still."),
    ...              code("x"), code("y"), md("### Aside"), md("## Next part")])
    ['slide', '-', 'subslide', '-', '-', 'subslide', 'subslide', 'slide']
    """
    types, previous = [], None
    for k, cell in enumerate(cells):
        level = _heading_level(cell)
        following = cells[k + 1] if k + 1 < len(cells) else None
        if (cell.get("id") in NOTEBOOK_ONLY or _is_check(cell) or _is_solution(cell)
                or (cell.cell_type == "markdown" and following is not None
                    and _is_check(following))):
            types.append("skip")
            continue
        if level in (1, 2):
            kind = "slide"
        elif level > 2 or (previous is not None and previous.cell_type == "code"):
            kind = "subslide"
        else:
            kind = "-"
        types.append(kind)
        previous = cell
    return types


def mark(nb):
    """Set every cell's ``metadata.slideshow.slide_type``; return whether anything changed.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 2. B"),
    ...                                      nbformat.v4.new_code_cell("1 + 1")])
    >>> mark(nb), [c.metadata.slideshow.slide_type for c in nb.cells]
    (True, ['slide', '-'])
    >>> mark(nb)                                   # up to date: nothing to do
    False
    """
    changed = False
    for cell, kind in zip(nb.cells, slide_types(nb.cells)):
        if cell.metadata.get("slideshow") != {"slide_type": kind}:
            cell.metadata["slideshow"] = {"slide_type": kind}
            changed = True
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook's slide types are out of date")
    parser.add_argument("--folder", type=Path, default=NOTEBOOKS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stale = []
    for path in sorted(args.folder.glob("[0-9]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if mark(nb):
            stale.append(path)
            if not args.check:
                nbformat.validate(nb)
                nbformat.write(nb, path)
    for path in stale:
        print(f"{'out of date' if args.check else 'updated'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
