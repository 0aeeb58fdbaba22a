"""The words of ``nt.function``'s refusals: what froze, where, and what to write
instead (one paragraph, as every nbtape error).  The tracer (``trace.py``) raises them."""
import ast
import dis
import linecache
import os
import sys

from ..diagnostics.user_line import NUMPY_DIR, PACKAGE_DIR, describe, source_line

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
    if how in ("np.asarray", "operator.index()"):
        why, fix = plain_table_indexed() or (why, fix)
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


# the instructions that index (Python 3.11-3.13; 3.14 indexes with BINARY_OP)
_SUBSCRIPT = frozenset(("BINARY_SUBSCR", "BINARY_SLICE"))


def plain_table_indexed():
    """``(why, fix)`` when the value escaping now is the index of a plain array
    (``np.eye(5)[labels]``) or the indices of ``np.take`` of one: numpy indexes with a
    plain copy of the index, and hands neither to nbtape, so the result is a plain array
    nbtape never sees.  The fix is the user's own expression with the array made a
    tensor (``nt.constant(np.eye(5))[labels]``), whose indexing is traced.  None when
    the escape is something else (or the expression cannot be read).

    >>> plain_table_indexed() is None
    True
    """
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(PACKAGE_DIR):
        f = f.f_back
    took = False
    while f is not None and f.f_code.co_filename.startswith(NUMPY_DIR):
        took = took or f.f_code.co_name == "take"
        f = f.f_back
    if f is None:
        return None
    try:
        op = dis.opname[f.f_code.co_code[f.f_lasti]]
        if not took and op not in _SUBSCRIPT and op != "BINARY_OP":
            return None     # (a BINARY_OP that does not index is no ast.Subscript below)
        pos = list(f.f_code.co_positions())[f.f_lasti // 2]
        if pos[0] is None or pos[0] != pos[1]:
            return None
        line = linecache.getline(f.f_code.co_filename, pos[0]).encode()
        text = line[pos[2]:pos[3]].decode()
        node = ast.parse(text, mode="eval").body
    except Exception:       # (a frame without source, another Python's bytecode)
        return None
    if took and type(node) is ast.Call and node.args:
        a = node.args[0]
    elif not took and type(node) is ast.Subscript:
        a = node.value
    else:
        return None
    start, end = a.col_offset, a.end_col_offset
    src = text.encode()
    fixed = (src[:start] + b"nt.constant(" + src[start:end] + b")" + src[end:]).decode()
    table = src[start:end].decode()
    if took:
        why = (f"np.take of the plain array {table} with a tensor's indices (numpy hands "
               "np.take to nbtape only when its array is a tensor, and takes with a plain "
               "copy of the indices)")
    else:
        why = (f"indexing the plain array {table} with a tensor (numpy indexes a plain "
               "array with a plain copy of the index, and never hands the indexing to "
               "nbtape)")
    return why, (f"write `{fixed}`: with the table a tensor the indexing is traced, and "
                 "every call picks its own rows (as tf.gather or tf.one_hot does)")
