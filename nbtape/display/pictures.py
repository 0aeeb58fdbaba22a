"""Where the tape's picture comes from: the notebook layer registers it here.

The engine draws nothing itself and never imports the notebook layer. When
``nbtape.notebook.graph`` is imported it registers its drawing functions with
``register``; ``tape.graph()`` and the tape's HTML card ask this module for them.
A user who only did ``import nbtape`` has not imported the notebook layer, so the
package facade (``nbtape/__init__.py``, which may name the notebook layer) sets a
``loader`` that imports it on first need: the engine asks for "the picture", the
facade knows where it lives.
"""


class _Registry:
    """The one slot the notebook layer fills (set once at import, never per call)."""
    graph = None        # tape_graph(tape, target=None, sources=None, **options) -> Digraph
    svg = None          # inline_svg(digraph) -> str or None
    loader = None       # called once when nothing is registered yet


def register(graph, svg):
    """Called by the notebook layer: how to draw a tape, and how to make that SVG.

    Returns what was registered before, ``(graph, svg)``, so a test can put it back.
    """
    before = _Registry.graph, _Registry.svg
    _Registry.graph, _Registry.svg = graph, svg
    return before


def set_loader(loader):
    """Called by the package facade: how to load the notebook layer on first need."""
    _Registry.loader = loader


def _drawer():
    if _Registry.graph is None and _Registry.loader is not None:
        _Registry.loader()
    if _Registry.graph is None:
        raise RuntimeError("tape pictures come from nbtape.notebook.graph, which is not "
                           "available: install nbtape with its graphviz dependency "
                           "(pip install nbtape) and import nbtape.notebook.graph.")
    return _Registry.graph


def draw_tape(tape, target=None, sources=None, **options):
    """The picture of ``tape`` as a ``graphviz.Digraph`` (see ``GradientTape.graph``)."""
    return _drawer()(tape, target=target, sources=sources, **options)


def tape_svg(tape):
    """The picture of ``tape`` as inline SVG text, or None when it cannot be drawn."""
    draw = _drawer()
    return _Registry.svg(draw(tape))
