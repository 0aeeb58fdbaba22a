"""The documentation site, built by ``docs/build.py``, served with the JupyterLite site beside
it (at ``lite/``, the site the other tests here build: built once), in headless Chromium
with every request that leaves 127.0.0.1 blocked and counted (none may be made):

* the landing page shows its tape picture and the inspector's static copy;
* the search finds ``GradientTape.gradient``;
* an API page's **Try it** runs its example in the browser (Pyodide, from the lite site)
  and shows the output the docstring promises;
* a tutorial page shows its tape pictures, and its JupyterLite button opens that
  tutorial in the JupyterLite site, where every cell runs as on a server.

The build time, the site's size and the seconds from clicking **Try it** to the output
go to ``docs_site.json`` beside the screenshots.
"""
import importlib.util
import json
import re
import sys
import time

import pytest

from browser import checks
from browser.lab import Console, Notebook
from browser.notebooks import expectations, read
from browser.server import Offline
from . import page
from .site import REPO, StaticServer, lite_build

pytestmark = pytest.mark.slow

TUTORIAL = "06_custom_gradients"       # short, with tape pictures in its stored outputs
TRY_IT = "nbtape.GradientTape"         # its example ends with ``array(27.)``
TRY_IT_TIMEOUT = 120.0                 # Pyodide starting, nbtape installed from the site


