"""dtypes: numpy's promotion rules, float32 kept, TensorFlow's complex convention, ints not
differentiable."""
import warnings

import numpy as np
import pytest

import nbtape as nt


def gradient(f, x, **kw):
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x, **kw)


# --- float32 / float64 ----------------------------------------------------------------------------------
def test_python_float_values_are_float64():
    x = nt.constant(2.0)
    assert (x * 3.0).dtype == np.float64
    assert nt.Variable(1.0).dtype == np.float64


FLOAT32_FUNCTIONS = [
    ("scalar ops", lambda x: x * 2.0 + 1.0 - x / 3.0),
    ("int scalar", lambda x: x * 2 + 1),
    ("power", lambda x: x ** 2 + 2.0 ** x),
    ("ufuncs", lambda x: np.sin(x) * np.exp(x) + np.tanh(x) + np.sqrt(x * x + 1.0)),
    ("reductions", lambda x: np.sum(x) + np.mean(x * x)),
    ("float32 array", lambda x: x * np.array([1.0, 2.0, 3.0], dtype=np.float32)),
    ("matmul", lambda x: x @ np.ones((3, 2), dtype=np.float32)),
    ("indexing", lambda x: x[1:] * x[0]),
    ("stack", lambda x: np.stack([x, x * 2.0])),
]


@pytest.mark.parametrize("name, f", FLOAT32_FUNCTIONS, ids=[n for n, _ in FLOAT32_FUNCTIONS])
def test_float32_stays_float32_values_and_gradients(name, f):
    x = nt.constant([0.5, 1.0, 1.5], dtype="float32")
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        total = np.sum(y)
    assert y.dtype == np.float32, f"{name}: value became {y.dtype}"
    g = tape.gradient(total, x)
    assert g.dtype == np.float32, f"{name}: gradient became {g.dtype}"


def test_float32_variable_gradient():
    v = nt.Variable(np.array([1.0, 2.0], dtype=np.float32))
    with nt.GradientTape() as tape:
        y = np.sum(v * v * 0.5)
    g = tape.gradient(y, v)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), np.array([1.0, 2.0], dtype=np.float32))


def test_float32_source_promoted_by_float64_array_gets_float32_gradient():
    """numpy promotes the value to float64; the gradient still has the source's dtype."""
    x = nt.constant([1.0, 2.0], dtype="float32")
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * np.array([3.0, 4.0])
    assert y.dtype == np.float64
    g = tape.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), [3.0, 4.0])


def test_float32_second_derivative_stays_float32():
    x = nt.constant(1.5, dtype="float32")
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    assert g.dtype == np.float32 and h.dtype == np.float32
    np.testing.assert_allclose(float(h), 9.0)


def _probe(seen):
    """Identity whose backward pass records the dtype of the adjoint it receives."""
    @nt.custom_gradient
    def probe(x):
        def grad(dy):
            seen.append(np.dtype(dy.dtype))
            return dy
        return x * 1, grad
    return probe


@pytest.mark.parametrize("nested", [False, True], ids=["arrays", "under an outer tape"])
def test_adjoints_of_intermediates_have_the_intermediates_dtype(nested):
    """float32 through a float64 constant and back, and real through complex: the adjoint an
    intermediate receives has that intermediate's dtype (what a custom gradient sees as dy)."""
    seen = []
    probe = _probe(seen)
    x = nt.constant(np.array([0.5, 1.5], dtype=np.float32))
    outer = nt.GradientTape()
    with outer:
        outer.watch(x)
        with nt.GradientTape() as tape:
            tape.watch(x)
            a = probe(np.sin(x))                            # float32
            b = probe(a * np.array([2.0, 3.0]))             # float64
            c = probe(b.astype(np.float32))                 # float32 again
            d = probe(np.real(c * np.array(1.0 + 2.0j)))    # float64 (complex128 on the way)
            y = np.sum(d * d)
        if nested:
            g = tape.gradient(y, x)
        else:
            with outer.stop_recording():
                g = tape.gradient(y, x)
    # float32 times a 0-d complex128 is complex128 on numpy 2, complex64 on numpy 1's
    # value-based casting: whichever numpy says, the adjoint must follow it
    d_dtype = np.real(np.ones(2, np.float32) * np.array(1.0 + 2.0j)).dtype
    assert [a.dtype, b.dtype, c.dtype, d.dtype] == [np.float32, np.float64, np.float32, d_dtype]
    assert seen == [d_dtype, np.float32, np.float64, np.float32]     # newest op first
    assert g.dtype == np.float32
    x0, k = np.array([0.5, 1.5]), np.array([2.0, 3.0])
    np.testing.assert_allclose(g.numpy(), 2 * np.sin(x0) * k * k * np.cos(x0), rtol=1e-6)
    if nested:
        assert outer.gradient(g, x).dtype == np.float32


