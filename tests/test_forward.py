"""nt.ForwardAccumulator: forward-mode Jacobian-vector products."""
import math
import threading

import numpy as np
import pytest

import nbtape as nt


def numeric_jvp(f, x, v, eps=1e-6):
    return (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)


CASES = [
    ("sin", lambda x: np.sin(x), (3,)),
    ("poly", lambda x: x ** 3 - 2.0 * x * x + 1.0 / (1.0 + x * x), (4,)),
    ("reduce", lambda x: np.sum(np.exp(x) * x), (2, 3)),
    ("matmul", lambda x: x @ x.T, (2, 3)),
    ("index", lambda x: x[1:] * x[:-1], (5,)),
    ("mean", lambda x: np.mean(np.tanh(x), axis=0), (3, 2)),
    ("stack", lambda x: np.stack([x, np.sqrt(x * x + 1.0)]), (3,)),
]


@pytest.mark.parametrize("name, f, shape", CASES, ids=[c[0] for c in CASES])
def test_jvp_matches_finite_differences(name, f, shape):
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(shape)
    v = rng.standard_normal(shape)
    x = nt.constant(x0)
    with nt.ForwardAccumulator(x, v) as acc:
        y = f(x)
    j = acc.jvp(y)
    assert type(j) is nt.Tensor
    assert j.shape == np.shape(f(x0))
    np.testing.assert_allclose(j.numpy(), numeric_jvp(f, x0, v), rtol=1e-5, atol=1e-7)


def test_jvp_scalar():
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        y = x ** 3
    assert float(acc.jvp(y)) == 12.0


def test_jvp_of_the_primal_is_the_tangent():
    x = nt.constant([1.0, 2.0])
    with nt.ForwardAccumulator(x, np.array([5.0, 6.0])) as acc:
        pass
    np.testing.assert_array_equal(acc.jvp(x).numpy(), [5.0, 6.0])


def test_jvp_of_primals_in_a_list_of_targets_are_their_tangents():
    v, c = nt.Variable([1.0, 2.0]), nt.constant(3.0)
    with nt.ForwardAccumulator([v, c], [np.array([5.0, 6.0]), 2.0]) as acc:
        y = v * c
    jv, jc, jy = acc.jvp([v, c, y])
    np.testing.assert_array_equal(jv.numpy(), [5.0, 6.0])
    assert float(jc) == 2.0
    np.testing.assert_array_equal(jy.numpy(), [17.0, 22.0])


def test_several_primals_sum_their_contributions():
    a = nt.constant(2.0)
    b = nt.constant(3.0)
    with nt.ForwardAccumulator([a, b], [np.array(1.0), np.array(10.0)]) as acc:
        y = a * b
    assert float(acc.jvp(y)) == 3.0 * 1.0 + 2.0 * 10.0


def test_tangent_as_a_tensor():
    x = nt.constant([1.0, 2.0])
    with nt.ForwardAccumulator(x, nt.constant([1.0, 1.0])) as acc:
        y = x * x
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [2.0, 4.0])


def test_variable_primal():
    w = nt.Variable([1.0, 2.0])
    with nt.ForwardAccumulator(w, np.array([1.0, 0.0])) as acc:
        y = np.sum(w * w * w)
    assert float(acc.jvp(y)) == 3.0


def test_jvp_structure():
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        a = x * x
        b = np.sin(x)
    ja, (jb,) = acc.jvp([a, (b,)])
    assert float(ja) == 4.0
    np.testing.assert_allclose(float(jb), np.cos(2.0))


def test_unconnected_none_and_zero():
    x = nt.constant(2.0)
    other = nt.constant([1.0, 2.0])
    with nt.ForwardAccumulator(x, 1.0) as acc:
        y = other * 3.0
    assert acc.jvp(y) is None
    assert acc.jvp(y, unconnected_gradients="none") is None
    for policy in ("zero", nt.UnconnectedGradients.ZERO):
        z = acc.jvp(y, unconnected_gradients=policy)
        assert z.shape == (2,) and not np.any(z.numpy())


def test_ops_after_the_block_are_not_tracked():
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        y = x * x
    z = y * 3.0
    assert acc.jvp(z) is None
    assert float(acc.jvp(y)) == 4.0


def test_tangent_shape_mismatch_is_value_error():
    with pytest.raises(ValueError):
        nt.ForwardAccumulator(nt.constant([1.0, 2.0]), np.ones(3))


def test_primal_tangent_count_mismatch_is_value_error():
    a, b = nt.constant(1.0), nt.constant(2.0)
    with pytest.raises(ValueError):
        nt.ForwardAccumulator([a, b], [np.array(1.0)])


