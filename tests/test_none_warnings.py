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
