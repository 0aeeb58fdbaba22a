"""Which nbtape widgets each notebook cell made, so a re-run closes the old ones.

Where this state lives, and why: on the IPython shell object itself (attribute
``_nbtape_cells``), created on first use.  It is per kernel session by nature
(a cell id means nothing outside one), it disappears with the shell, and plain
Python, where "cell" has no meaning, has none of it.  Keying on the execution
count would not do: every run of a cell gets a new count, and what must be
recognised is the *same cell* run again.  Front ends that send a cell id
(JupyterLab, Notebook 7, VS Code) give that identity; without one, the cell's
source text stands in for it.

The registry also holds the widgets of each cell's latest run strongly.  That is
deliberate: ``nt.inspect(model)`` followed by a loop displays a widget that the
user never assigns to a name, and it must stay live until the cell is run again
(then it is closed).  Only in a kernel, though: a terminal draws no live widget,
so no cell output holds one there; a view the user made is open until the user
closes it, as any ipywidget is (``%%tape --inspect``, which makes its inspector
for the user, closes the old one itself when the cell runs again).
"""
import weakref

ATTR = "_nbtape_cells"


def get_shell():
    """The running IPython shell, or ``None`` in plain Python.

    >>> shell = get_shell()
    >>> shell is None or hasattr(shell, "run_cell")   # None in plain Python
    True
    """
    try:
        from IPython import get_ipython
    except ImportError:      # pragma: no cover - IPython comes with ipywidgets
        return None
    return get_ipython()


def in_kernel(shell):
    """True when ``shell`` talks to a Jupyter front end (which can draw widgets).

    >>> in_kernel(None)
    False
    """
    return shell is not None and getattr(shell, "kernel", None) is not None


def cell_key(info):
    """What identifies a cell across runs: its id when the front end sends one.

    >>> class Info: cell_id, raw_cell = None, "x = 1"
    >>> cell_key(Info())
    ('source', 'x = 1')
    """
    cell_id = getattr(info, "cell_id", None)
    if cell_id:
        return ("id", cell_id)
    return ("source", getattr(info, "raw_cell", None))


class CellWidgets:
    """Per-shell bookkeeping of live nbtape widgets (see the module docstring).

    Use ``CellWidgets.of(shell)``; it registers a ``pre_run_cell`` handler that
    closes what a cell made when the cell runs again, and a ``post_run_cell``
    handler that brings every live widget up to date when a cell ends (also
    after an error or a KeyboardInterrupt) and shows the snapshots that cell
    asked for.

    >>> from IPython.core.events import EventManager, available_events
    >>> class Shell:                  # the three things a shell must offer
    ...     displayhook, kernel = None, None
    >>> shell = Shell(); shell.events = EventManager(shell, available_events)
    >>> CellWidgets.of(shell) is CellWidgets.of(shell), CellWidgets.of(shell).held()
    (True, 0)
    """

    def __init__(self, shell):
        self._shell = weakref.ref(shell)
        self._cells = {}                   # cell key -> (ExecutionInfo of its run, [views])
        self._live = weakref.WeakSet()     # every open view, to flush at cell end
        self._end_of_cell = []             # callables for the end of the current cell
        shell.events.register("pre_run_cell", self._pre_run_cell)
        shell.events.register("post_run_cell", self._post_run_cell)

    @classmethod
    def of(cls, shell):
        """The registry attached to ``shell`` (made and attached on first use)."""
        reg = getattr(shell, ATTR, None)
        if not isinstance(reg, cls):
            reg = cls(shell)
            setattr(shell, ATTR, reg)
        return reg

    def current_run(self):
        """The ``ExecutionInfo`` of the cell running now, or ``None`` between cells.

        IPython keeps the running cell's result on its display hook; its ``info``
        is a fresh object for every run, which is what tells runs apart.
        """
        shell = self._shell()
        result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
        return getattr(result, "info", None)

    def adopt(self, view):
        """``view`` was made by the running cell: close what that cell made last time."""
        self._live.add(view)
        info = self.current_run()
        if info is None or not in_kernel(self._shell()):
            return
        key = cell_key(info)
        entry = self._cells.get(key)
        if entry is not None and entry[0] is not info:
            del self._cells[key]
            for old in entry[1]:
                old.close()
            entry = None
        if entry is None:
            entry = self._cells[key] = (info, [])
        entry[1].append(view)

    def forget(self, view):
        """``view`` was closed: stop holding it."""
        self._live.discard(view)
        for key, (info, views) in list(self._cells.items()):
            if view in views:
                views.remove(view)
                if not views:
                    del self._cells[key]

    def held(self):
        """How many views the registry keeps alive (for tests and leak checks)."""
        return sum(len(views) for _, views in self._cells.values())

    def at_cell_end(self, fn):
        """Call ``fn()`` once, when the running cell ends."""
        self._end_of_cell.append(fn)

    def _pre_run_cell(self, info=None):
        # A cell starting again closes what its last run made, even when this run
        # will make nothing (its outputs are cleared anyway); ``adopt`` covers the
        # first run after the registry appeared, which has no hook yet.
        entry = self._cells.get(cell_key(info)) if info is not None else None
        if entry is not None and entry[0] is not info:
            del self._cells[cell_key(info)]
            for old in entry[1]:
                old.close()

    def _post_run_cell(self, result=None):
        errors = []
        for view in list(self._live):
            try:
                view.cell_ended()
            except Exception as exc:    # one broken view must not starve the others
                errors.append(exc)
        fns, self._end_of_cell = self._end_of_cell, []
        for fn in fns:
            try:
                fn()
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise errors[0]
