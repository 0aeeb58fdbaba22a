"""nt.Tensor and nt.constant: attributes, Python protocol, operators, the numpy protocol."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import nbtape as nt
from gradcheck import since_numpy

FAST = settings(max_examples=25, deadline=None)


def grad_of(f, *values):
    """d f(*values) / d values, on a fresh tape, as numpy arrays (None stays None)."""
    xs = [nt.constant(v) for v in values]
    with nt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    gs = tape.gradient(y, xs)
    return [None if g is None else g.numpy() for g in gs]


def numeric_grad(f, x, eps=1e-6):
    """Central differences of sum(f(x)) (f on plain arrays)."""
    x = np.array(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (np.sum(f(xp)) - np.sum(f(xm))) / (2 * eps)
    return g


# --- nt.constant ---------------------------------------------------------------------------------
class TestConstant:
    def test_python_float_is_float64(self):
        c = nt.constant(3.0)
        assert isinstance(c, nt.Tensor)
        assert c.dtype == np.float64 and c.shape == ()

    def test_python_int_is_integer(self):
        assert nt.constant(3).dtype.kind == "i"

    def test_list_of_floats(self):
        c = nt.constant([[1.0, 2.0], [3.0, 4.0]])
        assert c.shape == (2, 2) and c.dtype == np.float64

    def test_float32_array_stays_float32(self):
        assert nt.constant(np.ones(3, dtype=np.float32)).dtype == np.float32

    @pytest.mark.parametrize("dtype", ["float32", np.float32, np.dtype("float32")])
    def test_dtype_argument(self, dtype):
        c = nt.constant([1, 2], dtype=dtype)
        assert c.dtype == np.float32
        np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])

    def test_complex_and_bool(self):
        assert nt.constant(1 + 2j).dtype == np.complex128
        assert nt.constant([True, False]).dtype == np.bool_

    def test_from_a_tensor(self):
        c = nt.constant(nt.constant([1.0, 2.0]), dtype="float32")
        assert isinstance(c, nt.Tensor) and c.dtype == np.float32

    def test_does_not_alias_the_input_array(self):
        a = np.array([1.0, 2.0])
        c = nt.constant(a)
        a[0] = 100.0
        assert c.numpy()[0] == 1.0

    def test_not_watched_by_default(self):
        c = nt.constant(3.0)
        with nt.GradientTape() as tape:
            y = c * c
        assert tape.gradient(y, c) is None

    def test_rejects_objects(self):
        with pytest.raises(TypeError):
            nt.constant({"a": 1})


# --- attributes -------------------------------------------------------------------------------------
class TestAttributes:
    def test_shape_dtype_ndim_size(self):
        t = nt.constant(np.arange(6.0).reshape(2, 3))
        assert t.shape == (2, 3)
        assert t.dtype == np.float64
        assert t.ndim == 2
        assert t.size == 6

    def test_scalar_attributes(self):
        t = nt.constant(2.5)
        assert t.shape == () and t.ndim == 0 and t.size == 1

    def test_T_is_a_recorded_transpose(self):
        a = np.arange(6.0).reshape(2, 3)
        x = nt.constant(a)
        assert isinstance(x.T, nt.Tensor)
        np.testing.assert_array_equal(x.T.numpy(), a.T)
        w = np.arange(6.0).reshape(3, 2)
        (g,) = grad_of(lambda x: np.sum(x.T * w), a)
        np.testing.assert_allclose(g, w.T)

    def test_numpy_returns_an_independent_ndarray(self):
        t = nt.constant([1.0, 2.0])
        a = t.numpy()
        assert type(a) is np.ndarray
        a[0] = 50.0
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])

    def test_item(self):
        assert nt.constant(2.5).item() == 2.5
        assert isinstance(nt.constant(2.5).item(), float)
        assert nt.constant([[7.0]]).item() == 7.0

    def test_len(self):
        assert len(nt.constant(np.zeros((4, 2)))) == 4

    def test_len_of_scalar_is_type_error(self):
        with pytest.raises(TypeError):
            len(nt.constant(1.0))

    def test_iteration_yields_tensors_along_axis_0(self):
        a = np.arange(6.0).reshape(3, 2)
        rows = list(nt.constant(a))
        assert len(rows) == 3
        assert all(isinstance(r, nt.Tensor) for r in rows)
        for r, expected in zip(rows, a):
            np.testing.assert_array_equal(r.numpy(), expected)

    def test_iteration_over_scalar_is_type_error(self):
        with pytest.raises(TypeError):
            iter(nt.constant(1.0))

    def test_iteration_is_recorded(self):
        a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

        def f(x):
            total = 0.0
            for k, row in enumerate(x):
                total = total + (k + 1) * np.sum(row * row)
            return total
        (g,) = grad_of(f, a)
        np.testing.assert_allclose(g, 2 * a * np.array([[1.0], [2.0], [3.0]]))

    def test_float_int_bool_conversions(self):
        assert float(nt.constant(2.5)) == 2.5
        assert int(nt.constant(3.0)) == 3
        assert bool(nt.constant(1.0)) is True
        assert bool(nt.constant(0.0)) is False


# --- indexing -----------------------------------------------------------------------------------------
class TestIndexing:
    a = np.arange(12.0).reshape(3, 4)

    @pytest.mark.parametrize("idx", [
        1, -1, (1, 2), slice(1, None), (slice(None), 2), (slice(None, None, 2), slice(1, 3)),
        Ellipsis, (Ellipsis, 0), (None, 0), [0, 2], ([0, 2], [1, 3]),
    ], ids=repr)
    def test_values_match_numpy(self, idx):
        r = nt.constant(self.a)[idx]
        assert isinstance(r, nt.Tensor)
        np.testing.assert_array_equal(r.numpy(), self.a[idx])

    def test_boolean_mask(self):
        t = nt.constant(self.a)
        r = t[t > 5.0]
        np.testing.assert_array_equal(r.numpy(), self.a[self.a > 5.0])

    def test_tensor_integer_index(self):
        t = nt.constant(self.a)
        np.testing.assert_array_equal(t[nt.constant(2)].numpy(), self.a[2])
        np.testing.assert_array_equal(t[nt.constant([0, 2])].numpy(), self.a[[0, 2]])

    def test_gradient_of_slice_scatters_back(self):
        (g,) = grad_of(lambda x: np.sum(x[1:, ::2] * 3.0), self.a)
        expected = np.zeros_like(self.a)
        expected[1:, ::2] = 3.0
        np.testing.assert_array_equal(g, expected)

    def test_gradient_of_repeated_fancy_index_accumulates(self):
        (g,) = grad_of(lambda x: np.sum(x[[0, 0, 2]]), np.array([1.0, 2.0, 3.0]))
        np.testing.assert_array_equal(g, [2.0, 0.0, 1.0])

    def test_gradient_of_boolean_mask(self):
        x0 = np.array([-1.0, 2.0, -3.0, 4.0])
        (g,) = grad_of(lambda x: np.sum(x[x > 0.0] ** 2), x0)
        np.testing.assert_array_equal(g, [0.0, 4.0, 0.0, 8.0])

    def test_gradient_of_scalar_element(self):
        (g,) = grad_of(lambda x: x[1, 2] * x[0, 0], self.a)
        expected = np.zeros_like(self.a)
        expected[1, 2] = self.a[0, 0]
        expected[0, 0] = self.a[1, 2]
        np.testing.assert_array_equal(g, expected)

    def test_item_assignment_is_a_type_error(self):
        t = nt.constant([1.0, 2.0])
        with pytest.raises(TypeError):
            t[0] = 5.0
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


# --- operators ------------------------------------------------------------------------------------------
BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
}

X = np.array([[1.5, 2.0], [3.0, 0.5]])
Y = np.array([[0.7, 1.3], [2.2, 0.9]])


def _left_right(kind):
    """(left, right, plain_left, plain_right) for one kind of operand mix."""
    if kind == "tensor-tensor":
        return nt.constant(X), nt.constant(Y), X, Y
    if kind == "tensor-float":
        return nt.constant(X), 1.7, X, 1.7
    if kind == "float-tensor":
        return 1.7, nt.constant(Y), 1.7, Y
    if kind == "int-tensor":
        return 3, nt.constant(Y), 3, Y
    if kind == "tensor-ndarray":
        return nt.constant(X), Y, X, Y
    if kind == "ndarray-tensor":
        return X, nt.constant(Y), X, Y
    if kind == "npscalar-tensor":
        return np.float64(1.7), nt.constant(Y), np.float64(1.7), Y
    if kind == "list-tensor":
        return [1.5, 2.5], nt.constant(Y), np.array([1.5, 2.5]), Y
    if kind == "variable-tensor":
        return nt.Variable(X), nt.constant(Y), X, Y
    if kind == "ndarray-variable":
        return X, nt.Variable(Y), X, Y
    raise AssertionError(kind)


KINDS = ["tensor-tensor", "tensor-float", "float-tensor", "int-tensor", "tensor-ndarray",
         "ndarray-tensor", "npscalar-tensor", "list-tensor", "variable-tensor",
         "ndarray-variable"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sym", list(BINARY))
def test_binary_operator_value_and_type(sym, kind):
    op = BINARY[sym]
    a, b, pa, pb = _left_right(kind)
    r = op(a, b)
    assert type(r) is nt.Tensor, f"{kind}: {sym} gave {type(r).__name__}"
    np.testing.assert_allclose(r.numpy(), op(pa, pb))


@pytest.mark.parametrize("kind", ["tensor-tensor", "tensor-ndarray", "ndarray-tensor",
                                  "variable-tensor", "ndarray-variable"])
def test_matmul_operator(kind):
    a, b, pa, pb = _left_right(kind)
    r = a @ b
    assert type(r) is nt.Tensor
    np.testing.assert_allclose(r.numpy(), pa @ pb)


@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "%", "**"])
def test_binary_operator_gradients_match_finite_differences(sym):
    op = BINARY[sym]
    gx, gy = grad_of(op, X, Y)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: op(v, Y), X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gy, numeric_grad(lambda v: op(X, v), Y), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "%", "**"])
@pytest.mark.parametrize("left", [1.7, np.float64(1.7), np.array([[1.7, 2.1]])],
                         ids=["float", "npfloat", "ndarray"])
def test_reflected_operator_gradients(sym, left):
    """A Python scalar, numpy scalar or array on the left still records the tensor's path."""
    op = BINARY[sym]
    (gy,) = grad_of(lambda y: op(left, y), Y)
    np.testing.assert_allclose(gy, numeric_grad(lambda v: op(left, v), Y),
                               rtol=1e-5, atol=1e-6)


