"""What users pass to ``GradientTape.gradient``, checked.

Kept apart from ``tape.py`` so that the tape reads as recording and playback.
"""
import numpy as np

from .arrays import is_foreign
from .tensor import Tensor, TensorLike


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
