"""A small, real, offline data set for the training examples.

The TensorFlow guides train on MNIST, which needs a download.  nbtape uses
the UCI handwritten digits instead: 1,797 images of 8x8 pixels, ten classes,
shipped inside nbtape (``nbtape/training/data/digits.csv.gz``, 53 KB; its source and
licence, CC BY 4.0, are in ``nbtape/training/data/README.md``), so it loads with no
network and nothing else installed.
"""
import gzip
from importlib import resources

import numpy as np

DIGITS_FILE = "digits.csv.gz"


def _digits_arrays():
    """``(pixels, labels)``: uint8 arrays of shape (1797, 64) and (1797,).

    Each line of the file is one image: its 64 pixel counts (0..16, row by row),
    then the digit.
    """
    with (resources.files("nbtape.training") / "data" / DIGITS_FILE).open("rb") as raw:
        with gzip.GzipFile(fileobj=raw) as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.uint8, ndmin=2)
    return table[:, :-1], table[:, -1]


def load_digits(test_fraction=0.2, seed=0, dtype="float32"):
    """The 8x8 handwritten digits, split into training and test sets.

    Returns ``(x_train, y_train), (x_test, y_test)``, like Keras's
    ``mnist.load_data()``: ``x`` of shape ``(n, 64)`` (the 8x8 pixels in row
    order; reshape to ``(n, 8, 8)`` to see images) scaled to [0, 1] in
    ``dtype``, and ``y`` the digits 0-9 as int64.  The split is stratified
    (every digit keeps its share in both sets) and depends only on ``seed``.

    The images ship inside nbtape, so this needs no download and no other
    package.

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
    x = (data / 16.0).astype(dtype)          # pixel counts are 0..16
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
