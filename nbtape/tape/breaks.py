"""Where a tape stops following a value, and what it says about it.

A recorded op whose result is not a float array ends the path: an integer or
bool result (``x.astype(int)``) is never differentiable, so the tape notes where
it happened; a Python value (``np.sum`` of an object array) left the tape; and
an object array (``astype(object)``, ``np.frompyfunc``) holds Python objects
nbtape cannot differentiate, so the op is recorded with a rule that has no
gradient and the error names the op that first made one.
"""
from ..diagnostics import user_line
from ..diagnostics.errors import NoGradientRuleError
from ..core.registry import VARARGS, Rule
from .bookkeeping import Note
from ..core.tensor import Tensor


class ObjectArrayRule(Rule):
    """Records an op whose result is a numpy object array (``astype(object)``,
    ``np.frompyfunc``): nbtape cannot differentiate through one, so it has no
    gradient, and the error names ``origin``, the op that first made one."""

    __slots__ = ("origin",)

    def __init__(self, rule, origin):
        super().__init__(rule.fn, rule.name, kind=VARARGS, multi=rule.multi, save=(),
                         save_ans=False)
        self.origin = origin    # (op name, where)


def off_float_path(rule, ids, outs, notes, origins):
    """The rule to record a non-float result with (object arrays), or None after
    adding to ``notes`` where the path stops."""
    tracked_id = next(i for i in ids if i is not None)
    if type(outs) is not Tensor:
        if outs is not None:        # e.g. np.sum of an object array: a Python float
            notes.append(Note("escape", tracked_id, user_line.caller(),
                          f"{rule.name}, which returned a plain {type(outs).__name__}"))
        return None
    dtype = outs._value.dtype
    if dtype.kind == "O":
        return object_rule(rule, ids, (outs._id,), origins)
    notes.append(Note("dtype", tracked_id, user_line.caller(), (rule.name, str(dtype), outs._id)))
    return None


def cast_inputs(notes, result_id):
    """The ids of the values that a cast to integers or bools turned into ``result_id``,
    from the tape's ``notes`` (none if no noted cast made it).

    >>> from nbtape.tape.bookkeeping import Note
    >>> cast_inputs([Note("dtype", 3, None, ("astype", "int64", 4))], 4)
    [3]
    """
    return [n.id for n in notes if n.kind == "dtype" and n.detail[2] == result_id]


def object_rule(rule, ids, out_ids, origins):
    """The rule that records an op making (or passing on) an object array; ``origins``
    maps object arrays to the op that first made one, which the error names."""
    origin = next((origins[i] for i in ids if i in origins), None)
    if origin is None:
        origin = (rule.name, user_line.caller_raw(2))
    for o in out_ids:
        if o is not None:
            origins[o] = origin
    return ObjectArrayRule(rule, origin)


def object_array_error(rule):
    """The ``NoGradientRuleError`` for a gradient that reached an object array."""
    return object_array_refusal(*rule.origin)


def object_array_refusal(name, where, what="gradient"):
    """The ``NoGradientRuleError`` for a ``what`` (gradient, or forward mode's tangent)
    that flows through an object array made by ``name`` at ``where``."""
    return NoGradientRuleError(
        f"the {what} you asked for flows through a numpy object array (dtype=object), "
        f"made by {name} at {_at(where)}. An object array holds Python objects, which "
        "nbtape cannot differentiate: keep the values in a float array (drop "
        "astype(object); write the function with numpy operations instead of "
        "np.frompyfunc), or wrap that step in @nt.custom_gradient with your own "
        "derivative.")


def _at(where):
    line = user_line.source_line(where)
    return user_line.describe(where) + (f": {line}" if line else "")


# Escapes that give an integer (``bool(t)``, ``int(t)``, an index): what is computed from
# one is a step function of the source, whose derivative is zero wherever it has one, so
# no share of a gradient can go missing through it (Python control flow, ``x if y > 0
# else -x``, is right as it is, as in TensorFlow and autograd).
INTEGER_ESCAPES = frozenset({"bool()", "int()", "operator.index()"})


