"""What every nbtape widget shares: throttled refresh, display, static snapshot, closing.

A ``LiveView`` is an anywidget widget (``anywidget.AnyWidget``, an ipywidgets
``DOMWidget``): its state lives in traitlets, synced with one ES module front end
(``front/<name>.js``) that draws it, so it goes into any layout
(``HBox([nt.inspect(model), my_slider])``), its traits link to other widgets
(``ipywidgets.link((player, "frame"), (slider, "value"))``), and it runs wherever
anywidget does: JupyterLab, Notebook 7, VS Code, Colab, JupyterLite and marimo
(``mo.ui.anywidget(view)``, or the view as a cell's last expression).  Python
computes every picture and sentence (the pictures and captions are the same
everywhere, and tested here); the front end lays them out and sends the
reader's clicks back as trait changes.  A view owns the engine subscriptions
that feed it (held weakly by the engine).  Like every ipywidget
it stays open until it is closed: ipywidgets keeps each open widget in its
registry (and a kernel's comm manager keeps its comm), so being unreferenced
does not end it.  ``close()`` releases the widgets and the subscriptions; inside
a kernel the per-cell registry (``cells.py``) closes what a cell made when the
cell runs again.

Display.  In a Jupyter kernel a view shows itself when made (as tqdm's notebook
bar does), so ``nt.inspect(model)`` followed by a loop in the same cell works;
a second display in the same cell run (the cell's last expression) is skipped.
A view the cell put in a layout (``HBox([nt.inspect(w), slider])``) shows there:
at the end of the cell its own output is emptied, so it does not show twice.
The live output carries the widget view and a one-line text/plain.  When the
cell ends, a static snapshot (text/plain and text/html, values of the state at
that moment) is displayed beside it: that is what a saved or shared notebook
shows where the widget state is gone, and what nbval compares (both are
deterministic: no ids, addresses or timings).  Elsewhere (a terminal, plain
Python) a view is its text snapshot.
"""
import pathlib
import time
import uuid
import weakref

import ipywidgets as W

try:
    import anywidget
except ImportError as exc:      # nbtape installed without its notebook extra
    raise ModuleNotFoundError(
        "nbtape's live widgets (nt.inspect, nt.TrainingMonitor, nt.TapePlayer) are anywidget "
        "widgets, and anywidget is not installed here: pip install \"nbtape[notebook]\" "
        "(or pip install anywidget), then restart the kernel.", name="anywidget") from exc

from ...diagnostics.user_line import PACKAGE_DIR
from .cells import CellWidgets, get_shell, in_kernel
from .throttle import Throttle, default_schedule

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FRONT = pathlib.Path(PACKAGE_DIR) / "notebook" / "widgets" / "front"


def front_end(name, suffix=".js"):
    """The ES module that draws widget ``name`` (``front/<name>.js``), as text.

    >>> "export default" in front_end("player")
    True
    """
    return (FRONT / f"{name}{suffix}").read_text(encoding="utf-8")


def weak_callback(method):
    """A function calling the bound ``method`` while its object lives, else doing nothing.

    Widget callbacks and timers hold their function strongly; handing them this
    instead keeps a closed-over view collectable.

    >>> class A:
    ...     def hi(self): return "hi"
    >>> a = A(); f = weak_callback(a.hi)
    >>> f()
    'hi'
    >>> del a; f() is None
    True
    """
    ref = weakref.WeakMethod(method)

    def call(*args, **kwargs):
        m = ref()
        if m is not None:
            return m(*args, **kwargs)
        return None
    return call


def open_widgets():
    """Every open ipywidget, by model id.

    ipywidgets 7 keeps them in ``Widget.widgets``; ipywidgets 8 in its module's
    ``_instances`` (there ``Widget.widgets`` still answers, with a deprecation
    warning).

    >>> label = W.Label("hi")
    >>> open_widgets()[label.model_id] is label
    True
    >>> label.close()
    """
    from ipywidgets.widgets import widget
    registry = getattr(widget, "_instances", None)
    return widget.Widget.widgets if registry is None else registry


