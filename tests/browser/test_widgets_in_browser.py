"""nbtape's pictures and widgets in a real browser, with small purpose-built notebooks.

Each test runs in JupyterLab and in Notebook 7 (``open_in_each_front_end``; the
screenshots of Notebook 7 are named ``notebook7_*``).

* a tape picture (``tape.graph()`` and ``%%tape --graph``) appears as a decoded SVG
  carrying the tape's labels (JupyterLab draws image/svg+xml as an <img> of the SVG);
* the live inspector's value visibly changes more than once *while* a loop runs
  (sampled in the page every 25 ms; a sample counts only if the loop's end marker was
  not printed yet), and ends on the value the kernel has;
* the training monitor does the same;
* the tape player steps when its buttons are clicked, and plays when Play is pressed.

Every notebook's first cell prints the kernel's Python and nbtape: they must be the
interpreter running pytest and this checkout.
"""
import re
import sys
import time

import pytest

from . import checks
from .notebooks import LOOP_END
from .server import REPO

pytestmark = pytest.mark.slow

LIVE_TIMEOUT = 30.0         # from Run All to the loop's widget showing a few changes
FRAME = re.compile(r"frame\s+(\d+)\s+of\s+(\d+)")


# helpers ---------------------------------------------------------------------------------
def run(open_in_each_front_end, name):
    nb = open_in_each_front_end(f"purpose-built/{name}")
    nb.run_all()
    return nb, nb.cells()


def printed(cell):
    return "".join(o["text"] for o in cell["outputs"] if o["type"] == "stream")


def assert_kernel_is_ours(nb, cells, shots):
    """Cell 0 printed ``python: ...`` and ``nbtape: ...``: this Python, this checkout."""
    text = printed(cells[0])
    want_python = f"python: {sys.executable}"
    want_nbtape = f"nbtape: {REPO / 'nbtape' / '__init__.py'}"
    assert want_python in text and want_nbtape in text, checks.report(
        f"{nb.path}: the kernel should run this Python and this checkout's nbtape.\n"
        f"expected lines: {want_python!r} and {want_nbtape!r}\ncell 0 printed: {text!r}",
        [], shots, nb.console, nb.shots.folder)


def assert_clean(nb, cells, shots):
    problems = checks.notebook_problems(cells)
    if nb.console.uncaught:
        problems.append(f"uncaught JavaScript errors: {nb.console.uncaught[:3]}")
    assert not problems, checks.report(f"{nb.path} in {nb.front_end} shows problems:",
                                       problems, shots, nb.console, nb.shots.folder)


def distinct(texts):
    """The texts in order of first appearance, without repeats.

    >>> distinct(["0", "0", "0.6", "1.08", "0.6"])
    ['0', '0.6', '1.08']
    """
    seen = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    return seen


def while_running(samples):
    """The readings taken before the loop's end marker appeared (loading text dropped)."""
    return [s["text"] for s in samples
            if not s["ended"] and s["text"] and not s["text"].startswith("Loading widget")]


