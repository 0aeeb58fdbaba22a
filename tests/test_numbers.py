"""The one number format (nbtape.display.numbers) and the displays that use it."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.display.numbers import array_text, number


@pytest.mark.parametrize("x, text", [
    # four significant digits, a float always looking like a float
    (1 / 3, "0.3333"), (2 / 3, "0.6667"), (0.5, "0.5"), (0.1 + 0.2, "0.3"), (3.0, "3.0"),
    (27.0, "27.0"), (0.99999, "1.0"), (2.71828, "2.718"), (31.4159, "31.42"),
    # negatives
    (-1 / 3, "-0.3333"), (-2.5, "-2.5"), (-8.0, "-8.0"), (-0.0001, "-0.0001"),
    # digits before the point are never rounded away
    (1234.5678, "1234.6"), (123456.7, "123456.7"), (123456.0, "123456.0"),
    # tiny and huge magnitudes in scientific notation
    (0.000123456, "0.0001235"), (0.0000123456, "1.235e-05"), (1e-7, "1e-07"),
    (-2.5e-12, "-2.5e-12"), (1e6, "1e+06"), (2.5e8, "2.5e+08"), (123456789.0, "1.235e+08"),
    (1e300, "1e+300"), (5e-324, "4.941e-324"),
    # zero, without a sign round-off would decide
    (0.0, "0.0"), (-0.0, "0.0"),
    # nan and inf
    (float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf"),
    # integers and booleans exactly, Python's or numpy's
    (7, "7"), (-3, "-3"), (np.int8(-3), "-3"), (np.uint64(2**63), "9223372036854775808"),
    (10**20, "100000000000000000000"), (True, "True"), (np.bool_(False), "False"),
    # numpy floats: the value their own dtype means, not its float64 expansion
    (np.float64(1 / 3), "0.3333"), (np.float32(0.1), "0.1"), (np.float16(0.1), "0.1"),
    (np.float32(1 / 3), "0.3333"), (np.float32(np.nan), "nan"),
    # complex: both parts in the same format, the sign between them
    (2 - 0.5j, "2.0-0.5j"), (1 / 3 + 1j / 3, "0.3333+0.3333j"), (3 + 0j, "3.0+0.0j"),
    (-1j, "0.0-1.0j"), (np.complex64(1 + 2j), "1.0+2.0j"), (complex(np.nan, np.inf), "nan+infj"),
])
def test_number(x, text):
    assert number(x) == text


def test_number_of_a_0d_array_and_a_python_float_agree():
    assert number(np.array(1 / 3)[()]) == number(1 / 3) == "0.3333"


@pytest.mark.parametrize("value, text", [
    (np.float64(27.0), "27.0"), (np.array(1 / 3), "0.3333"), (5, "5"),
    ([1.0, 2.5, 1 / 3], "[1.0 2.5 0.3333]"),
    ([1, 2, 3], "[1 2 3]"),
    ([True, False], "[True False]"),
    ([1 + 2j, -1j], "[1.0+2.0j 0.0-1.0j]"),
    ([np.nan, np.inf, -np.inf], "[nan inf -inf]"),
    (np.zeros(0), "[]"),
    (np.array(["a", "bc"]), "['a' 'bc']"),
])
def test_array_text(value, text):
    assert array_text(value) == text


def test_matrix_columns_line_up_on_the_decimal_point():
    assert array_text([[1.0, -0.5], [10.25, 2.0]]) == "[[ 1.0  -0.5 ]\n [10.25  2.0 ]]"
    assert array_text([[1, 20], [300, 4]]) == "[[  1  20]\n [300   4]]"
    # a word without a point (nan, inf, 1e-07) is right-aligned in its column
    assert array_text([[1e-7, np.nan], [2.5, 1e9]]) == "[[1e-07   nan]\n [  2.5 1e+09]]"
    assert array_text([[1.0, -0.5], [10.25, 2.0]], ", ", one_line=True) == (
        "[[1.0, -0.5], [10.25, 2.0]]")


def test_prefix_indents_the_following_lines():
    text = array_text(np.eye(2), ", ", "array(")
    assert text == "[[1.0, 0.0],\n       [0.0, 1.0]]"


def test_big_arrays_are_summarised_from_their_edges():
    assert array_text(np.arange(1000.0)) == "[0.0 1.0 2.0 ... 997.0 998.0 999.0]"
    text = array_text(np.arange(2000.0).reshape(50, 40))
    assert text.count("\n") == 6 and " ... " in text and text.endswith("1999.0]]")
    assert array_text(np.arange(50.0), threshold=1000).count(".0") == 50


def test_long_rows_wrap_at_numpys_default_width_whatever_the_print_options():
    a = np.full(30, 1 / 3)
    with np.printoptions(linewidth=20, precision=2, threshold=5, edgeitems=1):
        text = array_text(a)
    assert text == array_text(a)
    assert max(len(line) for line in text.splitlines()) <= 75 and "0.3333" in text
    assert "\n" not in array_text(a, one_line=True)


def test_reprs_pictures_reports_and_widgets_write_a_value_the_same_way():
    from nbtape.notebook import cell_report
    from nbtape.notebook.widgets import array_stats
    x = nt.constant(1 / 3)
    assert repr(x) == "nt.Tensor(0.3333, shape=(), dtype=float64)"
    assert repr(nt.Variable(-2 / 3, name="v")).endswith("numpy=-0.6667>")
    assert cell_report.inline_value(np.float64(1 / 3)) == "0.3333"
    assert array_stats.describe_array(np.array(1 / 3)) == "0.3333"
    assert array_stats.describe_array(np.array([1 / 3, 0.5])) == "[0.3333, 0.5]"
    assert repr(nt.constant([1 / 3, 0.5])) == "nt.Tensor([0.3333 0.5], shape=(2,), dtype=float64)"
    v = nt.constant([1 / 3, 0.5])
    with nt.GradientTape() as tape:
        tape.watch([x, v])
        y = x * v
    picture = tape.graph().source
    assert ">0.3333<" in picture and "[0.3333, 0.5]" in picture and "0.333333" not in picture
    assert "[0.1111, 0.1667]" in picture        # y = x * v, in the same format


def test_pictures_write_numpy_scalar_parameters_as_numbers_not_reprs():
    # numpy 2's repr of a scalar is np.int64(1), numpy 1's is 1: a picture shows 1 on both
    x = nt.constant(np.arange(6.0).reshape(2, 3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        np.sum(x, axis=np.int64(1))
    source = tape.graph().source
    assert "axis=1<" in source and "np.int64" not in source
    assert "[3.0, 12.0]" in source
