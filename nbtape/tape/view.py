"""What a ``GradientTape`` shows of itself: its read-only view.

The tape keeps its own lists and dicts private; explain, the reprs, the pictures
and the notebook layer read it through these properties, the ``Op`` views of
``records.py`` and the entries of ``bookkeeping.py``, never by tuple position, so the tape can change how it
stores things without breaking them.  What the notebook layer needs of this thread's
recording stack comes from here too (``recorders_here``, ``not_recording``), so that it
never reaches into ``core.state``.
"""
from types import MappingProxyType

from ..display import pictures
from .backward import backward, backward_steps, forward_reach, reverse_step
from .numerics import backward_birth, count, finite, forward_birth
from ..display.cards import tape_html, tape_repr
from .explain import explain
from ..core.state import not_recording, tls
from ..core.structure import flatten
from .arguments import not_a_tensor_message
from .records import OpsView
from ..core.tensor import TensorLike


class TapeView:
    """The read-only half of ``GradientTape``: what pictures, explain and reprs read.

    A mixin of the tape (it reads the tape's own fields through ``self``); kept in
    this module so that ``gradient_tape.py`` reads as recording and playback.
    """

    __slots__ = ()

    @property
    def ops(self):
        """The recorded ops, oldest first: a read-only sequence (no copy).

        Each op has ``.name`` (``"np.sin"``) and ``.where`` (the user's line
        ``(filename, lineno, function)``, as explain shows it).

        >>> import numpy as np, nbtape as nt
        >>> x = nt.Variable(1.0)
        >>> with nt.GradientTape() as tape:
        ...     y = np.sin(x) * x
        >>> [op.name for op in tape.ops]
        ['np.sin', 'np.multiply']
        """
        return OpsView(self._ops)

    @property
    def op_records(self):
        """The ops as the engine keeps them, one tuple each (records.py), for the
        passes that read a tape (``backward``, ``forward_reach``); read them, never
        change them.  ``tape.ops`` names their fields.

        >>> import numpy as np, nbtape as nt
        >>> x = nt.Variable(1.0)
        >>> with nt.GradientTape() as tape:
        ...     y = np.sin(x)
        >>> len(tape.op_records), type(tape.op_records[0]).__name__
        (1, 'tuple')
        """
        return self._ops

    @property
    def watched(self):
        """Read-only ``{id: Watched}`` of the values this tape watches, in watch order
        (each ``Watched`` has ``.serial``, ``.kind`` and ``.where``)."""
        return MappingProxyType(self._watched)

    @property
    def notes(self):
        """What the tape noticed while recording, oldest first: a tuple of ``Note``
        (``kind``, ``id``, ``where``, ``detail``): values that escaped the tape or
        became integers, assigns, uses inside ``stop_recording``."""
        return tuple(self._notes)

    @property
    def watch_accessed_variables(self):
        return self._watch_accessed

    @property
    def consumed(self):
        """True once a non-persistent tape has computed its gradient."""
        return self._consumed

    @property
    def interrupted(self):
        """True when recording was stopped by Ctrl-C (KeyboardInterrupt)."""
        return self._interrupted

    def tracks(self, value):
        """True when this tape follows ``value`` (a tensor, a variable, or its id)."""
        i = value._id if isinstance(value, TensorLike) else value
        return i in self._tracked

    def watched_object(self, i):
        """The variable, or the still-alive tensor, this tape watches under id ``i``."""
        v = self._variables.get(i)
        if v is not None:
            return v
        ref = self._leaves.get(i)
        return ref() if ref is not None else None

    @property
    def last_nonfinite(self):
        """Where the NaN or inf of this tape's latest non-finite gradient was born (a
        ``numerics.Birth``: the op, its line, the element, the pattern), or None.

        >>> import numpy as np, nbtape as nt
        >>> nt.GradientTape().last_nonfinite is None
        True
        """
        return self._numerics

    @property
    def retired(self):
        """Why this tape's records were dropped (see ``retire``), or None."""
        return self._retired

    def retire(self, why):
        """Drop everything recorded and say ``why`` in the tape's repr (a tool that
        replaces a tape with a new one uses this, so the old one cannot mislead)."""
        self.reset()
        self._retired = why

    def backward_steps(self, target=None, sources=None):
        """Tape positions of the ops the reverse pass visits, in its order (newest first).

        ``target``/``sources`` default to those of the latest ``gradient`` call
        (sources: every watched value when only the target is given).

        >>> import nbtape as nt
        >>> x = nt.Variable(2.0)
        >>> with nt.GradientTape() as tape:
        ...     y = x * x
        ...     z = y + x
        >>> tape.backward_steps(z, x)
        [1, 0]
        """
        record = self.last_gradient
        if target is not None:
            target_ids = [t._id for t in _tensors_of(target, "target")]
        else:
            target_ids = list(record.target_ids) if record is not None else []
        if not target_ids:
            raise ValueError("backward_steps needs a target: call tape.gradient(target, "
                             "sources) first, or pass target= (and sources=) to say which "
                             "gradient to follow.")
        if sources is not None:
            source_ids = [t._id for t in _tensors_of(sources, "sources")]
        elif record is not None and set(record.target_ids) == set(target_ids):
            source_ids = list(record.source_ids)
        else:
            source_ids = list(self._watched)
        return backward_steps(self._ops, target_ids, source_ids)


    # the passes, for the pictures and players: on plain arrays, recording nothing ------------
    def reach(self, source_ids):
        """``(positions, ids)``: the ops and tensors downstream of the tensor ids
        ``source_ids``, as a gradient's reverse pass sees them (stops excluded).

        >>> import nbtape as nt
        >>> x = nt.Variable(2.0)
        >>> with nt.GradientTape() as tape:
        ...     y = x * x
        >>> tape.reach(list(tape.watched))[0]
        [0]
        """
        return forward_reach(self._ops, list(source_ids))

    def adjoints(self, seeds, source_ids):
        """Every adjoint of a reverse pass from ``seeds`` (``{target id: seed array}``)
        back to ``source_ids``: ``{tensor id: adjoint}``, intermediate ones included.

        >>> import numpy as np, nbtape as nt
        >>> x = nt.Variable(2.0)
        >>> with nt.GradientTape(persistent=True) as tape:
        ...     y = x * x
        >>> float(tape.adjoints({y._id: np.ones(())}, list(tape.watched))[x._id])
        4.0
        """
        with not_recording():
            return backward(self._ops, seeds, list(source_ids), False, True)

    def step_back(self, op, g, needs):
        """One reverse step: the adjoints of ``op``'s operands (``needs``: which) for its
        output's adjoint ``g``, a list with None where not needed.

        >>> import numpy as np, nbtape as nt
        >>> x = nt.Variable(3.0)
        >>> with nt.GradientTape(persistent=True) as tape:
        ...     y = x * 5.0
        >>> [float(g) for g in tape.step_back(tape.ops[0], np.ones(()), [True, False])[:1]]
        [5.0]
        """
        with not_recording():
            return reverse_step(op, g, needs)

    def forward_birth(self):
        """Where the first NaN or inf of the forward pass was made (a ``Birth``), or None."""
        return forward_birth(self._ops)

    def backward_birth(self, seeds, source_ids):
        """Where the first NaN or inf of a reverse pass from ``seeds`` was made, or None."""
        return backward_birth(self._ops, seeds, list(source_ids))

    def graph(self, target=None, sources=None, **options):
        """A ``graphviz.Digraph`` of what this tape recorded (see ``nbtape.notebook.graph``)."""
        return pictures.draw_tape(self, target=target, sources=sources, **options)

    def explain(self, target, source):
        """Why d(target)/d(source) is what it is: the recorded path, or where it breaks."""
        return explain(self, target, source)

    def __repr__(self):
        return tape_repr(self)

    def _repr_html_(self):
        return tape_html(self)


