"""The API reference's inventory: every public name of nbtape, and the pages that show them.

``groups()`` lists the public names, page by page: the ``nbtape`` facade (its
``__all__`` and the names it loads on first use), ``nbtape.extend``, the training
pieces (``nt.optimizers``, ``nt.losses``, ``nt.nn``, ``nt.layers``, ``nt.random``,
``nt.datasets``: every class and function each defines) and the notebook layer
(``nbtape.notebook.graph`` and ``nbtape.notebook.widgets``, by their ``__all__``,
and the ``%%tape`` magic).  ``write_pages(folder)`` writes one MyST page per group,
each name an autodoc entry (signature, docstring, runnable examples).  The test
suite (``tests/test_docs.py``) checks that every public name is on a page and has
a docstring, so a new public name without either fails it.
"""
import importlib
import inspect
from pathlib import Path

# page file -> (title, lead paragraph, module whose names it lists)
PAGES = {
    "nbtape": ("nbtape", "The package itself: values, the tape, forward mode and the "
               "functional forms, checks and errors (`import nbtape as nt`)."),
    "extend": ("nbtape.extend", "Gradient rules of one's own: one line per derivative."),
    "optimizers": ("nbtape.optimizers", "Keras's optimizers, numpy inside (`nt.optimizers`)."),
    "losses": ("nbtape.losses", "Keras's functional losses: one value per sample (`nt.losses`)."),
    "nn": ("nbtape.nn", "Activations and losses on logits that numpy lacks (`nt.nn`)."),
    "layers": ("nbtape.layers", "Dense and Dropout layers and `Sequential` (`nt.layers`)."),
    "random": ("nbtape.random", "Random numbers that tapes and `nt.function` understand "
               "(`nt.random`): numpy's method names, drawn afresh at every replay."),
    "datasets": ("nbtape.datasets", "Small data sets that ship inside nbtape (`nt.datasets`)."),
    "notebook": ("The notebook layer", "Pictures of the tape, the live widgets and the "
                 "`%%tape` magic (`nbtape.notebook`; the engine never imports it)."),
}
TRAINING = ("optimizers", "losses", "nn", "layers", "random", "datasets")
NOTEBOOK_MODULES = ("nbtape.notebook.graph", "nbtape.notebook.widgets")
MAGICS = ("nbtape.notebook.magics", ("TapeMagics",))


def _defined_in(module):
    """The public classes and functions ``module`` defines, in source order."""
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", None) == module.__name__]


def groups():
    """``{page: [(qualified name, object), ...]}`` for every public name.

    >>> g = groups()
    >>> ("nbtape.GradientTape" in dict(g["nbtape"]), "nbtape.extend.defvjp" in dict(g["extend"]))
    (True, True)
    """
    import nbtape
    import nbtape.extend
    facade = list(nbtape.__all__) + [n for n, (_, attr) in sorted(nbtape._LAZY.items())
                                     if attr is not None]
    out = {"nbtape": [(f"nbtape.{n}", getattr(nbtape, n)) for n in facade],
           "extend": [(f"nbtape.extend.{n}", getattr(nbtape.extend, n))
                      for n in nbtape.extend.__all__]}
    for sub in TRAINING:
        module = getattr(nbtape, sub)
        out[sub] = [(f"nbtape.{sub}.{n}", getattr(module, n)) for n in _defined_in(module)]
    notebook = []
    for modname in NOTEBOOK_MODULES:
        module = importlib.import_module(modname)
        notebook += [(f"{modname}.{n}", getattr(module, n)) for n in module.__all__]
    magics = importlib.import_module(MAGICS[0])
    notebook += [(f"{MAGICS[0]}.{n}", getattr(magics, n)) for n in MAGICS[1]]
    out["notebook"] = notebook
    return out


def _directive(qualname, obj, first=None):
    # an object with two public names (nt.Sequential is nt.layers.Sequential) is shown once
    if first:
        return f"`{qualname}` is the same object as {{py:obj}}`{first}` (shown there).\n"
    extra = ""
    if inspect.isclass(obj):
        return (f"```{{eval-rst}}\n.. autoclass:: {qualname}\n   :members:\n"
                f"   :show-inheritance:\n{extra}```\n")
    if inspect.ismodule(obj):
        return f"```{{eval-rst}}\n.. automodule:: {qualname}\n```\n"
    return f"```{{eval-rst}}\n.. autofunction:: {qualname}\n{extra}```\n"


def page_text(page, names, seen):
    title, lead = PAGES[page]
    lines = [f"# {title}\n", f"{lead}\n",
             "Each example runs in your browser: press **Try it** beside it (the first "
             "run starts Python in the page, which takes a few seconds).\n"]
    if page == "nbtape":
        lines.append("The contract these names keep is on [the API contract](../api.md) "
                     "page.\n")
    for qualname, obj in names:
        short = qualname.rsplit(".", 1)[1]
        lines.append(f"## `{short}`\n")
        lines.append(_directive(qualname, obj, first=seen.get(id(obj))))
        seen.setdefault(id(obj), qualname)
    return "\n".join(lines)


def write_pages(folder):
    """Write ``reference/<page>.md`` for every group and the reference's index; the names."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written, seen = {}, {}
    for page, names in groups().items():
        (folder / f"{page}.md").write_text(page_text(page, names, seen))
        written[page] = [q for q, _ in names]
    index = ["# API reference\n",
             "Generated from the docstrings: every public name, its signature, and its "
             "examples, each of which runs in the browser (**Try it**).\n",
             "```{toctree}\n:maxdepth: 1\n\n" + "\n".join(PAGES) + "\n```\n"]
    (folder / "index.md").write_text("\n".join(index))
    return written


def missing_docstrings(groups):
    """The qualified names in ``groups`` whose object has no docstring of its own.

    >>> def f(): pass
    >>> missing_docstrings({"p": [("m.f", f), ("m.missing_docstrings", missing_docstrings)]})
    ['m.f']
    """
    return [q for names in groups.values() for q, obj in names if not inspect.getdoc(obj)]
