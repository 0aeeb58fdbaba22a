"""Tiny inline SVG pictures: sparklines, heat maps, histograms.

They are plain strings placed inside an ``ipywidgets.HTML`` (core widgets only,
no JavaScript), cheap to rebuild ten times a second, and readable in a saved
notebook's static HTML too.  All text is escaped; numbers are rounded so the
same data always gives the same string.
"""
import html

import numpy as np

from ...display import palette as P
from ...display.numbers import number
from .array_stats import decimate

# The palette's colours (nbtape.display.palette): a diverging blue-white-vermillion
# scale for signs (colour-blind safe), blue lines for values, vermillion for gradients.
NEGATIVE, RED, MUTED = P.BLUE, P.VERMILLION, P.MUTED_TEXT
LINE = P.BLUE
SMALLEST_PX = 14        # the smallest text drawn (MIN_TEXT_PX)
_RGB_RED = np.array([0xD5, 0x5E, 0x00])
_RGB_BLUE = np.array([0x00, 0x72, 0xB2])
BLOCKS = "▁▂▃▄▅▆▇█"


def coord(x):
    """Coordinates with two decimals: short strings, stable across platforms."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def svg_document(width, height, body, label):
    """An <svg> element of the given size holding ``body``, labelled for screen readers."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(label)}" '
            f'style="vertical-align:middle">'
            f"<title>{html.escape(label)}</title>{body}</svg>")


def finite_segments(xs, ys):
    """Split a polyline where values are not finite (a nan is a gap, not a zero)."""
    seg, out = [], []
    for x, y in zip(xs, ys):
        if np.isfinite(y):
            seg.append((x, y))
        elif seg:
            out.append(seg)
            seg = []
    if seg:
        out.append(seg)
    return out


# Sizes that read from the back of a room: a sparkline's line has room to show its
# shape, a heat map's cells are large enough to tell apart.
SPARK_WIDTH, SPARK_HEIGHT = 160, 40


