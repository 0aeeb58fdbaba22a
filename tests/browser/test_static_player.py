"""The tape player without a kernel, in Chromium: no Jupyter server, no kernel behind the page.

* ``player.save("backprop.html")`` opened as a file: every step is clicked through and
  each frame's picture is the live player's picture of that frame; the list of steps
  keeps the current one in sight; Play runs to the end and shows "play" again.
* A notebook with a player cell, executed by nbclient and saved: its stored HTML output
  is put into a page the way JupyterLab shows a trusted output (``innerHTML``, then each
  script run again), and clicked through against the pictures the kernel's live player
  drew; with scripts and inline SVG removed, as JupyterLab's sanitizer does for an
  untrusted notebook, the last frame shows as a PNG with every caption.
"""
import json
import os

import nbclient
import nbformat
import pytest

import nbtape as nt
from nbtape.notebook.render import find_engine

from .server import REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_engine() is None, reason="no Graphviz layout program")]

VIEWPORT = {"width": 1280, "height": 720}
TAPE = """\
import numpy as np
import nbtape as nt
x = nt.Variable(np.array([0.5, -1.0]), name="x")
w = nt.Variable(0.8, name="w")
with nt.GradientTape(persistent=True) as tape:
    h = np.tanh(x * w)
    loss = np.sum(h * h) + w
player = nt.TapePlayer(tape, loss, names={loss: "loss", h: "h"}, interval=0.05)
player"""
LIVE = """\
import json
with open("live_frames.json", "w") as f:
    json.dump([player.svg(k) for k in range(len(player.frames))], f)"""
# Jupyter's way of showing trusted HTML: set innerHTML, then replace each <script> by a
# fresh copy so that the browser runs it (innerHTML alone never runs scripts).
SHOW_LIKE_JUPYTER = """([html, scripts]) => {
  const out = document.getElementById("out");
  out.innerHTML = html;
  if (scripts) for (const old of out.querySelectorAll("script")) {
    const s = document.createElement("script");
    for (const a of old.attributes) s.setAttribute(a.name, a.value);
    s.textContent = old.textContent;
    old.replaceWith(s);
  }
  if (!scripts) for (const e of out.querySelectorAll("script, svg")) e.remove();
}"""
# How the page's parser writes an SVG string: the live picture, serialized as the
# static player's picture is, so that the two compare as text.
AS_PARSED = "s => { const d = document.createElement('div'); d.innerHTML = s; return d.innerHTML; }"
VIEW = """root => ({
  title: root.querySelector('.nbtape-title').textContent,
  caption: root.querySelector('.nbtape-caption').textContent,
  picture: root.querySelector('.nbtape-picture').innerHTML,
  play: root.querySelector('.nbtape-play').textContent,
  current: (() => {
    const list = root.querySelector('.nbtape-story');
    const lis = [...list.children];
    const i = lis.findIndex(li => li.style.fontWeight === '600');
    const a = list.getBoundingClientRect(), b = lis[i].getBoundingClientRect();
    return {index: i, visible: b.top >= a.top - 1 && b.bottom <= a.bottom + 1,
            lines: Math.round(b.height / parseFloat(getComputedStyle(lis[i]).lineHeight))};
  })(),
})"""


def make_player():
    namespace = {}
    exec(TAPE.rsplit("\n", 1)[0].replace("interval=0.05", "interval=0.05, display=False"),
         namespace)
    return namespace["player"]


