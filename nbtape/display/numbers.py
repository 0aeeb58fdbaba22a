"""How nbtape writes numbers: one format for reprs, pictures, widgets and cell reports.

The same value reads the same everywhere it appears: up to four significant
digits (enough to compare 0.3333 with 0.25 at a glance; ``.numpy()`` has every
digit), a float always looks like a float (``3.0``, never ``3``), integers and
booleans exactly, and very small or large magnitudes in scientific notation.
The text depends only on the value (not on the machine, the numpy version or
numpy's print options), so notebooks that show it compare equal under nbval.
"""
import math
import re
import sys

import numpy as np

from ..core.arrays import is_foreign

# Significant digits of a float that is not a whole number (more when it has more
# digits before the point: 1234.5678 is 1234.6).
DIGITS = 4
# Floats from SMALL up to (not including) LARGE are written positionally, others
# in scientific notation (as Python's "g" format does for four digits).
SMALL, LARGE = 1e-4, 1e6
# Arrays with more elements than this are summarised with "..." (numpy's own
# default is 1000, far more than a learner wants to scroll past).
THRESHOLD = 100
EDGEITEMS = 3
# numpy's default, fixed here so that numpy's print options change nothing
LINE_WIDTH = 75


def number(x):
    """One scalar as text: the format every nbtape display uses.

    >>> number(1 / 3), number(-2.5), number(3.0), number(np.float16(0.1)), number(0.99999)
    ('0.3333', '-2.5', '3.0', '0.1', '1.0')
    >>> number(1234.5678), number(0.000123456), number(1e-7), number(2.5e8), number(1e20)
    ('1234.6', '0.0001235', '1e-07', '2.5e+08', '1e+20')
    >>> number(7), number(np.int8(-3)), number(True), number(2 - 0.5j), number(float("nan"))
    ('7', '-3', 'True', '2.0-0.5j', 'nan')
    """
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (complex, np.complexfloating)):
        x = complex(x)
        sign = "-" if x.imag < 0 else "+"
        return f"{number(x.real)}{sign}{number(abs(x.imag))}j"
    if isinstance(x, np.floating) and x.dtype.itemsize < 8:
        # numpy's str is the shortest text that reads back as this float16/float32,
        # so np.float16(0.1) is 0.1 and not the 0.09998 it holds in float64
        x = str(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0.0"      # -0.0 too: a sign of zero that round-off decides is noise to a reader
    size = abs(x)
    if size < LARGE and x.is_integer():
        return f"{x:.1f}"
    if SMALL <= size < LARGE:
        # never round away digits before the point: 1234.5678 is 1234.6, not 1235
        decimals = max(1, DIGITS - 1 - math.floor(math.log10(size)))
        text = f"{x:.{decimals}f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    mantissa, exponent = f"{x:.{DIGITS - 1}e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"


def array_text(value, separator=" ", prefix="", one_line=False, threshold=THRESHOLD):
    """A scalar or array as text: numpy's layout, each number written by ``number``.

    A scalar is just its number.  An array keeps numpy's brackets, rows and
    ``...`` summary (past ``threshold`` elements); in two or more dimensions the
    numbers line up on their decimal points, unless ``one_line`` asks for
    the whole array on one line (for a label).  ``prefix`` is the text that will
    precede the first line (later lines are indented to match), as in
    ``numpy.array2string``.

    >>> array_text(np.float64(27.0)), array_text([1.0, 2.5, 1 / 3]), array_text([1, 2], ", ")
    ('27.0', '[1.0 2.5 0.3333]', '[1, 2]')
    >>> print(array_text([[1.0, -0.5], [10.25, 2.0]]))
    [[ 1.0  -0.5 ]
     [10.25  2.0 ]]
    >>> array_text([[1.0, -0.5], [10.25, 2.0]], ", ", one_line=True)
    '[[1.0, -0.5], [10.25, 2.0]]'
    >>> array_text(np.arange(1000.0))
    '[0.0 1.0 2.0 ... 997.0 998.0 999.0]'
    """
    if is_foreign(value):
        return repr(value)      # a Dask array shows its graph's summary, uncomputed
    arr = np.asarray(value)
    options = dict(separator=separator, prefix=prefix, threshold=threshold, edgeitems=EDGEITEMS,
                   max_line_width=sys.maxsize if one_line else LINE_WIDTH)
    if arr.dtype.kind not in "biufc":
        text = np.array2string(arr, **options)     # strings, dates, objects: numpy's own text
    elif arr.ndim == 0:
        return number(arr[()])
    elif arr.ndim == 1 or one_line:
        text = np.array2string(arr, formatter={"all": number}, **options)
    else:
        # a first pass over just the elements numpy will print finds how wide the columns
        # are on each side of the decimal point, so that the points line up (words with
        # no point, such as nan or 1e-07, are right-aligned in the whole column)
        left = right = width = 0

        def measured(v):
            nonlocal left, right, width
            text = number(v)
            whole, point, fraction = text.partition(".")
            if point:
                left, right = max(left, len(whole)), max(right, len(point + fraction))
            width = max(width, len(text))
            return "x"       # (numpy cannot lay out empty words; this text is thrown away)

        np.array2string(arr, formatter={"all": measured}, **options)

        def aligned(v):
            whole, point, fraction = number(v).partition(".")
            text = whole.rjust(left) + (point + fraction).ljust(right) if point else whole
            return text.rjust(max(width, left + right))

        return np.array2string(arr, formatter={"all": aligned}, **options)
    return re.sub(r"\s*\n\s*", " ", text) if one_line else text
