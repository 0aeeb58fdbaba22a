"""nbtape/tape/nan_patterns.py: the patterns behind a NaN or inf and their fixes, the first
line of the warning (where, what, the fix, at most 120 characters), and the advice: the
double where or a safe norm, and what an epsilon costs."""
from types import SimpleNamespace

import numpy as np
import pytest

from nbtape.tape import nan_patterns


def _birth(phase="backward", name="np.sqrt", pattern="sqrt at 0: ...", fix="a long fix " * 9):
    return SimpleNamespace(phase=phase, name=name, where=("/a/long/path/notebook.py", 1234, "f"),
                           pattern=pattern, fix=fix, index=(0,), values={})


@pytest.mark.parametrize("phase", ["backward", "forward", "data", "seed"])
@pytest.mark.parametrize("label", ["`x`", "`a_very_long_variable_name_for_weights`",
                                   "the source 3 (shape (1000, 1000))"])
def test_the_headline_fits_a_projector_line_and_says_where_and_what(phase, label):
    b = _birth(phase, pattern="a pattern whose name is long enough to crowd the line: ...")
    text = nan_patterns.headline("12 NaN and 3 inf", "batch Jacobian", label, b)
    assert len(text) <= nan_patterns.HEADLINE and "\n" not in text
    assert "12 NaN" in text
    if phase in ("backward", "forward"):
        assert "np.sqrt" in text and "line 1234" in text
    assert nan_patterns.headline("1 NaN", "gradient", "`x`", None).endswith("check_numerics().")


def test_the_sqrt_advice_prefers_the_double_where_and_prices_the_epsilon():
    pattern, fix = nan_patterns.backward_pattern("np.sqrt", {"input": 0.0}, False)
    assert fix.index("np.sqrt(np.where(x > 0, x, 1.0))") < fix.index("eps")
    # the price it names: d/dx sqrt(x + eps) at 0 = 1 / (2 sqrt(eps))
    assert "5e5 for eps = 1e-12" in fix and 0.5 / np.sqrt(1e-12) == pytest.approx(5e5)
    _, norm_fix = nan_patterns.backward_pattern("np.linalg.norm", {"input": 0.0}, False)
    assert "safe norm" in norm_fix


def test_forward_patterns_in_a_learners_words():
    assert "log of a negative number" in nan_patterns.forward_pattern(
        "np.log", {"input": -1.0, "output": float("nan")})[0]
    assert "inf times 0" in nan_patterns.forward_pattern(
        "np.multiply", {"input": float("-inf"), "output": float("nan")})[0]
