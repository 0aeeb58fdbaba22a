"""The JupyterLite site under test: built once per run, served on 127.0.0.1.

``build_site(dest)`` runs ``lite/build.py`` (the README's command) into ``dest`` with
the tutorials and the purpose-built notebooks of the browser tests as its contents,
then exposes the Lab application to the page (``window.jupyterapp``), as the
JupyterLab browser tests do.  ``NBTAPE_LITE_SITE`` names an already built site to
use instead (for a developer iterating on the tests; CI always builds).

``StaticServer`` serves a folder over HTTP on 127.0.0.1 from a thread: a static site
is all JupyterLite needs.  Every request is logged, so a test can say what the page
asked for.
"""
import functools
import importlib.util
import http.server
import json
import os
import pathlib
import sys
import threading

REPO = pathlib.Path(__file__).resolve().parents[2]
SITE_ENV = "NBTAPE_LITE_SITE"


def _load_builder():
    # lite/build.py is a script, not a package (and "build" is a PyPI package's name)
    spec = importlib.util.spec_from_file_location("nbtape_lite_build", REPO / "lite" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


lite_build = _load_builder()


class SiteError(RuntimeError):
    """The site could not be built; the message says why."""


def build_site(dest, contents):
    """Build the offline site into ``dest`` from the notebooks in ``contents``."""
    prebuilt = os.environ.get(SITE_ENV, "").strip()
    if prebuilt:
        site = pathlib.Path(prebuilt)
        if not (site / "jupyter-lite.json").exists():
            raise SiteError(f"{SITE_ENV}={prebuilt!r} is not a built JupyterLite site.")
        return site, None
    try:
        summary = lite_build.build(dest, offline=True, contents=contents)
    except lite_build.BuildError as exc:
        raise SiteError(f"lite/build.py failed: {exc}") from None
    expose_app(dest)
    return pathlib.Path(dest), summary


def expose_app(site):
    """Let the page reach the Lab application as ``window.jupyterapp``."""
    path = pathlib.Path(site) / "jupyter-lite.json"
    config = json.loads(path.read_text())
    config["jupyter-config-data"]["exposeAppInBrowser"] = True
    path.write_text(json.dumps(config, indent=2))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    log = None

    def log_message(self, format, *args):
        self.log.append(format % args)

    def end_headers(self):
        # Lab caches aggressively; a test run must see this build
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class StaticServer:
    """A folder served over HTTP on 127.0.0.1, from a daemon thread."""

    token = ""

    def __init__(self, folder):
        self.folder = str(folder)
        self.requests = []
        handler = type("Handler", (_Quiet,), {"log": self.requests})
        handler.extensions_map = {**_Quiet.extensions_map, ".wasm": "application/wasm",
                                  ".mjs": "text/javascript", ".js": "text/javascript"}
        self._httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=self.folder))
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._httpd.shutdown()
        self._httpd.server_close()

    def log_tail(self, n=15):
        return "last requests to the site:\n  " + "\n  ".join(self.requests[-n:])

    def shutdown_kernels(self):
        """Kernels run inside the page; closing the documents ends them."""
