"""nbtape/core/state.py: the per-thread stack of recorders, ``suspended``, ``outer_only``
and the process-wide tensor ids.

Each thread has its own stack: a tape entered in one thread is not on another's
stack, so it never sees that thread's operations.  ``suspended`` takes one recorder
off the stack for a block (a tape computing its own gradient); ``outer_only`` keeps
only the recorders entered before one (an accumulator computing tangents).  Both put
the stack back as it was, even when the block raises.
"""
import threading

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.state import next_id, outer_only, suspended, tls


def in_thread(fn):
    """Run ``fn`` in a new thread; its result (or its exception, raised here)."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:     # handed back to the test
            box["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# --- the stack ------------------------------------------------------------------------------------
def test_entering_recorders_pushes_them_in_order_and_leaving_pops_them():
    assert tls.stack == []
    with nt.GradientTape() as outer:
        assert tls.stack == [outer]
        x = nt.constant(1.0)
        with nt.ForwardAccumulator(x, 1.0) as acc:
            with nt.GradientTape() as inner:
                assert tls.stack == [outer, acc, inner]
            assert tls.stack == [outer, acc]
        assert tls.stack == [outer]
    assert tls.stack == []


def test_a_recorder_left_out_of_order_takes_only_itself_off():
    a, b = nt.GradientTape(), nt.GradientTape()
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert tls.stack == [b]
    b.__exit__(None, None, None)
    assert tls.stack == []


def test_a_block_that_raises_leaves_the_stack_empty():
    with pytest.raises(ZeroDivisionError):
        with nt.GradientTape():
            with nt.GradientTape():
                1 / 0
    assert tls.stack == []


def test_stop_recording_stands_in_for_the_tape_and_records_nothing():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            assert len(tls.stack) == 1 and tls.stack[0] is not tape
            assert tls.stack[0].paused is tape      # the Recorder protocol: a stand-in
            y = x * x
        assert tls.stack == [tape]
    assert len(tape.ops) == 0 and tape.gradient(y, x) is None


# --- threads --------------------------------------------------------------------------------------
def test_another_thread_starts_with_an_empty_stack():
    with nt.GradientTape() as tape:
        assert in_thread(lambda: list(tls.stack)) == []
        assert tls.stack == [tape]


def test_threads_inside_their_own_tapes_at_the_same_time_see_only_their_own():
    barrier = threading.Barrier(2, timeout=30)
    x = nt.constant(np.array([1.0, 2.0]))

    def work(scale):
        with nt.GradientTape() as tape:
            tape.watch(x)
            barrier.wait()          # both threads are inside their tapes now
            mine = list(tls.stack)
            y = np.sum(x * scale)
            barrier.wait()          # both have recorded
        return tape, mine, tape.gradient(y, x).numpy(), len(tape.ops)

    out = {}
    threads = [threading.Thread(target=lambda s=s: out.__setitem__(s, work(s))) for s in (2.0, 5.0)]
    with nt.GradientTape() as main_tape:
        main_tape.watch(x)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert tls.stack == [main_tape]
    for scale, (tape, stack, grad, n_ops) in out.items():
        assert stack == [tape]
        assert n_ops == 2            # its own multiply and sum, not the other thread's
        np.testing.assert_array_equal(grad, [scale, scale])
    assert out[2.0][0] is not out[5.0][0]
    assert len(main_tape.ops) == 0


def test_a_tape_entered_in_a_thread_is_gone_from_it_when_it_ends():
    def inside():
        with nt.GradientTape():
            pass
        return list(tls.stack)
    assert in_thread(inside) == [] and tls.stack == []


# --- ids ------------------------------------------------------------------------------------------
def test_ids_increase_and_are_never_reused():
    a, b = next_id(), next_id()
    assert b > a
    t = nt.constant(1.0)
    assert t._id > b
    seen = {nt.constant(1.0)._id for _ in range(50)}        # each dropped at once
    assert len(seen) == 50


def test_ids_are_unique_across_threads():
    def draw():
        return [next_id() for _ in range(2000)]
    results = []
    threads = [threading.Thread(target=lambda: results.append(draw())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [i for r in results for i in r]
    assert len(ids) == len(set(ids)) == 8000


# --- suspended ------------------------------------------------------------------------------------
def test_suspended_takes_one_recorder_off_and_puts_the_same_stack_back():
    x = nt.constant(3.0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            before = tls.stack
            with suspended(inner):
                assert tls.stack == [outer]
                y = x * x                   # seen by the outer tape only
            assert tls.stack is before
    assert len(inner.ops) == 0 and len(outer.ops) == 1
    assert float(outer.gradient(y, x)) == 6.0


def test_suspended_also_takes_off_a_tape_paused_by_stop_recording():
    with nt.GradientTape() as outer:
        with nt.GradientTape() as tape:
            with tape.stop_recording():
                with suspended(tape):
                    assert tls.stack == [outer]
                assert len(tls.stack) == 2


def test_suspended_of_a_recorder_not_on_the_stack_changes_nothing():
    stranger = nt.GradientTape()
    with nt.GradientTape() as tape:
        with suspended(stranger):
            assert tls.stack == [tape]


def test_suspended_restores_the_stack_when_the_block_raises():
    with nt.GradientTape() as tape:
        before = tls.stack
        with pytest.raises(KeyError):
            with suspended(tape):
                raise KeyError("inside")
        assert tls.stack is before


def test_a_tapes_gradient_is_recorded_by_outer_tapes_not_by_itself():
    x = nt.constant(1.5)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        n_inner = len(inner.ops)
        dy = inner.gradient(y, x)
    assert len(inner.ops) == n_inner == 1
    assert float(dy) == pytest.approx(3 * 1.5 ** 2)
    assert float(outer.gradient(dy, x)) == pytest.approx(6 * 1.5)


# --- outer_only -----------------------------------------------------------------------------------
def test_outer_only_keeps_the_recorders_entered_before_one():
    x = nt.constant(1.0)
    with nt.GradientTape() as a:
        with nt.ForwardAccumulator(x, 1.0) as acc:
            with nt.GradientTape() as b:
                before = tls.stack
                with outer_only(acc):
                    assert tls.stack == [a]
                with outer_only(b):
                    assert tls.stack == [a, acc]
                with outer_only(a):
                    assert tls.stack == []
                assert tls.stack is before


def test_outer_only_of_a_recorder_not_on_the_stack_keeps_the_others():
    stranger = nt.GradientTape()
    with nt.GradientTape() as a:
        with nt.GradientTape() as b:
            with outer_only(stranger):
                assert tls.stack == [a, b]


def test_outer_only_restores_the_stack_when_the_block_raises():
    with nt.GradientTape() as a:
        before = tls.stack
        with pytest.raises(ValueError):
            with outer_only(a):
                raise ValueError
        assert tls.stack is before


def test_tangents_are_recorded_by_outer_tapes_not_by_inner_ones():
    # reverse over forward: the accumulator computes tangents with only the outer tape on
    x = nt.constant(0.7)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.ForwardAccumulator(x, 1.0) as acc:
            with nt.GradientTape() as inner:
                inner.watch(x)
                y = np.sin(x)
        t = acc.jvp(y)
    assert [op.name for op in inner.ops] == ["np.sin"]
    assert float(t) == pytest.approx(np.cos(0.7))
    assert float(outer.gradient(t, x)) == pytest.approx(-np.sin(0.7))