def test_float16_is_allowed():
    x = nt.constant([1.0, 2.0], dtype="float16")
    g = gradient(lambda x: np.sum(x * x), x)
    assert g.dtype == np.float16
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


# --- complex ------------------------------------------------------------------------------------------------
Z0 = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])


@pytest.mark.parametrize("f", [
    lambda z: np.abs(z) ** 2,
    lambda z: np.real(z * np.conj(z)),
    lambda z: np.real(z) ** 2 + np.imag(z) ** 2,
], ids=["abs**2", "real(z conj z)", "re**2+im**2"])
def test_gradient_of_abs_squared_is_2z(f):
    z = nt.constant(Z0)
    g = gradient(lambda z: np.sum(f(z)), z)
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g.numpy(), 2 * Z0)


def test_gradient_of_abs_is_z_over_abs():
    z = nt.constant(Z0)
    g = gradient(lambda z: np.sum(np.abs(z)), z)
    np.testing.assert_allclose(g.numpy(), Z0 / np.abs(Z0))


def test_gradient_of_abs_at_complex_zero_is_zero_not_nan():
    z = nt.constant(np.array([0j, 3 + 4j]))
    g = gradient(lambda z: np.sum(np.abs(z)), z)
    np.testing.assert_allclose(g.numpy(), [0j, (3 + 4j) / 5], rtol=1e-15)


def test_forward_mode_of_abs_of_complex_values():
    z0, t = np.array([0j, 3 + 4j]), np.array([1 + 1j, 2 - 1j])
    z = nt.constant(z0)
    with nt.ForwardAccumulator(z, t) as acc:
        r = np.abs(z)
    np.testing.assert_allclose(acc.jvp(r).numpy(), [0.0, np.real(np.conj(3 + 4j) * (2 - 1j)) / 5])


def test_gradient_of_real_and_imag_parts():
    z = nt.constant(Z0)
    np.testing.assert_allclose(gradient(lambda z: np.sum(np.real(z)), z).numpy(), np.ones(3))
    np.testing.assert_allclose(gradient(lambda z: np.sum(np.imag(z)), z).numpy(),
                               np.full(3, 1j))


def test_complex_gradient_is_dre_plus_i_dim():
    """For real f(z), the gradient is df/dRe + i df/dIm (checked by finite differences)."""
    w = np.array([0.3 - 0.2j, 1.1 + 0.4j, -0.7 + 0.9j])

    def f(z):
        return np.sum(np.abs(z * w + 1.0) ** 2 * np.real(z) + np.imag(z * z))

    z = nt.constant(Z0)
    g = gradient(f, z).numpy()
    eps = 1e-6
    numeric = np.zeros(3, dtype=complex)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        d_re = (f(Z0 + eps * e) - f(Z0 - eps * e)) / (2 * eps)
        d_im = (f(Z0 + 1j * eps * e) - f(Z0 - 1j * eps * e)) / (2 * eps)
        numeric[k] = d_re + 1j * d_im
    np.testing.assert_allclose(g, numeric, rtol=1e-6)


