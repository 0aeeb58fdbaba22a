"""nbtape/tape/arguments.py: what users pass to ``GradientTape.gradient``, checked.

``unconnected_gradients=`` as the enum or a string, the sources flattened (a source
that is not a tensor raises, an integer one is flagged), the messages for a plain
value and an integer source, and each ``output_gradients`` entry as a seed of its
target's shape and dtype.
"""
import warnings

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.tensor import Tensor
from nbtape.tape.arguments import (UnconnectedGradients, checked_sources, int_source_message,
                                   not_a_tensor_message, output_gradient, unconnected_policy)


@pytest.mark.parametrize("value, policy", [
    (UnconnectedGradients.NONE, UnconnectedGradients.NONE),
    (UnconnectedGradients.ZERO, UnconnectedGradients.ZERO),
    ("none", UnconnectedGradients.NONE),
    ("zero", UnconnectedGradients.ZERO),
    ("ZERO", UnconnectedGradients.ZERO),
    ("None", UnconnectedGradients.NONE),
])
def test_unconnected_policy(value, policy):
    assert unconnected_policy(value) is policy


@pytest.mark.parametrize("value", ["zeros", 0, "nan", UnconnectedGradients])
def test_unconnected_policy_refuses_anything_else(value):
    with pytest.raises(ValueError, match=r"unconnected_gradients must be .*'none' / 'zero'"):
        unconnected_policy(value)


def test_the_policy_is_nt_unconnected_gradients_and_reaches_gradient():
    assert nt.UnconnectedGradients is UnconnectedGradients
    x, u = nt.constant([1.0, 2.0]), nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = np.sum(x * x)
    assert tape.gradient(y, u, unconnected_gradients="none") is None
    z = tape.gradient(y, u, unconnected_gradients="Zero")
    assert float(z) == 0.0 and z.dtype == np.float64
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="zeros")


def test_checked_sources_flattens_and_flags_integer_sources():
    a, b, v = nt.constant(1.0), nt.constant(np.array([1, 2])), nt.Variable(1.0)
    flat, ints = checked_sources({"a": a, "rest": [v, (b,)]})
    assert flat == [a, v, b] and ints is True
    flat, ints = checked_sources([a, v])
    assert flat == [a, v] and ints is False
    flat, ints = checked_sources(nt.constant(np.array([True])))
    assert ints is True
    flat, ints = checked_sources(nt.constant(1j))
    assert ints is False


@pytest.mark.parametrize("bad", [3.0, np.ones(2), [nt.constant(1.0), "x"], {"k": None}])
def test_checked_sources_refuses_what_is_not_a_tensor(bad):
    with pytest.raises(TypeError, match=r"tape.gradient\(\)"):
        checked_sources(bad)


@pytest.mark.parametrize("value, words", [
    (3.0, "got a plain float as its source"),
    (2, "got a plain int as its source"),
    (np.ones(2), "got a plain ndarray as its source"),
    (np.float32(1.0), "got a plain float32 as its source"),
    ([1.0], "got a plain list as its source"),
])
def test_a_plain_number_or_array_is_told_to_wrap_it(value, words):
    text = not_a_tensor_message("gradient", value, role="source")
    assert text.startswith("tape.gradient() " + words)
    assert "nt.constant(x)" in text and "nt.Variable(x)" in text


def test_anything_else_is_named_by_its_type():
    assert not_a_tensor_message("watch", "x") == \
        "tape.watch() needs nbtape tensors or variables as values, not str."
    assert not_a_tensor_message("jacobian", None, role="target") == \
        "tape.jacobian() needs nbtape tensors or variables as targets, not NoneType."


def test_int_source_message_names_the_variable_and_suggests_a_float():
    text = int_source_message(nt.Variable(np.array([3, 4]), name="count"))
    assert "variable 'count'" in text and "int64" in text
    assert "did you mean 3.0 instead of 3?" in text
    text = int_source_message(nt.constant(np.array([True])))
    assert "this source" in text and "bool" in text and "did you mean" not in text
    assert "did you mean" not in int_source_message(nt.constant(np.zeros(0, dtype=int)))


def test_an_integer_source_gives_none_with_that_message_as_a_warning():
    v = nt.Variable(2, name="steps")
    with nt.GradientTape() as tape:
        y = v * 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tape.gradient(y, v) is None
    assert [str(w.message) for w in caught] == [int_source_message(v)]


# --- output_gradients ---------------------------------------------------------------------------
def test_output_gradient_makes_an_array_of_the_targets_dtype():
    y = Tensor(np.zeros(2, dtype=np.float32))
    seed = output_gradient([1, 2], y)
    assert type(seed) is np.ndarray and seed.dtype == np.float32 and seed.tolist() == [1.0, 2.0]
    seed = output_gradient(np.array([True, False]), y)
    assert seed.dtype == np.float32 and seed.tolist() == [1.0, 0.0]
    t = nt.constant(np.array([3.0, 4.0]))
    assert output_gradient(t, Tensor(np.zeros(2))) is t
    assert output_gradient(nt.Variable([1.0, 1.0]), y).dtype == np.float32


def test_output_gradient_may_be_complex_for_a_complex_target():
    y = Tensor(np.zeros(2, dtype=np.complex128))
    seed = output_gradient([1j, 2.0], y)
    assert seed.dtype == np.complex128 and seed.tolist() == [1j, 2.0]


@pytest.mark.parametrize("og, error, words", [
    ("ab", TypeError, r"holds a str \('ab'\); it must be numbers"),
    ([None, 1.0], TypeError, "holds a list"),
    ([[1.0], [1.0, 2.0]], TypeError, "holds a list"),
    (np.array([1j, 1.0]), ValueError, "imaginary part would be silently dropped"),
    (np.ones(3), ValueError, r"shape \(3,\) but its target has shape \(2,\)"),
    (1.0, ValueError, r"shape \(\) but its target has shape \(2,\)"),
])
def test_output_gradient_refuses_a_mistake_clearly(og, error, words):
    with pytest.raises(error, match=words):
        output_gradient(og, Tensor(np.zeros(2)))


def test_output_gradients_weight_the_target_in_gradient():
    x = nt.constant(np.array([1.0, 2.0]))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=np.array([3, -1]))
    np.testing.assert_array_equal(g.numpy(), [6.0, -4.0])
