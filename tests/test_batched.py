"""nbtape/tape/batched.py: one reverse pass for a batch of cotangents.

Whatever the ops (elementwise ufuncs, the structural rules written for a batch axis,
broadcasting, fancy indexing and every other rule, which runs row by row), the
batched pass gives the same rows as one ordinary reverse pass per row, and
``tape.jacobian`` (which uses it) matches central differences.
"""
import numpy as np
import pytest

import nbtape as nt
from nbtape.tape import batched
from nbtape.tape.backward import backward, forward_reach
from nbtape.tape.batched import backward_batched, chunk_size
from gradcheck import numeric_grad

PROGRAMS = {
    "elementwise": (lambda x, w: np.tanh(x) * np.exp(w) + x / (1.0 + w * w), (3, 4), (3, 4)),
    "broadcast": (lambda x, w: np.sin(x) * w + w ** 2.0, (3, 4), (1, 4)),
    "scalar-source": (lambda x, w: np.cos(x * w) - w, (2, 3), ()),
    "sum-mean": (lambda x, w: np.sum(x * w, axis=1, keepdims=True) + np.mean(x, 0) * w,
                 (3, 4), (4,)),
    "sum-all": (lambda x, w: np.sum(x) * w + np.mean(x * x), (2, 3), (2,)),
    "index-basic": (lambda x, w: x[1:, ::2] * w[0] + x[0, None, :2], (3, 4), (2,)),
    "index-fancy": (lambda x, w: x[[2, 0, 2]] * w, (3, 4), (4,)),
    "matmul": (lambda x, w: np.tanh(x @ w) @ w.T, (3, 4), (4, 2)),
    "matvec": (lambda x, w: x @ w + w @ w, (3, 4), (4,)),
    "reshape-transpose": (lambda x, w: np.reshape(x, (4, 3)).T * w + np.transpose(x)[0][:, None],
                          (3, 4), (3, 1)),
    "row-by-row": (lambda x, w: np.cumsum(x * w, axis=1) + np.linalg.norm(x, axis=0),
                   (3, 4), (4,)),
    "same-operand": (lambda x, w: x * x + np.maximum(x, w) * x, (3, 4), (3, 4)),
    "multi-output": (lambda x, w: np.linalg.eigh(x @ x.T + np.diag(w))[0], (3, 4), (3,)),
    "where-stack": (lambda x, w: np.stack([np.where(x > 0, x, w), x * 2.0]), (3, 4), (4,)),
}


def _recorded(name, rng):
    f, xshape, wshape = PROGRAMS[name]
    x = nt.constant(rng.standard_normal(xshape))
    w = nt.constant(rng.standard_normal(wshape) + (3.0 if name == "multi-output" else 0.0))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = f(x, w)
    return f, tape, x, w, y


def _per_row(ops, target, seeds, ids, reached):
    """One ordinary reverse pass per row of ``seeds``: a list of {id: adjoint}."""
    return [backward(ops, {target._id: s}, ids, False, reached=reached) for s in seeds]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_batched_pass_gives_the_rows_of_one_pass_per_row(name, rng):
    f, tape, x, w, y = _recorded(name, rng)
    ops, ids = tape.op_records, [x._id, w._id]
    reached = forward_reach(ops, ids)
    seeds = rng.standard_normal((5,) + y.shape)
    got = backward_batched(ops, {y._id: seeds}, ids, reached)
    rows = _per_row(ops, y, seeds, ids, reached)
    for i, source in zip(ids, (x, w)):
        want = np.stack([np.asarray(r[i]) if i in r else np.zeros(source.shape) for r in rows])
        assert got[i].shape == (5,) + source.shape
        np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", ["elementwise", "matmul", "index-fancy", "row-by-row",
                                  "multi-output"])
