"""nbtape/rules/util.py: the small helpers every rule shares (conjugates, shapes,
undoing broadcasting, reduced axes, numpy's "not given" defaults, refusals)."""
import numpy as np
import pytest
from hypothesis import given as hgiven, settings, strategies as st
from hypothesis.extra.numpy import array_shapes

import nbtape as nt
from nbtape.diagnostics.errors import NoGradientRuleError
from nbtape.rules import util
from nbtape.rules.util import (NV, H, conj, expand_reduced, flag, given, masked,
                               normalize_axis, refuse, shape_of, unbroadcast, value_of)


# --- conj, shape_of, H ---------------------------------------------------------------------
def test_conj_passes_real_values_through_untouched(rng):
    x = rng.standard_normal((2, 3))
    assert conj(x) is x                       # not even a copy
    assert conj(2.5) == 2.5 and conj(3) == 3


def test_conj_conjugates_complex_arrays_and_python_complex(rng):
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    np.testing.assert_array_equal(conj(z), np.conj(z))
    assert conj(1 + 2j) == 1 - 2j
    assert conj(np.complex128(1 - 1j)) == 1 + 1j


def test_shape_of_arrays_lists_scalars_and_tensors():
    assert shape_of(np.zeros((2, 5))) == (2, 5)
    assert shape_of([[1, 2, 3]]) == (1, 3)
    assert shape_of(4.0) == ()
    assert shape_of(nt.constant(np.ones((3, 1)))) == (3, 1)


def test_H_is_the_conjugate_transpose_of_each_matrix_in_a_stack(rng):
    a = rng.standard_normal((4, 2, 3)) + 1j * rng.standard_normal((4, 2, 3))
    h = H(a)
    assert h.shape == (4, 3, 2)
    for k in range(4):
        np.testing.assert_array_equal(h[k], a[k].conj().T)
    r = rng.standard_normal((2, 3))
    np.testing.assert_array_equal(H(r), r.T)


# --- unbroadcast -------------------------------------------------------------------------------
@pytest.mark.parametrize("gshape, shape", [
    ((3, 2), (1, 2)), ((3, 2), (2,)), ((4, 3, 2), (2,)), ((4, 3, 2), (3, 1)),
    ((4, 3, 2), ()), ((2, 3), (2, 1)), ((5, 1, 3), (1, 1, 3)), ((2, 3), (2, 3))], ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unbroadcast_sums_over_the_broadcast_axes(gshape, shape, dtype, rng):
    g = rng.standard_normal(gshape)
    got = unbroadcast(g, shape, np.dtype(dtype))
    # the reference: sum the leading axes away, then each axis that was 1
    lead = len(gshape) - len(shape)
    want = g.sum(axis=tuple(range(lead)))
    want = want.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)
    assert got.shape == shape and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want.reshape(shape), rtol=1e-6 if dtype == "float32" else 1e-12)


@settings(max_examples=25, deadline=None)
@hgiven(array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3), st.data())
def test_unbroadcast_is_the_adjoint_of_broadcasting(shape, data):
    """<broadcast_to(x, big), g> == <x, unbroadcast(g, x.shape)> for any broadcast."""
    rng = np.random.default_rng(len(shape))
    extra = data.draw(st.lists(st.integers(1, 3), max_size=2))
    big = tuple(extra) + tuple(s if s != 1 else data.draw(st.integers(1, 3)) for s in shape)
    x, g = rng.standard_normal(shape), rng.standard_normal(big)
    back = unbroadcast(g, shape, np.dtype("float64"))
    assert back.shape == shape
    np.testing.assert_allclose(np.sum(np.broadcast_to(x, big) * g), np.sum(x * back),
                               rtol=1e-10, atol=1e-10)


def test_unbroadcast_of_a_complex_adjoint_onto_a_real_input_keeps_the_real_part():
    g = np.array([[1 + 2j, 3 - 1j], [0.5j, 2.0]])
    got = unbroadcast(g, (2,), np.dtype("float64"))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.0, 5.0])
    c = unbroadcast(g, (2,), np.dtype("complex64"))
    assert c.dtype == np.complex64
    np.testing.assert_allclose(c, [1 + 2.5j, 5 - 1j])


def test_unbroadcast_stretches_a_scalar_adjoint_to_the_shape():
    got = unbroadcast(2.0, (2, 3), np.dtype("float64"))
    np.testing.assert_array_equal(got, np.full((2, 3), 2.0))
    got = unbroadcast(np.float32(1.5), (), np.dtype("float64"))
    assert got.dtype == np.float64 and got.shape == () and got == 1.5


