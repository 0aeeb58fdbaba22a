"""Text and HTML reprs of tensors, variables and tapes (nbtape.display.cards)."""
import sys
import types

import numpy as np
import pytest

import nbtape as nt
from nbtape.display import cards as display
from nbtape.display import pictures


# text reprs: TensorFlow's layout, numbers in nbtape's one format, deterministic -------------

@pytest.mark.parametrize("value, dtype, text", [
    (27.0, None, "nt.Tensor(27.0, shape=(), dtype=float64)"),
    (0.1, "float32", "nt.Tensor(0.1, shape=(), dtype=float32)"),
    (3, None, "nt.Tensor(3, shape=(), dtype=int64)"),
    (True, None, "nt.Tensor(True, shape=(), dtype=bool)"),
    (1 / 3, None, "nt.Tensor(0.3333, shape=(), dtype=float64)"),
    (1 + 2j, None, "nt.Tensor(1.0+2.0j, shape=(), dtype=complex128)"),
    ([6.0, 6.0], None, "nt.Tensor([6.0 6.0], shape=(2,), dtype=float64)"),
    ([1.5, -2.0], "float32", "nt.Tensor([1.5 -2.0], shape=(2,), dtype=float32)"),
])
def test_tensor_repr(value, dtype, text):
    assert repr(nt.constant(value, dtype=dtype)) == text
    assert str(nt.constant(value, dtype=dtype)) == text


def test_matrix_starts_on_its_own_line_like_tensorflow():
    assert repr(nt.constant(np.full((2, 2), 8.0))) == (
        "nt.Tensor(\n[[8.0 8.0]\n [8.0 8.0]], shape=(2, 2), dtype=float64)")


def test_big_tensors_are_summarised():
    text = repr(nt.constant(np.arange(1000.0)))
    assert "..." in text and text.endswith("shape=(1000,), dtype=float64)")
    assert len(text) < 200


def test_reprs_do_not_depend_on_numpys_print_options():
    t = nt.constant([1 / 3])
    with np.printoptions(precision=3, floatmode="fixed", sign="+"):
        assert repr(t) == "nt.Tensor([0.3333], shape=(1,), dtype=float64)"


def test_reprs_have_no_addresses_or_ids():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape() as tape:
        y = x * x
    for text in (repr(x), repr(y), repr(tape)):
        assert "0x" not in text and "id" not in text


@pytest.mark.parametrize("kwargs, text", [
    (dict(initial_value=3.0, name="x"), "<nt.Variable 'x' shape=() dtype=float64, numpy=3.0>"),
    (dict(initial_value=3.0, trainable=False, name="v"),
     "<nt.Variable 'v' shape=() dtype=float64, trainable=False, numpy=3.0>"),
    (dict(initial_value=[1.0, 2.0], dtype="float32"),
     "<nt.Variable 'Variable' shape=(2,) dtype=float32, numpy=array([1.0, 2.0])>"),
    (dict(initial_value=np.ones((2, 2))),
     "<nt.Variable 'Variable' shape=(2, 2) dtype=float64, numpy=\narray([[1.0, 1.0],\n"
     "       [1.0, 1.0]])>"),
])
def test_variable_repr(kwargs, text):
    assert repr(nt.Variable(**kwargs)) == text


# tape repr -----------------------------------------------------------------------------------

def test_tape_repr_states():
    x = nt.Variable(3.0, name="x")
    tape = nt.GradientTape()
    assert repr(tape) == "<nt.GradientTape non-persistent: 0 ops recorded; watching nothing>"
    with tape:
        assert repr(tape).startswith("<nt.GradientTape non-persistent, recording: ")
        y = x ** 3
    tape.gradient(y, x)
    assert repr(tape) == ("<nt.GradientTape non-persistent, used: 1 op recorded; watching "
                          "variable 'x' shape=()>")


def test_tape_repr_interrupted():
    x = nt.Variable(1.0)
    tape = nt.GradientTape(persistent=True)
    with pytest.raises(KeyboardInterrupt):
        with tape:
            y = x * 2
            raise KeyboardInterrupt
    assert repr(tape).startswith("<nt.GradientTape persistent, interrupted: 1 op recorded")
    assert "interrupted (Ctrl-C)" in tape._repr_html_()