def test_floor_divide_gradient_is_zero():
    gx, gy = grad_of(lambda x, y: np.sum(x // y), X, Y)
    np.testing.assert_array_equal(gx, np.zeros_like(X))
    np.testing.assert_array_equal(gy, np.zeros_like(Y))


def test_matmul_gradients_match_finite_differences():
    a = np.arange(6.0).reshape(2, 3) / 5
    b = np.arange(12.0).reshape(3, 4) / 7
    ga, gb = grad_of(lambda a, b: a @ b, a, b)
    np.testing.assert_allclose(ga, numeric_grad(lambda v: v @ b, a), rtol=1e-6)
    np.testing.assert_allclose(gb, numeric_grad(lambda v: a @ v, b), rtol=1e-6)


def test_reflected_matmul_with_ndarray_on_the_left():
    a = np.arange(6.0).reshape(2, 3) / 5
    b = np.arange(12.0).reshape(3, 4) / 7
    (gb,) = grad_of(lambda b: a @ b, b)
    np.testing.assert_allclose(gb, numeric_grad(lambda v: a @ v, b), rtol=1e-6)


def test_unary_operators():
    v = np.array([-1.5, 0.5, 2.0])
    t = nt.constant(v)
    for r, expected in [(-t, -v), (+t, v), (abs(t), np.abs(v))]:
        assert type(r) is nt.Tensor
        np.testing.assert_array_equal(r.numpy(), expected)
    (g,) = grad_of(lambda x: np.sum(-x * 2.0 + abs(x)), v)
    np.testing.assert_array_equal(g, -2.0 + np.sign(v))


def test_augmented_assignment_rebinds_to_a_new_tensor():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x
        y *= 3.0
        y += x
    assert float(tape.gradient(y, x)) == 4.0
    assert float(x) == 2.0     # x itself is unchanged


# --- comparisons ------------------------------------------------------------------------------------------
COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne}


@pytest.mark.parametrize("kind", ["tensor-tensor", "tensor-float", "float-tensor",
                                  "tensor-ndarray", "ndarray-tensor", "variable-tensor"])
@pytest.mark.parametrize("sym", list(COMPARISONS))
def test_comparisons_give_bool_tensors(sym, kind):
    op = COMPARISONS[sym]
    a, b, pa, pb = _left_right(kind)
    r = op(a, b)
    assert type(r) is nt.Tensor
    assert r.dtype == np.bool_
    np.testing.assert_array_equal(r.numpy(), op(pa, pb))


def test_comparisons_are_not_differentiable():
    x = nt.constant([1.0, -2.0, 3.0])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        mask = x > 0.0
        y = mask * 1.0          # a float value made only from the comparison
        z = np.sum(mask * x)    # the mask weights x: the gradient is the mask itself
    assert tape.gradient(y, x) is None
    np.testing.assert_array_equal(tape.gradient(y, x, unconnected_gradients="zero").numpy(),
                                  np.zeros(3))
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [1.0, 0.0, 1.0])


