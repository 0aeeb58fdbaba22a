"""Driving JupyterLab in the page: open a notebook, run it, read back what it shows.

The server runs with ``expose_app_in_browser``, so ``window.jupyterapp`` is the Lab
application: commands run through it exactly as the Run menu runs them, and the
notebook model tells which cell is which.  What is *checked* is read from the DOM (the
rendered outputs, the widgets' visible text, whether a picture decoded), since that
is what a student sees.  Cells are addressed by their index in the notebook file.
"""
import re
import time

OPEN_TIMEOUT = 90.0        # page load, Lab start-up and a kernel start on a busy machine
RUN_TIMEOUT = 300.0        # one notebook's Run All (the digits training is the longest)
# Lab's menus, toolbars and status bar take this much of the window's height.
TALL_MARGIN = 200
MAX_SHOT_HEIGHT = 8000

# Shared by the snippets below: the NotebookPanel showing `path`, and its cells.
_PRELUDE = """
const panelFor = (path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.sessionContext) return w;
  }
  return null;
};
const cellAt = (path, k) => panelFor(path).content.widgets[k];
const widgetOutputs = (node) => Array.from(node.querySelectorAll('.jp-OutputArea-output'))
  .filter(el => !el.hasAttribute('data-mime-type'));
"""

_OPEN = """
async (path) => {
  await window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  return true;
}"""

