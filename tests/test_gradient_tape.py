"""nt.GradientTape: watch, gradient, persistence, stop_recording, reset."""
import collections
import sys
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_reverse, numeric_grad
from nbtape.diagnostics.errors import TapeConsumedError


def watched(*values, **kw):
    return [nt.constant(v, **kw) for v in values]


# --- basics --------------------------------------------------------------------------------------------
def test_scalar_gradient():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x ** 3
    g = tape.gradient(y, x)
    assert type(g) is nt.Tensor
    assert float(g) == 27.0


def test_context_manager_returns_the_tape():
    tape = nt.GradientTape()
    with tape as t:
        assert t is tape


def test_ops_after_the_block_are_not_recorded():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    z = y * 2.0
    assert float(tape.gradient(y, x)) == 6.0
    assert tape.gradient(z, x) is None


def test_gradient_with_respect_to_an_intermediate():
    x = nt.constant([3.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, y).numpy(), [18.0, 18.0])


def test_gradient_of_a_watched_source_with_respect_to_itself():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(tape.gradient(x, x).numpy(), [1.0, 1.0])


def test_watched_after_use_gives_none():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        y = x * x
        tape.watch(x)
    assert tape.gradient(y, x) is None


def test_reentering_a_persistent_tape_keeps_recording():
    x = nt.constant(2.0)
    tape = nt.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = x * x
    with tape:
        z = y * x
    assert float(tape.gradient(z, x)) == 12.0     # d(x^3)/dx


# --- persistence ----------------------------------------------------------------------------------
def test_non_persistent_second_gradient_is_runtime_error():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_non_persistent_jacobian_after_gradient_is_runtime_error():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        tape.jacobian(y, x)


def test_non_persistent_second_jacobian_is_runtime_error():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError):
        tape.jacobian(y, x)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_persistent_tape_answers_many_times():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, x)) == 108.0
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), 6.0)
    assert tape.persistent is True


def test_gradient_inside_the_block_is_allowed():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        g = tape.gradient(y, x)
    assert float(g) == 6.0


# --- watch ---------------------------------------------------------------------------------------------------
def test_watch_list_tuple_dict():
    a, b, c, d = watched(1.0, 2.0, 3.0, 4.0)
    with nt.GradientTape() as tape:
        tape.watch([a, (b, {"c": c})])
        tape.watch({"d": d})
        y = a * b * c * d
    ga, gb, gc, gd = tape.gradient(y, [a, b, c, d])
    assert [float(g) for g in (ga, gb, gc, gd)] == [24.0, 12.0, 8.0, 6.0]


def test_watch_a_variable_list():
    vs = [nt.Variable(1.0, trainable=False), nt.Variable(2.0, trainable=False)]
    with nt.GradientTape() as tape:
        tape.watch(vs)
        y = vs[0] * vs[1]
    assert [float(g) for g in tape.gradient(y, vs)] == [2.0, 1.0]


@pytest.mark.parametrize("value", [np.array([1.0, 2.0]), 3.0, 2, np.float64(1.0),
                                   [nt.constant(1.0), np.array(2.0)]],
                         ids=["ndarray", "float", "int", "npscalar", "list-with-ndarray"])
def test_watch_plain_values_is_type_error_pointing_to_constant(value):
    with nt.GradientTape() as tape:
        with pytest.raises(TypeError, match=r"nt\.constant"):
            tape.watch(value)


def test_watch_twice_is_harmless():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 4.0


# --- watched_variables -----------------------------------------------------------------------------------
def test_watched_variables_in_creation_order():
    a = nt.Variable(1.0, name="a")
    b = nt.Variable(2.0, name="b")
    c = nt.Variable(3.0, name="c")
    with nt.GradientTape() as tape:
        y = c * b
        y = y * a
    ws = tape.watched_variables()
    assert isinstance(ws, tuple)
    assert [v.name for v in ws] == ["a", "b", "c"]


def test_watched_variables_creation_order_with_explicit_watch():
    a = nt.Variable(1.0, name="a")
    b = nt.Variable(2.0, name="b")
    with nt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([b, a])
        tape.watch(nt.constant(1.0))        # tensors are not variables
    assert tape.watched_variables() == (a, b)


