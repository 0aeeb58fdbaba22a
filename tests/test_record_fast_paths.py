"""The recorder's unrolled fast paths keep exactly what the general path keeps.

``GradientTape.record`` reads a numpy scalar's ``(shape, dtype)`` from a table keyed by
its type, tests two operand ids without a loop, and walks to the user's line inline;
these tests pin each against the general computation.
"""
import sys

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.arrays import SCALAR_METAS


def test_every_scalar_type_in_the_table_has_that_shape_and_dtype():
    assert np.float64 in SCALAR_METAS and np.float32 in SCALAR_METAS
    for t, (shape, dtype) in SCALAR_METAS.items():
        value = t(1)
        assert (value.shape, value.dtype) == (shape, dtype), t


@pytest.mark.parametrize("value", [np.float64(0.5), np.float32(0.5), np.complex64(1 + 2j),
                                   np.arange(6.0).reshape(2, 3), np.ones(4, np.float32)])
def test_op_metas_are_each_operands_shape_and_dtype(value):
    x = nt.constant(value)
    c = nt.constant(value)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * c
        z = np.sin(y)
        w = x + 2.0
    general = (np.shape(value), np.asarray(value).dtype)
    assert tape.ops[0].metas == (general, general)
    assert tape.ops[1].metas == ((np.shape(y.numpy()), y.dtype),)
    assert tape.ops[2].metas == (general, None)
    assert [op.name for op in tape.ops] == ["np.multiply", "np.sin", "np.add"]
    assert z.dtype == np.asarray(value).dtype and w.shape == np.shape(value)


def test_two_operand_ids_constant_and_unconnected():
    x = nt.constant(2.0)
    c = nt.constant(3.0)        # never watched: a constant for every op
    with nt.GradientTape() as tape:
        tape.watch(x)
        a = x * c
        b = c * x
        c * c                   # unconnected: not recorded
        d = x * x
    ops = tape.ops
    assert len(ops) == 3
    assert ops[0].in_ids == (x._id, None) and ops[0].all_ids == (x._id, c._id)
    assert ops[1].in_ids == (None, x._id) and ops[1].all_ids == (c._id, x._id)
    assert ops[2].in_ids == (x._id, x._id) and ops[2].all_ids == (x._id, x._id)
    assert [float(g) for g in tape.gradient([a, b, d], [x, c], unconnected_gradients="zero")] \
        == [3.0 + 3.0 + 4.0, 0.0]


def test_the_where_of_an_op_is_the_users_line():
    x = nt.Variable(1.5)
    with nt.GradientTape() as tape:
        line = sys._getframe().f_lineno + 1
        y = np.sin(x * 2.0)
    assert [op.where for op in tape.ops] == [
        (__file__, line, "test_the_where_of_an_op_is_the_users_line")] * 2
    assert float(tape.gradient(y, x)) == pytest.approx(2.0 * np.cos(3.0))


def test_apply_makes_the_same_tensor_as_the_constructor():
    # dispatch.apply fills a Tensor's slots itself (no __init__ frame): a new slot in
    # Tensor.__init__ must be set there too, so this pins the slots it fills
    from nbtape.core.tensor import Tensor
    assert Tensor.__slots__ == ("_value", "_id", "__weakref__")
    x = nt.constant(np.arange(3.0))
    y = x * 2.0
    z = Tensor(np.arange(3.0) * 2.0)
    assert type(y) is Tensor and x._id < y._id < z._id
    np.testing.assert_array_equal(y.numpy(), z.numpy())


