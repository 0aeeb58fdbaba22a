"""Per-thread recording state: the one piece of mutable global state nbtape has.

Every active recorder (a ``GradientTape`` or ``ForwardAccumulator``) sits on the
current thread's stack; an operation on tensors offers itself to each of them.  This
module is the stack's one owner: everything else reads ``tls.stack`` and changes it
only through this module (``push_recorder``/``pop_recorder``, and the blocks
``recording``, ``not_recording``, ``suspended``,
``outer_only``, ``only``, ``standing_in``); ``tests/test_architecture.py`` checks that.
Tensor identities come from a process-wide counter (not ``id()``), because a
tape remembers identities of tensors it does not keep alive, and ``id()``
values are reused after garbage collection.
"""
import itertools
import threading


class _ThreadState(threading.local):
    def __init__(self):
        self.stack = []


tls = _ThreadState()
next_id = itertools.count(1).__next__


def push_recorder(recorder):
    """Put ``recorder`` on this thread's stack (``recording``'s entry, for a recorder's own
    ``__enter__``: a tape enters one per step of a loop, so no block object is made)."""
    tls.stack.append(recorder)


def pop_recorder(recorder):
    """Take off the newest entry of ``recorder``, or of its paused stand-in (so that
    recorders left out of order, a cell that failed inside nested tapes, each take off
    their own); nothing if it is not on this thread's stack."""
    stack = tls.stack
    for k in range(len(stack) - 1, -1, -1):
        r = stack[k]
        if r is recorder or r.paused is recorder:
            del stack[k]
            return


class recording:
    """Put ``recorder`` on this thread's stack for a block: each op inside is offered to
    it (``push_recorder`` and ``pop_recorder`` are its two halves, for a recorder's
    own ``__enter__``/``__exit__``).

    >>> from nbtape.core.recorder import Listener
    >>> rec = Listener()
    >>> with recording(rec):
    ...     tls.stack[-1] is rec
    True
    >>> rec in tls.stack
    False
    """

    __slots__ = ("recorder",)

    def __init__(self, recorder):
        self.recorder = recorder

    def __enter__(self):
        push_recorder(self.recorder)
        return self.recorder

    def __exit__(self, *exc):
        pop_recorder(self.recorder)
        return False


class not_recording:
    """Run a block with no recorder on this thread's stack (a picture computing a rule's
    numbers, say): nothing inside it is recorded or noted.

    >>> from nbtape.core.recorder import Listener
    >>> with recording(Listener()), not_recording():
    ...     tls.stack
    []
    """

    __slots__ = ("saved",)

    def __enter__(self):
        self.saved = tls.stack
        tls.stack = []

    def __exit__(self, *exc):
        tls.stack = self.saved
        return False


class only:
    """Run a block with exactly ``recorders`` on this thread's stack (``recompute_grad``
    lets only its own listener and ``nt.function``'s tracer see the block it recomputes).

    >>> from nbtape.core.recorder import Listener
    >>> rec = Listener()
    >>> with only([rec]):
    ...     tls.stack == [rec]
    True
    """

    __slots__ = ("recorders", "saved")

    def __init__(self, recorders):
        self.recorders = recorders

    def __enter__(self):
        self.saved = tls.stack
        tls.stack = list(self.recorders)

    def __exit__(self, *exc):
        tls.stack = self.saved
        return False


class standing_in:
    """Run a block with ``stand_in`` in the place of ``recorder`` on this thread's stack
    (a tape inside ``stop_recording`` is replaced by a stand-in that notes uses and
    records nothing).  ``placed`` says whether the recorder was on the stack to replace.

    >>> from nbtape.core.recorder import Listener
    >>> rec, other = Listener(), Listener()
    >>> with recording(rec), standing_in(rec, other) as s:
    ...     s.placed, tls.stack[-1] is other
    (True, True)
    """

    __slots__ = ("recorder", "stand_in", "placed")

    def __init__(self, recorder, stand_in):
        self.recorder, self.stand_in = recorder, stand_in
        self.placed = False

    def __enter__(self):
        stack = tls.stack
        for k, r in enumerate(stack):
            if r is self.recorder:
                stack[k] = self.stand_in
                self.placed = True
                break
        return self

    def __exit__(self, *exc):
        if self.placed:
            stack = tls.stack
            for k, r in enumerate(stack):
                if r is self.stand_in:
                    stack[k] = self.recorder
                    break
        return False


