"""``nbtape.transforms.program``: a traced program as one generated Python function
(the same numpy calls, in order, on raw arrays) and as text."""
import operator

import numpy as np

import nbtape as nt
from nbtape.transforms.program import compile_program, listing, source
from nbtape.transforms.trace import Slot


def _steps():
    return [("input", 0, "x"),
            ("call", 1, "np.sin", np.sin, (Slot(0),), None, "forward"),
            ("call", 2, "np.multiply", operator.mul, (Slot(1), 2.0), None, "forward"),
            ("call", 3, "np.sum", np.sum, (Slot(2),), {"axis": 0}, "backward")]


def test_operators_are_written_as_operators_other_calls_by_name():
    text, ns = source(_steps(), [Slot(3), Slot(1)])
    assert "v2 = v1 * c" in text and "sum_" in text and "axis=0" in text
    assert ns["_wrap"] is not None


def test_the_compiled_function_computes_the_calls():
    replay = compile_program(_steps(), (Slot(3), "a constant"))
    total, const = replay(np.array([0.5, 1.0]))
    assert isinstance(total, nt.Tensor) and const == "a constant"
    assert total.numpy() == np.sum(np.sin(np.array([0.5, 1.0])) * 2.0, axis=0)


def test_an_assignment_writes_the_variable():
    v = nt.Variable([1.0, 2.0])
    steps = [("input", 0, "x"), ("read", 1, v),
             ("assign", 2, v, "assign_sub", 1, Slot(0), v.dtype, True)]
    compile_program(steps, None)(np.array([0.5, 0.5]))
    assert v.numpy().tolist() == [0.5, 1.5] and not np.asarray(v).flags.writeable


def test_the_listing_names_inputs_and_marks_the_backward_pass():
    kind = (np.dtype("float64"), (2,))
    text = listing(_steps(), Slot(3), {n: kind for n in range(4)})
    assert text.splitlines()[0] == "{ lambda x:float64[2] ."
    assert "v1:float64[2] = np.sin(x)" in text and "# backward pass" in text
    assert "np.sum(v2, axis=0)" in text
