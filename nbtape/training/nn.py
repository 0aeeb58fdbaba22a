"""Activations numpy lacks, each one recorded op with a stable gradient rule.

Written naively (``np.log(1 + np.exp(x))``, ``np.exp(x) / np.sum(np.exp(x))``)
these overflow at inputs like 100 or 1000 and their tape gradients become
``inf``/``NaN``.  Each function here computes its value with the usual
shift-by-the-max or ``exp(-|x|)`` tricks and states its derivative in terms
of already-stable quantities (``sigmoid``, ``softmax``, ``exp(log_softmax)``),
so the gradient is finite wherever the value is.

The rules are written with numpy calls only, so in higher-order
differentiation (a tape recording another tape's gradient) they are recorded
too: second derivatives of every function here work.
"""
import numpy as np

from ..core.arrays import is_foreign
from ..core.primitive import primitive
from ..core.registry import defjvp, defvjp
from ..rules.util import shape_of
from .class_labels import check_labels, one_hot


def _array(x):
    """``x`` as an array for numpy calls: a Dask (or CuPy) array stays one, so the
    activations stay lazy (``np.asarray`` would compute it into memory)."""
    return x if type(x) is np.ndarray or is_foreign(x) else np.asarray(x)


def _keepdims_shape(shape, axis):
    """``shape`` with the reduced axes kept as 1 (what ``keepdims=True`` gives)."""
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    else:
        axes = {a % ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _with_kept_dims(v, x, axis, keepdims):
    """A reduction's output (or adjoint) reshaped to broadcast against ``x``."""
    if keepdims:
        return v
    return np.reshape(v, _keepdims_shape(shape_of(x), axis))


# --- sigmoid ---------------------------------------------------------------------------
@primitive
def _sigmoid(x):
    x = _array(x)
    # exp(-|x|) never overflows; pick the algebraically equal form per sign
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


defvjp(_sigmoid.raw, lambda g, ans, x: g * ans * (1 - ans), name="nn.sigmoid")
defjvp(_sigmoid.raw, lambda t, ans, x: t * ans * (1 - ans))


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))``, exact at extreme inputs.

    Its derivative ``s * (1 - s)`` peaks at 0.25 at 0 and is 0, not NaN, at +-1000.

    >>> import nbtape as nt
    >>> x = nt.constant([-1000.0, 0.0, 1000.0])
    >>> with nt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = nt.nn.sigmoid(x)
    >>> y.numpy(), t.gradient(y, x).numpy()
    (array([0. , 0.5, 1. ]), array([0.  , 0.25, 0.  ]))
    """
    return _sigmoid(x)


# --- relu --------------------------------------------------------------------------------
@primitive
def _relu(x):
    return np.maximum(x, 0)


# The derivative at exactly 0 is taken as 0, as TensorFlow does.
# a multiply by the mask, not np.where: several times faster on large random masks
defvjp(_relu.raw, lambda g, ans, x: g * (x > 0), name="nn.relu")
defjvp(_relu.raw, lambda t, ans, x: t * (x > 0))


def relu(x):
    """``max(x, 0)``; its gradient is 1 where ``x > 0`` and 0 elsewhere (also at 0).

    >>> import nbtape as nt
    >>> x = nt.constant([-2.0, 0.0, 3.0])
    >>> with nt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = nt.nn.relu(x)
    >>> y.numpy(), t.gradient(y, x).numpy()
    (array([0., 0., 3.]), array([0., 0., 1.]))
    """
    return _relu(x)


# --- softplus ------------------------------------------------------------------------------
@primitive
def _softplus(x):
    x = _array(x)
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow, no loss of small values
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


defvjp(_softplus.raw, lambda g, ans, x: g * _sigmoid(x), name="nn.softplus")
defjvp(_softplus.raw, lambda t, ans, x: t * _sigmoid(x))


def softplus(x):
    """``log(1 + exp(x))``, computed without overflow; its derivative is ``sigmoid(x)``.

    The naive formula gives ``inf`` at 1000 and a NaN gradient at 100 in float32;
    this one gives 1000 and 1.0.

    >>> import numpy as np, nbtape as nt
    >>> x = nt.constant(np.array([100.0, 1000.0], dtype="float32"))
    >>> with nt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = nt.nn.softplus(x)
    >>> y.numpy(), t.gradient(y, x).numpy()
    (array([ 100., 1000.], dtype=float32), array([1., 1.], dtype=float32))
    """
    return _softplus(x)


# --- softmax -------------------------------------------------------------------------------
@primitive
def _softmax(x, axis=-1):
    x = _array(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


defvjp(_softmax.raw, lambda g, ans, x, axis=-1:
       ans * (g - np.sum(g * ans, axis=axis, keepdims=True)), name="nn.softmax")
defjvp(_softmax.raw, lambda t, ans, x, axis=-1:
       ans * (t - np.sum(t * ans, axis=axis, keepdims=True)))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis`` (default: the last), shifted so it never overflows.

    >>> import nbtape as nt
    >>> nt.nn.softmax(nt.constant([1000.0, 1000.0, -1000.0])).numpy()
    array([0.5, 0.5, 0. ])
    """
    return _softmax(x, axis=axis)