def test_scalar_comparison_drives_python_control_flow():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x if x > 1.0 else x * 10.0
    assert float(tape.gradient(y, x)) == 4.0


# --- numpy protocol ----------------------------------------------------------------------------------------
UFUNCS = [np.sin, np.cos, np.exp, np.tanh, np.sqrt, np.square, np.log, np.negative,
          np.absolute]


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
def test_ufunc_on_tensor_returns_a_recorded_tensor(ufunc):
    v = np.array([0.3, 1.2, 2.5])
    r = ufunc(nt.constant(v))
    assert type(r) is nt.Tensor
    np.testing.assert_allclose(r.numpy(), ufunc(v))
    (g,) = grad_of(lambda x: ufunc(x), v)
    np.testing.assert_allclose(g, numeric_grad(ufunc, v), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.true_divide,
                                   np.power, np.matmul], ids=lambda u: u.__name__)
def test_binary_ufunc_called_directly(ufunc):
    a, b = nt.constant(X), nt.constant(Y)
    for r in (ufunc(a, b), ufunc(X, b), ufunc(a, Y)):
        assert type(r) is nt.Tensor
        np.testing.assert_allclose(r.numpy(), ufunc(X, Y))


def test_ufunc_on_variable_returns_tensor_and_is_recorded():
    v = nt.Variable([0.5, 1.0])
    with nt.GradientTape() as tape:
        y = np.sin(v)
        s = np.sum(y)
    assert type(y) is nt.Tensor and type(s) is nt.Tensor
    np.testing.assert_allclose(tape.gradient(s, v).numpy(), np.cos([0.5, 1.0]))


