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


def test_a_read_only_flag_is_no_proof_the_array_cannot_change():
    # numpy lets the owner turn writeable back on: a small read-only array is copied too,
    # so its gradient stays right when its owner refills it (issue 37); only memory that
    # cannot change (immutable bytes) is kept as it is
    a = np.arange(3.0)
    a.flags.writeable = False
    v = a[1:]
    kept = snapshot([a, v])
    a.flags.writeable = True
    a[:] = -1.0
    np.testing.assert_array_equal(kept[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(kept[1], [1.0, 2.0])
    fixed = np.frombuffer(np.arange(3.0).tobytes())
    assert not fixed.flags.writeable and snapshot([fixed])[0] is fixed


def test_a_read_only_loader_buffer_refilled_in_place_gives_the_right_gradient():
    buf = np.full((5, 3), 1.0)
    buf.flags.writeable = False             # "read-only": the advice that was no proof
    x = nt.Variable(np.ones(3))
    with nt.GradientTape() as tape:
        y = np.sum(buf @ x)
    buf.flags.writeable = True              # the loader refills it in place
    buf[:] = 7.0
    buf.flags.writeable = False
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [5.0, 5.0, 5.0])


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


# Large plain operands (a batch X in X @ W) are kept by reference with a fingerprint, not
# copied: a copy per step cost the batch's size in peak memory (issue 28).  The guarantee
# stays: a gradient through one that changed after the op raises instead of being wrong.
from nbtape.tape.snapshot import KEEP_BY_REFERENCE, ChangedOperandError, fingerprint  # noqa: E402


def _big(dtype=np.float64, order="C", seed=5):
    n = KEEP_BY_REFERENCE // np.dtype(dtype).itemsize // 8 + 3     # past the threshold, odd
    a = np.random.default_rng(seed).standard_normal((n, 8)).astype(dtype)
    return np.asfortranarray(a) if order == "F" else a


def _matmul_tape(big):
    w = nt.Variable(np.linspace(0.5, 1.5, 8).astype(big.dtype))
    with nt.GradientTape(persistent=True) as tape:
        y = np.sum(np.tanh(big @ w))
    return tape, y, w


def test_a_large_operand_is_kept_by_reference_not_copied():
    import tracemalloc
    big = np.vstack([_big()] * 32)      # 2 MB: a copy would be plain
    w = nt.Variable(np.ones(8))
    tracemalloc.start()
    with nt.GradientTape() as tape:
        y = np.sum(big @ w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # no copy: the fingerprint widens a buffer at a time (64 KB; 200 KB on numpy 1.26)
    assert peak < big.nbytes / 4
    assert tape.ops[0].args[0] is big and len(tape.ops[0].guards) == 1
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), big.sum(axis=0))


@pytest.mark.parametrize("dtype,order", [(np.float64, "C"), (np.float32, "C"),
                                         (np.float64, "F"), (np.float16, "C")])
@pytest.mark.parametrize("change", [
    lambda a: a.__setitem__((1, 2), a[1, 2] + 1),                  # one element
    lambda a: a.__setitem__((-1, -1), np.nextafter(a[-1, -1], a.dtype.type(np.inf))),  # 1 bit
    lambda a: a.__setitem__(([0, 1], [0, 0]), a[[1, 0], [0, 0]]),   # a swap (same sum)
    lambda a: a.__setitem__(([3, 5], [1, 1]), -a[[3, 5], [1, 1]]),  # two sign flips
    lambda a: np.negative(a, out=a),                                # every sign
    lambda a: np.random.default_rng(0).shuffle(a),                  # rows shuffled in place
    lambda a: a.__setitem__(slice(None), np.roll(a, 1, axis=1)),    # columns rolled
], ids=["element", "last_bit", "swap", "two_signs", "negated", "shuffled", "rolled"])
def test_a_large_operand_changed_after_the_op_raises_at_gradient_time(change, dtype, order):
    big = _big(dtype, order)
    before, seen = fingerprint(big), big.copy()
    change(big)
    assert not np.array_equal(big, seen)    # the change is one
    assert fingerprint(big) != before
    big = _big(dtype, order)
    tape, y, w = _matmul_tape(big)
    expected = tape.gradient(y, w).numpy()          # unchanged: the right gradient
    (reference,) = gradients_of_sum(lambda v: np.tanh(big.astype(float) @ v),
                                    np.linspace(0.5, 1.5, 8))
    # sums of 4,000 (float32) or 2,000 (float16) products, against float64: a few ulps off
    rtol = {np.float16: 1e-2, np.float32: 1e-4}.get(dtype, 1e-12)
    np.testing.assert_allclose(expected, reference, rtol=rtol, atol=0.1 if dtype == np.float16
                               else 0.0)
    change(big)
    with pytest.raises(ChangedOperandError, match=r"np.matmul used \(called at .*test_snapshot"):
        tape.gradient(y, w)
    with pytest.raises(RuntimeError):               # as PyTorch's error is
        tape.jacobian(y, w)


