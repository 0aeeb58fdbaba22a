"""Build one reveal.js slide deck per week of the unit from the tutorials' own cells.

    python3 tools/decks.py OUTDIR              # week1.html, week2.html, week3.html
    python3 tools/decks.py OUTDIR --week 2     # one week
    python3 -m http.server -d OUTDIR -b 127.0.0.1 8000   # or open OUTDIR/week1.html

Which tutorials a week takes, and in what order, is ``tools/plan.py``'s ``WEEKS``;
which cells make which slide is the cells' ``slideshow`` metadata that
``tools/slides.py`` writes.  Each deck is ``jupyter nbconvert --to slides`` (its
``SlidesExporter``) run on the week's tutorials put one after the other, with the
outputs stored in them (no notebook is run).

Nothing is fetched when a deck is shown: reveal.js and MathJax are copied into
``OUTDIR/assets/`` (from the npm registry once, cached like the docs and JupyterLite
builds cache theirs), and the deck's template (``tools/deck_template``) is
nbconvert's reveal template without the CDN scripts it would load (jQuery,
require.js, mermaid, the widget manager).  The tape player needs no widget manager
either: a saved notebook holds, beside the live widget, the player's kernel-free copy
(SVG frames stepped by a small script, ``nbtape.notebook.widgets.static_player``),
and the deck shows that copy, whose Play button, slider and step buttons work in
the slide.  The live widgets' own outputs (which need a kernel) are left out.
"""
import argparse
import copy
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent


def _script(name, path):
    # tools/, lite/ and docs/ hold scripts, not packages ("build" is even a PyPI name);
    # loaded without a name in sys.modules, so that each test module loads its own copy
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


plan = _script("nbtape_plan", TOOLS / "plan.py")
navigation = _script("nbtape_navigation", TOOLS / "navigation.py")
REVEAL = "reveal.js@5.2.1"            # MIT; dist/ holds the UMD build the template loads
TEMPLATE_DIR = TOOLS / "deck_template"
ASSETS = "assets"                     # OUTDIR/assets/{reveal.js,mathjax}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_FOLDED = re.compile(r"(<details class=['\"]nbtape-snapshot['\"])>")
_TUTORIAL_LINK = re.compile(r"(\]\()(\d+[a-z]?_[^)\s#]+\.ipynb)(?:#[^)\s]*)?\)")


def without_live_widgets(outputs):
    """``outputs`` without the live widgets' views (a deck has no kernel to talk to),
    and their static copies unfolded: beside a live widget a copy is folded away
    (``<details class='nbtape-snapshot'>``), in a deck it is what the slide shows.

    >>> outs = [nbformat.v4.new_output("display_data", {WIDGET_VIEW: {}, "text/plain": "w"}),
    ...         nbformat.v4.new_output("display_data", {"text/html":
    ...             "<details class='nbtape-snapshot'><summary>copy</summary>...</details>"})]
    >>> [(list(o.data), o.data["text/html"][:40]) for o in without_live_widgets(outs)]
    [(['text/html'], "<details class='nbtape-snapshot' open><s")]
    """
    kept = []
    for output in outputs:
        data = output.get("data", {})
        if WIDGET_VIEW in data:
            continue
        if "text/html" in data:
            output = copy.deepcopy(output)
            output.data["text/html"] = _FOLDED.sub(r"\1 open>", output.data["text/html"])
        kept.append(output)
    return kept


def deck_links(source, weeks=plan.WEEKS):
    """Markdown ``source`` with its links to tutorials sent to the deck that shows them.

    >>> deck_links("see [7b](07b_forward_mode.ipynb) and [the contents](contents.ipynb)")
    'see [7b](week2.html) and [the contents](contents.ipynb)'
    """
    def target(m):
        name = plan.name_of(m.group(2))
        week = next((k for k, names in enumerate(weeks, 1) if name in names), None)
        return m.group(0) if week is None else f"{m.group(1)}week{week}.html)"
    return _TUTORIAL_LINK.sub(target, source)


