"""nbtape/training/class_labels.py: the plain values of integer class labels, one-hot
rows, and the check that labels are whole class numbers in range."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.training.class_labels import check_labels, label_values, one_hot


def test_label_values_of_lists_arrays_and_tensors():
    a = np.array([2, 0, 1])
    assert label_values(a) is a
    np.testing.assert_array_equal(label_values([1, 2]), [1, 2])
    t = nt.constant([1.0, 3.0])
    v = label_values(t)
    assert type(v) is np.ndarray and v.tolist() == [1.0, 3.0]
    v = label_values(nt.Variable(np.array([0, 4])))
    assert type(v) is np.ndarray and v.tolist() == [0, 4]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_one_hot_rows(dtype):
    got = one_hot([2, 0, 2], 4, dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == (3, 4)
    np.testing.assert_array_equal(got, [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 1, 0]])


def test_one_hot_of_a_batch_of_sequences_and_of_float_or_tensor_labels(rng):
    lab = rng.integers(0, 5, (3, 4))
    got = one_hot(lab, 5, "float64")
    assert got.shape == (3, 4, 5)
    np.testing.assert_array_equal(got.argmax(-1), lab)
    np.testing.assert_array_equal(got.sum(-1), np.ones((3, 4)))
    np.testing.assert_array_equal(one_hot(nt.constant([1.0, 0.0]), 2, "float64"), [[0, 1], [1, 0]])
    assert one_hot(np.int64(1), 3, float).tolist() == [0.0, 1.0, 0.0]
    assert one_hot([], 3, "float64").shape == (0, 3)


def test_check_labels_passes_whole_numbers_in_range():
    for lab in ([0, 2], np.array([1.0, 0.0]), nt.constant([2.0]), np.zeros(0), 1):
        assert check_labels(lab, 3) is None


@pytest.mark.parametrize("lab, match", [
    ([0, 3], r"lie in \[0, 3\) for 3 classes.*range from 0 to 3"),
    ([-1, 1], r"range from -1 to 1"),
    (np.array([[0, 1], [5, 2]]), r"range from 0 to 5"),
    ([0.5, 1.0], r"whole class numbers.*fractions"),
    (nt.constant([1.0, 2.25]), r"fractions"),
])
def test_check_labels_refuses(lab, match):
    with pytest.raises(ValueError, match=match):
        check_labels(lab, 3)


def test_a_fraction_is_reported_before_the_range():
    with pytest.raises(ValueError, match="fractions"):
        check_labels([7.5], 3)
