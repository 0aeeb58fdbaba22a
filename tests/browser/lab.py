"""Driving JupyterLab in the page: open a notebook, run it, read back what it shows.

The server runs with ``expose_app_in_browser``, so ``window.jupyterapp`` is the Lab
application: commands run through it exactly as the Run menu runs them, and the
notebook model tells which cell is which.  What is *checked* is read from the DOM (the
rendered outputs, the widgets' visible text, whether a picture decoded), since that
is what a student sees.  Cells are addressed by their index in the notebook file.
"""
import re
import time

from . import page_js as js

OPEN_TIMEOUT = 90.0        # page load, Lab start-up and a kernel start on a busy machine
RUN_TIMEOUT = 300.0        # one notebook's Run All (the digits training is the longest)
# Lab's menus, toolbars and status bar take this much of the window's height.
TALL_MARGIN = 200
MAX_SHOT_HEIGHT = 8000


class LabError(AssertionError):
    """Lab did not get where the test needed it; the message says where it stuck."""


class Notebook:
    """One notebook in the Lab page (``front_end`` names where it is open).

    ``open()`` opens it (File > Open) and waits for an idle kernel; ``run_all()`` runs
    every cell and waits for the kernel to finish; ``cells()`` reads back each cell.
    """

    front_end = "JupyterLab"

    def __init__(self, page, server, path, shots, console):
        self.page = page
        self.server = server
        self.path = path                      # relative to the server's root, with "/"
        self.shots = shots
        self.console = console
        self.name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]

    # opening and running ------------------------------------------------------------------
    def open(self, timeout=OPEN_TIMEOUT):
        """File > Open: the notebook in Lab's main area, its kernel started and idle."""
        self.page.evaluate(js.OPEN, self.path)
        self._wait(js.READY, timeout, "Lab to open the notebook and its kernel to be idle")
        return self

    def run_all(self, timeout=RUN_TIMEOUT):
        """Run > Run All Cells, and wait until every cell has finished."""
        self.start_run_all()
        return self.wait_finished(timeout)

    def start_run_all(self):
        self.page.evaluate(js.RUN_ALL, self.path)

    def wait_finished(self, timeout=RUN_TIMEOUT):
        started = time.monotonic()
        self._wait(js.FINISHED, timeout, "every cell to finish running (a reply from the "
                                       "kernel for each cell, kernel idle, no widget still "
                                       "loading)")
        return time.monotonic() - started

    def _wait(self, script, timeout, what):
        try:
            self.page.wait_for_function(script, arg=self.path, timeout=timeout * 1000,
                                        polling=100)
        except Exception as exc:           # Playwright's TimeoutError, or the page died
            shot = self.shots.take(self.page, f"{self.name}__stuck")
            try:
                status = self.page.evaluate(js.STATUS, self.path)
            except Exception as inner:     # noqa: BLE001 - reporting, not handling
                status = f"(could not read Lab's state: {inner})"
            raise LabError(
                f"Waited {timeout:.0f} s for {what} in {self.path}; it did not happen.\n"
                f"Lab state: {status}\nscreenshot: {shot}\n"
                f"browser console errors: {self.console.summary()}\n"
                f"{self.server.log_tail(15)}\n({type(exc).__name__}: {exc})") from None

    # reading back ---------------------------------------------------------------------------
    def cells(self):
        """Per cell: type, source, tags, execution count, prompt, outputs (see js.CELLS)."""
        return self.page.evaluate(js.CELLS, self.path)

    def cell(self, k):
        """Locator of cell ``k`` (index in the notebook file)."""
        return self.page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(k)

    def widget(self, k):
        """Locator of the first widget output of cell ``k``."""
        return self.cell(k).locator(".jp-OutputArea-output:not([data-mime-type])").first

    def shot(self, target, label):
        """Screenshot ``target`` (a Locator, or the page) as ``<notebook>__<label>.png``.

        A cell taller than the notebook's scrolling area cannot be captured whole (the
        capture runs past the area and picks up Lab's menus), so for the moment of the
        screenshot the window is made tall enough to show it all.
        """
        name = f"{self.name}__{label}"
        if target is self.page:
            return self.shots.take(target, name)
        size = self.page.viewport_size
        try:
            box = target.bounding_box(timeout=5000)
        except Exception:                  # noqa: BLE001 - take() reports what it can
            box = None
        room = size["height"] - TALL_MARGIN
        if box is None or box["height"] <= room:
            return self.shots.take(target, name)
        tall = min(MAX_SHOT_HEIGHT, int(box["height"]) + TALL_MARGIN + 40)
        self.page.set_viewport_size({"width": size["width"], "height": tall})
        try:
            target.scroll_into_view_if_needed(timeout=5000)
            return self.shots.take(target, name)
        finally:
            self.page.set_viewport_size(size)

    # sampling a widget while a cell runs -----------------------------------------------------
    def start_sampling(self, cell, marker, column=None, row=None, every_ms=25):
        self.page.evaluate(js.SAMPLE_START, {"path": self.path, "cell": cell,
                                             "marker": marker, "column": column, "row": row,
                                             "every": every_ms})

    def peek_sampling(self):
        """The samples so far, sampling going on."""
        return self.page.evaluate(js.SAMPLE_PEEK)

    def stop_sampling(self):
        """``(samples, ticks)``: distinct successive readings ``{t, text, ended}``."""
        result = self.page.evaluate(js.SAMPLE_STOP) or {"samples": [], "ticks": 0}
        return result["samples"], result["ticks"]

    def wait_for_text(self, locator, pattern, timeout, what):
        """Wait until ``locator``'s visible text matches ``pattern``; return the match."""
        deadline = time.monotonic() + timeout
        text = ""
        while True:
            try:
                text = locator.inner_text(timeout=1000)
            except Exception:              # noqa: BLE001 - not there yet; keep waiting
                text = ""
            m = re.search(pattern, text)
            if m:
                return m
            if time.monotonic() > deadline:
                shot = self.shot(self.page, "waiting")
                raise LabError(f"Waited {timeout:.0f} s for {what}; the widget shows:\n"
                               f"{text!r}\nscreenshot: {shot}\n"
                               f"browser console errors: {self.console.summary()}")
            time.sleep(0.05)


