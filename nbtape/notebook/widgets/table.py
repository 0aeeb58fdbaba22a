"""The inspector's table: one row per variable, as HTML (live and static) and as text.

A ``VariableRow`` is fed by engine events (cheap: a few float operations each); a
``RowState`` is its frozen copy, taken under the inspector's lock and rendered
outside it.  Pictures follow the array's size: a heat map of every element for
small vectors and matrices, a histogram (of a strided sample, for huge arrays)
otherwise, so a million-element weight costs one small SVG.
"""
import collections
import html

import numpy as np

from ...display import palette as P
from ...display.numbers import number
from .array_stats import (describe_array, fmt_shape, history_point, norm, sample,
                          scalar_of)
from .svg import blocks, heatmap, histogram, sparkline

# Heat maps show every element when the array fits this grid; larger arrays get a
# histogram.  Vectors longer than HEAT_COLS wrap onto several rows.
HEAT_COLS, HEAT_ROWS = 32, 16
PICTURE_WIDTH = 256         # a heat map's cells: 8 to 24 px a side
# gradients in reverse mode's colour, values in blue (nbtape.display.palette)
GRAD_COLOR = P.REVERSE
BASE_PX = 16            # the table's text; its smallest (counts, notes) is 0.875 of it

RowState = collections.namedtuple(
    "RowState", "name shape dtype value history grad grad_history assigns grads version")


class VariableRow:
    """The live state of one inspected variable (history of values and gradients).

    >>> import nbtape as nt
    >>> v = nt.Variable([3.0, 4.0])
    >>> row = VariableRow(v, "v", history=3)
    >>> for k in range(4): row.on_assign(np.array([k, 0.0]))
    >>> row.on_gradient(np.array([1.0, 0.0]))
    >>> s = row.state()
    >>> list(s.history), list(s.grad_history), s.assigns, s.grads
    ([1.0, 2.0, 3.0], [1.0], 4, 1)
    """

    __slots__ = ("var", "name", "history", "grad", "grad_history", "assigns", "grads",
                 "version")

    def __init__(self, var, name, history=200):
        self.var = var
        self.name = name
        self.history = collections.deque([history_point(var._value)], maxlen=history)
        self.grad = None
        self.grad_history = collections.deque(maxlen=history)
        self.assigns = self.grads = self.version = 0

    def on_assign(self, value):
        self.history.append(history_point(value))
        self.assigns += 1
        self.version += 1

    def on_gradient(self, grad):
        self.grad = grad
        self.grad_history.append(norm(grad))
        self.grads += 1
        self.version += 1

    def state(self):
        v = self.var
        return RowState(self.name, v.shape, v.dtype, v._value, tuple(self.history),
                        self.grad, tuple(self.grad_history), self.assigns, self.grads,
                        self.version)


