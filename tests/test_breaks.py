"""nbtape.tape.breaks: a path nbtape cannot follow raises or warns, naming the line (issue 11, item 4).

An object array (astype(object), np.frompyfunc) is recorded with no gradient, so the
gradient raises NoGradientRuleError naming where it was made; an integer or bool
result ends the path, and a None gradient says where; a Python value that an op
returned, int() and complex() leave the tape and say so.
"""
import math
import re
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_reverse


def _gradient(fn, x0=(0.3, 1.7)):
    x = nt.Variable(np.array(x0), name="x")
    with nt.GradientTape() as tape:
        y = fn(x)
    return tape.gradient(y, x)


# --- object arrays: refused, naming the op that made one ---------------------------------------------
@pytest.mark.parametrize("line, make", [
    ("lambda x: x.astype(object)", lambda x: x.astype(object)),
    ("(math.sin, 1, 1)(x)", lambda x: np.frompyfunc(math.sin, 1, 1)(x)),
    ("(math.modf, 1, 2)(x)[0]", lambda x: np.frompyfunc(math.modf, 1, 2)(x)[0]),
])
def test_gradient_through_an_object_array_raises_naming_the_line(line, make):
    with pytest.raises(nt.NoGradientRuleError) as info:
        _gradient(lambda x: np.sum((make(x) * 2).astype(float)))
    text = str(info.value)
    assert "object array" in text and "test_breaks.py" in text
    assert line in text                 # the user's line, quoted


def test_object_path_next_to_a_float_path_raises_instead_of_a_partial_gradient():
    # the float path alone would give 2x: silently wrong without the object path's 2
    with pytest.raises(nt.NoGradientRuleError, match="astype"):
        _gradient(lambda x: np.sum(x ** 2) + np.sum((x.astype(object) * 2).astype(float)))


def test_object_array_error_names_where_it_was_made_not_where_it_was_last_used():
    x = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        o = x.astype(object)   # made here
        p = o * 3.0
        y = np.sum(p.astype(float))
    with pytest.raises(nt.NoGradientRuleError, match="made here"):
        tape.gradient(y, x)


def test_object_values_compute_as_numpy_does():
    x0 = np.array([0.3, 1.7])
    with nt.GradientTape():
        r = np.frompyfunc(math.sin, 1, 1)(nt.Variable(x0))
    assert r.dtype == object
    np.testing.assert_allclose(r.numpy().astype(float), np.sin(x0))


def test_object_array_result_that_is_a_python_float_warns_naming_the_line():
    with pytest.warns(UserWarning, match=r"np\.sum, which returned a plain float.*test_breaks"):
        assert _gradient(lambda x: np.sum(x.astype(object))) is None


# --- integer and bool results: None, with the line --------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_cast_to_integer_or_bool_warns_naming_dtype_and_line(dtype):
    with pytest.warns(UserWarning, match=rf"became {dtype}.*astype.*test_breaks\.py"):
        assert _gradient(lambda x: np.sum(x.astype(dtype) * 2.0)) is None


def test_zero_policy_warns_too():
    x = nt.Variable([0.5, 1.5])
    with nt.GradientTape() as tape:
        y = np.sum(x.astype(int) * 1.0)
    with pytest.warns(UserWarning, match="int64"):
        g = tape.gradient(y, x, unconnected_gradients="zero")
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_integer_path_beside_a_float_path_contributes_zero_like_finite_differences():
    x0 = np.array([0.3, 1.7, -2.4])     # away from integers: the cast is locally flat
    check_reverse(lambda x: np.sin(x) * x + x.astype(int) * 3.0 + np.floor(x) * x, x0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # a gradient that is not None: no warning
        _gradient(lambda x: np.sum(x ** 2 + x.astype(int)))


# --- values that leave the tape ----------------------------------------------------------------------
@pytest.mark.parametrize("how, fn", [
    ("int()", lambda x: int(x[1]) * 1.0),
    ("complex()", lambda x: complex(x[1]) * 2.0),
    ("float()", lambda x: float(x[1]) * 2.0),
])
def test_python_number_conversions_are_noted_escapes(how, fn):
    x = nt.Variable([0.5, 2.5])
    with nt.GradientTape(persistent=True) as tape:
        y = fn(x)
    with pytest.warns(UserWarning, match=re.escape(how)):
        assert tape.gradient(y, x) is None
    assert how in str(tape.explain(y, x))
