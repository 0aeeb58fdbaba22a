"""Fixtures for the real-browser tests: one JupyterLab server and one Chromium per run.

* ``lab_server``: JupyterLab on 127.0.0.1, a free port, a token of its own, its root a
  temporary directory holding output-free copies of the tutorials and the
  purpose-built notebooks (the repository's notebooks are never opened by the server).
* ``browser``: Debian's Chromium under Playwright; missing or broken is a failure
  that names ``apt-get install chromium``, not a skip.
* ``lab_page``: one page running Lab for the session (loading Lab takes seconds), made
  fresh again whenever a test left it unwell;
* ``open_notebook``: opens a notebook in that page; afterwards the notebook is closed
  and the kernels shut down, so the 2 CI cores serve one kernel at a time.
* ``open_in_each_front_end``: the same, once in JupyterLab and once in Notebook 7 (a
  page of its own, served by the same server), for the widget tests.

Teardown runs on every path (failure, Ctrl-C, SIGTERM from a CI timeout): fixture
finalizers for the normal ones, SIGTERM turned into KeyboardInterrupt so pytest
unwinds, and an atexit hook as the last resort.
"""
import atexit
import shutil
import signal
import tempfile
import threading
from pathlib import Path

import pytest

from . import chromium
from .lab import LabPage, Notebook
from .notebook7 import Notebook7
from .notebooks import copy_tutorials, write_purpose_built
from .server import LabServer, ServerError
from .shots import Screenshots

VIEWPORT = {"width": 1280, "height": 1000}
# Fixtures are package-scoped, not session-scoped: Playwright's sync API keeps an
# event loop running in this thread while it is open, which the rest of the suite
# (the %%tape magic's top-level await) must not see.
_used = {}          # what the terminal summary reports: the screenshots folder


@pytest.fixture(scope="package")
def screenshots():
    shots = Screenshots().prepare()
    _used["shots"] = shots
    return shots


@pytest.fixture(scope="package")
def lab_root():
    """A temporary tree: ``root/`` (what the server serves) and ``home/`` (its config)."""
    base = Path(tempfile.mkdtemp(prefix="nbtape-browser-"))
    root, home = base / "root", base / "home"
    root.mkdir()
    home.mkdir()
    copy_tutorials(root / "notebooks")          # served as notebooks/<name>.ipynb
    write_purpose_built(root)                   # served as purpose-built/<name>.ipynb
    try:
        yield {"root": root, "home": home}
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="package")
def lab_server(lab_root, screenshots):
    server = LabServer(lab_root["root"], lab_root["home"])
    atexit.register(server.stop)            # if pytest itself dies before the finalizer
    restore = _sigterm_as_interrupt()
    try:
        problem = None
        try:
            server.start()
        except ServerError as exc:
            problem = f"Could not start JupyterLab for the browser tests: {exc}"
        if problem:
            pytest.fail(problem, pytrace=False)
        yield server
    finally:
        server.stop()
        atexit.unregister(server.stop)
        restore()
        # The server's log goes beside the screenshots (the temp dir is removed).
        if server.log_path.exists():
            shutil.copy(server.log_path, screenshots.folder / "jupyterlab.log")


def _sigterm_as_interrupt():
    """Make SIGTERM unwind pytest like Ctrl-C (so finalizers run); returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        return lambda: None                 # someone else handles it; leave them be

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    return lambda: signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="package")
def browser():
    with chromium.running() as b:
        yield b


@pytest.fixture(scope="package")
def lab_page(browser, lab_server, screenshots):
    holder = LabPage(browser, lab_server, screenshots, VIEWPORT)
    try:
        yield holder
    finally:
        holder.close()


@pytest.fixture
def open_notebook(lab_page, lab_server, screenshots):
    """``open_notebook("path/in/root.ipynb")`` -> a ``Notebook`` open in the Lab page.

    Afterwards the notebook is closed and every kernel shut down, so the 2 CI cores
    serve one kernel at a time and each test starts from a clean Lab.
    """
    def opener(path):
        page, console = lab_page.fresh()
        return Notebook(page, lab_server, path, screenshots, console).open()

    try:
        yield opener
    finally:
        lab_page.close_documents()
        lab_server.shutdown_kernels()


@pytest.fixture(params=["jupyterlab", "notebook7"])
def open_in_each_front_end(request, lab_page, lab_server, browser, screenshots):
    """``open_notebook``, in JupyterLab and then in Notebook 7 (``nb.front_end``)."""
    opened = []

    def opener(path):
        if request.param == "jupyterlab":
            page, console = lab_page.fresh()
            return Notebook(page, lab_server, path, screenshots, console).open()
        nb = Notebook7(browser, lab_server, path, screenshots, VIEWPORT)
        opened.append(nb)
        return nb.open()

    try:
        yield opener
    finally:
        for nb in opened:
            nb.close()
        lab_page.close_documents()
        lab_server.shutdown_kernels()


def pytest_terminal_summary(terminalreporter):
    shots = _used.get("shots")
    if shots is None:
        return
    terminalreporter.write_sep("-", "nbtape browser tests")
    terminalreporter.write_line(f"screenshots of what was checked ({len(shots.taken)} "
                                f"taken): {shots.folder}")
