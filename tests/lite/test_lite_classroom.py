"""What a student and a TA meet around the tutorials in the JupyterLite site, in Chromium.

* a new notebook (File > New > Notebook) imports nbtape with no ``%pip install``;
* a notebook has a visible Download (toolbar and File menu) that saves the ``.ipynb``;
* the tutorials show no broken image (no "Open in Colab" badge inside the site), and
  the site's first page says where the work lives and to close kernels;
* Lab's help plugins are off (the vendor's workaround for CVE-2026-40171), and a
  command button in a notebook's output does not reach Lab's command linker
  (CVE-2026-42557);
* offline after the first visit: with the site's server stopped, another tutorial
  opens and runs (its kernel's Pyodide from the browser's cache), and a reload shows
  the site again.
"""
import json
import re
import time

import pytest

from browser import checks
from browser.lab import Console, Notebook
from browser.notebooks import expectations, read, tutorial_notebooks
from browser.server import Offline
from . import page
from .site import StaticServer

pytestmark = pytest.mark.slow

HELP_PLUGINS = ("@jupyterlab/help-extension", "@jupyter-notebook/help-extension")
EXERCISE = "03_gradient_tape_basics.ipynb"
NEW_NOTEBOOK_CELL = ("import nbtape as nt\nx = nt.Variable(3.0)\nwith nt.GradientTape() as tape:\n"
                     "    y = x * x\nprint('dy/dx =', float(tape.gradient(y, x)))")
NEW_NOTEBOOK = """
async () => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('notebook:create-new', {kernelName: 'python'});
  await panel.context.ready;
  return panel.context.path;
}"""
SET_FIRST_CELL = """
([path, source]) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content) {
      w.content.widgets[0].model.sharedModel.setSource(source);
      return true;
    }
  }
  return false;
}"""
# a crafted output's button (CVE-2026-42557): a click would insert a cell, were it run
COMMAND_BUTTON = ("from IPython.display import HTML\n"
                  "HTML('<button id=\"crafted\" data-commandlinker-command="
                  "\"notebook:insert-cell-below\">click</button>')")
CELL_COUNT = """
(path) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content) return w.content.widgets.length;
  }
  return -1;
}"""
IMAGES = """
() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) img'))
  .map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0}))"""
WORKER_READY = """
async () => {
  const r = await navigator.serviceWorker.ready;
  return {active: !!r.active, controlled: !!navigator.serviceWorker.controller,
          caches: await caches.keys()};
}"""


