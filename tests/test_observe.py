"""nbtape/core/observe.py: how widgets hear that a variable changed or a gradient was taken.

``obj.observe(callback)`` returns a ``Subscription``; callbacks get ``(obj, event,
**info)``.  A bound method is held weakly (a collected widget stops being called), a
plain function strongly.  Variables say ``assign``; tapes say ``gradient`` and tell each
variable source its own ``gradient``.
"""
import gc

import numpy as np

import nbtape as nt
from nbtape.core.observe import Observable, Subscription, notify


class Listener:
    def __init__(self):
        self.events = []

    def hear(self, obj, event, **info):
        self.events.append((obj, event, info))


def test_a_variable_tells_its_observers_each_assign_with_the_new_value():
    v = nt.Variable(np.array([1.0, 2.0]))
    seen = []
    sub = v.observe(lambda var, event, **info: seen.append((var, event, info)))
    assert isinstance(sub, Subscription)
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([0.5, 0.5])
    assert [e for _, e, _ in seen] == ["assign"] * 3
    assert all(var is v for var, _, _ in seen)
    values = [info["value"].numpy().tolist() for _, _, info in seen]
    assert values == [[3.0, 4.0], [4.0, 5.0], [3.5, 4.5]]


def test_remove_and_close_unsubscribe_and_may_be_called_twice():
    v = nt.Variable(1.0)
    a, b = [], []
    sub_a = v.observe(lambda *args, **kw: a.append(1))
    sub_b = v.observe(lambda *args, **kw: b.append(1))
    v.assign(2.0)
    sub_a.remove()
    sub_a.remove()
    v.assign(3.0)
    sub_b.close()
    sub_b.close()
    v.assign(4.0)
    assert a == [1] and b == [1, 1]


def test_observers_are_called_in_the_order_they_subscribed():
    v = nt.Variable(1.0)
    order = []
    for k in range(3):
        v.observe(lambda *args, k=k, **kw: order.append(k))
    v.assign(2.0)
    assert order == [0, 1, 2]


def test_a_bound_method_is_held_weakly():
    v = nt.Variable(1.0)
    listener = Listener()
    v.observe(listener.hear)
    v.assign(2.0)
    assert [e for _, e, _ in listener.events] == ["assign"]
    heard = listener.events
    del listener
    gc.collect()
    v.assign(3.0)                     # the dead observer is dropped, not called
    assert len(heard) == 1


def test_a_plain_function_is_held_strongly():
    v = nt.Variable(1.0)
    seen = []

    def make():
        local = []
        v.observe(lambda *args, **kw: (local.append(1), seen.append(len(local))))
    make()
    gc.collect()
    v.assign(2.0)
    v.assign(3.0)
    assert seen == [1, 2]


def test_an_observer_may_unsubscribe_while_being_called():
    v = nt.Variable(1.0)
    calls = []
    subs = []

    def once(*args, **kw):
        calls.append("once")
        subs[0].remove()
    subs.append(v.observe(once))
    v.observe(lambda *args, **kw: calls.append("always"))
    v.assign(2.0)
    v.assign(3.0)
    assert calls == ["once", "always", "always"]


def test_a_subscription_outliving_its_target_removes_quietly():
    v = nt.Variable(1.0)
    sub = v.observe(lambda *args, **kw: None)
    del v
    gc.collect()
    sub.remove()


def test_a_tape_tells_its_observers_and_each_variable_source_about_a_gradient():
    w = nt.Variable(np.array([1.0, 2.0]))
    b = nt.Variable(0.5)
    c = nt.constant(3.0)
    tape_events, w_events, b_events = Listener(), Listener(), Listener()
    w.observe(w_events.hear)
    b.observe(b_events.hear)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = np.sum(w * c)
        z = np.sum(w * w)
    sub = tape.observe(tape_events.hear)
    gw, gc_ = tape.gradient(y, [w, c])
    (obj, event, info), = tape_events.events
    assert obj is tape and event == "gradient"
    assert info["sources"] == [w, c] and info["gradients"][0] is gw and info["gradients"][1] is gc_
    (obj, event, info), = w_events.events
    assert obj is w and event == "gradient" and info["gradient"] is gw and info["tape"] is tape
    np.testing.assert_array_equal(info["gradient"].numpy(), [3.0, 3.0])
    assert tape.gradient(z, b) is None     # no gradient: b hears nothing
    assert b_events.events == []
    sub.remove()
    tape.gradient(z, w)
    assert len(tape_events.events) == 2 and len(w_events.events) == 2


class Thing(Observable):
    __slots__ = ("_observers", "__weakref__")

    def __init__(self):
        self._observers = None


def test_notify_with_no_observers_does_nothing_and_with_some_calls_them():
    t = Thing()
    notify(t, "ping", n=1)                # no observers yet: no list is made
    assert t._observers is None
    seen = []
    t.observe(lambda obj, event, **info: seen.append((obj, event, info)))
    notify(t, "ping", n=2)
    assert seen == [(t, "ping", {"n": 2})]
