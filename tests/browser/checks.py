"""Judging what a notebook shows in the browser: the problems a student would see.

Pure functions over the per-cell facts ``Notebook.cells()`` reads from the page (so
they are testable without a browser).  A problem is one readable line naming the cell.
"""
from .notebooks import SVG, WIDGET, Expected

WIDGET_STATES = {
    "error": "the widget area shows {text!r} instead of the widget",
    "loading": "the widget never finished loading (still {text!r})",
    "empty": "the widget area is empty (nothing drawn)",
}
MIN_PICTURE_PX = 20         # a picture smaller than this on screen is not a picture


def where(cell):
    """``cell 3 (`first line of its source`)``.

    >>> where({"index": 3, "source": "x = 1\\ny = 2"})
    'cell 3 (`x = 1`)'
    """
    first = next((line for line in cell["source"].splitlines() if line.strip()), "")
    if len(first) > 60:
        first = first[:57] + "..."
    return f"cell {cell['index']} (`{first}`)"


def picture_ok(out):
    """An SVG output that decoded, is SVG, and has a visible size."""
    return (out.get("decoded") and out.get("isSvg")
            and out.get("width", 0) >= MIN_PICTURE_PX and out.get("height", 0) >= MIN_PICTURE_PX)


def is_picture(out):
    return out["domMime"] == SVG


def is_widget(out):
    return "widget" in out


def cell_problems(cell, expected=None):
    """The problems of one cell, given what its saved run showed (``Expected`` or None).

    >>> cell = {"index": 2, "type": "code", "source": "1/0", "tags": [], "prompt": "[1]:",
    ...         "executionCount": 1, "outputs": [{"type": "error", "name": None,
    ...         "mimes": [], "domMime": "application/vnd.jupyter.stderr", "text": "...",
    ...         "error": "ZeroDivisionError: division by zero", "brokenImages": 0}]}
    >>> cell_problems(cell)
    ['cell 2 (`1/0`): raised ZeroDivisionError: division by zero']
    """
    if cell["type"] != "code":
        return []
    expected = expected or Expected(0, 0, False, ())
    here = where(cell)
    problems = []
    if cell["executionCount"] is None and cell["source"].strip():
        problems.append(f"{here}: was not run (Run All stopped before it; an earlier cell "
                        f"failed or the kernel died)")
    for out in cell["outputs"]:
        if out["type"] == "error" and "raises-exception" not in cell["tags"]:
            problems.append(f"{here}: raised {out['error']}")
        elif out["type"] == "stream" and out["name"] == "stderr" and not expected.stderr:
            problems.append(f"{here}: wrote to stderr (a red box in the notebook): "
                            f"{out['text'].strip()[:300]!r}")
        if is_widget(out) and out["widget"] != "ok":
            problems.append(f"{here}: " + WIDGET_STATES[out["widget"]].format(
                text=out["text"].strip()[:200]))
        if WIDGET in out["mimes"] and out["domMime"]:
            problems.append(f"{here}: the widget was shown as {out['domMime']} "
                            f"({out['text'].strip()[:100]!r}), not drawn: Lab has no "
                            f"ipywidgets renderer (is jupyterlab_widgets installed?)")
        if is_picture(out) and not picture_ok(out):
            problems.append(f"{here}: an image/svg+xml output did not appear as a picture "
                            f"(shown as {out.get('how')}, decoded={out.get('decoded')}, "
                            f"svg={out.get('isSvg')}, {out.get('width')}x{out.get('height')} px)")
        if out.get("brokenImages"):
            problems.append(f"{here}: {out['brokenImages']} image(s) in an output did not load")
    pictures = sum(1 for o in cell["outputs"] if is_picture(o) and picture_ok(o))
    if pictures < expected.pictures:
        problems.append(f"{here}: the saved notebook shows {expected.pictures} tape "
                        f"picture(s) (image/svg+xml) here; the browser showed {pictures} "
                        f"(outputs: {describe_outputs(cell)})")
    widgets = sum(1 for o in cell["outputs"] if is_widget(o) and o["widget"] == "ok")
    if widgets < expected.widgets:
        problems.append(f"{here}: the saved notebook shows {expected.widgets} widget(s) "
                        f"here; the browser drew {widgets} (outputs: {describe_outputs(cell)})")
    return problems


def describe_outputs(cell):
    """``stream/stdout, display_data/text/html, ...``: what a cell's outputs are."""
    parts = []
    for out in cell["outputs"]:
        parts.append(f"{out['type']}/{out['name'] or out['domMime'] or 'widget'}")
    return ", ".join(parts) or "none"


def notebook_problems(cells, expected=None):
    """All problems of a notebook, in cell order."""
    expected = expected or {}
    problems = []
    for cell in cells:
        problems.extend(cell_problems(cell, expected.get(cell["index"])))
    return problems


def worth_a_screenshot(cell, problems):
    """Cells with a picture or a widget, and cells with a problem, get a screenshot."""
    tag = where(cell) + ":"
    return (any(is_picture(o) or is_widget(o) for o in cell["outputs"])
            or any(p.startswith(tag) for p in problems))


def report(title, problems, shots, console, folder):
    """The failure message: what was wrong, which screenshots show it, JS errors."""
    lines = [title]
    lines += [f"  - {p}" for p in problems]
    if shots:
        lines.append("screenshots:")
        lines += [f"  {s}" for s in shots]
    lines.append(f"(all screenshots: {folder})")
    lines.append(f"browser console errors: {console.summary()}")
    return "\n".join(lines)