def test_watched_variables_creation_order_survives_assign():
    a = nt.Variable(1.0)
    b = nt.Variable(2.0)
    a.assign(5.0)
    with nt.GradientTape() as tape:
        _ = a * b
    assert tape.watched_variables() == (a, b)


def test_watch_accessed_variables_false():
    x = nt.Variable(2.0)
    y = nt.Variable(3.0)
    with nt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(y)
        z = x + y ** 2
    assert tape.watched_variables() == (y,)
    assert tape.gradient(z, x) is None
    assert float(tape.gradient(z, y)) == 6.0


# --- gradient: structure of sources ----------------------------------------------------------------------
def test_sources_list_tuple_dict_keep_structure():
    a, b, c = watched(1.0, 2.0, 3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([a, b, c])
        y = a * 1.0 + b * 2.0 + c * 3.0
    gl = tape.gradient(y, [a, b])
    assert type(gl) is list and [float(g) for g in gl] == [1.0, 2.0]
    gt = tape.gradient(y, (a, b))
    assert type(gt) is tuple and [float(g) for g in gt] == [1.0, 2.0]
    gd = tape.gradient(y, {"a": a, "c": c})
    assert type(gd) is dict and list(gd) == ["a", "c"]
    assert float(gd["a"]) == 1.0 and float(gd["c"]) == 3.0


def test_nested_sources_keep_structure():
    a, b, c, d = watched(1.0, 2.0, 3.0, 4.0)
    v = nt.Variable(5.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b, c, d])
        y = a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * v
    g = tape.gradient(y, {"x": [a, (b, c)], "y": {"z": d, "v": v}})
    assert set(g) == {"x", "y"}
    assert type(g["x"]) is list and type(g["x"][1]) is tuple
    assert float(g["x"][0]) == 1.0
    assert [float(t) for t in g["x"][1]] == [2.0, 3.0]
    assert float(g["y"]["z"]) == 4.0 and float(g["y"]["v"]) == 5.0


def test_nested_sources_with_unconnected_leaf():
    a, b = watched(1.0, 2.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        y = a * 2.0
    g = tape.gradient(y, {"a": a, "rest": [b]})
    assert float(g["a"]) == 2.0 and g["rest"] == [None]


Pair = collections.namedtuple("Pair", "first second")


def test_namedtuple_sources_keep_structure():
    """TensorFlow's nest (which GradientTape uses) treats namedtuples as structures."""
    a, b = watched(1.0, 2.0)
    with nt.GradientTape() as tape:
        tape.watch(Pair(a, b))
        y = a * 3.0 + b * 4.0
    g = tape.gradient(y, Pair(a, b))
    assert type(g) is Pair
    assert float(g.first) == 3.0 and float(g.second) == 4.0


def test_same_source_twice():
    (a,) = watched(2.0)
    with nt.GradientTape() as tape:
        tape.watch(a)
        y = a * a
    g1, g2 = tape.gradient(y, [a, a])
    assert float(g1) == float(g2) == 4.0


def test_non_tensor_source_is_type_error():
    (a,) = watched(2.0)
    with nt.GradientTape() as tape:
        tape.watch(a)
        y = a * a
    with pytest.raises(TypeError, match=r"nt\.constant"):
        tape.gradient(y, np.array(2.0))


# --- gradient: targets ----------------------------------------------------------------------------------------
def test_non_scalar_target_is_summed():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * np.array([3.0, 4.0])
    assert float(tape.gradient(y, x)) == 7.0


def test_list_of_targets_is_summed():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y1 = x * x
        y2 = x * np.array([1.0, 2.0])
        y3 = np.sin(x)
    np.testing.assert_allclose(float(tape.gradient([y1, y2, y3], x)),
                               4.0 + 3.0 + np.cos(2.0))


def test_same_target_twice_counts_twice():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient([y, y], x)) == 8.0


def test_target_list_including_the_source():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient([y, x], x)) == 5.0


