"""What users pass to ``GradientTape.gradient``, checked.

Kept apart from ``gradient_tape.py`` so that the tape reads as recording and playback.
"""
import enum

import numpy as np

from ..core.arrays import is_foreign
from ..core.structure import flatten
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable
from .breaks import cast_inputs
from ..diagnostics.errors import warn_user
from .backward import forward_reach


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source with no path to the target."""
    NONE = "none"
    ZERO = "zero"


def unconnected_policy(value):
    """``unconnected_gradients=`` as an ``UnconnectedGradients`` (strings are accepted).

    >>> unconnected_policy("zero")
    <UnconnectedGradients.ZERO: 'zero'>
    """
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(str(value).lower())
    except ValueError:
        raise ValueError(f"unconnected_gradients must be nt.UnconnectedGradients.NONE or "
                         f".ZERO (or 'none' / 'zero'), not {value!r}") from None


def checked_sources(sources):
    """``gradient``'s sources as a flat list, and whether one of them is not a float
    (an int source's gradient is None, with a warning); a source that is not a
    tensor or variable raises.

    >>> import nbtape as nt
    >>> flat, int_sources = checked_sources([nt.constant(1.0), nt.constant(2)])
    >>> len(flat), int_sources
    (2, True)
    """
    flat = flatten(sources)
    int_sources = False
    for s in flat:
        if not isinstance(s, TensorLike):
            raise TypeError(not_a_tensor_message("gradient", s, role="source"))
        if s.dtype.kind not in "fc":
            int_sources = True
    return flat, int_sources


def not_a_tensor_message(method, value, role="value"):
    """What ``tape.<method>()`` says when given something it cannot follow.

    >>> not_a_tensor_message("watch", "x")
    'tape.watch() needs nbtape tensors or variables as values, not str.'
    """
    kind = type(value).__name__
    hint = ("wrap it first: x = nt.constant(x) for a fixed value, or nt.Variable(x) for "
            "one you will train")
    if isinstance(value, (int, float, complex, np.ndarray, np.generic, list)):
        return (f"tape.{method}() got a plain {kind} as its {role}; the tape can only follow "
                f"nbtape tensors and variables, so {hint}, and use that object in your "
                "computation.")
    return f"tape.{method}() needs nbtape tensors or variables as {role}s, not {kind}."


def int_source_message(source):
    """Why the gradient with respect to an integer or bool ``source`` is None."""
    name = getattr(source, "name", None) if isinstance(source, Variable) else None
    label = f"variable {name!r}" if name else "this source"
    example = np.asarray(source.numpy()).ravel()[:1]
    hint = ""
    if example.size and source.dtype.kind in "iu":
        v = int(example[0])
        hint = f" (did you mean {float(v)!r} instead of {v}?)"
    return (f"The gradient with respect to {label} is None: its dtype is {source.dtype}, and "
            f"integer and bool values are never differentiable. Create it with a float "
            f"dtype{hint}, e.g. nt.Variable(2.0) or dtype='float32'.")


def output_gradient(og, target):
    """One ``output_gradients`` entry as the seed for ``target`` (a user mistake raises).

    >>> y = Tensor(np.zeros(2))
    >>> output_gradient([1, 2], y)
    array([1., 2.])
    >>> output_gradient("ab", y)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: output_gradients holds a str ('ab'); it must be numbers: ...
    """
    value = og._value if isinstance(og, TensorLike) else og
    if not isinstance(og, TensorLike) and not is_foreign(og):
        try:
            value = np.asarray(og)
        except (ValueError, TypeError):
            value = None
    kind = getattr(value, "dtype", np.dtype(object)).kind
    if kind not in "biufc":
        raise TypeError(
            f"output_gradients holds a {type(og).__name__} ({og!r:.40}); it must be numbers: "
            f"one weight per element of its target, an array of shape {target.shape}, "
            f"e.g. np.ones({target.shape}).")
    if kind == "c" and target.dtype.kind != "c":
        raise ValueError(
            f"output_gradients is complex ({value.dtype}) but its target is real "
            f"({target.dtype}): the imaginary part would be silently dropped. Pass real "
            "weights (np.real(...) if that is what you mean), or make the target complex.")
    if value.shape != target.shape:
        raise ValueError(
            f"output_gradients entry has shape {value.shape} but its target has shape "
            f"{target.shape}; they must match.")
    if isinstance(og, Tensor):
        return og
    if is_foreign(value):       # a Dask seed stays lazy
        return value if value.dtype == target.dtype else value.astype(target.dtype)
    return np.asarray(value, dtype=target.dtype)


def target_seeds(targets, output_gradients, int_sources, sources, tracked, notes, records,
                 zeros=False):
    """``{target id: output gradient}`` for ``gradient``'s targets (``output_gradients``, or
    ones): a plain value, a target the tape does not follow and an integer one get
    none (the last with a warning, unless a noted cast or an integer source says it;
    ``zeros``: the gradient comes back as zeros, as ``unconnected_gradients="zero"`` and
    ``nt.grad`` give it, and the warning says so).  ``tracked``, ``notes`` and
    ``records`` are the tape's."""
    if output_gradients is not None:
        ogs = flatten(output_gradients)
        if len(ogs) != len(targets):
            one = (" (for one target, pass one array of its shape, e.g. np.array([...]))"
                   if len(targets) == 1 else "")
            raise ValueError(f"output_gradients has {len(ogs)} entries for "
                             f"{len(targets)} target(s); give one per target{one}.")
    else:
        ogs = [None] * len(targets)
    seeds = {}
    for t, og in zip(targets, ogs):
        if not isinstance(t, TensorLike):
            if isinstance(t, (int, float, complex, np.ndarray, np.generic)):
                continue    # a plain value (it left the tape): a constant, as in TF
            raise TypeError(not_a_tensor_message("gradient", t, role="target"))
        if t.dtype.kind not in "fc":
            # made by a cast the tape noted: the None gradient's warning names that cast
            # for each source reaching it (_warn_escape); don't say it twice
            casts = cast_inputs(notes, t._id)
            named = bool(casts) and not forward_reach(
                records, [s._id for s in sources])[1].keys().isdisjoint(casts)
            if not int_sources and not named:
                given = ("is zero (an integer or bool function is flat: nothing flows "
                         "back through it)") if zeros else "is None"
                warn_user(
                    f"The target's dtype is {t.dtype}; only float and complex targets have "
                    f"gradients, so the gradient {given}. Compute the target from float "
                    "values (e.g. 1.0 instead of 1).")
            continue
        if t._id not in tracked and all(s._id != t._id for s in sources):
            # a target that is a source is seeded, watched or not: TensorFlow seeds
            # "sources that are targets" (ones, or their output gradients), so its
            # guide's `result = v0` gives dv0 = 1.0 though it reads nothing
            continue
        if og is None:
            v = t._value
            g = (np.ones(v.shape, dtype=v.dtype) if v.shape else np.array(1, dtype=v.dtype)) \
                if not is_foreign(v) else np.ones_like(v)    # a Dask seed stays lazy
        else:
            g = output_gradient(og, t)
        prev = seeds.get(t._id)
        seeds[t._id] = g if prev is None else prev + g
    return seeds
