"""``nt.check_numerics()`` (nbtape/tape/check_numerics.py): inside it, the first
op, forward or backward, whose output has a NaN or inf its inputs did not have raises
``NumericsError`` saying where it was born and why; a NaN carried in is not blamed on
the op that passes it on; nothing is checked outside the block.
"""
import inspect
import warnings

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.state import tls


def _line():
    return inspect.currentframe().f_back.f_lineno


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_first_forward_op_that_makes_an_inf_raises_with_its_line(dtype):
    x = nt.constant(np.array([1.0, 0.0], dtype=dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(nt.NumericsError) as info:
            with nt.check_numerics():
                y = x * 2.0
                at = _line() + 1
                z = np.log(y)  # noqa: F841
    text = str(info.value)
    assert "np.log made a NaN or inf from finite inputs" in text
    assert f"line {at} of test_check_numerics.py" in text
    assert "element [1]" in text and "input = 0.0" in text and "output = -inf" in text
    assert "log of 0" in text.lower()
    assert isinstance(info.value, FloatingPointError) and tls.stack == []


def test_exp_overflow_in_float32_is_named_with_the_stable_form():
    x = nt.constant(np.float32(100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(nt.NumericsError, match="(?i)overflow in exp.*np.logaddexp"):
            with nt.check_numerics():
                np.log(1 + np.exp(x))


def test_the_backward_pass_is_checked_and_names_the_forward_op():
    x = nt.Variable(np.array([0.0, 4.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nt.check_numerics():
            with nt.GradientTape() as tape:
                y = np.sum(np.where(x > 0, np.sqrt(x), 0.0)); op_at = _line()
            asked_at = _line() + 2
            with pytest.raises(nt.NumericsError) as info:
                tape.gradient(y, x)
    text = str(info.value)
    assert "computing the derivative of np.sqrt in the backward pass" in text
    assert f"line {asked_at}" in text and f"line {op_at}" in text
    assert "sqrt at 0" in text.lower()


def test_a_nan_carried_in_is_not_blamed_on_the_op_that_passes_it_on():
    x = nt.constant(np.array([np.nan, 1.0]))
    with nt.check_numerics():
        y = np.sin(x) * 2.0                   # NaN in, NaN out: not born here
    assert np.isnan(y.numpy()[0])


def test_finite_work_runs_as_usual_and_outside_the_block_nothing_is_checked():
    x = nt.Variable(np.array([1.0, 2.0]))
    with nt.check_numerics():
        with nt.GradientTape() as tape:
            y = np.sum(np.sqrt(x))
        g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), 0.5 / np.sqrt([1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = np.log(nt.constant(0.0))          # no check: a plain -inf
    assert float(z) == -np.inf


def test_forward_mode_tangents_are_checked_when_the_block_is_outside():
    c = nt.constant(np.array([0.0, 4.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(nt.NumericsError):
            with nt.check_numerics():
                with nt.ForwardAccumulator(c, nt.constant(np.ones(2))):
                    np.sqrt(c)


def test_a_python_number_operand_counts_among_the_inputs():
    # the masked softmax: the -inf is the user's own operand, not born in np.where
    x = nt.constant(np.array([1.0, 2.0, 3.0]))
    mask = np.array([True, False, True])
    with nt.check_numerics():
        with nt.GradientTape() as tape:
            tape.watch(x)
            z = np.where(mask, x, -np.inf)
            p = np.exp(z - np.max(z))
            loss = -np.log(p[0] / np.sum(p))
        g = tape.gradient(loss, x)
    e = np.exp([1.0, 3.0]) / np.sum(np.exp([1.0, 3.0]))     # closed form: softmax - onehot
    np.testing.assert_allclose(g.numpy(), [e[0] - 1.0, 0.0, e[1]])


def test_forward_mode_names_the_derivative_being_computed_not_an_op_inside_its_rule():
    x = nt.constant(0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(nt.NumericsError) as info:
            with nt.check_numerics():
                with nt.ForwardAccumulator(x, nt.constant(1.0)):
                    at = _line() + 1
                    y = np.sqrt(x) + x     # noqa: F841
    text = str(info.value)
    assert "computing the derivative of np.sqrt in forward mode" in text
    assert not text.startswith("nt.check_numerics: np.divide made")
    assert f"line {at}" in text and "sqrt at 0" in text.lower()
