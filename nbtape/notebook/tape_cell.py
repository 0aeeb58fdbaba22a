"""``nt.tape_cell``: what the ``%%tape`` magic does, as a context manager.

Where magics do not exist (marimo, plain Python scripts, a function), a ``with``
block stands for the cell::

    with nt.tape_cell(watch=[x], grad="z", graph=True) as cell:
        y = x ** 2
        z = y ** 2
    cell                       # the report, d(z)/d(x) and the graph, as one output

The block runs under a new tape (``cell.tape``; persistent unless
``persistent=False``) that watches ``watch`` (tensors and variables; a marimo cell
cannot rebind a name another cell defines, so unlike ``--watch`` it takes values,
not names).  Afterwards ``cell`` is the magic's summary: the ops recorded, the
watched values and the tensors the block bound (named as the block named them),
with ``grad`` (the name of a tensor the block computes) the gradients of that
target, with ``graph`` the tape's picture, with ``inspect`` the live inspector
(made when the block starts, so it follows a training loop).  An error in the
block stops recording, leaves the tape usable with what it recorded, and
propagates; the summary then says where recording stopped.

Display: the summary is the block's last expression (``cell``).  In marimo its
``_display_`` stacks the parts (``mo.vstack``), the inspector as a live widget;
in Jupyter ``_ipython_display_`` shows them one after another; elsewhere it is
text.
"""
import sys

from ..core.tensor import TensorLike
from ..tape.gradient_tape import GradientTape
from ..tape.view import recorders_here, stop_left_open
from . import cell_report
from . import namespace as names_


