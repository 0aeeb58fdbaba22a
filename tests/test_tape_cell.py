"""nt.tape_cell: %%tape's job as a context manager, for marimo and plain Python (tape_cell.py)."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.core.state import tls
from nbtape.notebook.tape_cell import TapeCell, in_marimo


def test_the_block_is_summarised_as_the_magic_summarises_a_cell():
    x = nt.constant(3.0)
    w = nt.Variable(np.array([1.0, 2.0]), name="w")
    with nt.tape_cell(watch=[x], grad="loss") as cell:
        y = x * w
        loss = np.sum(y ** 2)
    assert not cell.tape.recording and tls.stack == []
    text = str(cell)
    assert text.startswith("tape: 3 ops recorded (persistent)")
    assert "watched: x (shape=(), float64), w (shape=(2,), float64)" in text
    assert "results: y = [3.0 6.0], loss = 45.0" in text
    rows = {r.label: r.gradient for r in cell.report.rows}
    np.testing.assert_allclose(rows["x"], 2 * 3.0 * (1 + 4))
    np.testing.assert_allclose(rows["w"], 2 * 9.0 * np.array([1.0, 2.0]))
    assert "nt.tape_cell \u2192 tape" in cell._repr_html_()
    assert cell.tape.gradient(y, x) is not None          # persistent, as %%tape's is


def test_not_persistent_and_no_auto_watch_are_the_magics_options():
    w = nt.Variable(2.0, name="w")
    with nt.tape_cell(persistent=False, watch_accessed_variables=False, grad="z") as cell:
        z = w * w
    assert cell.report.rows == [] and "gradients of z: nothing is watched" in str(cell)
    assert not cell.tape.persistent and "(non-persistent)" in str(cell).split("\n")[0]
    assert z.numpy() == 4.0


def test_an_error_stops_recording_keeps_the_tape_and_propagates():
    x = nt.constant(2.0)
    with pytest.raises(ZeroDivisionError):
        with nt.tape_cell(watch=[x]) as cell:
            y = x * x
            1 / 0
    assert not cell.tape.recording and tls.stack == [] and len(cell.tape.ops) == 1
    assert "Recording stopped by ZeroDivisionError" in str(cell)
    assert float(cell.tape.gradient(y, x)) == 4.0


def test_recorders_the_block_left_open_are_stopped():
    x = nt.constant(1.0)
    with nt.tape_cell(watch=[x]) as cell:
        inner = nt.GradientTape()
        inner.__enter__()                 # never left
        y = x + 1.0
    assert tls.stack == [] and not inner.recording
    assert "left 1 recorder(s) open" in str(cell) and y.numpy() == 2.0


def test_the_graph_and_the_inspector_are_parts_of_the_summary():
    w = nt.Variable(2.0, name="w")
    with nt.tape_cell(graph=True, inspect=True, grad="loss") as cell:
        loss = np.sin(w) * w
    assert cell.parts() == [cell.report, cell.picture, cell.inspector]
    assert "np.sin" in cell.picture.source and "loss" in cell.picture.source
    assert cell.inspector.variables == [w] and "w" in repr(cell.inspector)
    cell.inspector.close()


def test_a_grad_name_the_block_did_not_bind_to_a_tensor_is_a_note():
    x = nt.constant(2.0)
    with nt.tape_cell(watch=[x], grad="loss") as cell:
        loss = float(x * x)             # noqa: F841 - it left the tape
    assert "grad='loss': the block did not bind 'loss' to a tensor (float)" in str(cell)


def test_bad_options_say_what_to_pass():
    with pytest.raises(TypeError, match=r"wrap it first \(x = nt.constant\(3.0\)\)"):
        nt.tape_cell(watch=[3.0])
    with pytest.raises(TypeError, match="the name of the target, as a string"):
        nt.tape_cell(grad=nt.constant(1.0))
    assert isinstance(nt.tape_cell(watch=nt.constant(1.0)), TapeCell)   # one value: fine


def test_marimo_gets_one_stack_of_the_parts():
    mo = pytest.importorskip("marimo")
    assert not in_marimo()              # imported, but no notebook is running here
    w = nt.Variable(2.0, name="w")
    with nt.tape_cell(graph=True, grad="loss") as cell:
        loss = w * w
    shown = cell._display_()
    assert isinstance(shown, mo.Html) and "d" in shown.text and "<svg" in shown.text
    assert cell.picture._mime_()[0] == "image/svg+xml"