def picture(arr, color=None):
    """A small picture of an array: a heat map when every element fits, else a histogram.

    Scalars get none (their number says it all).

    >>> picture(np.array(2.0))
    ''
    >>> "<rect" in picture(np.eye(3)), "histogram" in picture(np.zeros(10_000))
    (True, True)
    """
    a = np.asarray(arr)
    if a.size <= 1:
        return ""
    grid = None
    if a.ndim == 1 and a.size <= HEAT_COLS:
        grid = a[None, :]
    elif a.ndim == 1 and a.size <= HEAT_COLS * HEAT_ROWS:
        rows = -(-a.size // HEAT_COLS)
        pad = np.full(rows * HEAT_COLS - a.size, np.nan)
        grid = np.concatenate([a.astype(np.result_type(a.dtype, float)), pad])
        grid = grid.reshape(rows, HEAT_COLS)
    elif a.ndim == 2 and a.shape[0] <= HEAT_ROWS and a.shape[1] <= HEAT_COLS:
        grid = a
    if grid is not None:
        cell = max(8, min(24, PICTURE_WIDTH // grid.shape[1]))
        return heatmap(grid, cell=cell)
    values, _ = sample(a)
    return histogram(values, bins=24, width=192, height=40,
                     **({"color": color} if color else {}))


def _value_cells(arr):
    return describe_array(arr), picture(arr)


COLUMNS = ("name", "shape", "dtype", "value", "history", "gradient", "‖gradient‖")


def text_cells(st):
    """The row as text cells, in ``COLUMNS`` order (deterministic).

    >>> import nbtape as nt
    >>> row = VariableRow(nt.Variable([3.0, 4.0]), "v"); row.on_gradient(np.array([0.0, 2.0]))
    >>> text_cells(row.state())
    ['v', '2', 'float64', '[3.0, 4.0]', '▄', '[0.0, 2.0]', '2.0']
    """
    grad_text = "—" if st.grad is None else describe_array(st.grad)
    grad_norm = "—" if st.grad is None else number(st.grad_history[-1])
    return [st.name, fmt_shape(st.shape), str(st.dtype), describe_array(st.value),
            blocks(st.history), grad_text, grad_norm]


def text_table(states, header, notes=()):
    """A fixed-width text table (for terminals and the text/plain snapshot).

    >>> import nbtape as nt
    >>> st = VariableRow(nt.Variable(2.0), "w").state()
    >>> print(text_table([st], "nt.inspect: 1 variable"))
    nt.inspect: 1 variable
    name  shape   dtype    value  history  gradient  ‖gradient‖
    w     scalar  float64  2.0    ▄        —         —
    """
    rows = [list(COLUMNS)] + [text_cells(st) for st in states]
    widths = [max(len(r[k]) for r in rows) for k in range(len(COLUMNS))]
    lines = [header]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    lines.extend(notes)
    return "\n".join(lines)


_TD = "padding:3px 10px;text-align:left;vertical-align:middle;border-bottom:1px solid #ddd"
_TH = _TD + ";font-weight:600;border-bottom:2px solid #999"


def row_html(st):
    """One ``<tr>``: numbers as text (readable even where SVG is stripped) and pictures.

    >>> import nbtape as nt
    >>> tr = row_html(VariableRow(nt.Variable(np.eye(2)), "I").state())
    >>> tr.startswith("<tr>"), "<code>[1.0, 0.0, 0.0, 1.0]</code>" in tr, tr.count("<title>[")
    (True, True, 4)
    """
    e = html.escape
    value_text, value_pic = _value_cells(st.value)
    scalar = scalar_of(st.value) is not None and np.ndim(st.value) == 0
    hist_title = "value" if scalar else "‖value‖"
    if st.grad is None:
        grad_cell, gnorm_cell = f'<span style="color:{P.MUTED_TEXT}">none yet</span>', "—"
    else:
        g_text, g_pic = _value_cells(st.grad)
        grad_cell = f"<code>{e(g_text)}</code> {g_pic}"
        gnorm_cell = (f"<code>{e(number(st.grad_history[-1]))}</code> "
                      + sparkline(st.grad_history, color=GRAD_COLOR,
                                  label=f"‖gradient‖ over the last {len(st.grad_history)} "
                                        f"gradients"))
    counts = f"{st.assigns} assign{'s' if st.assigns != 1 else ''} · " \
             f"{st.grads} gradient{'s' if st.grads != 1 else ''}"
    cells = [
        f"<b>{e(st.name)}</b><br><span style='color:{P.MUTED_TEXT};font-size:0.875em'>"
        f"{e(counts)}</span>",
        e(fmt_shape(st.shape)),
        e(str(st.dtype)),
        f"<code>{e(value_text)}</code> {value_pic}",
        sparkline(st.history, label=f"{hist_title} over the last {len(st.history)} values"),
        grad_cell,
        gnorm_cell,
    ]
    return "<tr>" + "".join(f'<td style="{_TD}">{c}</td>' for c in cells) + "</tr>"


def inspector_html(row_htmls, header, notes=(), scale=1.0):
    """The whole table (rows already rendered), with a header line and notes under it.

    Text is ``BASE_PX`` times ``scale`` (the smallest, 0.875 of it, is 14 px at 1).

    >>> page = inspector_html(["<tr><td>w</td></tr>"], "2 < 3", notes=["a note"])
    >>> "2 &lt; 3" in page, page.count("<th "), "a note" in page
    (True, 7, True)
    """
    heads = "".join(f'<th style="{_TH}">{html.escape(c)}</th>' for c in COLUMNS)
    note_html = "".join(f'<div style="color:{P.REVERSE_TEXT};font-size:0.875em">'
                        f'{html.escape(n)}</div>' for n in notes)
    return (f'<div class="nbtape-inspect" style="font-family:sans-serif;'
            f'font-size:{P.text_px(BASE_PX, scale)};overflow-x:auto;max-width:100%">'
            # code inherits the table's size: "monospace, monospace" turns off the
            # browsers' habit of drawing bare monospace at 13/16 of the size around it
            f"<style>.nbtape-inspect code{{font-family:monospace,monospace;font-size:1em}}"
            f"</style>"
            f'<div style="font-weight:600;margin-bottom:4px">{html.escape(header)}</div>'
            f'<table style="border-collapse:collapse"><thead><tr>{heads}</tr></thead>'
            f'<tbody>{"".join(row_htmls)}</tbody></table>{note_html}</div>')