class suspended:
    """Run a block with ``recorder`` taken off this thread's stack.

    Used while a tape computes its own gradient (it must not record itself) and
    while an accumulator computes tangents; recorders outside it keep recording,
    which is what makes higher-order and mixed-mode derivatives work.
    """

    __slots__ = ("recorder", "saved")

    def __init__(self, recorder):
        self.recorder = recorder

    def __enter__(self):
        self.saved = tls.stack
        rec = self.recorder
        # a tape paused by stop_recording stands in the stack as a stand-in whose
        # .paused is the tape (the Recorder protocol, recorder.py)
        tls.stack = [r for r in self.saved if r is not rec and r.paused is not rec]

    def __exit__(self, *exc):
        tls.stack = self.saved
        return False


class outer_only:
    """Run a block with only the recorders entered before ``recorder`` active.

    An accumulator computes tangents this way: recorders outside it must see the
    computation (reverse-over-forward), recorders inside it have no business with it.
    """

    __slots__ = ("recorder", "saved")

    def __init__(self, recorder):
        self.recorder = recorder

    def __enter__(self):
        self.saved = stack = tls.stack
        for k, r in enumerate(stack):
            if r is self.recorder:
                tls.stack = stack[:k]
                return
        tls.stack = [r for r in stack if r is not self.recorder]

    def __exit__(self, *exc):
        tls.stack = self.saved
        return False


def keeps_every_call(recorder):
    """Whether ``recorder`` keeps every call, the ones no tape keeps included (its
    ``records_all``, an optional attribute of the ``Recorder`` protocol that only
    ``nt.function``'s tracer sets).

    >>> keeps_every_call(object())
    False
    """
    return getattr(recorder, "records_all", False)


def program_value(a):
    """``a`` (a tensor, or the plain array behind one) as a tensor that a recorder which
    keeps every call follows (its optional ``follow``: ``nt.function``'s tracer, for a
    value of its program), or None.  A rule that computes positions from an index or
    a mask in numpy (a selection's transpose, a sort's permutation) computes on that
    tensor instead, so the tracer records the computation rather than freezing its
    result.

    >>> program_value(1.0) is None
    True
    """
    for rec in tls.stack:
        if keeps_every_call(rec):
            t = rec.follow(a)
            if t is not None:
                return t
    return None


def shown_value(value):
    """``value`` (a tensor or a variable about to be shown as text: ``repr``, ``str``,
    ``print``, a notebook's HTML card) as it is to be shown.  A recorder that keeps
    every call is told (its optional ``note_shown``): ``nt.function``'s tracer notes
    that a value of its program left as text, and in the trace that checks it, has
    another value shown, so that a number parsed back out of the text shows as a
    constant that differs.

    >>> shown_value(1.0)        # nothing records: shown as it is
    1.0
    """
    for rec in tls.stack:
        if keeps_every_call(rec):
            return rec.note_shown(value)
    return value


def tell_copied(a, copy):
    """A tape kept ``copy`` of the plain array ``a`` (an index, a mask) for its backward
    pass: tell the recorders that keep every call (their optional ``note_copy``), so
    that ``nt.function``'s tracer knows the copy as the value it copies.

    >>> import numpy as np
    >>> tell_copied(np.ones(1), np.ones(1))     # nothing records: nothing to tell
    """
    for rec in tls.stack:
        if keeps_every_call(rec):
            rec.note_copy(a, copy)


class only_recording_all:
    """Run a block with only the recorders that keep every call (``records_all``:
    ``nt.function``'s tracer) on this thread's stack.  An optimizer's update is traced
    this way: the program must replay it, and no tape ever records it.

    >>> with only_recording_all():
    ...     tls.stack
    []
    """

    __slots__ = ("saved",)

    def __enter__(self):
        self.saved = tls.stack
        tls.stack = [r for r in self.saved if keeps_every_call(r)]

    def __exit__(self, *exc):
        tls.stack = self.saved
        return False


def tracing():
    """Whether ``nt.function`` is tracing on this thread (a recorder that keeps every
    call is on the stack): then code that would compute on a tensor's plain value
    (class labels, an optimizer's update) computes on the tensor, so that the program
    replays it with each call's values.

    >>> tracing()
    False
    """
    stack = tls.stack
    return bool(stack) and any(map(keeps_every_call, stack))
