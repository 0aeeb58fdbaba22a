"""The fast paths a training step takes give exactly what the general code gives.

A layer's step (matmuls, a bias, relu, log_softmax, a sum over the classes, a mean)
runs rules with shortcuts for plain numpy arrays: the matmul adjoints use ``.T``, a
reduction's adjoint reshapes an ndarray by its method, ``unbroadcast`` sums a bias's
batch axis with ``np.add.reduce``, log_softmax reduces with the ufuncs' ``reduce``.
Each test here pins a shortcut to the general formula it replaces: the same values
(bit for bit), shapes, dtypes and errors.
"""
import numpy as np
import pytest

import nbtape as nt
from nbtape.core.primitive import primitive
from nbtape.rules.core_ops import matmul_vjp_x, matmul_vjp_y
from nbtape.rules.util import conj, expand_reduced, unbroadcast
from nbtape.training import nn


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((5, 3), (3, 4)), ((2, 5, 3), (3, 4)), ((5, 3), (2, 3, 4))])
def test_matmul_adjoints_of_plain_arrays_are_the_general_formula(dtype, shapes):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shapes[0]).astype(dtype)
    y = rng.standard_normal(shapes[1]).astype(dtype)
    g = rng.standard_normal(np.matmul(x, y).shape).astype(dtype)
    _same(matmul_vjp_x(g, None, x, y), np.matmul(g, conj(np.swapaxes(y, -1, -2))))
    _same(matmul_vjp_y(g, None, x, y), np.matmul(conj(np.swapaxes(x, -1, -2)), g))


def test_matmul_adjoints_keep_their_other_forms():
    # 1-d operands and complex ones do not take the shortcut
    rng = np.random.default_rng(1)
    m = rng.standard_normal((3, 4))
    v3, v4 = rng.standard_normal(3), rng.standard_normal(4)
    g4, g3 = rng.standard_normal(4), rng.standard_normal(3)
    _same(matmul_vjp_x(g4, None, v3, m), np.matmul(m, g4[..., None])[..., 0])
    _same(matmul_vjp_y(g4, None, v3, m), v3[:, None] * g4[..., None, :])
    _same(matmul_vjp_y(g3, None, m, v4), np.matmul(m.T, g3[..., None])[..., 0])
    xc = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    c = m + 1j * rng.standard_normal((3, 4))
    gc = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    _same(matmul_vjp_x(gc, None, xc, c), np.matmul(gc, np.conj(c).T))
    _same(matmul_vjp_y(gc, None, xc, c), np.matmul(np.conj(xc).T, gc))


@pytest.mark.parametrize("shape,axis", [((4, 3), 1), ((4, 3), -1), ((4, 3), 0),
                                        ((2, 3, 4), 1), ((2, 3, 4), -3), ((5,), 0)])
def test_a_reductions_adjoint_over_one_int_axis_is_the_tuple_axis_one(shape, axis):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    g = np.asarray(np.sum(x, axis=axis))
    fast = expand_reduced(g, shape, axis, False)
    general = expand_reduced(g, shape, (axis,), False)
    _same(fast, general)
    view = np.broadcast_to(np.expand_dims(g, axis), shape)
    _same(fast, view)
    assert fast.strides == view.strides and np.shares_memory(fast, g)
    assert not fast.flags.writeable         # a broadcast view, as before
    with pytest.raises(ValueError, match="read-only"):
        fast[...] = 0.0
    strided = [np.asfortranarray(g)] if g.ndim > 1 else [g[::-1]] if g.ndim else []
    for other in strided + [g.astype(np.complex64), g.astype(np.float16), g[()]]:
        _same(expand_reduced(other, shape, axis, False),
              np.broadcast_to(np.expand_dims(other, axis), shape))
    with pytest.raises(ValueError, match="reshape"):
        expand_reduced(np.ones(g.size + 1), shape, axis, False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("gshape,shape", [((4, 3), (3,)), ((2, 4, 3), (3,)), ((4, 3), (1, 3)),
                                          ((4, 3), (4, 1)), ((4, 3), ()), ((2, 4, 3), (4, 1))])
def test_unbroadcast_sums_as_np_sum_does(dtype, gshape, shape):
    rng = np.random.default_rng(3)
    g = rng.standard_normal(gshape).astype(dtype)
    lead = len(gshape) - len(shape)
    want = np.sum(g, axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and want.shape[i] != 1)
    want = np.sum(want, axis=axes, keepdims=True) if axes else want
    _same(unbroadcast(g, shape, np.dtype(dtype)), want)
    _same(unbroadcast(g, shape, np.dtype("float64")), want.astype("float64"))


def _log_softmax_general(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
def test_log_softmax_reduces_as_np_max_and_np_sum(dtype, axis):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((4, 5)) * 30).astype(dtype)
    ans = nn._log_softmax.raw(x, axis=axis)
    _same(ans, _log_softmax_general(x, axis))
    g = rng.standard_normal((4, 5)).astype(dtype)
    _same(nn._log_softmax_vjp(g, ans, x, axis),
          g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True))
    with pytest.raises(ValueError, match="zero-size"):
        nn._log_softmax.raw(np.ones((0, 3)), axis=0)


