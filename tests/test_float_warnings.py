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


# Where numpy cannot warn (WebAssembly: no floating-point flags, so Pyodide's numpy never
# sees an overflow), nbtape says what numpy would have.  Simulated here: numpy's own
# warnings from inside nbtape are dropped and dispatch is told numpy is silent.
SILENT_CASES = {
    "overflow": lambda: np.exp(nt.constant(np.float32(100.0))),
    "sqrt of -1": lambda: np.sqrt(nt.constant(np.array([-1.0, 4.0]))),
    "1 / 0": lambda: 1.0 / nt.constant(np.array([1.0, 0.0])),
    "log 0": lambda: np.log(nt.constant(0.0)),
    "0 / 0": lambda: nt.constant(0.0) / nt.constant(0.0),
    "inf - inf": lambda: nt.constant(np.inf) - nt.constant(np.inf),
    "a keyword call": lambda: np.divide(1.0, nt.constant(np.array([1.0, 0.0])),
                                        where=np.array([True, True])),
    "float32 product": lambda: nt.constant(np.float32(1e30)) * np.float32(1e30),
    "finite": lambda: np.exp(nt.constant(1.0)),
    "inf in, inf out": lambda: np.exp(nt.constant(np.inf)),
}


def _said(case, silent, monkeypatch, errstate="warn"):
    from nbtape.core import dispatch
    monkeypatch.setattr(dispatch, "NUMPY_IS_SILENT", silent)
    with warnings.catch_warnings(record=True) as caught, np.errstate(all=errstate):
        warnings.resetwarnings()
        float_warnings.install()
        if silent:          # what numpy under WebAssembly does: nothing
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"nbtape\.")
        with nt.GradientTape():
            SILENT_CASES[case]()
    return [(str(w.message), w.filename, w.lineno) for w in caught
            if w.category is RuntimeWarning]


@pytest.mark.parametrize("case", SILENT_CASES)
def test_where_numpy_is_silent_nbtape_says_what_numpy_would(case, monkeypatch):
    numpy_said = _said(case, False, monkeypatch)
    assert _said(case, True, monkeypatch) == numpy_said
    assert all(f == __file__ for _, f, _ in numpy_said)
    assert _said(case, True, monkeypatch, errstate="ignore") == []
    if numpy_said:
        with pytest.raises(FloatingPointError, match=numpy_said[0][0].split(" (in ")[0]):
            _said(case, True, monkeypatch, errstate="raise")


def test_numpy_here_warns_so_nothing_is_checked_per_op():
    # this machine's numpy has floating-point flags; Pyodide's has none (tests/lite)
    assert float_warnings.NUMPY_IS_SILENT is False
