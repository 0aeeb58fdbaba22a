"""Driving Notebook 7 in the page: the same checks as in JupyterLab, in the other front end.

Notebook 7 is built from JupyterLab's parts: the server that runs JupyterLab serves it
too (``/notebooks/<path>``) when the ``notebook`` package is installed, it exposes its
application as ``window.jupyterapp`` (``JupyterNotebookApp.expose_app_in_browser``), and
its notebook panel, cells and output areas are Lab's.  So a ``Notebook`` drives it as
it drives Lab; only opening differs: Notebook 7 shows one notebook per browser page.
"""
from .lab import OPEN_TIMEOUT, Console, LabError, Notebook
from . import page_js as js

# Notebook 7.6's own bundle throws these while it opens a notebook, whatever the notebook
# holds (an empty one too, before any cell runs):
# - its keyboard-shortcuts plugin reads the settings schema of a plugin that the settings
#   registry no longer holds (JupyterLab, from the same server and extensions, throws
#   nothing);
# - after a JupyterLab page of the same server has opened notebooks, its page asks for
#   'filebrowser:open-path', a command that a notebook page (no file browser) never
#   registers (seen in the full browser suite, never in a Notebook 7 test run alone).
# Only these errors, thrown from that bundle (its command registry, for the second), are
# set aside (in ``Notebook7Console.upstream``); any other uncaught error fails the tests.
NOTEBOOK_BUNDLE = "/static/notebook/notebook_core."
UPSTREAM = ("Cannot read properties of undefined (reading 'schema')",
            "Command 'filebrowser:open-path' not registered.")


class Notebook7Console(Console):
    """The page's JavaScript errors, Notebook 7's own known ones (``UPSTREAM``) apart."""

    def __init__(self, page):
        self.uncaught, self.errors, self.upstream = [], [], []
        page.on("pageerror", self._uncaught)
        page.on("console", self._message)

    def _uncaught(self, exc):
        stack = getattr(exc, "stack", "") or ""
        first_frame = next((line for line in stack.splitlines() if "    at " in line), "")
        if str(exc) in UPSTREAM and NOTEBOOK_BUNDLE in first_frame:
            self.upstream.append(str(exc))
        else:
            self.uncaught.append(str(exc))


class Notebook7(Notebook):
    """One notebook in a Notebook 7 page of its own; ``close()`` closes the page."""

    front_end = "Notebook 7"

    def __init__(self, browser, server, path, shots, viewport):
        page = browser.new_page(viewport=viewport)
        super().__init__(page, server, path, shots, Notebook7Console(page))
        self.name = "notebook7_" + self.name     # its screenshots beside Lab's

    def open(self, timeout=OPEN_TIMEOUT):
        self.page.goto(f"{self.server.url}/notebooks/{self.path}?token={self.server.token}",
                       timeout=timeout * 1000)
        try:
            self.page.wait_for_function("() => !!window.jupyterapp", timeout=timeout * 1000)
        except Exception as exc:           # noqa: BLE001 - reported with what we know
            shot = self.shots.take(self.page, f"{self.name}__did_not_start")
            raise LabError(f"Notebook 7 did not start in the browser within {timeout:.0f} s "
                           f"({type(exc).__name__}: {exc}).\nscreenshot: {shot}\n"
                           f"browser console errors: {self.console.summary()}\n"
                           f"{self.server.log_tail(15)}") from None
        self._wait(js.READY, timeout, "Notebook 7 to open the notebook and its kernel to be "
                                      "idle")
        return self

    def close(self):
        if not self.page.is_closed():
            self.page.close()
