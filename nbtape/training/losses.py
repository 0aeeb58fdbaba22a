"""Keras's functional losses: one value per sample, reduced over the last axis.

``loss(y_true, y_pred)`` returns an array with ``y_pred``'s shape minus its
last axis (a scalar for 1-D inputs); average it yourself (``np.mean``) to
train on it, as with ``keras.losses.mean_squared_error``.  As in Keras,
``y_true`` takes ``y_pred``'s dtype, and a ``(n,)`` target against an
``(n, 1)`` prediction is lined up rather than broadcast to ``(n, n)``.
Other shapes must match (a scalar ``y_true``, or one of size 1 along an axis,
may stand for every prediction): numpy would broadcast a ``(n,)`` target
against ``(n, n)`` predictions without a word, and train on the wrong pairs.

Cross-entropies accept probabilities (clipped to ``[EPSILON, 1 - EPSILON]``,
like Keras, so ``log`` never sees 0) or, with ``from_logits=True``, raw scores
handled by the stable one-op functions of ``nbtape.nn``: no NaN for logits of
+-1000, and exact gradients there.
"""
import numpy as np

from ..diagnostics.errors import user_facing
from ..core.tensor import TensorLike
from . import nn
from .class_labels import check_labels, computed_labels, one_hot
from .clip import clip_by_value

EPSILON = 1e-7   # Keras's backend.epsilon()


def _as_pred(y_true, y_pred):
    """Both as arrays/tensors, ``y_true`` in ``y_pred``'s float dtype."""
    if not isinstance(y_pred, TensorLike):
        y_pred = np.asarray(y_pred)
        if y_pred.dtype.kind not in "fc":
            y_pred = y_pred.astype(float)
    if isinstance(y_true, TensorLike):
        if y_true.dtype != y_pred.dtype:
            y_true = y_true.astype(y_pred.dtype)
    else:
        y_true = np.asarray(y_true, dtype=y_pred.dtype)
    return y_true, y_pred


def _same_rank(a, b):
    """Keras's squeeze_or_expand_to_same_rank: line up ``(n,)`` with ``(n, 1)``."""
    if a.ndim == b.ndim + 1 and a.shape[-1] == 1:
        if b.ndim == 1:
            b = np.reshape(b, b.shape + (1,))
        else:
            a = np.reshape(a, a.shape[:-1])
    elif b.ndim == a.ndim + 1 and b.shape[-1] == 1:
        if a.ndim == 1:
            a = np.reshape(a, a.shape + (1,))
        else:
            b = np.reshape(b, b.shape[:-1])
    return a, b


def _prepare(loss, y_true, y_pred):
    y_true, y_pred = _same_rank(*_as_pred(y_true, y_pred))
    _check_shapes(loss, y_true.shape, y_pred.shape)
    return y_true, y_pred


def _check_shapes(loss, t, p):
    """One target per prediction: equal shapes, or ``y_true`` broadcast along size-1 axes."""
    if t == p or len(t) == 0:
        return
    try:
        both = np.broadcast_shapes(t, p)
    except ValueError:
        both = None
    if both == p and len(t) == len(p):
        return
    if loss == "categorical_crossentropy" and t == p[:-1]:
        hint = ("y_true looks like one class number per sample: use "
                "sparse_categorical_crossentropy for those, or one-hot encode them "
                f"(np.eye({p[-1]})[y_true]).")
    elif both is not None:
        hint = (f"numpy would broadcast them to {both} and pair every target with every "
                "prediction, which is rarely meant; reshape y_true to y_pred's shape (or "
                "np.broadcast_to(y_true, y_pred.shape) if that pairing is what you want).")
    elif len(t) != len(p):
        hint = (f"y_true has {len(t)} ax{'is' if len(t) == 1 else 'es'} and y_pred "
                f"{len(p)}; reshape one to the other's "
                "shape, with the samples on the first axis.")
    else:
        hint = ("check that both come from the same batch (the same number of samples) "
                "and have the same number of values per sample.")
    raise ValueError(f"{loss} needs y_true and y_pred of the same shape (one target per "
                     f"prediction), but got y_true of shape {t} and y_pred of shape {p}: "
                     f"{hint}")


def _mean_last(v, axis=-1):
    # a 0-d value has no axis to reduce: it already is the one per-sample value
    return v if v.ndim == 0 else np.mean(v, axis=axis)


@user_facing
def mean_squared_error(y_true, y_pred):
    """``mean((y_true - y_pred) ** 2)`` over the last axis.

    >>> import nbtape as nt
    >>> nt.losses.mean_squared_error([[0.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 0.0]])
    array([0.5, 0.5])
    """
    y_true, y_pred = _prepare("mean_squared_error", y_true, y_pred)
    return _mean_last(np.square(y_pred - y_true))


@user_facing
def mean_absolute_error(y_true, y_pred):
    """``mean(|y_true - y_pred|)`` over the last axis.

    >>> import nbtape as nt
    >>> nt.losses.mean_absolute_error([[0.0, 1.0], [1.0, 1.0]], [[2.0, 1.0], [1.0, 0.0]])
    array([1. , 0.5])
    """
    y_true, y_pred = _prepare("mean_absolute_error", y_true, y_pred)
    return _mean_last(np.abs(y_pred - y_true))


