"""Week 1's slide deck in Chromium, served from its folder on 127.0.0.1 with every request
that leaves that server blocked and counted (none may be made):

* reveal.js starts and the deck has more than one slide;
* MathJax (from the deck's folder) typesets the tutorials' formulas;
* the tape player's slide shows the player with its controls, and Play steps through
  its frames (the title's frame number moves on by itself);
* no request fails (every file the deck asks for is there).
"""
import functools
import http.server
import importlib.util
import threading

import pytest

from .server import REPO

pytestmark = pytest.mark.slow

VIEWPORT = {"width": 1280, "height": 800}
_spec = importlib.util.spec_from_file_location("decks", REPO / "tools" / "decks.py")
decks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(decks)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served_deck(tmp_path_factory):
    out = tmp_path_factory.mktemp("decks")
    decks.build(out, weeks=[1])
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_week_1_runs_offline_with_the_player_playing(browser, served_deck):
    outside, failed, errors = [], [], []
    page = browser.new_page(viewport=VIEWPORT)
    try:
        def route(r):
            if r.request.url.startswith(served_deck + "/"):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()
        page.route("**/*", route)
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served_deck + "/week1.html")
        page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
        assert page.evaluate("Reveal.getTotalSlides()") > 1
        page.wait_for_function("document.querySelectorAll('mjx-container').length > 0",
                               timeout=30_000)
        where = page.evaluate("""() => Reveal.getIndices(
            document.querySelector('.nbtape-static-player[data-ready]').closest('section'))""")
        page.evaluate(f"Reveal.slide({where['h']}, {where['v'] or 0})")
        player = page.locator(".nbtape-static-player").first
        title = player.locator(".nbtape-title")
        assert " frame 0 of " in title.text_content()
        assert player.locator(".nbtape-picture svg").count() == 1
        player.locator(".nbtape-play").click()           # visible: a click needs that
        page.wait_for_function(
            """() => !/ frame 0 of /.test(document.querySelector(
                   '.nbtape-static-player .nbtape-title').textContent)""", timeout=10_000)
        assert outside == [], f"the deck asked for addresses outside its folder: {outside}"
        assert failed == [], f"requests failed: {failed}"
        assert errors == [], f"the page raised: {errors}"
    finally:
        page.close()
