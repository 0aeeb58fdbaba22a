"""Give every tutorial links to the previous and next one and to the contents, and write the contents.

    python3 tools/navigation.py            # notebooks/, in place
    python3 tools/navigation.py --check    # exit 1 (listing them) if any notebook is out of date

The order of the path is the order of the tutorials' file names (``01_...``,
``05_...``, ``05b_...``, ``06_...``): that is the one place it is defined, so a
new notebook (``15_tracing_a_step.ipynb``) or a renumbered one takes its place by
its name, and running this script again puts every link right.  A tutorial's
title is its first ``# `` heading (``# 7. Forward and reverse mode``), its goal the
``**Goal:**`` paragraph under it.

Each tutorial gets a navigation cell (markdown) just after its Colab badge, and
the same cell at its very end; the contents are ``notebooks/contents.ipynb``
(every tutorial with its goal) and the list in notebook 1's contents cell.  The
links are plain relative links (``[Next: ...](07_forward_and_reverse_mode.ipynb)``),
which JupyterLab, JupyterLite and GitHub all follow.  The cells are found by
their ids and only their sources rewritten, so running it twice changes nothing;
markdown cells have no outputs, so no notebook needs re-running afterwards.
"""
import argparse
import re
import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CONTENTS = "contents.ipynb"
TOP_ID, BOTTOM_ID, LIST_ID = "nav-top", "nav-bottom", "contents"
BADGE_ID = "open-in-colab"          # tools/colab_cells.py's first cell
_HEADING = re.compile(r"^# +(?:(\d+[a-z]?)\. +)?(.+?)\s*$", re.M)
_GOAL = re.compile(r"\*\*Goal:\*\*\s*(.+?)(?:\n\s*\n|\Z)", re.S)


def tutorials(folder=NOTEBOOKS):
    """The tutorials in the order of the path: their file names' order."""
    return sorted(p for p in Path(folder).glob("[0-9]*.ipynb"))


def title_of(nb, name):
    """``(number, title)`` from the notebook's first ``# `` heading.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 5b. Why NaN?")])
    >>> title_of(nb, "05b_why.ipynb")
    ('5b', 'Why NaN?')
    """
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.get("id") not in (TOP_ID, BOTTOM_ID):
            m = _HEADING.search(cell.source)
            if m:
                number = m.group(1) or name.split("_")[0].lstrip("0")
                return number, m.group(2)
    raise ValueError(f"{name} has no '# ' title heading for the contents and the links")


def goal_of(nb):
    """The ``**Goal:**`` sentence of a tutorial, on one line ('' if it has none).

    >>> goal_of(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
    ...     "# 1. X\\n\\n**Goal:** know what\\nAD is.\\n\\nMore.")]))
    'know what AD is.'
    """
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = _GOAL.search(cell.source)
            if m:
                return " ".join(m.group(1).split())
    return ""


def nav_source(path, entries):
    """The navigation line of tutorial ``path`` among ``entries`` [(number, title, file)].

    >>> es = [("1", "A", "01_a.ipynb"), ("2", "B", "02_b.ipynb"), ("3", "C", "03_c.ipynb")]
    >>> print(nav_source("02_b.ipynb", es))
    [← Previous: 1. A](01_a.ipynb) | [Contents](contents.ipynb) | [Next: 3. C →](03_c.ipynb)
    >>> print(nav_source("01_a.ipynb", es))
    [Contents](contents.ipynb) | [Next: 2. B →](02_b.ipynb)
    >>> print(nav_source("03_c.ipynb", es))
    [← Previous: 2. B](02_b.ipynb) | [Contents](contents.ipynb) | the last notebook of the path
    """
    names = [e[2] for e in entries]
    k = names.index(Path(path).name)
    parts = []
    if k > 0:
        number, title, name = entries[k - 1]
        parts.append(f"[← Previous: {number}. {title}]({name})")
    parts.append(f"[Contents]({CONTENTS})")
    if k + 1 < len(entries):
        number, title, name = entries[k + 1]
        parts.append(f"[Next: {number}. {title} →]({name})")
    else:
        parts.append("the last notebook of the path")
    return " | ".join(parts)


