"""Integer class labels, shared by ``nn``'s and ``losses``' sparse cross-entropies.

Labels are never differentiated, so only their plain values matter here.
"""
import numpy as np

from ..core.state import tracing
from ..core.tensor import TensorLike


def label_values(labels):
    """The plain numpy value of ``labels`` (a tensor's value, or the array itself).

    >>> label_values([2, 0]).tolist()
    [2, 0]
    """
    return np.asarray(labels._value if isinstance(labels, TensorLike) else labels)


def computed_labels(labels):
    """``labels`` to compute with: the plain value, or, while ``nt.function`` traces,
    the tensor itself (so that a replay computes with the labels of its own call; the
    checks of ``check_labels`` look at the plain value, at trace time).

    >>> computed_labels([2, 0]).tolist()
    [2, 0]
    """
    if isinstance(labels, TensorLike) and tracing():
        return labels
    return label_values(labels)


def one_hot(labels, n, dtype):
    """Rows of ``n`` zeros with a one at each label, in ``dtype``.

    >>> one_hot([2, 0], 3, "float64").tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    lab = computed_labels(labels).astype(np.int64)
    return (lab[..., None] == np.arange(n)).astype(dtype)


def check_labels(labels, n):
    """Raise ``ValueError`` unless every label is a whole class number in ``[0, n)``.

    >>> check_labels([0, 2], 3)
    >>> check_labels([0, 3], 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: sparse labels must lie in [0, 3) for 3 classes ... range from 0 to 3. ...
    """
    lab = label_values(labels)
    if lab.dtype.kind == "f" and np.any(lab != np.floor(lab)):
        raise ValueError(
            "sparse labels must be whole class numbers (0, 1, 2, ...), but some are "
            "fractions. For one-hot or soft labels use categorical_crossentropy / "
            "softmax_cross_entropy_with_logits instead.")
    if lab.size and (np.min(lab) < 0 or np.max(lab) >= n):
        raise ValueError(
            f"sparse labels must lie in [0, {n}) for {n} classes (the last axis of the "
            f"logits), but they range from {np.min(lab)} to {np.max(lab)}. Check that the "
            "model has one output per class and that labels start at 0.")