# A target that is also a source: the identity, watched or not (TensorFlow seeds
# "sources that are targets" with ones; its guide's `result = v0` gives dv0 = 1.0).
def test_a_variable_that_is_the_target_has_gradient_one():
    x = nt.constant(1.0)
    v0, v1 = nt.Variable(2.0), nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0             # reads nothing: v0 is never watched
        else:
            result = v1 ** 2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert float(dv0) == 1.0 and dv1 is None
    assert tape.watched_variables() == ()     # gradient() does not watch it after the fact


@pytest.mark.parametrize("make", [
    lambda: nt.Variable([1.0, 2.0], trainable=False),
    lambda: nt.constant([1.0, 2.0]),
])
@pytest.mark.parametrize("auto", [True, False])
def test_an_unwatched_target_that_is_the_source_has_gradient_one(make, auto):
    x = make()
    with nt.GradientTape(watch_accessed_variables=auto) as tape:
        pass
    g = tape.gradient(x, x)
    assert g.dtype == x.dtype
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])


def test_a_target_list_with_an_unwatched_source_and_output_gradients():
    v = nt.Variable(3.0)
    w = nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        y = w * w
    assert float(tape.gradient([y, v], v)) == 1.0
    assert float(tape.gradient([y, v], v, output_gradients=[5.0, 7.0])) == 7.0
    gw, gv = tape.gradient([y, v], [w, v], output_gradients=[5.0, 7.0])
    assert (float(gw), float(gv)) == (20.0, 7.0)
    assert tape.gradient([y, v], [w, nt.Variable(1.0)])[1] is None


def test_unconnected_target_in_a_list_is_ignored():
    x = nt.constant(2.0)
    other = nt.constant(5.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    assert float(tape.gradient([y, other], x)) == 3.0


# --- output_gradients ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("wrap", [np.array, nt.constant], ids=["ndarray", "tensor"])
def test_output_gradients_weight_the_target(wrap):
    x = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=wrap([1.0, 10.0, 100.0]))
    np.testing.assert_array_equal(g.numpy(), [2.0, 40.0, 600.0])


def test_output_gradients_one_per_target():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y1 = x * x
        y2 = x * np.array([1.0, 1.0])
    g = tape.gradient([y1, y2], x,
                      output_gradients=[np.array(3.0), np.array([1.0, 5.0])])
    assert float(g) == 3.0 * 4.0 + 6.0


def test_output_gradients_shape_mismatch_is_clear_value_error():
    x = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="shape"):
        tape.gradient(y, x, output_gradients=np.ones(2))


def test_output_gradients_count_mismatch_is_value_error():
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y1, y2 = x * 2.0, x * 3.0
    with pytest.raises(ValueError):
        tape.gradient([y1, y2], x, output_gradients=[np.array(1.0)])


# --- unconnected gradients ------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", [None, nt.UnconnectedGradients.NONE, "none"],
                         ids=["default", "enum", "string"])
def test_unconnected_gives_none(policy):
    x = nt.constant([1.0, 2.0])
    y = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([x, y])
        z = y * y
    kw = {} if policy is None else {"unconnected_gradients": policy}
    assert tape.gradient(z, x, **kw) is None


@pytest.mark.parametrize("policy", [nt.UnconnectedGradients.ZERO, "zero"],
                         ids=["enum", "string"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unconnected_zero_policy_gives_zeros_like_the_source(policy, dtype):
    x = nt.constant(np.ones((2, 3)), dtype=dtype)
    v = nt.Variable(np.ones(4), dtype=dtype)
    y = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([x, y])
        z = y * y
    gx, gv = tape.gradient(z, [x, v], unconnected_gradients=policy)
    for g, src in ((gx, x), (gv, v)):
        assert type(g) is nt.Tensor
        assert g.shape == src.shape and g.dtype == src.dtype
        assert not np.any(g.numpy())


def test_unconnected_gradients_enum_values():
    assert nt.UnconnectedGradients.NONE.value == "none"
    assert nt.UnconnectedGradients.ZERO.value == "zero"


def test_bad_unconnected_policy_is_value_error():
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        tape.gradient(y, x, unconnected_gradients="sometimes")


# --- shape and dtype of gradients ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape, other", [
    ((), (3, 2)), ((1,), (4,)), ((3, 1), (3, 4)), ((1, 4), (2, 3, 4)), ((2, 3), (2, 3)),
])
def test_gradient_has_the_source_shape_under_broadcasting(shape, other):
    x = nt.constant(np.full(shape, 2.0))
    w = np.ones(other)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * w
    g = tape.gradient(y, x)
    assert g.shape == shape
    # each element of x meets prod(broadcast shape) / prod(x.shape) ones of w
    expected = np.prod(np.broadcast_shapes(shape, other)) / np.prod(shape)
    np.testing.assert_allclose(g.numpy(), np.full(shape, expected))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_gradient_has_the_source_dtype(dtype):
    x = nt.constant(np.array([1.0, 2.0]), dtype=dtype)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.abs(x * 2.0 + 1.0) ** 2)
    g = tape.gradient(y, x)
    assert g.dtype == np.dtype(dtype)
    assert g.shape == (2,)


