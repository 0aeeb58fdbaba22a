import importlib.util
import sys

import numpy as np
import pytest

import nbtape as nt

pytestmark = pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                                reason="the digits ship inside scikit-learn")


def test_shapes_dtypes_and_scaling():
    (x_train, y_train), (x_test, y_test) = nt.datasets.load_digits()
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)
    assert y_train.shape == (1438,) and y_test.shape == (359,)
    assert x_train.dtype == np.float32 and y_train.dtype == np.int64
    assert x_train.min() == 0.0 and x_train.max() == 1.0
    assert set(np.unique(y_train)) == set(range(10))
    # pixel values were whole numbers 0..16
    np.testing.assert_array_equal(x_train * 16, np.round(x_train * 16))
    x64 = nt.datasets.load_digits(dtype="float64")[0][0]
    assert x64.dtype == np.float64


def test_the_data_file_read_directly_equals_scikit_learns_loader(monkeypatch):
    from sklearn.datasets import load_digits
    data, target = nt.datasets._digits_arrays()
    reference = load_digits()
    np.testing.assert_array_equal(data, reference.data)
    np.testing.assert_array_equal(target, reference.target)
    # without the file (another scikit-learn layout) the loader itself is used
    monkeypatch.setattr(nt.datasets, "_digits_file", lambda: None)
    np.testing.assert_array_equal(nt.datasets._digits_arrays()[0], reference.data)


def test_split_is_stratified_and_complete():
    data, all_labels = nt.datasets._digits_arrays()
    all_labels = all_labels.astype(int)
    (x_train, y_train), (x_test, y_test) = nt.datasets.load_digits(test_fraction=0.25)
    assert len(y_train) + len(y_test) == len(all_labels)
    np.testing.assert_array_equal(np.bincount(y_train) + np.bincount(y_test),
                                  np.bincount(all_labels))
    share = np.bincount(y_test) / np.bincount(all_labels)
    assert np.all(np.abs(share - 0.25) < 0.02)
    # each image lands on exactly one side
    everything = np.concatenate([x_train, x_test])
    expected = (data / 16).astype("float32")
    key = lambda a: sorted(map(bytes, a))
    assert key(everything) == key(expected)


def test_split_depends_only_on_the_seed():
    (a, ya), _ = nt.datasets.load_digits(seed=3)
    (b, yb), _ = nt.datasets.load_digits(seed=3)
    (c, yc), _ = nt.datasets.load_digits(seed=4)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ya, yb)
    assert not np.array_equal(ya, yc)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 2])
def test_bad_test_fraction(fraction):
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        nt.datasets.load_digits(test_fraction=fraction)


def test_missing_scikit_learn_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    assert nt.datasets._digits_file() is None
    with pytest.raises(ImportError, match="pip install scikit-learn"):
        nt.datasets.load_digits()
