"""nbtape/rules/operators.py: the Python operators of tensors and variables.

Each operator and reflected operator is recorded on the tape under its numpy rule,
on tensors and on variables (a variable's read is recorded, the result is a
tensor), and its gradient and tangent match central differences (gradcheck).
Comparisons and bitwise operators compute numpy's values and record nothing.
"""
import operator

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, numeric_grad

A = np.array([[1.3, -0.7, 2.2], [0.4, 1.9, -1.1]])
B = np.array([[0.6, 1.4, -0.8], [1.7, -0.9, 0.5]])
POSITIVE = np.array([[1.3, 0.7, 2.2], [0.4, 1.9, 1.1]])

# operator, its rule's name on the tape, left and right operands (away from kinks)
BINARY = {
    "+": (operator.add, "np.add", A, B),
    "-": (operator.sub, "np.subtract", A, B),
    "*": (operator.mul, "np.multiply", A, B),
    "/": (operator.truediv, "np.divide", A, B),
    "%": (operator.mod, "np.remainder", A, B),
    "**": (operator.pow, "np.power", POSITIVE, B),
    "@": (operator.matmul, "np.matmul", A, B.T),
}
UNARY = {
    "-x": (operator.neg, "np.negative"),
    "+x": (operator.pos, "np.positive"),
    "abs": (operator.abs, "np.absolute"),
}


def _names(tape):
    return [op.name for op in tape.ops]


def _variable_gradients(f, *values, seed=0):
    """The tape's gradients of sum(f(*variables) * w) against central differences."""
    w = np.random.default_rng(seed).standard_normal(np.shape(f(*values)))
    vs = [nt.Variable(v) for v in values]
    with nt.GradientTape() as tape:
        y = np.sum(f(*vs) * w)
    got = tape.gradient(y, vs)

    def h(*a):
        return np.sum(f(*a) * w)
    for k, (g, v) in enumerate(zip(got, values)):
        assert g is not None and type(g) is nt.Tensor
        np.testing.assert_allclose(g.numpy(), numeric_grad(h, list(values), k, 1e-6),
                                   rtol=1e-5, atol=1e-6, err_msg=f"argument {k}")
    return tape


# --- binary operators ----------------------------------------------------------------------------
@pytest.mark.parametrize("sym", list(BINARY))
def test_a_binary_operator_on_tensors_is_recorded_and_differentiates_right(sym):
    op, name, a, b = BINARY[sym]
    x, y = nt.constant(a), nt.constant(b)
    with nt.GradientTape() as tape:
        tape.watch([x, y])
        z = op(x, y)
    assert type(z) is nt.Tensor and _names(tape) == [name]
    np.testing.assert_allclose(z.numpy(), op(a, b))
    check_both(op, a, b)


@pytest.mark.parametrize("sym", list(BINARY))
def test_a_binary_operator_on_variables_reads_them_and_differentiates_right(sym):
    op, name, a, b = BINARY[sym]
    tape = _variable_gradients(op, a, b)
    assert name in _names(tape)


@pytest.mark.parametrize("sym", list(BINARY))
def test_a_reflected_operator_with_a_plain_value_on_the_left(sym):
    op, name, a, b = BINARY[sym]
    left = a if sym == "@" else 2.3          # a Python float, or an array for @
    y = nt.constant(b)
    with nt.GradientTape() as tape:
        tape.watch(y)
        z = op(left, y)
    assert type(z) is nt.Tensor and _names(tape) == [name]
    np.testing.assert_allclose(z.numpy(), op(left, b))
    check_both(lambda v: op(left, v), b)


@pytest.mark.parametrize("sym", list(BINARY))
def test_a_reflected_operator_with_a_variable_on_the_right(sym):
    op, name, a, b = BINARY[sym]
    left = a if sym == "@" else 2.3
    tape = _variable_gradients(lambda v: op(left, v), b)
    assert name in _names(tape)


@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "**"])
def test_an_ndarray_on_the_left_defers_to_the_tensor(sym):
    op, name, a, b = BINARY[sym]
    y = nt.constant(b)
    with nt.GradientTape() as tape:
        tape.watch(y)
        z = op(a, y)
    assert type(z) is nt.Tensor and _names(tape) == [name]
    check_both(lambda v: op(a, v), b)


def test_a_list_operand_is_an_array():
    x = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as tape:
        y = x @ [3.0, 4.0]
        z = [1.0, -1.0] * x
    assert float(y) == 11.0 and z.numpy().tolist() == [1.0, -2.0]
    np.testing.assert_array_equal(tape.gradient([y, z], x).numpy(), [4.0, 3.0])


def test_the_same_tensor_on_both_sides_adds_both_paths():
    x = nt.Variable(np.array([0.5, -2.0]))
    with nt.GradientTape() as tape:
        y = np.sum(x * x + x / x - x ** np.array([3.0, 2.0]))
    g = tape.gradient(y, x).numpy()
    v = x.numpy()
    np.testing.assert_allclose(g, 2 * v - np.array([3.0, 2.0]) * v ** np.array([2.0, 1.0]))