def test_plain_primal_is_type_error():
    with pytest.raises(TypeError):
        nt.ForwardAccumulator(np.ones(2), np.ones(2))


def test_float32_tangent_stays_float32():
    x = nt.constant([1.0, 2.0], dtype="float32")
    with nt.ForwardAccumulator(x, np.ones(2, dtype=np.float32)) as acc:
        y = np.sin(x) * 2.0
    assert acc.jvp(y).dtype == np.float32


def test_complex_jvp_is_the_holomorphic_derivative():
    """Forward mode on a holomorphic function gives f'(z) * v (no conjugation)."""
    z0 = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    v = np.array([1.0 + 0.0j, 0.0 + 1.0j])
    z = nt.constant(z0)
    with nt.ForwardAccumulator(z, v) as acc:
        y = z * z * z
    np.testing.assert_allclose(acc.jvp(y).numpy(), 3 * z0 ** 2 * v)


def test_jvp_through_custom_gradient():
    @nt.custom_gradient
    def log1pexp(x):
        e = np.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return np.log(1 + e), grad

    x = nt.constant(0.5)
    with nt.ForwardAccumulator(x, 2.0) as acc:
        y = log1pexp(x)
    np.testing.assert_allclose(float(acc.jvp(y)), 2.0 / (1 + np.exp(-0.5)))


def test_nested_accumulators_second_derivative():
    x = nt.constant(1.5)
    with nt.ForwardAccumulator(x, 1.0) as outer:
        with nt.ForwardAccumulator(x, 1.0) as inner:
            y = x ** 4
        d1 = inner.jvp(y)
    d2 = outer.jvp(d1)
    np.testing.assert_allclose(float(d1), 4 * 1.5 ** 3)
    np.testing.assert_allclose(float(d2), 12 * 1.5 ** 2)


def test_three_nested_accumulators():
    x = nt.constant(0.3)
    with nt.ForwardAccumulator(x, 1.0) as a3:
        with nt.ForwardAccumulator(x, 1.0) as a2:
            with nt.ForwardAccumulator(x, 1.0) as a1:
                y = np.sin(x)
            d1 = a1.jvp(y)
        d2 = a2.jvp(d1)
    d3 = a3.jvp(d2)
    np.testing.assert_allclose([float(d1), float(d2), float(d3)],
                               [np.cos(0.3), -np.sin(0.3), -np.cos(0.3)])


def test_inner_accumulator_does_not_see_outer_primals():
    x = nt.constant(1.0)
    w = nt.constant(2.0)
    with nt.ForwardAccumulator(w, 1.0) as outer:
        with nt.ForwardAccumulator(x, 1.0) as inner:
            y = x * w
        assert float(inner.jvp(y)) == 2.0
    assert float(outer.jvp(y)) == 1.0