def shoot_mid_loop(nb, cell, label, wanted=3, timeout=LIVE_TIMEOUT):
    """Once ``wanted`` distinct readings were seen with the loop still running, take a
    screenshot of the widget (the mid-loop view); its path, or None if the loop ended
    first (the assertions afterwards say what was seen)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        samples = nb.peek_sampling()
        if any(s["ended"] for s in samples):
            return None
        if len(distinct(while_running(samples))) >= wanted:
            return nb.shot(nb.widget(cell), label)
        time.sleep(0.05)
    return None


def timeline(samples, limit=30):
    """``t=120ms '0.6' | ...``: the readings for a failure message."""
    parts = [f"t={s['t']}ms{' (after the loop)' if s['ended'] else ''} {s['text']!r}"
             for s in samples[:limit]]
    more = f" | ... {len(samples) - limit} more" if len(samples) > limit else ""
    return " | ".join(parts) + more


# pictures --------------------------------------------------------------------------------
# (cell, what the student typed, labels the picture must carry)
PICTURES = [(2, "tape.graph()", ("x", "np.sin", "np.multiply")),
            (4, "%%tape t --graph", ("x", "np.exp"))]


def picture_problem(cell, what, labels):
    """Why cell ``cell`` does not show the tape as an SVG picture, or None."""
    pictures = [o for o in cell["outputs"] if checks.is_picture(o)]
    if not pictures:
        return (f"`{what}` (cell {cell['index']}) should show the tape as a picture (an "
                f"image/svg+xml output); its outputs were: {checks.describe_outputs(cell)}, "
                f"showing {[o['text'][:200] for o in cell['outputs']]}")
    pic = pictures[0]
    if not checks.picture_ok(pic):
        return (f"`{what}` (cell {cell['index']}): the picture did not appear (shown as "
                f"{pic['how']}, decoded={pic['decoded']}, svg={pic['isSvg']}, "
                f"{pic['width']}x{pic['height']} px)")
    missing = [label for label in labels if label not in pic["svgText"]]
    if missing:
        return (f"`{what}` (cell {cell['index']}): the picture lacks the labels {missing}; "
                f"its text reads {pic['svgText'][:300]!r}")
    return None


def test_tape_pictures_appear_as_svg(open_in_each_front_end):
    nb, cells = run(open_in_each_front_end, "tape_pictures.ipynb")
    shots = [nb.shot(nb.cell(k), f"picture_cell_{k}") for k, _, _ in PICTURES]
    assert_kernel_is_ours(nb, cells, shots)
    assert_clean(nb, cells, shots)
    problems = [p for p in (picture_problem(cells[k], what, labels)
                            for k, what, labels in PICTURES) if p]
    assert not problems, checks.report("The tape pictures did not appear as SVG:", problems,
                                       shots, nb.console, nb.shots.folder)


# the live inspector ------------------------------------------------------------------------
def test_inspector_values_change_while_the_loop_runs(open_in_each_front_end):
    nb = open_in_each_front_end("purpose-built/live_inspector.ipynb")
    nb.start_sampling(cell=1, marker=LOOP_END, column="value", row="w")
    nb.start_run_all()
    mid = shoot_mid_loop(nb, 1, "inspector_during_loop")
    nb.wait_finished()
    samples, ticks = nb.stop_sampling()
    cells = nb.cells()
    shots = [s for s in (mid, nb.shot(nb.cell(1), "inspector_after_loop")) if s]
    assert_kernel_is_ours(nb, cells, shots)
    assert_clean(nb, cells, shots)

    during = distinct(while_running(samples))
    assert len(during) >= 3, checks.report(
        "While the loop ran (25 steps, 0.15 s each), the inspector's `value` of w should "
        f"visibly change more than once; it showed {len(during)} distinct value(s): "
        f"{during}\n{ticks} samples of the page, readings: {timeline(samples)}",
        [], shots, nb.console, nb.shots.folder)

    # After the loop: the value the kernel has (4 significant digits on screen).
    m = re.search(rf"{LOOP_END}: w = (\S+)", printed(cells[1]))
    final = samples[-1]["text"] if samples else None
    assert m and final and abs(float(final) - float(m[1])) <= 1e-3 * abs(float(m[1])), \
        checks.report(f"After the loop the inspector should show w's final value "
                      f"{m[1] if m else '?'} (as the cell printed); it shows {final!r}",
                      [], shots, nb.console, nb.shots.folder)


# the training monitor ----------------------------------------------------------------------
def test_training_monitor_updates_while_the_loop_runs(open_in_each_front_end):
    nb = open_in_each_front_end("purpose-built/live_monitor.ipynb")
    nb.start_sampling(cell=1, marker=LOOP_END)
    nb.start_run_all()
    mid = shoot_mid_loop(nb, 1, "monitor_during_loop")
    nb.wait_finished()
    samples, ticks = nb.stop_sampling()
    cells = nb.cells()
    shots = [s for s in (mid, nb.shot(nb.cell(1), "monitor_after_loop")) if s]
    assert_kernel_is_ours(nb, cells, shots)
    assert_clean(nb, cells, shots)

    during = distinct(while_running(samples))
    assert len(during) >= 3, checks.report(
        "While the loop ran (25 steps, 0.15 s each), the training monitor should visibly "
        f"update more than once; it showed {len(during)} distinct state(s)\n"
        f"{ticks} samples of the page, readings: {timeline(samples, 10)}",
        [], shots, nb.console, nb.shots.folder)
    final = samples[-1]["text"] if samples else ""
    assert re.search(r"\b25\s*/\s*25\b", final), checks.report(
        f"After the loop the monitor should count 25/25 steps; it shows {final!r}",
        [], shots, nb.console, nb.shots.folder)


# the tape player ---------------------------------------------------------------------------
def player_button(widget, title, text):
    """The player's button with tooltip ``title`` (or, failing that, label ``text``)."""
    by_title = widget.locator(f'button[title="{title}"]')
    if by_title.count() == 1:
        return by_title
    by_text = widget.locator("button", has_text=text)
    if by_text.count() == 1:
        return by_text
    labels = widget.locator("button").evaluate_all(
        "bs => bs.map(b => `${b.innerText.trim()} (title ${b.title})`)")
    raise AssertionError(f"the tape player has no button {text!r} (tooltip {title!r}); "
                         f"its buttons are: {labels}")


def player_view(widget):
    """``(frame, last, text, picture markup)`` as the player shows them."""
    text = widget.inner_text()
    m = FRAME.search(text)
    svgs = widget.locator("svg")
    picture = svgs.first.evaluate("e => e.outerHTML") if svgs.count() else ""
    return (int(m[1]) if m else None, int(m[2]) if m else None, text, picture)