def test_holomorphic_function_gradient_is_conjugate_derivative():
    """TensorFlow: the gradient of a holomorphic f (seeded with 1) is conj(f'(z))."""
    z = nt.constant(Z0)
    np.testing.assert_allclose(gradient(lambda z: z * z, z).numpy(), np.conj(2 * Z0))
    np.testing.assert_allclose(gradient(lambda z: z ** 3, z).numpy(), np.conj(3 * Z0 ** 2))
    np.testing.assert_allclose(gradient(np.exp, z).numpy(), np.conj(np.exp(Z0)))


def test_holomorphic_gradient_with_complex_output_gradient():
    """Weighting by v gives conj(f'(z)) * v, as TensorFlow's grad * conj(f') rule does."""
    z = nt.constant(Z0)
    v = np.array([1.0, 1j, 2.0 - 1.0j])
    with nt.GradientTape() as tape:
        tape.watch(z)
        y = z * z
    g = tape.gradient(y, z, output_gradients=v)
    np.testing.assert_allclose(g.numpy(), v * np.conj(2 * Z0))


def test_complex64_stays_complex64():
    z = nt.constant(Z0, dtype="complex64")
    g = gradient(lambda z: np.sum(np.abs(z) ** 2), z)
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g.numpy(), 2 * Z0, rtol=1e-6)


def test_real_source_through_complex_intermediate_gets_real_gradient():
    x = nt.constant([0.5, 1.0])
    g = gradient(lambda x: np.sum(np.abs(x * (1.0 + 1.0j)) ** 2), x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), 4 * np.array([0.5, 1.0]))


# --- integer and bool ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype", [
    (3, None), ([1, 2], "int8"), ([1, 2], "int32"), (2, "uint8"), ([True, False], None),
], ids=["int64", "int8", "int32", "uint8", "bool"])
def test_integer_or_bool_source_gives_none_with_warning_saying_why(value, dtype):
    x = nt.constant(value, dtype=dtype)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.warns(UserWarning) as record:
        g = tape.gradient(y, x)
    assert g is None
    message = " ".join(str(w.message) for w in record)
    assert str(x.dtype) in message
    assert "integer" in message.lower() or "bool" in message.lower()
    assert "differentiable" in message.lower()


def test_integer_variable_gives_none_with_warning():
    v = nt.Variable([[2, 2], [2, 2]], dtype=np.int8)
    with nt.GradientTape() as tape:
        y = v * v
    with pytest.warns(UserWarning, match="int8"):
        assert tape.gradient(y, v) is None


def test_integer_source_is_none_even_with_zero_policy():
    x = nt.constant(3)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.warns(UserWarning):
        assert tape.gradient(y, x, unconnected_gradients="zero") is None


def test_integer_source_among_float_sources():
    i = nt.constant(2)
    f = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch([i, f])
        y = i * f
    with pytest.warns(UserWarning):
        gi, gf = tape.gradient(y, [i, f])
    assert gi is None
    assert float(gf) == 2.0


def test_integer_intermediate_cuts_the_path():
    x = nt.constant([1.5, 2.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x.astype(np.int64) * 2.0
    with pytest.warns(UserWarning, match="became int64"):     # says where the path ends
        assert tape.gradient(y, x) is None


def test_float_source_needs_no_warning():
    x = nt.constant(2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = gradient(lambda x: x * x, x)
    assert float(g) == 4.0


def test_integer_values_mix_with_float_values():
    x = nt.constant([1.0, 2.0])
    k = nt.constant([3, 4])
    g = gradient(lambda x: np.sum(x * k), x)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g.numpy(), [3.0, 4.0])


def test_jacobian_with_respect_to_integer_source_warns():
    i = nt.constant([1, 2])
    with nt.GradientTape() as tape:
        tape.watch(i)
        y = i * 2.0
    with pytest.warns(UserWarning, match="int"):
        assert tape.jacobian(y, i) is None


def test_batch_jacobian_with_respect_to_integer_source_is_none_with_warning():
    i = nt.constant([[1], [2]])
    with nt.GradientTape() as tape:
        tape.watch(i)
        y = i * 2.0
    with pytest.warns(UserWarning, match="int"):
        assert tape.batch_jacobian(y, i) is None