def test_forward_matches_reverse_jacobian_columns():
    rng = np.random.default_rng(11)
    x0 = rng.standard_normal(3)
    W = rng.standard_normal((2, 3))

    def f(x):
        return np.tanh(W @ x) * x[0]

    x = nt.constant(x0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    J = tape.jacobian(y, x).numpy()
    for k, e in enumerate(np.eye(3)):
        with nt.ForwardAccumulator(x, e) as acc:
            yk = f(x)
        np.testing.assert_allclose(acc.jvp(yk).numpy(), J[:, k], rtol=1e-12)


def test_complex_jvp_of_real_valued_function():
    """d|z|^2 along v is 2 Re(conj(z) v)."""
    z0 = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    v = np.array([0.3 - 1.0j, 2.0 + 0.5j])
    z = nt.constant(z0)
    with nt.ForwardAccumulator(z, v) as acc:
        y = np.abs(z) ** 2
    j = acc.jvp(y)
    assert j.dtype == np.float64
    np.testing.assert_allclose(j.numpy(), 2 * np.real(np.conj(z0) * v))


def test_tangents_of_dead_tensors_are_dropped():
    """Forward mode's memory follows what is alive, not how long the computation ran."""
    x = nt.constant(np.linspace(0.0, 1.0, 1000))
    v = x
    with nt.ForwardAccumulator(x, np.ones(1000)) as acc:
        for _ in range(2000):
            v = np.sin(v)
        assert len(acc._tangents) <= 600
    expected = np.ones(1000)
    w = np.linspace(0.0, 1.0, 1000)
    for _ in range(2000):
        expected = expected * np.cos(w)
        w = np.sin(w)
    np.testing.assert_allclose(acc.jvp(v).numpy(), expected, rtol=1e-10)
    assert acc.jvp(x) is not None      # primals are never dropped


def test_inner_tape_does_not_record_the_accumulators_tangent_work():
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.sin(x) * x
    assert [op.name for op in tape.ops] == ["np.sin", "np.multiply"]
    assert float(tape.gradient(y, x)) == pytest.approx(np.cos(2.0) * 2.0 + np.sin(2.0))
    assert float(acc.jvp(y)) == pytest.approx(np.cos(2.0) * 2.0 + np.sin(2.0))


def _no_jvp_source(x):
    """np.unique has no rule in either mode: its outputs carry a poisoned tangent."""
    return np.unique(x)


@pytest.mark.parametrize("after", [
    lambda u: np.split(u, 2)[0],
    lambda u: np.frexp(u)[0],
    lambda u: np.modf(u)[1],
    lambda u: np.divmod(u, 2.0)[0],
    lambda u: np.broadcast_arrays(u, np.ones((2, 1)))[0],
    lambda u: np.average(np.reshape(u, (2, 2)), axis=0, returned=True)[0],
])
def test_a_path_without_a_jvp_into_a_multi_output_op_runs_and_refuses_only_its_tangent(after):
    x = nt.constant(np.array([0.5, 1.5, 2.5, 3.5]))
    with nt.ForwardAccumulator(x, np.ones(4)) as acc:
        y = after(_no_jvp_source(x))
        z = np.sin(x)
    np.testing.assert_allclose(np.asarray(y), after(np.unique(x.numpy())))
    np.testing.assert_allclose(acc.jvp(z).numpy(), np.cos(x.numpy()))
    with pytest.raises(nt.NoGradientRuleError, match="np.unique"):
        acc.jvp(y)


def test_a_multi_output_function_without_a_jvp_runs_under_an_accumulator():
    x = nt.constant(np.array([2.0, 1.0, 2.0]))
    with nt.ForwardAccumulator(x, np.ones(3)) as acc:
        values, counts = np.unique(x, return_counts=True)
    np.testing.assert_allclose(values.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(counts.numpy(), [1, 2])
    with pytest.raises(nt.NoGradientRuleError, match="np.unique"):
        acc.jvp(values)


@pytest.mark.parametrize("target", [1.0, np.ones(2), [np.ones(2)], "y"])
def test_jvp_of_something_that_is_not_a_tensor_says_so(target):
    x = nt.constant(np.ones(2))
    with nt.ForwardAccumulator(x, np.ones(2)) as acc:
        np.sin(x)
    with pytest.raises(TypeError, match="acc.jvp takes nbtape tensors"):
        acc.jvp(target)


def test_tangents_take_their_outputs_dtype():
    x = nt.constant(np.array([1.0, 2.0], dtype=np.float32))
    with nt.ForwardAccumulator(x, np.array([1.0, 1.0], dtype=np.float32)) as acc:
        wide = x + np.array([1.0, 2.0])         # float64 out, the rule's tangent is float32
        narrow = x * 2.0
        whole = x.astype(np.int64)
    assert acc.jvp(wide).dtype == np.float64 and acc.jvp(narrow).dtype == np.float32
    np.testing.assert_array_equal(acc.jvp(wide).numpy(), [1.0, 1.0])
    assert acc.jvp(whole) is None                # integers carry no tangent


def test_several_outputs_custom_gradient_is_refused_in_forward_mode_not_none():
    """One output: the custom VJP is transposed.  Several: nbtape cannot, and says so."""
    @nt.custom_gradient
    def pair(x):
        return (x * 1, x * 2), lambda da, db: da + 2 * db

    x = nt.constant(np.array([1.0, 2.0]))
    with nt.ForwardAccumulator(x, np.array([1.0, 1.0])) as acc:
        a, b = pair(x)
        s = a + b
    for out in (a, b, s):
        with pytest.raises(nt.NoGradientRuleError, match=r"forward-mode rule for custom_gradient"):
            acc.jvp(out)


def test_a_single_output_custom_gradient_is_transposed_for_complex_tangents_too():
    @nt.custom_gradient
    def cube(z):
        return z ** 3, lambda dy: dy * np.conj(3 * z ** 2)      # TensorFlow's convention

    z0, t = np.array([1 + 2j, 0.5 - 1j]), np.array([0.3 - 0.2j, 1 + 1j])
    z = nt.constant(z0)
    with nt.ForwardAccumulator(z, t) as acc:
        y = cube(z)
    np.testing.assert_allclose(acc.jvp(y).numpy(), 3 * z0 ** 2 * t)


def test_tangents_given_as_python_numbers_take_the_primals_dtype():
    x = nt.constant(np.float32(2.0))
    with nt.ForwardAccumulator(x, 0.5) as acc:
        y = x * 3.0
    # y is float32 on numpy 2 (a Python float is weak) and float64 on numpy 1 (a 0-d
    # array times a float): the tangent follows numpy, whichever it is
    assert acc.jvp(x).dtype == np.float32 and acc.jvp(y).dtype == y.dtype
    assert float(acc.jvp(y)) == 1.5


def test_an_accumulator_stops_watching_when_its_block_ends():
    """In a thread of its own: a fresh recording stack, whatever other tests left."""
    seen = []

    def run():
        x = nt.constant(2.0)
        with nt.ForwardAccumulator(x, 1.0) as acc:
            inside = x * 3.0
        outside = x * 3.0
        seen.extend([acc.jvp(inside), acc.jvp(outside)])
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert float(seen[0]) == 3.0 and seen[1] is None


def test_tangents_take_their_outputs_shape_and_a_narrower_dtype():
    s = nt.constant(2.0)
    x = nt.constant(np.array([1.0, 2.0], dtype=np.float32))
    with nt.ForwardAccumulator([s, x], [1.0, np.array([1.0, 1.0], dtype=np.float32)]) as acc:
        spread = s + np.zeros(3)                                  # a scalar tangent, spread
        narrow = np.multiply(x, np.array([2.0, 3.0]), dtype=np.float32)   # float64 made float32
    assert acc.jvp(spread).shape == (3,)
    assert acc.jvp(narrow).dtype == np.float32
    np.testing.assert_array_equal(acc.jvp(narrow).numpy(), [2.0, 3.0])


def test_several_outputs_where_one_is_an_integer():
    x = nt.constant(np.array([3.0, 6.0]))
    with nt.ForwardAccumulator(x, np.array([1.0, 1.0])) as acc:
        mantissa, exponent = np.frexp(x)
    np.testing.assert_array_equal(acc.jvp(mantissa).numpy(), [0.25, 0.125])
    assert acc.jvp(exponent) is None


def test_stop_gradient_carries_no_tangent():
    x = nt.constant(np.array([1.0, 2.0]))
    with nt.ForwardAccumulator(x, np.array([1.0, 1.0])) as acc:
        y = nt.stop_gradient(x) * 2.0 + x
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 1.0])