def test_the_jacobian_built_on_it_matches_central_differences(name, rng):
    f, tape, x, w, y = _recorded(name, rng)
    jx, jw = tape.jacobian(y, [x, w])
    x0, w0 = x.numpy(), w.numpy()
    for index in [(0,) * y.ndim, tuple(s - 1 for s in y.shape)]:
        def h(a, b, index=index):
            return f(a, b)[index]
        np.testing.assert_allclose(jx.numpy()[index], numeric_grad(h, [x0, w0], 0, 1e-6),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(jw.numpy()[index], numeric_grad(h, [x0, w0], 1, 1e-6),
                                   rtol=1e-5, atol=1e-6)


def test_the_batch_axis_is_never_summed_into_a_size_one_source_axis(rng):
    # a (1, 4) source broadcast against (B, 3, 4): each row keeps its own adjoint
    f, tape, x, w, y = _recorded("broadcast", rng)
    ops = tape.op_records
    reached = forward_reach(ops, [w._id])
    seeds = np.zeros((3,) + y.shape)
    seeds[0, 0, 0] = 1.0
    seeds[2, 2, 3] = 1.0
    got = backward_batched(ops, {y._id: seeds}, [w._id], reached)[w._id]
    x0, w0 = x.numpy(), w.numpy()
    d = np.sin(x0) + 2 * w0
    want = np.zeros((3, 1, 4))
    want[0, 0, 0] = d[0, 0]
    want[2, 0, 3] = d[2, 3]
    np.testing.assert_allclose(got, want)


def test_a_float32_tape_gives_float32_rows(rng):
    x = nt.constant(rng.standard_normal((2, 3)).astype(np.float32))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.sin(x) * 2.0
    ops = tape.op_records
    reached = forward_reach(ops, [x._id])
    seeds = np.ones((4, 2, 3), dtype=np.float32)
    got = backward_batched(ops, {y._id: seeds}, [x._id], reached)[x._id]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got[0], 2 * np.cos(x.numpy()), rtol=1e-6)


def test_a_step_without_a_rule_raises_as_the_per_row_pass_does():
    x = nt.constant(np.array([3.0, 1.0, 3.0]))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.unique(x) * 2.0
    ops = tape.op_records
    reached = forward_reach(ops, [x._id])
    with pytest.raises(nt.NoGradientRuleError, match="np.unique"):
        backward_batched(ops, {y._id: np.eye(2)}, [x._id], reached)
    with pytest.raises(nt.NoGradientRuleError, match="np.unique"):
        tape.jacobian(y, x)


def test_chunk_size_keeps_adjoints_under_the_limit(rng, monkeypatch):
    f, tape, x, w, y = _recorded("matmul", rng)
    ops = tape.op_records
    reached = forward_reach(ops, [x._id, w._id])
    assert chunk_size(6, ops, reached, y.size) == 6
    monkeypatch.setattr(batched, "CHUNK_ELEMENTS", 24)      # largest array here: 12 elements
    assert chunk_size(6, ops, reached, y.size) == 2
    monkeypatch.setattr(batched, "CHUNK_ELEMENTS", 1)
    assert chunk_size(6, ops, reached, y.size) == 1


def test_a_jacobian_in_chunks_equals_the_jacobian_in_one_pass(rng, monkeypatch):
    f, tape, x, w, y = _recorded("matmul", rng)
    whole = [j.numpy() for j in tape.jacobian(y, [x, w])]
    monkeypatch.setattr(batched, "CHUNK_ELEMENTS", 30)
    chunked = [j.numpy() for j in tape.jacobian(y, [x, w])]
    for a, b in zip(whole, chunked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["elementwise", "broadcast", "scalar-source", "sum-mean",
                                  "matmul"])
def test_elementwise_and_structural_rules_take_the_batch_axis_never_row_by_row(
        name, rng, monkeypatch):
    # nbtape's own VJPs (the rule modules' and the registry's derivative wrappers, as
    # np.tanh's and np.exp's are) run once on the whole batch: a row-by-row fallback
    # gives the same numbers, so only this sees it (a move of the registry once sent
    # every ufunc made by defderiv row by row, the Jacobian 4x slower)
    f, tape, x, w, y = _recorded(name, rng)

    def no_rows(*args):
        raise AssertionError("a rule went row by row")
    monkeypatch.setattr(batched, "_vjp_rows", no_rows)
    jx, jw = tape.jacobian(y, [x, w])
    assert jx.shape == y.shape + x.shape and jw.shape == y.shape + w.shape