CURRENT_STEP = """w => {
  const li = [...w.querySelectorAll('li')].find(e => e.style.fontWeight === '600');
  if (!li) return null;
  const box = li.closest('.nbtape-story').getBoundingClientRect();
  const r = li.getBoundingClientRect();
  const size = parseFloat(getComputedStyle(li).fontSize);
  return {value: li.value, visible: r.top >= box.top - 1 && r.bottom <= box.bottom + 1,
          px: size, lines: Math.round(r.height / parseFloat(getComputedStyle(li).lineHeight))};
}"""


def test_tape_player_steps_when_its_buttons_are_clicked(open_in_each_front_end):
    nb, cells = run(open_in_each_front_end, "tape_player.ipynb")
    widget = nb.widget(2)
    shots = [nb.shot(nb.cell(2), "player_frame_0")]
    assert_kernel_is_ours(nb, cells, shots)
    assert_clean(nb, cells, shots)

    frame, last, text, picture = player_view(widget)
    assert frame == 0 and last and last >= 3, checks.report(
        f"The tape player should open on 'frame 0 of N' (N >= 3 for y = sin(x)·x); "
        f"it shows: {text[:400]!r}", [], shots, nb.console, nb.shots.folder)
    box = widget.locator("svg").first.bounding_box() if picture else None
    assert box and box["width"] >= 20 and box["height"] >= 20, checks.report(
        f"The tape player should show the tape's picture (an inline <svg>); "
        f"picture markup: {picture[:200]!r}, box: {box}", [], shots, nb.console,
        nb.shots.folder)

    # (button tooltip, label, frame expected after the click)
    script = [("one frame on", "▶", 1), ("one frame on", "▶", 2), ("one frame back", "◀", 1),
              ("last frame", "▶|", last), ("first frame", "|◀", 0)]
    before = (frame, text, picture)
    for n, (title, label, want) in enumerate(script, 1):
        player_button(widget, title, label).click()
        nb.wait_for_text(widget, rf"frame\s+{want}\s+of\s+{last}\b", 15,
                         f"the tape player to show frame {want} of {last} after "
                         f"clicking {label} ({title})")
        now = player_view(widget)
        shots.append(nb.shot(nb.cell(2), f"player_{n}_{title}_then_frame_{want}"))
        # the list of steps shows the current one (it cannot scroll itself), readable
        step = widget.evaluate(CURRENT_STEP)
        assert step and step["value"] == want and step["visible"] and step["px"] >= 14, \
            checks.report(f"After clicking {label} the list of steps should show step {want} "
                          f"highlighted, in sight and at least 14 px: {step}", [], shots,
                          nb.console, nb.shots.folder)
        # A new frame is a new picture (another op highlighted, or adjoints written in).
        assert now[3] != before[2], checks.report(
            f"Clicking {label} ({title}) moved the title from frame {before[0]} to frame "
            f"{want}, but the picture stayed the same", [], shots, nb.console,
            nb.shots.folder)
        before = (now[0], now[2], now[3])

    # Play: the browser's timer steps the frame itself; each frame must show in turn.
    nb.start_sampling(cell=2, marker="(never printed)")
    play = widget.locator("button.nbtape-play").first
    play.click()
    try:
        nb.wait_for_text(widget, rf"frame\s+{last}\s+of\s+{last}\b", 20 + last,
                         f"the tape player to play through to frame {last}")
    finally:
        samples, ticks = nb.stop_sampling()
    # played to the end, the button offers "play" again (not "pause")
    try:
        nb.page.wait_for_function("b => b.title === 'play'", arg=play.element_handle(),
                                  timeout=5_000)
    except Exception:                       # noqa: BLE001 - reported below with its picture
        pass
    shots.append(nb.shot(nb.cell(2), "player_after_play"))
    assert play.get_attribute("title") == "play", checks.report(
        f"After playing to frame {last} the Play button should show play again; it reads "
        f"{play.inner_text()!r} ({play.get_attribute('title')!r})", [], shots, nb.console,
        nb.shots.folder)
    frames = [int(m[1]) for m in (FRAME.search(s["text"] or "") for s in samples) if m]
    shown = distinct(frames)
    assert shown == sorted(shown) and len(shown) >= 3, checks.report(
        f"Pressing Play should step through the frames in order (0, 1, 2, ... {last}); "
        f"the title showed frames {shown}", [], shots, nb.console, nb.shots.folder)
    # beside the live widget, the folded copy for viewers without a kernel ran its script
    static = nb.cell(2).locator(".nbtape-static-player[data-ready] .nbtape-title")
    assert static.count() == 1 and f"frame 0 of {last}" in static.text_content(), \
        checks.report("The player's static copy (for viewers without a kernel) should have "
                      "built its own player in JupyterLab", [], shots, nb.console,
                      nb.shots.folder)
    assert_clean(nb, nb.cells(), shots)