@pytest.mark.parametrize("fn, expected_grad", [
    (lambda x: np.sum(x), np.ones((2, 3))),
    (lambda x: np.sum(x, axis=0) * np.array([1.0, 2.0, 3.0]), np.tile([1.0, 2.0, 3.0], (2, 1))),
    (lambda x: np.mean(x), np.full((2, 3), 1 / 6)),
    (lambda x: np.reshape(x, (3, 2))[0], np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])),
    (lambda x: np.transpose(x)[2], np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])),
    (lambda x: np.concatenate([x, 2 * x], axis=0), np.full((2, 3), 3.0)),
    (lambda x: np.stack([x, x * x]), 1 + 2 * np.arange(6.0).reshape(2, 3)),
    (lambda x: np.where(x > 2.0, x, 0.0), (np.arange(6.0).reshape(2, 3) > 2.0) * 1.0),
])
def test_numpy_functions_return_recorded_tensors(fn, expected_grad):
    a = np.arange(6.0).reshape(2, 3)
    r = fn(nt.constant(a))
    assert type(r) is nt.Tensor
    np.testing.assert_allclose(r.numpy(), fn(a))
    (g,) = grad_of(fn, a)
    np.testing.assert_allclose(g, expected_grad)


def test_numpy_functions_on_variables_return_tensors():
    v = nt.Variable(np.arange(6.0).reshape(2, 3))
    for r in (np.sum(v), np.mean(v, axis=1), np.reshape(v, (6,)), np.transpose(v),
              np.concatenate([v, v]), np.stack([v, v])):
        assert type(r) is nt.Tensor