def test_unbroadcast_of_a_tensor_records_the_sum():
    x = nt.constant(np.arange(6.0).reshape(2, 3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = unbroadcast(x * x, (3,), np.dtype("float64"))
        s = np.sum(y * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y.numpy(), [9.0, 17.0, 29.0])
    np.testing.assert_array_equal(tape.gradient(s, x).numpy(), 2 * x.numpy() * [1, 2, 3])


# --- axes --------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis, ndim, want", [
    (None, 3, (0, 1, 2)), (-1, 3, (2,)), (1, 2, (1,)), ((0, -1), 3, (0, 2)),
    ([2, -3], 3, (2, 0)), (0, 0, ()), ((0,), 0, ()), (None, 0, ())], ids=str)
def test_normalize_axis(axis, ndim, want):
    assert normalize_axis(axis, ndim) == want


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (-1, 0)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_expand_reduced_undoes_a_reduction(axis, keepdims, rng):
    shape = (2, 3, 4)
    g = rng.standard_normal(np.sum(np.zeros(shape), axis=axis, keepdims=keepdims).shape)
    got = expand_reduced(g, shape, axis, keepdims)
    assert got.shape == shape
    kept = g if keepdims else np.expand_dims(g, normalize_axis(axis, 3))
    np.testing.assert_array_equal(got, np.broadcast_to(kept, shape))


def test_expand_reduced_fast_path_is_a_read_only_view(rng):
    g = rng.standard_normal((2, 4))
    got = expand_reduced(g, (2, 3, 4), 1, False)
    assert not got.flags.writeable
    assert np.shares_memory(got, g)
    np.testing.assert_array_equal(got, np.broadcast_to(g[:, None, :], (2, 3, 4)))


# --- numpy's defaults ----------------------------------------------------------------------------
def test_given_masked_and_flag_tell_numpy_defaults_from_values():
    assert NV is np._NoValue
    assert [given(v) for v in (NV, None, 0, 0.0, False, np.zeros(2))] == \
        [False, False, True, True, True, True]
    assert [masked(v) for v in (NV, None, True, False, np.array([True]))] == \
        [False, False, False, True, True]
    assert [flag(v) for v in (NV, False, True, 0, 1)] == [False, False, True, False, True]


def test_value_of_unwraps_tensors_and_passes_arrays():
    a = np.array([1.0, 2.0])
    np.testing.assert_array_equal(value_of(nt.constant(a)), a)
    assert type(value_of(nt.constant(a))) is np.ndarray
    np.testing.assert_array_equal(value_of([3, 4]), [3, 4])
    assert value_of(a) is a


# --- refusals ------------------------------------------------------------------------------------
def test_refuse_raises_a_no_gradient_rule_error_naming_the_function_and_keyword():
    with pytest.raises(NoGradientRuleError, match=r"np\.median does not support weights="):
        refuse("np.median", "weights=")


# --- undoing broadcasting sums accurately over many rows ------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("shape", [(2,), (1, 2)])
def test_unbroadcast_of_a_float32_over_more_than_2_to_the_24_rows_is_exact(shape, dtype):
    # the gradient of a float32 bias broadcast over 3 * 2**23 rows: a running float32 sum
    # stops growing at 2**24 (a third low); a broadcast view keeps this test's memory small
    rows = 3 << 23
    g = np.broadcast_to(np.ones((), dtype=dtype), (rows, 2))
    out = util.unbroadcast(g, shape, np.dtype(dtype))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.full(shape, rows))


def test_the_gradient_of_a_low_precision_value_broadcast_over_many_rows_is_exact():
    # end to end, with float16 standing in for float32 (a running float16 sum of ones
    # stops at 2048 as float32's does at 2**24), through the reverse pass and a Jacobian
    rows = 3072
    b = nt.Variable(np.zeros(2, dtype="float16"))
    x = nt.constant(np.zeros((rows, 2), dtype="float16"))
    with nt.GradientTape(persistent=True) as tape:
        y = x + b
        s = np.sum(x + b, axis=0)
    np.testing.assert_array_equal(tape.gradient(y, b).numpy(), [rows, rows])
    np.testing.assert_array_equal(tape.jacobian(s, b).numpy(), np.eye(2) * rows)


def test_accurate_sum_keeps_the_dtype_and_the_common_case_as_it_was(rng):
    a = rng.standard_normal((100, 3)).astype("float32")
    np.testing.assert_array_equal(util.accurate_sum(a, 0, 100), np.add.reduce(a, axis=0))
    big = np.broadcast_to(np.float32(1), (1 << 25, 1))
    assert util.accurate_sum(big, 0, 1 << 25).dtype == np.float32
