"""Arrays in a few numbers (a sample, a norm, mean and range): what a table cell shows.

Everything here is deterministic text (no addresses, no timings), so the static
snapshots built from it stay comparable by nbval.  Arrays too large to scan on
every refresh are summarised from an evenly strided sample, and say so.
"""
import numpy as np

from ...display.numbers import number

# Arrays with more elements than this are summarised from a strided sample of
# about SAMPLE values: a refresh must stay in the millisecond range even for a
# 100-million-element weight.
SAMPLE = 100_000


def fmt_shape(shape):
    """``(3, 2)`` as ``3×2``; a scalar as ``scalar``.

    >>> fmt_shape((3, 2)), fmt_shape(()), fmt_shape((5,))
    ('3×2', 'scalar', '5')
    """
    return "×".join(str(n) for n in shape) if shape else "scalar"


def sample(arr, limit=SAMPLE):
    """``(flat values, note)``: all of ``arr``, or an evenly strided sample with a note.

    >>> values, note = sample(np.arange(10.0), limit=4)
    >>> values.tolist(), note
    ([0.0, 3.0, 6.0, 9.0], 'statistics from 4 of 10 values')
    """
    flat = np.asarray(arr).reshape(-1)
    if flat.size <= limit:
        return flat, ""
    step = -(-flat.size // limit)
    part = flat[::step]
    return part, f"statistics from {part.size:,} of {flat.size:,} values"


def norm(arr):
    """The L2 norm as a float (complex arrays by modulus); exact, one pass.

    >>> norm(np.array([3.0, 4.0])), norm(np.array(3 + 4j))
    (5.0, 5.0)
    """
    a = np.asarray(arr)
    if a.dtype.kind not in "fc":
        a = a.astype(float)
    flat = a.reshape(-1)
    return float(np.sqrt(np.vdot(flat, flat).real))


def scalar_of(arr):
    """The single value of a one-element array as a Python number, else ``None``.

    >>> scalar_of(np.array([[2.5]])), scalar_of(np.zeros(2))
    (2.5, None)
    """
    a = np.asarray(arr)
    if a.size != 1:
        return None
    v = a.reshape(-1)[0]
    if a.dtype.kind == "c":
        return complex(v)
    if a.dtype.kind == "b":
        return bool(v)
    return int(v) if a.dtype.kind in "iu" else float(v)


def history_point(arr):
    """The number a sparkline follows: the value of a scalar, the norm of an array.

    Complex scalars are followed by their modulus.

    >>> history_point(np.array(-2.0)), history_point(np.array([3.0, 4.0]))
    (-2.0, 5.0)
    """
    a = np.asarray(arr)
    if a.size == 1 and a.dtype.kind != "c":
        return float(a.reshape(-1)[0])
    return norm(a)


def describe_array(arr, inline=6):
    """One line about an array: its numbers when few, else mean and range.

    >>> describe_array(np.array(2.0)), describe_array(np.array([1.0, 2.0]))
    ('2.0', '[1.0, 2.0]')
    >>> describe_array(np.arange(100.0))
    'mean 49.5, range [0.0, 99.0]'
    >>> describe_array(np.array([1.0, -1.0, 1e-17] * 3))
    'mean 0.0, range [-1.0, 1.0]'
    """
    a = np.asarray(arr)
    s = scalar_of(a)
    if s is not None and a.ndim == 0:
        return number(s)
    if a.size <= inline:
        return "[" + ", ".join(number(v) for v in a.reshape(-1).tolist()) + "]"
    values, _ = sample(a)
    if values.dtype.kind == "c":
        values = np.abs(values)
        prefix = "|·| "
    else:
        prefix = ""
    values = values.astype(float) if values.dtype.kind in "biu" else values
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return f"{prefix}no finite values"
    mean, scale = finite.mean(), np.abs(finite).max()
    if abs(mean) <= 1e-9 * scale:
        mean = 0.0      # round-off around a true zero: its digits differ between machines
    text = (f"{prefix}mean {number(mean)}, "
            f"range [{number(finite.min())}, {number(finite.max())}]")
    bad = values.size - finite.size
    if bad:
        text += f", {bad:,} non-finite" + (" in the sample" if values.size < a.size else "")
    return text


def decimate(values, buckets):
    """At most ``2 * buckets`` points that keep each bucket's min and max (spikes survive).

    Returns ``(indices, values)`` into the original sequence, in order.

    >>> idx, vals = decimate([0, 5, 1, 1, 1, -4, 1, 1], 2)
    >>> idx, vals
    ([0, 1, 4, 5], [0.0, 5.0, 1.0, -4.0])
    """
    v = np.asarray(values, dtype=float)
    n = v.size
    if n <= 2 * buckets:
        return list(range(n)), v.tolist()
    edges = np.linspace(0, n, buckets + 1).astype(int)
    keep = []
    for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist()):
        chunk = v[lo:hi]
        finite = np.isfinite(chunk)
        if not finite.all():
            # a gap must stay a gap in the picture, so keep a non-finite point
            keep.append(lo + int(np.argmin(finite)))
        if finite.any():
            masked = np.where(finite, chunk, np.nan)
            keep.append(lo + int(np.nanargmin(masked)))
            keep.append(lo + int(np.nanargmax(masked)))
    keep = sorted(set(keep))
    return keep, v[keep].tolist()