def test_ndarray_methods_run_unchanged():
    def normalise(a):
        centred = a - a.mean(axis=0)
        return (centred.T @ centred).sum() / a.shape[0] + a.reshape(-1).sum()

    a = np.array([[1.0, 2.0], [3.0, 5.0], [4.0, 0.5]])
    r = normalise(nt.constant(a))
    assert type(r) is nt.Tensor
    np.testing.assert_allclose(r.numpy(), normalise(a))
    (g,) = grad_of(normalise, a)
    np.testing.assert_allclose(g, numeric_grad(normalise, a), rtol=1e-5, atol=1e-6)


def test_asarray_escapes_to_a_plain_unrecorded_array():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        a = np.asarray(x * 2.0)
        y = nt.constant(a) * 3.0
    assert type(a) is np.ndarray
    np.testing.assert_array_equal(a, [2.0, 4.0])
    with pytest.warns(UserWarning):
        assert tape.gradient(y, x) is None


def test_np_array_with_dtype():
    a = np.asarray(nt.constant([1.0, 2.0]), dtype=np.float32)
    assert type(a) is np.ndarray and a.dtype == np.float32


@FAST
@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3),
                  elements=st.floats(0.5, 3.0)),
       st.floats(0.5, 3.0),
       st.sampled_from(["+", "-", "*", "/", "**"]))
def test_operators_agree_with_numpy(a, s, sym):
    op = BINARY[sym]
    t = nt.constant(a)
    np.testing.assert_allclose(op(t, s).numpy(), op(a, s))
    np.testing.assert_allclose(op(s, t).numpy(), op(s, a))
    np.testing.assert_allclose(op(t, t).numpy(), op(a, a))


# --- leaving the tape -----------------------------------------------------------------------------------
ESCAPES = [
    ("np.asarray", lambda y: np.asarray(y)),
    ("np.array", lambda y: np.array(y)),
    ("float()", lambda y: float(np.sum(y))),
    ("np.array of a list", lambda y: np.array([y[0], y[1]])),
    ("np.mean of a list", lambda y: np.mean([y, y], axis=0)),
    (".numpy()", lambda y: y.numpy()),
    (".item()", lambda y: y[0].item()),
    (".tolist()", lambda y: y.tolist()),
]


@pytest.mark.parametrize("name, escape", ESCAPES, ids=[n for n, _ in ESCAPES])
def test_escape_gives_a_plain_value(name, escape):
    x = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = x * x
        out = escape(y)
    assert not isinstance(out, nt.Tensor)
    assert isinstance(out, (np.ndarray, np.generic, float, list))
    assert tape.watched_variables() == (x,)