def test_the_built_config_disables_lab_help(lite_site):
    config = json.loads((lite_site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert set(HELP_PLUGINS) <= set(config.get("disabledExtensions", [])), config


def test_a_new_notebook_imports_nbtape_without_installing(lite_page, lite_server,
                                                          lite_screenshots):
    pg, console = lite_page.fresh()
    try:
        path = pg.evaluate(NEW_NOTEBOOK)
        nb = Notebook(pg, lite_server, path, lite_screenshots, console).open(page.START_TIMEOUT)
        assert pg.evaluate(SET_FIRST_CELL, [path, NEW_NOTEBOOK_CELL])
        page.run_each(nb)
        cells = nb.cells()
        shown = "".join(o["text"] for o in cells[0]["outputs"])
        shot = nb.shot(nb.page, "new_notebook")
        assert "dy/dx = 6.0" in shown, (f"`import nbtape` in a new notebook: {shown!r} "
                                        f"(screenshot: {shot})")
        # from the site's own Pyodide files, not an install from its index
        assert any("static/pyodide/nbtape-" in r for r in lite_server.requests), \
            lite_server.log_tail()
        # Lab's help plugins are not running (their commands are not there)
        assert not pg.evaluate("() => ['help:about', 'help:open'].filter("
                               "c => window.jupyterapp.commands.hasCommand(c))")

        assert pg.evaluate(SET_FIRST_CELL, [path, COMMAND_BUTTON])
        page.run_each(nb)
        cells_before = pg.evaluate(CELL_COUNT, path)
        pg.locator("#crafted").click()
        time.sleep(1.0)                     # a command run by the click would be done
        assert pg.evaluate(CELL_COUNT, path) == cells_before, \
            "a command button in a notebook's output ran a Lab command when clicked"
    finally:
        lite_page.close_documents()


def test_an_exercise_notebook_downloads_and_shows_no_broken_image(open_lite_notebook,
                                                                  lite_server, lite_site):
    before = len(lite_server.requests)
    nb = open_lite_notebook(EXERCISE)
    pg = nb.page
    images = pg.evaluate(IMAGES)
    assert all(i["ok"] for i in images), f"broken images in {EXERCISE}: {images}"
    assert not [i for i in images if "colab" in (i["src"] or "")], images
    missing = [r for r in lite_server.requests[before:] if '" 404 ' in r]
    assert not missing, f"the page asked for files the site lacks: {missing}"
    for saved in (lite_site / "files").glob("*.ipynb"):
        assert "Open in Colab" not in saved.read_text(), saved.name

    button = pg.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                        "[data-jp-item-name='nbtape-download']")
    assert button.is_visible(), "no Download button in the notebook's toolbar"
    with pg.expect_download(timeout=30_000) as info:
        button.locator("button, jp-button").first.click()
    download = info.value
    assert download.suggested_filename == EXERCISE
    saved = json.loads(open(download.path(), encoding="utf-8").read())
    assert saved["nbformat"] == 4 and len(saved["cells"]) > 5

    pg.get_by_role("menuitem", name="File").click()
    menu = pg.locator(".lm-Menu:visible .lm-Menu-itemLabel", has_text=re.compile("^Download$"))
    assert menu.count() == 1, "File > Download is not in the File menu"
    pg.keyboard.press("Escape")


def test_the_first_page_says_where_the_work_lives(lite_site):
    nb = json.loads((lite_site / "files" / "contents.ipynb").read_text())
    text = "".join("".join(c["source"]) for c in nb["cells"][:3])
    for promise in ("browser's storage", "Download", "Close and Shut Down Notebook", "Offline"):
        assert promise in text, promise


@pytest.fixture
def own_server(lite_site):
    """The site on a server of the test's own, which the test stops ("offline")."""
    server = StaticServer(lite_site).start()
    try:
        yield server
    finally:
        server.stop()


def test_the_site_works_offline_after_the_first_visit(lite_browser, own_server,
                                                      lite_screenshots):
    offline = Offline(page.LOCAL_HOSTS)
    context = lite_browser.new_context(viewport={"width": 1280, "height": 1000})
    context.route("**/*", offline.route)
    try:
        pg = context.new_page()
        console = Console(pg)
        pg.goto(f"{own_server.url}/lab/index.html", timeout=page.START_TIMEOUT * 1000)
        pg.wait_for_function("() => !!window.jupyterapp", timeout=page.START_TIMEOUT * 1000)
        state = pg.evaluate(WORKER_READY)     # active: every file of the site is cached
        pg.wait_for_function("() => !!navigator.serviceWorker.controller", timeout=60_000)
        assert state["active"] and any(c.startswith("nbtape-site-") for c in state["caches"])

        own_server.stop()                     # the network is gone
        name = tutorial_notebooks()[1].name
        nb = Notebook(pg, own_server, name, lite_screenshots, console).open(page.START_TIMEOUT)
        page.run_each(nb)
        cells = page.without_font_cache_note(nb.cells())
        problems = checks.notebook_problems(cells, expectations(read(tutorial_notebooks()[1])))
        assert not problems, checks.report(f"{name} opened offline:", problems,
                                           [nb.shot(pg, "offline")], console,
                                           lite_screenshots.folder)

        pg.reload(timeout=page.START_TIMEOUT * 1000)
        pg.wait_for_function("() => !!window.jupyterapp", timeout=page.START_TIMEOUT * 1000)
        pg.evaluate("async () => { await window.jupyterapp.restored; }")
        assert not offline.blocked, offline.blocked
    finally:
        context.close()
