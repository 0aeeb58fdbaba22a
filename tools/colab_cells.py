"""Give every tutorial an "Open in Colab" badge and a first cell that installs nbtape.

    python3 tools/colab_cells.py                    # notebooks/*.ipynb, in place
    python3 tools/colab_cells.py --repo OWNER/REPO  # badges open each notebook directly

The badge is the notebook's first cell: the badge alone, so that JupyterLite, a
checkout and Binder show no Colab instructions.  This checkout does not know the
address its repository will be published at, so by default the badge opens Colab
itself and its tooltip (the link's title) says how to open the notebook there and
the form of a direct link, as the README does; with ``--repo`` the badge links
straight to the notebook on Colab.  The image is ``notebooks/open_in_colab.svg``,
so nothing is fetched from elsewhere (where it cannot be shown, its text stays).

The install cell goes before the first code cell: it installs nbtape only where
``import nbtape`` fails (a fresh Colab runtime, JupyterLite), and prints what is
particular to Colab (the install lasts one runtime; how to keep your work) only on
Colab, so under nbval, on Binder, in JupyterLite and in a checkout it prints nothing.
With ``--repo`` it also works before nbtape's first release: where PyPI has no nbtape,
it installs from the repository.

Running it again changes nothing: the two cells are found by their ids and only
their sources are rewritten.  New cells have no outputs and no execution count;
re-execute the notebooks afterwards (their cell numbers move by one).
"""
import argparse
import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
BADGE_ID = "open-in-colab"
INSTALL_ID = "install-nbtape"
COLAB = "https://colab.research.google.com/"
# [notebook] brings the widgets and plots; on Colab it changes none of Colab's pinned
# versions (tests/test_environments.py checks), and in JupyterLite it comes from the
# site's own package index.
INSTALL = (
    "# On Colab or JupyterLite (wherever nbtape is missing) this installs it; elsewhere it\n"
    "# does nothing. Only on Colab it also prints how to keep your work there.\n"
    "try:\n"
    "    import nbtape\n"
    "except ImportError:\n"
    '    %pip install --quiet "nbtape[notebook]"\n'
    "try:\n"
    "    from google import colab\n"
    "except ImportError:\n"
    "    colab = None\n"
    "if colab:      # what only a Colab user needs to know\n"
    '    print("On Colab: nbtape is installed in this runtime only: after Runtime >\\n"\n'
    '          "Disconnect and delete runtime, run this cell again. Your changes are not\\n"\n'
    '          "saved anywhere until you choose File > Save a copy in Drive.")')

# Before nbtape's first release PyPI has nothing to install: once the repository's
# address is known, the cell falls back to installing from it (JupyterLite never gets
# there: its first %pip finds nbtape in the site's own index).
_PIP = '    %pip install --quiet "nbtape[notebook]"\n'
FROM_REPO = (
    "    try:\n"
    "        import nbtape\n"
    "    except ImportError:  # not on PyPI yet: from the repository\n"
    '        %pip install --quiet "nbtape[notebook] @ git+https://github.com/{repo}"\n')


def install_source(repo=None):
    """The install cell's source; with ``repo`` it also installs from the repository.

    >>> install_source() == INSTALL
    True
    >>> print(install_source("me/nbtape").splitlines()[9].strip())
    %pip install --quiet "nbtape[notebook] @ git+https://github.com/me/nbtape"
    """
    if not repo:
        return INSTALL
    return INSTALL.replace(_PIP, _PIP + FROM_REPO.format(repo=repo), 1)


def badge_source(name, repo=None):
    """The badge cell's markdown for notebook file ``name``.

    >>> print(badge_source("01_x.ipynb", repo="me/nbtape"))
    [![Open in Colab](open_in_colab.svg)](https://colab.research.google.com/github/me/nbtape/blob/main/notebooks/01_x.ipynb 'Run this notebook on Google Colab')
    """
    if repo:
        return (f"[![Open in Colab](open_in_colab.svg)]({COLAB}github/{repo}/blob/main/"
                f"notebooks/{name} 'Run this notebook on Google Colab')")
    return (f"[![Open in Colab](open_in_colab.svg)]({COLAB} 'On Colab: File > Open notebook "
            f"> GitHub, this repository, notebooks/{name} (a direct link: "
            f"{COLAB}github/OWNER/REPO/blob/main/notebooks/{name})')")


def add_cells(nb, name, repo=None):
    """Insert (or update) the badge and install cells of notebook ``nb`` in place.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
    ...                                      nbformat.v4.new_code_cell("1 + 1")])
    >>> add_cells(nb, "01_x.ipynb")
    True
    >>> [c.get("id") for c in nb.cells][:1] + [c.source[:9] for c in nb.cells[1:]]
    ['open-in-colab', '# Title', '# On Cola', '1 + 1']
    >>> add_cells(nb, "01_x.ipynb")         # already there: nothing to do
    False
    """
    before = nbformat.writes(nb)
    _place(nb, BADGE_ID, nbformat.v4.new_markdown_cell, badge_source(name, repo), lambda: 0)
    _place(nb, INSTALL_ID, nbformat.v4.new_code_cell, install_source(repo), lambda: next(
        (i for i, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells)))
    return nbformat.writes(nb) != before


def _place(nb, cell_id, make, source, where):
    for cell in nb.cells:
        if cell.get("id") == cell_id:
            cell.source = source
            return
    cell = make(source)
    cell.id = cell_id
    nb.cells.insert(where(), cell)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", metavar="OWNER/REPO",
                        help="link the badges to this GitHub repository's notebooks")
    parser.add_argument("notebooks", nargs="*", type=Path,
                        default=sorted(NOTEBOOKS.glob("[0-9]*.ipynb")))
    args = parser.parse_args(argv)
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        if add_cells(nb, path.name, args.repo):
            nbformat.validate(nb)
            nbformat.write(nb, path)
            print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