def test_log_softmax_gradient_and_its_second_derivative():
    x = nt.constant(np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]]))
    w = np.array([[1.0, 0.0, 2.0], [0.5, 1.5, 0.0]])
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = np.sum(w * nt.nn.log_softmax(x))
        g = inner.gradient(y, x)       # computed on tensors: the outer tape records it
        z = np.sum(g * g)
    s = np.exp(_log_softmax_general(x.numpy()))
    want_g = w - s * w.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(g.numpy(), want_g, rtol=1e-12)
    assert outer.gradient(z, x) is not None


def test_a_primitive_runs_plain_values_and_records_tensors():
    calls = []

    @primitive
    def twice(x, scale=1.0):
        calls.append(type(x))
        return 2 * scale * np.asarray(x)

    assert twice(3.0) == 6.0 and twice(1.0, scale=nt.constant(2.0)).numpy() == 4.0
    x = nt.constant(1.5)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = twice(x)
    assert calls == [float, float, np.ndarray]
    assert [op.name for op in tape.ops] == ["twice"]
    with pytest.raises(nt.NoGradientRuleError, match="twice"):
        tape.gradient(y, x)


@pytest.mark.parametrize("structure", [[1, 2, 3], (1, 2), [], (), [1, [2, 3]], (1, {"a": 2}),
                                       {"a": 1, "b": (2, 3)}, 5])
def test_flat_lists_flatten_and_rebuild_as_nested_ones_do(structure):
    from nbtape.core.structure import _flatten, flatten, unflatten

    general = []
    _flatten(structure, general)        # the recursion flatten uses for nested structures
    flat = flatten(structure)
    assert type(flat) is list and flat == general
    back = unflatten(structure, flat)
    assert back == structure and type(back) is type(structure)


def test_gradient_checks_its_sources_in_order():
    x, k = nt.Variable(1.0), nt.Variable(2)
    with nt.GradientTape(persistent=True) as tape:
        y = x * 3.0
    with pytest.raises(TypeError, match="plain float as its source"):
        tape.gradient(y, [k, 2.0])
    with pytest.warns(UserWarning, match="int64"):
        gx, gk = tape.gradient(y, (x, k))
    assert float(gx) == 3.0 and gk is None
    assert [float(g) for g in tape.gradient(y, [x, x])] == [3.0, 3.0]


def test_an_auto_watch_keeps_the_users_line_on_every_read_path():
    import sys
    w = nt.Variable(np.eye(2))
    v = nt.Variable(np.ones(2))
    u = nt.Variable(2.0)
    lists = nt.Variable(np.ones(2))
    x = nt.constant(np.ones((3, 2)))
    with nt.GradientTape() as tape:
        first = sys._getframe().f_lineno + 1
        y = x @ w                   # two operands, a variable: the unrolled read
        z = np.sin(v.value())       # an explicit read
        s = u * [1.0, 2.0]          # a list operand: the general read
        t = np.sum(lists, axis=0)   # a keyword call
    here = __file__, "test_an_auto_watch_keeps_the_users_line_on_every_read_path"
    assert [tape.watched[i._id].where for i in (w, v, u, lists)] == [
        (here[0], first + k, here[1]) for k in range(4)]
    assert [k.kind for k in tape.watched.values()] == ["variable"] * 4
    grads = tape.gradient([y, z, s, t], [w, v, u, lists])
    assert [g.shape for g in grads] == [(2, 2), (2,), (), (2,)]
    assert float(grads[2]) == 3.0


def _small_tape_general(ops, max_ops, max_bytes):
    # what small_tape computed before its one-loop form
    if len(ops) > max_ops:
        return False
    total = 0
    for op in ops:
        if not op.kept_output:
            return False
        out = op.out
        outs = out if isinstance(out, tuple) else (out,)
        total += sum(getattr(getattr(o, "_value", o), "nbytes", 8) for o in outs
                     if o is not None)
    return total <= max_bytes


@pytest.mark.parametrize("size", [1, 100, 5000])
def test_small_tape_counts_as_before(size):
    from nbtape.tape.records import small_tape
    x = nt.constant(np.ones(size))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.sin(x) * 2.0
        a, b = np.split(y, 2) if size % 2 == 0 else (y, y)
        z = np.sum(a) + np.sum(b)
    for limit in (10, 8 * size, 8 * 3 * size, 1 << 20):
        assert small_tape(tape.op_records, 1000, limit) == \
            _small_tape_general(tape.ops, 1000, limit)
    assert small_tape(tape.op_records, 2, 1 << 20) is False


