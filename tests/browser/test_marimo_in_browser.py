"""The marimo tutorial as a student opens it: ``marimo run`` on 127.0.0.1, headless Chromium.

``notebooks/marimo/03_gradient_tape_basics.py`` is served as an app (marimo from PyPI),
with every request that leaves 127.0.0.1 blocked and counted (none may be made).  The
tape's picture shows (an SVG), ``nt.tape_cell``'s summary shows, and the tape player, an
anywidget widget run by ``mo.ui.anywidget``, steps when its buttons are clicked: the
frame in its title moves, and the cell that reads ``player.value["frame"]`` follows.
Screenshots: ``tests/browser/screenshots/marimo_*.png``.
"""
import re

import pytest

from .marimo_app import LOCAL_HOSTS, MarimoApp
from .server import REPO, Offline

pytestmark = pytest.mark.slow

TUTORIAL = REPO / "notebooks" / "marimo" / "03_gradient_tape_basics.py"
LOAD_TIMEOUT = 120_000      # ms: the app's kernel imports nbtape and draws the pictures
# whether a player's title says "frame WANT of LAST" (marimo draws widgets in shadow roots)
SHOWS_FRAME = """([want, last]) => [...document.querySelectorAll('*')]
  .flatMap(e => e.shadowRoot ? [...e.shadowRoot.querySelectorAll('.nbtape-title')] : [])
  .concat([...document.querySelectorAll('.nbtape-title')])
  .some(t => t.innerText.includes(`frame ${want} of ${last}`))"""


@pytest.fixture(scope="module")
def marimo_app():
    app = MarimoApp(TUTORIAL)
    try:
        app.start()
    except AssertionError as exc:
        app.stop()
        pytest.fail(str(exc), pytrace=False)
    try:
        yield app
    finally:
        app.stop()


def frame_of(player):
    m = re.search(r"frame\s+(\d+)\s+of\s+(\d+)", player.locator(".nbtape-title").inner_text())
    return (int(m[1]), int(m[2])) if m else (None, None)


def test_the_marimo_tutorial_shows_its_pictures_and_plays_the_tape(marimo_app, browser,
                                                                  screenshots):
    offline = Offline(LOCAL_HOSTS)
    # the package's Chromium (one Playwright per thread), in a context of its own
    context = browser.new_context(viewport={"width": 1280, "height": 1000},
                                  service_workers="block")
    context.route("**/*", offline.route)
    try:
        page = context.new_page()
        uncaught = []
        page.on("pageerror", lambda exc: uncaught.append(str(exc)))
        page.goto(marimo_app.url + "/", timeout=LOAD_TIMEOUT)
        player = page.locator(".nbtape-player").first
        try:
            player.wait_for(timeout=LOAD_TIMEOUT)
            page.wait_for_function(
                "() => [...document.querySelectorAll('*')].some(e => e.shadowRoot && "
                "e.shadowRoot.querySelector('.nbtape-player .nbtape-picture svg')) || "
                "!!document.querySelector('.nbtape-player .nbtape-picture svg')",
                timeout=LOAD_TIMEOUT)
        finally:
            shots = [screenshots.take(page, "marimo_tutorial_opened")]
        frame, last = frame_of(player)
        assert frame == 0 and last and last >= 3, (frame, last, player.inner_text()[:300])
        assert page.get_by_text("The player is at frame 0 of").count() >= 1

        # the tape's picture and nt.tape_cell's summary (its picture too)
        body = page.locator("body").inner_text()
        assert "nt.tape_cell \u2192 tape" in body and "dloss/dw" in body, body[-2000:]
        assert page.locator("svg >> text=np.sin").count() >= 1

        for title, want in (("one frame on", 1), ("one frame on", 2), ("one frame back", 1),
                            ("last frame", last)):
            player.locator(f'button[title="{title}"]').click()
            page.wait_for_function(SHOWS_FRAME, arg=[want, last], timeout=30_000)
            assert frame_of(player) == (want, last)
            page.get_by_text(f"The player is at frame {want} of {last}").wait_for(timeout=30_000)
            shots.append(screenshots.take(page, f"marimo_player_after_{title.replace(' ', '_')}"
                                                f"_frame_{want}"))
        assert uncaught == [], uncaught
        summary = page.locator(".nbtape-cell-report").first
        shots.append(screenshots.take(summary, "marimo_tape_cell_summary"))
    finally:
        context.close()
    assert offline.blocked == [], \
        f"the marimo app tried to reach addresses outside 127.0.0.1: {offline.blocked[:5]}"
