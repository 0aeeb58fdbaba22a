"""The records a ``GradientTape`` shows of itself: small and read-only.

The tape keeps its own lists and dicts private; explain, the reprs, the pictures
and the notebook layer read it through these records and the tape's read-only
properties (``tape.ops``, ``tape.watched``, ``tape.notes``), never by tuple
position, so the tape can change how it stores things without breaking them.
"""
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..diagnostics.user_line import LazyWhere
from ..core.tensor import Tensor, TensorLike


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


class OpsView(Sequence):
    """The tape's ops, oldest first, read-only (no copy is made): an ``Op`` view of each
    of the tape's records (op_records.py).

    Each op has ``.name`` (``"np.sin"``) and ``.where`` (the user's line, as explain
    shows it), and ``.in_ids``/``.out_ids``/``.metas`` for pictures.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x + 1.0
    >>> view = OpsView(tape.op_records)
    >>> len(view), view[-1].name, [op.name for op in view], view[0] is view[0]
    (2, 'np.add', ['np.multiply', 'np.add'], True)
    """

    __slots__ = ("_records",)

    def __init__(self, records):
        self._records = records

    def __len__(self):
        return len(self._records)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self._records.view(j) for j in range(len(self._records))[k])
        return self._records.view(k)

    def __iter__(self):
        view = self._records.view
        return (view(k) for k in range(len(self._records)))

    def __repr__(self):
        return f"<{len(self._records)} recorded ops>"


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


def small_tape(records, max_ops, max_bytes):
    """A classroom-sized tape: at most ``max_ops`` ops, each kept its output, and the
    outputs add up to at most ``max_bytes`` (so every adjoint is kept for pictures).

    >>> import numpy as np, nbtape as nt
    >>> x = nt.constant(np.ones(4))
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = np.sin(x)
    >>> small_tape(tape.op_records, 1000, 1 << 20), small_tape(tape.op_records, 1000, 16)
    (True, False)
    """
    if len(records) > max_ops:
        return False
    total = 0
    for rec in records:
        out = rec[8]                # the kept output (op_records.py)
        if type(out) is Tensor:     # a kept output (the common case), counted inline
            total += getattr(out._value, "nbytes", 8)
        elif out is None:           # not kept
            return False
        else:
            total += _nbytes((out() if type(out) is weakref.ref else out,))
    return total <= max_bytes


def _nbytes(values):
    total = 0
    for v in values:
        if type(v) is Tensor:
            total += getattr(v._value, "nbytes", 8)
        elif isinstance(v, tuple):
            total += _nbytes(v)
        elif v is not None:
            total += getattr(v._value if isinstance(v, TensorLike) else v, "nbytes", 8)
    return total
