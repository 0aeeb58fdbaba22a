"""nbtape.tape.snapshot: what a recorded op keeps is what it saw (issue 11, item 2)."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_reverse, gradients_of_sum
from nbtape.tape.snapshot import snapshot, snapshot_kwargs


def test_writeable_arrays_are_copied_and_the_rest_kept():
    buf = np.ones(3)
    t = nt.constant([1.0, 2.0])
    kept = snapshot([buf, t, 2.0, None, "ij->", slice(1), np.float64(3.0)])
    buf[:] = 7.0
    np.testing.assert_array_equal(kept[0], np.ones(3))
    assert all(a is b for a, b in zip(kept[1:], [t, 2.0, None, "ij->"]))


def test_read_only_view_of_a_writeable_buffer_is_copied():
    buf = np.arange(3.0)
    view = np.broadcast_to(buf, (2, 3))       # read-only, but buf can still change
    assert not view.flags.writeable
    kept = snapshot([view])[0]
    buf[:] = -1.0
    np.testing.assert_array_equal(kept, [[0.0, 1.0, 2.0]] * 2)


def test_read_only_arrays_with_read_only_bases_are_kept():
    a = np.arange(3.0)
    a.flags.writeable = False
    v = a[1:]
    kept = snapshot([a, v])
    assert kept[0] is a and kept[1] is v


def test_nested_lists_and_tuples_keep_their_type():
    rows, cols = np.array([0, 1]), np.array([1, 0])
    kept = snapshot([(rows, cols), [np.ones(2)]])
    rows[:] = 5
    assert type(kept[0]) is tuple and type(kept[1]) is list
    np.testing.assert_array_equal(kept[0][0], [0, 1])


def test_keyword_arguments():
    w = np.ones(2)
    same = {"axis": 0, "keepdims": True}
    assert snapshot_kwargs(same) is same        # nothing to copy: no new dict
    kept = snapshot_kwargs({"axis": 0, "weights": w})
    w[:] = 3.0
    np.testing.assert_array_equal(kept["weights"], [1.0, 1.0])
    assert kept["axis"] == 0


# An op's outputs that view a plain operand (besides an out= buffer, below, only
# several-output ops give such views: a sweep of the one-output rules on (plain, tensor)
# pairs found none) must not change when the user's array does.
@pytest.mark.parametrize("views", [
    lambda buf, x: np.broadcast_arrays(buf, x),
    lambda buf, x: np.meshgrid(buf, x, copy=False, indexing="ij"),
])
def test_outputs_that_view_a_plain_operand_keep_what_they_saw(views):
    def f(buf, x):
        a, b = views(buf, x)
        return a * b ** 2, a
    rng = np.random.default_rng(3)
    buf, x0 = rng.uniform(0.5, 1.5, 3), rng.uniform(0.5, 1.5, 3)
    check_reverse(lambda x: f(buf, x)[0], x0)          # the rule itself is right
    (expected,) = gradients_of_sum(lambda x: f(buf.copy(), x)[0], x0)
    x = nt.constant(x0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, a = f(buf, x)
    seen = np.asarray(a).copy()
    buf[:] = 100.0                       # a buffer reused, after the op
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected)
    np.testing.assert_array_equal(np.asarray(a), seen)     # tensors are immutable


# numpy returns a function's out= buffer itself: the tensor it becomes must not follow the
# buffer when the user reuses it (the later op keeps the tensor, not a copy)
@pytest.mark.parametrize("into", [
    lambda x, buf: np.clip(x, 0.6, 2.0, out=buf),
    lambda x, buf: np.clip(x, 0.6, 2.0, buf),
    lambda x, buf: np.fix(x * 3.0, buf),
    lambda x, buf: np.sum(np.stack([x, x * x]), 0, None, buf),     # out among the operands
    lambda x, buf: np.cumsum(x, out=buf),
    lambda x, buf: np.concatenate([x[:1], x[1:2], x[2:]], 0, buf),
    lambda x, buf: np.dot(np.diag(x), x, buf),
])
def test_a_result_written_into_an_out_buffer_keeps_what_it_saw(into):
    def f(x, buf):
        r = into(x, buf)
        return r * x, r
    x0 = np.random.default_rng(4).uniform(0.5, 2.5, 3)
    check_reverse(lambda x: f(x, np.zeros(3))[0], x0)
    (expected,) = gradients_of_sum(lambda x: f(x, np.zeros(3))[0], x0)
    x, buf = nt.constant(x0), np.zeros(3)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, r = f(x, buf)
    np.testing.assert_array_equal(buf, np.asarray(r))      # numpy's promise is kept
    buf[:] = 100.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected)
    np.testing.assert_array_less(np.asarray(r), 50.0)      # tensors are immutable


@pytest.mark.parametrize("into", [
    lambda x, buf: np.clip(x, 0.6, 2.0, out=buf),
    lambda x, buf: np.clip(x, 0.6, 2.0, buf),
    lambda x, buf: np.fix(x * 3.0, buf),
    lambda x, buf: np.cumsum(x, out=buf),
])
def test_a_tensor_made_outside_any_tape_from_an_out_buffer_is_its_own(into):
    # no tape records the call, yet the result is a tensor a tape may use (and keep) later
    x, buf = nt.constant([0.7, 1.2, 2.6]), np.zeros(3)
    r = into(x, buf)
    seen = np.asarray(r).copy()
    np.testing.assert_array_equal(buf, seen)                # numpy's promise is kept
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(r * x)
    buf[:] = 100.0
    np.testing.assert_array_equal(np.asarray(r), seen)      # tensors are immutable
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), seen)


def test_a_constant_written_into_an_out_buffer_keeps_what_it_saw():
    # not connected to the source, but kept by the op that is: d(r * x)/dx = r
    c, x = nt.constant([0.2, 0.7, 1.4]), nt.constant([1.0, 2.0, 3.0])
    buf = np.zeros(3)
    with nt.GradientTape() as tape:
        tape.watch(x)
        r = np.clip(c, 0.5, 1.0, out=buf)
        y = np.sum(r * x)
    buf[:] = 100.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.5, 0.7, 1.0])
