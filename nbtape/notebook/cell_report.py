"""What a ``%%tape`` cell shows when it finishes: a compact report of its tape.

The report is a plain object with a text and an HTML repr (no IPython needed),
so it reads the same in a terminal, a notebook and a test.
"""
import html
import sys
import warnings

import numpy as np

from ..display.cards import CELL_STYLE, html_card, html_pre, html_table, tape_state
from ..display.numbers import array_text
from ..core.tensor import Tensor

# Bookkeeping a recorded op costs beyond its arrays (the op, its tuples, the
# output's Tensor wrapper, its id in the tape's sets), measured with tracemalloc.
OP_OVERHEAD = 600
ARRAY_OVERHEAD = sys.getsizeof(np.empty(0))
SCALAR_OVERHEAD = sys.getsizeof(np.float64(0)) - 8
# Values with at most this many elements are shown inline in the report.
INLINE = 6
# A report lists at most this many watched values, results or gradients (a model's
# dozens of weights would bury the rest); the count of the others follows.
REPORT_LISTED = 12


def tape_nbytes(tape):
    """Estimated bytes the tape keeps alive: its saved arrays (each counted once)
    plus the bookkeeping of every op.

    >>> import nbtape as nt
    >>> x = nt.constant(np.zeros(1000))
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = np.sin(x)
    >>> 16000 <= tape_nbytes(tape) < 20000   # x and sin(x): 8000 bytes each, and one op
    True
    """
    seen = set()
    total = OP_OVERHEAD * len(tape)
    stack = []
    for op in tape.ops:
        stack.extend((op.args, op.kwargs, op.ans, op.out))
        while stack:
            a = stack.pop()
            if a is None:
                continue
            if isinstance(a, Tensor):
                a = a._value
            if isinstance(a, (np.ndarray, np.generic)):
                if id(a) not in seen:
                    seen.add(id(a))
                    total += a.nbytes + (ARRAY_OVERHEAD if type(a) is np.ndarray
                                         else SCALAR_OVERHEAD)
            elif isinstance(a, (list, tuple)):
                stack.extend(a)
            elif isinstance(a, dict):
                stack.extend(a.values())
    return total


def format_bytes(n):
    """Bytes for people.

    >>> format_bytes(512), format_bytes(3 * 2**20), format_bytes(int(1.5 * 2**30))
    ('512 bytes', '3.0 MB', '1.5 GB')
    """
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def large_tape_note(n_ops, nbytes):
    """The advice shown for a tape that recorded a whole loop.

    >>> print(large_tape_note(120000, 50 * 2**20))  # doctest: +ELLIPSIS
    This tape holds 120,000 ops and about 50.0 MB. ...a new tape per step...
    """
    return (f"This tape holds {n_ops:,} ops and about {format_bytes(nbytes)}. A tape keeps "
            "everything it recorded alive until it is dropped, so one tape around a whole "
            "training loop grows with every step: record a new tape per step instead "
            "(`with nt.GradientTape() as tape:` inside the loop).")


def inline_value(value):
    """A small value on one line, or ``None`` when it is too big to show inline.

    >>> inline_value(np.ones((2, 2))), inline_value(np.ones(10))
    ('[[1.0 1.0] [1.0 1.0]]', None)
    """
    if np.size(value) > INLINE:
        return None
    return array_text(value, one_line=True)


class GradientRow:
    """One line of the ``--grad`` table: a watched value and d(target)/d(it)."""

    def __init__(self, label, gradient, note=None):
        self.label = label
        self.gradient = gradient      # a Tensor, or None
        self.note = note              # why it is None, when known


def gradient_rows(tape, target, labelled, why=None):
    """d(target)/d(each watched value) as ``GradientRow``s, from one ``gradient`` call.

    ``labelled`` is ``[(label, tensor_or_variable)]``.  Engine errors (a used
    non-persistent tape, a function without a gradient rule) come back as a
    ``NbtapeError`` or ``ValueError`` for the caller to report.  A ``None``
    gradient gets the reason ``tape.explain`` finds (a value that left the tape,
    a stop_gradient, ...), else ``why(value)`` when given and not ``None``.

    >>> import nbtape as nt
    >>> x = nt.constant(3.0)
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     z = x * x
    >>> [(r.label, float(r.gradient)) for r in gradient_rows(tape, z, [("x", x)])]
    [('x', 6.0)]
    """
    sources = [obj for _, obj in labelled]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grads = tape.gradient(target, sources) if sources else []
    messages = [str(w.message) for w in caught]
    rows = []
    for (lab, obj), g in zip(labelled, grads):
        note = None
        if g is None:
            note = (next((m for m in messages if obj.dtype.kind not in "fc" and "dtype" in m),
                         None) or _break(tape, target, obj) or (why(obj) if why else None)
                    or "no recorded path to it")
        rows.append(GradientRow(lab, g, note))
    return rows


