"""The zero-server classroom: the JupyterLite site, offline, in headless Chromium.

The site is built by ``lite/build.py`` (the README's command), served on
127.0.0.1 and opened in Chromium with every request to another address blocked
and counted: none may be made.  Every tutorial runs top to bottom in the
in-browser (Pyodide) kernel with no error output, prints the numbers and the
warnings the server kernel printed (numpy cannot warn there: nbtape says it), and
shows its tape pictures as SVG (drawn in the browser by Viz.js).  A purpose-built notebook checks the live inspector's final values
after a loop and the tape player stepping when clicked.
"""
import json
import re
import time

import pytest

from browser import checks
from browser.notebooks import expectations, read, tutorial_notebooks
from . import outputs, page
from .site import lite_build

pytestmark = pytest.mark.slow

TUTORIALS = tutorial_notebooks()
PICTURE_WAIT = 60.0        # the first picture of a kernel waits for Viz.js to compile
FRAME = re.compile(r"frame\s+(\d+)\s+of\s+(\d+)")


# the built site ------------------------------------------------------------------------------
def test_the_site_holds_everything_it_needs(lite_site):
    config = json.loads((lite_site / "jupyter-lite.json").read_text())
    kernel = config["jupyter-config-data"]["litePluginSettings"][
        "@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.js"
    assert kernel["disablePyPIFallback"] is True
    pyodide = lite_site / "static" / "pyodide"
    lock = json.loads((pyodide / "pyodide-lock.json").read_text())
    for name in ("numpy", "micropip", "ipython", "matplotlib"):
        assert (pyodide / lock["packages"][name]["file_name"]).exists(), name
    index = {p.name.split("-")[0] for p in (lite_site / "pypi").glob("*.whl")}
    assert {"nbtape", "ipywidgets", "graphviz"} <= index
    assert (lite_site / "static" / "nbtape" / "viz-global.js").stat().st_size > 500_000
    assert "MIT" in (lite_site / "static" / "nbtape" / "NOTICE.md").read_text()
    assert list((lite_site / "files").glob("01_*.ipynb"))


# in the browser ------------------------------------------------------------------------------
def wait_for_pictures(nb, timeout=PICTURE_WAIT):
    """Cells whose picture was asked for while Viz.js loaded show it a moment later."""
    deadline = time.monotonic() + timeout
    while True:
        cells = page.without_font_cache_note(nb.cells())
        pending = [c["index"] for c in cells for o in c["outputs"]
                   if "Graphviz is loading" in o["text"]]
        if not pending or time.monotonic() > deadline:
            return cells
        time.sleep(0.5)


def offline_problems(lite_page, before):
    left = lite_page.offline.blocked[before:]
    return [f"the page tried to reach {len(left)} address(es) outside 127.0.0.1: {left[:5]}"] \
        if left else []


@pytest.mark.parametrize("saved", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs_in_the_browser(saved, open_lite_notebook, lite_page, lite_screenshots):
    before = len(lite_page.offline.blocked)
    nb = open_lite_notebook(saved.name)
    seconds = page.run_each(nb)
    page.TIMES[saved.stem] = (nb.start_seconds, seconds)
    cells = wait_for_pictures(nb)
    nbjson = lite_build.as_in_the_site(read(saved), saved.name)    # no Colab badge there
    problems = checks.notebook_problems(cells, expectations(nbjson))
    for k, text in outputs.saved_prints(nbjson).items():
        shown = "".join(o["text"] for o in cells[k]["outputs"]
                        if o["type"] == "stream" and o["name"] == "stdout")
        why = outputs.mismatch(text, shown)
        if why:
            problems.append(f"{checks.where(cells[k])}: {why} ({shown.strip()[:200]!r})")
    for k, starts in outputs.saved_warnings(nbjson).items():    # the ones the text promises
        shown = "".join(o["text"] for o in cells[k]["outputs"]
                        if o["type"] == "stream" and o["name"] == "stdout")
        for start in outputs.missing_warnings(starts, shown):
            problems.append(f"{checks.where(cells[k])}: the server printed {start!r}..., "
                            f"the browser did not")
    problems += offline_problems(lite_page, before)
    if nb.console.uncaught:
        problems.append(f"uncaught JavaScript errors: {nb.console.uncaught[:3]}")
    shots = [nb.shot(nb.page, "after_run_all")]
    shots += [nb.shot(nb.cell(c["index"]), f"cell_{c['index']:02d}") for c in cells
              if checks.worth_a_screenshot(c, problems)]
    assert not problems, checks.report(
        f"{saved.name} run cell by cell in JupyterLite (Pyodide kernel; {seconds:.0f} s) shows "
        f"{len(problems)} problem(s):", problems, shots, nb.console, lite_screenshots.folder)


def test_pictures_inspector_and_player_in_the_browser(open_lite_notebook, lite_page,
                                                      lite_screenshots):
    before = len(lite_page.offline.blocked)
    nb = open_lite_notebook(page.WIDGETS)
    page.run_each(nb)
    cells = wait_for_pictures(nb)
    shots = [nb.shot(nb.page, "widgets_after_run_all")]
    problems = checks.notebook_problems(cells) + offline_problems(lite_page, before)
    for k in page.GRAPH_CELLS:
        pictures = [o for o in cells[k]["outputs"] if checks.is_picture(o)]
        if not (pictures and checks.picture_ok(pictures[0])
                and "np.sin" in pictures[0]["svgText"]):
            problems.append(f"cell {k} (`tape.graph()`) shows no SVG picture of the tape: "
                            f"{checks.describe_outputs(cells[k])}")
    assert not problems, checks.report("In JupyterLite:", problems, shots, nb.console,
                                       lite_screenshots.folder)

    # the inspector ends on the value the loop printed
    printed = "".join(o["text"] for o in cells[page.INSPECTOR_CELL]["outputs"]
                      if o["type"] == "stream")
    final = re.search(r"loop finished: w = (\S+)", printed)
    inspector = nb.widget(page.INSPECTOR_CELL)
    assert final, f"the loop did not finish: {printed!r}"
    nb.wait_for_text(inspector, re.escape(f"{float(final[1]):.4g}"), 20,
                     f"the inspector to show w's final value {final[1]}")
    shots.append(nb.shot(nb.cell(page.INSPECTOR_CELL), "inspector_after_loop"))

    # the player draws the tape and steps when clicked
    player = nb.widget(page.PLAYER_CELL)
    nb.wait_for_text(player, r"frame\s+0\s+of\s+\d+", 20, "the tape player's first frame")
    last = int(FRAME.search(player.inner_text())[2])
    svg = player.locator("svg")
    deadline = time.monotonic() + PICTURE_WAIT
    while svg.count() == 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert svg.count() >= 1, "the tape player shows no picture of the tape"
    picture = svg.first.evaluate("e => e.outerHTML")
    player.locator('button[title="one frame on"]').click()
    nb.wait_for_text(player, rf"frame\s+1\s+of\s+{last}\b", 20,
                     "the tape player to step to frame 1 when ▶ is clicked")
    shots.append(nb.shot(nb.cell(page.PLAYER_CELL), "player_frame_1"))
    assert svg.first.evaluate("e => e.outerHTML") != picture, \
        "stepping the tape player did not change its picture"
    assert not offline_problems(lite_page, before)


def test_the_site_carries_the_widgets_front_end(lite_site):
    # nbtape's widgets are anywidget widgets: the site ships anywidget's JupyterLab
    # extension (the front end that loads each widget's ES module) and its wheels
    extensions = json.loads((lite_site / "jupyter-lite.json").read_text())[
        "jupyter-config-data"]["federated_extensions"]
    assert "anywidget" in {e["name"] for e in extensions}
    assert (lite_site / "extensions" / "anywidget" / "package.json").is_file()
    index = {p.name.split("-")[0].lower() for p in (lite_site / "pypi").glob("*.whl")}
    assert {"anywidget", "psygnal", "typing_extensions"} <= index
    # ... from the index: the shipped Pyodide lock never names Pyodide's own rebuilt
    # typing-extensions (not shipped); where it names one, it is the index's wheel
    lock = json.loads((lite_site / "static" / "pyodide" / "pyodide-lock.json").read_text())
    ours = {p.name for p in (lite_site / "pypi").glob("typing_extensions-*.whl")}
    entry = lock["packages"].get("typing-extensions")
    assert "numpy" in lock["packages"] and (entry is None or entry["file_name"] in ours)