def title_slide(title, notebooks):
    """The deck's first slide: its title and the tutorials it shows, ``[(path, nb)]``.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 3. Tapes")])
    >>> print(title_slide("Week 1", [("03_tapes.ipynb", nb)]).source)
    # Week 1
    <BLANKLINE>
    - **3.** Tapes
    """
    # "- **3.** Tapes", as in the contents: "- 3. Tapes" would be a list inside a list
    lines = ["- **{}.** {}".format(*navigation.title_of(nb, Path(path).name))
             for path, nb in notebooks]
    cell = nbformat.v4.new_markdown_cell(f"# {title}\n\n" + "\n".join(lines))
    cell.id = "deck-title"
    cell.metadata["slideshow"] = {"slide_type": "slide"}
    return cell


def week_notebook(paths, title="nbtape"):
    """One notebook of the tutorials ``paths``, one after the other, ready for the deck.

    A title slide lists them; cell ids are made unique (``<file stem>-<id>``), the
    live widgets' outputs and the widget state are left out, links to tutorials lead
    to their week's deck; everything else is the tutorials' own.

    >>> nb = week_notebook(plan.tutorials_of_week(1)[:1], "Week 1")
    >>> nb.cells[0].source.splitlines()[0], nb.cells[1].id, "widgets" in nb.metadata
    ('# Week 1', '01_what_is_autodiff-open-in-colab', False)
    """
    notebooks = [(path, nbformat.read(path, as_version=4)) for path in paths]
    deck = nbformat.v4.new_notebook(cells=[title_slide(title, notebooks)])
    for path, nb in notebooks:
        if not deck.metadata:
            deck.metadata = copy.deepcopy({k: v for k, v in nb.metadata.items()
                                           if k != "widgets"})
        for cell in nb.cells:
            cell = copy.deepcopy(cell)
            cell.id = f"{Path(path).stem}-{cell.get('id', len(deck.cells))}"[:64]
            if cell.cell_type == "code":
                cell.outputs = without_live_widgets(cell.outputs)
            else:
                cell.source = deck_links(cell.source)
            deck.cells.append(cell)
    return deck


def copy_assets(outdir):
    """reveal.js and MathJax into ``outdir/assets`` (npm registry once, then the caches)."""
    lite = _script("nbtape_lite_build", ROOT / "lite" / "build.py")
    docs = _script("nbtape_docs_build", ROOT / "docs" / "build.py")
    dest = Path(outdir) / ASSETS
    shutil.rmtree(dest, ignore_errors=True)         # a rebuild starts from the caches again
    reveal = lite.npm_package(REVEAL, lite.cache_dir())
    for part in ("dist/reveal.js", "dist/reveal.css", "dist/reset.css",
                 "dist/theme/white.css", "LICENSE"):
        (dest / "reveal.js" / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(reveal / part, dest / "reveal.js" / part)
    shutil.copytree(reveal / "dist" / "theme" / "fonts" / "source-sans-pro",
                    dest / "reveal.js" / "dist" / "theme" / "fonts" / "source-sans-pro",
                    dirs_exist_ok=True)
    docs.mathjax(dest / "mathjax")
    return dest


def exporter():
    """nbconvert's slides exporter with the deck's template and local assets.

    >>> slides = exporter()
    >>> slides.template_name, slides.reveal_url_prefix
    ('nbtape_reveal', 'assets/reveal.js')
    """
    from nbconvert import SlidesExporter
    return SlidesExporter(extra_template_basedirs=[str(TEMPLATE_DIR)],
                          template_name="nbtape_reveal", reveal_url_prefix=f"{ASSETS}/reveal.js",
                          reveal_theme="white", reveal_number="c/t", reveal_width="1280",
                          reveal_height="800", exclude_input_prompt=True,
                          exclude_output_prompt=True)


def build(outdir, weeks=None, folder=plan.NOTEBOOKS):
    """Write ``week<N>.html`` for each week (all by default) into ``outdir``; their paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    copy_assets(outdir)
    slides = exporter()
    written = []
    for week in weeks or range(1, len(plan.WEEKS) + 1):
        nb = week_notebook(plan.tutorials_of_week(week, folder), f"nbtape, week {week}")
        nb.metadata["title"] = f"nbtape, week {week}"
        body, _ = slides.from_notebook_node(
            nb, resources={"nbtape_assets": ASSETS, "metadata": {"name": f"week{week}"}})
        path = outdir / f"week{week}.html"
        path.write_text(body, encoding="utf-8")
        written.append(path)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="folder for the decks and their assets")
    parser.add_argument("--week", type=int, action="append",
                        help="build this week only (may be given more than once)")
    args = parser.parse_args(argv)
    for path in build(args.outdir, args.week):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
