"""nbtape/tape/backward.py: what the reverse pass promises beyond right values (the memory it
keeps is in test_memory.py): ops know the user's line and hold their outputs as long as
promised, keyword arguments reach the rules as plain values, VJPs run only for operands on
the gradient path, no op ends the pass early, and a gradient against everything the tape
watches skips the forward walk only where the walk would find the whole tape."""
import gc
import inspect
import weakref

import numpy as np

import nbtape as nt
from nbtape.tape.backward import forward_reach, whole_reach
from nbtape.core.primitive import primitive
from nbtape.core.registry import RULES, defvjp


def test_an_op_knows_the_users_line_that_ran_it():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x)
        line = inspect.currentframe().f_lineno - 1
    op = tape.ops[-1]
    assert op.where == (__file__, line, "test_an_op_knows_the_users_line_that_ran_it")
    assert op.where == (__file__, line, "test_an_op_knows_the_users_line_that_ran_it")  # kept
    assert float(tape.gradient(y, x)) == np.cos(2.0)


@nt.custom_gradient
def _square(x):
    return x * x, lambda g: 2.0 * g * x


_recomputed_sin = nt.recompute_grad(np.sin)


def test_every_way_of_recording_an_op_finds_the_users_line():
    # the tape starts its search for the user's line three frames up from its record
    # method and an auto-watch's above Variable._read's caller: every path that records
    # must keep nbtape frames there (an operator, a numpy function, nn's primitives,
    # custom_gradient, recompute_grad), or the line would be the caller's caller
    v = nt.Variable(np.array([0.5, -1.0]))
    here = inspect.currentframe().f_lineno
    with nt.GradientTape() as tape:
        a = v @ np.eye(2)
        b = np.sum(a, axis=0)
        c = nt.nn.relu(b)
        d = _square(c)
        e = _recomputed_sin(d)
    name = "test_every_way_of_recording_an_op_finds_the_users_line"
    lines = {op.name: op.where for op in tape.ops}
    assert lines["np.matmul"] == (__file__, here + 2, name)
    assert lines["np.sum"] == (__file__, here + 3, name)
    assert lines["nn.relu"] == (__file__, here + 4, name)
    assert lines["custom_gradient(_square)"] == (__file__, here + 5, name)
    assert lines["recompute_grad(sin)"] == (__file__, here + 6, name)
    assert [w.where for w in tape.watched.values()] == [(__file__, here + 2, name)]
    assert tape.gradient(e, v) is not None


def test_keyword_arguments_reach_the_rules_as_plain_values():
    x = nt.constant(np.arange(6.0).reshape(2, 3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sum(x ** 2, axis=1, keepdims=True) * np.array([[1.0], [2.0]]))
    g = tape.gradient(y, x)
    assert type(g.numpy()) is np.ndarray
    np.testing.assert_array_equal(g.numpy(), 2 * x.numpy() * np.array([[1.0], [2.0]]))


def test_vjps_run_only_for_operands_on_the_gradient_path():
    calls = []

    def counted(name, vjp):
        def run(*a):
            calls.append(name)
            return vjp(*a)
        return run

    def scale(x, y):
        return x * y
    f = primitive(scale)
    try:
        defvjp(f.raw, counted("x", lambda g, ans, x, y: g * y),
               counted("y", lambda g, ans, x, y: g * x))
        x, y = nt.constant(2.0), nt.constant(3.0)
        with nt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            z = f(x, y)
        assert float(tape.gradient(z, x)) == 3.0 and calls == ["x"]   # y is not watched
        tape.watch(y)
        assert tape.gradient(z, y) is None and calls == ["x"]   # watched after use: no path
        with nt.GradientTape() as both:
            both.watch([x, y])
            z = f(x, y)
        assert float(both.gradient(z, x)) == 3.0 and calls == ["x", "x"]   # y: not asked
    finally:
        del RULES[f.raw]


def test_a_small_used_tape_keeps_its_outputs_for_pictures():
    """(A big one keeps none: test_memory.py.)"""
    x = nt.constant(np.ones(3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        h = np.sin(x)
        y = np.sum(h)
    op = tape.ops[0]
    assert op.out is h
    tape.gradient(y, x)
    assert op.out is h                          # the user still has it
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert op.out is ref() is not None


def test_an_op_with_several_outputs_off_the_path_does_not_end_the_pass():
    x = nt.constant(np.array([0.5, 1.5]))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x * 2.0)
        frac, whole = np.modf(x)                # newer than y, on no path to it
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0])


