"""The ``%%tape`` cell magic: run a cell under a fresh tape and report what it recorded.

``%load_ext nbtape`` registers it.  Per-shell state (which tape each cell made,
the cell being run) lives on the ``TapeMagics`` instance, never in globals.
"""
import types
import weakref

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, kwds, magic_arguments, parse_argstring
from IPython.display import display

from ..diagnostics.errors import NbtapeError, TapeConsumedError
from ..tape.gradient_tape import GradientTape
from ..tape.view import recorders_here, stop_left_open
from ..core.tensor import TensorLike
from . import cell_report, cell_runner
from . import namespace as names_


_MISSING = object()
# The contract's order (argparse would put NAME last).  IPython's help formatter
# prefixes one '%', and argparse expands %(prog)s, so this reads "%%tape [NAME] ...".
USAGE = ("%%%(prog)s [NAME] [--watch VAR [VAR ...]] [--persistent | --no-persistent]\n"
         "              [--no-auto-watch] [--grad TARGET] [--graph] [--inspect]")


class TapeOrigin:
    """Where a ``%%tape`` tape came from: its name, its cell, its persistence."""

    def __init__(self, name, cell, persistent):
        self.name = name
        self.cell = cell
        self.persistent = persistent


@magics_class
class TapeMagics(Magics):
    """The ``%%tape`` magic, and what it remembers between cells of one shell."""

    # A cell whose tape reaches either size gets the "a tape per step" advice.
    large_ops = 10_000
    large_bytes = 256 * 2**20

    def __init__(self, shell):
        super().__init__(shell)
        self._cell_tapes = {}                         # cell key -> weakref to its tape
        self._origins = weakref.WeakKeyDictionary()   # tape -> TapeOrigin
        self._info = None                             # the running cell's ExecutionInfo
        self._inspectors = {}                         # cell key -> its --inspect widget
        self._plain = {}                              # --watch name -> its replaced value

    # events -------------------------------------------------------------------
    def start(self):
        """Listen to the shell's cell events (for cell ids and the used-tape hint).

        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> magics = TapeMagics(InteractiveShell.instance())
        >>> magics.start(); magics.stop(); magics.stop()    # stopping twice is harmless
        """
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.events.register("post_run_cell", self._post_run_cell)

    def stop(self):
        """Stop listening (``%unload_ext``, or before a reload replaces this instance)."""
        for event, fn in (("pre_run_cell", self._pre_run_cell),
                          ("post_run_cell", self._post_run_cell)):
            try:
                self.shell.events.unregister(event, fn)
            except ValueError:
                pass

    def _pre_run_cell(self, info):
        self._info = info

    def _post_run_cell(self, result):
        self._info = None
        if isinstance(getattr(result, "error_in_exec", None), TapeConsumedError):
            print(self.used_tape_hint())

    def used_tape_hint(self):
        """What to say after a cell asked a used non-persistent tape again.

        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> print(TapeMagics(InteractiveShell.instance()).used_tape_hint())
        nbtape: in a notebook a tape is often asked again in a later cell. Record it with
        %%tape (persistent by default) or nt.GradientTape(persistent=True), or re-run the
        cell that records it.
        """
        used = [(t, o) for t, o in list(self._origins.items())
                if t.consumed and not o.persistent]
        if not used:
            return ("nbtape: in a notebook a tape is often asked again in a later cell. "
                    "Record it with %%tape (persistent by default) or "
                    "nt.GradientTape(persistent=True), or re-run the cell that records it.")
        tape, origin = used[-1]
        shown = next((k for k, v in names_.visible_names(self.shell).items() if v is tape),
                     origin.name)
        return (f"nbtape: `{shown}` was recorded by %%tape --no-persistent in {origin.cell}, "
                f"and a non-persistent tape gives only one gradient. Re-run {origin.cell} to "
                "record it again, or drop --no-persistent: %%tape tapes are persistent by "
                "default (--persistent), so later cells can ask them as often as they like.")

    # the magic ------------------------------------------------------------------
    @magic_arguments()
    @kwds(usage=USAGE)
    @argument("name", nargs="?", default="tape", metavar="NAME",
              help="Name the tape is bound to in the notebook (default: tape).")
    @argument("--watch", nargs="+", default=[], metavar="VAR",
              help="Watch these notebook variables. Plain numbers and float arrays are "
                   "rebound as nt tensors first; tensors and variables are watched as "
                   "they are.")
    @argument("--persistent", action="store_true",
              help="Keep the tape for any number of gradients (the default).")
    @argument("--no-persistent", action="store_true",
              help="Record a non-persistent tape: it gives one gradient, then is used up.")
    @argument("--no-auto-watch", action="store_true",
              help="Do not watch trainable variables automatically when the cell reads "
                   "them (watch_accessed_variables=False); only --watch and tape.watch "
                   "count.")
    @argument("--grad", metavar="TARGET",
              help="After the cell, show d(TARGET)/d(each watched value).")
    @argument("--graph", action="store_true",
              help="After the cell, draw the recorded graph with the cell's own names.")
    @argument("--inspect", action="store_true",
              help="Show the live inspector of the tape's variables above the cell's "
                   "output; it updates while the cell runs (ipywidgets).")
    @no_var_expand
    @cell_magic
    def tape(self, line, cell):
        """Run the cell under a new GradientTape bound to NAME, then summarise it.

        Everything the cell computes on nbtape tensors and variables is recorded
        on a fresh tape (persistent unless --no-persistent); re-running the cell
        replaces the tape it made before.  Afterwards a summary shows the ops
        recorded, the watched values and the tensors the cell bound, and the
        tape stays available to later cells as NAME.

        An error or Ctrl-C in the cell stops recording; the tape keeps what it
        recorded and the traceback points at the cell's line.

        Examples
        --------
        Watch a plain number, and show dz/dx after the cell::

            x = 3.0

            %%tape --watch x --grad z
            y = x ** 2
            z = y ** 2

        Later cells can ask the (persistent) tape again::

            tape.gradient(y, x)          # 6.0

        Variables are watched when the cell reads them; name the tape and draw
        its graph, labelled y and loss::

            %%tape t --graph
            y = np.sin(w) * w
            loss = np.sum(y ** 2)
        """
        __tracebackhide__ = True   # IPython leaves this frame out of tracebacks
        opts = self._options(line)
        shell = self.shell
        ns = shell.user_ns
        watch = names_.resolve_watch(ns, opts.watch)
        try:
            compiled = cell_runner.compile_cell(shell, f"%%tape {line}".rstrip(), cell)
        except SyntaxError as e:
            # Raised as is, IPython would list the frames that compiled the cell.
            raise UsageError(cell_runner.syntax_error_text("%%tape", e)) from None
        cell_runner.check_runnable(compiled)

        tape = GradientTape(persistent=not opts.no_persistent,
                            watch_accessed_variables=not opts.no_auto_watch)
        key = self._cell_key(opts.name, cell)
        self._adopt(tape, opts.name, key)
        replaced = self._replaced_values(ns, watch)
        for name, value in watch:
            ns[name] = value
        _watch_on_line_one(tape, [value for _, value in watch], compiled.filename)
        ns[opts.name] = tape
        if opts.inspect:
            display_or_note("--inspect", lambda: self._inspect(tape, key))
        before = dict(ns)
        outer = recorders_here()
        try:
            try:
                with tape:
                    value = cell_runner.run_compiled(shell, compiled)
            finally:
                left_open = stop_left_open(outer)
        except (Exception, KeyboardInterrupt) as exc:
            try:
                self._report(tape, opts, watch, replaced, before, left_open, compiled, exc)
            except Exception as err:   # the cell's own error matters more than ours
                print(f"(nbtape could not summarise the tape: {err!r})")
            cell_runner.point_at_user(shell, exc, compiled.filename)
            raise
        self._report(tape, opts, watch, replaced, before, left_open, compiled)
        return value

    def _options(self, line):
        try:
            opts = parse_argstring(self.tape, line)
        except UsageError as e:
            raise UsageError(f"%%tape: {e}\n{self._usage()}") from None
        problems = []
        if not names_.is_identifier(opts.name):
            problems.append(f"NAME must be a variable name, not {opts.name!r}")
        held = self.shell.user_ns.get(opts.name)
        if isinstance(held, types.ModuleType):
            problems.append(
                f"NAME {opts.name!r} is the {held.__name__} module in this notebook, and "
                f"%%tape binds the tape to NAME, so every later `{opts.name}.` would reach "
                "the tape instead of the module; give the tape another name (%%tape t ...)")
        if opts.persistent and opts.no_persistent:
            problems.append("--persistent and --no-persistent contradict each other")
        if opts.name in opts.watch:
            problems.append(f"{opts.name!r} cannot be both the tape's NAME and a --watch "
                            "variable (a --watch VAR list ends at the next option, so put "
                            "NAME first: %%tape NAME --watch x y)")
        if opts.grad is not None and not names_.is_identifier(opts.grad):
            problems.append(f"--grad takes the name of a variable the cell defines, not "
                            f"{opts.grad!r}")
        elif opts.grad is not None and opts.grad == opts.name:
            problems.append("--grad names the tape itself; give the target tensor's name")
        if problems:
            raise UsageError("%%tape: " + "; ".join(problems) + f".\n{self._usage()}")
        return opts

    def _usage(self):
        return "usage: " + self.tape.parser.format_usage().replace("::", "").strip()

    # cells and their tapes ----------------------------------------------------------
    def _cell_label(self):
        return f"In[{cell_runner.running_cell_number(self.shell)}]"

    def _cell_key(self, name, cell):
        # Jupyter gives every cell an id.  Elsewhere (plain IPython, front ends that
        # send none) an edited re-run has new text, so the tape's name is what marks
        # the same cell: keyed on the text, 30 edited runs kept 30 tapes and inspectors.
        info = self._info
        cell_id = getattr(info, "cell_id", None)
        if cell_id and cell.strip() in (getattr(info, "raw_cell", None) or ""):
            return ("id", cell_id)
        return ("name", name)

    def _adopt(self, tape, name, key):
        """Remember ``tape`` as its cell's tape; the cell's previous tape drops its records."""
        previous = self._cell_tapes.get(key)
        old = previous() if previous is not None else None
        if old is not None and old is not tape:
            # Out[n], `_` or an alias may still hold the old tape: empty it, so that
            # re-running a cell never piles up the records of every run.
            old.retire(replaced_note(self._cell_label()))
        self._cell_tapes = {k: r for k, r in self._cell_tapes.items() if r() is not None}
        self._cell_tapes[key] = weakref.ref(tape)
        self._origins[tape] = TapeOrigin(name, self._cell_label(), tape.persistent)

    def _replaced_values(self, ns, watch):
        """``{name: plain value}`` that ``--watch`` replaces now or replaced in an earlier run.

        An alias still holding one (``xs = x`` before ``--watch x``) is a classic slip,
        and after the first run the name itself is a tensor already: so remember them.
        """
        for name, value in watch:
            old = ns[name]
            if old is not value:
                try:
                    self._plain[name] = weakref.ref(old)       # arrays: not kept alive
                except TypeError:
                    self._plain[name] = (lambda o=old: o)      # numbers: small
        found = {name: self._plain[name]() for name, _ in watch if name in self._plain}
        return {name: old for name, old in found.items() if old is not None}

    # after the cell --------------------------------------------------------------------
    def _report(self, tape, opts, watch, replaced, before, left_open, compiled, exc=None):
        visible = names_.visible_names(self.shell)
        results = names_.cell_results(before, visible, exclude={opts.name})
        names = names_.tensor_names(visible, prefer=list(watch) + results)
        candidates = [v for _, v in watch] + list(visible.values())
        watched = [(names_.label(o, names), o)
                   for o in names_.watched_objects(tape, candidates)]
        notes = []
        if left_open:
            kinds = ", ".join(sorted({type(r).__name__.lstrip("_") for r in left_open}))
            notes.append(f"the cell left {len(left_open)} recorder(s) open ({kinds}); "
                         "%%tape stopped them so that recording does not leak into later "
                         "cells.")
        nbytes = cell_report.tape_nbytes(tape)
        if len(tape) >= self.large_ops or nbytes >= self.large_bytes:
            notes.append(cell_report.large_tape_note(len(tape), nbytes))
        report = cell_report.CellReport(opts.name, tape, watched, results, notes=notes)
        if exc is not None:
            report.status = _stopped(exc, opts.name, tape, compiled.filename)
            display(report)
            return
        target = None
        if opts.grad is not None:
            aliases = names_.aliases(visible, replaced, cell_runner.names_used(compiled))
            try:
                target = self._grad_target(opts.grad, tape, watch, aliases)
            except UsageError:
                display(report)      # the cell ran: show what it recorded, then the error
                raise
            report.target = opts.grad
            by_object = {id(v): aliases.get(name) for name, v in watch}

            def alias_note(obj):
                found = by_object.get(id(obj))
                return names_.alias_text(*found) if found else None
            try:
                report.rows = cell_report.gradient_rows(tape, target, watched, why=alias_note)
            except (NbtapeError, ValueError, TypeError) as e:
                report.rows = None
                report.notes.append(cell_report.grad_error_note(opts.grad, e))
        display(report)
        if opts.graph:
            display_or_note("--graph", lambda: tape.graph(target=target, names=names))

    def _inspect(self, tape, key):
        # Shown before the cell runs, so that it follows a training loop live (it
        # picks up variables the tape watches later).  It shows itself, and stops
        # updating once collected, so this shell keeps it until its cell runs again.
        old = self._inspectors.pop(key, None)
        if old is not None:
            old.close()
        from .widgets import inspect
        self._inspectors[key] = inspect(tape, display=True)

    def _grad_target(self, name, tape, watch, aliases):
        value = self.shell.user_ns.get(name, _MISSING)
        if value is _MISSING:
            raise UsageError(f"%%tape --grad {name}: the cell did not define {name!r}; "
                             "--grad takes the name of a tensor the cell computes.")
        if not isinstance(value, TensorLike):
            hint = names_.escape_text(tape, watch)     # the real cause, when one is known
            if hint is None and aliases:
                hint = names_.alias_text(*next(iter(aliases.values())))
            if hint is None and not len(tape) and watch:
                hint = (f"the cell recorded nothing: it never computed with "
                        f"{', '.join(n for n, _ in watch)} (the watched tensors)")
            elif hint is None and not len(tape):
                hint = ("nothing in the cell was a tensor the tape follows: name its inputs "
                        "with --watch (e.g. %%tape --watch r --grad " + name + ")")
            elif hint is None:
                hint = "did it leave the tape through np.asarray, float() or .numpy()?"
            raise UsageError(
                f"%%tape --grad {name}: {name} is a {type(value).__name__}, not a tensor, so "
                f"the tape cannot differentiate it ({hint}).")
        if value.dtype.kind not in "fc":
            raise UsageError(f"%%tape --grad {name}: {name} has dtype {value.dtype}; only "
                             "float or complex targets have gradients.")
        return value



