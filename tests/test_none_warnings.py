"""The warnings that go with a None (or incomplete) gradient whose path left the tape
(nbtape/tape/none_warnings.py): each names the escape on the path asked for, at
its line, and says nothing when no escape is on it."""
import inspect
import math
import warnings

import numpy as np
import pytest

import nbtape as nt


def _line():
    return inspect.currentframe().f_back.f_lineno


def test_a_none_gradient_names_the_escape_on_its_path():
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = x * 3.0
        at = _line() + 1
        z = nt.constant(float(y)) * 2.0
    with pytest.warns(UserWarning, match=f"line {at}") as caught:
        assert tape.gradient(z, x) is None
    assert "float()" in str(caught[0].message)


def test_no_escape_on_the_path_no_warning():
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = x * 3.0
        float(y)                         # escapes, but y itself is the target
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(tape.gradient(y, x)) == 3.0


def test_a_gradient_that_lost_a_part_through_an_escape_says_it_may_be_incomplete():
    v = nt.Variable(np.array([1.0, 2.0]))
    with nt.GradientTape() as tape:
        y = math.exp(v[0]) * v[1]
    with pytest.warns(UserWarning, match="incomplete"):
        g = tape.gradient(y, v)
    np.testing.assert_allclose(g.numpy(), [0.0, math.e])       # TensorFlow's values


# --- the "may be incomplete" warning: only where a share can go missing (issue 35) -------------
def test_control_flow_on_a_value_is_a_right_gradient_and_says_nothing():
    # bool() and int() give step functions of the source: their derivative is zero wherever
    # it exists, so no share is missing (main warned "may be incomplete" here)
    v = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = v[1] * 2.0 if v[0] else v[1]
        z = y * int(v[0] * 3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tape.gradient(z, v).numpy(), [0.0, 6.0])


def test_an_escape_that_feeds_another_target_does_not_taint_this_one():
    v = nt.Variable([1.0, 2.0])
    with nt.GradientTape(persistent=True) as tape:
        y = v[1] * 2.0
        z = math.exp(v[0]) * v[1]           # a float escape, on z's path only
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tape.gradient(y, v).numpy(), [0.0, 2.0])
    with pytest.warns(UserWarning, match="incomplete"):
        tape.gradient(z, v)


def test_integer_escapes_cost_no_scan_of_the_tape(monkeypatch):
    from nbtape.tape import none_warnings

    def no_scan(*args):
        raise AssertionError("the tape was scanned for an escape that cannot lose a share")
    monkeypatch.setattr(none_warnings, "forward_reach", no_scan)
    monkeypatch.setattr(none_warnings, "backward_steps", no_scan)
    x = nt.Variable(0.5)
    with nt.GradientTape() as tape:
        term, total = x, x
        for i in range(6):
            if term:                        # bool() of a float value, every iteration
                term = -term * x * x / ((2 * i + 3) * (2 * i + 2))
                total = total + term
    assert [n.detail for n in tape.notes] and {n.detail for n in tape.notes} == {"bool()"}
    assert abs(float(tape.gradient(total, x)) - math.cos(0.5)) < 1e-6