def list_source(entries, here=None, goals=None):
    """The contents as a markdown list (with each goal where ``goals`` gives them).

    >>> print(list_source([("1", "A", "01_a.ipynb"), ("1b", "B", "01b_b.ipynb")], here="01_a.ipynb"))
    - **1.** [A](01_a.ipynb) (this notebook)
    - **1b.** [B](01b_b.ipynb)
    """
    lines = []
    for number, title, name in entries:
        line = f"- **{number}.** [{title}]({name})"
        if name == here:
            line += " (this notebook)"
        if goals and goals.get(name):
            line += f": {goals[name]}"
        lines.append(line)
    return "\n".join(lines)


def contents_notebook(entries, goals):
    """The contents page: every tutorial, in order, with its goal."""
    first = entries[0]
    cells = [
        ("contents-title", "# Contents\n\n"
         "The tutorials of nbtape, in the order they are meant to be read. Each one states "
         "its goal at the top, most end with an exercise, and each links to the one before and "
         "after it and back here. For teachers: prerequisites, time per notebook, a "
         "glossary and a summary sheet are in `docs/teaching.md` in the repository."),
        (LIST_ID, list_source(entries, goals=goals)),
        (BOTTOM_ID, f"[Start: {first[0]}. {first[1]} →]({first[2]})"),
    ]
    nb = nbformat.v4.new_notebook()
    for cell_id, source in cells:
        cell = nbformat.v4.new_markdown_cell(source)
        cell.id = cell_id
        nb.cells.append(cell)
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python",
                                  "name": "python3"},
                   "language_info": {"name": "python"}}
    return nb


def _place(nb, cell_id, source, where):
    for cell in nb.cells:
        if cell.get("id") == cell_id:
            cell.source = source
            return
    cell = nbformat.v4.new_markdown_cell(source)
    cell.id = cell_id
    nb.cells.insert(where(), cell)


def add_navigation(nb, path, entries):
    """Write (or update) ``nb``'s two navigation cells, and its contents list if it has one.

    The top cell goes right after the Colab badge (first when there is none), the
    bottom one last; both move there if they are elsewhere.  Returns whether
    anything changed.

    >>> es = [("1", "A", "01_a.ipynb"), ("2", "B", "02_b.ipynb")]
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 2. B"),
    ...                                      nbformat.v4.new_code_cell("1 + 1")])
    >>> add_navigation(nb, "02_b.ipynb", es)
    True
    >>> [c.source[:12] for c in nb.cells]
    ['[← Previous:', '# 2. B', '1 + 1', '[← Previous:']
    >>> add_navigation(nb, "02_b.ipynb", es)       # up to date: nothing to do
    False
    """
    before = nbformat.writes(nb)
    source = nav_source(path, entries)
    # both cells are moved to their places (last; right after the badge), wherever they
    # were, as the same cells: their metadata (tools/slides.py's slide type) stays
    moved = {c.get("id"): c for c in nb.cells if c.get("id") in (TOP_ID, BOTTOM_ID)}
    nb.cells = [c for c in nb.cells if c.get("id") not in (TOP_ID, BOTTOM_ID)]
    badge = next((k + 1 for k, c in enumerate(nb.cells) if c.get("id") == BADGE_ID), 0)
    for cell_id, where in ((TOP_ID, lambda: badge), (BOTTOM_ID, lambda: len(nb.cells))):
        if cell_id in moved:
            nb.cells.insert(where(), moved[cell_id])
        _place(nb, cell_id, source, where)
    for cell in nb.cells:
        if cell.get("id") == LIST_ID:
            cell.source = "## Contents\n\n" + list_source(entries, here=Path(path).name)
    return nbformat.writes(nb) != before


def entries_of(paths):
    """``[(number, title, file name)]`` and ``{file name: goal}`` of the tutorials."""
    entries, goals = [], {}
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        entries.append(title_of(nb, path.name) + (path.name,))
        goals[path.name] = goal_of(nb)
    return entries, goals


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook's links are out of date")
    parser.add_argument("--folder", type=Path, default=NOTEBOOKS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    paths = tutorials(args.folder)
    entries, goals = entries_of(paths)
    stale = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if add_navigation(nb, path.name, entries):
            stale.append(path)
            if not args.check:
                nbformat.validate(nb)
                nbformat.write(nb, path)
    contents = args.folder / CONTENTS
    text = nbformat.writes(contents_notebook(entries, goals)) + "\n"
    if not contents.is_file() or contents.read_text(encoding="utf-8") != text:
        stale.append(contents)
        if not args.check:
            contents.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'out of date' if args.check else 'updated'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
