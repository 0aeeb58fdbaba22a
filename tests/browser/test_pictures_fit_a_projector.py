"""At a projector's 1280x720, nbtape's pictures and widgets are whole and readable in JupyterLab.

One purpose-built notebook (written here, into the server's root) draws notebook 12's
picture (the one that used to run off the right edge), the same picture forced left to
right (wider than the page: it must scroll, not be cut), a chain-rule picture with
edge labels, the inspector and the training monitor.  In the page, at 1280x720:

* every tape picture (an ``<img>`` of the SVG, as Lab shows image/svg+xml) either fits
  inside its output area or that area scrolls sideways to the rest of it;
* the smallest text of every picture is at least 14 CSS px as shown (the SVG's font
  sizes times the size it is shown at over its own size);
* every piece of text in the inspector and the monitor (HTML and their inline SVG
  charts) is at least 14 px.

Each output checked is photographed.
"""
import pytest

from . import checks
from .notebooks import WHO, new_notebook, write

pytestmark = pytest.mark.slow

PROJECTOR = {"width": 1280, "height": 720}
MIN_PX = 14.0
NAME = "lecture_hall.ipynb"

WIDE = """\
rng = np.random.default_rng(0)
w = nt.Variable(rng.standard_normal((3, 2)), name="w")
b = nt.Variable(np.zeros(2), name="b")
x = np.array([[1.0, 2.0, 3.0]])
with nt.GradientTape(persistent=True) as tape:
    y = x @ w + b
    loss = np.mean(y ** 2)
dl_dw, dl_db = tape.gradient(loss, [w, b])
tape.graph(names={y: "y", loss: "loss"})"""
FORCED_LR = 'tape.graph(names={y: "y", loss: "loss"}, rankdir="LR")'
CHAIN = """\
u = nt.Variable(0.7, name="u")
v = nt.Variable(1.3, name="v")
with nt.GradientTape(persistent=True) as t2:
    g = u * v + np.exp(u) * v
t2.gradient(g, [u, v])
t2.graph(view="chain", names={g: "g"})"""
INSPECTOR = "insp = nt.inspect(w, b)\nfor _ in range(3):\n" \
            "    with nt.GradientTape() as t3:\n        l3 = np.sum((x @ w + b) ** 2)\n" \
            "    gw, gb = t3.gradient(l3, [w, b])\n    w.assign_sub(0.01 * gw)\n" \
            "    b.assign_sub(0.01 * gb)"
MONITOR = "mon = nt.TrainingMonitor(total=20)\nfor k in mon.range(20):\n" \
          "    mon.log(loss=1.0 / (k + 1), grads=[np.array([1.0 / (k + 1)])])"
CELLS = (WHO, WIDE, FORCED_LR, CHAIN, INSPECTOR, MONITOR)
PICTURE_CELLS = (1, 2, 3)
WIDGET_CELLS = (4, 5)

# For each picture output: how wide it is shown against its output area, whether that
# area scrolls to the rest, and the smallest text as shown.
PICTURES_JS = """
(k) => {
  const panel = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.context);
  const cell = panel.content.widgets[k];
  return Array.from(cell.node.querySelectorAll('.jp-OutputArea-output[data-mime-type="image/svg+xml"]'))
    .map(el => {
      const img = el.querySelector('img');
      const src = decodeURIComponent(img.src.slice(img.src.indexOf(',') + 1));
      const doc = new DOMParser().parseFromString(src, 'image/svg+xml');
      const svg = doc.documentElement;
      const vb = svg.getAttribute('viewBox').trim().split(/[ ,]+/).map(Number);
      const sizes = Array.from(doc.querySelectorAll('text'))
        .map(t => parseFloat(t.getAttribute('font-size'))).filter(s => s > 0);
      const shown = img.getBoundingClientRect(), box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      return {imgLeft: shown.left, imgRight: shown.right, imgWidth: shown.width,
              areaRight: box.right, areaWidth: el.clientWidth, scrollWidth: el.scrollWidth,
              overflowX: style.overflowX, viewBoxWidth: vb[2],
              minFont: Math.min(...sizes), texts: sizes.length};
    });
}"""

