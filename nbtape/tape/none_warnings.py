"""The warnings that go with a None gradient whose path left the tape.

A value that left the tape (``float(y)``, ``np.asarray(y)``, a cast to an integer)
cuts the path through it; the tape notes each such escape (its ``notes``), and these
say the one on the path to the gradient asked for: a None gradient names the escape
that made it None, and a gradient that came out but lost a part through an escape
(``math.exp(v[0]) * v[1]``) says it may be incomplete.  Kept apart from the tape so
that ``gradient_tape.py`` reads as recording and playback.
"""
from .backward import backward_steps, forward_reach
from .breaks import break_message, can_lose_a_share, escapes_into_path, partial_message
from ..diagnostics.errors import warn_user


def warn_escape(notes, escaped_at, asked, records, source, zeros=False):
    """Warn, naming the escape (or dtype change) on ``source``'s path to the target
    asked for (``asked``: the targets' ids; ``escaped_at``: note position -> the id
    counter when it was noted), if there is one.

    >>> warn_escape([], {}, [], [], None) is None
    True
    """
    breaks = [(k, n) for k, n in enumerate(notes) if n.kind in ("escape", "dtype")]
    if not breaks:
        return
    downstream = forward_reach(records, [source._id])[1]
    breaks = [(k, n) for k, n in breaks if n.id in downstream]
    if not breaks:
        return
    # the break on the path to the asked target: the last one before the target was
    # made (a value that escaped later cannot have been built into it); else the first
    made = max(asked, default=None)
    before = [n for k, n in breaks if made is not None and escaped_at.get(k, 0) < made]
    n = before[-1] if before else breaks[0][1]
    warn_user(break_message(n.kind, n.where, n.detail, zeros=zeros))


def warn_partial(ops, notes, records, sources, results, seeds):
    """Warn when an escaped value came back into a gradient that did come out (it may
    be incomplete).  ``ops`` is the tape's ``Op`` views, ``records`` its records.

    >>> warn_partial((), [], [], [], [], {}) is None
    True
    """
    # a target that escaped (print(float(loss))) cannot have come back into itself, and an
    # escape that gives an integer (bool(), int()) never loses a share: Python control flow
    # on a value (a `while` on bool(), every gradient) costs nothing here
    notes = [n for n in notes if can_lose_a_share(n) and n.id not in seeds]
    if not notes:
        return
    targets = list(seeds)
    for s, g in zip(sources, results):
        if g is not None:
            n = escapes_into_path(ops, notes, forward_reach(records, [s._id])[1],
                                  backward_steps(records, targets, [s._id]))
            if n is not None:
                warn_user(partial_message(n.where, n.detail))