@pytest.mark.parametrize("name, escape", ESCAPES, ids=[n for n, _ in ESCAPES])
def test_escape_none_gradient_says_it_left_the_tape(name, escape):
    x = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = x * x
        z = nt.constant(escape(y)) * 3.0
    with pytest.warns(UserWarning, match="left the tape"):
        assert tape.gradient(z, x) is None


def test_escape_values_are_right():
    x = nt.constant([1.0, 2.0])
    np.testing.assert_array_equal(np.array([x[0], x[1]]), [1.0, 2.0])
    assert np.mean([x, x]) == 1.5
    assert float(np.sum(x)) == 3.0


def test_no_escape_warning_when_nothing_escaped():
    import warnings
    x = nt.Variable([1.0, 2.0])
    other = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = other * 2.0
        _ = x * 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tape.gradient(y, x) is None


def test_escape_outside_any_tape_is_silent_and_cheap():
    import warnings
    x = nt.constant([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = np.asarray(x)
        f = float(x[0])
    assert type(a) is np.ndarray and f == 1.0


def test_stack_and_concatenate_are_the_recorded_ways_to_build_arrays():
    x = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = x * x
        s = np.stack([y[0], y[1], y[0]])
        c = np.concatenate([y, y[:1]])
        total = np.sum(s) + np.sum(c)
    # total = 4 y0 + 2 y1 = 4 x0^2 + 2 x1^2
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [8.0, 8.0])


def test_asarray_of_a_variable_none_gradient_says_it_left_the_tape():
    w = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = nt.constant(np.asarray(w)) * 2.0
    with pytest.warns(UserWarning, match="left the tape"):
        assert tape.gradient(y, w) is None


def test_constant_of_a_recorded_tensor_is_not_a_silent_cut():
    """tf.constant(t) returns t itself; nbtape must follow it or say why it cannot."""
    import warnings
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = nt.constant(x * x) * 3.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tape.gradient(y, x)
    if g is not None:
        assert float(g) == 12.0
    else:
        assert any("left the tape" in str(w.message) for w in caught)


@pytest.mark.parametrize("call", [
    lambda x: np.multiply(x, 3.0, dtype=np.float64),
    lambda x: np.add(x * 3.0, 1.0, casting="same_kind"),
    lambda x: np.sin(x, dtype=np.float64) * 0.0 + x * 3.0,
], ids=["multiply dtype=", "add casting=", "sin dtype="])
def test_ufunc_keyword_arguments_are_differentiable(call):
    (g,) = grad_of(lambda x: np.sum(call(x)), np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [3.0, 3.0])


METHODS = {
    "copy": lambda x: x.copy(), "flatten": lambda x: x.flatten(), "ravel": lambda x: x.ravel(),
    "reshape(*shape)": lambda x: x.reshape(3, 2), "reshape(shape)": lambda x: x.reshape((3, 2)),
    "reshape(-1)": lambda x: x.reshape(-1), "transpose()": lambda x: x.transpose(),
    "transpose(axes)": lambda x: x.transpose(1, 0), "sum(axis)": lambda x: x.sum(axis=0),
    "mean": lambda x: x.mean(), "prod": lambda x: x.prod(), "max(axis)": lambda x: x.max(axis=1),
    "min": lambda x: x.min(), "std": lambda x: x.std(), "var(axis)": lambda x: x.var(axis=0),
    "cumsum": lambda x: x.cumsum(), "squeeze": lambda x: x[None].squeeze(),
    "swapaxes": lambda x: x.swapaxes(0, 1), "dot": lambda x: x.dot(np.arange(3.0)),
    "clip": lambda x: x.clip(-1.5, 2.0), "conj": lambda x: x.conj(),
    "repeat": lambda x: x.repeat(2, axis=0), "take": lambda x: x.take([0, 2], axis=1),
    "diagonal": lambda x: x.diagonal(), "trace": lambda x: x.trace(), "T": lambda x: x.T,
}
M = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])


