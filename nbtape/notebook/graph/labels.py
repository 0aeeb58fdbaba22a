"""Text on the tape pictures: numbers, array summaries and safely escaped labels.

Every label is a Graphviz HTML-like label built only from escaped text, so user
names and values (quotes, ``<``, ``&``, braces, newlines, control characters)
can neither break the DOT nor put markup into the SVG.
"""
from ...diagnostics.user_line import decode
from ...display.numbers import array_text, number
import html
import re

import numpy as np

FONT = "Helvetica"
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def clean(text, limit=60):
    """``text`` as one safe, short plain string (no control characters).

    >>> clean("a\\tb\\x00c" + "x" * 70, limit=10)
    'a b?cxx...'
    """
    text = _CONTROL.sub(lambda m: " " if m.group() in "\t\r" else "?", str(text))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def esc(text, limit=60):
    """``text`` escaped for a Graphviz HTML label; newlines become line breaks.

    >>> esc('say "<b>" & {x}\\nnext')
    'say &quot;&lt;b&gt;&quot; &amp; {x}<BR/>next'
    """
    lines = [html.escape(clean(line, limit), quote=True).replace("&#x27;", "&#39;")
             for line in str(text).split("\n")]
    return "<BR/>".join(lines)


def tooltip(text):
    """``text`` for a DOT tooltip attribute: one line, no quotes or backslashes.

    >>> tooltip('np.add at line 3 in "f"\\\\x')
    "np.add at line 3 in 'f'/x"
    """
    return clean(text, 200).replace("\\", "/").replace('"', "'").replace("\n", " ")


def value_text(value, small=6, shape=True):
    """The number for scalars, a short summary for small arrays, else shape and dtype.

    ``shape=False`` leaves the shape line off a small array's summary (for
    gradients and tangents, drawn under a value that already says it).

    >>> value_text(np.float64(6.0)), value_text(np.float32(6.0))
    ('6.0', '6.0 float32')
    >>> print(value_text(np.ones((2, 2))))
    [[1.0, 1.0], [1.0, 1.0]]
    (2, 2) float64
    >>> value_text(np.ones(2), shape=False), value_text(np.zeros((100, 3), dtype="float32"))
    ('[1.0, 1.0]', '(100, 3) float32')
    """
    arr = np.asarray(value)
    if arr.ndim == 0:
        text = number(arr.item())
        return text if arr.dtype == np.float64 or not shape else f"{text} {arr.dtype}"
    kind = f"{arr.shape} {arr.dtype}"
    if arr.size and arr.size <= small and arr.dtype != object:
        body = array_text(arr, ", ", one_line=True)
        return body + "\n" + kind if shape else body
    return kind


def one_line(text):
    """A name or text on one line (for captions and derivative labels).

    >>> one_line("loss\\n  (train)")
    'loss (train)'
    """
    return " ".join(str(text).split())


def meta_text(meta):
    """Shape and dtype when only those are known.

    >>> meta_text(((3,), np.dtype("float32"))), meta_text(((), np.dtype("float64")))
    ('(3,) float32', 'scalar float64')
    """
    shape, dtype = meta
    return f"{'scalar' if shape == () else tuple(shape)} {dtype}"


def short(value):
    """A parameter (axis, index, dtype, ...) in a few characters.

    >>> short(slice(1, None)), short((0, slice(None, None, 2))), short(np.zeros(5))
    ('1:', '0, ::2', 'array(5,)')
    >>> short(np.int64(1)), short(np.bool_(True)), short(0.5)
    ('1', 'True', '0.5')
    """
    if isinstance(value, slice):
        parts = ["" if v is None else short(v) for v in (value.start, value.stop)]
        text = ":".join(parts)
        return text + (f":{short(value.step)}" if value.step is not None else "")
    if isinstance(value, tuple):
        return ", ".join(short(v) for v in value)
    if value is Ellipsis:
        return "..."
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"array{value.shape}" if value.size > 4 else array_text(value, ",")
    if hasattr(value, "shape") and hasattr(value, "dtype") and not np.isscalar(value):
        return f"tensor{tuple(value.shape)}"
    if isinstance(value, (int, float, complex, np.number, np.bool_)):
        return number(value)      # not repr: numpy 2 writes np.int64(1) where numpy 1 wrote 1
    return clean(repr(value) if not isinstance(value, np.dtype) else str(value), 20)


def where_text(where):
    """'line 5' (and the function), stable across runs: file names are left out.

    >>> where_text(("/tmp/ipykernel_1/123.py", 5, "<module>")), where_text(("f.py", 2, "step"))
    ('line 5', 'line 2 in step')
    """
    where = decode(where)
    if not where:
        return "an unknown line"
    _, lineno, func = where
    return f"line {lineno}" + ("" if func.startswith("<") else f" in {func}")


def table(rows, port_rows=None):
    """An HTML-like label: a borderless table with one cell per row of markup.

    ``port_rows`` maps row positions to port names (edges can leave from them).

    >>> table(["<B>x</B>", "3.0"])
    '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><B>x</B></TD></TR><TR><TD>3.0</TD></TR></TABLE>>'
    """
    port_rows = port_rows or {}
    cells = "".join(
        f'<TR><TD{f" PORT={chr(34)}{port_rows[k]}{chr(34)}" if k in port_rows else ""}>'
        f"{row}</TD></TR>" for k, row in enumerate(rows))
    return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
            + cells + "</TABLE>>")


def small(markup, color=None, size=10):
    """Markup in a smaller (optionally coloured) font.

    >>> small("grad = 1.0", "#c2410c")
    '<FONT POINT-SIZE="10" COLOR="#c2410c">grad = 1.0</FONT>'
    """
    colour = f' COLOR="{color}"' if color else ""
    return f'<FONT POINT-SIZE="{size}"{colour}>{markup}</FONT>'


def html_label(lines, size=10, color=None):
    """A plain (table-free) HTML label from lines of text, for captions and edges.

    >>> html_label(["a < b", "c"])
    '<<FONT POINT-SIZE="10">a &lt; b<BR ALIGN="LEFT"/>c<BR ALIGN="LEFT"/></FONT>>'
    """
    body = "".join(esc(line, 200) + '<BR ALIGN="LEFT"/>' for line in lines)
    return "<" + small(body, color, size) + ">"
