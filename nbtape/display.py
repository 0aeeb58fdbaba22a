"""Text and HTML reprs of tensors, variables and tapes (plain strings, no IPython)."""
import html

import numpy as np


def _value_text(value, threshold=20):
    arr = np.asarray(value)
    with np.printoptions(threshold=threshold, edgeitems=3, precision=6, suppress=False):
        return np.array2string(arr, separator=", ") if arr.ndim else repr(arr.item())


def tensor_repr(t):
    return f"nt.Tensor({_value_text(t._value)}, shape={t.shape}, dtype={t.dtype})"


def variable_repr(v):
    extra = "" if v.trainable else ", trainable=False"
    return (f"nt.Variable({_value_text(v._value)}, name={v.name!r}, shape={v.shape}, "
            f"dtype={v.dtype}{extra})")


def _html_table(title, rows, value):
    cells = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(k)}</th>"
                    f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return (f"<div class='nbtape-repr'><b>{html.escape(title)}</b>"
            f"<table>{cells}</table><pre style='margin:0'>{html.escape(value)}</pre></div>")


def tensor_html(t):
    return _html_table("nt.Tensor", [("shape", t.shape), ("dtype", t.dtype)],
                       _value_text(t._value))


def variable_html(v):
    return _html_table(f"nt.Variable {v.name}",
                       [("shape", v.shape), ("dtype", v.dtype), ("trainable", v.trainable)],
                       _value_text(v._value))


def tape_summary(tape):
    ops = tape._ops
    kind = "persistent" if tape.persistent else "non-persistent"
    state = []
    if tape.recording:
        state.append("recording")
    if tape._consumed:
        state.append("used (its one gradient is taken)")
    if tape._interrupted:
        state.append("interrupted")
    watched = [v.name for v in tape.watched_variables()]
    n_tensors = sum(1 for _, w in tape._watched.items() if w[2] == "tensor")
    return kind, state, len(ops), watched, n_tensors


def tape_repr(tape):
    kind, state, n, watched, n_tensors = tape_summary(tape)
    bits = [f"{n} op{'s' if n != 1 else ''} recorded", kind] + state
    if watched:
        bits.append("variables: " + ", ".join(watched))
    if n_tensors:
        bits.append(f"{n_tensors} watched tensor{'s' if n_tensors != 1 else ''}")
    return "<nt.GradientTape: " + "; ".join(bits) + ">"


def tape_html(tape):
    kind, state, n, watched, n_tensors = tape_summary(tape)
    rows = [("ops recorded", n), ("kind", kind)]
    if state:
        rows.append(("state", ", ".join(state)))
    rows.append(("watched variables", ", ".join(watched) or "none"))
    rows.append(("watched tensors", n_tensors))
    return _html_table("nt.GradientTape", rows, "")
