"""Text and HTML reprs of tensors, variables and tapes (plain strings, no IPython).

Text reprs follow TensorFlow's layout, with every number written by
``numbers`` (the one format of pictures, widgets and reports too), and are
deterministic (no addresses, no ids, nothing numpy-version-specific), so
notebooks that print them can be compared by nbval on numpy 1.26 and 2.x alike.
"""
import collections
import html

from . import pictures
from ..core import reprs
from ..core.state import tls
from .numbers import array_text

# Tapes with at most this many ops get their picture in the HTML repr.
PICTURE_OPS = 30
# How many watched values a one-line tape repr names before saying "and N more",
# and how many rows the HTML table of watched values shows.
LISTED = 4
ROWS = 20


def tensor_repr(t):
    """TensorFlow's layout: ``nt.Tensor(value, shape=..., dtype=...)``.

    >>> import nbtape as nt
    >>> tensor_repr(nt.constant(27.0))
    'nt.Tensor(27.0, shape=(), dtype=float64)'
    >>> print(tensor_repr(nt.constant([[8.0, 8.0], [8.0, 8.0]])))
    nt.Tensor(
    [[8.0 8.0]
     [8.0 8.0]], shape=(2, 2), dtype=float64)
    """
    text = array_text(t._value)
    sep = "\n" if "\n" in text else ""
    return f"nt.Tensor({sep}{text}, shape={t.shape}, dtype={t.dtype})"


def variable_repr(v):
    """TensorFlow's layout: ``<nt.Variable 'name' shape=... dtype=..., numpy=value>``.

    >>> import nbtape as nt
    >>> variable_repr(nt.Variable(3.0, name="x"))
    "<nt.Variable 'x' shape=() dtype=float64, numpy=3.0>"
    >>> variable_repr(nt.Variable([1.0, 2.0], trainable=False))
    "<nt.Variable 'Variable' shape=(2,) dtype=float64, trainable=False, numpy=array([1.0, 2.0])>"
    """
    text = array_text(v._value, ", ", "array(")
    text = text if v.shape == () else f"array({text})"
    sep = "\n" if "\n" in text else ""
    extra = "" if v.trainable else ", trainable=False"
    return (f"<nt.Variable {v.name!r} shape={v.shape} dtype={v.dtype}{extra}, "
            f"numpy={sep}{text}>")


# ---------------------------------------------------------------------------------
# what a tape knows about itself

def _recording_tapes_watching(obj):
    """True when a tape on this thread's recording stack follows ``obj``."""
    for rec in tls.stack:
        tape = rec.paused if rec.paused is not None else rec     # a paused tape too
        if hasattr(tape, "tracks") and tape.tracks(obj):    # a tape (not an accumulator)
            return True
    return False


def tape_state(tape):
    """Words for the tape's condition: kind first, then anything unusual.

    >>> import nbtape as nt
    >>> tape_state(nt.GradientTape(persistent=True))
    ['persistent']
    """
    words = ["persistent" if tape.persistent else "non-persistent"]
    if tape.recording:
        words.append("recording")
    if tape.consumed:
        words.append("used")
    if tape.interrupted:
        words.append("interrupted")
    if tape.retired:
        words.append("retired")
    return words


def watched_entries(tape):
    """What the tape watches, in watch order: dicts of kind, name, shape, dtype.

    A watched tensor's shape comes from the first op that used it (the tape
    keeps ids, not the tensors), so an unused one has shape ``None``.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    >>> [(e["kind"], e["name"], e["shape"]) for e in watched_entries(tape)]
    [('variable', 'x', ())]
    """
    watched = tape.watched
    wanted = {i for i, w in watched.items() if w.kind == "tensor"}
    meta = {}
    for op in tape.ops:
        if len(meta) == len(wanted):
            break        # a repr of a long tape should not walk all of it
        for i, m in zip(op.in_ids, op.metas or ()):
            if i in wanted and m is not None and i not in meta:
                meta[i] = m
    out = []
    for i, w in sorted(watched.items(), key=lambda kv: kv[1].serial):
        if w.kind == "variable":
            v = tape.watched_object(i)
            if v is None:
                continue
            out.append(dict(kind="variable", name=v.name, shape=v.shape, dtype=v.dtype,
                            trainable=v.trainable, id=i))
        else:
            shape, dtype = meta.get(i, (None, None))
            out.append(dict(kind="tensor", name=None, shape=shape, dtype=dtype,
                            trainable=None, id=i))
    return out


def op_counts(tape, top=6):
    """The most frequent op names with their counts, most frequent first.

    >>> import nbtape as nt
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x * x + x
    >>> op_counts(tape)
    [('np.multiply', 2), ('np.add', 1)]
    """
    return collections.Counter(op.name for op in tape.ops).most_common(top)


def _plural(n, word):
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _entry_text(e):
    shape = "shape unknown (not used)" if e["shape"] is None else f"shape={e['shape']}"
    if e["kind"] == "variable":
        return f"variable {e['name']!r} {shape}"
    return f"tensor {shape}"


def tape_repr(tape):
    """One line: kind and state, op count, watched values.

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x ** 3
    >>> tape_repr(tape)
    "<nt.GradientTape non-persistent: 1 op recorded; watching variable 'x' shape=()>"
    """
    entries = watched_entries(tape)
    if entries:
        listed = ", ".join(_entry_text(e) for e in entries[:LISTED])
        if len(entries) > LISTED:
            listed += f" and {len(entries) - LISTED} more"
    else:
        listed = "nothing"
    return (f"<nt.GradientTape {', '.join(tape_state(tape))}: "
            f"{_plural(len(tape), 'op')} recorded; watching {listed}>")