def sparkline(values, width=SPARK_WIDTH, height=SPARK_HEIGHT, color=LINE, label=None):
    """A line through ``values`` (oldest left), with a dot on the latest one.

    >>> s = sparkline([1.0, 3.0, 2.0])
    >>> s.startswith("<svg") and "polyline" in s and "circle" in s
    True
    >>> "no data" in sparkline([])
    True
    """
    vals = np.asarray(list(values), dtype=float)
    if label is None:
        label = _range_label(vals)
    if vals.size == 0:
        return svg_document(width, height, f'<text x="2" y="{height - 4}" font-size="{SMALLEST_PX}" '
                    f'fill="{MUTED}">no data</text>', "no data yet")
    pad = 2.0
    idx, ys = decimate(vals, max(1, width // 2))
    finite = vals[np.isfinite(vals)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    span = hi - lo
    n = max(vals.size - 1, 1)

    def px(i):
        return pad + (width - 2 * pad) * i / n

    def py(y):
        if span == 0:
            return height / 2
        return height - pad - (height - 2 * pad) * (y - lo) / span

    body = []
    for seg in finite_segments(idx, ys):
        if len(seg) == 1:
            (i, y), = seg
            body.append(f'<circle cx="{coord(px(i))}" cy="{coord(py(y))}" r="1" fill="{color}"/>')
            continue
        pts = " ".join(f"{coord(px(i))},{coord(py(y))}" for i, y in seg)
        body.append(f'<polyline points="{pts}" fill="none" stroke="{color}" '
                    f'stroke-width="1.6" stroke-linejoin="round"/>')
    last = vals[-1]
    if np.isfinite(last):
        body.append(f'<circle cx="{coord(px(vals.size - 1))}" cy="{coord(py(last))}" r="2" '
                    f'fill="{color}"/>')
    else:
        body.append(f'<text x="{width - 2}" y="{height - 4}" font-size="{SMALLEST_PX}" '
                    f'text-anchor="end" fill="{P.NONFINITE_TEXT}">'
                    f'{html.escape(number(last))}</text>')
    return svg_document(width, height, "".join(body), label)


def _range_label(vals):
    finite = vals[np.isfinite(vals)]
    if vals.size == 0:
        return "no data yet"
    text = f"{vals.size} values"
    if finite.size:
        text += f", min {number(finite.min())}, max {number(finite.max())}, last {number(vals[-1])}"
    return text


def diverging(v, vmax):
    """Colour of ``v`` on a blue–white–red scale centred at 0 (``vmax`` is full colour).

    >>> diverging(0.0, 1.0), diverging(1.0, 1.0), diverging(-1.0, 1.0)
    ('#ffffff', '#d55e00', '#0072b2')
    >>> diverging(float("nan"), 1.0)
    '#d1d5db'
    """
    if not np.isfinite(v):
        return "#d1d5db"
    t = 0.0 if vmax == 0 else max(-1.0, min(1.0, v / vmax))
    end = RED if t > 0 else NEGATIVE
    r, g, b = (int(end[k:k + 2], 16) for k in (1, 3, 5))
    a = abs(t)
    mix = [round(255 + (c - 255) * a) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def _diverging_many(a, vmax):
    """``diverging`` for a whole 2-D array at once (a heat map redraws often)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip(a / vmax, -1.0, 1.0) if vmax else np.zeros_like(a)
    t = np.where(np.isfinite(t), t, 0.0)     # non-finite cells get grey below
    ends = np.where((t > 0)[..., None], _RGB_RED, _RGB_BLUE)
    mix = np.rint(255 + (ends - 255) * np.abs(t)[..., None]).astype(int)
    table = [[f"#{r:02x}{g:02x}{b:02x}" for r, g, b in row] for row in mix.tolist()]
    for i, j in zip(*np.nonzero(~np.isfinite(a))):
        table[i][j] = "#d1d5db"
    return table


def heatmap(arr, cell=20, max_cells=512, scale=True):
    """Each element of a small 1-D or 2-D array as a coloured cell (hover shows it),
    with the colour scale under it (``scale=False`` leaves it off): a bar from blue
    through white to vermillion, labelled -max, 0 and +max in 14 px text.

    Larger inputs are the caller's to summarise; this refuses them rather than
    sending a browser tens of thousands of rectangles.

    >>> s = heatmap(np.array([[1.0, -1.0], [0.5, 0.0]]), scale=False)
    >>> s.count("<rect"), "[0, 1] = -1" in s
    (4, True)
    >>> ">-1.0</text>" in heatmap(np.array([[1.0, -1.0], [0.5, 0.0]]))
    True
    """
    a = np.asarray(arr)
    if a.dtype.kind == "c":
        a = np.abs(a)
    a = np.atleast_2d(a.astype(float))
    if a.ndim != 2 or a.size > max_cells:
        raise ValueError(f"heatmap() takes a 1-D or 2-D array of at most {max_cells} "
                         f"elements, not shape {np.shape(arr)}; summarise it first.")
    rows, cols = a.shape
    finite = a[np.isfinite(a)]
    vmax = float(np.abs(finite).max()) if finite.size else 0.0
    colors = _diverging_many(a, vmax)
    one_d = np.ndim(arr) < 2
    body = []
    for i in range(rows):
        for j in range(cols):
            where = f"[{j}]" if one_d else f"[{i}, {j}]"
            body.append(f'<rect x="{j * cell}" y="{i * cell}" width="{cell}" height="{cell}" '
                        f'fill="{colors[i][j]}" stroke="#e5e7eb" stroke-width="0.5">'
                        f"<title>{where} = {number(float(a[i, j]))}</title></rect>")
    label = (f"heat map of {rows * cols} values, colour scale ±{number(vmax)} "
             f"(blue < 0 < orange-red)")
    width, height = cols * cell, rows * cell
    if scale:
        width = max(width, SCALE_WIDTH)
        body.append(colour_scale(vmax, height + 4, width))
        height += 4 + SCALE_HEIGHT
    return svg_document(width, height, "".join(body), label)


SCALE_STEPS = 11            # the colour bar's blocks, from -max to +max
SCALE_WIDTH = 176           # wide enough for three labels like -1.25e-05
SCALE_HEIGHT = 12 + SMALLEST_PX + 6


def colour_scale(vmax, top, width):
    """The heat map's colour scale as SVG: ``SCALE_STEPS`` blocks from -``vmax`` (blue)
    through 0 (white) to +``vmax`` (vermillion), labelled at both ends and the middle.

    >>> s = colour_scale(2.0, 0, 176)
    >>> s.count("<rect") - 1, ">-2.0<" in s, ">0<" in s, ">2.0<" in s     # and an outline
    (11, True, True, True)
    """
    step = width / SCALE_STEPS
    ts = np.linspace(-1.0, 1.0, SCALE_STEPS)
    blocks = "".join(
        f'<rect x="{coord(k * step)}" y="{top}" width="{coord(step + 0.5)}" height="12" '
        f'fill="{diverging(t, 1.0)}"/>' for k, t in enumerate(ts))
    y = top + 12 + SMALLEST_PX + 2
    ticks = [(0, "start", f"-{number(vmax)}" if vmax else "0"), (width / 2, "middle", "0"),
             (width, "end", number(vmax) if vmax else "0")]
    labels = "".join(f'<text x="{coord(x)}" y="{y}" font-size="{SMALLEST_PX}" '
                     f'text-anchor="{anchor}" fill="{MUTED}" font-family="sans-serif">'
                     f"{html.escape(text)}</text>" for x, anchor, text in ticks)
    return (f'<g class="nbtape-colour-scale"><rect x="0" y="{top}" width="{width}" '
            f'height="12" fill="none" stroke="#e5e7eb"/>{blocks}{labels}</g>')


def histogram(values, bins=16, width=SPARK_WIDTH, height=SPARK_HEIGHT, color=LINE):
    """Bars counting ``values`` (finite ones) in ``bins`` equal ranges.

    >>> s = histogram(np.arange(100.0), bins=4)
    >>> s.count("<rect"), "range [0.0, 99.0]" in s
    (4, True)
    """
    v = np.asarray(values).reshape(-1)
    if v.dtype.kind == "c":
        v = np.abs(v)
    v = v.astype(float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return svg_document(width, height, "", "no finite values")
    counts, edges = np.histogram(v, bins=bins)
    top = counts.max() or 1
    bw = width / bins
    body = []
    for k, c in enumerate(counts):
        h = (height - 1) * c / top
        if c:
            h = max(h, 1.0)
        body.append(f'<rect x="{coord(k * bw)}" y="{coord(height - h)}" width="{coord(bw - 0.5)}" '
                    f'height="{coord(h)}" fill="{color}"/>')
    label = f"histogram of {v.size:,} values, range [{number(edges[0])}, {number(edges[-1])}]"
    return svg_document(width, height, "".join(body), label)


def blocks(values, width=16):
    """A text sparkline (``▁▂▃▅▇``) for plain-text snapshots; ``·`` marks a nan/inf.

    >>> blocks([0, 1, 2, 3, 4, 5, 6, 7])
    '▁▂▃▄▅▆▇█'
    >>> blocks([1.0, float("nan"), 1.0])
    '▄·▄'
    """
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        return ""
    if v.size > width:
        # one block per bucket, showing the bucket's last value (a trend, not a peak)
        edges = np.linspace(0, v.size, width + 1).astype(int)
        v = v[edges[1:] - 1]
    finite = v[np.isfinite(v)]
    lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
    out = []
    for x in v:
        if not np.isfinite(x):
            out.append("·")
        elif hi == lo:
            out.append(BLOCKS[3])
        else:
            out.append(BLOCKS[min(7, int((x - lo) / (hi - lo) * 8))])
    return "".join(out)
