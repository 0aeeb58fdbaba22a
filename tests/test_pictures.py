"""nbtape/display/pictures.py: where the tape's picture comes from.

The engine draws nothing: the notebook layer registers its drawing functions with
``register``, the package facade sets a ``loader`` that imports that layer on first
need, and ``tape.graph()`` and the tape's HTML card ask this module.  The registry is
put back after each test (``monkeypatch``).
"""
import numpy as np
import pytest

import nbtape as nt
from nbtape.display import pictures


@pytest.fixture
def empty(monkeypatch):
    """No drawer registered and no loader: as before the notebook layer is imported."""
    for name in ("graph", "svg", "loader"):
        monkeypatch.setattr(pictures._Registry, name, None)


def _tape():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x)
    return tape, x, y


def test_register_returns_what_was_registered_before(empty):
    def g(*a, **k):
        return "g"

    def s(d):
        return "s"
    assert pictures.register(g, s) == (None, None)
    assert pictures.register(None, None) == (g, s)


def test_draw_tape_hands_the_tape_and_every_option_to_the_drawer(empty):
    calls = []
    pictures.register(lambda tape, target=None, sources=None, **options:
                      calls.append((tape, target, sources, options)) or "picture", None)
    tape, x, y = _tape()
    assert pictures.draw_tape(tape, y, x, rankdir="LR") == "picture"
    assert tape.graph(target=y, sources=[x], show_values=False) == "picture"
    assert tape.graph() == "picture"
    assert calls[0] == (tape, y, x, {"rankdir": "LR"})
    assert calls[1] == (tape, y, [x], {"show_values": False})
    assert calls[2] == (tape, None, None, {})


def test_tape_svg_draws_then_makes_svg(empty):
    pictures.register(lambda tape, **k: ("digraph", tape), lambda d: f"<svg>{d[0]}</svg>")
    tape, _, _ = _tape()
    assert pictures.tape_svg(tape) == "<svg>digraph</svg>"


def test_the_loader_runs_on_first_need_and_only_while_nothing_is_registered(empty):
    loads = []

    def loader():
        loads.append(1)
        pictures.register(lambda tape, **k: "drawn", lambda d: None)
    pictures.set_loader(loader)
    assert loads == []                       # setting it loads nothing
    tape, _, _ = _tape()
    assert tape.graph() == "drawn" and loads == [1]
    assert tape.graph() == "drawn" and loads == [1]
    assert pictures.tape_svg(tape) is None


def test_with_nothing_to_draw_with_the_error_says_how_to_get_pictures(empty):
    tape, _, _ = _tape()
    with pytest.raises(RuntimeError, match=r"nbtape.notebook.graph.*pip install nbtape"):
        tape.graph()
    pictures.set_loader(lambda: None)        # a loader that registers nothing
    with pytest.raises(RuntimeError, match="nbtape.notebook.graph"):
        pictures.tape_svg(tape)


def test_the_html_card_uses_the_registered_svg(monkeypatch):
    monkeypatch.setattr(pictures._Registry, "graph", lambda tape, **k: "d")
    monkeypatch.setattr(pictures._Registry, "svg", lambda d: '<svg id="from-the-registry"></svg>')
    tape, _, _ = _tape()
    assert 'id="from-the-registry"' in tape._repr_html_()


def test_import_nbtape_sets_a_loader_that_reaches_the_notebook_layer():
    tape, x, y = _tape()
    digraph = tape.graph(target=y, sources=x)
    assert type(digraph).__name__.endswith("Digraph") and "np.sin" in digraph.source
    assert pictures._Registry.graph is not None
