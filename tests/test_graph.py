"""tape.graph(): structure, labels and styles of tape pictures (nbtape.notebook.graph)."""
import math
import os
import re
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import graphviz
import numpy as np
import pytest

import nbtape as nt
from nbtape.display import palette
from nbtape.notebook import graph as G
from nbtape.notebook import render as R
from nbtape.notebook.graph.labels import number

HAS_ENGINE = R.find_engine() is not None
needs_engine = pytest.mark.skipif(not HAS_ENGINE, reason="no layout program installed")


def lines(g, name):
    return g.nbtape_nodes[name].lines


def tags(g, name):
    return g.nbtape_nodes[name].tags


def edges(g, head=None, tail=None):
    return [e for e in g.nbtape_edges
            if (head is None or e.head == head) and (tail is None or e.tail == tail)]


def node_attrs(g, name):
    """The DOT attribute text of one node statement."""
    m = re.search(rf"^\t{re.escape(name)} \[(.*)\]$", g.source, re.M)
    assert m, f"no node {name} in the DOT"
    return m.group(1)


def cube_tape(persistent=False):
    """SEED example 3: x = 3 watched, y = x^2, z = y^2."""
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=persistent) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    return tape, x, y, z


# the forward graph ---------------------------------------------------------------------------
def test_leaves_ops_constants_and_values():
    v = nt.Variable(2.0, name="v")
    with nt.GradientTape() as tape:
        y = v * 3.0
        z = np.sin(y)
    g = tape.graph()
    assert isinstance(g, graphviz.Digraph)
    assert set(g.nbtape_nodes) == {"leaf0", "op0", "op0c1", "op1"}
    assert lines(g, "leaf0") == ["v", "2.0"]
    assert lines(g, "op0") == ["np.multiply", "6.0"]
    assert lines(g, "op0c1") == ["3.0"]
    assert lines(g, "op1") == ["np.sin", number(math.sin(6.0))]
    assert [(e.tail, e.head) for e in g.nbtape_edges] == [
        ("leaf0", "op0"), ("op0c1", "op0"), ("op0", "op1")]
    assert not any(t for n in g.nbtape_nodes.values() for t in n.tags)   # no gradient yet
    assert g.nbtape_caption == []
    del z


def test_a_used_tapes_small_constants_still_show_their_values():
    # notebook 11's wrong-sign example: after gradient() a non-persistent tape frees what
    # its ops saved, and the box of 0.75 in `0.75 - y_pred` said only "constant"
    x = nt.constant([[1.0, 2.0]])
    w = nt.Variable([[0.25], [0.15]], name="w")
    big = np.linspace(0.0, 1.0, 50)
    with nt.GradientTape() as tape:
        y_pred = x @ w
        error = 0.75 - y_pred
        loss = np.sum(error ** 2 + big)
    tape.gradient(loss, w)
    assert tape.ops[1].args is None                       # freed, as before
    g = tape.graph(names={y_pred: "y_pred", error: "error", loss: "loss"})
    assert lines(g, "op1")[0] == "error = np.subtract"
    assert lines(g, "op1c0") == ["0.75"]                  # the first operand: 0.75 - y_pred
    assert lines(g, "op0c0") == ["[[1.0, 2.0]]\n(1, 2) float64"]
    assert lines(g, "op2c1") == ["2"]
    consts = {n: info.lines for n, info in g.nbtape_nodes.items() if info.kind == "const"}
    # 50 numbers are not kept: the box says constant (never a made-up value)
    assert consts["op3c1"] == ["constant"]


def test_arrays_show_a_summary_or_shape_and_dtype():
    a = nt.Variable(np.ones((2, 2)), name="a")
    b = nt.Variable(np.zeros((50, 3), dtype="float32"), name="b")
    with nt.GradientTape() as tape:
        s = np.sum(a)
        t = np.mean(b, axis=0)
    g = tape.graph()
    assert lines(g, "leaf0")[1] == "[[1.0, 1.0], [1.0, 1.0]]\n(2, 2) float64"
    assert lines(g, "leaf1")[1] == "(50, 3) float32"
    assert lines(g, "op1")[:2] == ["np.mean", "axis=0"]
    del s, t