def test_floor_divide_is_recorded_with_a_zero_gradient():
    x, y = nt.Variable(A), nt.Variable(B)
    with nt.GradientTape() as tape:
        z = np.sum((x // y) * x)
    assert "np.floor_divide" in _names(tape)
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_array_equal(gx.numpy(), A // B)       # only the product's share
    np.testing.assert_array_equal(gy.numpy(), np.zeros_like(B))
    np.testing.assert_array_equal((1.7 // nt.constant(B)).numpy(), 1.7 // B)


def test_augmented_operators_make_new_recorded_tensors():
    x = nt.Variable(np.array([1.5, 2.5]))
    with nt.GradientTape() as tape:
        y = x * 1.0
        before = y
        y += x
        y *= x
        y -= 1.0
        y /= 2.0
        y **= 2.0
    assert y is not before and before.numpy().tolist() == [1.5, 2.5]
    assert _names(tape)[-5:] == ["np.add", "np.multiply", "np.subtract", "np.divide", "np.power"]
    v = x.numpy()
    inner = (2 * v * v - 1) / 2
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * inner * 2 * v)


# --- unary operators and ndarray attributes --------------------------------------------------------
@pytest.mark.parametrize("sym", list(UNARY))
def test_unary_operators_on_tensors_and_variables(sym):
    op, name = UNARY[sym]
    x = nt.constant(A)
    with nt.GradientTape() as tape:
        tape.watch(x)
        z = op(x)
    assert type(z) is nt.Tensor and _names(tape) == [name]
    np.testing.assert_array_equal(z.numpy(), op(A))
    check_both(op, A)
    assert name in _names(_variable_gradients(op, A))


@pytest.mark.parametrize("get, name", [
    (lambda t: t.T, "np.transpose"),
    (lambda t: t[1, ::2], "getitem"),
    (lambda t: t[nt.constant(np.array([1, 0, 1]))], "getitem"),
    (lambda t: t.real, "np.real"),
])
def test_attributes_and_indexing_are_recorded(get, name):
    x = nt.constant(A)
    with nt.GradientTape() as tape:
        tape.watch(x)
        z = get(x)
    assert type(z) is nt.Tensor and _names(tape) == [name]
    check_both(get, A)
    assert name in _names(_variable_gradients(get, A))


def test_imag_of_a_complex_tensor_and_of_a_real_one():
    c = A + 1j * B
    check_both(lambda t: t.imag * 1.0, c)
    x = nt.Variable(A)
    with nt.GradientTape() as tape:
        z = np.sum(x.imag + x.real * 2.0)
    assert "np.imag" in _names(tape)
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), np.full_like(A, 2.0))


def test_astype_is_recorded_and_casts_the_gradient_back():
    x = nt.Variable(A)
    with nt.GradientTape() as tape:
        y = x.astype(np.float32)
        z = np.sum(y * y)
    assert y.dtype == np.float32 and _names(tape)[0] == "astype"
    g = tape.gradient(z, x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), 2 * A, rtol=1e-6)


# --- comparisons and bitwise operators: numpy's values, nothing recorded -------------------------
COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda o: o.__name__)
def test_comparisons_give_numpys_bools_and_record_nothing(op):
    x, v = nt.constant(A), nt.Variable(B)
    with nt.GradientTape() as tape:
        tape.watch(x)
        results = [op(x, v), op(v, x), op(x, 0.4), op(0.4, x), op(B, x)]
    expected = [op(A, B), op(B, A), op(A, 0.4), op(0.4, A), op(B, A)]
    for r, e in zip(results, expected):
        assert type(r) is nt.Tensor and r.dtype == np.bool_
        np.testing.assert_array_equal(r.numpy(), e)
    assert len(tape.ops) == 0


BITWISE = [(operator.and_, "&"), (operator.or_, "|"), (operator.xor, "^")]


@pytest.mark.parametrize("op, sym", BITWISE, ids=[s for _, s in BITWISE])
def test_bitwise_operators_on_integer_and_bool_tensors(op, sym):
    i, j = np.array([5, 6, 12]), np.array([3, 10, 7])
    ti, tj = nt.constant(i), nt.constant(j)
    for r, e in [(op(ti, tj), op(i, j)), (op(ti, 3), op(i, 3)), (op(i, tj), op(i, j))]:
        assert type(r) is nt.Tensor
        np.testing.assert_array_equal(r.numpy(), e)
    b = np.array([True, False, True])
    np.testing.assert_array_equal(op(nt.constant(b), ~nt.constant(b)).numpy(), op(b, ~b))
    np.testing.assert_array_equal((~ti).numpy(), ~i)


@pytest.mark.parametrize("op, sym", BITWISE, ids=[s for _, s in BITWISE])
def test_reflected_bitwise_operators_with_a_python_int_on_the_left(op, sym):
    i = np.array([5, 6, 12])
    r = op(3, nt.constant(i))
    assert type(r) is nt.Tensor
    np.testing.assert_array_equal(r.numpy(), op(3, i))


@pytest.mark.parametrize("op", [operator.lshift, operator.rshift], ids=["<<", ">>"])
def test_shift_operators(op):
    i = np.array([5, 6, 12])
    np.testing.assert_array_equal(op(nt.constant(i), 1).numpy(), op(i, 1))
    np.testing.assert_array_equal(op(64, nt.constant(np.array([1, 2]))).numpy(),
                                  op(64, np.array([1, 2])))


def test_divmod_builtin():
    q, r = divmod(nt.constant(A), 1.5)
    np.testing.assert_array_equal(q.numpy(), A // 1.5)
    np.testing.assert_allclose(r.numpy(), A % 1.5)


def test_np_divmod_on_a_tensor_is_recorded_and_differentiates_right():
    x = nt.constant(A)
    with nt.GradientTape() as tape:
        tape.watch(x)
        q, r = np.divmod(x, 1.5)
    assert _names(tape) == ["np.divmod"] and type(q) is nt.Tensor and type(r) is nt.Tensor
    check_both(lambda t: np.divmod(t, 1.5)[1], A)
