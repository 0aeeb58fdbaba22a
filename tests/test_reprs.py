"""nbtape/core/reprs.py: the values' reprs arrive from the display through a hook set
at import; the core shows a plain repr where nothing was registered."""
import nbtape as nt
from nbtape.core import reprs
from nbtape.display import cards


def test_the_package_registers_the_displays_cards():
    x, v = nt.constant([1.0, 2.0]), nt.Variable(3.0, name="w")
    assert repr(x) == cards.tensor_repr(x) and repr(v) == cards.variable_repr(v)
    assert x._repr_html_() == cards.tensor_html(x)
    assert v._repr_html_() == cards.variable_html(v)


def test_without_a_display_a_value_shows_a_plain_repr(monkeypatch):
    monkeypatch.setattr(reprs, "_SHOWN", {})
    x = nt.constant(1.0)
    assert reprs.text("tensor", x).startswith("<nbtape.core.tensor.Tensor object at")
    assert reprs.html("tensor", x) is None


def test_register_replaces_what_a_kind_shows(monkeypatch):
    monkeypatch.setattr(reprs, "_SHOWN", dict(reprs._SHOWN))
    reprs.register_repr("tensor", lambda t: "T!", lambda t: "<b>T</b>")
    x = nt.constant(1.0)
    assert repr(x) == "T!" and x._repr_html_() == "<b>T</b>"
