"""nbtape.snapshot: what a recorded op keeps is what it saw (issue 11, item 2)."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_reverse, gradients_of_sum
from nbtape.snapshot import snapshot, snapshot_kwargs


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


# An op's outputs that view a plain operand (only several-output ops give such views
# while recording: a sweep of the registry's one-output rules on (plain, tensor) pairs
# found none whose gradient reads them) must not change when the user's array does.
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