def test_names_label_results_and_leaves():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert lines(tape.graph(names={y: "y", x: "x"}), "op0")[0] == "y = np.multiply"
    assert lines(tape.graph(names={"y": y, "x": x}), "leaf0")[0] == "x"
    assert lines(tape.graph(), "leaf0")[0] == "watched tensor"
    with pytest.raises(TypeError, match="names"):
        tape.graph(names={1: "y"})
    with pytest.raises(TypeError, match="dict"):
        tape.graph(names=["y"])


def test_a_constant_tensor_operand_keeps_its_name():
    # the tape saves an operand tensor's array, not the tensor: the picture finds the
    # constant's name by the id the op recorded
    x = nt.Variable(2.0, name="x")
    c = nt.constant(3.0)
    with nt.GradientTape() as tape:
        y = x * c
    assert tape.ops[0].raw_args and not hasattr(tape.ops[0].args[1], "_id")
    assert lines(tape.graph(names={"c": c, "y": y}), "op0c1") == ["c = 3.0"]


def test_multi_output_ops_have_one_port_per_output():
    w = nt.Variable([[2.0, 1.0], [1.0, 3.0]], name="w")
    with nt.GradientTape() as tape:
        vals, vecs = np.linalg.eigh(w)
        s = np.sum(vals) + np.sum(vecs)
    g = tape.graph()
    assert 'PORT="o0"' in node_attrs(g, "op0") and 'PORT="o1"' in node_attrs(g, "op0")
    assert {e.tail for e in g.nbtape_edges} >= {"op0:o0", "op0:o1"}
    del s


# after gradient ----------------------------------------------------------------------------
def test_gradient_puts_adjoints_on_the_path():
    tape, x, y, z = cube_tape()
    assert float(tape.gradient(z, x)) == 108.0
    # a small tape keeps its values for the picture after gradient(), and a watched
    # tensor that is still alive shows its value
    g = tape.graph(z, x, names={x: "x", y: "y", z: "z"})
    assert tape.graph().nbtape_nodes["leaf0"].lines[1] == "3.0"
    assert lines(g, "leaf0") == ["x", "3.0", "dz/dx = 108.0"]
    assert lines(g, "op0") == ["y = np.multiply", "9.0", "dz/dy = 18.0"]
    assert lines(g, "op1") == ["z = np.multiply", "81.0", "dz/dz = 1.0 (seed)"]
    assert tags(g, "leaf0") == {"path", "source"}
    assert tags(g, "op1") == {"path", "target"}
    assert all("path" in e.tags for e in g.nbtape_edges)
    assert f'color="{palette.REVERSE}"' in node_attrs(g, "op0")
    assert "penwidth=2.5" in node_attrs(g, "op0")
    assert g.nbtape_caption[0].startswith("Orange-red (thick): the gradient path from x to z")


def test_nodes_off_every_path_are_grey():
    x = nt.Variable(2.0, name="x")
    y = nt.Variable(5.0, name="y")
    with nt.GradientTape() as tape:
        a = x * y
        b = y * y
        t = a + b
    tape.gradient(t, x)
    g = tape.graph()
    assert "grey" in tags(g, "leaf1")            # y is not a source
    assert tags(g, "op1") == {"grey"}           # y*y does not depend on x
    assert lines(g, "op1") == ["np.multiply", "25.0"]     # and shows no grad
    assert "path" in tags(g, "op0") and lines(g, "op0")[-1] == "grad = 1.0"
    assert f'fontcolor="{palette.MUTED_TEXT}"' in node_attrs(g, "op1")
    assert [e.tags for e in edges(g, head="op1")] == [{"grey"}, {"grey"}]


def test_show_values_and_show_grads_off():
    tape, x, y, z = cube_tape()
    tape.gradient(z, x)
    g = tape.graph(show_values=False, show_grads=False)
    assert lines(g, "op0") == ["np.multiply"]
    assert "path" in tags(g, "op0")    # the path is still drawn


def test_graph_with_target_computes_grads_on_a_persistent_tape():
    tape, x, y, z = cube_tape(persistent=True)
    g = tape.graph(z, x, names={x: "x", z: "z"})
    assert lines(g, "leaf0")[-1] == "dz/dx = 108.0"
    assert tape.last_gradient is None        # the picture did not call gradient()


