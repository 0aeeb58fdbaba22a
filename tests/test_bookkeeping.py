"""What a tape keeps beside its op records (nbtape/tape/bookkeeping.py): ``Watched``
(each watch, with its order and line), ``Note`` (what the tape noticed) and
``GradientRecord`` (what the latest gradient computed), as a tape fills them.
"""
import inspect

import numpy as np

import nbtape as nt
from nbtape.tape.bookkeeping import GradientRecord, Note, Watched


def _line():
    return inspect.currentframe().f_back.f_lineno


def test_a_watch_keeps_its_order_kind_and_the_users_line():
    v = nt.Variable(1.0)
    t = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(t); watched_at = _line()
        later = nt.constant(3.0)            # made after the watch: a larger id
        y = v * t; read_at = _line()         # v is auto-watched where it is read
    w_t, w_v = tape.watched[t._id], tape.watched[v._id]
    assert isinstance(w_t, Watched) and (w_t.kind, w_v.kind) == ("tensor", "variable")
    assert w_t.serial < later._id < w_v.serial
    assert w_t.where[1] == watched_at and w_v.where[1] == read_at
    assert w_t.where[0].endswith("test_bookkeeping.py")
    assert repr(w_t).startswith("Watched(serial=") and "'tensor'" in repr(w_t)


def test_a_watch_decodes_its_raw_line_once():
    frame = inspect.currentframe()
    raw = (frame.f_code, frame.f_lasti); at = _line()      # the cheap form a tape keeps
    w = Watched(1, raw, "variable")
    first = w.where
    assert first == (__file__, at, "test_a_watch_decodes_its_raw_line_once")
    assert w.where is first                  # decoded and kept
    assert Watched(2, None, "tensor").where is None


def test_notes_say_what_the_tape_noticed():
    v = nt.Variable(2.0)
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * v
        f = float(y); escape_at = _line()
        v.assign(5.0); assign_at = _line()
        with tape.stop_recording():
            z = x * 2.0; pause_at = _line()
        i = np.floor(x).astype(int)
    kinds = [n.kind for n in tape.notes]
    assert kinds[:3] == ["escape", "assign", "stop_recording"], kinds
    escape, assign, pause = tape.notes[:3]
    assert all(isinstance(n, Note) for n in tape.notes)
    assert escape.id == y._id and escape.detail == "float()" and escape.where[1] == escape_at
    assert assign.id == v._id and assign.detail[0] == "assign" and assign.where[1] == assign_at
    assert pause.id == x._id and pause.where[1] == pause_at
    assert f == 6.0 and float(z) == 6.0 and int(i) == 3
    n = Note("escape", 3, None, "np.asarray")
    assert (n.kind, n.id, n.where, n.detail) == ("escape", 3, None, "np.asarray")


def test_the_last_gradient_keeps_every_adjoint_of_a_small_tape():
    x = nt.Variable(np.array([1.0, 2.0]))
    with nt.GradientTape(persistent=True) as tape:
        y = np.sin(x)
        z = np.sum(y * y)
    g = tape.gradient(z, x)
    record = tape.last_gradient
    assert isinstance(record, GradientRecord)
    assert record.target_ids == [z._id] and record.source_ids == [x._id]
    assert record.complete
    np.testing.assert_allclose(record.adjoints[x._id], g.numpy())
    np.testing.assert_allclose(record.adjoints[y._id], 2 * np.sin([1.0, 2.0]))
    assert all(type(a) is np.ndarray for a in record.adjoints.values())


def test_the_last_gradient_of_a_big_tape_keeps_only_the_sources():
    x = nt.Variable(np.ones(3))
    with nt.GradientTape() as tape:
        y = x
        for _ in range(1001):               # past the tape's display size
            y = y * 1.0
        z = np.sum(y)
    tape.gradient(z, x)
    record = tape.last_gradient
    assert not record.complete and set(record.adjoints) == {x._id}
    np.testing.assert_array_equal(record.adjoints[x._id], np.ones(3))
