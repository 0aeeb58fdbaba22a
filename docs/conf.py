"""Sphinx settings for nbtape's documentation site.

Build it with ``python3 docs/build.py`` (never sphinx-build on this folder
directly): that script stages this folder with the generated pieces (API pages,
tutorials with launch buttons, the tape picture, MathJax) and builds with
warnings as errors.  ``NBTAPE_DOCS_REPO`` (``OWNER/REPO``, set by ``--repo``)
is the repository's address for the Binder and Colab buttons; without it they
say how to open the notebook there.
"""
import os

project = "nbtape"
author = "nbtape's authors"
copyright = "nbtape's authors (MIT licence)"
release = version = "0.1.0"

extensions = [
    "myst_nb",                  # MyST pages and the tutorials (.ipynb) with stored outputs
    "sphinx.ext.autodoc",       # the API reference from the docstrings
    "sphinx.ext.napoleon",      # docstrings' "Args:"/"Returns:" sections
    "sphinx.ext.mathjax",       # the tutorials' formulas (MathJax served from _static)
]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"       # the tutorials show their stored, tested outputs
# the live widgets' models are not in the pages (no kernel there); each widget's
# static copy (text/html beside it) is what the reader sees
nb_mime_priority_overrides = [("*", "application/vnd.jupyter.widget-view+json", None)]
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"exclude-members": "__init__, __new__"}
add_module_names = False

# Every cross-reference must resolve (docs/build.py runs Sphinx with -W), except the
# bases :show-inheritance: names that are internal (not part of the public API) or
# another library's (no intersphinx: the build is offline)
nitpicky = True
nitpick_ignore_regex = [
    ("py:class", r"nbtape\.(core|tape|display|notebook\.widgets\.live)\..*"),
    ("py:class", r"(graphviz|IPython|enum|abc)\..*"),
]

exclude_patterns = ["_build", "CHANGELOG.md", "_generated/*.html", "**.ipynb_checkpoints"]
templates_path = ["_templates"]
# furo: a light, readable theme from PyPI whose pages load nothing from elsewhere (no web
# fonts, no CDN), with a working dark mode and search; the site must work offline
html_theme = "furo"
html_title = "nbtape"
html_static_path = ["_static"]
html_css_files = ["nbtape.css"]
html_js_files = ["tryit.js"]
# MathJax from the site's own files: nothing is fetched from elsewhere
mathjax_path = "mathjax/tex-chtml.js"
html_show_sourcelink = False
html_copy_source = False

NBTAPE_REPO = os.environ.get("NBTAPE_DOCS_REPO", "")
