"""nt.check_gradients: the tape against central finite differences."""
import os

import numpy as np
import pytest

import nbtape as nt


@pytest.mark.parametrize("f, args", [
    (np.sin, (np.array([0.1, 0.2, 0.3]),)),
    (lambda x: np.sum(np.tanh(x) * x ** 2), (np.linspace(-1.0, 1.0, 5),)),
    (lambda a, b: a @ b, (np.arange(6.0).reshape(2, 3) / 4, np.arange(3.0) / 3)),
    (lambda x: x[1:] * x[:-1] + np.exp(x[0]), (np.array([0.5, -0.2, 1.3]),)),
    (lambda x: np.mean(x, axis=0) / (1.0 + np.sum(x * x)), (np.ones((3, 2)) * 0.3,)),
], ids=["sin", "tanh", "matmul", "indexing", "mean"])
def test_correct_gradients_return_small_max_error(f, args):
    err = nt.check_gradients(f, *args)
    assert isinstance(err, float)
    assert 0.0 <= err < 1e-6


def test_accepts_tensors_and_python_floats():
    assert nt.check_gradients(lambda x: x ** 3, 2.0) < 1e-5
    assert nt.check_gradients(lambda x: np.sin(x), nt.constant([0.5, 1.0])) < 1e-8


def test_non_float_arguments_are_left_alone():
    err = nt.check_gradients(lambda x, n: np.sum(x ** n), np.array([1.0, 2.0]), 3)
    assert err < 1e-5


@nt.custom_gradient
def wrong_square(x):
    return x * x, lambda dy: dy * 3.0 * x       # should be 2x


def test_wrong_custom_gradient_raises_assertion_showing_both():
    x = np.array([1.0, 2.0])
    with pytest.raises(AssertionError) as info:
        nt.check_gradients(wrong_square, x)
    message = str(info.value)
    # the tape's (wrong) gradient 3x and the numerical 2x both appear
    assert "3." in message and "6." in message
    assert "2." in message and "4." in message
    assert "tape" in message.lower() and "numerical" in message.lower()


def test_wrong_gradient_in_second_argument_is_caught():
    @nt.custom_gradient
    def bad_mul(a, b):
        return a * b, lambda dy: (dy * b, dy * a * 0.0)

    with pytest.raises(AssertionError):
        nt.check_gradients(bad_mul, np.array([1.0, 2.0]), np.array([3.0, 4.0]))


def test_tolerances_are_used():
    @nt.custom_gradient
    def slightly_off(x):
        return x * 1.0, lambda dy: dy * 1.001

    x = np.array([1.0])
    with pytest.raises(AssertionError):
        nt.check_gradients(slightly_off, x)
    err = nt.check_gradients(slightly_off, x, rtol=1e-2)
    assert abs(err - 1e-3) < 1e-5


def test_eps_is_used():
    """A huge eps makes central differences of x^3 visibly wrong (error eps^2)."""
    f = lambda x: x ** 3       # noqa: E731
    assert nt.check_gradients(f, np.array([1.0]), eps=1e-5) < 1e-6
    with pytest.raises(AssertionError):
        nt.check_gradients(f, np.array([1.0]), eps=0.5)


def test_complex_argument():
    err = nt.check_gradients(lambda z: np.real(z * np.conj(z)), np.array([1.0 + 2.0j]))
    assert err < 1e-6


@pytest.mark.parametrize("args, hint", [
    ((np.array([1, 2]),), "1.0 instead of 1"),
    ((2,), "2.0 instead of 2"),
    ((np.array([True, False]),), "bool"),
    ((), "no arguments"),
])
def test_nothing_to_check_is_refused(args, hint):
    with pytest.raises(TypeError) as info:
        nt.check_gradients(np.sin, *args)
    message = str(info.value)
    assert hint in message and "check_gradients(sin)" in message
    assert "check.py" not in {os.path.basename(e.path) for e in info.traceback}


def test_integer_input_no_longer_passes_a_wrong_gradient():
    @nt.custom_gradient
    def wrong(x):
        return x * 2.0, lambda dy: dy * 5.0
    with pytest.raises(TypeError):
        nt.check_gradients(wrong, np.array([1, 2]))
    with pytest.raises(AssertionError):
        nt.check_gradients(wrong, np.array([1.0, 2.0]))


def test_a_failed_check_lists_only_the_entries_that_differ_side_by_side():
    @nt.custom_gradient
    def half_wrong(x):
        # right for the first entry, three times too big for the others
        return x * x, lambda dy: dy * 2.0 * x * np.array([1.0, 3.0, 3.0])

    with pytest.raises(AssertionError) as info:
        nt.check_gradients(half_wrong, np.array([1.0, 2.0, 0.5]))
    lines = str(info.value).splitlines()
    assert "at 2 of 3 entries" in lines[0]
    assert lines[1].split() == ["entry", "tape", "numerical", "difference"]
    # entry [0] agrees and is left out; numbers in nbtape's format, never np.float64(...)
    assert [line.split() for line in lines[2:4]] == [["[1]", "12.0", "4.0", "8.0"],
                                                     ["[2]", "3.0", "1.0", "2.0"]]
    assert lines[4].strip() == "largest absolute difference: 8.0" and "np." not in str(info.value)
