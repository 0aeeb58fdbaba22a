"""``nt.inspect``: a live table of variables, their values and gradients.

Every ``assign*`` of a shown variable and every ``gradient`` call that covers it
updates the row's data at once (a few float operations); the table itself is
redrawn at most ``max_rate`` times a second, and always once more after the
last change.  Only the visible page is drawn, so hundreds of variables cost
what ``page_size`` of them cost.

An anywidget widget (``front/inspector.js`` draws it): the page shown is the
trait ``page`` (the pager's buttons set it; link it to a slider), ``pages`` says
how many there are, and the table itself is HTML drawn here.
"""
import threading

import traitlets as T

from ...display.palette import check_scale, text_px
from .array_stats import SAMPLE
from .live import LiveView, front_end, weak_callback
from .sources import Sources, namespace_names
from .table import VariableRow, inspector_html, row_html, text_table
from .throttle import interval_of

# Static snapshots (text and HTML beside the widget) list at most this many rows.
SNAPSHOT_ROWS = 50
# While a model has no weights yet, look for them this often (seconds).
POLL = 0.5


class Inspector(LiveView):
    """The widget ``nt.inspect`` returns; see ``inspect`` for the options.

    It is a widget (put it in any layout); the traits ``page`` (0-based, settable)
    and ``pages`` page through long tables; ``.close()`` releases everything.

    >>> import nbtape as nt
    >>> ws = [nt.Variable(float(k), name=f"w{k}") for k in range(45)]
    >>> insp = Inspector(ws, page_size=20, display=False)
    >>> insp.pages, insp.page, insp._where
    (3, 0, 'variables 1–20 of 45 (page 1 of 3)')
    >>> insp.page = 2; insp._where
    'variables 41–45 of 45 (page 3 of 3)'
    >>> insp.close()
    """

    _esm = front_end("inspector")
    page = T.Int(0, help="The page shown, counted from 0; set it to turn the page.").tag(
        sync=True)
    pages = T.Int(1, read_only=True, help="How many pages the table has.").tag(sync=True)
    # what the front end shows, drawn here
    _header = T.Unicode("").tag(sync=True)
    _table = T.Unicode("").tag(sync=True)
    _where = T.Unicode("").tag(sync=True)

    def __init__(self, objects, max_rate=10, page_size=20, history=200, display=None,
                 snapshot=True, clock=None, schedule=None, scale=1.0):
        super().__init__(interval_of(max_rate), clock, schedule, snapshot)
        self._scale = check_scale(scale)
        if not (isinstance(page_size, int) and page_size > 0):
            raise ValueError(f"page_size must be a positive whole number, not {page_size!r}.")
        if not (isinstance(history, int) and history > 0):
            raise ValueError(f"history must be a positive whole number, not {history!r}.")
        self._sources = Sources(objects)
        self._page_size = page_size
        self._history = history
        self._lock = threading.Lock()       # row data: written by events, read by redraws
        self._rows = []
        self._by_id = {}
        self._cache = {}                    # variable id -> (row version, name, <tr> html)
        self.observe(weak_callback(self._turned), names="page")
        for tape in self._sources.tapes:
            self._subscribe(tape)
        self._sync_variables()
        if self._sources.waiting:
            self._schedule(POLL, weak_callback(self._poll))
        self._open(display)

    # which variables ---------------------------------------------------------------------
    def _sync_variables(self):
        """Add rows for variables the sources gained (a tape watched more, a model built)."""
        found = self._sources.variables() if self._sources.growing or not self._rows \
            else ()
        candidates = [(name, v) for name, v in found if v._id not in self._by_id]
        if not candidates:
            return False
        names = namespace_names(self._shell, [v for _, v in candidates])
        new = []
        with self._lock:      # a redraw on the timer thread may be syncing too
            taken = {r.name for r in self._rows}
            for name, v in candidates:
                if v._id in self._by_id:
                    continue
                new.append((name, v))
                label = _unique(name or names.get(v._id) or v.name, taken)
                taken.add(label)
                row = VariableRow(v, label, self._history)
                self._rows.append(row)
                self._by_id[v._id] = row
        for _, v in new:
            self._subscribe(v)
        return bool(new)

    def _poll(self):
        if self._closed:
            return
        if self._sync_variables():
            self._changed()
        if self._sources.waiting:
            self._schedule(POLL, weak_callback(self._poll))

    @property
    def variables(self):
        """The variables shown, in table order."""
        return [r.var for r in self._rows]

    # engine events -------------------------------------------------------------------------
    def _on_event(self, source, event, **info):
        if event == "gradient" and "sources" in info:       # a watched tape's gradient()
            self._sync_variables()
            return
        row = self._by_id.get(getattr(source, "_id", None))
        if row is None:
            return
        with self._lock:
            if event == "assign":
                row.on_assign(info["value"]._value)
            elif event == "gradient":
                row.on_gradient(info["gradient"]._value)
        self._changed()

    # paging --------------------------------------------------------------------------------
    def _page_count(self):
        return max(1, -(-len(self._rows) // self._page_size))

    @T.validate("page")
    def _valid_page(self, proposal):
        k, n = proposal["value"], self._page_count() if "_rows" in self.__dict__ else 1
        if not 0 <= k < n:
            raise ValueError(f"page must be a whole number from 0 to {n - 1}, not {k!r}.")
        return k

    def _turned(self, _change=None):
        self.refresh()

    # drawing -------------------------------------------------------------------------------
    def _states(self, rows):
        with self._lock:
            return [r.state() for r in rows]

    def _header_text(self):
        n = len(self._rows)
        text = f"nt.inspect: {n} variable{'s' if n != 1 else ''}"
        if not n and self._sources.waiting:
            text += " (the model builds its weights on its first call; they appear then)"
        return text

    def _notes(self, states, shown_rows):
        notes = []
        if any(s.value.size > SAMPLE or (s.grad is not None and s.grad.size > SAMPLE)
               for s in states):
            notes.append(f"Arrays of more than {SAMPLE:,} values are summarised from an "
                         "evenly spaced sample (histograms, mean and range).")
        if shown_rows < len(self._rows):
            notes.append(f"Showing {shown_rows} of {len(self._rows)} variables.")
        return notes

    def _render(self):
        self._sync_variables()
        lo = self.page * self._page_size
        rows = self._rows[lo:lo + self._page_size]
        states = self._states(rows)
        htmls = []
        for st, row in zip(states, rows):
            key = row.var._id
            cached = self._cache.get(key)
            if cached is None or cached[0] != st.version or cached[1] != st.name:
                cached = (st.version, st.name, row_html(st))
                self._cache[key] = cached
            htmls.append(cached[2])
        notes = self._notes(states, len(rows))
        table = inspector_html(htmls, "", notes[:1], self._scale)
        pages = self._page_count()
        where = (f"variables {lo + 1}–{lo + len(rows)} of {len(self._rows)} "
                 f"(page {self.page + 1} of {pages})")
        with self.hold_sync():
            self.set_trait("pages", pages)
            self._header = (f"<b style='font-size:{text_px(17, self._scale)}'>"
                            f"{self._header_text()}</b>")
            self._table = table
            self._where = where if pages > 1 else ""

    def _snapshot_states(self):
        return self._states(self._rows[:SNAPSHOT_ROWS])

    def _text(self):
        states = self._snapshot_states()
        return text_table(states, self._header_text(), self._notes(states, len(states)))

    def _html(self):
        states = self._snapshot_states()
        return inspector_html([row_html(s) for s in states], self._header_text(),
                              self._notes(states, len(states)), self._scale)

    def _descriptor(self):
        names = [r.name for r in self._rows[:4]]
        more = f" and {len(self._rows) - 4} more" if len(self._rows) > 4 else ""
        what = ", ".join(names) + more if names else "no variables yet"
        return f"nt.inspect live widget: {what}"


def _unique(name, taken):
    if name not in taken:
        return name
    k = 2
    while f"{name}#{k}" in taken:
        k += 1
    return f"{name}#{k}"


def inspect(*objects, max_rate=10, page_size=20, history=200, display=None, snapshot=True,
            clock=None, schedule=None, scale=1.0):
    """A live table of variables: value, a picture of it, history, latest gradient and norm.

    ``objects``: ``nt.Variable`` objects, a ``GradientTape`` (its watched
    variables, including ones it watches later), a model with
    ``trainable_variables`` (weights built later are picked up), or lists and
    dicts of these (a dict key names its variable).  Unnamed variables take
    the name they have in the notebook (``w = nt.Variable(...)`` shows as ``w``).

    The table follows each ``assign``/``assign_add``/``assign_sub`` of a shown
    variable and each ``tape.gradient`` that computes its gradient, redrawing at
    most ``max_rate`` times a second (``None``: every change) and always after
    the last change.  ``page_size`` rows show at a time; ``history`` values feed
    each sparkline.  ``display=None`` shows the widget at once inside Jupyter
    (``True``/``False`` to force); ``snapshot`` adds a static copy of the final
    state beside it when the cell ends, for saved notebooks.  ``clock`` and
    ``schedule`` replace the real clock and timer (tests, scripted demos).
    ``scale`` multiplies the text size (16 px at 1, nothing under 14 px; 1.5 for a
    large room).

    >>> import nbtape as nt
    >>> w = nt.Variable(2.0, name="w")
    >>> insp = nt.inspect(w)
    >>> with nt.GradientTape() as tape:
    ...     loss = w * w
    >>> _ = tape.gradient(loss, w); _ = w.assign_sub(0.4)
    >>> print(insp)
    nt.inspect: 1 variable
    name  shape   dtype    value  history  gradient  ‖gradient‖
    w     scalar  float64  1.6    █▁       4.0       4.0
    >>> insp.close()
    """
    if not objects:
        raise TypeError("nt.inspect() needs something to show: a variable, a tape, a model "
                        "or a list of them, e.g. nt.inspect(model) or nt.inspect(w, b).")
    target = objects[0] if len(objects) == 1 else list(objects)
    return Inspector(target, max_rate=max_rate, page_size=page_size, history=history,
                     display=display, snapshot=snapshot, clock=clock, schedule=schedule,
                     scale=scale)