def can_lose_a_share(note):
    """True for an escape whose plain value could carry a share of a gradient: a float
    (``float(t)``, ``.item()``, ``np.asarray``), not an integer or a bool.

    >>> can_lose_a_share(Note("escape", 1, None, "bool()"))
    False
    >>> can_lose_a_share(Note("escape", 1, None, "float()"))
    True
    """
    return note.kind == "escape" and note.detail not in INTEGER_ESCAPES


def escapes_into_path(ops, notes, reach, path=None):
    """The first escape note of a value in ``reach`` (computed from a source) that most
    likely came back onto the path as a plain number: an op on the same line, recorded
    after it, is also downstream of the source and takes a plain float operand
    (``math.exp(v[0]) * v[1]``; a mask such as ``np.where(x.numpy() > 0, x, 0)`` is
    bool, and flat, so it is no loss).  A plain
    value is a constant to the tape, so the gradient then misses its share.  Escapes
    elsewhere (``print(float(loss))``) are only named by ``explain``, and escapes that
    give an integer (``INTEGER_ESCAPES``) never lose a share, so they cost nothing here.
    ``path``, the positions of the ops between the source and the target asked for,
    limits the search to them (an op that feeds another target cannot lose this one a
    share)."""
    for n in notes:
        if not can_lose_a_share(n) or n.id not in reach or n.where is None:
            continue
        file, _, function = n.where
        for k in (range(len(ops)) if path is None else sorted(path)):
            op = ops[k]     # (the ids first: a line is decoded only when needed)
            if any(o is not None and o > n.id and o in reach for o in op.out_ids) \
                    and _same_function(op.raw_where, file, function) \
                    and op.where == n.where and _plain_float_operand(op):
                return n
    return None


def _same_function(raw, file, function):
    # an op's line is kept undecoded, (code, last instruction): the code object names the
    # file and function without decoding the line, so most ops are ruled out for free
    if raw is None:
        return False
    if type(raw[0]) is str:
        return raw[0] == file and raw[2] == function
    return raw[0].co_filename == file and raw[0].co_name == function


def _plain_float_operand(op):
    ids = op.in_ids
    for k, a in enumerate(op.args):
        if k < len(ids) and ids[k] is not None:
            continue        # a tensor the tape follows (its saved array)
        kind = a.dtype.kind if hasattr(a, "dtype") else (
            "f" if isinstance(a, (float, complex)) else "")
        if kind in ("f", "c"):
            return True
    return False


def partial_message(where, detail):
    """The warning for a gradient that misses the share of a value that escaped."""
    at = user_line.describe(where)
    line = user_line.source_line(where)
    at += f" ({line})" if line else ""
    return (f"the gradient may be incomplete: a value computed from this source left the tape "
            f"through {detail} at {at}, and what was computed from that plain value is a "
            "constant to the tape, so its share of the gradient is missing. Keep it a tensor "
            "(np.exp instead of math.exp, no float()/int()/.item()/np.asarray on the way). "
            "tape.explain(target, source) shows the whole story.")


def break_message(kind, where, detail, zeros=False):
    """Why a gradient is None (or, with ``zeros``, zeros that are not the derivative),
    from the note of the place where its path stopped.

    >>> print(break_message("dtype", None, ("astype", "int64"))[:67])
    the gradient is None because the value became int64 (an integer or
    """
    given = "comes back as zeros, which is not the derivative," if zeros else "is None"
    at = user_line.describe(where)
    line = user_line.source_line(where)
    at += f" ({line})" if line else ""
    tail = " tape.explain(target, source) shows the whole story."
    if kind == "dtype":         # there zeros are right: a cast to integers is flat
        name, dtype = detail[:2]
        given = "is zero" if zeros else given
        return (f"the gradient {given} because the value became {dtype} (an integer or bool "
                f"dtype) through {name} at {at}: integer and bool values are never "
                "differentiable, so the tape stops following it there. Keep it a float "
                "(np.round or np.floor give rounded floats, whose gradient is zero) if the "
                "gradient should flow." + tail)
    return (f"the gradient {given} because the value left the tape through {detail} at {at}: "
            "from there on it is a plain value that the tape cannot follow. Keep it a tensor "
            "(use np.stack / np.concatenate to build arrays from tensors)." + tail)