def test_small_tape_counts_freed_outputs_as_before():
    from nbtape.tape.records import small_tape
    x = nt.constant(np.ones(8000))      # 64,000 bytes: each output is kept while recording
    with nt.GradientTape() as tape:
        tape.watch(x)
        ys = [x * float(k) for k in range(20)]     # 1.28 MB in all: not a small tape
        z = np.sum(ys[-1])
    tape.gradient(z, x)                 # frees the ops: outputs become weak references
    del ys[:10]
    ops = tape.ops
    assert sum(op.kept_output and op.out is None for op in ops) == 10
    for limit in (10, 1 << 20, 1 << 30):
        assert small_tape(tape.op_records, 1000, limit) == _small_tape_general(ops, 1000, limit)


@pytest.mark.parametrize("call", [lambda x: np.sum(x, axis=1), lambda x: np.mean(x),
                                  lambda x: np.linalg.svd(x, compute_uv=False),
                                  lambda x: np.select([x.numpy() > 0], [x], 0.0)])
def test_numpy_functions_record_what_array_function_records(call, monkeypatch):
    # __array_function__ sends a rule with no modes and no composite straight to apply
    from nbtape.core.dispatch import array_function
    x = nt.constant(np.arange(6.0).reshape(2, 3) - 2.0)
    with nt.GradientTape() as fast:
        fast.watch(x)
        y1 = call(x)
    monkeypatch.setattr(nt.Tensor, "__array_function__",
                        lambda self, func, types, args, kwargs: array_function(func, args, kwargs))
    with nt.GradientTape() as general:
        general.watch(x)
        y2 = call(x)
    monkeypatch.undo()
    assert len(fast.ops) == len(general.ops) > 0
    assert [op.name for op in fast.ops] == [op.name for op in general.ops]
    # (general's line is the stand-in lambda above: it is a frame outside nbtape)
    assert {op.where[1] for op in fast.ops} == {call.__code__.co_firstlineno}
    _same(y1.numpy(), y2.numpy())
    _same(fast.gradient(y1, x).numpy(), general.gradient(y2, x).numpy())


@pytest.mark.parametrize("g", [np.array(1.5, np.float32), np.float64(2.0), np.array(1 + 2j),
                               np.complex64(1j), np.array(3.0, np.float16), np.float32(-0.0)])
def test_the_mean_of_everything_spreads_its_adjoint_as_np_full(g):
    from nbtape.rules.reductions import _mean_vjp
    x = np.ones((4, 3), np.float32)
    out = _mean_vjp(g, None, x)
    _same(out, np.full(x.shape, g / 12))
    g11 = np.reshape(g, (1, 1))
    _same(_mean_vjp(g11, None, x, keepdims=True), np.full(x.shape, g11 / 12))
    assert out.flags.writeable and out.flags.c_contiguous
    assert (np.signbit(np.real(out)) == np.signbit(np.real(g / 12))).all()


@pytest.mark.parametrize("value", [np.arange(6.0).reshape(2, 3), np.float32(1.5),
                                   np.arange(4, dtype=np.float32)[::2]])
def test_a_tensor_as_an_array_is_a_read_only_view_of_its_value(value):
    t = nt.constant(value) if isinstance(value, np.generic) else nt.Tensor(value)
    a = np.asarray(t)
    _same(a, np.asarray(value))
    assert type(a) is np.ndarray and not a.flags.writeable
    if isinstance(value, np.ndarray):
        assert np.shares_memory(a, value)       # a view, not a copy
    _same(np.asarray(t, dtype=np.float64), np.asarray(value, dtype=np.float64))
    c = np.array(t, copy=True)
    assert c.flags.writeable and not np.shares_memory(c, t._value)


def test_gradients_are_tensors_of_each_sources_dtype():
    w32 = nt.Variable(np.ones((2, 2), np.float32))
    w64 = nt.Variable(np.ones(2))
    c = nt.Variable(np.ones(2, np.complex128))
    k = nt.Variable(np.arange(2))
    unused = nt.Variable(np.ones(3, np.float32))
    with nt.GradientTape() as tape:
        y = np.sum(w32 @ w64) + np.sum(np.real(c * 2.0)) + np.sum(k * 1.0)
    with pytest.warns(UserWarning, match="int64"):
        grads = tape.gradient(y, [w32, w64, c, k, unused])
    assert [type(g) for g in grads[:3]] == [nt.Tensor] * 3 and grads[3:] == [None, None]
    assert [(g.dtype, g.shape) for g in grads[:3]] == [
        (np.dtype(np.float32), (2, 2)), (np.dtype(np.float64), (2,)),
        (np.dtype(np.complex128), (2,))]
    np.testing.assert_array_equal(grads[0].numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(grads[2].numpy(), np.full(2, 2.0 + 0j))