def test_non_float_target_gives_none_with_a_warning():
    """TensorFlow: a bool/int target has no gradient; it says so and returns None."""
    x = nt.constant([1.0, -1.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x > 0.0
    with pytest.warns(UserWarning, match="bool"):
        assert tape.gradient(y, x) is None


# --- stop_recording ---------------------------------------------------------------------------------------
def test_stop_recording_records_nothing_inside():
    x = nt.Variable(2.0)
    y = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        x_sq = x * x
        with tape.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    g = tape.gradient(z, {"x": x, "y": y})
    assert float(g["x"]) == 4.0
    assert g["y"] is None


def test_stop_recording_of_watched_tensor():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
    assert tape.gradient(y, x) is None


def test_recording_resumes_after_stop_recording():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            a = x * 100.0
        b = x * x
        y = a + b
    assert float(tape.gradient(y, x)) == 6.0


def test_gradient_inside_stop_recording():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            g = tape.gradient(y, x)
        z = y * 1.0
    assert float(g) == 6.0
    assert float(tape.gradient(z, x)) == 6.0


def test_stop_recording_only_pauses_that_tape():
    x = nt.constant(3.0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
    assert inner.gradient(y, x) is None
    assert float(outer.gradient(y, x)) == 6.0


def test_stop_recording_on_a_tape_that_never_recorded_is_runtime_error():
    tape = nt.GradientTape()
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_stop_recording_after_the_block_is_runtime_error():
    with nt.GradientTape(persistent=True) as tape:
        pass
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_stop_recording_outside_the_block_is_an_error():
    """Whatever its class, an error (TensorFlow raises for both cases)."""
    with nt.GradientTape(persistent=True) as tape:
        pass
    with pytest.raises((RuntimeError, ValueError), match="record"):
        with tape.stop_recording():
            pass


# --- reset -----------------------------------------------------------------------------------------------
def test_reset_forgets_and_keeps_recording():
    x = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        _ = x * x
        tape.reset()
        z = x * 5.0
    assert tape.watched_variables() == (x,)     # re-watched by the read after reset
    assert float(tape.gradient(z, x)) == 5.0


def test_reset_drops_earlier_recordings():
    x = nt.Variable(3.0)
    with nt.GradientTape(persistent=True) as tape:
        y = x * x
        tape.reset()
        z = y * 2.0 + x * 5.0     # y was computed before the reset: a constant now
    assert tape.gradient(y, x) is None
    assert float(tape.gradient(z, x)) == 5.0


def test_reset_forgets_watched_tensors():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        tape.reset()
        y = x * x
    assert tape.gradient(y, x) is None


def test_reset_is_equivalent_to_a_new_tape():
    """TensorFlow's docstring example for reset()."""
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        loss = x * x
        tape.reset()
        loss = loss + x * 10.0
    assert float(tape.gradient(loss, x)) == 10.0


def test_reset_makes_a_used_non_persistent_tape_usable_again():
    x = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        y = x * x
        assert float(tape.gradient(y, x)) == 6.0
    tape.reset()
    with tape:
        z = x * 4.0
    assert float(tape.gradient(z, x)) == 4.0


def test_no_warnings_on_a_plain_gradient():
    x = nt.Variable([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with nt.GradientTape() as tape:
            y = np.sum(np.sin(x) * x)
        tape.gradient(y, x)


# --- entering and leaving -----------------------------------------------------------------------------
def test_error_inside_the_block_stops_recording_and_keeps_the_tape():
    x = nt.constant(3.0)
    tape = nt.GradientTape(persistent=True)
    with pytest.raises(KeyError):
        with tape:
            tape.watch(x)
            y = x * x
            raise KeyError("boom")
    z = x * 5.0                                  # after the block: not recorded
    assert float(tape.gradient(y, x)) == 6.0
    assert tape.gradient(z, x) is None


def test_reentering_an_active_tape_is_an_error():
    x = nt.constant(3.0)
    tape = nt.GradientTape()
    with tape:
        tape.watch(x)
        with pytest.raises(ValueError):
            with tape:
                pass
        y = x * x
    assert float(tape.gradient(y, x)) == 6.0


def test_output_gradients_may_contain_none():
    """None in output_gradients means the default ones for that target (TensorFlow)."""
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        a = x * x
        b = x * 3.0
    g = tape.gradient([a, b], x, output_gradients=[None, np.array(2.0)])
    assert float(g) == 4.0 + 6.0


def test_dict_of_targets_is_summed_with_matching_output_gradients():
    x = nt.constant(2.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        targets = {"square": x * x, "triple": x * 3.0}
    assert float(tape.gradient(targets, x)) == 7.0
    g = tape.gradient(targets, x, output_gradients={"square": np.array(1.0),
                                                     "triple": np.array(10.0)})
    assert float(g) == 34.0


# --- operands that change after use (issue 11, item 2) ---------------------------------------------------
def test_buffer_reused_in_a_loop_keeps_each_rows_gradient():
    rows = [np.array([1.0, 1.0]), np.array([2.0, 2.0])]
    w = nt.Variable([1.0, 2.0])
    buf = np.zeros(2)
    with nt.GradientTape() as tape:
        loss = 0.0
        for row in rows:
            buf[:] = row
            loss = loss + np.sum(w * buf)
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [3.0, 3.0])


def test_operand_changed_after_matmul_does_not_change_the_gradient():
    w = nt.Variable(np.eye(2))
    buf = np.ones((1, 2))
    with nt.GradientTape() as tape:
        y = np.sum(buf @ w)
        buf *= 10
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), np.ones((2, 2)))


def _reused_buffer(w, data):
    """A loop that refills one buffer, as data loaders do (the values the ops saw)."""
    buf = np.empty(data.shape[1:])
    idx = np.zeros(1, dtype=int)
    total = 0.0
    for k, row in enumerate(data):
        buf[...] = row
        idx[0] = k % w.shape[0]
        total = total + np.sum(np.sin(w * buf)) + np.sum((buf @ w.T) ** 2) + w[idx][0, 0] * k
        total = total + np.einsum("ij,ij->", w, buf) + np.sum(np.average(w, axis=1, weights=buf[0]))
        buf *= -3.0     # changed after every use
        idx[0] = 99
    return total


def test_reused_buffers_match_finite_differences():
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((2, 3))
    data = rng.uniform(0.5, 1.5, (3, 2, 3))
    check_reverse(lambda w: _reused_buffer(w, data), w0)


def test_keyword_operand_changed_after_use():
    rng = np.random.default_rng(3)
    weights = rng.uniform(0.5, 1.5, 3)
    original = weights.copy()
    x = nt.Variable(rng.standard_normal(3))
    with nt.GradientTape() as tape:
        y = np.average(x ** 2, weights=weights)
        weights[:] = 100.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               2 * x.numpy() * original / original.sum())


def test_tensor_operands_are_not_copied_plain_read_only_arrays_are():
    x = nt.Variable([1.0, 2.0])
    c = nt.constant([3.0, 4.0])
    with nt.GradientTape() as tape:
        y = x * c
        z = x * np.asarray(c)           # a plain read-only view: its owner could flip it
        total = np.sum(y + z)
    op_y, op_z = tape.ops[:2]
    assert op_y.args[1] is c._value       # the operand's array, not a copy
    assert op_z.args[1].base is not np.asarray(c).base      # a copy (issue 37)
    np.testing.assert_array_equal(op_z.args[1], [3.0, 4.0])
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [6.0, 8.0])


# --- a persistent tape records its own gradient inside its block (issue 11, item 3) ----------------
def test_gradient_inside_a_persistent_block_is_recorded_for_the_next_order():
    x = nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        y = x ** 3
        g = tape.gradient(y, x)             # 3 x^2 = 12, recorded
    assert float(g) == 12.0
    assert float(tape.gradient(g, x)) == 12.0    # 6 x


def test_third_derivative_inside_one_persistent_tape():
    x = nt.constant(0.4)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.sin(x) * x
        g1 = tape.gradient(y, x)
        g2 = tape.gradient(g1, x)
    g3 = tape.gradient(g2, x)
    v = 0.4      # d3/dx3 (x sin x) = -3 sin x - x cos x
    np.testing.assert_allclose(float(g2), 2 * np.cos(v) - v * np.sin(v))
    np.testing.assert_allclose(float(g3), -3 * np.sin(v) - v * np.cos(v))


def test_hessian_vector_product_inside_one_persistent_tape_matches_finite_differences():
    rng = np.random.default_rng(11)
    x0, u = rng.standard_normal(4), rng.standard_normal(4)

    def grad_of(x):
        x = nt.constant(x)
        with nt.GradientTape() as t:
            t.watch(x)
            y = np.sum(np.sin(x) * x ** 2) + np.prod(x)
        return t.gradient(y, x).numpy()

    x = nt.constant(x0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.sum(np.sin(x) * x ** 2) + np.prod(x)
        g = tape.gradient(y, x)
        gu = np.sum(g * u)
    hvp = tape.gradient(gu, x).numpy()
    expected = numeric_grad(lambda z: np.sum(grad_of(z) * u), [x0], 0, 1e-6)
    np.testing.assert_allclose(hvp, expected, rtol=1e-6, atol=1e-8)


def test_gradient_inside_a_non_persistent_block_is_not_recorded():
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        g = tape.gradient(x * x, x)
        assert not tape.recording         # TensorFlow stops a used non-persistent tape
    assert float(g) == 6.0 and len(tape) == 1


def test_gradient_inside_stop_recording_is_not_recorded():
    x = nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        y = x ** 3
        with tape.stop_recording():
            g = tape.gradient(y, x)
    assert float(g) == 12.0
    assert tape.gradient(g, x) is None


def test_gradient_outside_the_block_is_not_recorded():
    x = nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        y = x ** 3
    n = len(tape)
    g = tape.gradient(y, x)
    assert len(tape) == n and tape.gradient(g, x) is None


# --- promises a mutation run found untested (tests/mutation.py) ------------------------------------
def test_gradient_taken_inside_stop_recording_releases_the_tape():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            g = tape.gradient(y, x)         # a used non-persistent tape leaves the stack here
    assert float(g) == 4.0


def test_integer_target_warning_points_at_the_users_line():
    x = nt.constant(2.0)
    y_int = nt.constant(np.arange(3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = (x * 2.0).astype(np.int64)
    with pytest.warns(UserWarning) as record:
        assert tape.gradient(y_int, x) is None
    assert "target's dtype" in str(record[0].message) and record[0].filename == __file__


def test_an_integer_target_made_by_a_cast_gets_one_warning_that_names_the_cast():
    x = nt.constant(2.0)
    w = nt.Variable(1.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = (x * 2.0).astype(np.int64)
        z = (w * 3.0).astype(np.int32)
    with pytest.warns(UserWarning) as record:
        assert tape.gradient(y, x) is None
    assert len(record) == 1, [str(r.message) for r in record]
    assert "became int64" in str(record[0].message) and "through astype" in str(record[0].message)
    assert record[0].filename == __file__
    # a target no cast from the source made: its dtype comes first (the cast downstream
    # of x may still be where the target came from, through steps the tape did not see)
    with pytest.warns(UserWarning) as record:
        assert tape.gradient(z, x) is None
    assert "target's dtype is int32" in str(record[0].message)


def test_a_long_tape_keeps_the_line_of_a_step_without_a_gradient_rule():
    import inspect
    from nbtape.core.primitive import primitive
    from nbtape.core.registry import RULES, defjvp

    def double(x):
        return 2 * x
    f = primitive(double)
    try:
        defjvp(f.raw, lambda t, ans, x: 2 * t)      # forward mode only: no VJP
        x = nt.constant(1.0)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(1100):                   # a long tape keeps few lines...
                y = y + 1.0
            z = f(y)
            line = inspect.currentframe().f_lineno - 1
        with pytest.raises(nt.NoGradientRuleError, match=f"line {line} of test_gradient_tape.py"):
            tape.gradient(z, x)                     # ...but this one, for the error
    finally:
        del RULES[f.raw]


def test_a_used_tape_whose_outputs_add_up_to_over_a_megabyte_keeps_none_of_them():
    x = nt.constant(np.ones(1000))                  # 8 kB a step, 1.6 MB in all
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(200):
            y = y * 1.001
        loss = np.sum(y)
    tape.gradient(loss, x)
    kept = [op for op in tape.ops if op.out is not None]
    assert [op.out for op in kept] in ([y, loss], [y])    # only what the test still holds


def test_a_small_tape_used_by_jacobian_keeps_its_outputs_for_pictures():
    x = nt.constant(np.array([1.0, 2.0]))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x) * 2.0
    tape.jacobian(y, x)
    assert all(op.out is not None for op in tape.ops)


def test_integer_and_bool_source_warnings_name_the_variable_and_suggest_a_float():
    v = nt.Variable(3, name="count")
    with nt.GradientTape() as tape:
        y = v * 2
    with pytest.warns(UserWarning, match=r"variable 'count'.*did you mean 3.0 instead of 3\?"):
        assert tape.gradient(y, v) is None
    flag = nt.constant(np.array([True, False]))
    with nt.GradientTape() as tape:
        tape.watch(flag)
        y = flag * 2.0
    with pytest.warns(UserWarning, match="bool") as record:
        assert tape.gradient(y, flag) is None
    assert "did you mean" not in str(record[0].message)


def test_a_primitive_without_a_rule_refuses_instead_of_dropping_out():
    from nbtape.core.primitive import primitive
    from nbtape.core.registry import RULES

    def twice_raw(v):
        return v * 2.0
    twice = primitive(twice_raw)
    try:
        x = nt.Variable([1.0, 2.0])
        with nt.GradientTape() as tape:
            y = np.sum(twice(x)) + np.sum(x)        # silently [1, 1] before; [3, 3] is right
        with pytest.raises(nt.NoGradientRuleError, match="twice"):
            tape.gradient(y, x)
        with nt.ForwardAccumulator(x, np.ones(2)) as acc:
            z = np.sum(twice(x))
        with pytest.raises(nt.NoGradientRuleError, match="twice"):
            acc.jvp(z)
        np.testing.assert_allclose(twice(np.array([1.0])), [2.0])     # plain arrays untouched
    finally:
        RULES.pop(twice_raw, None)          # the registry is shared by every test


# --- the public read-only view --------------------------------------------------------------------
def test_ops_is_a_read_only_view_with_names_and_lines():
    x = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = np.sin(x) * x
    line = sys._getframe().f_lineno - 1
    ops = tape.ops
    assert len(ops) == len(tape) == 2
    assert [op.name for op in ops] == ["np.sin", "np.multiply"]
    assert {op.where[1] for op in ops} == {line} and ops[0].where[0] == __file__
    assert isinstance(ops[:1], tuple) and ops[-1] is ops[1]
    with pytest.raises(TypeError):
        ops[0] = None
    assert not hasattr(ops, "append")
    with nt.GradientTape() as other:
        z = x * 2.0
    assert len(ops) == 2      # a view of this tape, not of the latest one


def test_watched_records_kind_serial_and_line():
    v = nt.Variable(2.0, name="v")
    c = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(c)
        y = v * c
    watched = tape.watched
    (cid, wc), (vid, wv) = sorted(watched.items(), key=lambda kv: kv[1].serial)
    assert (wc.kind, wv.kind) == ("tensor", "variable")
    assert wc.where[0] == __file__ and wv.where[0] == __file__
    assert tape.watched_object(vid) is v and tape.watched_object(cid) is c
    assert tape.watched_object(-1) is None
    with pytest.raises(TypeError):
        watched[cid] = None
    assert tape.tracks(c) and tape.tracks(y) and not tape.tracks(nt.constant(1.0))


def test_notes_are_named_records():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.asarray(x) * 2
    note, = tape.notes
    assert note.kind == "escape" and note.id in tape.watched and "asarray" in note.detail
    assert note.where[0] == __file__
    assert isinstance(tape.notes, tuple)


def test_state_properties():
    x = nt.Variable(1.0)
    with nt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = x * x
    assert not tape.consumed and not tape.interrupted and not tape.watch_accessed_variables
    tape.gradient(y, x)
    assert tape.consumed


def test_backward_steps_newest_first_and_only_on_the_path():
    x = nt.Variable(2.0)
    w = nt.Variable(5.0)
    with nt.GradientTape(persistent=True) as tape:
        a = x * x           # 0: on the path
        b = w * 3.0         # 1: not downstream of x
        c = a + b           # 2
        d = np.sin(w)       # 3: not upstream of c
    assert tape.backward_steps(c, x) == [2, 0]
    assert tape.backward_steps(c, [x, w]) == [2, 1, 0]
    assert tape.backward_steps(c) == [2, 1, 0]         # every watched value
    tape.gradient(c, w)
    assert tape.backward_steps() == [2, 1]             # the latest gradient's
    with pytest.raises(ValueError, match="needs a target"):
        nt.GradientTape().backward_steps()
    with pytest.raises(TypeError):
        tape.backward_steps(c, 1.0)


def test_backward_steps_are_the_ops_the_reverse_pass_runs():
    x = nt.Variable(0.5)
    with nt.GradientTape(persistent=True) as tape:
        y = np.exp(x)
        z = nt.stop_gradient(y) * y + x
    visited = [k for k in tape.backward_steps(z, x) if tape.ops[k].name != "nt.stop_gradient"]
    assert visited == tape.backward_steps(z, x)


def test_retire_drops_the_records_and_says_why():
    x = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = x * x
    tape.retire("Replaced by a newer tape.")
    assert len(tape) == 0 and dict(tape.watched) == {}
    assert tape.retired == "Replaced by a newer tape."
    assert "retired" in repr(tape) and "Replaced by a newer tape." in tape._repr_html_()
    tape.reset()
    assert tape.retired is None


@pytest.mark.parametrize("ask", ["gradient", "jacobian", "batch_jacobian"])
def test_a_retired_tape_raises_with_its_reason_instead_of_answering_none(ask):
    x = nt.Variable(np.ones((2, 2)))
    with nt.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, x) is not None
    tape.retire("Replaced by a newer tape.")
    with pytest.raises(TapeConsumedError, match="retired.*Replaced by a newer tape"):
        getattr(tape, ask)(y, x)


def test_explain_on_a_retired_tape_says_it_was_retired():
    x = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = x * x
    tape.retire("Replaced by a newer tape.")
    e = tape.explain(y, x)
    assert not e.connected and "retired" in e.title
    assert any("Replaced by a newer tape." in r for r in e.reasons)
    assert "does not depend" not in str(e)


def test_each_none_gradient_names_its_own_escape():
    """Two values leave a persistent tape at different lines: the warning for the target
    built from the second names the second line, not the first escape downstream."""
    import warnings
    x = nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        a = float(x * 2)
        t1 = nt.constant(a) * 3.0
        b = np.asarray(np.sin(x))
        t2 = nt.constant(b) + 1.0
    for t, how in ((t1, "float()"), (t2, "np.asarray")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert tape.gradient(t, x) is None
        assert len(caught) == 1 and f"through {how} at line" in str(caught[0].message)
