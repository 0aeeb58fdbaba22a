"""numpy's floating-point warnings from a recorded op (nbtape/diagnostics/float_warnings.py):
said at the user's line with numpy's words and the op's name, never at a file inside
nbtape; those a derivative raises are folded into nbtape's own NaN warning; the user's
own filters still win.  pytest replaces the warnings filters per test, so each test
installs them as an import does.
"""
import inspect
import os
import warnings

import numpy as np
import pytest

import nbtape as nt
from nbtape.diagnostics import float_warnings


def _line():
    return inspect.currentframe().f_back.f_lineno


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()        # no blanket filter in front: Python's defaults
        float_warnings.install()
        out = fn()
    return out, caught


def test_a_forward_overflow_is_said_at_the_users_line():
    x = nt.constant(np.float32(100.0))

    def run():
        with nt.GradientTape() as tape:
            tape.watch(x)
            return np.exp(x), _line() - 0
    (y, at), caught = _caught(run)
    assert float(y) == np.inf                           # numpy's value, as ever
    w, = [w for w in caught if "overflow" in str(w.message)]
    assert w.filename == __file__ and w.lineno == at
    assert str(w.message) == "overflow encountered in exp (in np.exp)"
    assert not any(os.path.dirname(nt.__file__) in w.filename for w in caught)


def test_keyword_calls_and_functions_without_a_rule_too():
    x = nt.constant(np.array([1.0, 0.0]))

    def run():
        a = np.divide(1.0, x, where=np.array([True, True])); at = _line()
        return a, at
    (a, at), caught = _caught(run)
    assert np.isinf(a.numpy()[1])
    w, = [w for w in caught if "divide by zero" in str(w.message)]
    assert w.filename == __file__ and w.lineno == at


def test_a_backward_warning_is_folded_into_the_nan_warning():
    x = nt.Variable(np.array([0.0, 4.0]))

    def run():
        with nt.GradientTape() as tape:
            y = np.sum(np.where(x > 0, np.sqrt(x), 0.0))
        return tape.gradient(y, x)
    g, caught = _caught(run)
    assert np.isnan(g.numpy()[0])
    nbtape_dir = os.path.dirname(nt.__file__)
    assert [w.filename for w in caught if w.filename.startswith(nbtape_dir)] == []
    assert any("0 x inf" in str(w.message) for w in caught)


def test_the_users_own_filters_still_win():
    x = nt.constant(np.float32(100.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        float_warnings.install()
        warnings.simplefilter("ignore", RuntimeWarning)     # the user's, added later
        np.exp(x)
    assert caught == []
    with warnings.catch_warnings():
        float_warnings.install()
        with np.errstate(over="raise"):                     # numpy's own settings too
            with pytest.raises(FloatingPointError):
                np.exp(x)