def test_a_stop_gradient_early_on_the_tape_cuts_only_its_own_path():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        cut = nt.stop_gradient(x) * 5.0
        y = x * 3.0 + cut
    assert float(tape.gradient(y, x)) == 3.0


def test_reverse_step_gives_each_operand_its_shape_and_dtype():
    from nbtape.tape.backward import reverse_step
    x = nt.constant(np.ones((2, 3)))
    b = nt.constant(np.arange(3.0, dtype=np.float32))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, b])
        y = x * b                                  # b broadcasts over x's rows
    op, = tape.ops
    g = np.full((2, 3), 2.0)
    gx, gb = reverse_step(op, g, [True, True])
    assert gx.shape == (2, 3) and np.allclose(gx, 2 * np.arange(3.0))
    assert gb.shape == (3,) and gb.dtype == np.float32 and np.allclose(gb, [4.0, 4.0, 4.0])
    assert reverse_step(op, g, [False, True])[0] is None
    assert np.allclose(tape.gradient(y, b, output_gradients=g), gb)   # the pass takes this step


def test_forward_reach_is_what_the_reverse_pass_visits():
    from nbtape.tape.backward import forward_reach
    x, w = nt.Variable(1.0), nt.Variable(2.0)
    with nt.GradientTape(persistent=True) as tape:
        a = w * 2.0           # 0: not downstream of x
        b = x * a             # 1
        c = nt.stop_gradient(b) + 1.0   # 2 (stop), 3: the gradient does not pass
    (xid, _), = [kv for kv in tape.watched.items() if tape.watched_object(kv[0]) is x]
    positions, reach = forward_reach(tape.op_records, [xid])
    assert positions == [1] and reach[xid] is None and reach[tape.ops[1].out_ids[0]] == 1
    assert tape.gradient(c, x) is None


def _step_by_step(tape, seeds, source_ids):
    """The reverse pass written with the general ``reverse_step`` only (no fast path)."""
    from nbtape.tape.backward import forward_reach, reverse_step
    ops = tape.ops
    positions, reach = forward_reach(tape.op_records, source_ids)
    adj = dict(seeds)
    for k in reversed(positions):
        op = ops[k]
        g = adj.get(op.out_ids[0])
        if g is None:
            continue
        needs = [i is not None and i in reach for i in op.in_ids]
        for i, gi in zip(op.in_ids, reverse_step(op, g, needs)):
            if gi is not None:
                adj[i] = adj[i] + gi if i in adj else gi
    return adj


def test_the_pass_fast_path_gives_what_the_general_reverse_step_gives():
    # positional rules on plain arrays take an inlined step in backward(); it must give
    # the same adjoints, shapes and dtypes as reverse_step (broadcasting, float32
    # operands, keyword arguments, a repeated operand, constants, saved outputs)
    from nbtape.tape.backward import backward
    rng = np.random.default_rng(3)
    x = nt.constant(rng.normal(size=(3, 1)).astype(np.float32))
    w = nt.constant(rng.normal(size=(4,)))
    c = rng.normal(size=(3, 4))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        a = x * w + c                       # (3,1) float32 and (4,) float64 broadcast
        b = np.exp(a) / (a * a + 1.0)       # a saved output, a repeated operand
        s = np.sum(b, axis=1, keepdims=True) - np.mean(b ** 2, axis=0)   # keywords
        y = np.sum(np.tanh(s) * x)
    seeds = {y._id: np.ones(())}
    ids = [x._id, w._id]
    fast = backward(tape.op_records, seeds, ids, False, keep_all=True)
    general = _step_by_step(tape, seeds, ids)
    assert set(fast) == set(general)
    for i in general:
        assert type(fast[i]) is type(general[i])
        assert np.shape(fast[i]) == np.shape(general[i])
        assert np.asarray(fast[i]).dtype == np.asarray(general[i]).dtype
        np.testing.assert_array_equal(fast[i], general[i])
    gx, gw = tape.gradient(y, [x, w])
    assert gx.dtype == np.float32 and gx.shape == (3, 1) and gw.shape == (4,)
    np.testing.assert_array_equal(gw.numpy(), general[w._id])