def test_target_restricts_the_picture():
    x = nt.Variable(1.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        a = np.exp(x)
        b = np.cos(x)          # not needed for a
    g = tape.graph(target=a)
    assert "op1" not in g.nbtape_nodes and "op0" in g.nbtape_nodes
    assert "op1" in tape.graph(sources=x).nbtape_nodes
    del b


def test_unused_source_is_drawn_and_says_so():
    x = nt.Variable(1.0, name="x")
    u = nt.Variable(4.0, name="unused")
    with nt.GradientTape() as tape:
        y = x * 2.0
    tape.gradient(y, [x, u])
    g = tape.graph(y, [x, u])
    unused = [n for n in g.nbtape_nodes.values() if n.lines[0] == "unused"]
    assert unused and unused[0].lines[1:] == ["4.0", "not used on this tape"]
    assert unused[0].tags == {"grey", "source"}
    anonymous = [n for n in tape.graph().nbtape_nodes.values() if n.lines[0] == "source"]
    assert anonymous and anonymous[0].lines[-1] == "not used on this tape"


@pytest.mark.parametrize("persistent", [True, False])
def test_stop_gradient_is_a_visible_cut(persistent):
    x = nt.Variable(3.0, name="x")
    with nt.GradientTape(persistent=persistent) as tape:
        s = nt.stop_gradient(x)
        y = x * s
    assert float(tape.gradient(y, x)) == 3.0
    g = tape.graph()
    stop = [n for n, info in g.nbtape_nodes.items() if info.lines[0] == "stop_gradient"]
    assert stop, "the stop_gradient op is drawn"
    name = stop[0]
    assert "no gradient flows back" in lines(g, name)
    assert 'style="filled,dashed"' in node_attrs(g, name)
    into = edges(g, head=name)
    assert into and all("stop" in e.tags for e in into)
    assert re.search(rf"leaf0 -> {name} \[.*arrowhead=tee", g.source)
    # its result reaches the multiply as a constant: a dashed edge, no gradient (the op
    # keeps the operand's id, so even a tape that freed its values knows where it went)
    out = edges(g, tail=name)
    assert [(e.head, e.tags) for e in out] == [("op1", {"grey", "const"})]
    assert re.search(rf"{name} -> op1 \[.*style=dashed", g.source)


def test_custom_gradient_is_marked():
    @nt.custom_gradient
    def halve_grad(v):
        return v * 1.0, lambda dy: dy * 0.5
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape() as tape:
        y = halve_grad(x + 0.0) * 4.0
    assert float(tape.gradient(y, x)) == 2.0
    g = tape.graph()
    custom = [n for n, info in g.nbtape_nodes.items()
              if info.lines[0] == "custom_gradient(halve_grad)"]
    assert custom and "peripheries=2" in node_attrs(g, custom[0])
    assert "your gradient function" in lines(g, custom[0])


def test_notes_for_stop_recording_escape_and_assign():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = x * x
        with tape.stop_recording():
            hidden = y * 10.0
        plain = np.asarray(y)
        x.assign_add(1.0)
    g = tape.graph()
    notes = {re.split(r"\s+at ", info.lines[0])[0]: (name, info) for name, info in
             g.nbtape_nodes.items() if info.kind == "note"}
    assert set(notes) == {"not recorded: np.multiply", "left the tape through np.asarray",
                          "assign_add"}
    name, info = notes["not recorded: np.multiply"]
    assert info.tags == {"stop_recording"} and "shape=note" in node_attrs(g, name)
    assert edges(g, head=name)[0].tail == "op0"
    assert edges(g, head=notes["assign_add"][0])[0].tail == "leaf0"
    del hidden, plain


def _function_without_rule():
    from nbtape.core.registry import RULES
    for f in (np.i0, np.polyval, np.ediff1d, np.gradient):
        rule = RULES.get(f)
        if rule is None or not rule.has_vjp:
            return f
    pytest.skip("every candidate function has a gradient rule now")


def test_ops_without_a_gradient_rule_are_marked():
    f = _function_without_rule()
    x = nt.Variable([1.0, 2.0, 4.0], name="x")
    with nt.GradientTape() as tape:
        y = f(x * 1.0) if f is not np.polyval else f(x * 1.0, 2.0)
    g = tape.graph()
    assert lines(g, "op1")[:2] == [f"np.{f.__name__}", "no gradient rule"]
    assert 'style="filled,dashed"' in node_attrs(g, "op1")
    del y


# escaping ---------------------------------------------------------------------------------
EVIL = 'a"b\'<script>alert(1)</script> & {braces} | \\N \n second line \x07'


def test_labels_are_escaped_in_the_dot():
    x = nt.Variable(1.0, name=EVIL)
    with nt.GradientTape() as tape:
        y = x * 2.0
    tape.gradient(y, x)
    g = tape.graph(names={y: EVIL})
    dot = g.source
    assert "<script>" not in dot and "&lt;script&gt;" in dot
    assert "\x07" not in dot
    for m in re.finditer(r"label=(<.*?>)[ \]]", dot):
        assert m.group(1).startswith("<<")       # HTML labels only, built by nbtape
    assert lines(g, "leaf0")[0].startswith('a"b\'<script>')


@needs_engine
def test_labels_never_inject_markup_into_the_svg():
    x = nt.Variable(np.array([1.0, 2.0]), name=EVIL)
    with nt.GradientTape() as tape:
        y = np.sum(x * x)
    tape.gradient(y, x)
    svg = nt.render(tape.graph(names={y: EVIL}, view="chain"))
    root = ET.fromstring(svg)                   # well-formed XML
    assert not [el for el in root.iter() if el.tag.endswith(("script", "}b"))]
    texts = " ".join(el.text or "" for el in root.iter() if el.tag.endswith("text"))
    assert "<script>alert(1)</script>" in texts       # shown as text, not markup
    assert "{braces} | \\N" in texts


# the chain-rule views ----------------------------------------------------------------------
def _edge_value(e):
    return float(e.label)


def test_chain_view_labels_edges_with_local_partials():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = np.sin(y)
    grad = float(tape.gradient(z, x))
    g = tape.graph(view="chain")
    into_y = edges(g, head="op0")
    assert [_edge_value(e) for e in into_y] == [3.0, 3.0]     # d(x*x)/d(each x)
    (into_z,) = edges(g, head="op1")
    # labels carry nbtape's four significant digits: within 5e-4 of the value
    assert _edge_value(into_z) == pytest.approx(math.cos(9.0), rel=5e-4)
    # multiply along the path, sum over the two paths: the gradient
    assert sum(_edge_value(e) for e in into_y) * _edge_value(into_z) == \
        pytest.approx(grad, rel=5e-4)
    assert any("reverse accumulation" in line for line in g.nbtape_caption)


def test_chain_view_after_a_freed_tape_says_to_record_persistent():
    tape, x, y, z = cube_tape()
    tape.gradient(z, x)
    g = tape.graph(view="chain")
    assert all(e.label is None for e in g.nbtape_edges)
    assert any("persistent=True" in line for line in g.nbtape_caption)


def test_chain_view_leaves_jacobian_edges_unlabelled():
    x = nt.Variable(np.arange(10.0), name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = x * 2.0
        s = np.sum(y)
    tape.gradient(s, x)
    g = tape.graph(view="chain")
    assert edges(g, head="op0")[0].label is None
    assert any("Jacobians" in line for line in g.nbtape_caption)


def test_forward_view_shows_tangents():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape, nt.ForwardAccumulator(x, nt.constant(1.0)) as acc:
        tape.watch(x)
        y = x * x
        z = y * y
    g = tape.graph(target=z, view="forward", accumulator=acc, names={z: "z"})
    assert lines(g, "leaf0")[-1] == "tangent = 1.0"
    z_node = [n for n, i in g.nbtape_nodes.items() if i.lines[0] == "z = np.multiply"][0]
    assert lines(g, z_node)[-1] == f"tangent = {float(acc.jvp(z))}"
    assert f'color="{palette.FORWARD}"' in node_attrs(g, z_node)
    assert any("forward accumulation" in line for line in g.nbtape_caption)
    with pytest.raises(ValueError, match="accumulator"):
        tape.graph(view="forward")


# stepping through the reverse pass ---------------------------------------------------------
def _three_step_tape():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = x * x          # op0
        z = y + x          # op1
        w = z * y          # op2
    tape.gradient(w, x)
    return tape, x, y, z, w


def test_backward_steps_lists_the_reverse_order():
    tape, x, y, z, w = _three_step_tape()
    assert tape.backward_steps() == [2, 1, 0]
    assert tape.backward_steps(z, x) == [1, 0]


def test_backward_step_zero_knows_only_the_seed():
    tape, *_ = _three_step_tape()
    g = tape.graph(backward_step=0)
    assert "highlight" in tags(g, "op2") and lines(g, "op2")[-1] == "grad = 1.0 (seed)"
    assert lines(g, "op1")[-1] == "grad: pending"
    assert all("pending" in e.tags for e in g.nbtape_edges if "path" in e.tags)
    assert f'fillcolor="{palette.HIGHLIGHT}"' in node_attrs(g, "op2")
    assert g.nbtape_caption[-1].startswith("Reverse pass, 0 of 3 steps done: next, step 1, ")


def test_the_step_caption_counts_the_steps_done_and_names_the_op_as_its_box_does():
    tape, x, y, z, w = _three_step_tape()
    # backward_step=k: k steps done, the (k+1)th at work, called what its box is titled
    g = tape.graph(backward_step=1)
    assert re.fullmatch(r"Reverse pass, 1 of 3 steps done: next, step 2, np\.add \(line \d+ "
                        r"in _three_step_tape\) passes its grad to its inputs\.",
                        g.nbtape_caption[-1])
    named = tape.graph(backward_step=1, names={z: "z"})
    assert "next, step 2, z = np.add (line " in named.nbtape_caption[-1]
    assert ">z = np.add<" in named.source and "op 1" not in named.nbtape_caption[-1]


def test_backward_step_accumulates_then_finishes():
    tape, *_ = _three_step_tape()
    g = tape.graph(backward_step=1)       # op2 done; op1 being processed
    assert "done" in tags(g, "op2") and "highlight" in tags(g, "op1")
    assert lines(g, "op1")[-1] == "grad = 4.0"                      # dw/dz = y
    assert lines(g, "op0")[-1] == "grad: accumulating (1 of 2 uses done)"
    g = tape.graph(backward_step=3)
    assert not any("highlight" in i.tags for i in g.nbtape_nodes.values())
    assert lines(g, "op0")[-1] == "grad = 10.0"       # dw/dy = z + (dw/dz)(dz/dy) = 6 + 4
    assert lines(g, "leaf0")[-1] == "grad = 44.0"
    assert "complete" in g.nbtape_caption[-1]


def test_backward_step_errors():
    tape, *_ = _three_step_tape()
    with pytest.raises(ValueError, match="0 to 3"):
        tape.graph(backward_step=4)
    v = nt.Variable(1.0)
    with nt.GradientTape() as fresh:
        q = v * 2.0
    with pytest.raises(ValueError, match="target"):
        fresh.graph(backward_step=0)
    del q


def test_highlight_marks_a_tape_position():
    tape, *_ = _three_step_tape()
    g = tape.graph(highlight=np.int64(1))
    assert "highlight" in tags(g, "op1") and "highlight" not in tags(g, "op0")
    with pytest.raises(ValueError, match="tape position"):
        tape.graph(highlight=3)


# options -----------------------------------------------------------------------------------
def test_bad_options_are_clear_errors():
    tape, *_ = _three_step_tape()
    with pytest.raises(TypeError, match="max_nodes"):
        tape.graph(max_node=5)
    with pytest.raises(ValueError, match="view"):
        tape.graph(view="sideways")
    with pytest.raises(ValueError, match="rankdir"):
        tape.graph(rankdir="XY")
    with pytest.raises(ValueError, match="max_nodes"):
        tape.graph(max_nodes=2)
    with pytest.raises(TypeError, match="tensors or variables"):
        tape.graph(target=3.0)


def test_rankdir_reaches_the_dot():
    tape, *_ = _three_step_tape()
    assert "rankdir=TB" in tape.graph(rankdir="TB").source


def test_empty_tape_says_so():
    g = nt.GradientTape().graph()
    assert g.nbtape_nodes == {} and "no operations" in g.nbtape_caption[0]


# big tapes --------------------------------------------------------------------------------
def _loop_tape(n, persistent=False):
    y0 = nt.Variable(1.0, name="y0")
    with nt.GradientTape(persistent=persistent) as tape:
        y = y0 * 1.0
        for _ in range(n):
            y = y * 1.0001 + 0.001
    return tape, y0, y


def test_a_loop_collapses_to_its_first_and_last_step():
    tape, y0, y = _loop_tape(500)
    tape.gradient(y, y0)
    g = tape.graph(max_nodes=30)
    assert len(g.nbtape_nodes) <= 30
    groups = [i for n, i in g.nbtape_nodes.items() if n.startswith("skip")]
    assert len(groups) == 1
    assert groups[0].lines == ["... 996 ops not shown (op 3 to op 998)",
                               "the same 2-op step (np.multiply, np.add) 498 times"]
    kept = sorted(int(n[2:]) for n in g.nbtape_nodes if re.fullmatch(r"op\d+", n))
    assert kept == [0, 1, 2, 999, 1000]
    assert [(e.tail, e.head) for e in edges(g, head="skip0")] == [("op2", "skip0")]
    assert [e.tail for e in edges(g, head="op999") if e.tail.startswith("skip")] == ["skip0"]
    assert any(line.startswith("Showing 5 of 1,001 ops") for line in g.nbtape_caption)


def test_without_repetition_the_part_nearest_the_target_stays():
    x = nt.Variable(0.5, name="x")
    fns = [np.sin, np.cos, np.exp, np.tanh, np.arctan, np.sqrt, np.log1p]
    with nt.GradientTape() as tape:
        y = x
        for k in range(300):
            y = fns[(k * k + 3 * k) % 7](y) + 0.1
    tape.gradient(y, x)
    g = tape.graph(max_nodes=40)
    assert len(g.nbtape_nodes) <= 40
    last = len(tape.ops) - 1
    assert f"op{last}" in g.nbtape_nodes and f"op{last - 1}" in g.nbtape_nodes
    assert "leaf0" in g.nbtape_nodes                         # the source is always drawn
    assert any(n.startswith("skip") for n in g.nbtape_nodes)


@needs_engine
def test_ten_thousand_steps_draw_in_seconds():
    tape, y0, y = _loop_tape(10_000)
    tape.gradient(y, y0)
    start = time.perf_counter()
    g = tape.graph()
    svg = nt.render(g)
    elapsed = time.perf_counter() - start
    assert len(tape) == 20_001 and len(g.nbtape_nodes) <= 60
    assert b"9,998 times" in svg
    assert elapsed < 10, f"building and drawing took {elapsed:.1f} s"


def test_big_pictures_carry_a_collapsed_fallback():
    tape, y0, y = _loop_tape(100)
    tape.gradient(y, y0)
    big = tape.graph(max_nodes=1000)
    assert len(big.nbtape_nodes) > G.FALLBACK_NODES
    small = big.nbtape_fallback()
    assert len(small.nbtape_nodes) <= G.FALLBACK_NODES
    assert "took too long to lay out" in small.nbtape_caption[-1]
    assert tape.graph(max_nodes=10).nbtape_fallback is None


# stable output -------------------------------------------------------------------------------
def test_same_tape_content_gives_identical_dot():
    def picture():
        tape, x, y, z = cube_tape()
        tape.gradient(z, x)
        return tape.graph(names={y: "y"}, view="chain").source
    first, second = picture(), picture()
    assert first == second
    assert not re.search(r"0x[0-9a-f]{6,}", first)


_SCRIPT = textwrap.dedent("""
    import sys, numpy as np, nbtape as nt
    x = nt.Variable(np.array([1.0, 2.0]), name="x")
    with nt.GradientTape() as tape:
        y = np.sum(np.tanh(x) * x)
    tape.gradient(y, x)
    sys.stdout.write(nt.render(tape.graph(names={y: "y"})).decode())
""")


@needs_engine
def test_same_cell_gives_identical_svg_in_fresh_processes(tmp_path):
    script = tmp_path / "cell.py"
    script.write_text(_SCRIPT)
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed)), check=True).stdout
            for seed in (1, 2)]
    assert runs[0] == runs[1] and runs[0].rstrip().endswith("</svg>")


# the tape in a notebook ------------------------------------------------------------------
@needs_engine
def test_a_tape_displays_its_picture():
    tape, *_ = _three_step_tape()
    html = tape._repr_html_()
    assert "<svg" in html and "<?xml" not in html


def test_an_undrawable_graph_is_tried_once_per_display(monkeypatch):
    calls = []
    monkeypatch.setattr(R, "picture_bundle", lambda g, *a: calls.append(1) or {"text/plain": "x"})
    g = _three_step_tape()[0].graph()
    assert g._repr_mimebundle_() == {"text/plain": "x"} and g._repr_svg_() is None
    assert len(calls) == 1


def test_nt_render_is_exported():
    assert nt.render is R.render


def test_an_integer_cast_is_drawn_as_a_note_that_says_so():
    x = nt.Variable([0.5, 1.5], name="x")
    with nt.GradientTape() as tape:
        y = np.sum(x * 3.0) + np.sum(x.astype(int) * 2.0)
    g = tape.graph()
    notes = [" ".join(info.lines) for info in g.nbtape_nodes.values() if info.kind == "note"]
    assert any("became int64 through astype" in n and "no gradient" in n for n in notes), notes
