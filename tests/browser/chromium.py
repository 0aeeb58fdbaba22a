"""Debian's Chromium, driven by Playwright's Python package.

Playwright cannot download its own browsers here (closed network), so it launches the
system's ``chromium`` through ``executable_path``.  A missing browser or a browser
that will not start is a test *failure* with the reason and the fix, never a skip:
these tests are part of the README's test command and of CI.
"""
import contextlib
import os
import shutil
import tempfile

import pytest

# NBTAPE_CHROMIUM points at another Chromium build when a machine has one elsewhere.
ENV_VAR = "NBTAPE_CHROMIUM"
NAMES = ("chromium", "chromium-browser")
INSTALL_HINT = ("install Debian's Chromium with `apt-get install chromium` (as root; "
                "`bash tests/run.sh` does this), or set NBTAPE_CHROMIUM to a Chromium "
                "executable")
# Headless, as root in a container, on a machine whose only network is loopback:
# without the background-networking switches Chromium's own connections are refused
# and slow everything down.  Playwright gives each launch a fresh, empty profile
# (--user-data-dir in a new temporary directory), removed again when it closes.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class BrowserUnavailable(RuntimeError):
    """No Chromium to run, or it would not start; the message says what to do."""


def find_chromium():
    """The Chromium executable to use, or raise ``BrowserUnavailable`` naming the fix."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen:
        if os.path.isfile(chosen) and os.access(chosen, os.X_OK):
            return chosen
        raise BrowserUnavailable(f"{ENV_VAR}={chosen!r} is not an executable file; "
                                 f"{INSTALL_HINT}.")
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserUnavailable(f"The browser tests need Chromium and none was found on PATH "
                             f"(looked for {', '.join(NAMES)}): {INSTALL_HINT}.")


def launch(executable, home):
    """``(playwright, browser)``; the caller stops both (``close(...)``).

    ``home`` (an empty directory) takes what Chromium would otherwise write under the
    user's ~/.config and ~/.cache (crash-report settings, a headless profile stub).
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise BrowserUnavailable(f"The Python package 'playwright' is missing ({exc}): "
                                 f"run `python3 -m pip install -e '.[test]'`.") from exc
    pw = sync_playwright().start()
    try:
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(home, "config"),
                   XDG_CACHE_HOME=os.path.join(home, "cache"))
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=ARGS,
                                     env=env, timeout=60_000)
    except Exception as exc:
        pw.stop()
        raise BrowserUnavailable(f"Chromium at {executable} did not start under Playwright: "
                                 f"{exc}\n({INSTALL_HINT}.)") from exc
    return pw, browser


def close(pw, browser):
    """Close the browser and Playwright's driver, whatever state they are in."""
    try:
        if browser is not None:
            browser.close()
    except Exception:           # noqa: BLE001 - already gone (a Ctrl-C reaches it too)
        pass
    finally:
        if pw is not None:
            pw.stop()


@contextlib.contextmanager
def running():
    """A launched Chromium for a fixture to yield; a missing or broken one fails the
    test with the reason (outside the ``except``: one clear message, no chain)."""
    home = tempfile.mkdtemp(prefix="nbtape-chromium-")
    pw = b = None
    problem = None
    try:
        pw, b = launch(find_chromium(), home)
    except BrowserUnavailable as exc:
        problem = str(exc)
    try:
        if problem:
            pytest.fail(problem, pytrace=False)
        yield b
    finally:
        close(pw, b)
        shutil.rmtree(home, ignore_errors=True)
