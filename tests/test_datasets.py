import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nbtape as nt

ROOT = Path(__file__).resolve().parent.parent
# Digests of scikit-learn 1.9.1's load_digits() data (as uint8) and target, from which
# nbtape/training/data/digits.csv.gz was written.
PIXELS_SHA256 = "8f26b2bd9d135c256808f68f14fdabddde6d9c7f869ae419704b051f0f14b3b3"
LABELS_SHA256 = "8ba4f891220f5e4c9c819638d1602d74b83618f167043c6da52a2a247841ddf0"


def test_the_shipped_digits_are_the_uci_test_set():
    pixels, labels = nt.datasets._digits_arrays()
    assert pixels.shape == (1797, 64) and labels.shape == (1797,)
    assert pixels.dtype == np.uint8 and labels.dtype == np.uint8
    assert pixels.min() == 0 and pixels.max() == 16
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert hashlib.sha256(pixels.tobytes()).hexdigest() == PIXELS_SHA256
    assert hashlib.sha256(labels.tobytes()).hexdigest() == LABELS_SHA256
    # the first image is a zero (as in every copy of this data set)
    assert labels[0] == 0 and pixels[0].reshape(8, 8)[0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="cross-checks against scikit-learn's copy when it is installed")
def test_the_shipped_digits_equal_scikit_learns():
    from sklearn.datasets import load_digits
    pixels, labels = nt.datasets._digits_arrays()
    reference = load_digits()
    np.testing.assert_array_equal(pixels, reference.data)
    np.testing.assert_array_equal(labels, reference.target)


def test_the_attribution_ships_next_to_the_data():
    notice = (ROOT / "nbtape" / "training" / "data" / "README.md").read_text()
    assert "digits.csv.gz" in notice and "CC BY 4.0" in notice and "Alpaydin" in notice


def test_loading_needs_no_other_package():
    # scikit-learn (and anything else but numpy) made unimportable
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('sklearn', 'scipy', 'pandas'):\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import nbtape as nt\n"
            "(x, y), (xt, yt) = nt.datasets.load_digits()\n"
            "print(x.shape, xt.shape)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(1438, 64) (359, 64)"


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