def display_or_note(option, make):
    """Display what ``make()`` returns; if it fails, one line saying why (the cell ran fine).

    >>> display_or_note("--graph", lambda: 1 / 0)
    %%tape --graph: could not show it: ZeroDivisionError: division by zero
    """
    try:
        shown = make()
    except Exception as e:
        print(f"%%tape {option}: could not show it: {type(e).__name__}: {e}")
        return
    if shown is not None:
        display(shown)


def _watch_on_line_one(tape, values, filename):
    """``tape.watch(values)``, run as code of the cell's ``%%tape`` line.

    The tape notes where each value was watched, and ``explain`` quotes that
    place; the ``%%tape --watch`` line is where the learner asked for it.
    """
    if values:
        code = compile("tape.watch(values)", filename, "eval")
        eval(code, {"__builtins__": {}}, {"tape": tape, "values": values})


def _stopped(exc, name, tape, filename):
    line = cell_runner.failing_line(exc, filename)
    at = f" at line {line}" if line else ""
    n = len(tape)
    kept = f"`{name}` keeps the {n:,} op{'' if n == 1 else 's'} recorded before it"
    if isinstance(exc, KeyboardInterrupt):
        return f"Interrupted (Ctrl-C){at}: {kept}; recording is off."
    return f"Recording stopped by {type(exc).__name__}{at}: {kept}; recording is off."