def _break(tape, target, source):
    """The specific place where the path from ``source`` breaks, or ``None``."""
    reasons = tape.explain(target, source).reasons
    # explain's fallbacks say only that nothing connects them: no cause to name
    specific = [r for r in reasons if not r.startswith(("no recorded operation",
                                                         "the target was not recorded"))]
    return specific[0].rstrip(".") if specific else None


class CellReport:
    """The report a ``%%tape`` cell displays: tape state, watched values, results, notes.

    >>> import nbtape as nt
    >>> x = nt.constant(3.0)
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> print(CellReport("tape", tape, [("x", x)], [("y", y)]))
    tape: 1 op recorded (persistent)
      watched: x (shape=(), float64)
      results: y = 9.0
    """

    def __init__(self, name, tape, watched, results, status=None, notes=(),
                 target=None, rows=None, kind="%%tape"):
        self.name = name
        self.kind = kind                  # what made the tape: "%%tape", "nt.tape_cell"
        self.tape = tape
        self.watched = list(watched)      # [(label, tensor_or_variable)]
        self.results = list(results)      # [(name, tensor_or_variable)]
        self.status = status              # why recording stopped early, or None
        self.notes = list(notes)
        self.target = target              # label of the --grad target, or None
        self.rows = rows                  # [GradientRow] for --grad, or None

    def headline(self):
        n = len(self.tape)
        return (f"{self.name}: {n:,} op{'' if n == 1 else 's'} recorded "
                f"({', '.join(tape_state(self.tape))})")

    @staticmethod
    def _described(label, obj):
        return f"{label} (shape={obj.shape}, {obj.dtype})"

    def _result_text(self, name, value):
        shown = inline_value(value._value)
        return f"{name} = {shown}" if shown is not None else f"{name} (shape={value.shape})"

    def _d(self, label):
        return f"d{self.target}/d{label}"

    def __str__(self):
        lines = [self.headline()]
        if self.status:
            lines.append(f"  {self.status}")
        lines.append("  watched: " + (_listed([self._described(k, v) for k, v in self.watched])
                                      or "nothing"))
        if self.results:
            lines.append("  results: " + _listed([self._result_text(k, v)
                                                  for k, v in self.results]))
        if self.rows is not None:
            lines.append(f"  gradients of {self.target}:" if self.rows else
                         f"  gradients of {self.target}: nothing is watched")
            for r in self.rows[:REPORT_LISTED]:
                lines.append(f"    {self._d(r.label)} = " + _grad_text(r, "      "))
            if len(self.rows) > REPORT_LISTED:
                lines.append(f"    ... and {len(self.rows) - REPORT_LISTED} more")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        parts = []
        if self.status:
            parts.append(f"<div><b>{html.escape(self.status)}</b></div>")
        if self.watched:
            parts.append("<div style='margin-top:4px'>watched:</div>" + html_table(
                ["name", "kind", "shape", "dtype"],
                [[k, "variable" if not isinstance(v, Tensor) else "tensor", v.shape, v.dtype]
                 for k, v in self.watched[:REPORT_LISTED]]) + _more(self.watched))
        else:
            parts.append("<div>watched: nothing</div>")
        if self.results:
            parts.append("<div style='margin-top:4px'>results:</div>" + html_table(
                ["name", "shape", "dtype", "value"],
                [[k, v.shape, v.dtype, inline_value(v._value) or "\u2026"]
                 for k, v in self.results[:REPORT_LISTED]]) + _more(self.results))
        if self.rows is not None:
            parts.append(f"<div style='margin-top:4px'>gradients of "
                         f"{html.escape(self.target)}:</div>")
            cells = "".join(
                f"<tr><td style='{CELL_STYLE}'>{html.escape(self._d(r.label))}</td>"
                f"<td style='{CELL_STYLE}'>{html_pre(_grad_text(r, '').strip())}</td></tr>"
                for r in self.rows[:REPORT_LISTED])
            parts.append(f"<table>{cells}</table>{_more(self.rows)}" if cells
                         else "<div>nothing is watched</div>")
        parts.extend(f"<div style='margin-top:4px'>{html.escape(n)}</div>" for n in self.notes)
        n = len(self.tape)
        chips = [f"{n:,} op" + ("" if n == 1 else "s")] + tape_state(self.tape)
        return html_card(f"{self.kind} \u2192 {self.name}", chips, "".join(parts), "nbtape-cell-report")


def _listed(items):
    more = f" and {len(items) - REPORT_LISTED} more" if len(items) > REPORT_LISTED else ""
    return ", ".join(items[:REPORT_LISTED]) + more


def _more(items):
    return f"<div>\u2026 and {len(items) - REPORT_LISTED} more</div>" if len(items) > REPORT_LISTED else ""


def _grad_text(row, indent):
    if row.gradient is None:
        return f"None ({row.note})"
    text = array_text(row.gradient._value)
    if "\n" not in text:
        return text
    return "\n" + "\n".join(indent + line for line in text.splitlines())


def grad_error_note(target, exc):
    """What the report says when ``--grad`` could not be computed.

    >>> grad_error_note("z", ValueError("boom"))
    '--grad z could not be computed: boom'
    """
    return f"--grad {target} could not be computed: {exc}"

