"""nbtape/core/dispatch.py: plain numpy calls on tensors, through ``__array_ufunc__`` and
``__array_function__``.

Ufuncs, ufunc methods (``np.add.reduce``), numpy functions with a rule and without one,
``out=`` buffers, calls that mix tensors with plain values, what a call does with no
tape open, and the types of the results.  Gradients are checked against central
differences (gradcheck) or closed forms.
"""
import numpy as np
import pytest

import nbtape as nt
from nbtape.core.state import tls
from gradcheck import check_both, check_reverse, since_numpy

X = np.array([[0.4, 1.3, -0.6], [2.1, -1.2, 0.8]])
Y = np.array([[1.1, 0.7, 1.6], [0.5, 1.8, 0.9]])


def recorded(f, *values):
    """``f`` on watched constants: (result, names of the ops recorded, tape, tensors)."""
    ts = [nt.constant(v) for v in values]
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        out = f(*ts)
    return out, [op.name for op in tape.ops], tape, ts


# --- ufuncs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("ufunc", [np.sin, np.exp, np.tanh, np.square, np.negative, np.log1p],
                         ids=lambda u: u.__name__)
def test_a_unary_ufunc_is_recorded_under_its_name(ufunc):
    x = np.abs(X)
    out, names, _, _ = recorded(ufunc, x)
    assert type(out) is nt.Tensor and names == [f"np.{ufunc.__name__}"]
    np.testing.assert_allclose(out.numpy(), ufunc(x))
    check_both(ufunc, x)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.hypot, np.arctan2, np.maximum],
                         ids=lambda u: u.__name__)
def test_a_binary_ufunc_with_a_tensor_on_either_side(ufunc):
    for left, right in [(X, Y), (X, 0.3), (0.3, Y)]:
        def f(*ts, left=left, right=right):
            it = iter(ts)
            a = next(it) if isinstance(left, np.ndarray) else left
            b = next(it) if isinstance(right, np.ndarray) else right
            return ufunc(a, b)
        values = [v for v in (left, right) if isinstance(v, np.ndarray)]
        out, names, _, _ = recorded(f, *values)
        assert type(out) is nt.Tensor and names == [f"np.{ufunc.__name__}"]
        np.testing.assert_allclose(out.numpy(), ufunc(left, right))
        check_both(f, *values)


def test_a_plain_array_and_a_tensor_mix():
    out, names, tape, (y,) = recorded(lambda y: np.multiply(X, y) + np.add(y, X), Y)
    assert names == ["np.multiply", "np.add", "np.add"]
    np.testing.assert_allclose(tape.gradient(out, y).numpy(), X + 1.0)


def test_ufunc_keywords_that_do_not_change_the_function_are_differentiated():
    out, names, tape, (x, y) = recorded(
        lambda x, y: np.multiply(x, y, dtype=np.float64, casting="same_kind", where=True), X, Y)
    assert names == ["np.multiply"]
    gx, gy = tape.gradient(out, [x, y])
    np.testing.assert_allclose(gx.numpy(), Y)
    np.testing.assert_allclose(gy.numpy(), X)
    out32, names, _, _ = recorded(lambda x: np.sin(x, dtype=np.float32), X)
    assert out32.dtype == np.float32 and names == ["np.sin"]


@since_numpy("2.0.0", "the warning about where= without out=")
def test_a_ufunc_with_a_where_mask_is_recorded_without_a_rule():
    mask = np.array([[True, False, True], [False, True, True]])
    with pytest.warns(UserWarning, match="where"):          # numpy's own warning
        out, names, tape, (x,) = recorded(
            lambda x: np.sum(np.add(x, 1.0, where=mask)), X)
    assert names == ["np.add with where=", "np.sum"]
    with pytest.raises(nt.NoGradientRuleError, match="np.add with where="):
        tape.gradient(out, x)


# --- ufunc methods --------------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda x: np.add.reduce(x), "np.add.reduce"),
    (lambda x: np.add.reduce(x, axis=1, keepdims=True), "np.add.reduce"),
    (lambda x: np.multiply.reduce(x, axis=0), "np.multiply.reduce"),
    (lambda x: np.maximum.reduce(x, axis=1), "np.maximum.reduce"),
    (lambda x: np.minimum.reduce(x, axis=None), "np.minimum.reduce"),
    (lambda x: np.add.accumulate(x, axis=1), "np.add.accumulate"),
    (lambda x: np.multiply.accumulate(x), "np.multiply.accumulate"),
    (lambda x: np.multiply.outer(x[0], x[1]), "np.multiply.outer"),
    (lambda x: np.subtract.outer(x, x[0]), "np.subtract.outer"),
    (lambda x: np.add.reduce(array=x, axis=0), "np.add.reduce"),
])
def test_a_ufunc_method_with_a_rule_is_recorded_and_differentiates_right(call, name):
    out, names, _, _ = recorded(call, X)
    assert type(out) is nt.Tensor and name in names
    np.testing.assert_allclose(out.numpy(), call(X))
    check_both(call, X)