# Every visible piece of text in a cell's widget output: its shown size in px.
WIDGET_TEXT_JS = """
(k) => {
  const panel = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.context);
  const cell = panel.content.widgets[k];
  const out = [];
  for (const area of cell.node.querySelectorAll('.widget-html-content, .nbtape-widget')) {
    const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode, el = node.parentElement;
      if (!node.textContent.trim() || !el || el.closest('title')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;        // hidden (a folded <details>)
      let px = parseFloat(getComputedStyle(el).fontSize);
      const svg = el.closest('svg');
      if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width)
        px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      out.push({text: node.textContent.trim().slice(0, 40), px: Math.round(px * 10) / 10});
    }
  }
  return out;
}"""


@pytest.fixture
def projector(lab_page):
    """The Lab page at 1280x720 for one test, then back to its usual size."""
    page, _ = lab_page.fresh()
    before = page.viewport_size
    page.set_viewport_size(PROJECTOR)
    try:
        yield page
    finally:
        if not page.is_closed():
            page.set_viewport_size(before)


def picture_problems(k, pic):
    """What is wrong with one picture output of cell ``k`` (none: an empty list)."""
    problems = []
    shown_px = pic["minFont"] * pic["imgWidth"] / pic["viewBoxWidth"]
    if shown_px < MIN_PX - 0.05:
        problems.append(f"cell {k}: the picture's smallest text shows at {shown_px:.1f} px "
                        f"(font-size {pic['minFont']} in a {pic['viewBoxWidth']:.0f}-unit-wide "
                        f"SVG shown {pic['imgWidth']:.0f} px wide); it must be at least "
                        f"{MIN_PX:g} px")
    fits = pic["imgRight"] <= pic["areaRight"] + 1
    scrolls = (pic["overflowX"] in ("auto", "scroll")
               and pic["scrollWidth"] >= pic["imgWidth"] - 1)
    if not (fits or scrolls):
        problems.append(f"cell {k}: the picture is {pic['imgWidth']:.0f} px wide and runs "
                        f"past its output area ({pic['areaWidth']} px) with no way to "
                        f"scroll to the rest (overflow-x: {pic['overflowX']})")
    return problems, fits, shown_px


def test_pictures_and_widgets_fit_and_read_at_1280x720(projector, lab_root, open_notebook):
    write(lab_root["root"] / "purpose-built" / NAME, new_notebook(*CELLS))
    nb = open_notebook(f"purpose-built/{NAME}")
    nb.run_all()
    cells = nb.cells()
    shots = [nb.shot(nb.cell(k), f"projector_cell_{k}") for k in PICTURE_CELLS + WIDGET_CELLS]
    problems = checks.notebook_problems(cells)
    measured = {}
    for k in PICTURE_CELLS:
        pics = nb.page.evaluate(PICTURES_JS, k)
        if len(pics) != 1:
            problems.append(f"cell {k}: expected one picture, found {len(pics)}")
            continue
        found, fits, shown_px = picture_problems(k, pics[0])
        problems += found
        measured[k] = (fits, shown_px, pics[0])
    if 1 in measured and not measured[1][0]:
        problems.append(f"cell 1 (notebook 12's picture): it should fit a 1280-px window "
                        f"whole (laid out top to bottom), but is {measured[1][2]['imgWidth']:.0f}"
                        f" px wide in a {measured[1][2]['areaWidth']} px output area")
    if 2 in measured and measured[2][0]:
        problems.append("cell 2 (forced left to right) fitted: it no longer tests scrolling")
    for k in WIDGET_CELLS:
        texts = nb.page.evaluate(WIDGET_TEXT_JS, k)
        if not texts:
            problems.append(f"cell {k}: the widget shows no text to measure")
        small = [t for t in texts if t["px"] < MIN_PX]
        if small:
            problems.append(f"cell {k}: widget text under {MIN_PX:g} px: {small[:6]}")
    assert not problems, checks.report(
        f"purpose-built/{NAME} at {PROJECTOR['width']}x{PROJECTOR['height']}: pictures or "
        f"widgets a lecture hall cannot read, or cut off:", problems, shots, nb.console,
        nb.shots.folder)
