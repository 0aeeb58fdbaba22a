"""``nbtape.transforms.trace``: the tracer keeps every numpy call as a step of a program,
follows values by identity, and refuses a value that leaves for Python."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.core.state import tls
from nbtape.transforms.trace import Slot, Tracer, TracingError, refusal_message


def _traced(fn, *inputs):
    tr = Tracer()
    ts = [nt.constant(x) for x in inputs]
    for k, t in enumerate(ts):
        tr.add_input(t, f"x{k}")
    tls.stack.append(tr)
    try:
        out = fn(*ts)
    finally:
        tls.stack.remove(tr)
    tr.finish()
    return tr, out


def test_calls_on_constants_alone_are_folded_into_constants():
    c = nt.constant(2.0)
    tr, _ = _traced(lambda x: x * np.exp(c), np.ones(2))
    names = [s[2] for s in tr.steps if s[0] == "call"]
    assert names == ["np.multiply"]             # np.exp(c) is a constant of the program
    assert type(tr.steps[1][4][0]) is Slot and tr.steps[1][4][1] == np.exp(2.0)


def test_a_comparison_is_a_step_though_no_tape_keeps_it():
    tr, _ = _traced(lambda x: np.where(x > 0, x, 0.0), np.ones(2))
    assert [s[2] for s in tr.steps if s[0] == "call"] == ["np.greater", "np.where"]


def test_reads_and_assignments_of_variables_are_steps():
    v = nt.Variable([1.0, 2.0])
    tr, _ = _traced(lambda x: v.assign_add(x * v), np.ones(2))
    kinds = [s[0] for s in tr.steps]
    assert kinds == ["input", "read", "call", "assign"]
    assert tr.steps[3][2] is v and tr.steps[3][3] == "assign_add"
    tr.restore()
    assert v.numpy().tolist() == [1.0, 2.0]


def test_a_value_leaving_for_python_is_refused_a_constant_is_not():
    c = nt.constant(3.0)
    _traced(lambda x: x * float(c), np.ones(2))        # a constant: fine
    with pytest.raises(TracingError, match="float"):
        _traced(lambda x: x * float(np.sum(x)), np.ones(2))


def test_the_refusal_message_names_the_fix():
    msg = refusal_message("bool()", None)
    assert "np.where" in msg and "frozen" in msg