def click_through(page, root, live_svgs, captions, shots, label):
    """Step with every button and the slider; each frame must be the live one's."""
    n = len(captions)
    last = n - 1
    want = [page.evaluate(AS_PARSED, s) for s in live_svgs]
    button = {t: root.locator(f'button[title="{t}"]') for t in
              ("first frame", "one frame back", "one frame on", "jump to the reverse pass",
               "last frame", "play")}

    def check(k, how):
        view = root.evaluate(VIEW)
        where = f"{label}: after {how}, frame {k} of {last}"
        assert view["title"].startswith(f"Tape player · frame {k} of {last}"), \
            f"{where}: the title says {view['title']!r}"
        assert view["caption"] == captions[k], f"{where}: caption {view['caption']!r}"
        differ = next((i for i, (a, b) in enumerate(zip(view["picture"], want[k])) if a != b),
                      min(len(view["picture"]), len(want[k])))
        assert view["picture"] == want[k], (
            f"{where}: the picture differs from the live player's frame {k} "
            f"from character {differ}")
        assert view["current"]["index"] == k and view["current"]["visible"], \
            f"{where}: the list of steps should show step {k} highlighted and in sight: " \
            f"{view['current']}"
        return view

    check(0, "opening")
    lines = []
    for k in range(1, n):
        button["one frame on"].click()
        lines.append(check(k, "clicking ▶ (one frame on)")["current"]["lines"])
    shots.take(root, f"{label}_last_frame")
    # a long backward caption wraps instead of being cut to one line
    assert max(lines) >= 2, f"{label}: no caption in the list took more than one line {lines}"
    button["one frame on"].click()
    check(last, "clicking ▶ on the last frame")
    for k in range(last - 1, -1, -1):
        button["one frame back"].click()
        check(k, "clicking ◀ (one frame back)")
    button["jump to the reverse pass"].click()
    reverse = check(n // 2, "clicking ⇤ reverse pass")
    assert reverse["title"].endswith("reverse pass"), reverse["title"]
    button["last frame"].click()
    check(last, "clicking ▶| (last frame)")
    button["first frame"].click()
    check(0, "clicking |◀ (first frame)")
    root.locator('input[type="range"]').fill("3")
    check(3, "moving the slider to 3")
    button["play"].click()
    page.wait_for_function(
        "r => r.querySelector('.nbtape-title').textContent.includes('frame %d of')" % last,
        arg=root.element_handle(), timeout=10_000)
    page.wait_for_function("r => r.querySelector('.nbtape-play').textContent.includes('play')",
                           arg=root.element_handle(), timeout=5_000)
    check(last, "pressing play")
    shots.take(root, f"{label}_after_play")


def test_a_saved_html_player_steps_through_the_live_players_frames(browser, screenshots,
                                                                  tmp_path):
    p = make_player()
    path = tmp_path / "backprop.html"
    p.save(path)
    live = [p.svg(k) for k in range(len(p.frames))]
    captions = [f.caption for f in p.frames]
    p.close()
    assert len(captions) == 1 + 5 + 5 + 1
    page = browser.new_page(viewport=VIEWPORT)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"requested {r.url}")
            if not r.url.startswith(("file:", "data:")) else None)
    try:
        page.goto(path.as_uri())
        root = page.locator(".nbtape-static-player")
        assert root.locator(".nbtape-fallback").is_hidden()
        click_through(page, root, live, captions, screenshots, "static_player_file")
        assert not errors, errors
    finally:
        page.close()


def test_a_saved_notebooks_player_works_without_a_kernel(browser, screenshots, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(TAPE), nbformat.v4.new_code_cell(LIVE)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.km = client.create_kernel_manager()
    client.start_new_kernel(env=env)
    try:
        client.start_new_kernel_client()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    finally:
        client._cleanup_kernel()
    nbformat.write(nb, tmp_path / "player.ipynb")
    saved = nbformat.read(tmp_path / "player.ipynb", as_version=4)
    html_outputs = [o.data["text/html"] for o in saved.cells[0].outputs
                    if "text/html" in o.get("data", {})]
    assert len(html_outputs) == 1 and "nbtape-static-player" in html_outputs[0], \
        f"the player cell should store one HTML output (the static player): {html_outputs}"
    live = json.loads((tmp_path / "live_frames.json").read_text())
    captions = make_player_captions()
    assert len(live) == len(captions)
    page = browser.new_page(viewport=VIEWPORT)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.set_content('<!DOCTYPE html><html><body><div id="out"></div></body></html>')
        page.evaluate(SHOW_LIKE_JUPYTER, [html_outputs[0], True])
        page.locator("details.nbtape-snapshot > summary").click()     # folded when saved
        root = page.locator(".nbtape-static-player")
        click_through(page, root, live, captions, screenshots, "static_player_notebook")
        assert not errors, errors

        # untrusted: no script, no inline SVG; the picture is a PNG and every step listed
        page.evaluate(SHOW_LIKE_JUPYTER, [html_outputs[0], False])
        page.locator("details.nbtape-snapshot > summary").click()
        img = page.locator(".nbtape-fallback img")
        img.wait_for(state="visible")
        size = img.evaluate("i => [i.complete, i.naturalWidth, i.src.slice(0, 22)]")
        assert size[0] and size[1] > 100 and size[2] == "data:image/png;base64,", size
        items = page.locator(".nbtape-fallback li").all_inner_texts()
        assert items == captions
        screenshots.take(page.locator("#out"), "static_player_untrusted")
    finally:
        page.close()


def make_player_captions():
    p = make_player()
    captions = [f.caption for f in p.frames]
    p.close()
    return captions
