"""NaN and inf on tape pictures (nbtape/notebook/graph/nonfinite.py): the boxes that hold
one say how many, the op where the first was born is marked, and a legend says so."""
import re
import warnings

import numpy as np

import nbtape as nt
from nbtape.display import palette
from nbtape.notebook import graph as G

RED = palette.NONFINITE


def sqrt_where_tape(x0, persistent=True, gradient=True):
    """sum(where(x > 0, sqrt(x), 0)): at x = 0 the discarded branch's 0 x inf is a NaN."""
    x = nt.Variable(np.array(x0), name="x")
    with nt.GradientTape(persistent=persistent) as tape:
        y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))
    if gradient:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tape.gradient(y, x)
    return tape, x, y


def softplus_tape():
    """log(1 + e^x) at x = 100 in float32: exp overflows, and its gradient is 0 x inf."""
    x = nt.Variable(np.float32(100.0), name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nt.GradientTape(persistent=True) as tape:
            y = np.log(1 + np.exp(x))
        tape.gradient(y, x)
    return tape, x, y


def node_attrs(g, name):
    m = re.search(rf"^\t{re.escape(name)} \[(.*)\]$", g.source, re.M)
    assert m, f"no node {name} in the DOT"
    return m.group(1)


def born(g):
    return [name for name, info in g.nbtape_nodes.items() if "born" in info.tags]


def marked(g):
    return [name for name, info in g.nbtape_nodes.items() if "nonfinite" in info.tags]


def test_a_nan_gradient_is_counted_and_its_birth_at_sqrt_is_marked():
    tape, x, y = sqrt_where_tape([0.0, 4.0])
    g = tape.graph(names={y: "y"})
    # x's grad [nan, 0.25]: the box says how many, with a red border
    assert "dy/dx has 1 NaN of 2" in g.nbtape_nodes["leaf0"].lines
    assert marked(g) == ["leaf0"]
    assert f'color="{RED}"' in node_attrs(g, "leaf0") and "penwidth=4" in node_attrs(g, "leaf0")
    # the NaN was born in sqrt's backward step (op 0), not in where or sum
    assert tape.ops[0].rule.name == "np.sqrt"
    assert born(g) == ["op0"]
    assert g.nbtape_nodes["op0"].lines[-1] == "NaN born here: 0 x inf"
    attrs = node_attrs(g, "op0")
    assert "peripheries=2" in attrs and f'color="{RED}"' in attrs
    assert "NaN born here: 0 x inf" in g.source
    # the legend explains both marks, in words
    assert "Thick reddish-purple border: a value or grad with NaN or inf; its label counts them." in \
        g.nbtape_caption
    assert any(line.startswith("Reddish-purple double border: np.sqrt (op 0, line ") and
               "where the first NaN was born, in the reverse pass: 0 x inf" in line
               for line in g.nbtape_caption)
    assert "Reddish-purple double border: np.sqrt" in g.source


def test_overflow_in_exp_marks_the_inf_values_and_the_nan_born_at_exp():
    tape, x, y = softplus_tape()
    g = tape.graph(names={y: "y"})
    assert tape.ops[0].rule.name == "np.exp" and born(g) == ["op0"]
    assert "value has 1 inf" in g.nbtape_nodes["op0"].lines
    assert "NaN born here: 0 x inf" in g.nbtape_nodes["op0"].lines
    assert "dy/dx has 1 NaN" in g.nbtape_nodes["leaf0"].lines
    assert marked(g) == ["leaf0", "op0", "op1", "op2"]
    # values only (no grads drawn): the inf itself was born in exp's forward step
    g = tape.graph(names={y: "y"}, show_grads=False)
    assert born(g) == ["op0"]
    assert "inf born here: overflow in exp" in g.nbtape_nodes["op0"].lines
    assert any("where the first inf was born, in the forward pass: overflow in exp" in line
               for line in g.nbtape_caption)


def test_the_birth_is_found_on_a_tape_that_never_warned():
    # no gradient call: the picture recomputes the grads, and walks the records for the birth
    tape, x, y = sqrt_where_tape([0.0, 4.0], gradient=False)
    assert tape.last_nonfinite is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = tape.graph(target=y, sources=x)
    assert born(g) == ["op0"] and "grad has 1 NaN of 2" in g.nbtape_nodes["leaf0"].lines


def test_a_used_tape_marks_the_birth_its_warning_named():
    # a non-persistent tape freed its values in gradient(): its last_nonfinite is used
    tape, x, y = sqrt_where_tape([0.0, 4.0], persistent=False)
    assert tape.last_nonfinite.name == "np.sqrt"
    g = tape.graph()
    assert born(g) == ["op0"] and marked(g) == ["leaf0"]


def test_a_finite_tape_has_no_marks_and_no_legend_for_them():
    finite_tape, _, fy = sqrt_where_tape([1.0, 4.0])
    nan_tape, _, ny = sqrt_where_tape([0.0, 4.0])
    fine, bad = finite_tape.graph(names={fy: "y"}), nan_tape.graph(names={ny: "y"})
    assert marked(fine) == born(fine) == []
    assert not any("Red" in line for line in fine.nbtape_caption)
    assert RED not in fine.source and "NaN" not in fine.source
    # the same picture with a NaN differs only by its marks
    assert marked(bad) == ["leaf0"] and born(bad) == ["op0"]
    assert len(bad.nbtape_caption) == len(fine.nbtape_caption) + 2


def test_the_birth_is_marked_once_the_reverse_pass_reaches_it():
    tape, x, y = sqrt_where_tape([0.0, 4.0])
    steps = tape.backward_steps()
    assert steps == [2, 1, 0]
    before = [G.tape_graph(tape, backward_step=k) for k in (0, 1)]
    assert [born(g) for g in before] == [[], []]
    at = G.tape_graph(tape, backward_step=2)       # sqrt's step: the NaN is made here
    assert born(at) == ["op0"] and "highlight" in at.nbtape_nodes["op0"].tags
    assert marked(at) == []                       # x's grad is still pending
    done = G.tape_graph(tape, backward_step=3)
    assert born(done) == ["op0"] and marked(done) == ["leaf0"]


def test_a_nan_picture_has_the_same_dot_every_time():
    sources = {sqrt_where_tape([0.0, 4.0])[0].graph().source for _ in range(3)}
    assert len(sources) == 1
    source = sources.pop()
    assert "NaN born here: 0 x inf" in source and "peripheries=2" in source


def test_a_nan_that_came_in_with_the_data_is_drawn_as_such():
    x = nt.Variable(np.array([1.0, 2.0, 3.0]), name="x")
    data = np.array([1.0, np.nan, 2.0])
    with nt.GradientTape(persistent=True) as tape:
        y = np.sum(x * data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tape.gradient(y, x)
    g = tape.graph()
    assert born(g) == ["op0"]
    assert "NaN came in here, with the data" in g.nbtape_nodes["op0"].lines
    assert any("was born, with the data" in line for line in g.nbtape_caption)
    assert not any("forward pass" in line for line in g.nbtape_caption)
