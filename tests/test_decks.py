"""The weekly slide decks (``tools/decks.py``): week 1's deck is built (reveal.js and
MathJax from the npm registry once, then from the build caches) and read back.

* everything the deck loads (scripts, style sheets, images, CSS ``url()``s, in the
  deck and in the copied style sheets) is a file beside it or a ``data:`` URI: no
  address outside the deck's folder, so it shows offline;
* the week's tutorials appear in the plan's order, each from its title slide;
* the tape player is its kernel-free copy, unfolded; no live widget's view is left
  (they need a kernel), nor an answer or a notebook-only cell.

``tests/browser/test_decks_in_browser.py`` opens the same deck in Chromium.
"""
import doctest
import html.parser
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent

_spec = importlib.util.spec_from_file_location("decks", ROOT / "tools" / "decks.py")
decks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(decks)

CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)")
# what each tag loads, by attribute (an <a href> is a link a reader may follow, not a load)
LOADS = {"script": ("src",), "link": ("href",), "img": ("src", "srcset"), "iframe": ("src",),
         "source": ("src", "srcset"), "video": ("src", "poster"), "audio": ("src",),
         "embed": ("src",), "object": ("data",), "image": ("href", "xlink:href"),
         "use": ("href", "xlink:href")}


class _Loads(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls, self.styles, self._in_style = [], [], False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and name in LOADS.get(tag, ()):
                self.urls += [u.split()[0] for u in value.split(",")] if name == "srcset" else [value]
            if name == "style" and value:
                self.styles.append(value)
        self._in_style = tag == "style"

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def loaded_urls(text):
    """Every URL a page ``text`` loads, its CSS ``url()``s included."""
    parser = _Loads()
    parser.feed(text)
    return parser.urls + [u for css in parser.styles for u in CSS_URL.findall(css)]


def is_local(url):
    return url.startswith("data:") or not re.match(r"^([a-z][a-z0-9+.-]*:|//)", url, re.I)


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    out = tmp_path_factory.mktemp("decks")
    (path,) = decks.build(out, weeks=[1])
    return path


def test_the_checker_sees_an_outside_address():
    page = ('<link href="https://cdn.example/x.css"><img src="//cdn.example/a.png">'
            '<style>p { background: url("http://cdn.example/b.png") }</style>'
            '<a href="https://example.org">a link</a><script src="assets/a.js"></script>')
    assert [u for u in loaded_urls(page) if not is_local(u)] == [
        "https://cdn.example/x.css", "//cdn.example/a.png", "http://cdn.example/b.png"]


def test_everything_the_deck_loads_is_beside_it(deck):
    text = deck.read_text(encoding="utf-8")
    urls = loaded_urls(text)
    assert "assets/reveal.js/dist/reveal.js" in urls
    assert "assets/mathjax/tex-chtml.js" in urls
    assert [u for u in urls if not is_local(u)] == []
    for url in urls:
        if not url.startswith("data:"):
            assert (deck.parent / url.split("#")[0]).is_file(), f"the deck loads a missing {url}"
    for css in (deck.parent / "assets").rglob("*.css"):
        for url in CSS_URL.findall(css.read_text(encoding="utf-8")):
            assert is_local(url), f"{css.name} loads {url}"
            if not url.startswith("data:"):
                assert (css.parent / url.split("#")[0].split("?")[0]).is_file(), (css, url)
    for name in ("reveal.js/LICENSE", "mathjax/LICENSE"):
        assert (deck.parent / "assets" / name).is_file()
    assert "unpkg.com" not in text and "cdnjs" not in text and "require.js" not in text


def test_the_weeks_tutorials_come_in_the_plans_order(deck):
    text = deck.read_text(encoding="utf-8")
    places = []
    for path in decks.plan.tutorials_of_week(1):
        number, title = decks.navigation.title_of(nbformat.read(path, as_version=4), path.name)
        heading = re.search(r"<h1[^>]*>\s*" + re.escape(f"{number}. ") , text[places[-1] if places else 0:])
        assert heading, f"{path.name}'s title slide is missing"
        places.append((places[-1] if places else 0) + heading.end())
    assert text.count("<section") > 20


def test_the_player_is_its_kernel_free_copy_and_answers_stay_out(deck):
    text = deck.read_text(encoding="utf-8")
    assert "nbtape-static-player" in text
    snapshots = re.findall(r"<details class=.nbtape-snapshot.([^>]*)>", text)
    assert snapshots and all("open" in attrs for attrs in snapshots)
    assert "live widget:" not in text                     # the live views' text/plain
    assert "application/vnd.jupyter.widget-view+json" not in text
    assert "nt.exercises.check(" not in text              # the check cells
    assert "One solution" not in text                     # the folded solutions
    assert "Open in Colab" not in text and "[Contents]" not in text


def test_links_to_tutorials_lead_to_their_decks(deck):
    hrefs = re.findall(r'<a href="([^"]+)"', deck.read_text(encoding="utf-8"))
    assert not [h for h in hrefs if h.endswith(".ipynb")]
    assert "week1.html" in hrefs


def test_the_scripts_examples_run():
    # tools/ is not among pytest's doctest paths
    result = doctest.testmod(decks)
    assert result.attempted >= 2 and result.failed == 0
