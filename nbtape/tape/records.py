"""What a tape keeps of each op: one plain tuple, and a readable ``Op`` view of it.

A record is the exact tuple

    (rule key, args, kwargs, ans, in_ids, metas, out_ids, where, out, all_ids, raw_args)

that ``GradientTape.record`` builds: the rule's key in the tape's table of rules
(``Records.key``); ``args`` and ``kwargs`` what the rule's VJPs need; ``ans`` the
output if the rule keeps it; ``in_ids``/``out_ids`` the operand and output ids (None
for an operand the tape does not follow); ``metas`` each operand's ``(shape,
dtype)``; ``where`` ``(code, lasti)`` of the user's line; ``out`` the output
tensor(s), kept on small tapes for pictures; ``all_ids`` the operand ids before
untracked ones became None (pictures link them to their ops); ``raw_args`` True when
``args[k]`` is the array of the tensor ``all_ids[k]`` where that is not None (a
single output's ``ans`` is always its array; ``backward.saved_tensors`` rebuilds the
tensors).

A tuple, not an object, because the cyclic garbage collector stops tracking a tuple
that holds only untracked values (ints, arrays, numbers, tuples of those): a long tape
then leaves it nothing to walk, where an object per op made each full collection walk
the whole tape.  That is
also why the rule is a key into the tape's own table of rules (a Rule object is
tracked).

Nothing reads a record by a bare position: the passes unpack a record into its
fields' names, in the order of ``FIELDS`` (one bytecode for all eleven, the cheapest
way to read several), or index it with the constants below; everything else
(explain, the pictures, the tape player) reads ``Op`` views, which name the fields.
``tests/test_records.py`` checks both ways against ``FIELDS``.
"""
import weakref
from collections.abc import Sequence

import numpy as np

from ..diagnostics.user_line import LazyWhere
from ..core.arrays import SCALAR_METAS
from ..core.rule import POSITIONAL, SEQUENCE
from ..core.tensor import Tensor, TensorLike
from .snapshot import KEPT_AS_IS, snapshot

# a record's fields, in order, and the position of each
FIELDS = ("rule", "args", "kwargs", "ans", "in_ids", "metas", "out_ids", "where", "out",
          "all_ids", "raw_args")
RULE, ARGS, KWARGS, ANS, IN_IDS, METAS, OUT_IDS, WHERE, OUT, ALL_IDS, RAW_ARGS = range(11)


class Records(list):
    """A tape's records, oldest first, with the table of the rules they use.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    >>> records = tape.op_records
    >>> records.rules[records[0][RULE]].name, records.view(0).in_ids == records[0][IN_IDS]
    ('np.multiply', True)
    """

    __slots__ = ("rules", "keys", "stops", "guards", "small", "_views")

    def __init__(self):     # no super().__init__: a tape makes one per recording
        self.rules = []         # key -> Rule
        self.keys = {}          # Rule -> key
        self.stops = []         # key -> the rule's .stop (forward_reach reads it per op)
        self.guards = {}        # position -> large plain operands kept by reference (snapshot)
        self.small = {}         # position -> {operand: small constant} kept when freed
        self._views = None      # position -> Op, made when first asked for

    def key(self, rule):
        """The key of ``rule`` in this tape's table, added on first use."""
        k = self.keys.get(rule)
        if k is None:
            k = self.keys[rule] = len(self.rules)
            self.rules.append(rule)
            self.stops.append(rule.stop)
        return k

    def view(self, k):
        """The ``Op`` view of the record at position ``k`` (the same object each time)."""
        if k < 0:
            k += len(self)
        views = self._views
        if views is None:
            views = self._views = {}
        op = views.get(k)
        if op is None:
            self[k]     # an IndexError for a position past the end
            op = views[k] = Op(self, k)
        return op

    def only(self, k):
        """A one-record ``Records`` holding the record at ``k`` (its position 0)."""
        one = Records()
        one.append(self[k])
        one.rules, one.keys, one.stops = self.rules, self.keys, self.stops
        if k in self.guards:
            one.guards = {0: self.guards[k]}
        if k in self.small:
            one.small = {0: self.small[k]}
        return one


KEPT_SMALL = 6     # a constant operand of at most this many numbers outlives free_records


def free_records(records, keep_output=False):
    """Drop every record's saved values (a used non-persistent tape); the structure
    stays, for explain and pictures.  The outputs stay if ``keep_output``, else only
    while something else (the user's own variable) keeps them alive.  On such a
    classroom-sized tape (``keep_output``) the operands it did not follow that hold at
    most ``KEPT_SMALL`` numbers (the 0.75 of ``0.75 - y``) stay too, in
    ``records.small``, so a picture can still show them; a long tape pays nothing."""
    k = 0
    small = {}
    rules = records.rules
    for key, args, _, _, i, m, o, w, out, a, raw in records:
        if out is not None and not keep_output:
            out = weakref.ref(out) if type(out) is Tensor else None
        if keep_output and args is not None and None in i:
            kept = small_constants(rules[key], args, i)
            if kept:
                small[k] = kept
        records[k] = (key, None, None, None, i, m, o, w, out, a, raw)
        k += 1
    records.guards = {}
    records.small = small


_NUMBER_TYPES = (float, int, bool, complex)
_ARRAYS = (np.ndarray, np.generic)