@pytest.mark.parametrize("name", list(METHODS))
def test_ndarray_methods_are_recorded(name):
    f = METHODS[name]
    r = f(nt.constant(M))
    assert type(r) is nt.Tensor
    np.testing.assert_allclose(r.numpy(), f(M))
    (g,) = grad_of(lambda x: np.sum(f(x) * np.cos(f(x))), M)
    np.testing.assert_allclose(g, numeric_grad(lambda v: f(v) * np.cos(f(v)), M),
                               rtol=1e-5, atol=1e-6)


def test_astype_method_is_recorded():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x.astype(np.float32) * 3.0
    assert y.dtype == np.float32
    g = tape.gradient(y, x)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])


def test_float_of_a_non_scalar_says_to_use_item():
    t = nt.constant([[2.5]])
    with pytest.raises(TypeError, match=r"\.item\(\)"):
        float(t)
    assert t.item() == 2.5


# --- copies and pickles -------------------------------------------------------------------------
def test_copies_of_a_tensor_are_new_values_that_the_gradient_flows_through():
    import copy
    x = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = x * 3.0
        z = np.sum(copy.copy(y) * copy.deepcopy(y))      # 9 x**2
    for c in (copy.copy(y), copy.deepcopy(y)):
        assert type(c) is nt.Tensor and c._id != y._id
        np.testing.assert_array_equal(c.numpy(), y.numpy())
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [18.0, 36.0])


def test_an_unpickled_tensor_is_a_new_immutable_constant():
    import pickle
    t = nt.constant(np.array([1.0, 2.0], dtype="float32"))
    u = pickle.loads(pickle.dumps(t))
    assert type(u) is nt.Tensor and u._id != t._id and u.dtype == np.float32
    np.testing.assert_array_equal(u.numpy(), [1.0, 2.0])
    with pytest.raises(ValueError):
        np.asarray(u)[0] = 5.0


# --- the ndarray attributes ------------------------------------------------------------------------
# every public ndarray attribute is on Tensor, or left out for the reason given
_LEFT_OUT = {
    # layout and buffer protocols: a Tensor is not an ndarray, and exposing its buffer
    # would let numpy read it without np.asarray (so without the tape noting an escape)
    "__array_finalize__": "ndarray subclass hook", "__array_wrap__": "ndarray subclass hook",
    "__array_interface__": "buffer", "__array_struct__": "buffer", "ctypes": "buffer",
    "__dlpack__": "buffer", "__dlpack_device__": "buffer", "flags": "buffer",
    "strides": "buffer", "base": "buffer", "view": "reinterprets the buffer",
    "getfield": "reinterprets the buffer", "byteswap": "reinterprets the buffer",
    "__array_namespace__": "nbtape is not an array-API namespace",
    "device": "array API", "to_device": "array API",
    "__class_getitem__": "typing generics of ndarray",
    # mutation: tensors are immutable (Python falls back to x = x + y for +=, as TF does)
    "__delitem__": "immutable", "fill": "immutable", "put": "immutable",
    "resize": "immutable", "setfield": "immutable", "setflags": "immutable",
    "flat": "a writable iterator; np.ravel(t) reads it",
    "__iadd__": "immutable", "__iand__": "immutable", "__ifloordiv__": "immutable",
    "__ilshift__": "immutable", "__imatmul__": "immutable", "__imod__": "immutable",
    "__imul__": "immutable", "__ior__": "immutable", "__ipow__": "immutable",
    "__irshift__": "immutable", "__isub__": "immutable", "__itruediv__": "immutable",
    "__ixor__": "immutable",
    # serialising: pickle a tensor (it is a new constant), or t.numpy().tofile(...)
    "__setstate__": "pickled by __reduce__", "dump": "pickle", "dumps": "pickle",
    "tofile": "t.numpy().tofile", "tobytes": "t.numpy().tobytes",
    # numpy 1 only (numpy 2 removed them): np.ptp(t) is recorded
    "__array_prepare__": "numpy 1's subclass hook", "itemset": "immutable (numpy 1)",
    "newbyteorder": "reinterprets the buffer (numpy 1)", "ptp": "np.ptp(t) (numpy 1)",
    "tostring": "t.numpy().tobytes (numpy 1)",
}


