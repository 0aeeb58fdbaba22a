"""``nt.TrainingMonitor``: a live loss curve (and gradient norm), fed once per step.

::

    monitor = nt.TrainingMonitor(total=200)
    for step in monitor.range(200):          # or a plain range, or tqdm
        ...
        monitor.log(loss=loss, grads=grads)  # one call per step

Each metric gets its own chart (a loss and a gradient norm rarely share a
scale) with axes, ticks and labels, redrawn at most ``max_rate`` times a second
and always after the last step.  The progress line reads like tqdm's, which is
what learners already know.

An anywidget widget (``front/monitor.js`` draws it): ``total`` is a trait; the
headline, the progress bar's state and the charts (SVG drawn here) are the
traits the front end shows.
"""
import html
import math
import threading

import numpy as np
import traitlets as T

from ...display import palette as P
from ...display.numbers import number
from ...core.structure import flatten
from ...core.tensor import TensorLike
from .chart import axis_number, line_chart
from .live import LiveView, front_end, weak_callback
from .svg import blocks
from .throttle import interval_of

# one colour per metric, from the colour-blind-safe palette (nbtape.display.palette)
COLORS = P.SERIES
BASE_PX = 16


class Series:
    """A growing sequence of (step, value) pairs in numpy buffers (no list copies per redraw).

    >>> s = Series()
    >>> for k in range(5): s.append(k, k * k)
    >>> s.steps.tolist(), s.values.tolist()
    ([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 4.0, 9.0, 16.0])
    """

    def __init__(self):
        self._x = np.empty(64)
        self._y = np.empty(64)
        self.n = 0

    def append(self, step, value):
        if self.n == self._x.size:
            self._x = np.concatenate([self._x, np.empty(self.n)])
            self._y = np.concatenate([self._y, np.empty(self.n)])
        self._x[self.n] = step
        self._y[self.n] = value
        self.n += 1

    @property
    def steps(self):
        return self._x[:self.n]

    @property
    def values(self):
        return self._y[:self.n]

    def summary(self):
        """``'last 0.5 at step 3, min 0.25 at step 2'``; non-finite values are counted."""
        y = self.values
        if not y.size:
            return "no values"
        text = f"last {number(y[-1])} at step {axis_number(self.steps[-1])}"
        finite = np.isfinite(y)
        if finite.any():
            k = int(np.argmin(np.where(finite, y, np.inf)))
            text += f", min {number(y[k])} at step {axis_number(self.steps[k])}"
        bad = int((~finite).sum())
        if bad:
            first = int(np.argmin(finite))
            text += f"; {bad} non-finite, first at step {axis_number(self.steps[first])}"
        return text


def _number(name, value):
    if isinstance(value, (float, int)):
        return float(value)          # the common case, without numpy's overhead
    if isinstance(value, TensorLike):
        value = value._value
    arr = np.asarray(value)
    if arr.size != 1 or arr.dtype.kind not in "biuf":
        raise ValueError(
            f"monitor.log() takes one real number per metric, but {name} is "
            f"{'complex' if arr.dtype.kind == 'c' else f'of shape {arr.shape}'}. Reduce it "
            f"to one number first, e.g. {name}=np.mean({name}) for a per-sample loss.")
    return float(arr.reshape(-1)[0])


def _logger_method(level):
    def call(*args, **kwargs):
        from traitlets.log import get_logger
        return getattr(get_logger(), level)(*args, **kwargs)
    return call


def gradient_norm(grads):
    """sqrt of the sum of squared norms of ``grads`` (``None`` entries skipped).

    >>> gradient_norm([np.array([3.0]), None, np.array([[4.0]])])
    5.0
    """
    total = 0.0
    for g in flatten(grads):
        if g is None:
            continue
        a = np.asarray(g._value if isinstance(g, TensorLike) else g).reshape(-1)
        total += float(np.vdot(a, a).real)
    return math.sqrt(total)