_READY = _PRELUDE + """
(path) => {
  const p = panelFor(path);
  if (!p || !p.context.isReady || !p.sessionContext.session) return false;
  const k = p.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""

_STATUS = _PRELUDE + """
(path) => {
  const p = panelFor(path);
  const dialogs = Array.from(document.querySelectorAll('.jp-Dialog'))
    .map(d => d.innerText.trim().slice(0, 500));
  if (!p) return {panel: false, dialogs};
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  const run = window.__nbtapeRunAll;
  return {panel: true, ready: p.context.isReady, kernel: k ? k.status : 'no kernel',
          kernelName: k ? k.name : null, dialogs,
          runAll: run ? {done: run.done, ok: run.ok, error: run.error,
                         executeRequests: run.traffic.sent, replies: run.traffic.replied}
                      : 'not started'};
}"""

# Run All, counting the kernel's execute requests and replies on the way.  Neither
# Run All's promise nor the "[*]" prompts say when the kernel is done: after a cell
# tagged raises-exception fails, Lab settles the promise and resets the prompts of the
# cells after it to "[ ]" while the kernel (told not to stop on that error) still runs
# them, and a cell with hidden input shows no prompt at all.  Requests sent = replies
# received, with the kernel idle, does say it.
_RUN_ALL = _PRELUDE + """
(path) => {
  const app = window.jupyterapp;
  const p = panelFor(path);
  app.shell.activateById(p.id);
  const traffic = {sent: 0, replied: 0};
  p.sessionContext.session.kernel.anyMessage.connect((_, {msg, direction}) => {
    const type = msg.header.msg_type;
    if (direction === 'send' && type === 'execute_request') traffic.sent += 1;
    if (direction === 'recv' && type === 'execute_reply') traffic.replied += 1;
  });
  window.__nbtapeRunAll = {done: false, traffic};
  app.commands.execute('notebook:run-all-cells').then(
    ok => { window.__nbtapeRunAll.done = true; window.__nbtapeRunAll.ok = ok; },
    err => { window.__nbtapeRunAll.done = true; window.__nbtapeRunAll.error = String(err); });
}"""

# Finished: Run All has sent its requests, the kernel answered each and is idle, and
# no widget is still loading.
_FINISHED = _PRELUDE + """
(path) => {
  const p = panelFor(path);
  const run = window.__nbtapeRunAll;
  if (!p || !run || !run.done) return false;
  if (run.traffic.sent === 0 || run.traffic.replied < run.traffic.sent) return false;
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  for (const cell of p.content.widgets) {
    for (const el of widgetOutputs(cell.node)) {
      if (el.innerText.trim().startsWith('Loading widget')) return false;
    }
  }
  return true;
}"""

# Everything a test needs about each cell: model facts and what its outputs look like.
_CELLS = _PRELUDE + """
(path) => {
  const p = panelFor(path);
  const describePicture = (el, out) => {
    const img = el.querySelector('img');
    const svg = el.querySelector('svg');
    const box = (img || svg || el).getBoundingClientRect();
    out.width = Math.round(box.width); out.height = Math.round(box.height);
    if (img) {
      out.how = 'img';
      out.decoded = img.complete && img.naturalWidth > 0;
      const src = img.getAttribute('src') || '';
      let body = '';
      try { body = src.startsWith('data:image/svg+xml')
              ? decodeURIComponent(src.slice(src.indexOf(',') + 1)) : ''; } catch (e) {}
      out.isSvg = body.includes('<svg');
      out.svgText = body.replace(/<[^>]*>/g, ' ').replace(/\\s+/g, ' ').slice(0, 800);
    } else if (svg) {
      out.how = 'inline';
      out.decoded = true;
      out.isSvg = true;
      out.svgText = svg.textContent.replace(/\\s+/g, ' ').slice(0, 800);
    } else {
      out.how = 'none'; out.decoded = false; out.isSvg = false; out.svgText = '';
    }
  };
  const describeWidget = (el, out) => {
    const text = el.innerText.trim();
    const inner = el.classList.contains('jupyter-widgets') ? el
      : el.querySelector('.jupyter-widgets');
    const box = el.getBoundingClientRect();
    out.width = Math.round(box.width); out.height = Math.round(box.height);
    if (text.includes('Error displaying widget')
        || el.querySelector('.jupyter-widgets-error-widget')) out.widget = 'error';
    else if (text.startsWith('Loading widget')) out.widget = 'loading';
    else if (!inner || box.height < 2) out.widget = 'empty';
    else out.widget = 'ok';
    out.svgCount = el.querySelectorAll('svg').length;
  };
  return p.content.widgets.map((cell, k) => {
    const m = cell.model;
    const info = {index: k, type: m.type, source: m.sharedModel.getSource(),
                  tags: (m.getMetadata && m.getMetadata('tags')) || [],
                  executionCount: m.type === 'code' ? m.executionCount : null,
                  prompt: (cell.node.querySelector('.jp-InputPrompt') || {}).textContent || '',
                  outputs: []};
    if (m.type !== 'code') return info;
    const children = cell.node.querySelectorAll('.jp-OutputArea-child');
    for (let i = 0; i < m.outputs.length; i++) {
      const j = m.outputs.get(i).toJSON();
      const child = children[i];
      const el = child ? child.querySelector('.jp-OutputArea-output') : null;
      const out = {type: j.output_type, name: j.name || null,
                   mimes: j.data ? Object.keys(j.data) : [],
                   domMime: el ? el.getAttribute('data-mime-type') : null,
                   text: el ? el.innerText.slice(0, 3000) : '',
                   error: j.output_type === 'error' ? `${j.ename}: ${j.evalue}` : null};
      if (el && out.mimes.includes('image/svg+xml') && out.domMime === 'image/svg+xml')
        describePicture(el, out);
      if (el && out.mimes.includes('application/vnd.jupyter.widget-view+json')
          && !out.domMime) describeWidget(el, out);
      const images = el ? Array.from(el.querySelectorAll('img')) : [];
      out.brokenImages = images.filter(im => !(im.complete && im.naturalWidth > 0)).length;
      info.outputs.push(out);
    }
    return info;
  });
}"""

# Sample a widget's visible text every few ms inside the page (the Python side is far
# too slow and irregular to catch each redraw).  `column`/`row` pick one table cell (the
# inspector's value of a variable); otherwise the widget's whole text is sampled.
# Each sample also notes whether `marker` has appeared in the cell's printed output
# yet, i.e. whether the loop had ended when the sample was taken.
_SAMPLE_START = _PRELUDE + """
({path, cell, marker, column, row, every}) => {
  if (window.__nbtapeSampler) clearInterval(window.__nbtapeSampler.timer);
  const state = {samples: [], ticks: 0, t0: performance.now()};
  const read = () => {
    const c = cellAt(path, cell);
    if (!c) return null;
    const el = widgetOutputs(c.node)[0];
    if (!el) return null;
    if (!column) return el.innerText.trim();
    for (const table of el.querySelectorAll('table')) {
      const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
      const col = heads.indexOf(column);
      if (col < 0) continue;
      for (const tr of table.querySelectorAll('tbody tr')) {
        const tds = tr.querySelectorAll('td');
        if (tds.length > col && tds[0].innerText.trim().split(/\\s/)[0] === row)
          return tds[col].innerText.trim();
      }
    }
    return null;
  };
  const ended = () => {
    const c = cellAt(path, cell);
    if (!c) return false;
    return Array.from(c.node.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'))
      .some(el => el.innerText.includes(marker));
  };
  state.timer = setInterval(() => {
    state.ticks += 1;
    const s = {t: Math.round(performance.now() - state.t0), text: read(), ended: ended()};
    const last = state.samples[state.samples.length - 1];
    if (!last || last.text !== s.text || last.ended !== s.ended) state.samples.push(s);
  }, every);
  window.__nbtapeSampler = state;
}"""

_SAMPLE_PEEK = """
() => window.__nbtapeSampler ? window.__nbtapeSampler.samples : []"""

_SAMPLE_STOP = """
() => {
  const s = window.__nbtapeSampler;
  if (!s) return null;
  clearInterval(s.timer);
  window.__nbtapeSampler = null;
  return {samples: s.samples, ticks: s.ticks};
}"""


class LabError(AssertionError):
    """Lab did not get where the test needed it; the message says where it stuck."""


class Notebook:
    """One notebook in the Lab page.

    ``open()`` opens it (File > Open) and waits for an idle kernel; ``run_all()`` runs every
    cell and waits for the kernel to finish; ``cells()`` reads back each cell.
    """

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
        self.page.evaluate(_OPEN, self.path)
        self._wait(_READY, timeout, "Lab to open the notebook and its kernel to be idle")
        return self

    def run_all(self, timeout=RUN_TIMEOUT):
        """Run > Run All Cells, and wait until every cell has finished."""
        self.start_run_all()
        return self.wait_finished(timeout)

    def start_run_all(self):
        self.page.evaluate(_RUN_ALL, self.path)

    def wait_finished(self, timeout=RUN_TIMEOUT):
        started = time.monotonic()
        self._wait(_FINISHED, timeout, "every cell to finish running (a reply from the "
                                       "kernel for each cell, kernel idle, no widget still "
                                       "loading)")
        return time.monotonic() - started

    def _wait(self, js, timeout, what):
        try:
            self.page.wait_for_function(js, arg=self.path, timeout=timeout * 1000,
                                        polling=100)
        except Exception as exc:           # Playwright's TimeoutError, or the page died
            shot = self.shots.take(self.page, f"{self.name}__stuck")
            try:
                status = self.page.evaluate(_STATUS, self.path)
            except Exception as inner:     # noqa: BLE001 - reporting, not handling
                status = f"(could not read Lab's state: {inner})"
            raise LabError(
                f"Waited {timeout:.0f} s for {what} in {self.path}; it did not happen.\n"
                f"Lab state: {status}\nscreenshot: {shot}\n"
                f"browser console errors: {self.console.summary()}\n"
                f"{self.server.log_tail(15)}\n({type(exc).__name__}: {exc})") from None

    # reading back ---------------------------------------------------------------------------
    def cells(self):
        """Per cell: type, source, tags, execution count, prompt, outputs (see _CELLS)."""
        return self.page.evaluate(_CELLS, self.path)

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
        self.page.evaluate(_SAMPLE_START, {"path": self.path, "cell": cell, "marker": marker,
                                           "column": column, "row": row, "every": every_ms})

    def peek_sampling(self):
        """The samples so far, sampling going on."""
        return self.page.evaluate(_SAMPLE_PEEK)

    def stop_sampling(self):
        """``(samples, ticks)``: distinct successive readings ``{t, text, ended}``."""
        result = self.page.evaluate(_SAMPLE_STOP) or {"samples": [], "ticks": 0}
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


# A Lab page fit for the next test: Lab started, no dialog over it, no document open.
_HEALTHY = """
() => !!window.jupyterapp && !document.querySelector('.jp-Dialog')
  && Array.from(window.jupyterapp.shell.widgets('main')).every(w => !w.context)"""

# Close every open document without "save changes?" questions (the copies are
# throwaway); the kernels are shut down through the server's API afterwards.
_CLOSE_DOCUMENTS = """
() => {
  for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (w.context) { w.context.model.dirty = false; w.dispose(); }
  }
}"""


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
            return bool(self.page.evaluate(_HEALTHY))
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
                self.page.evaluate(_CLOSE_DOCUMENTS)
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