def _tensors_of(value, role):
    out = flatten(value)
    for t in out:
        if not isinstance(t, TensorLike):
            raise TypeError(not_a_tensor_message("backward_steps", t, role=role))
    return out


def recorders_here():
    """The recorders on this thread's stack now, outermost first (a copy: the magic
    compares what a cell left open with what was open before it).

    >>> import nbtape as nt
    >>> with nt.GradientTape() as tape:
    ...     recorders_here()[-1] is tape
    True
    """
    return list(tls.stack)



def stop_left_open(outer):
    """Stop the recorders entered since ``outer`` (a ``recorders_here()`` list) and never
    left, innermost first; return them (the magic and ``nt.tape_cell`` do this so that
    recording never leaks past a cell or a block).

    >>> import nbtape as nt
    >>> outer = recorders_here()
    >>> tape = nt.GradientTape().__enter__()
    >>> stop_left_open(outer) == [tape], recorders_here() == outer
    (True, True)
    """
    left = [r for r in recorders_here() if not any(r is o for o in outer)]
    for r in reversed(left):
        # a paused tape's stand-in is left by leaving its tape (which takes it off)
        (r if hasattr(r, "__exit__") else r.paused).__exit__(None, None, None)
    return left

# what the notebook layer takes from the engine, all through this module: the view, this
# thread's recorders, and the finite checks the pictures share with the warnings (an
# accumulator's tangents: its ``tangents``)
__all__ = ["TapeView", "recorders_here", "stop_left_open", "not_recording", "finite", "count"]