def load_ipython_extension(ipython):
    """Register ``%%tape`` on ``ipython`` (a second load replaces the first cleanly).

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> load_ipython_extension(shell); load_ipython_extension(shell)
    >>> "tape" in shell.magics_manager.magics["cell"]
    True
    >>> unload_ipython_extension(shell)
    """
    unload_ipython_extension(ipython)
    magics = TapeMagics(ipython)
    ipython.register_magics(magics)
    magics.start()


def unload_ipython_extension(ipython):
    """Remove ``%%tape`` and its event hooks from ``ipython``.

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> load_ipython_extension(shell); unload_ipython_extension(shell)
    >>> "tape" in shell.magics_manager.magics["cell"]
    False
    """
    manager = ipython.magics_manager
    magics = manager.registry.pop(TapeMagics.__name__, None)
    if magics is None:
        return
    magics.stop()
    fn = manager.magics["cell"].get("tape")
    if getattr(fn, "__self__", None) is magics:
        del manager.magics["cell"]["tape"]


def replaced_note(where):
    """What a tape replaced by a re-run of its cell says (``where`` names that run).

    >>> replaced_note("In[7]")
    'Replaced when its %%tape cell ran again (In[7]): its records were dropped; use the new tape.'
    """
    return (f"Replaced when its %%tape cell ran again ({where}): its records were "
            "dropped; use the new tape.")