def test_the_op_view_names_each_field_of_the_record():
    # tape.record builds each record as a tuple literal: the Op view must read every field
    # from the position records.py gives it
    from nbtape.tape import records as R
    x = nt.Variable(np.array([1.0, 2.0]))
    c = nt.constant(3.0)        # unwatched: all_ids keeps its id, in_ids has None
    with nt.GradientTape(persistent=True) as tape:
        y = np.exp(x * c)
    records = tape.op_records
    for k, op in enumerate(tape.ops):
        rec = records[k]
        assert type(rec) is tuple and len(rec) == 11
        assert op.rule is records.rules[rec[R.RULE]] and op.name == op.rule.name
        for name in ("args", "kwargs", "ans", "in_ids", "metas", "out_ids", "all_ids",
                     "raw_args"):
            assert getattr(op, name) is rec[getattr(R, name.upper())], name
        assert op.out is rec[R.OUT] and op.kept_output
    mul, exp = tape.ops
    assert mul.in_ids == (x._id, None) and mul.all_ids == (x._id, c._id)
    assert exp.out is y and exp.ans is y._value and exp.where[1] > 0


def test_a_long_tape_leaves_the_cyclic_gc_nothing_to_walk():
    # records hold only untracked values (a rule key, not the Rule): once the collector
    # has seen them it stops tracking them, so full collections do not walk the tape
    import gc
    x = nt.Variable(0.5)
    with nt.GradientTape() as tape:
        y = x
        for _ in range(3000):
            y = np.sin(y) * 1.0001
    # a collection untracks a tuple once the tuples inside it are untracked: a record
    # seen before its own operand tuples waits for the next one
    gc.collect()
    gc.collect()
    past = tape.op_records[1000:]       # the first ops of a tape keep outputs for pictures
    assert sum(gc.is_tracked(r) for r in past) == 0
    assert float(tape.gradient(y, x)) != 0.0
    gc.collect()
    gc.collect()
    assert sum(gc.is_tracked(r) for r in tape.op_records[1000:]) == 0
    assert tape.ops[-1].args is None and tape.ops[-1].name == "np.multiply"


def test_float_scalar_table_is_the_float_and_complex_scalar_types():
    from nbtape.core.arrays import FLOAT_SCALARS
    assert FLOAT_SCALARS == {t for t, (_, d) in SCALAR_METAS.items() if d.kind in "fc"}
    assert np.float64 in FLOAT_SCALARS and np.int64 not in FLOAT_SCALARS


def test_operands_are_saved_as_arrays_and_rebuilt_as_the_recorded_tensors():
    # ops keep their operand tensors' arrays (a long tape then holds no Tensor objects for
    # the cyclic GC); a pass that records itself gets the tensors back, with their ids
    from nbtape.tape.backward import saved_tensors
    x = nt.Variable(np.array([0.5, 1.5]))
    c = nt.constant(np.array([2.0, 3.0]))      # unwatched: a constant operand
    with nt.GradientTape() as outer:
        with nt.GradientTape(persistent=True) as inner:     # keeps its ops for the asserts
            y = np.sin(x * c)
            total = np.sum(y)
        g = inner.gradient(total, x)            # recorded by outer: tensor mode
    mul, sin = inner.ops[0], inner.ops[1]
    assert mul.raw_args and type(mul.args[0]) is np.ndarray and mul.args[1] is c._value
    args, _ = saved_tensors(mul)
    assert [a._id for a in args] == [x._id, c._id] and mul.in_ids == (x._id, None)
    assert sin.raw_args and type(sin.args[0]) is np.ndarray
    np.testing.assert_allclose(g.numpy(), c.numpy() * np.cos(x.numpy() * c.numpy()))
    h = outer.gradient(g, x)        # d/dx of c cos(c x), summed: -c^2 sin(c x)
    np.testing.assert_allclose(h.numpy(), -c.numpy() ** 2 * np.sin(x.numpy() * c.numpy()))


def test_a_plain_array_operand_is_still_copied_when_saved():
    # the raw fast path takes tensors and numbers only; a writeable array the user may
    # change later goes through the general path, which saves a copy
    x = nt.Variable(np.array([1.0, 2.0]))
    buf = np.array([3.0, 4.0])
    with nt.GradientTape() as tape:
        y = np.sum(x * buf)
    buf[:] = 0.0
    assert not tape.ops[0].raw_args
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 4.0])