def in_a_layout(view):
    """True when an open container widget (an ``HBox``, a ``Tab``...) holds ``view``."""
    return any(view in getattr(w, "children", ()) for w in list(open_widgets().values())
               if w is not view)


class Snapshot:
    """A static copy of a widget's state: text and HTML, no live parts.

    >>> s = Snapshot("w = 1", "<b>w</b> = 1")
    >>> s, sorted(s._repr_mimebundle_())
    (w = 1, ['text/html', 'text/plain'])
    """

    SUMMARY = "static copy of the final state (for viewers without live widgets)"

    def __init__(self, text, html, summary=SUMMARY):
        self.text = text
        self.html = html
        self.summary = summary

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        # folded: beside a live widget it is a one-line reminder, not a second copy;
        # where widgets cannot draw (a shared notebook) one click opens it
        return ("<details class='nbtape-snapshot'><summary style='color:#555555;font-size:14px'>"
                f"{self.summary}</summary>{self.html}</details>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self.text, "text/html": self._repr_html_()}


def _release(subscriptions, layout, throttle):
    throttle.cancel()
    for sub in subscriptions:
        sub.remove()
    del subscriptions[:]
    # a DOMWidget's Layout is a widget of its own, which close() leaves open
    if layout is not None and hasattr(layout, "close"):
        layout.close()


class LiveView(anywidget.AnyWidget):
    """Base of the inspector, the training monitor and the tape player: an anywidget.

    Subclasses set ``_esm`` (their front end) and declare their state as synced
    traits, then call ``_open(display)`` at the end of ``__init__``; they
    implement ``_render()`` (set the traits the front end draws; runs under the
    throttle's lock), ``_text()``, ``_html()`` and ``_descriptor()``, and call
    ``_changed()`` whenever their data changes.

    ``interval`` is the minimum time between refreshes in seconds; ``clock``
    and ``schedule`` replace ``time.monotonic`` and the trailing-edge timer
    (tests and scripted demos drive time by hand with them).

    >>> import ipywidgets as W, traitlets
    >>> class Counter(LiveView):           # a live label counting calls of click()
    ...     _esm = ("export default { render({ model, el }) "
    ...             "{ el.textContent = model.get('label'); } }")
    ...     label = traitlets.Unicode("").tag(sync=True)
    ...     def __init__(self):
    ...         super().__init__(interval=0.0)
    ...         self.n = 0
    ...         self._open(display=False)
    ...     def click(self):
    ...         self.n += 1
    ...         self._changed()
    ...     def _render(self):
    ...         self.label = f"{self.n} clicks"
    ...     def _text(self):
    ...         return f"Counter: {self.n} clicks"
    ...     def _html(self):
    ...         return f"<b>Counter</b>: {self.n} clicks"
    ...     def _descriptor(self):
    ...         return "Counter live widget"
    >>> c = Counter(); c.click(); c.click()
    >>> c.label, c
    ('2 clicks', Counter: 2 clicks)
    >>> row = W.HBox([c, W.IntSlider()])     # a widget among widgets
    >>> c.close(); c.closed, c.comm is None, c.layout.comm is None
    (True, True, True)
    >>> row.close()
    """

    _css = front_end("widgets", ".css")     # the style every front end shares

    def __init__(self, interval=0.1, clock=None, schedule=None, snapshot=True):
        super().__init__()
        self._clock = clock or time.monotonic
        self._schedule = schedule or default_schedule()
        self._throttle = Throttle(weak_callback(self._flush), interval, self._clock,
                                  self._schedule)
        self._subs = []
        self._closed = False
        self._snapshot_at_end = bool(snapshot)
        self._shown_in = None
        self._auto_display = None       # display id of the output shown when made
        self._shell = get_shell()
        self._registry = CellWidgets.of(self._shell) if self._shell is not None else None

    @property
    def widget(self):
        """The view itself (it is the widget); kept for code written when it was not."""
        return self

    # building -----------------------------------------------------------------------
    def _subscribe(self, observable):
        """Follow ``observable``'s events with ``self._on_event`` (held weakly by the engine)."""
        self._subs.append(observable.observe(self._on_event))

    def _open(self, display):
        self._flush_now()
        if self._registry is not None:
            self._registry.adopt(self)
        automatic = display is None
        if automatic:
            display = in_kernel(self._shell)
        if display and self._shell is not None:
            self._show(automatic)

    # refreshing -----------------------------------------------------------------------
    @property
    def interval(self):
        """Minimum seconds between two refreshes of the widget (0.1 = 10 per second)."""
        return self._throttle.interval

    @interval.setter
    def interval(self, seconds):
        if not seconds >= 0:
            raise ValueError(f"interval must be a number of seconds >= 0, not {seconds!r}.")
        self._throttle.interval = float(seconds)

    def _changed(self):
        if not self._closed:
            self._throttle.poke()

    def _flush(self):
        if not self._closed:
            self._render()

    def _flush_now(self):
        self._throttle.flush(force=True)

    def refresh(self):
        """Bring the widget up to date now, whatever the throttle says."""
        if not self._closed:
            self._flush_now()

    def cell_ended(self):
        """Called when the cell that showed this view finishes: send what is pending."""
        if not self._closed:
            self._throttle.flush()

    @property
    def refreshes(self):
        """How many times the widget was redrawn (the throttle keeps this small)."""
        return self._throttle.flushes

    # display --------------------------------------------------------------------------
    def snapshot(self):
        """A static ``Snapshot`` (text and HTML) of the current state."""
        return Snapshot(self._text(), self._html())

    def __repr__(self):
        return self._text()

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self._text(), "text/html": self._html()}
        if not self._closed:
            self._throttle.flush()
            bundle[WIDGET_VIEW] = self._view_json()
        return bundle

    def _view_json(self):
        return {"version_major": 2, "version_minor": 0, "model_id": self.model_id}

    def _ipython_display_(self):
        self._show()

    def _show(self, automatic=False):
        shell = self._shell
        if shell is None:
            print(self._text())
            return
        if not in_kernel(shell) or self._closed:
            # a terminal cannot draw widgets, and a closed one has no model left
            self._publish({"text/plain": self._text()})
            return
        run = self._registry.current_run()
        if run is not None and run is self._shown_in:
            return        # already shown by this run of the cell (made, then last line)
        self._shown_in = run
        self._throttle.flush()
        display_id = uuid.uuid4().hex if automatic and run is not None else None
        self._publish({WIDGET_VIEW: self._view_json(), "text/plain": self._descriptor()},
                      display_id)
        if display_id is not None:
            self._auto_display = display_id
            self._registry.at_cell_end(weak_callback(self._withdraw_if_in_a_layout))
        if self._snapshot_at_end and run is not None:
            self._registry.at_cell_end(weak_callback(self._show_snapshot))

    def _withdraw_if_in_a_layout(self):
        display_id, self._auto_display = self._auto_display, None
        if display_id is not None and not self._closed and in_a_layout(self):
            self._publish({}, display_id, update=True)

    def _show_snapshot(self):
        if not self._closed:
            self._publish(self.snapshot()._repr_mimebundle_())

    def _publish(self, bundle, display_id=None, update=False):
        extra = {"transient": {"display_id": display_id}} if display_id else {}
        if update:
            extra["update"] = True
        self._shell.display_pub.publish(data=bundle, metadata={}, **extra)

    # closing ----------------------------------------------------------------------------
    @property
    def closed(self):
        """True once ``close()`` ran (by hand, or by a re-run of its cell)."""
        return self._closed

    def close(self):
        """Close the widgets and stop listening to the engine (idempotent)."""
        if "_closed" not in self.__dict__:     # ipywidgets closing a view still being built
            super().close()
            return
        if self._closed:
            return
        self._closed = True
        _release(self._subs, self.layout, self._throttle)
        super().close()
        # ipywidgets blanks its display methods on close (7: _ipython_display_,
        # 8: _repr_mimebundle_); a closed view still shows its text and HTML
        for name in ("_ipython_display_", "_repr_mimebundle_"):
            self.__dict__.pop(name, None)
        if self._registry is not None:
            self._registry.forget(self)