@user_facing
def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Mean over ``axis`` of ``-(y log p + (1 - y) log(1 - p))``.

    ``y_pred`` holds probabilities, or logits with ``from_logits=True`` (then
    ``p = sigmoid(y_pred)`` is never formed, so logits of +-1000 are exact).
    ``label_smoothing`` moves targets towards 0.5, as in Keras.

    >>> import nbtape as nt
    >>> y_true = [[0.0, 1.0], [0.0, 0.0]]
    >>> y_pred = [[0.6, 0.4], [0.4, 0.6]]
    >>> nt.losses.binary_crossentropy(y_true, y_pred).round(4)
    array([0.9163, 0.7136])
    >>> nt.losses.binary_crossentropy([1.0], nt.constant([-1000.0]), from_logits=True).numpy()
    array(1000.)
    """
    y_true, y_pred = _prepare("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        bce = nn.sigmoid_cross_entropy_with_logits(y_true, y_pred)
    else:
        p = clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        bce = -(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p))
    return _mean_last(bce, axis)


@user_facing
def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """``-sum(y_true * log(p))`` over ``axis``, for one-hot (or soft) targets.

    Probabilities are renormalised to sum to 1 and clipped, as in Keras;
    with ``from_logits=True`` a stable log-softmax is used instead.

    >>> import nbtape as nt
    >>> y_true = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    >>> y_pred = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]
    >>> nt.losses.categorical_crossentropy(y_true, y_pred).round(4)
    array([0.0513, 2.3026])
    """
    y_true, y_pred = _as_pred(y_true, y_pred)
    _check_shapes("categorical_crossentropy", y_true.shape, y_pred.shape)
    if label_smoothing:
        n = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(y_true, y_pred, axis=axis)
    p = y_pred / np.sum(y_pred, axis=axis, keepdims=True)
    p = clip_by_value(p, EPSILON, 1.0 - EPSILON)
    return -np.sum(y_true * np.log(p), axis=axis)


def _labels(y_true, y_pred):
    """Integer labels with the prediction's shape minus its class axis."""
    lab = computed_labels(y_true)
    if lab.ndim == y_pred.ndim and lab.ndim > 0 and lab.shape[-1] == 1:
        lab = lab[..., 0]
    if lab.shape != y_pred.shape[:-1]:
        raise ValueError(
            f"sparse_categorical_crossentropy needs one integer label per sample: labels "
            f"of shape {y_pred.shape[:-1]} for predictions of shape {y_pred.shape} (one "
            f"score per class on the last axis), but got labels of shape {lab.shape}. "
            "If your labels are one-hot vectors, use categorical_crossentropy instead.")
    check_labels(lab, y_pred.shape[-1])
    return lab.astype(np.int64)


@user_facing
def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """``-log(p[label])`` per sample, for integer class labels.

    ``y_pred`` has one probability (or, with ``from_logits=True``, one logit)
    per class on its last axis; ``y_true`` holds class numbers, shaped like
    ``y_pred`` without that axis.  Samples labelled ``ignore_class`` get loss 0.

    >>> import nbtape as nt
    >>> y_true = [1, 2]
    >>> y_pred = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]
    >>> nt.losses.sparse_categorical_crossentropy(y_true, y_pred).round(4)
    array([0.0513, 2.3026])
    >>> logits = nt.constant([[1000.0, -1000.0]])
    >>> nt.losses.sparse_categorical_crossentropy([0], logits, from_logits=True).numpy()
    array([0.])
    """
    if axis not in (-1, None) and axis != np.ndim(y_pred) - 1:
        raise ValueError(
            f"sparse_categorical_crossentropy supports only the last axis as the class "
            f"axis (axis=-1), got axis={axis}. Move the class axis last, e.g. with "
            "np.moveaxis(y_pred, axis, -1).")
    if not isinstance(y_pred, TensorLike):
        y_pred = np.asarray(y_pred, dtype=np.result_type(np.asarray(y_pred), np.float32))
    raw = computed_labels(y_true)
    valid = None
    if ignore_class is not None:
        if raw.ndim == y_pred.ndim and raw.ndim > 0 and raw.shape[-1] == 1:
            raw = raw[..., 0]
        valid = raw != ignore_class
        raw = np.where(valid, raw, 0)
    labels = _labels(raw, y_pred)
    if from_logits:
        loss = nn.sparse_softmax_cross_entropy_with_logits(labels, y_pred)
    else:
        onehot = one_hot(labels, y_pred.shape[-1], y_pred.dtype)
        p = y_pred / np.sum(y_pred, axis=-1, keepdims=True)
        p = clip_by_value(p, EPSILON, 1.0 - EPSILON)
        loss = -np.sum(onehot * np.log(p), axis=-1)
    if valid is not None:
        loss = loss * valid.astype(loss.dtype)
    return loss
