"""Rate limiting for live widgets: at most one refresh per interval, never losing the last.

A training loop can change a variable thousands of times a second; the browser
needs a few frames a second.  ``Throttle.poke()`` is called on every change (on
the loop's own thread) and refreshes at once when the interval has passed.  A
poke that arrives too early arms a one-shot timer for the end of the interval
(the trailing edge), so when the loop stops, its final state still reaches the
screen within one interval, even though the engine never says "the loop ended".
Widget messages sent from that timer thread do reach the front end while the
cell is still running, because the kernel sends them from its own I/O thread.

Where no thread can start (Pyodide in the browser, as in JupyterLite), the default
``schedule`` is ``no_timer``: pokes still refresh at most once per interval as
values change, and the final state is sent when the cell ends (the widgets'
``post_run_cell`` hook flushes every live view).
"""
import sys
import threading
import time


def thread_timer(delay, fn):
    """Run ``fn`` once after ``delay`` seconds on a daemon thread; returns the timer.

    >>> import threading
    >>> done = threading.Event()
    >>> t = thread_timer(0.0, done.set)
    >>> done.wait(5)
    True
    """
    timer = threading.Timer(max(0.0, delay), fn)
    timer.daemon = True
    timer.start()
    return timer


def no_timer(delay, fn):
    """A ``schedule`` that arms nothing, for where no thread can start.

    >>> no_timer(0.1, print).cancel()
    """
    return Cancelable()


def can_start_threads(platform=sys.platform):
    """False where Python cannot start a thread (Pyodide, WASI).

    >>> can_start_threads("emscripten"), can_start_threads("linux")
    (False, True)
    """
    return platform not in ("emscripten", "wasi")


def default_schedule(platform=sys.platform):
    """The trailing-edge timer to use here: a thread where threads exist.

    >>> default_schedule("emscripten") is no_timer, default_schedule("linux") is thread_timer
    (True, True)
    """
    return thread_timer if can_start_threads(platform) else no_timer


def interval_of(max_rate):
    """Seconds between refreshes for at most ``max_rate`` per second (``None``: no limit).

    >>> interval_of(10), interval_of(None)
    (0.1, 0.0)
    """
    if max_rate is None:
        return 0.0
    if not (isinstance(max_rate, (int, float)) and max_rate > 0):
        raise ValueError(f"max_rate is the most refreshes per second, a number > 0 (or None "
                         f"for no limit), not {max_rate!r}.")
    return 1.0 / max_rate


class Throttle:
    """Call ``flush()`` at most once per ``interval`` seconds, always after the last poke.

    ``clock`` and ``schedule(delay, fn) -> handle with .cancel()`` are injectable,
    so tests can drive time by hand.

    >>> calls, now, timers = [], [0.0], []
    >>> th = Throttle(lambda: calls.append(now[0]), interval=0.1, clock=lambda: now[0],
    ...               schedule=lambda delay, fn: timers.append(fn) or Cancelable())
    >>> th.poke(); now[0] = 0.01; th.poke(); th.poke()
    >>> calls, len(timers)       # first poke shows at once, the others wait
    ([0.0], 1)
    >>> now[0] = 0.1; timers.pop()()
    >>> calls                    # the trailing edge shows the final state
    [0.0, 0.1]
    """

    def __init__(self, flush, interval=0.1, clock=time.monotonic, schedule=None):
        if not interval >= 0:
            raise ValueError(f"the refresh interval must be a number of seconds >= 0, "
                             f"not {interval!r}.")
        self._flush = flush
        self.interval = float(interval)
        self._clock = clock
        self._schedule = schedule or default_schedule()
        self._lock = threading.Lock()          # guards the fields below
        self._flush_lock = threading.Lock()    # one flush at a time, whichever thread
        self._pending = False
        self._last = None
        self._timer = None
        self.flushes = 0

    @property
    def pending(self):
        """True when something changed that the screen does not show yet."""
        return self._pending

    def poke(self):
        """Something changed: refresh now if allowed, else make sure a refresh follows."""
        now = self._clock()
        with self._lock:
            self._pending = True
            if self._last is not None and now - self._last < self.interval:
                if self._timer is None:
                    self._timer = self._schedule(self._last + self.interval - now,
                                                 self._on_timer)
                return
            self._last = now
        self._run()

    def flush(self, force=False):
        """Refresh now if anything is pending, or anyway with ``force``.

        Used at the end of a cell, on closing, and for clicks that must show at once.
        """
        with self._lock:
            if force:
                self._pending = True
            timer, self._timer = self._timer, None
            self._last = self._clock()
        if timer is not None:
            timer.cancel()
        self._run()

    def cancel(self):
        """Drop any armed timer; pending changes stay pending."""
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _on_timer(self):
        with self._lock:
            self._timer = None
            self._last = self._clock()
        self._run()

    def _run(self):
        with self._flush_lock:
            with self._lock:
                if not self._pending:
                    return
                self._pending = False
            self.flushes += 1
            self._flush()


class Cancelable:
    """A do-nothing timer handle, for schedulers that run nothing by themselves.

    >>> Cancelable().cancel()
    """

    def cancel(self):
        pass


class ManualScheduler:
    """A ``schedule`` for tests and scripts: timers run only when ``run_due()`` says so.

    >>> sched = ManualScheduler()
    >>> seen = []
    >>> _ = sched(0.5, lambda: seen.append("fired"))
    >>> sched.run_due(0.4), seen
    (0, [])
    >>> sched.run_due(0.5), seen
    (1, ['fired'])
    """

    def __init__(self):
        self.now = 0.0
        self._timers = []

    def clock(self):
        return self.now

    def __call__(self, delay, fn):
        handle = _ManualTimer(self.now + delay, fn)
        self._timers.append(handle)
        return handle

    def run_due(self, now=None):
        """Advance the clock to ``now`` (if given) and run every timer due by then."""
        if now is not None:
            self.now = now
        due = [t for t in self._timers if t.at <= self.now and not t.cancelled]
        self._timers = [t for t in self._timers if t not in due and not t.cancelled]
        for t in due:
            t.fn()
        return len(due)

    @property
    def armed(self):
        """How many timers wait to run."""
        return sum(1 for t in self._timers if not t.cancelled)


class _ManualTimer:
    __slots__ = ("at", "fn", "cancelled")

    def __init__(self, at, fn):
        self.at, self.fn, self.cancelled = at, fn, False

    def cancel(self):
        self.cancelled = True
