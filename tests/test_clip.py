import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_forward



# --- clip_by_value ------------------------------------------------------------------------------
def test_clip_by_value_values_and_types():
    x = np.array([-3.0, -1.0, 0.5, 1.0, 7.0])
    np.testing.assert_array_equal(nt.clip_by_value(x, -1.0, 1.0), [-1, -1, 0.5, 1, 1])
    assert type(nt.clip_by_value(x, -1.0, 1.0)) is np.ndarray
    v = nt.Variable(x)
    out = nt.clip_by_value(v, -1.0, 1.0)
    assert isinstance(out, nt.Tensor)
    np.testing.assert_array_equal(out.numpy(), [-1, -1, 0.5, 1, 1])
    np.testing.assert_array_equal(nt.clip_by_value(x, [-2, -2, 0, 0, 0], 0.7),
                                  [-2, -1, 0.5, 0.7, 0.7])


def test_clip_by_value_keeps_float32_with_float64_bounds():
    x = nt.constant(np.array([0.5, 3.0], dtype="float32"))
    assert nt.clip_by_value(x, np.float64(0.0), np.float64(1.0)).dtype == np.float32


def test_clip_by_value_gradient_passes_inside_bounds_inclusive():
    x = nt.Variable([-3.0, -1.0, 0.5, 1.0, 7.0])
    with nt.GradientTape() as tape:
        y = nt.clip_by_value(x, -1.0, 1.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0, 1, 1, 1, 0])


def test_clip_by_value_gradients_wrt_all_arguments():
    x = np.array([-3.0, -0.2, 0.5, 4.0])
    lo, hi = np.array(-1.0), np.array(1.0)
    assert nt.check_gradients(nt.clip_by_value, x, lo, hi) < 1e-8
    lo_t, hi_t = nt.constant(-1.0), nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([lo_t, hi_t])
        y = nt.clip_by_value(x, lo_t, hi_t)
    g_lo, g_hi = tape.gradient(y, [lo_t, hi_t])
    assert float(g_lo) == 1.0 and float(g_hi) == 1.0
    check_forward(nt.clip_by_value, x, lo, hi)


def test_clip_by_value_rejects_swapped_bounds():
    with pytest.raises(ValueError, match="minimum comes first"):
        nt.clip_by_value(np.zeros(2), 1.0, -1.0)


# --- clip_by_norm --------------------------------------------------------------------------------
def test_clip_by_norm_values():
    np.testing.assert_allclose(nt.clip_by_norm(np.array([3.0, 4.0]), 1.0), [0.6, 0.8])
    np.testing.assert_array_equal(nt.clip_by_norm(np.array([0.3, 0.4]), 1.0), [0.3, 0.4])
    m = np.array([[3.0, 0.3], [4.0, 0.4]])
    np.testing.assert_allclose(nt.clip_by_norm(m, 1.0, axes=0), [[0.6, 0.3], [0.8, 0.4]])
    np.testing.assert_allclose(nt.clip_by_norm(m, 1.0), m / np.linalg.norm(m))
    np.testing.assert_allclose(nt.clip_by_norm(np.array([3 + 4j]), 1.0), [0.6 + 0.8j])


def test_clip_by_norm_on_tensors_variables_and_float32():
    t = nt.constant(np.array([3.0, 4.0], dtype="float32"))
    out = nt.clip_by_norm(t, np.float64(2.0))
    assert isinstance(out, nt.Tensor) and out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), [1.2, 1.6], rtol=1e-6)
    np.testing.assert_allclose(nt.clip_by_norm(nt.Variable([0.0, 5.0]), 2.0).numpy(), [0, 2])


def test_clip_by_norm_is_differentiable_in_both_regimes(rng):
    long = rng.standard_normal((2, 3)) * 3
    short = long / np.linalg.norm(long) * 0.5
    for x in (long, short):
        assert nt.check_gradients(lambda t: nt.clip_by_norm(t, 1.0) * long, x) < 1e-6
        check_forward(lambda t: nt.clip_by_norm(t, 1.0), x)
    assert nt.check_gradients(lambda t: nt.clip_by_norm(t, 1.0, axes=1) * long, long) < 1e-6


