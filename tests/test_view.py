"""nbtape/tape/view.py: what a ``GradientTape`` shows of itself, read-only.

``ops``, ``op_records``, ``watched``, ``notes`` and the state flags read the tape
without exposing its lists; ``tracks`` and ``watched_object`` answer by value or id;
``retire`` drops the records and says why; ``backward_steps`` lists the ops a
reverse pass visits, newest first, for a given or the latest gradient.
"""
import types

import numpy as np
import pytest

import nbtape as nt


def _tape():
    """x -> a = x*x -> b = a + c -> e = b*2, and d = sin(c) beside them."""
    x = nt.Variable(2.0, name="x")
    c = nt.constant(1.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(c)
        a = x * x
        b = a + c
        d = np.sin(c)
        e = b * 2.0
    return tape, x, c, d, e


def test_the_views_are_read_only_and_follow_the_tape():
    tape, x, c, d, e = _tape()
    assert [op.name for op in tape.ops] == ["np.multiply", "np.add", "np.sin", "np.multiply"]
    assert len(tape.op_records) == len(tape.ops) == 4
    assert isinstance(tape.watched, types.MappingProxyType)
    assert set(tape.watched) == {x._id, c._id}
    assert isinstance(tape.notes, tuple)
    with pytest.raises(TypeError):
        tape.watched[0] = None
    with pytest.raises(AttributeError):
        tape.ops = ()
    tape.reset()
    assert len(tape.ops) == 0 and len(tape.watched) == 0


def test_state_flags():
    x = nt.constant(1.0)
    with nt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = x * 3.0
    assert tape.watch_accessed_variables is False and not tape.consumed
    tape.gradient(y, x)
    assert tape.consumed and not tape.interrupted
    with pytest.raises(KeyboardInterrupt):
        with nt.GradientTape() as stopped:
            y = x * 2.0
            raise KeyboardInterrupt
    assert stopped.interrupted and "interrupted" in repr(stopped)


def test_tracks_by_value_or_id_and_watched_object():
    tape, x, c, d, e = _tape()
    assert tape.tracks(x) and tape.tracks(c) and tape.tracks(e) and tape.tracks(e._id)
    assert tape.tracks(d)                       # computed from a watched value
    assert not tape.tracks(nt.constant(1.0)) and not tape.tracks(-5)
    assert tape.watched_object(x._id) is x and tape.watched_object(c._id) is c
    assert tape.watched_object(e._id) is None   # tracked, but not watched


def test_a_watched_tensor_that_died_is_no_longer_returned():
    import gc
    with nt.GradientTape() as tape:
        t = nt.constant(1.0)
        tape.watch(t)
    i = t._id
    assert tape.watched_object(i) is t
    del t
    gc.collect()
    assert tape.watched_object(i) is None and i in tape.watched


def test_retire_drops_the_records_and_says_why():
    tape, x, c, d, e = _tape()
    assert tape.retired is None
    tape.retire("replaced by the tape of cell 7")
    assert tape.retired == "replaced by the tape of cell 7"
    assert len(tape.ops) == 0 and "retired" in repr(tape)
    assert "replaced by the tape of cell 7" in tape._repr_html_()
    tape.reset()
    assert tape.retired is None


def test_backward_steps_for_a_given_target_and_sources():
    tape, x, c, d, e = _tape()
    assert tape.backward_steps(e, x) == [3, 1, 0]
    assert tape.backward_steps(e, c) == [3, 1]
    assert tape.backward_steps(e, [x, c]) == [3, 1, 0]
    assert tape.backward_steps(d, c) == [2]
    assert tape.backward_steps(d, x) == []
    assert tape.backward_steps(e) == [3, 1, 0]           # every watched source
    assert tape.backward_steps([d, e], c) == [3, 2, 1]


def test_backward_steps_default_to_the_latest_gradient():
    tape, x, c, d, e = _tape()
    with pytest.raises(ValueError, match="backward_steps needs a target"):
        tape.backward_steps()
    tape.gradient(e, c)
    assert tape.backward_steps() == [3, 1]
    assert tape.backward_steps(e) == [3, 1]               # same target: the same sources
    assert tape.backward_steps(d) == [2]                   # another target: all sources
    assert tape.backward_steps(sources=x) == [3, 1, 0]


def test_backward_steps_refuse_plain_values():
    tape, x, c, d, e = _tape()
    with pytest.raises(TypeError, match=r"tape.backward_steps\(\) got a plain float as its target"):
        tape.backward_steps(3.0, x)
    with pytest.raises(TypeError, match="as its sources"):
        tape.backward_steps(e, [x, np.ones(2)])


def test_the_steps_are_the_ops_a_gradient_uses():
    # the steps' ops are exactly those whose VJPs the gradient needs: dropping the
    # others (sin) leaves the gradient as it was
    tape, x, c, d, e = _tape()
    steps = tape.backward_steps(e, [x, c])
    assert [tape.ops[k].name for k in steps] == ["np.multiply", "np.add", "np.multiply"]
    gx, gc = tape.gradient(e, [x, c])
    assert float(gx) == 8.0 and float(gc) == 2.0


def test_explain_and_repr_come_through_the_view():
    tape, x, c, d, e = _tape()
    text = str(tape.explain(e, x))
    assert text.startswith("Connected") and "np.add" in text
    assert repr(tape).startswith("<nt.GradientTape persistent")
    assert "4 ops recorded" in repr(tape)
