"""How a tensor and a variable show themselves: ``nbtape.display`` fills this in.

The core draws nothing itself and never imports the display. ``nbtape.display.cards``
registers its text and HTML cards here when it is imported (the package facade imports
it), as the notebook layer registers the tape's pictures with ``display.pictures``:
the values ask for "their repr", the display knows how it looks. Set once at import,
never per call.
"""
from .state import shown_value, tls

_SHOWN = {}     # "tensor" / "variable" -> (text(value), html(value))


def register_repr(kind, text, html):
    """Called by the display: how a ``kind`` ("tensor" or "variable") shows itself.

    >>> import nbtape as nt
    >>> sorted(_SHOWN)                      # the package registered the display's cards
    ['tensor', 'variable']
    """
    _SHOWN[kind] = (text, html)


def text(kind, value):
    """The repr of ``value``, a ``kind``; plain ``object.__repr__`` with no display."""
    if tls.stack:
        kind, value = _told(kind, value)
    shown = _SHOWN.get(kind)
    return shown[0](value) if shown is not None else object.__repr__(value)


def html(kind, value):
    """The HTML card of ``value``, a ``kind``, or None (no card) with no display."""
    if tls.stack:
        kind, value = _told(kind, value)
    shown = _SHOWN.get(kind)
    return shown[1](value) if shown is not None else None


def _told(kind, value):
    # a value shown as text while something records: nt.function's tracer is told (its
    # text must not come back into the program as a number: state.shown_value)
    other = shown_value(value)
    return (kind, value) if other is value else ("tensor", other)
