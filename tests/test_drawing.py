"""``nbtape.transforms.drawing``: the picture of a traced program."""
import operator

import numpy as np

import nbtape as nt
from nbtape.transforms.drawing import draw_program
from nbtape.transforms.trace import Slot


def test_each_step_is_a_node_and_each_use_an_edge():
    v = nt.Variable(1.0, name="w")
    kind = (np.dtype("float64"), ())
    steps = [("input", 0, "x"), ("read", 1, v),
             ("call", 2, "np.multiply", operator.mul, (Slot(0), Slot(1)), None, "forward"),
             ("call", 3, "np.cos", np.cos, (Slot(2),), None, "backward"),
             ("assign", 4, v, "assign_sub", 1, Slot(3), v.dtype, False)]
    g = draw_program(steps, Slot(2), {n: kind for n in range(5)})
    src = g.source
    assert "read w" in src and "np.multiply" in src and "w.assign_sub" in src
    assert "s0 -> s2" in src and "s1 -> s2" in src and "s3 -> s4" in src
    assert "s2 -> result" in src
    assert "#dbe9f6" in src and "#fde0c5" in src     # the two passes, two colours
