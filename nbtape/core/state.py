"""Per-thread recording state: the one piece of mutable global state nbtape has.

Every active recorder (a ``GradientTape`` or ``ForwardAccumulator``) sits on the
current thread's stack; an operation on tensors offers itself to each of them.
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