def test_every_public_ndarray_attribute_is_there_or_left_out_for_a_reason():
    t = nt.constant(np.ones((2, 3)))
    missing = [n for n in dir(np.ndarray) if not hasattr(t, n) and n not in _LEFT_OUT]
    assert missing == []
    # and nothing is listed as left out that Tensor has after all
    assert [n for n in _LEFT_OUT if hasattr(t, n)] == []


@since_numpy("2.0.0", "ndarray.mT")
def test_matrix_transpose_is_recorded_in_both_modes(rng):
    from gradcheck import check_both
    check_both(lambda a: a.mT * np.arange(6.0).reshape(3, 2), rng.standard_normal((2, 3)))
    check_both(lambda a: a.mT, rng.standard_normal((4, 2, 3)))
    with pytest.raises(ValueError, match="2 dimensions"):
        nt.constant([1.0, 2.0]).mT


def test_the_other_ndarray_methods_match_numpy(rng):
    a = rng.standard_normal((3, 4))
    t = nt.constant(a)
    assert (t.itemsize, t.nbytes) == (a.itemsize, a.nbytes)
    assert (a[0, 0] in t) and (123.0 not in t)
    np.testing.assert_array_equal(t.compress([True, False, True], axis=0).numpy(),
                                  a.compress([True, False, True], axis=0))
    np.testing.assert_array_equal(np.sort(t.argpartition(1, axis=1).numpy()[:, :1]),
                                  np.sort(a.argpartition(1, axis=1)[:, :1]))
    np.testing.assert_array_equal(nt.constant([0, 1]).choose([[1, 2], [3, 4]]), [1, 4])
    assert float(round(nt.constant(2.6))) == 3.0
    with pytest.raises(TypeError, match="np.partition"):
        t.partition(1)


def test_bool_of_a_followed_value_is_noted_as_float_is():
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        h = x * 1.0
        y = (1.0 if h else 0.0) * float(h) * (1.0 if h > 0.0 else 0.0)   # (a comparison is
    assert [n.detail for n in tape.notes] == ["bool()", "float()"]        # not followed)


def test_operator_index_of_a_watched_integer_is_noted():
    i = nt.constant(1)
    with nt.GradientTape() as tape:
        tape.watch(i)
        assert operator.index(i) == 1
    assert [n.detail for n in tape.notes] == ["operator.index()"]


@pytest.mark.parametrize("fill", [lambda x: np.full((3,), x),
                                  lambda x: np.full((3,), x, dtype=np.float64),
                                  lambda x: np.full_like(np.zeros(3), x)],
                         ids=["full", "full-dtype", "full_like"])
def test_a_tensor_fill_value_of_np_full_warns_at_the_call(fill):
    """numpy dispatches np.full on none of its arguments (np.full_like on ``a`` only), so
    a tensor fill value gives a plain array: nbtape says so at the user's line, and the
    None gradient later names np.full, not np.asarray."""
    import warnings
    x = nt.Variable(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with nt.GradientTape() as tape:
            y = fill(x)
            loss = np.sum(nt.constant(y) * 2.0)
        assert type(y) is np.ndarray and len(caught) == 1
        assert tape.gradient(loss, x) is None
    assert "left the tape through np.full" in str(caught[1].message)
    first = caught[0]
    assert first.filename == __file__ and "tensor fill value" in str(first.message)
    assert "np.broadcast_to(t, shape)" in str(first.message)
    assert str(first.message).startswith("np.full")