def _docs_build():
    spec = importlib.util.spec_from_file_location("nbtape_docs_build", REPO / "docs" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def facts(lite_screenshots):
    found = {}
    yield found
    (lite_screenshots.folder / "docs_site.json").write_text(json.dumps(found, indent=2))


@pytest.fixture(scope="module")
def docs_site(lite_site, tmp_path_factory, facts):
    """The docs built without a lite site of their own, then given the tests' one."""
    build = _docs_build()
    html = tmp_path_factory.mktemp("docs") / "html"
    try:
        summary = build.build(html, lite="none")
    except build.DocsError as exc:
        pytest.fail(f"docs/build.py failed: {exc}", pytrace=False)
    (html / "lite").symlink_to(lite_site, target_is_directory=True)
    facts.update(build_seconds=round(summary["seconds"], 1),
                 sphinx_seconds=round(summary["sphinx_seconds"], 1),
                 docs_megabytes=round(summary["bytes"] / 1e6, 2))
    facts["with_lite_megabytes"] = round(facts["docs_megabytes"] + sum(
        p.stat().st_size for p in lite_site.rglob("*") if p.is_file()) / 1e6, 1)
    return html, build


@pytest.fixture(scope="module")
def docs_server(docs_site):
    server = StaticServer(docs_site[0]).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def docs_page(lite_browser, docs_server):
    offline = Offline(page.LOCAL_HOSTS)
    context = lite_browser.new_context(viewport={"width": 1280, "height": 1000},
                                       service_workers="block")
    context.route("**/*", offline.route)
    pg = context.new_page()
    pg.offline = offline
    try:
        yield pg
    finally:
        context.close()
        assert offline.blocked == [], \
            f"the site tried to reach addresses outside 127.0.0.1: {offline.blocked[:5]}"


def test_every_internal_link_leads_somewhere_with_the_lite_site_beside(docs_site):
    html, build = docs_site
    assert build.check_links(html, lite=True) == []
    for page, names in build.apipages.groups().items():     # every public name, built
        text = (html / "reference" / f"{page}.html").read_text()
        for qualname, _ in names:
            assert f'id="{qualname}"' in text or f">{qualname}<" in text, (page, qualname)
    assert 'id="nbtape.GradientTape.gradient"' in (html / "reference" / "nbtape.html").read_text()


def test_the_landing_page_shows_the_tape_and_the_inspector(docs_page, docs_server,
                                                          lite_screenshots):
    docs_page.goto(f"{docs_server.url}/index.html")
    picture = docs_page.locator("img.nbtape-tape-picture")
    picture.wait_for()
    width = picture.evaluate("img => img.complete ? img.naturalWidth : 0")
    shot = lite_screenshots.take(docs_page, "docs_landing")
    assert width > 50, f"the landing page's tape picture did not load ({shot})"
    assert docs_page.locator(".nbtape-inspect").is_visible(), shot
    assert "pip install" in docs_page.inner_text("body")


def test_search_finds_gradient_tape_gradient(docs_page, docs_server, lite_screenshots):
    docs_page.goto(f"{docs_server.url}/search.html?q=GradientTape.gradient")
    hit = docs_page.locator("#search-results a", has_text="GradientTape.gradient")
    try:
        hit.first.wait_for(timeout=30_000)
    finally:
        lite_screenshots.take(docs_page, "docs_search")
    assert "reference/nbtape.html#nbtape.GradientTape.gradient" in hit.first.get_attribute("href")


def test_try_it_runs_the_example_in_the_browser(docs_page, docs_server, lite_screenshots,
                                                facts):
    docs_page.goto(f"{docs_server.url}/reference/nbtape.html")
    entry = docs_page.locator("dl.py", has=docs_page.locator(f"dt[id='{TRY_IT}']")).first
    button = entry.locator("button.nbtape-tryit-button").first
    button.wait_for()
    started = time.monotonic()
    button.click()
    output = entry.locator("pre.nbtape-tryit-output").first
    try:
        docs_page.wait_for_function(
            "() => !!document.querySelector('.nbtape-tryit-done, .nbtape-tryit-failed')",
            timeout=TRY_IT_TIMEOUT * 1000, polling=200)
        facts["try_it_seconds"] = round(time.monotonic() - started, 1)
    finally:
        shot = lite_screenshots.take(entry, "docs_try_it")
    assert output.inner_text().strip() == "array(27.)", \
        f"Try it showed {output.inner_text()!r}, not the docstring's array(27.) ({shot})"


def test_a_tutorial_page_shows_its_pictures_and_opens_in_jupyterlite(docs_page, docs_server,
                                                                     lite_screenshots, facts):
    docs_page.goto(f"{docs_server.url}/tutorials/{TUTORIAL}.html")
    pictures = docs_page.locator("article img[src$='.svg']")
    pictures.first.wait_for()
    sizes = pictures.evaluate_all("imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
    shot = lite_screenshots.take(docs_page, "docs_tutorial")
    assert sizes and min(sizes) > 20, f"tape pictures that did not load: {sizes} ({shot})"

    link = docs_page.locator("a.nbtape-launch-lite")
    path = f"{TUTORIAL}.ipynb"
    assert link.get_attribute("href") == f"../lite/lab/index.html?path={path}"
    link.click()
    docs_page.wait_for_function("() => !!window.jupyterapp", timeout=page.START_TIMEOUT * 1000)
    docs_page.wait_for_function(page.IDLE, arg=path, timeout=page.START_TIMEOUT * 1000,
                                polling=200)
    # (Lab drops ?path= from the address once the notebook is open: IDLE found it open)
    nb = Notebook(docs_page, docs_server, path, lite_screenshots, Console(docs_page))
    facts["tutorial_run_seconds"] = round(page.run_each(nb), 1)
    cells = page.without_font_cache_note(nb.cells())
    saved = lite_build.as_in_the_site(read(REPO / "notebooks" / path), path)    # no badge
    problems = checks.notebook_problems(cells, expectations(saved))
    shot = nb.shot(docs_page, "from_the_docs")
    assert not problems, checks.report(
        f"{path}, opened from its docs page and run in JupyterLite:", problems, [shot],
        nb.console, lite_screenshots.folder)
    ran = [c for c in cells if c["type"] == "code" and c["executionCount"] is not None]
    assert len(ran) == sum(c["type"] == "code" for c in cells)


def test_every_example_of_a_page_runs_with_try_it(docs_page, docs_server, lite_screenshots):
    # nbtape.extend's examples use the module's own names, as doctest gives them
    docs_page.goto(f"{docs_server.url}/reference/extend.html")
    buttons = docs_page.locator("button.nbtape-tryit-button")
    assert buttons.count() >= 5
    failed = []
    for k in range(buttons.count()):
        buttons.nth(k).click()
        docs_page.wait_for_function(
            f"() => document.querySelectorAll('.nbtape-tryit-done, .nbtape-tryit-failed')"
            f".length > {k}", timeout=TRY_IT_TIMEOUT * 1000, polling=200)
        shown = docs_page.locator("pre.nbtape-tryit-output").nth(k).inner_text()
        if "Traceback" in shown or "Could not run" in shown:
            failed.append(f"example {k}: {shown[-300:]}")
    shot = lite_screenshots.take(docs_page, "docs_try_it_extend")
    assert not failed, "\n".join(failed) + f"\n({shot})"
