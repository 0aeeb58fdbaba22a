"""What a ``GradientTape`` keeps beside its op records: its watches, its notes, and
what its latest gradient computed.

The tape keeps its own lists and dicts private; explain, the reprs, the pictures and
the notebook layer read it through these and the tape's read-only properties
(``tape.watched``, ``tape.notes``, ``tape.last_gradient``; the ops through
``tape.ops``, records.py), so the tape can change how it stores things without
breaking them.
"""
from typing import Any, NamedTuple

from ..diagnostics.user_line import LazyWhere


class Watched(LazyWhere):
    """One value the tape watches: when (``serial``), where, and what ``kind``.

    ``serial`` orders watches against tensor ids (a tensor made before the watch has
    a smaller id); ``kind`` is ``"variable"`` or ``"tensor"``; ``where`` is the
    user's line ``(filename, lineno, function)`` or ``None``.

    >>> w = Watched(7, ("cell.py", 3, "<module>"), "tensor")
    >>> w.serial, w.kind, w.where
    (7, 'tensor', ('cell.py', 3, '<module>'))
    """

    __slots__ = ("serial", "kind", "_where")

    def __init__(self, serial, where, kind):
        self.serial = serial
        self.kind = kind
        self._where = where     # auto-watched variables keep the cheap raw form until asked


    def __repr__(self):
        return f"Watched(serial={self.serial}, kind={self.kind!r}, where={self.where!r})"


class Note(NamedTuple):
    """Something the tape noticed while recording (an escape, an assign, a pause, a dtype).

    ``kind`` is ``"escape"``, ``"assign"``, ``"stop_recording"`` or ``"dtype"``; ``id``
    the tensor or variable id it concerns; ``where`` the user's line; ``detail`` what
    the kind adds (the function an escape went through, ``(how, source id)`` for an
    assign, the op paused, ``(function, dtype, id of the integer result)`` for a dtype
    change).

    >>> Note("escape", 3, None, "float()").kind
    'escape'
    """
    kind: str
    id: int
    where: Any
    detail: Any


class GradientRecord:
    """What the latest ``gradient`` call computed: targets, sources and adjoints.

    ``adjoints`` maps tensor ids to plain arrays; it holds every adjoint on the
    path for tapes of at most ``DISPLAY_OPS`` ops, and only the sources' otherwise.
    """

    def __init__(self, target_ids, source_ids, adjoints, complete):
        self.target_ids = target_ids
        self.source_ids = source_ids
        self.adjoints = adjoints
        self.complete = complete