def elapsed(seconds):
    """tqdm's clock format: ``mm:ss``, or ``h:mm:ss`` past an hour.

    >>> elapsed(75.4), elapsed(3725)
    ('01:15', '1:02:05')
    """
    s = int(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class TrainingMonitor(LiveView):
    """Live charts of training metrics with a tqdm-style progress line.

    ``total`` (steps expected) turns on the progress bar; ``log_y`` names
    metrics drawn on a log scale (or ``True`` for all); ``max_rate`` is the most
    redraws per second; ``scale`` multiplies every size (text, charts: 1.5 for a large
    room; at 1 no text is under 14 px).  ``display``, ``snapshot``, ``clock`` and
    ``schedule`` are as for ``nt.inspect``.

    >>> import nbtape as nt
    >>> mon = nt.TrainingMonitor(total=3, title="fit")
    >>> for step in mon.range(3):
    ...     mon.log(loss=1.0 / (step + 1), grads=[np.array([3.0, 4.0])])
    >>> print(mon)
    fit: 3 steps logged, 3/3
    loss       last 0.3333 at step 2, min 0.3333 at step 2  █▃▁
    grad_norm  last 5.0 at step 2, min 5.0 at step 0        ▄▄▄
    >>> mon.close()
    """

    _esm = front_end("monitor")
    total = T.Any(None, help="How many steps are expected, None when unknown (then no "
                             "bar).").tag(sync=True)
    # what the front end shows, drawn here; _bar: the progress bar's shown, value,
    # max and style ("", "success" or "warning")
    _head = T.Unicode("").tag(sync=True)
    _bar = T.Dict({"shown": False, "value": 0, "max": 1, "style": ""}).tag(sync=True)
    _rate = T.Unicode("").tag(sync=True)
    _charts = T.Unicode("").tag(sync=True)

    def __init__(self, total=None, title="Training", log_y=(), max_rate=10, width=520,
                 height=200, display=None, snapshot=True, clock=None, schedule=None,
                 scale=1.0):
        super().__init__(interval_of(max_rate), clock, schedule, snapshot)
        self._scale = P.check_scale(scale)
        self.title = str(title)
        # log_y="loss" means the metric named loss, not every name inside that string
        self._log_y = (log_y,) if isinstance(log_y, str) else log_y
        self._size = (round(int(width) * self._scale), round(int(height) * self._scale))
        self._lock = threading.Lock()
        self._series = {}
        self._logged = 0
        self._done = 0              # iterations finished (tracked loop, else log calls)
        self._tracking = 0          # how many track() loops are running
        self._stopped = False
        self._start = self._clock()
        self.total = total
        self.observe(weak_callback(self._new_total), names="total")
        self._open(display)

    # feeding ---------------------------------------------------------------------------
    @T.validate("total")
    def _valid_total(self, proposal):
        n = proposal["value"]
        if n is not None and (isinstance(n, bool) or not (isinstance(n, (int, np.integer))
                                                          and n >= 0)):
            raise ValueError(f"total is the number of steps expected, a whole number >= 0 "
                             f"(or None), not {n!r}.")
        return None if n is None else int(n)

    def _new_total(self, _change):
        self._changed()

    def log(self, step=None, grads=None, **metrics):
        """Record one step: ``metrics`` as numbers (tensors and 1-element arrays welcome).

        ``step`` is the x value (default: 0, 1, 2, ... per call); ``grads`` (a list
        of gradients, ``None`` entries allowed) adds their global norm as
        ``grad_norm``.
        """
        values = {name: _number(name, v) for name, v in metrics.items()}
        if grads is not None:
            values["grad_norm"] = gradient_norm(grads)
        if not values:
            raise TypeError("monitor.log() needs at least one metric, e.g. "
                            "monitor.log(loss=loss) or monitor.log(loss=loss, grads=grads).")
        with self._lock:
            x = float(self._logged if step is None else _number("step", step))
            for name, v in values.items():
                self._series.setdefault(name, Series()).append(x, v)
            self._logged += 1
            if not self._tracking:
                self._done = self._logged
        self._changed()

    # ``log`` shadows the logger that every ipywidget (a traitlets LoggingHasTraits)
    # has under that name; ipywidgets reports a failing front-end message through
    # ``self.log.warning``/``.error``, so those still reach traitlets' logger.
    log.debug, log.info, log.warning, log.error, log.exception = (
        _logger_method(level) for level in ("debug", "info", "warning", "error", "exception"))

    def track(self, iterable, total=None):
        """Iterate over ``iterable`` like tqdm, advancing the progress bar per item."""
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)
        if total is not None:
            self.total = total
        with self._lock:
            self._tracking += 1
            self._done = 0
            self._stopped = False
            self._start = self._clock()
        finished = False
        try:
            for item in iterable:
                yield item
                with self._lock:
                    self._done += 1
                self._changed()
            finished = True
        finally:
            # left by break, return or an exception in the loop body
            with self._lock:
                self._tracking -= 1
                self._stopped = not finished
            self._changed()

    def range(self, *args):
        """``track(range(*args))``: ``for step in monitor.range(100): ...``."""
        return self.track(range(*args))

    @property
    def history(self):
        """``{metric: (steps, values)}`` as numpy arrays (copies)."""
        with self._lock:
            return {k: (s.steps.copy(), s.values.copy()) for k, s in self._series.items()}

    def cell_ended(self):
        with self._lock:
            if self._tracking and self.total is not None and self._done < self.total:
                # the cell ended with the loop still suspended: a break or an interrupt
                self._stopped = True
        super().cell_ended()

    # drawing ----------------------------------------------------------------------------
    def _progress_text(self, timing):
        n, total = self._done, self.total
        text = f"{n}/{total}" if total is not None else f"{n} steps"
        if self._stopped:
            text += " (stopped early)"
        if timing:
            spent = max(self._clock() - self._start, 0.0)
            rate = n / spent if spent > 0 else 0.0
            eta = (f"<{elapsed((total - n) / rate)}" if total is not None and rate > 0
                   and n < total else "")
            text += f" [{elapsed(spent)}{eta}, {rate:.2f} it/s]"
        return text

    def _headline(self):
        return f"{self.title}: {self._logged} step{'s' if self._logged != 1 else ''} logged"

    def _chart_svgs(self):
        width, height = self._size
        out = []
        for k, (name, s) in enumerate(self._series.items()):
            log = self._log_y is True or name in (self._log_y or ())
            ylabel = name + (" (log)" if log else "")
            out.append(line_chart(s.steps, s.values, width, height, title=name,
                                  ylabel=ylabel, log_y=log, color=COLORS[k % len(COLORS)],
                                  scale=self._scale))
        return out

    def _render(self):
        with self._lock:
            charts = "".join(f"<div>{svg}</div>" for svg in self._chart_svgs()) or \
                (f"<i style='font-size:{self._px()}'>log a metric to start the chart: "
                 "monitor.log(loss=...)</i>")
            latest = " · ".join(f"{name} {number(s.values[-1])}"
                                for name, s in self._series.items() if s.n)
            progress = self._progress_text(timing=True)
            total, done, stopped = self.total, self._done, self._stopped
        with self.hold_sync():
            self._head = (f"<span style='font-size:{self._px()}'>"
                          f"<b>{html.escape(self._headline())}</b>"
                          + (f" · {html.escape(latest)}" if latest else "") + "</span>")
            bar = {"shown": total is not None, "value": 0, "max": 1, "style": ""}
            if total is not None:
                bar.update(max=max(total, 1), value=min(done, max(total, 1)),
                           style="warning" if stopped else "success" if done >= total else "")
            self._bar = bar
            self._rate = f"<code style='font-size:{self._px()}'>{progress}</code>"
            self._charts = charts

    def _text(self):
        with self._lock:
            head = self._headline()
            if self.total is not None:
                head += ", " + self._progress_text(timing=False)
            width = max((len(n) for n in self._series), default=0)
            rows = [f"{name.ljust(width)}  {s.summary()}" for name, s in self._series.items()]
            span = max((len(r) for r in rows), default=0)
            lines = [r.ljust(span) + "  " + blocks(s.values)
                     for r, s in zip(rows, self._series.values())]
        return "\n".join([head] + lines)

    def _html(self):
        with self._lock:
            charts = "".join(f"<div>{svg}</div>" for svg in self._chart_svgs())
            summary = "".join(f"<li><b>{html.escape(n)}</b>: {html.escape(s.summary())}</li>"
                              for n, s in self._series.items())
            head = self._headline()
            if self.total is not None:
                head += ", " + self._progress_text(timing=False)
        return (f'<div class="nbtape-monitor" style="font-family:sans-serif;'
                f'font-size:{self._px()}">'
                f"<b>{html.escape(head)}</b><ul style='margin:4px 0'>{summary}</ul>"
                f"{charts}</div>")

    def _descriptor(self):
        return f"nt.TrainingMonitor live widget: {self.title}"

    def _px(self):
        return P.text_px(BASE_PX, self._scale)
