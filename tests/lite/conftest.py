"""Fixtures for the JupyterLite tests: the offline site, built once, in Chromium offline.

* ``lite_site``: ``lite/build.py`` builds the offline site (Pyodide inside) into a
  temporary folder, its contents the tutorials (without outputs) and small
  purpose-built notebooks; a failed build fails the tests with the reason.
* ``lite_server``: that folder served on 127.0.0.1 (a static site needs no more).
* ``lite_page``: one Chromium page running JupyterLite for the session.  Every
  request that leaves 127.0.0.1 is blocked and counted (``offline.blocked``): the
  site must work with no internet, as in a firewalled school.
* ``open_lite_notebook``: opens a notebook there; afterwards closes it (its
  in-browser kernel ends with it).

Chromium and Playwright are the JupyterLab browser tests' (``tests/browser``): a
missing browser is a failure naming the fix, never a skip.
"""
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from browser import chromium
from browser.lab import Notebook
from browser.shots import Screenshots
from . import page
from .site import SiteError, StaticServer, build_site

VIEWPORT = {"width": 1280, "height": 1000}
_facts = {}         # what the terminal summary reports


@pytest.fixture(scope="package")
def lite_screenshots():
    shots = Screenshots(Path(__file__).resolve().parent / "screenshots").prepare()
    _facts["shots"] = shots
    return shots


@pytest.fixture(scope="package")
def lite_site():
    base = Path(tempfile.mkdtemp(prefix="nbtape-lite-"))
    contents = page.write_contents(base / "contents")
    problem = None
    try:
        site, summary = build_site(base / "site", contents)
        _facts["build"] = summary
    except SiteError as exc:
        problem = str(exc)
    try:
        if problem:
            pytest.fail(f"Could not build the JupyterLite site: {problem}", pytrace=False)
        yield site
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="package")
def lite_server(lite_site):
    server = StaticServer(lite_site).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def lite_browser():
    with chromium.running() as b:
        yield b


@pytest.fixture(scope="package")
def lite_page(lite_browser, lite_server, lite_screenshots):
    holder = page.LitePage(lite_browser, lite_server, lite_screenshots, VIEWPORT)
    try:
        yield holder
    finally:
        holder.close()
        _facts["blocked"] = list(holder.offline.blocked)


@pytest.fixture
def open_lite_notebook(lite_page, lite_server, lite_screenshots):
    """``open_lite_notebook("name.ipynb")`` -> a ``Notebook`` open in JupyterLite."""
    def opener(path, timeout=page.START_TIMEOUT):
        pg, console = lite_page.fresh()
        started = time.monotonic()
        nb = Notebook(pg, lite_server, path, lite_screenshots, console).open(timeout)
        nb.start_seconds = time.monotonic() - started
        return nb

    try:
        yield opener
    finally:
        lite_page.close_documents()


def pytest_terminal_summary(terminalreporter):
    if not _facts:
        return
    terminalreporter.write_sep("-", "nbtape JupyterLite tests")
    build = _facts.get("build")
    if build:
        terminalreporter.write_line(
            f"site built in {build['seconds']:.0f} s: {build['bytes'] / 1e6:.1f} MB "
            f"(Pyodide {build['pyodide_bytes'] / 1e6:.1f} MB)")
    if "blocked" in _facts:
        terminalreporter.write_line(f"requests that tried to leave 127.0.0.1: "
                                    f"{len(_facts['blocked'])}")
    for name, (start, run) in sorted(page.TIMES.items()):
        terminalreporter.write_line(f"  {name}: kernel ready in {start:.0f} s, cells run in {run:.0f} s")
    shots = _facts.get("shots")
    if shots is not None:
        terminalreporter.write_line(f"screenshots ({len(shots.taken)} taken): {shots.folder}")