# --- object arrays: refused as in reverse mode (nbtape.tape.breaks), never a None or partial tangent --
def _jvp_of(fn, x0=(0.3, 1.7)):
    x = nt.constant(np.array(x0))
    with nt.ForwardAccumulator(x, nt.constant([1.0, -2.0])) as acc:
        y = fn(x)
    return acc.jvp(y)


@pytest.mark.parametrize("line, make", [
    ("lambda x: x.astype(object)", lambda x: x.astype(object)),
    ("(math.sin, 1, 1)(x)", lambda x: np.frompyfunc(math.sin, 1, 1)(x)),
    ("(math.modf, 1, 2)(x)[0]", lambda x: np.frompyfunc(math.modf, 1, 2)(x)[0]),
])
@pytest.mark.parametrize("after", [lambda o: o, lambda o: (o * 2).astype(float)])
def test_a_tangent_through_an_object_array_raises_naming_the_line(line, make, after):
    with pytest.raises(nt.NoGradientRuleError) as info:
        _jvp_of(lambda x: after(make(x)))
    text = str(info.value)
    assert "object array" in text and "tangent" in text and "test_forward.py" in text
    assert line in text                 # the user's line, quoted


def test_an_object_path_next_to_a_float_path_raises_instead_of_a_partial_tangent():
    # the float path alone would give 2 x . t: silently wrong without the object path's 2 t
    with pytest.raises(nt.NoGradientRuleError, match="astype"):
        _jvp_of(lambda x: np.sum(x ** 2) + np.sum((x.astype(object) * 2).astype(float)))


def test_float_values_beside_an_object_array_keep_their_tangents():
    x = nt.constant([0.3, 1.7])
    with nt.ForwardAccumulator(x, nt.constant([1.0, -2.0])) as acc:
        o = x.astype(object)
        y = np.sin(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.cos([0.3, 1.7]) * [1.0, -2.0])
    with pytest.raises(nt.NoGradientRuleError, match="object array"):
        acc.jvp(o)


def test_numpy_raising_inside_a_jvp_is_nbtapes_numerics_error_naming_the_derivative():
    x = nt.constant(np.array([0.0, 4.0]))
    err = None
    with np.errstate(divide="raise"):
        try:
            with nt.ForwardAccumulator(x, np.ones(2)):
                np.sqrt(x)
        except FloatingPointError as e:
            err = e
    assert type(err) is nt.NumericsError
    assert "derivative of np.sqrt" in str(err) and "divide" in str(err)