def test_a_used_non_persistent_tape_drops_every_saved_value():
    x = nt.Variable(np.linspace(0.1, 1.0, 5))
    with nt.GradientTape() as tape:
        y = np.sum(np.sin(x * 2.0) * x, axis=0)
    ops = tape.ops
    assert any(op.args is not None for op in ops)
    tape.gradient(y, x)
    assert all(op.args is None and op.kwargs is None and op.ans is None for op in ops)


def _tapes_of_every_shape():
    """Persistent tapes with stops, constants, a late watch, an assigned variable, a
    several-output op and a pass recorded into its own tape: ``(tape, target, the
    gradients in closed form, or None to compare with one source at a time)``."""
    x, v = nt.Variable(np.array([0.3, -0.7])), nt.Variable(1.5)
    c = nt.constant(np.array([2.0, 3.0]))
    with nt.GradientTape(persistent=True) as t1:
        y = x * c
        z = nt.stop_gradient(y) * x + np.sin(y) * v
        v.assign(0.5)
        first, second = np.split(z * v, 2)
        out1 = np.sum(first * second)
    yield t1, out1, None
    a = nt.constant(2.0)
    with nt.GradientTape(persistent=True) as t2:
        b = a * 3.0                 # a not watched yet: b is a constant
        t2.watch(a)
        out2 = a * b + a ** 3
    yield t2, out2, [6.0 + 3 * 2.0 ** 2]
    with nt.GradientTape(persistent=True) as t3:
        t3.watch(a)
        g = t3.gradient(a ** 3, a)  # recorded into t3 itself: 3 a^2
        out3 = g * a
    yield t3, out3, [9 * 2.0 ** 2]


def test_a_gradient_against_everything_watched_skips_the_walk_and_loses_nothing():
    for tape, target, expected in _tapes_of_every_shape():
        records, ids = tape.op_records, list(tape.watched)
        positions, reach = forward_reach(records, ids)
        assert list(whole_reach(records, set())[0]) == positions
        # what the walk reaches is what the tape tracks (whole_reach hands that set on)
        mentioned = {i for op in tape.ops for i in op.in_ids + op.out_ids if i is not None}
        assert {i for i in mentioned | set(ids) if tape.tracks(i)} == set(reach)
        sources = [tape.watched_object(i) for i in ids]
        together = tape.gradient(target, sources)           # every watched id: no walk
        if expected is None:                                # one at a time: the walk
            assert len(sources) > 1
            expected = [tape.gradient(target, s).numpy() for s in sources]
        for g, e in zip(together, expected):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-14)


def test_numpy_raising_inside_a_rule_is_nbtapes_numerics_error_naming_the_derivative():
    # under np.errstate(divide="raise") the VJP of sqrt at 0 divides by 0: not a raw
    # FloatingPointError from inside a rule, but NumericsError naming np.sqrt's derivative
    x = nt.constant(np.array([0.0, 4.0]))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sqrt(x))
        line = inspect.currentframe().f_lineno - 1
    with np.errstate(divide="raise"):
        try:
            tape.gradient(y, x)
        except FloatingPointError as e:
            err = e
    assert type(err) is nt.NumericsError
    text = str(err)
    assert "derivative of np.sqrt" in text and "divide" in text and f"line {line}" in text
    assert err.__traceback__ is not None
