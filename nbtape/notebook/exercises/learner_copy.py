"""The tutorials as they ship in the wheel: every folded solution taken out.

The tutorials in a checkout hold one solution per exercise, in a collapsed
``<details>`` markdown cell tagged ``solution``.  The wheel that students install
gets a copy of each with those cells left out and the sentence that points at them
gone, so no answer key is in anyone's ``pip install nbtape``.  The build makes that
copy from whatever ``notebooks/`` holds at build time (``setup.py``'s build step loads
this file by its path, before numpy or nbformat can be imported: the standard library
only here); ``python3 -m nbtape.notebook.exercises.course tutorials DIR`` copies the
shipped ones out.
"""
import json
import pathlib
import re

# the tutorials' pointer to the folded solution, which a copy without it leaves out
FOLDED = re.compile(r";\s+below it is one solution,\s+folded\s+\(open it after you have "
                    r"tried\)")
# what a learner's copy takes from notebooks/: the notebooks, and the pictures they show
SHIPPED = ("*.ipynb", "*.svg")


def is_solution(cell):
    """A learner-facing solution: a markdown cell tagged ``solution`` (a <details> block).

    >>> is_solution({"cell_type": "markdown", "metadata": {"tags": ["solution"]}})
    True
    >>> is_solution({"cell_type": "code", "metadata": {"tags": ["solution"]}})
    False
    """
    return (cell.get("cell_type") == "markdown"
            and "solution" in cell.get("metadata", {}).get("tags", []))


def _text(source):
    return "".join(source) if isinstance(source, list) else source


def shipped():
    """The folder where an installed nbtape keeps its copy of the tutorials (the wheel's
    ``nbtape/notebook/tutorials/``; a checkout has none: it has ``notebooks/``).

    >>> shipped().parts[-2:]
    ('notebook', 'tutorials')
    """
    # imported here: the wheel's build loads this module by its path, without numpy,
    # and never asks where an install keeps the tutorials
    from ...diagnostics.user_line import PACKAGE_DIR
    return pathlib.Path(PACKAGE_DIR) / "notebook" / "tutorials"


def without_solutions(nb):
    """The notebook ``nb`` (a dict, as ``json.load`` gives it) with no solution cell and
    no sentence pointing at one.

    >>> nb = {"cells": [
    ...     {"cell_type": "markdown", "metadata": {},
    ...      "source": "Try it; below it is one solution, folded (open it after you have tried)."},
    ...     {"cell_type": "markdown", "metadata": {"tags": ["solution"]},
    ...      "source": "<details>x = 3</details>"}]}
    >>> [c["source"] for c in without_solutions(nb)["cells"]]
    ['Try it.']
    """
    out = dict(nb)
    cells = []
    for cell in nb.get("cells", []):
        if is_solution(cell):
            continue
        if cell.get("cell_type") == "markdown":
            cell = dict(cell, source=FOLDED.sub("", _text(cell.get("source", ""))))
        cells.append(cell)
    out["cells"] = cells
    return out


def write_learner_copies(notebooks_dir, target_dir):
    """Write the learner's copy of every notebook (and picture) of ``notebooks_dir`` into
    ``target_dir``; returns the names written.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = pathlib.Path(tmp)
    ...     _ = (folder / "01_demo.ipynb").write_text(json.dumps({"cells": [
    ...         {"cell_type": "markdown", "metadata": {"tags": ["solution"]}, "source": ""}]}))
    ...     names = write_learner_copies(folder, folder / "out")
    ...     names, json.loads((folder / "out" / "01_demo.ipynb").read_text())["cells"]
    (['01_demo.ipynb'], [])
    """
    source, target = pathlib.Path(notebooks_dir), pathlib.Path(target_dir)
    target.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted(p for pattern in SHIPPED for p in source.glob(pattern)):
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            text = json.dumps(without_solutions(nb), indent=1, sort_keys=True,
                              ensure_ascii=False) + "\n"        # as nbformat writes it
            (target / path.name).write_text(text, encoding="utf-8")
        else:
            (target / path.name).write_bytes(path.read_bytes())
        names.append(path.name)
    return names