@pytest.mark.parametrize("call, name", [
    (lambda x: np.add.reduceat(x, [0, 2], axis=1), "np.add.reduceat"),
    (lambda x: np.maximum.accumulate(x, axis=1), "np.maximum.accumulate"),
])
def test_a_ufunc_method_without_a_rule_computes_and_refuses_a_gradient(call, name):
    out, names, tape, (x,) = recorded(lambda x: np.sum(call(x)), X)
    assert names == [name, "np.sum"]
    np.testing.assert_allclose(out.numpy(), np.sum(call(X)))
    with pytest.raises(nt.NoGradientRuleError, match=name):
        tape.gradient(out, x)


# --- numpy functions ------------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda x: np.sum(x, axis=1), "np.sum"),
    (lambda x: np.sum(a=x), "np.sum"),
    (lambda x: np.mean(x, 0, keepdims=True), "np.mean"),
    (lambda x: np.transpose(x), "np.transpose"),
    (lambda x: np.concatenate([x, X]), "np.concatenate"),
    (lambda x: np.stack([x, 2.0 * x], axis=-1), "np.stack"),
    (lambda x: np.where(X > 0, x, -x), "np.where"),
    (lambda x: np.linalg.svd(x, compute_uv=False), "np.linalg.svd (compute_uv=False)"),
])
def test_a_numpy_function_with_a_rule_is_recorded_and_differentiates_right(call, name):
    out, names, _, _ = recorded(call, X)
    assert type(out) is nt.Tensor and name in names
    np.testing.assert_allclose(out.numpy(), call(X))
    check_reverse(call, X)


def test_a_composite_function_records_the_numpy_calls_it_is_made_of():
    out, names, tape, (x,) = recorded(lambda x: np.select([x > 1.0, x < 0.0], [x * x, -x], 5.0), X)
    assert "np.select" not in names and "np.where" in names
    np.testing.assert_allclose(out.numpy(), np.select([X > 1, X < 0], [X * X, -X], 5.0))
    g = tape.gradient(out, x).numpy()
    np.testing.assert_allclose(g, np.where(X > 1, 2 * X, np.where(X < 0, -1.0, 0.0)))


def test_a_numpy_function_without_a_rule_computes_and_refuses_a_gradient():
    values = np.array([3.0, 1.0, 3.0, 2.0])
    out, names, tape, (x,) = recorded(lambda x: np.sum(np.unique(x) ** 2), values)
    assert names == ["np.unique", "np.power", "np.sum"]
    assert float(out) == 14.0
    with pytest.raises(nt.NoGradientRuleError, match="no gradient rule for np.unique"):
        tape.gradient(out, x)


def test_a_function_without_a_rule_that_returns_several_arrays():
    (counts, edges), names, tape, (x,) = recorded(lambda x: np.histogram(x, bins=2), X)
    assert type(counts) is nt.Tensor and type(edges) is nt.Tensor and names == ["np.histogram"]
    want_counts, want_edges = np.histogram(X, bins=2)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_allclose(edges.numpy(), want_edges)
    with nt.GradientTape() as t2:
        t2.watch(x)
        _, e = np.histogram(x, bins=2)
        s = np.sum(e)
    with pytest.raises(nt.NoGradientRuleError, match="np.histogram"):
        t2.gradient(s, x)


def test_a_function_without_a_rule_on_a_variable_reads_it():
    v = nt.Variable(np.array([2.0, 1.0, 2.0]))
    with nt.GradientTape() as tape:
        u = np.unique(v)
    assert type(u) is nt.Tensor and u.numpy().tolist() == [1.0, 2.0]
    assert v._id in tape.watched and [op.name for op in tape.ops] == ["np.unique"]