def test_a_large_read_only_operand_flipped_back_and_refilled_raises():
    # main gave 21000 where 3000 was right: the read-only flag was taken as a proof
    big = np.ones((3000, 8))
    big.flags.writeable = False
    w = nt.Variable(np.ones(8))
    with nt.GradientTape() as tape:
        y = np.sum(big @ w)
    assert len(tape.ops[0].guards) == 1                 # fingerprinted, not trusted
    big.flags.writeable = True
    big[:] = 7.0
    with pytest.raises(ChangedOperandError, match="changed in place"):
        tape.gradient(y, w)


def test_a_large_operand_reshaped_in_place_raises():
    big = _big()
    tape, y, w = _matmul_tape(big)
    big.shape = (big.shape[0] * 2, 4)
    with pytest.raises(ChangedOperandError):
        tape.gradient(y, w)


def test_a_large_buffer_reused_in_a_loop_raises_a_small_one_stays_right():
    # the loop of test_gradient_tape's buffer test, with a buffer past the threshold
    data = np.random.default_rng(6).standard_normal((3,) + _big().shape)
    w = nt.Variable(np.ones(8))
    buf = np.empty(data.shape[1:])
    with nt.GradientTape() as tape:
        loss = 0.0
        for row in data:
            buf[...] = row
            loss = loss + np.sum(np.sin(buf @ w))
    with pytest.raises(ChangedOperandError, match="changed in place"):
        tape.gradient(loss, w)


def test_the_jacobians_and_a_single_step_check_too():
    big = _big()
    tape, y, w = _matmul_tape(big)
    xs = nt.Variable(np.full((big.shape[0], 1), 0.5))
    with tape:
        z = big[:3] @ w * 1.0          # a 3-vector target; big[:3] is a small view: copied
        b = np.tanh(xs * big)          # per-row targets of xs (batch_jacobian)
    jac = tape.jacobian(z, w).numpy()
    np.testing.assert_allclose(jac, big[:3])
    bj = tape.batch_jacobian(b, xs).numpy()
    np.testing.assert_allclose(bj[:, :, 0], big / np.cosh(0.5 * big) ** 2)
    big[-1, -1] += 1.0
    for ask in (lambda: tape.jacobian(y, w), lambda: tape.batch_jacobian(b, xs),
                lambda: tape.gradient(y, w)):
        with pytest.raises(ChangedOperandError):
            ask()
    from nbtape.tape.backward import reverse_step
    op = next(op for op in tape.ops if op.guards)
    with pytest.raises(ChangedOperandError):
        reverse_step(op, np.ones(big.shape[0]), [False, True])
    # an op off the asked path is not checked: its operand may change freely
    np.testing.assert_allclose(tape.jacobian(z, w).numpy(), jac)


def test_a_large_weights_operand_is_guarded_too():
    weights = np.abs(_big().ravel()) + 0.1
    x = nt.Variable(np.ones(weights.size))
    with nt.GradientTape(persistent=True) as tape:
        y = np.average(x * x, weights=weights)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * weights / weights.sum())
    assert tape.ops[-1].args[2] is weights      # (np.average's rule takes it by position)
    weights[0] = 5.0
    with pytest.raises(ChangedOperandError):
        tape.gradient(y, x)


def test_keyword_arguments_kept_by_reference():
    from nbtape.tape.records import Records
    records, big = Records(), _big()
    kept = snapshot_kwargs({"axis": 0, "weights": big, "small": np.ones(2)}, records)
    assert kept["weights"] is big and kept["small"] is not None
    (guard,) = records.guards[0]        # under the position of the op about to be appended
    assert guard[0] is big and guard[1] == fingerprint(big)


def test_large_arrays_that_cannot_be_fingerprinted_are_copied():
    from nbtape.tape.records import Records
    big = _big()
    objects = np.empty(KEEP_BY_REFERENCE // 8 + 1, dtype=object)
    objects[:] = 1.5
    for a in (big[:, ::2], objects):    # strided, Python objects: no bytes to hash
        records = Records()
        (kept,) = snapshot([a], records)
        assert kept is not a and not records.guards
        np.testing.assert_array_equal(kept, a)
    (kept,) = snapshot([big])           # no records given: copied, as before
    assert kept is not big
