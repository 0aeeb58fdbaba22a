"""JupyterLite in the page: loading it offline, and the notebooks it is given.

``LitePage`` is the JupyterLab browser tests' ``LabPage`` for a static site: the
same Lab driver (``tests/browser/lab.py``) works, since JupyterLite's front end is
JupyterLab's.  Every request for an address other than 127.0.0.1 is aborted and
recorded in ``offline.blocked``, from the page and from its workers (the Pyodide
kernel runs in a Web Worker).
"""
import time
from pathlib import Path

from browser.lab import Console, LabError, LabPage
from browser.server import Offline
from browser.notebooks import (GRAPH, INSPECTOR_LOOP, PLAYER, TAPE, copy_tutorials,
                               new_notebook, write)

START_TIMEOUT = 180.0       # page load, then Pyodide and the kernel starting in the browser
LOCAL_HOSTS = ("127.0.0.1",)
TIMES = {}                  # notebook -> (s to an idle kernel, s to run all), for the summary

# As the tutorials' first cell: install nbtape where it is missing (in the site it is not:
# the site's Pyodide loads it when a cell imports it; a --cdn site installs it from the
# site's own package index).
INSTALL = ("try:\n    import nbtape\nexcept ImportError:\n"
           '    %pip install -q "nbtape[notebook]"\n'
           "import sys, time\nimport numpy as np\nimport nbtape as nt\n"
           "print('platform:', sys.platform)")
# one notebook (each costs a Pyodide start): pictures, the inspector, the player
WIDGETS = "lite_widgets.ipynb"
INSPECTOR_CELL, GRAPH_CELLS, PLAYER_CELL = 1, (3, 4), 5
PURPOSE_BUILT = {WIDGETS: (INSTALL, INSPECTOR_LOOP, TAPE, GRAPH, GRAPH, PLAYER)}

# Cell by cell, as a student runs them: JupyterLite's kernel drops the requests queued
# behind a cell that raised, even one tagged raises-exception, so Run All would stop
# at the tutorials' deliberate errors.
RUN_EACH = """
async (path) => {
  const app = window.jupyterapp;
  let panel = null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content) panel = w;
  }
  const nb = panel.content;
  app.shell.activateById(panel.id);
  for (let k = 0; k < nb.widgets.length; k++) {
    if (nb.widgets[k].model.type !== 'code') continue;
    nb.activeCellIndex = k;
    await app.commands.execute('notebook:run-cell');
  }
  return true;
}"""
IDLE = """
(path) => {
  const app = window.jupyterapp;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.sessionContext) {
      const k = w.sessionContext.session && w.sessionContext.session.kernel;
      if (!k || k.status !== 'idle') return false;
      for (const el of w.node.querySelectorAll('.jp-OutputArea-output')) {
        if (el.innerText.trim().startsWith('Loading widget')) return false;
      }
      return true;
    }
  }
  return false;
}"""
# What matplotlib prints to stderr the first time it is imported in a fresh Pyodide:
# not a problem of the tutorial's, and gone on the next run.
FONT_CACHE = "Matplotlib is building the font cache; this may take a moment."


def run_each(nb, timeout=300.0):
    """Run every code cell of ``nb`` in turn; the seconds it took."""
    started = time.monotonic()
    nb.page.evaluate(RUN_EACH, nb.path)
    nb.page.wait_for_function(IDLE, arg=nb.path, timeout=timeout * 1000, polling=200)
    return time.monotonic() - started


def without_font_cache_note(cells):
    """``cells`` without matplotlib's one-time font-cache note on stderr."""
    for cell in cells:
        cell["outputs"] = [o for o in cell["outputs"]
                           if not (o["type"] == "stream" and o["name"] == "stderr"
                                   and o["text"].strip() == FONT_CACHE)]
    return cells


def write_contents(folder):
    """The site's contents: output-free tutorials and the purpose-built notebooks."""
    folder = Path(folder)
    copy_tutorials(folder)
    for name, sources in PURPOSE_BUILT.items():
        write(folder / name, new_notebook(*sources))
    return folder


class LitePage(LabPage):
    """``LabPage`` for the static site: loaded offline, in a context of its own."""

    def __init__(self, browser, server, shots, viewport):
        super().__init__(browser, server, shots, viewport)
        self.offline = Offline(LOCAL_HOSTS)
        self.context = None

    def fresh(self, timeout=START_TIMEOUT):
        return super().fresh(timeout)

    def _load(self, timeout):
        self.close()
        # no service worker: requests it made would bypass the blocking below
        self.context = self.browser.new_context(viewport=self.viewport,
                                                service_workers="block")
        self.context.route("**/*", self.offline.route)
        self.page = self.context.new_page()
        self.console = Console(self.page)
        self.page.goto(f"{self.server.url}/lab/index.html?reset", timeout=timeout * 1000)
        try:
            self.page.wait_for_function("() => !!window.jupyterapp", timeout=timeout * 1000)
            self.page.evaluate("async () => { await window.jupyterapp.restored; }")
        except Exception as exc:           # noqa: BLE001 - reported with what we know
            shot = self.shots.take(self.page, "lite_did_not_start")
            raise LabError(f"JupyterLite did not start in the browser within {timeout:.0f} s "
                           f"({type(exc).__name__}: {exc}).\nscreenshot: {shot}\n"
                           f"browser console errors: {self.console.summary()}\n"
                           f"{self.server.log_tail(15)}") from None
        self.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")

    def close(self):
        super().close()
        if self.context is not None:
            try:
                self.context.close()
            except Exception:              # noqa: BLE001 - the browser may be gone
                pass
        self.context = None
