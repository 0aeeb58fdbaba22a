"""A small, real, offline data set for the training examples.

The TensorFlow guides train on MNIST, which needs a download.  nbtape uses
the UCI handwritten digits instead: 1,797 images of 8x8 pixels, ten classes,
shipped inside scikit-learn's wheel, so it loads with no network.
"""
import importlib.util
import os

import numpy as np


_MISSING = (
    "nt.datasets.load_digits needs scikit-learn, whose wheel ships the 8x8 handwritten-"
    "digits data set (so nothing is downloaded), but scikit-learn is not installed. "
    "Install it with `pip install scikit-learn` (or install nbtape with its notebook "
    "extras: `pip install nbtape[notebook]`), then run this again.")


def _digits_file():
    """Path of the digits CSV inside the installed scikit-learn, without importing it."""
    try:
        spec = importlib.util.find_spec("sklearn")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, "datasets", "data", "digits.csv.gz")
        if os.path.isfile(path):
            return path
    return None


def _digits_arrays():
    # Importing scikit-learn takes seconds; its data file reads in milliseconds.
    path = _digits_file()
    if path is not None:
        table = np.loadtxt(path, delimiter=",")
        return table[:, :-1], table[:, -1]
    try:
        from sklearn.datasets import load_digits as _sk_load_digits
    except ImportError as err:
        raise ImportError(_MISSING) from err
    bunch = _sk_load_digits()
    return np.asarray(bunch.data), np.asarray(bunch.target)


def load_digits(test_fraction=0.2, seed=0, dtype="float32"):
    """The 8x8 handwritten digits, split into training and test sets.

    Returns ``(x_train, y_train), (x_test, y_test)``, like Keras's
    ``mnist.load_data()``: ``x`` of shape ``(n, 64)`` (the 8x8 pixels in row
    order; reshape to ``(n, 8, 8)`` to see images) scaled to [0, 1] in
    ``dtype``, and ``y`` the digits 0-9 as int64.  The split is stratified
    (every digit keeps its share in both sets) and depends only on ``seed``.

    Needs scikit-learn (the data ships inside its wheel).

    >>> import nbtape as nt
    >>> (x_train, y_train), (x_test, y_test) = nt.datasets.load_digits(test_fraction=0.2)
    >>> x_train.shape, x_test.shape, x_train.dtype, y_train.dtype
    ((1438, 64), (359, 64), dtype('float32'), dtype('int64'))
    >>> float(x_train.min()), float(x_train.max()), sorted(set(y_test.tolist())) == list(range(10))
    (0.0, 1.0, True)
    """
    if not 0.0 < float(test_fraction) < 1.0:
        raise ValueError(f"test_fraction is the share of images kept for testing and must lie "
                         f"strictly between 0 and 1, got {test_fraction!r}.")
    data, target = _digits_arrays()
    x = (data / 16.0).astype(dtype)          # pixel intensities are 0..16
    y = target.astype(np.int64)
    rng = np.random.default_rng(seed)
    train_idx, test_idx = [], []
    for digit in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == digit))
        n_test = int(round(test_fraction * idx.size))
        test_idx.append(idx[:n_test])
        train_idx.append(idx[n_test:])
    train_idx = rng.permutation(np.concatenate(train_idx))
    test_idx = rng.permutation(np.concatenate(test_idx))
    return (x[train_idx], y[train_idx]), (x[test_idx], y[test_idx])