# --- logsumexp -------------------------------------------------------------------------------
@primitive
def _logsumexp(x, axis=None, keepdims=False):
    x = _array(x)
    m = np.max(x, axis=axis, keepdims=True)
    # a slice of all -inf (or one holding inf) would make x - m NaN; shifting by 0 is exact there
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


# softmax(x) is exp(x - logsumexp(x)) computed without the rounding of the large sum
def _lse_vjp(g, ans, x, axis=None, keepdims=False):
    return _with_kept_dims(g, x, axis, keepdims) * _softmax(x, axis=axis)


def _lse_jvp(t, ans, x, axis=None, keepdims=False):
    return np.sum(t * _softmax(x, axis=axis), axis=axis, keepdims=keepdims)


defvjp(_logsumexp.raw, _lse_vjp, name="nn.logsumexp")
defjvp(_logsumexp.raw, _lse_jvp)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))`` without overflow (TensorFlow's ``reduce_logsumexp``).

    Its gradient is ``softmax(x)`` along ``axis``, finite for any finite input.

    >>> import nbtape as nt
    >>> x = nt.constant([1000.0, 1000.0])
    >>> with nt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = nt.nn.logsumexp(x)
    >>> round(float(y), 6), t.gradient(y, x).numpy()
    (1000.693147, array([0.5, 0.5]))
    """
    return _logsumexp(x, axis=axis, keepdims=keepdims)


# --- log_softmax -------------------------------------------------------------------------------
@primitive
def _log_softmax(x, axis=-1):
    x = _array(x)
    # the ufuncs' reduce: what np.max and np.sum call on an ndarray, without their wrappers
    if type(x) is not np.ndarray:       # Dask implements np.max and np.sum, not .reduce
        shifted = x - np.max(x, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    shifted = x - np.maximum.reduce(x, axis, keepdims=True)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis, keepdims=True))


def _log_softmax_vjp(g, ans, x, axis=-1):
    total = (np.add.reduce(g, axis, keepdims=True) if type(g) is np.ndarray   # as np.sum
             else np.sum(g, axis=axis, keepdims=True))
    return g - np.exp(ans) * total


defvjp(_log_softmax.raw, _log_softmax_vjp, name="nn.log_softmax")
defjvp(_log_softmax.raw, lambda t, ans, x, axis=-1:
       t - np.sum(np.exp(ans) * t, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``: log-probabilities, finite where ``log(softmax)`` is not.

    >>> import nbtape as nt
    >>> nt.nn.log_softmax(nt.constant([0.0, 2000.0])).numpy()
    array([-2000.,     0.])
    """
    return _log_softmax(x, axis=axis)


# --- cross-entropies from logits (what the losses use with from_logits=True) -----------------
@primitive
def _sigmoid_ce(labels, logits):
    z = _array(logits)
    # max(z, 0) - z*y + log(1 + e^-|z|): TensorFlow's overflow-free form
    return np.maximum(z, 0) - z * labels + np.log1p(np.exp(-np.abs(z)))


defvjp(_sigmoid_ce.raw,
       lambda g, ans, labels, logits: -g * logits,
       lambda g, ans, labels, logits: g * (_sigmoid(logits) - labels),
       name="nn.sigmoid_cross_entropy_with_logits")
defjvp(_sigmoid_ce.raw,
       lambda t, ans, labels, logits: -t * logits,
       lambda t, ans, labels, logits: t * (_sigmoid(logits) - labels))


def sigmoid_cross_entropy_with_logits(labels, logits):
    """Elementwise ``-(y log sigmoid(z) + (1 - y) log(1 - sigmoid(z)))``, stable for any ``z``.

    The gradient with respect to ``logits`` is ``sigmoid(z) - y``.

    >>> import nbtape as nt
    >>> z = nt.constant([-1000.0, 0.0, 1000.0])
    >>> with nt.GradientTape() as t:
    ...     t.watch(z)
    ...     loss = nt.nn.sigmoid_cross_entropy_with_logits([1.0, 1.0, 1.0], z)
    >>> loss.numpy().round(4).tolist(), t.gradient(loss, z).numpy().tolist()
    ([1000.0, 0.6931, 0.0], [-1.0, -0.5, 0.0])
    """
    return _sigmoid_ce(labels, logits)


@primitive
def _sparse_softmax_ce(labels, logits):
    logits = np.asarray(logits)
    lab = np.asarray(labels).astype(np.int64)
    return -np.take_along_axis(_log_softmax.raw(logits), lab[..., None], axis=-1)[..., 0]


def _sparse_ce_vjp(g, ans, labels, logits):
    shape = shape_of(logits)
    g = np.reshape(g, tuple(shape[:-1]) + (1,))
    return g * (_softmax(logits) - one_hot(labels, shape[-1], logits.dtype))


def _sparse_ce_jvp(t, ans, labels, logits):
    onehot = one_hot(labels, shape_of(logits)[-1], logits.dtype)
    return np.sum(t * (_softmax(logits) - onehot), axis=-1)


defvjp(_sparse_softmax_ce.raw, None, _sparse_ce_vjp,
       name="nn.sparse_softmax_cross_entropy_with_logits")
defjvp(_sparse_softmax_ce.raw, None, _sparse_ce_jvp)


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    """``-log_softmax(logits)[label]`` per row, for integer class labels; stable for any logits.

    ``labels`` has the shape of ``logits`` without its last (class) axis.  The
    gradient with respect to ``logits`` is ``softmax(logits) - one_hot(labels)``.

    >>> import nbtape as nt
    >>> z = nt.constant([[1000.0, -1000.0], [0.0, 0.0]])
    >>> with nt.GradientTape() as t:
    ...     t.watch(z)
    ...     loss = nt.nn.sparse_softmax_cross_entropy_with_logits([1, 0], z)
    >>> loss.numpy().round(4).tolist(), t.gradient(loss, z).numpy().tolist()
    ([2000.0, 0.6931], [[1.0, -1.0], [-0.5, 0.5]])
    """
    check_labels(labels, shape_of(logits)[-1])
    return _sparse_softmax_ce(labels, logits)


@primitive
def _softmax_ce(labels, logits, axis=-1):
    return -np.sum(labels * _log_softmax.raw(logits, axis=axis), axis=axis)


def _softmax_ce_vjp_labels(g, ans, labels, logits, axis=-1):
    return -_with_kept_dims(g, logits, axis, False) * _log_softmax(logits, axis=axis)


def _softmax_ce_vjp_logits(g, ans, labels, logits, axis=-1):
    g = _with_kept_dims(g, logits, axis, False)
    total = np.sum(labels, axis=axis, keepdims=True)
    return g * (_softmax(logits, axis=axis) * total - labels)


defvjp(_softmax_ce.raw, _softmax_ce_vjp_labels, _softmax_ce_vjp_logits,
       name="nn.softmax_cross_entropy_with_logits")
defjvp(_softmax_ce.raw,
       lambda t, ans, labels, logits, axis=-1:
       -np.sum(t * _log_softmax(logits, axis=axis), axis=axis),
       lambda t, ans, labels, logits, axis=-1:
       np.sum(t * (_softmax(logits, axis=axis) * np.sum(labels, axis=axis, keepdims=True)
                   - labels), axis=axis))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    """``-sum(labels * log_softmax(logits))`` along ``axis``, for one-hot or soft labels.

    >>> import nbtape as nt
    >>> z = nt.constant([[1000.0, -1000.0]])
    >>> nt.nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], z).numpy()
    array([2000.])
    """
    return _softmax_ce(labels, logits, axis=axis)
