"""Graphviz inside the browser, for JupyterLite, where no ``dot`` program can run.

Under Pyodide the kernel is a Web Worker with no processes to start, so nbtape
draws with Viz.js (Graphviz compiled to WebAssembly) that the JupyterLite site
ships at ``static/nbtape/viz-global.js`` (``lite/build.py`` puts it there;
``NBTAPE_VIZ_URL`` names another copy).  The worker reads that file with a
synchronous request and evaluates it; WebAssembly then compiles in the
background, so the first picture of a session may be asked for before Viz.js is
ready.  ``when_ready`` lets the caller draw it as soon as it is: the picture's
output is updated in place, a moment after its cell ends.

Everywhere else (a normal kernel) ``IN_BROWSER`` is false and nothing here runs.
"""
import os
import sys

IN_BROWSER = sys.platform == "emscripten"
SCRIPT = "static/nbtape/viz-global.js"
ENV_VAR = "NBTAPE_VIZ_URL"


class BrowserGraphvizError(RuntimeError):
    """Viz.js could not be loaded or could not draw; the message says why."""


def script_url(location, override=None):
    """Where the site keeps Viz.js, from the URL of the page or worker running Python.

    JupyterLite's kernel worker is served from ``<site>/extensions/...``.

    >>> script_url("http://127.0.0.1:8000/extensions/@jupyterlite/k/static/1.js")
    'http://127.0.0.1:8000/static/nbtape/viz-global.js'
    >>> script_url("https://example.org/course/lab/index.html")
    'https://example.org/course/static/nbtape/viz-global.js'
    >>> script_url("http://x/y/", override="http://x/viz.js")
    'http://x/viz.js'
    """
    if override:
        return override
    for marker in ("/extensions/", "/lab/", "/notebooks/", "/tree/"):
        if marker in location:
            return location.split(marker)[0] + "/" + SCRIPT
    return location.rsplit("/", 1)[0] + "/" + SCRIPT


class VizLoader:
    """Loads Viz.js once per kernel and draws DOT with it.

    ``state`` is ``"idle"``, ``"loading"``, ``"ready"`` or ``"failed"`` (then
    ``error`` says why); callbacks given to ``when_ready`` run once it is ready.
    """

    def __init__(self):
        self.state = "idle"
        self.error = None
        self._viz = None
        self._waiting = []

    def start(self):
        """Begin loading (once); returns the state."""
        if self.state != "idle":
            return self.state
        self.state = "loading"
        try:
            import js
            from pyodide.ffi import create_once_callable
            from pyodide.http import open_url

            url = script_url(str(js.location.href), os.environ.get(ENV_VAR))
            js.eval(open_url(url).read())     # defines globalThis.Viz (a UMD bundle)
            js.Viz.instance().then(create_once_callable(self._loaded),
                                   create_once_callable(self._failed))
        except Exception as exc:              # noqa: BLE001 - reported as the picture's note
            self._failed(exc)
        return self.state

    def ready(self):
        return self.state == "ready"

    def when_ready(self, callback):
        """Call ``callback()`` once Viz.js is ready (at once if it is)."""
        if self.state == "ready":
            callback()
        elif self.state != "failed":
            self._waiting.append(callback)

    def svg(self, source):
        """The SVG text of DOT ``source`` (Viz.js must be ready)."""
        if self._viz is None:
            raise BrowserGraphvizError("Viz.js is not loaded yet.")
        from pyodide.ffi import to_js
        import js
        options = to_js({"format": "svg", "engine": "dot"}, dict_converter=js.Object.fromEntries)
        try:
            return str(self._viz.renderString(source, options))
        except Exception as exc:              # a JsException: Graphviz's own message
            raise BrowserGraphvizError(f"Graphviz (Viz.js) could not draw this graph: "
                                       f"{exc}") from None

    def _loaded(self, viz):
        self._viz, self.state = viz, "ready"
        waiting, self._waiting = self._waiting, []
        for callback in waiting:
            try:
                callback()
            except Exception:                 # noqa: BLE001 - one stale output must not
                pass                          # stop the others from being drawn

    def _failed(self, error):
        self.state, self.error = "failed", str(error)
        self._waiting = []


# One Viz.js per kernel: like an imported module, it is loaded once and shared.
LOADER = VizLoader()