def small_constants(rule, args, in_ids):
    """``{operand position: value}`` for the operands not followed (``in_ids[k]`` None)
    that are plain numbers or arrays of at most ``KEPT_SMALL`` of them.

    >>> import numpy as np
    >>> from nbtape.core.rule import Rule
    >>> small_constants(Rule(np.subtract), (0.75, np.zeros(3)), (None, 7))
    {0: 0.75}
    >>> small_constants(Rule(np.add), (np.zeros(3), np.zeros(9)), (5, None))
    {}
    """
    kind = rule.kind
    kept = {}
    for k, tid in enumerate(in_ids):
        if tid is not None:
            continue
        try:
            v = args[k] if kind is POSITIONAL else args[0][k] if kind is SEQUENCE \
                else args[rule.start + k]
        except (IndexError, TypeError, KeyError):
            continue
        t = type(v)
        if t in _NUMBER_TYPES:
            kept[k] = v
            continue
        if isinstance(v, TensorLike):
            v = v._value
        if isinstance(v, _ARRAYS) and v.size <= KEPT_SMALL and v.dtype != object:
            kept[k] = v.copy()
    return kept


class Op(LazyWhere):
    """One recorded operation, read through its record: ``rule``, ``name``, ``args``,
    ``kwargs``, ``ans``, ``in_ids``, ``out_ids``, ``all_ids``, ``metas``, ``where``,
    ``out``.  ``tape.ops[k]`` gives one.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * 3.0
    >>> op = tape.ops[0]
    >>> op.name, op.args, op.out_ids == (y._id,), op.kept_output
    ('np.multiply', (array(2.), 3.0), True, True)
    """

    __slots__ = ("_records", "_k", "_where")

    def __init__(self, records, k):
        self._records = records
        self._k = k
        self._where = records[k][WHERE]

    @property
    def record(self):
        """The record itself (a tuple: the module docstring names its fields)."""
        return self._records[self._k]

    @property
    def rule(self):
        return self._records.rules[self.record[RULE]]

    @property
    def name(self):
        return self.rule.name

    args = property(lambda self: self.record[ARGS])
    kwargs = property(lambda self: self.record[KWARGS])
    ans = property(lambda self: self.record[ANS])
    in_ids = property(lambda self: self.record[IN_IDS])
    metas = property(lambda self: self.record[METAS])
    out_ids = property(lambda self: self.record[OUT_IDS])
    all_ids = property(lambda self: self.record[ALL_IDS])
    raw_args = property(lambda self: self.record[RAW_ARGS])

    def saved_id(self, k):
        """The id of the tensor whose array the tape saved as ``args[k]`` (it keeps an
        operand tensor's array, not the tensor), or None."""
        return saved_id(self.record, k)

    def small_constant(self, k):
        """The value of operand ``k``, not followed by the tape, that ``free_records``
        kept (a few numbers at most), or None."""
        return self._records.small.get(self._k, {}).get(k)

    @property
    def guards(self):
        """The ``(array, fingerprint)`` pairs of the large plain operands the op kept by
        reference (``snapshot``); empty for most ops."""
        return self._records.guards.get(self._k, ())

    @property
    def kept_output(self):
        """False when the op did not keep its output (a long tape, a big array)."""
        return self.record[OUT] is not None

    @property
    def out(self):
        """The op's output (Tensor or tuple), or None once freed and collected."""
        out = self.record[OUT]
        return out() if type(out) is weakref.ref else out

    def __repr__(self):
        return f"<op {self._k}: {self.name}>"


def saved_id(record, k):
    """The id of the tensor whose array ``record`` saved as ``args[k]``, or None."""
    ids = record[ALL_IDS]
    return ids[k] if record[RAW_ARGS] and k < len(ids) else None


class OpsView(Sequence):
    """The tape's ops, oldest first, read-only (no copy is made): an ``Op`` view of each
    of the tape's records.

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
        out = rec[OUT]
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


# --- making a record's fields (GradientTape.record) --------------------------------------------
NUMBERS = (int, float, complex)     # Python numbers: kept in a record even when unused
_meta = SCALAR_METAS.get    # a numpy scalar's (shape, dtype) without reading it off the scalar


def some_constant(ids, tracked):
    """For a call of one or three or more operands: None when no operand is followed
    (the call is not the tape's), else whether some tensor operand is not followed."""
    connected = constant = False
    for i in ids:
        if i in tracked:
            connected = True
        elif i is not None:
            constant = True
    return constant if connected else None


def operand_metas(operands):
    """The operands' ``(shape, dtype)`` (None for a non-tensor): tuples, which the GC
    stops tracking once it has seen them; a numpy scalar's come from a table, an
    array's are read off it.  The tape shares equal ones (``_shared_metas``: ops of a
    loop have one tuple per kind of op, not three per op, so a long tape leaves the
    collector fewer objects to count)."""
    n = len(operands)
    if n == 2:
        a, b = operands
        return ((_meta(type(a._value)) or (a._value.shape, a._value.dtype))
                if type(a) is Tensor else None,
                (_meta(type(b._value)) or (b._value.shape, b._value.dtype))
                if type(b) is Tensor else None)
    if n == 1:
        a = operands[0]
        return ((_meta(type(a._value)) or (a._value.shape, a._value.dtype))
                if type(a) is Tensor else None,)
    return tuple([(a._value.shape, a._value.dtype) if type(a) is Tensor else None
                  for a in operands])


def saved_args(args, save, records):
    """What a record keeps of ``args``: those the rule reads (``save``, a flag per
    argument; None: all) and Python numbers (they label pictures, and cost nothing); a
    plain array the user may change later (a buffer reused in a loop) must be seen by
    the rule as it was now: a copy, or a big one fingerprinted (``snapshot``)."""
    saved = args if save is None else tuple(
        [a if (k < len(save) and save[k]) or type(a) in NUMBERS else None
         for k, a in enumerate(args)])
    for a in saved:
        if type(a) not in KEPT_AS_IS:
            return tuple(snapshot(saved, records))
    return saved