# ---------------------------------------------------------------------------------
# HTML

_BOX = ("display:inline-block;border:1px solid rgba(127,127,127,.45);border-radius:4px;"
        "padding:4px 8px;margin:2px 0;font-family:var(--jp-code-font-family,monospace);"
        "font-size:14px")
_CHIP = ("display:inline-block;border:1px solid rgba(127,127,127,.45);border-radius:8px;"
         "padding:0 6px;margin-left:4px;font-size:14px")
CELL_STYLE = "text-align:left;padding:1px 10px 1px 0;vertical-align:top"


def _chips(words):
    return "".join(f"<span style='{_CHIP}'>{html.escape(w)}</span>" for w in words)


def html_pre(text):
    """Preformatted, escaped text (values keep their numpy layout).

    >>> html_pre("[[1. 2.]] <x>")
    "<pre style='margin:4px 0 0 0'>[[1. 2.]] &lt;x&gt;</pre>"
    """
    return f"<pre style='margin:4px 0 0 0'>{html.escape(text)}</pre>"


def html_card(title, chips, body, cls):
    """The box every nbtape repr draws: a bold title, chips, then the body.

    >>> "<b>nt.Tensor</b>" in html_card("nt.Tensor", ["float64"], "", "nbtape-tensor")
    True
    """
    return (f"<div class='nbtape-repr {cls}' style='{_BOX}'><b>{html.escape(title)}</b>"
            f"{_chips(chips)}{body}</div>")


def html_table(header, rows):
    """A small left-aligned HTML table; every cell is escaped.

    >>> page = html_table(["a"], [["<b>"]])
    >>> page.count("<tr>"), "&lt;b&gt;" in page, "<b>" in page
    (2, True, False)
    """
    head = "".join(f"<th style='{CELL_STYLE}'>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='{CELL_STYLE}'>{html.escape(str(c))}</td>"
                                    for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def tensor_html(t):
    """A card with shape and dtype chips over the value.

    >>> import nbtape as nt
    >>> "shape (2,)" in tensor_html(nt.constant([1.0, 2.0]))
    True
    """
    chips = [f"shape {t.shape}", str(t.dtype)]
    if t.dtype.kind not in "fc":
        chips.append("not differentiable")
    if _recording_tapes_watching(t):
        chips.append("watched")
    return html_card("nt.Tensor", chips, html_pre(array_text(t._value)), "nbtape-tensor")


def variable_html(v):
    """A card with the name, shape, dtype, trainable and watched chips over the value.

    >>> import nbtape as nt
    >>> "not trainable" in variable_html(nt.Variable(1.0, trainable=False))
    True
    """
    chips = [f"shape {v.shape}", str(v.dtype),
             "trainable" if v.trainable else "not trainable"]
    if v.dtype.kind not in "fc":
        chips.append("not differentiable")
    if _recording_tapes_watching(v):
        chips.append("watched")
    return html_card(f"nt.Variable {v.name!r}", chips, html_pre(array_text(v._value)),
                 "nbtape-variable")


def tape_picture_svg(tape, max_ops=PICTURE_OPS):
    """SVG of a small tape's graph, or ``None`` (too big, empty, or no renderer).

    A repr must never fail, so anything going wrong in the picture just leaves
    it out.

    >>> import nbtape as nt
    >>> tape_picture_svg(nt.GradientTape()) is None
    True
    """
    if not 0 < len(tape) <= max_ops:
        return None
    try:
        svg = pictures.tape_svg(tape)
    except Exception:
        return None
    return svg if isinstance(svg, str) and svg.lstrip().startswith("<svg") else None


def tape_html(tape):
    """A card: state chips, op counts by name, watched values, and a small tape's picture.

    >>> import nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape() as tape:
    ...     y = x ** 3
    >>> "1 op recorded" in tape_html(tape) and "power" in tape_html(tape)
    True
    """
    n = len(tape)
    parts = [f"<div>{_plural(n, 'op')} recorded"]
    counts = op_counts(tape)
    if counts:
        parts.append(": " + html.escape(", ".join(f"{name} \u00d7{k}" for name, k in counts)))
        if len(counts) < len({op.name for op in tape.ops}):
            parts.append(", \u2026")
    parts.append("</div>")
    if tape.retired:
        parts.append(f"<div>{html.escape(tape.retired)}</div>")
    if tape.interrupted:
        parts.append("<div>Recording was interrupted (Ctrl-C): the tape keeps what it "
                     "recorded before that.</div>")
    entries = watched_entries(tape)
    if entries:
        rows = [[e["kind"], e["name"] or "", "?" if e["shape"] is None else e["shape"],
                 e["dtype"] if e["dtype"] is not None else "?"] for e in entries[:ROWS]]
        parts.append("<div style='margin-top:4px'>watching:</div>"
                     + html_table(["kind", "name", "shape", "dtype"], rows))
        if len(entries) > ROWS:
            parts.append(f"<div>\u2026 and {len(entries) - ROWS} more</div>")
    else:
        parts.append("<div>watching nothing</div>")
    svg = tape_picture_svg(tape)
    if svg:
        # scrolls sideways rather than being cut when the picture is wider than the page
        parts.append(f"<div class='nbtape-tape-picture' style='margin-top:4px;"
                     f"overflow-x:auto;max-width:100%'>{svg}</div>")
    return html_card("nt.GradientTape", tape_state(tape), "".join(parts), "nbtape-tape")


# the values' reprs come from here (the core never imports the display)
reprs.register_repr("tensor", tensor_repr, tensor_html)
reprs.register_repr("variable", variable_repr, variable_html)