def test_clip_by_norm_of_zeros_has_a_finite_gradient():
    x = nt.constant(np.zeros(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = nt.clip_by_norm(x, 1.0)
        g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(y.numpy(), np.zeros(3))
    np.testing.assert_array_equal(g, np.ones(3))


def test_clip_norm_must_be_positive():
    with pytest.raises(ValueError, match="positive clip_norm"):
        nt.clip_by_norm(np.ones(2), 0.0)
    with pytest.raises(ValueError, match="positive clip_norm"):
        nt.clip_by_global_norm([np.ones(2)], -1.0)


# --- global norm ---------------------------------------------------------------------------------
def test_global_norm(rng):
    assert float(nt.global_norm([np.array([3.0]), None, np.array([[4.0]])])) == 5.0
    assert float(nt.global_norm([])) == 0.0
    assert float(nt.global_norm([None])) == 0.0
    ts = [nt.constant(rng.standard_normal(3)), nt.Variable(rng.standard_normal((2, 2)))]
    expected = np.sqrt(sum(np.sum(np.asarray(t) ** 2) for t in ts))
    assert float(nt.global_norm(ts)) == pytest.approx(expected)
    with pytest.raises(TypeError, match="list"):
        nt.global_norm(np.ones(3))
    with pytest.raises(TypeError, match="list"):
        nt.clip_by_global_norm(nt.constant([1.0, 2.0]), 1.0, use_norm=3.0)


def test_clip_by_global_norm_scales_all_together():
    a, b = np.array([3.0, 0.0]), np.array([[0.0], [4.0]])
    clipped, norm = nt.clip_by_global_norm([a, None, b], 1.0)
    assert float(norm) == 5.0                                   # the norm before clipping
    assert clipped[1] is None
    np.testing.assert_allclose(clipped[0], [0.6, 0.0])
    np.testing.assert_allclose(clipped[2], [[0.0], [0.8]])
    assert float(nt.global_norm(clipped)) == pytest.approx(1.0)
    same, norm = nt.clip_by_global_norm([a, b], 10.0)
    np.testing.assert_array_equal(same[0], a)
    np.testing.assert_array_equal(same[1], b)


def test_clip_by_global_norm_with_use_norm_and_float32():
    g = [nt.constant(np.array([1.0, 1.0], dtype="float32"))]
    clipped, norm = nt.clip_by_global_norm(g, 1.0, use_norm=4.0)
    assert clipped[0].dtype == np.float32
    np.testing.assert_allclose(clipped[0].numpy(), [0.25, 0.25])
    assert float(norm) == 4.0


def test_clip_by_global_norm_of_infinite_norm_is_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clipped, norm = nt.clip_by_global_norm([np.array([np.inf, 1.0])], 1.0)
    assert np.isinf(norm) and np.all(np.isnan(clipped[0]))


def test_clip_by_global_norm_is_differentiable(rng):
    a0, b0 = rng.standard_normal(3) * 2, rng.standard_normal((2, 2)) * 2
    w = rng.standard_normal(3)

    def f(a, b):
        (ca, cb), norm = nt.clip_by_global_norm([a, b], 1.5)
        return np.sum(ca * w) + np.sum(cb) + norm
    assert nt.check_gradients(f, a0, b0) < 1e-6


@pytest.mark.parametrize("axes", [[1], [0, 2], [-1], np.array([1])])
def test_clip_by_norm_takes_a_list_or_tuple_of_axes_as_tensorflow_does(axes, rng):
    from gradcheck import check_both
    x = rng.standard_normal((2, 3, 4)) * 3
    want_axes = tuple(int(a) for a in np.ravel(axes))
    norm = np.sqrt(np.sum(x * x, axis=want_axes, keepdims=True))
    np.testing.assert_allclose(nt.clip_by_norm(x, 1.0, axes=axes),
                               x / np.maximum(norm, 1.0))
    check_both(lambda t: nt.clip_by_norm(t, 1.0, axes=axes), x)