class LabPage:
    """One browser page running Lab for the whole session, one notebook open at a time.

    Loading Lab costs seconds of a 2-core machine's time, so tests share the page the
    way a student opens one notebook after another.  ``fresh()`` hands it over with no
    document open and the console log cleared, reloading Lab whenever the previous
    test left it unwell (a dialog up, a document it could not close, a crashed page).
    """

    def __init__(self, browser, server, shots, viewport):
        self.browser = browser
        self.server = server
        self.shots = shots
        self.viewport = viewport
        self.page = None
        self.console = None

    def fresh(self, timeout=OPEN_TIMEOUT):
        if not self._healthy():
            self._load(timeout)
        self.console.clear()
        return self.page, self.console

    def _healthy(self):
        if self.page is None or self.page.is_closed():
            return False
        try:
            return bool(self.page.evaluate(js.HEALTHY))
        except Exception:                  # noqa: BLE001 - a crashed or navigating page
            return False

    def _load(self, timeout):
        self.close()
        self.page = self.browser.new_page(viewport=self.viewport)
        self.console = Console(self.page)
        # ?reset: an empty workspace (nothing restored from an earlier load)
        self.page.goto(f"{self.server.url}/lab?token={self.server.token}&reset",
                       timeout=timeout * 1000)
        try:
            self.page.wait_for_function("() => !!window.jupyterapp", timeout=timeout * 1000)
            self.page.evaluate("async () => { await window.jupyterapp.restored; }")
        except Exception as exc:           # noqa: BLE001 - reported with what we know
            shot = self.shots.take(self.page, "lab_did_not_start")
            raise LabError(f"JupyterLab did not start in the browser within {timeout:.0f} s "
                           f"({type(exc).__name__}: {exc}).\nscreenshot: {shot}\n"
                           f"browser console errors: {self.console.summary()}\n"
                           f"{self.server.log_tail(15)}") from None
        # More room for the notebook: the file browser is not what is being checked.
        self.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")

    def close_documents(self):
        if self.page is not None and not self.page.is_closed():
            try:
                self.page.evaluate(js.CLOSE_DOCUMENTS)
            except Exception:              # noqa: BLE001 - fresh() reloads Lab if needed
                pass

    def close(self):
        if self.page is not None and not self.page.is_closed():
            try:
                self.page.close()
            except Exception:              # noqa: BLE001 - the browser may be gone
                pass
        self.page = None


class Console:
    """The page's JavaScript errors: uncaught exceptions and console.error messages."""

    def __init__(self, page):
        self.uncaught = []
        self.errors = []
        page.on("pageerror", lambda exc: self.uncaught.append(str(exc)))
        page.on("console", self._message)

    def clear(self):
        self.uncaught.clear()
        self.errors.clear()

    def _message(self, msg):
        if msg.type == "error":
            self.errors.append(msg.text)

    def summary(self, limit=8):
        lines = [f"uncaught: {u}" for u in self.uncaught] + self.errors
        if not lines:
            return "none"
        more = f"\n  ... and {len(lines) - limit} more" if len(lines) > limit else ""
        return "\n  " + "\n  ".join(line[:400] for line in lines[:limit]) + more