class TapeCell:
    """The ``with`` block's tape and, once the block ends, its summary.

    >>> import nbtape as nt
    >>> x = nt.constant(3.0)
    >>> with nt.tape_cell(watch=[x], grad="z") as cell:
    ...     y = x ** 2
    ...     z = y ** 2
    >>> print(cell)
    tape: 2 ops recorded (persistent)
      watched: x (shape=(), float64)
      results: y = 9.0, z = 81.0
      gradients of z:
        dz/dx = 108.0
    >>> float(cell.tape.gradient(y, x))        # the tape stays usable, as %%tape's does
    6.0
    """

    def __init__(self, watch=(), grad=None, graph=False, inspect=False, persistent=True,
                 watch_accessed_variables=True, name="tape"):
        watch = list(watch) if isinstance(watch, (list, tuple)) else [watch]
        for value in watch:
            if not isinstance(value, TensorLike):
                raise TypeError(
                    f"nt.tape_cell(watch=...) takes nbtape tensors and variables, not "
                    f"{type(value).__name__}: wrap it first (x = nt.constant(3.0)), then "
                    "nt.tape_cell(watch=[x]).")
        if grad is not None and not (isinstance(grad, str) and names_.is_identifier(grad)):
            raise TypeError(f"nt.tape_cell(grad=...) takes the name of the target, as a "
                            f"string (grad=\"loss\"), not {grad!r}.")
        self.tape = GradientTape(persistent=persistent,
                                 watch_accessed_variables=watch_accessed_variables)
        self.name = name
        self._watch = watch
        self._grad = grad
        self._graph = graph
        self._inspect = inspect
        self.report = None          # the CellReport, once the block ended
        self.picture = None         # the graph, with graph=True
        self.inspector = None       # the live inspector, with inspect=True
        self._before = None
        self._outer = ()
        self._shown = set()         # ids of parts already in marimo's output

    # the block ---------------------------------------------------------------------------
    def __enter__(self):
        # the block's names: those of the frame running the ``with`` (a marimo cell's
        # globals, a notebook's namespace, a function's locals)
        self._before = dict(sys._getframe(1).f_locals)
        if self._inspect:
            from .widgets import inspect
            self.inspector = inspect(self.tape)
            if in_marimo():             # shown now, so that it follows the block live
                import marimo as mo
                mo.output.append(self.inspector)
                self._shown = {id(self.inspector)}
        self._outer = recorders_here()
        self.tape.__enter__()
        if self._watch:
            self.tape.watch(self._watch)
        return self

    def __exit__(self, kind, exc, tb):
        self.tape.__exit__(kind, exc, tb)
        # what the block entered and never left (a tape, stop_recording) is stopped too
        left_open = stop_left_open(self._outer)
        self._summarise(dict(sys._getframe(1).f_locals), exc, left_open)
        return False

    def _summarise(self, ns, exc, left_open):
        visible = {k: v for k, v in ns.items() if not k.startswith("_")}
        results = [(k, v) for k, v in names_.cell_results(self._before, visible)
                   if v is not self]
        names = names_.tensor_names(visible, prefer=results)
        watched = [(names_.label(o, names), o)
                   for o in names_.watched_objects(self.tape, self._watch + list(visible.values()))]
        notes = []
        if left_open:
            notes.append(f"the block left {len(left_open)} recorder(s) open; nt.tape_cell "
                         "stopped them so that recording does not leak past it.")
        report = self.report = cell_report.CellReport(self.name, self.tape, watched, results,
                                                      notes=notes, kind="nt.tape_cell")
        if exc is not None:
            report.status = (f"Recording stopped by {type(exc).__name__}: the tape keeps "
                             f"the {len(self.tape)} op(s) recorded before it.")
            return
        target = None
        if self._grad is not None:
            target = visible.get(self._grad)
            report.target = self._grad
            if not isinstance(target, TensorLike):
                report.rows = None
                report.notes.append(
                    f"grad={self._grad!r}: the block did not bind {self._grad!r} to a tensor "
                    f"({type(target).__name__ if target is not None else 'no such name'}), "
                    "so there is no gradient to show.")
                target = None
            else:
                try:
                    report.rows = cell_report.gradient_rows(self.tape, target, watched)
                except (ValueError, TypeError, RuntimeError) as e:
                    report.notes.append(cell_report.grad_error_note(self._grad, e))
        if self._graph:
            self.picture = self.tape.graph(target=target, names=names)

    # display -----------------------------------------------------------------------------
    def parts(self):
        """What the summary shows, in order: the report, the picture, the inspector."""
        return [p for p in (self.report, self.picture, self.inspector) if p is not None]

    def __str__(self):
        if self.report is None:
            return f"nt.tape_cell: the block has not ended yet ({len(self.tape)} ops so far)"
        return str(self.report)

    __repr__ = __str__

    def _repr_html_(self):
        return self.report._repr_html_() if self.report is not None else None

    def _display_(self):
        # marimo's display protocol: an object marimo shows in place of this one (the
        # inspector, already shown live above, is not shown twice)
        import marimo as mo
        return mo.vstack([p for p in self.parts() if id(p) not in self._shown])

    def _ipython_display_(self):
        from IPython.display import display
        for part in self.parts():
            display(part)


def in_marimo():
    """True inside a running marimo notebook (marimo imported and running a cell).

    >>> in_marimo()
    False
    """
    mo = sys.modules.get("marimo")
    return mo is not None and bool(mo.running_in_notebook())


def tape_cell(watch=(), grad=None, graph=False, inspect=False, persistent=True,
              watch_accessed_variables=True, name="tape"):
    """A ``with`` block that does ``%%tape``'s job where magics do not exist (marimo).

    ``watch`` (tensors and variables), ``grad`` (the name of the target the block
    computes), ``graph``, ``inspect``, ``persistent`` and
    ``watch_accessed_variables`` are the magic's options; see ``TapeCell``.

    >>> import nbtape as nt
    >>> w = nt.Variable(2.0, name="w")
    >>> with nt.tape_cell(grad="loss") as cell:
    ...     loss = w * w
    >>> [(r.label, float(r.gradient)) for r in cell.report.rows]
    [('w', 4.0)]
    """
    return TapeCell(watch=watch, grad=grad, graph=graph, inspect=inspect,
                    persistent=persistent, watch_accessed_variables=watch_accessed_variables,
                    name=name)