def test_tape_repr_lists_a_few_watched_values_then_counts():
    vs = [nt.Variable(float(i), name=f"v{i}") for i in range(6)]
    t = nt.constant(np.ones(3))
    unused = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([t, unused])
        s = sum(vs) * np.sum(t)
    text = repr(tape)
    assert "watching tensor shape=(3,), tensor shape unknown (not used), variable 'v0' " \
           "shape=(), variable 'v1' shape=() and 4 more>" in text


def test_tape_html_cuts_long_watch_lists():
    vs = [nt.Variable(float(i)) for i in range(display.ROWS + 2)]
    with nt.GradientTape() as tape:
        s = sum(vs)
    html = tape._repr_html_()
    assert html.count(">variable<") == display.ROWS and "\u2026 and 2 more" in html


def test_tape_repr_replaced():
    tape = nt.GradientTape()
    tape.retire("Replaced by the tape of In[4].")
    assert "retired" in repr(tape)
    assert "Replaced by the tape of In[4]." in tape._repr_html_()


# HTML ----------------------------------------------------------------------------------------

def test_tensor_html_escapes_and_shows_facts():
    html = nt.constant([1.0, 2.0])._repr_html_()
    assert "nt.Tensor" in html and "shape (2,)" in html and "float64" in html
    assert "<pre" in html and "[1.0 2.0]" in html
    assert "not differentiable" in nt.constant([1, 2])._repr_html_()


def test_variable_html_shows_trainable_and_watched():
    v = nt.Variable(2.0, name="<w>")
    assert "&#x27;&lt;w&gt;&#x27;" in v._repr_html_() and "<w>" not in v._repr_html_()
    assert "trainable" in v._repr_html_() and "watched" not in v._repr_html_()
    with nt.GradientTape() as tape:
        y = v * v
        assert "watched" in v._repr_html_()
        assert "watched" in y._repr_html_()
        with tape.stop_recording():
            assert "watched" in v._repr_html_()


def test_tape_html_counts_ops_and_lists_watched():
    x = nt.Variable(3.0, name="x")
    with nt.GradientTape() as tape:
        y = x * x * x + x
    html = tape._repr_html_()
    assert "3 ops recorded: np.multiply \u00d72, np.add \u00d71" in html
    assert ">variable<" in html and ">x<" in html


@pytest.fixture
def fake_graph(monkeypatch):
    """A stand-in picture module, to test tape_html's use of it without a renderer."""
    calls = []
    module = types.SimpleNamespace()
    module.tape_graph = lambda tape: calls.append(tape) or "graph"
    module.inline_svg = lambda graph: '<svg id="fake"></svg>'
    before = pictures.register(lambda tape: module.tape_graph(tape),
                               lambda graph: module.inline_svg(graph))
    yield module, calls
    pictures.register(*before)


def test_small_tape_html_has_its_picture(fake_graph):
    module, calls = fake_graph
    x = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        y = x * x
    assert '<svg id="fake"></svg>' in tape._repr_html_() and calls == [tape]


def test_no_picture_for_empty_or_big_tapes(fake_graph):
    module, calls = fake_graph
    assert "<svg" not in nt.GradientTape()._repr_html_()
    x = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        for _ in range(display.PICTURE_OPS + 1):
            x = x * 1.0
    assert "<svg" not in tape._repr_html_() and calls == []


def test_a_failing_picture_never_breaks_the_repr(fake_graph):
    module, calls = fake_graph

    def broken(tape):
        raise RuntimeError("renderer crashed")
    module.tape_graph = broken
    x = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        y = x * x
    html = tape._repr_html_()
    assert "1 op recorded" in html and "<svg" not in html
    module.tape_graph = lambda tape: "graph"
    module.inline_svg = lambda graph: None          # no layout program on this machine
    assert "<svg" not in tape._repr_html_()


def test_real_picture_when_a_renderer_is_installed():
    graph = pytest.importorskip("nbtape.notebook.graph")
    from nbtape.notebook.render import find_engine
    if find_engine() is None:
        pytest.skip("no Graphviz layout program on this machine")
    x = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        y = x * x
    assert "<svg" in tape._repr_html_()


def test_helpers():
    assert display.html_table(["a"], [["<b>"]]).count("&lt;b&gt;") == 1
    assert display.tape_state(nt.GradientTape(persistent=True)) == ["persistent"]
