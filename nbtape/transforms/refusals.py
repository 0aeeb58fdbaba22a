"""The words of ``nt.function``'s refusals: what froze, where, and what to write
instead (one paragraph, as every nbtape error).  The tracer (``trace.py``) raises them."""
import os
import sys

from ..diagnostics.user_line import PACKAGE_DIR, describe, source_line

_FIXES = {
    "bool()": (
        "Python control flow on a tensor (if, while, and/or, assert) picks one branch "
        "for good",
        "compute both branches and choose with np.where(condition, a, b) (or "
        "np.maximum/np.minimum/np.clip), pass the condition as a Python argument (one "
        "trace per value), or leave this part outside the function"),
    "float()": ("float(t) makes a Python number of a tensor",
                "keep it a tensor (arithmetic and numpy functions work on tensors), or "
                "return it from the function and convert it outside"),
    "int()": ("int(t) makes a Python number of a tensor",
              "keep it a tensor, pass the number as a Python argument (one trace per "
              "value), or return it from the function and convert it outside"),
    "complex()": ("complex(t) makes a Python number of a tensor",
                  "keep it a tensor, or return it and convert it outside"),
    ".item()": (".item() makes a Python number of a tensor",
                "keep it a tensor, or return it from the function and call .item() "
                "outside"),
    ".tolist()": (".tolist() makes Python numbers of a tensor",
                  "keep it a tensor, or return it and convert it outside"),
    ".numpy()": (".numpy() copies a tensor's value into a plain array, which numpy then "
                 "computes on unseen",
                 "call numpy functions on the tensor itself (np.sum(t), t * 2: they are "
                 "traced), or return the tensor and call .numpy() outside"),
    ".data": (".data hands out a tensor's array, which numpy then computes on unseen",
              "call numpy functions on the tensor itself (they are traced), or return "
              "the tensor and read .data outside"),
    "operator.index()": ("using a tensor as a Python integer (an index, range())",
                         "index with the tensor itself (x[t]: traced), or pass the "
                         "integer as a Python argument"),
}
_FIXES["a rule's reading of its operand's value"] = (
    "a gradient rule reads its operand's value in Python (to pick positions or a formula)",
    "compute that part outside the traced function (eagerly) and pass the result in")
_ASARRAY = ("np.asarray(t) (or np.array, or a function without a rule) copies a tensor's "
            "value into a plain array, which numpy then computes on unseen",
            "call numpy functions on the tensor itself (np.sum(t), t @ w: they are traced) "
            "instead of on a plain copy, or return the tensor and convert it outside (a "
            "plain array indexed by a tensor is such a copy: numpy indexes with a copy of "
            "the index, so write nt.constant(np.eye(5))[labels] rather than "
            "np.eye(5)[labels], and np.take(nt.constant(table), labels, axis=0))")


def refusal_message(how, where, what="a value computed from the function's arguments or variables"):
    """The one-paragraph message for a trace refused because ``how`` (an escape hook's
    word: ``"bool()"``, ``"float()"``...) let ``what`` leave at ``where`` (``caller()``).

    >>> refusal_message("bool()", None).split(":")[0]
    'nt.function cannot trace this function'
    """
    why, fix = _FIXES.get(how, _ASARRAY)
    at = ""
    if where is not None:
        line = source_line(where)
        at = f" at {describe(where)}" + (f" (`{line.strip()}`)" if line else "")
    return (f"nt.function cannot trace this function: {why}{at}, and {what} would be "
            "frozen there: every later call would replay the value it had at this first "
            f"call. Instead, {fix}. The variables were left as they were before this call.")


_HOOK_MODULES = frozenset((__name__, "nbtape.transforms.trace", "nbtape.core.tensor", "nbtape.core.variable",
                           "nbtape.rules.util"))


def inside_nbtape():
    """``"name (file)"`` of the nbtape function that let the value escape, when it was
    not the user's code (a rule that checks its operand's values in Python), else ''
    (called by the tracer's ``refuse``, two frames below the hook that told it).

    >>> inside_nbtape()
    ''
    """
    f = sys._getframe(2)
    # the tracer's own frames, and those of the hooks that told it (bool(), value_of)
    while f is not None and f.f_globals.get("__name__") in _HOOK_MODULES:
        f = f.f_back
    if f is None or not f.f_code.co_filename.startswith(PACKAGE_DIR):
        return ""
    rel = os.path.relpath(f.f_code.co_filename, os.path.dirname(PACKAGE_DIR))
    return f"{f.f_code.co_name} ({rel.replace(os.sep, '/')})"
