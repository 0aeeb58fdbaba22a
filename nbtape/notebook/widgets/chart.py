"""A line chart with axes, ticks and labels, as an SVG string (for the training monitor).

Long histories are drawn from at most about one min/max pair per pixel column,
so a million logged steps cost the browser no more than a thousand.
"""
import html
import math

import numpy as np

from ...display.numbers import LARGE, number
from .array_stats import decimate
from ...display.palette import INK, NONFINITE_TEXT
from .svg import LINE, MUTED, coord, finite_segments, svg_document

# Text sizes in px at scale 1: ticks and notes are the smallest (MIN_TEXT_PX).
TITLE_PX, LABEL_PX, TICK_PX = 16, 15, 14


def nice_ticks(lo, hi, count=5):
    """Round tick values covering ``[lo, hi]`` (1, 2 or 5 times a power of ten apart).

    >>> nice_ticks(0, 1)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> nice_ticks(3, 3)
    [2.0, 3.0, 4.0]
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi == lo:
        pad = abs(lo) * 0.5 or 1.0
        return nice_ticks(lo - pad, hi + pad, 4)
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    # the round step whose tick count comes nearest to ``count``
    step = min((m * mag for m in (1, 2, 5, 10)), key=lambda st: abs((hi - lo) / st - count))
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    # k * step, printed to 12 digits: 0.6 rather than 0.6000000000000001
    ticks = [float(f"{k * step:.12g}") for k in range(first, last + 1)]
    if len(ticks) < 2:
        ticks = [float(f"{first * step:.12g}"), float(f"{(first + 1) * step:.12g}")]
    return ticks


def axis_number(t):
    """A tick or a step: a whole number without ".0", as plots label axes; else ``number``.

    >>> axis_number(50.0), axis_number(0.25), axis_number(-2), axis_number(2.5e6)
    ('50', '0.25', '-2', '2.5e+06')
    """
    t = float(t)
    return str(int(t)) if t.is_integer() and abs(t) < LARGE else number(t)


def _log_ticks(lo, hi):
    """Powers of ten between ``10**lo`` and ``10**hi`` (given as exponents)."""
    a, b = math.floor(lo), math.ceil(hi)
    stride = max(1, (b - a) // 5)
    return [float(e) for e in range(a, b + 1, stride)]


def line_chart(xs, ys, width=420, height=150, title="", xlabel="step", ylabel="",
               log_y=False, color=LINE, scale=1.0):
    """A labelled line chart of ``ys`` against ``xs``; non-finite values leave gaps.

    With ``log_y`` the y axis is logarithmic (non-positive values are left out
    and counted in the caption).  ``scale`` multiplies the text and the margins (the
    caller scales ``width`` and ``height``).

    >>> s = line_chart([0, 1, 2], [1.0, 0.5, 0.25], title="loss", ylabel="loss")
    >>> s.startswith("<svg") and ">step<" in s and ">loss<" in s and "polyline" in s
    True
    """
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    s = scale
    left, right = round(76 * s), round(14 * s)
    top, bottom = round((28 if title else 10) * s), round(44 * s)
    pw, ph = width - left - right, height - top - bottom
    # an opaque background: dark notebook themes would hide dark labels otherwise
    parts = [f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
             f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafafa" '
             f'stroke="#e5e7eb"/>']
    if title:
        parts.append(_text(left, 19 * s, title, size=TITLE_PX * s, weight="bold"))
    parts.append(_text(left + pw / 2, height - 5 * s, xlabel, anchor="middle",
                       size=LABEL_PX * s))
    if ylabel:
        ly = coord(top + ph / 2)
        parts.append(f'<text x="{coord(15 * s)}" y="{ly}" font-size="{coord(LABEL_PX * s)}" '
                     f'fill="{INK}" text-anchor="middle" font-family="sans-serif" '
                     f'transform="rotate(-90 {coord(15 * s)} {ly})">'
                     f"{html.escape(ylabel)}</text>")
    skipped = 0
    if log_y:
        with np.errstate(divide="ignore", invalid="ignore"):
            bad = np.isfinite(y) & (y <= 0)
            skipped = int(bad.sum())
            y = np.where(y > 0, np.log10(np.where(y > 0, y, 1.0)), np.where(bad, np.nan, y))
    finite = np.isfinite(y)
    if x.size == 0 or not finite.any():
        parts.append(_text(left + pw / 2, top + ph / 2, "no data yet", anchor="middle",
                           color=MUTED, size=LABEL_PX * s))
        return svg_document(width, height, "".join(parts), title or "chart")
    x0, x1 = float(x.min()), float(x.max())
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    y0, y1 = float(y[finite].min()), float(y[finite].max())
    yt = _log_ticks(y0, y1) if log_y else nice_ticks(y0, y1)
    y0, y1 = min(y0, yt[0]), max(y1, yt[-1])
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1

    def px(v):
        return left + pw * (v - x0) / (x1 - x0)

    def py(v):
        return top + ph - ph * (v - y0) / (y1 - y0)

    for t in yt:
        label = axis_number(10 ** t) if log_y else axis_number(t)
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{coord(py(t))}" y2="{coord(py(t))}" '
                     f'stroke="#e5e7eb"/>')
        parts.append(_text(left - 4 * s, py(t) + 5 * s, label, anchor="end", size=TICK_PX * s))
    for t in nice_ticks(x0, x1, 5):
        if x0 <= t <= x1:
            parts.append(f'<line x1="{coord(px(t))}" x2="{coord(px(t))}" y1="{top + ph}" '
                         f'y2="{coord(top + ph + 4 * s)}" stroke="{INK}"/>')
            parts.append(_text(px(t), top + ph + 18 * s, axis_number(t), anchor="middle",
                               size=TICK_PX * s))
    parts.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="{INK}"/>')
    parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" '
                 f'stroke="{INK}"/>')
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    idx, ys_kept = decimate(y, max(1, int(pw)))
    for seg in finite_segments([float(x[i]) for i in idx], ys_kept):
        pts = " ".join(f"{coord(px(a))},{coord(py(b))}" for a, b in seg)
        if len(seg) == 1:
            parts.append(f'<circle cx="{coord(px(seg[0][0]))}" cy="{coord(py(seg[0][1]))}" r="1.5" '
                         f'fill="{color}"/>')
        else:
            parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" '
                         f'stroke-width="{coord(2.5 * s)}" stroke-linejoin="round"/>')
    notes = []
    nonfinite = int((~np.isfinite(np.asarray(ys, dtype=float))).sum())
    if nonfinite:
        notes.append(f"{nonfinite} non-finite value{'s' if nonfinite != 1 else ''} (gaps)")
    if skipped:
        notes.append(f"{skipped} value{'s' if skipped != 1 else ''} ≤ 0 not shown (log scale)")
    if notes:
        parts.append(_text(left + pw, 19 * s, "; ".join(notes), anchor="end", size=TICK_PX * s,
                           color=NONFINITE_TEXT))
    return svg_document(width, height, "".join(parts), title or ylabel or "chart")


def _text(x, y, text, anchor="start", size=LABEL_PX, weight="normal", color=INK):
    return (f'<text x="{coord(x)}" y="{coord(y)}" font-size="{coord(size)}" font-weight="{weight}" '
            f'fill="{color}" text-anchor="{anchor}" font-family="sans-serif">'
            f"{html.escape(str(text))}</text>")
