"""The ``Recorder`` protocol: what anything on the recording stack must do.

A numpy call on tensors runs first, then ``dispatch`` offers it to every recorder on
this thread's stack (``state.tls.stack``), oldest first; reading a variable, letting a
value escape to plain numpy and assigning a variable are offered the same way.  Seven
classes implement it: ``GradientTape`` (keeps a record per op), its paused stand-in
inside ``stop_recording`` (notes uses, records nothing), ``ForwardAccumulator``
(pushes tangents forward), two listeners that collect what a function touches
(``recompute_grad``'s reads, ``custom_gradient``'s variable watcher),
``check_numerics``'s listener (raises at the first op that makes a NaN or inf),
and ``nt.function``'s tracer (keeps every call, for a replay: its ``records_all``
asks dispatch for the calls no tape keeps, comparisons and ``argmax``); those
that need only some hooks extend ``Listener``, whose hooks do nothing.
``tests/test_recorder.py`` checks that each implements every hook with these
parameters.

>>> import nbtape as nt
>>> isinstance(nt.GradientTape(), Recorder), isinstance(nt.ForwardAccumulator([], []), Recorder)
(True, True)
"""
from typing import Any, Optional, Protocol, runtime_checkable


@runtime_checkable
class Recorder(Protocol):
    """The hooks the engine calls on each recorder of the stack.

    Every hook is called while the user's code runs, so each must be cheap, must not
    raise for a call it has no interest in, and must not record the work it does
    itself (a recorder that computes on tensors takes itself off the stack first:
    ``state.suspended``, ``state.outer_only``).

    Optional: ``records_all = True`` asks dispatch for the calls no tape keeps too
    (comparisons, ``argmax``); only ``nt.function``'s tracer sets it, and everyone
    reads it through ``state.keeps_every_call``.  Such a recorder also has
    ``follow(a)``: ``a`` (a tensor or an array) as a tensor it follows, or None
    (``state.program_value`` asks it), and ``note_raised(rule, args, kwargs, error)``:
    a call raised (``dispatch.tell_raised``), ``note_copy(a, copy)``: a tape kept
    ``copy`` of the plain array ``a`` (``state.tell_copied``), and
    ``note_shown(value)``: a tensor or variable is about to be shown as text, returning
    what to show (``state.shown_value``).
    """

    __slots__ = ()

    #: The recorder this entry stands in for while it is paused (a tape inside its
    #: ``stop_recording`` block), else None.  ``state.suspended`` and a tape leaving
    #: the stack find a paused tape through it.
    paused: Optional["Recorder"]

    def record(self, rule: Any, args: tuple, kwargs: Optional[dict], operands: tuple,
               ids: tuple, outs: Any) -> None:
        """One numpy call has run: ``rule`` (a ``core.rule.Rule``) was called with
        ``args``/``kwargs``; ``operands`` are its tensor operands, ``ids`` their ids
        (None for an operand that is not a tensor), ``outs`` the result (a Tensor, or a
        tuple of them for a rule with ``multi``).  Keep what is needed to differentiate
        it later, or ignore it when no operand is followed.  Never change ``outs``."""

    def on_variable_read(self, variable: Any) -> None:
        """``variable`` was read by an op (a tape may start watching it here)."""

    def note_escape(self, tensor: Any, how: str) -> None:
        """``tensor``'s value left for plain numpy through ``how`` (``"float()"``,
        ``"np.asarray"``): a gradient through it will be None; note it for explain."""

    def on_assign(self, variable: Any, source: Any, how: str, before: Any) -> None:
        """``variable`` was given a new value from ``source`` by ``how``
        (``"assign"``, ``"assign_add"``...): the tape's view of it is now history.
        ``source`` is the tensor given, or the plain array made of a constant.  Called
        after the assignment: ``variable`` already holds its new value, and ``before``
        is the tensor it held until then."""


class Listener(Recorder):
    """A ``Recorder`` whose hooks do nothing: a recorder that cares about some of the
    hooks subclasses it and overrides those (``ForwardAccumulator`` only ``record``,
    ``custom_gradient``'s watcher only ``on_variable_read``).

    >>> isinstance(Listener(), Recorder), Listener.paused
    (True, None)
    """

    __slots__ = ()
    paused = None       # never a paused tape's stand-in

    def record(self, rule, args, kwargs, operands, ids, outs):
        pass

    def on_variable_read(self, variable):
        pass

    def note_escape(self, tensor, how):
        pass

    def on_assign(self, variable, source, how, before):
        pass
