"""NaN and inf on tape pictures: which values and grads hold one, and where the first was born.

"Why is my gradient NaN?" is answered on the picture itself: a value or grad that
holds a NaN or inf says how many in its label (and the node gets a red border), and
the op where the first one was born (``numerics.Birth``: the tape's
``last_nonfinite``, or found again by walking the records) gets a red double border
and a line saying what happened there.  Nothing here runs its search on a finite
tape: the checks are one ``isfinite`` per value drawn, and the search starts only
when one of them fails.
"""
import numpy as np

from ...tape.view import count, finite
from .model import quiet


def nonfinite_count(value):
    """'1 NaN of 2' (or '1 inf', '1 NaN, 2 inf of 5') for a value holding a NaN or inf;
    None for a finite one.

    >>> nonfinite_count(np.array([np.nan, 1.0])), nonfinite_count(np.float32("inf"))
    ('1 NaN of 2', '1 inf')
    >>> nonfinite_count(np.ones(3)) is None
    True
    """
    if finite(value):
        return None
    nan, inf, size = count(value)
    kinds = ", ".join(s for s in (f"{nan} NaN" if nan else "", f"{inf} inf" if inf else "")
                      if s)
    return kinds + (f" of {size}" if size > 1 else "")


def born_word(birth):
    """'NaN' or 'inf': what was born, from the value at the element the birth names."""
    v = birth.values.get("contribution" if birth.phase in ("backward", "data") else "output")
    if v is None:
        return "NaN or inf"
    return "NaN" if v != v else "inf"


def born_short(birth):
    """The pattern in a few words ('0 x inf', 'overflow in exp'), for labels."""
    return birth.pattern.split(":")[0].strip()[:40]


def born_row(birth):
    """The line of the op's box: 'NaN born here: 0 x inf', or for a NaN the user's data
    brought (numerics' "data" birth) 'NaN came in here, with the data'."""
    if birth.phase == "data":
        return f"{born_word(birth)} came in here, with the data"
    return f"{born_word(birth)} born here: {born_short(birth)}"


def born_note(birth):
    """What the player's caption adds at the op: 'the NaN is born here (0 x inf)'."""
    return f"the {born_word(birth)} is born here ({born_short(birth)})"


def gradient_birth(model, target_ids, source_ids):
    """Where the first NaN or inf of d(targets)/d(sources) was born, or None.

    The tape's own ``last_nonfinite`` when its latest gradient is this one and was not
    finite (that is the birth its warning named); else the records are walked again,
    which needs the values a persistent tape keeps.
    """
    tape = model.tape
    record, birth = tape.last_gradient, tape.last_nonfinite
    if (birth is not None and record is not None and birth.position is not None
            and birth.position < len(model.ops)
            and set(record.target_ids) == set(target_ids)
            and set(record.source_ids) == set(source_ids)
            and not all(finite(record.adjoints.get(s)) for s in record.source_ids)):
        return birth
    path_ops, _ = model.path(source_ids, target_ids)
    if any(model.ops[i].args is None for i in path_ops):
        return None         # the tape freed what the walk needs
    seeds = {}
    for t in target_ids:
        v = model.value(t)
        if v is None:
            return None
        v = np.asarray(v)
        seeds[t] = np.ones(v.shape, v.dtype)
    # the picture looks for the NaN the warning already reported: numpy should not warn
    # (or raise, under np.errstate) again while the walk recomputes 0 x inf
    with quiet(), np.errstate(all="ignore"):
        found = model.tape.backward_birth(seeds, source_ids)
    if found is None and not all(finite(model.value(t)) for t in target_ids):
        found = model.tape.forward_birth()
    return found


def picture_birth(ctx):
    """The birth to mark on the picture ``ctx`` (a ``parts.Context``) describes, or None.

    A non-finite grad on the picture gets the gradient's birth, once the reverse pass
    drawn (``backward_step``) has reached it; else a non-finite value drawn gets the
    forward pass's first NaN or inf.
    """
    model, adj, step = ctx.model, ctx.adj, ctx.step
    if adj is not None and not all(finite(adj[t]) for t in ctx.path_t if t in adj):
        birth = gradient_birth(model, sorted(ctx.targets), ctx.sources)
        if birth is not None and (birth.phase == "forward" or step is None
                                  or birth.position == step["current"]
                                  or birth.position in step["done"]):
            return birth
    if ctx.o["show_values"] and not all(finite(model.value(t)) for t in drawn_tensors(ctx)):
        return model.tape.forward_birth()
    return None


def drawn_tensors(ctx):
    """Ids of the tensors whose values the picture draws in boxes: leaves, op results."""
    out = [t for t in ctx.model.leaves if t in ctx.drawn_leaves]
    for i in ctx.plan.kept:
        out.extend(t for t in ctx.model.ops[i].out_ids if t is not None)
    return out