def test_variables_inside_a_list_operand_are_read_and_recorded():
    v = nt.Variable(np.array([1.0, 2.0]))
    w = nt.Variable(np.array([3.0, 4.0]))
    with nt.GradientTape() as tape:
        s = np.stack([v, w, np.ones(2)])
        y = np.sum(s * np.array([[1.0], [2.0], [3.0]]))
    gv, gw = tape.gradient(y, [v, w])
    np.testing.assert_array_equal(gv.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(gw.numpy(), [2.0, 2.0])


# --- out= -----------------------------------------------------------------------------------------
def test_out_into_a_plain_array_fills_it_and_notes_the_escape():
    buf = np.zeros_like(X)
    x = nt.constant(X)
    with nt.GradientTape() as tape:
        tape.watch(x)
        r = np.multiply(x, 2.0, out=buf)
        y = np.sum(x * 1.0)
    assert r is buf and type(r) is np.ndarray
    np.testing.assert_array_equal(buf, 2.0 * X)
    assert [n.kind for n in tape.notes] == ["escape"] and "out=" in tape.notes[0].detail
    assert [op.name for op in tape.ops] == ["np.multiply", "np.sum"]      # only x * 1.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.ones_like(X))


def test_out_into_a_plain_array_with_no_tape_open():
    buf = np.zeros(3)
    r = np.add(nt.constant([1.0, 2.0, 3.0]), 1.0, out=(buf,))
    assert r is buf and buf.tolist() == [2.0, 3.0, 4.0]


@pytest.mark.parametrize("out", [lambda t: t, lambda t: (t,)], ids=["tensor", "tuple"])
def test_out_into_a_tensor_is_refused(out):
    target = nt.constant(np.zeros(2))
    with pytest.raises(TypeError, match=r"immutable, so np.add\(\.\.\., out=\.\.\.\)"):
        np.add(nt.constant([1.0, 2.0]), 1.0, out=out(target))
    assert target.numpy().tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match="immutable"):
        np.add(np.ones(2), 1.0, out=out(target))          # the tensor only as out=


# --- with no recorder -----------------------------------------------------------------------------
def test_with_no_tape_open_calls_compute_and_record_nothing():
    assert tls.stack == []
    x = nt.constant(X)
    results = [np.sin(x), np.sum(x, axis=0), np.add.reduce(x), np.unique(x), x * 2.0]
    for r, want in zip(results, [np.sin(X), X.sum(0), np.add.reduce(X), np.unique(X), X * 2]):
        assert type(r) is nt.Tensor
        np.testing.assert_allclose(r.numpy(), want)
    with nt.GradientTape() as tape:     # a tape opened later has seen none of them
        tape.watch(x)
    assert len(tape.ops) == 0 and not tape.tracks(results[0])


def test_a_tape_that_watches_nothing_records_no_op_on_constants():
    x = nt.constant(X)
    with nt.GradientTape() as tape:
        y = np.sum(np.sin(x))
    assert type(y) is nt.Tensor and len(tape.ops) == 0


# --- result types ---------------------------------------------------------------------------------
def test_result_types():
    x = nt.constant(np.array([[1.0, 2.0], [3.0, 5.0]]))
    assert type(np.sum(x)) is nt.Tensor and np.sum(x).shape == ()
    assert type(1j * x) is nt.Tensor and (1j * x).dtype == np.complex128
    assert np.argmax(x).dtype.kind == "i" and type(np.argmax(x)) is nt.Tensor
    assert type(np.isclose(x, 2.0)) is nt.Tensor and np.isclose(x, 2.0).dtype == np.bool_
    # what is not an array stays what numpy returns
    assert np.shape(x) == (2, 2) and type(np.shape(x)) is tuple
    assert type(np.ndim(x)) is int and type(np.size(x)) is int
    assert np.allclose(x, x) is True
    # several results keep numpy's container, with tensors inside
    parts = np.split(x, 2)
    assert type(parts) is list and all(type(p) is nt.Tensor for p in parts)
    q, r = np.divmod(x, 2.0)
    assert type(np.divmod(x, 2.0)) is tuple and type(q) is nt.Tensor
    eig = np.linalg.eigh(x @ x.T)
    assert type(eig).__name__ == "EighResult" and type(eig.eigenvalues) is nt.Tensor
    svd = np.linalg.svd(x)
    assert type(svd).__name__ == "SVDResult" and all(type(p) is nt.Tensor for p in svd)
    assert all(type(p) is nt.Tensor for p in np.nonzero(x))


def test_a_variable_operand_gives_a_tensor_and_is_watched():
    v = nt.Variable(X)
    with nt.GradientTape() as tape:
        y = np.sum(np.cos(v))
    assert type(y) is nt.Tensor and v._id in tape.watched
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), -np.sin(X))


def test_a_numpy_function_given_out_makes_a_tensor_of_its_own():
    # np.clip(..., out=buf) returns buf: the tensor gets its own copy, and is recorded
    x = nt.constant(np.array([-2.0, 0.5, 3.0]))
    buf = np.zeros(3)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.clip(x, -1.0, 1.0, out=buf)
    assert type(y) is nt.Tensor and buf.tolist() == [-1.0, 0.5, 1.0]
    buf[:] = 7.0
    assert y.numpy().tolist() == [-1.0, 0.5, 1.0]
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0, 0.0])
