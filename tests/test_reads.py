"""nbtape/core/reads.py: which arguments (and whether the output) a VJP reads, found
from its bytecode, so that a tape keeps only those for the reverse pass."""
import numpy as np
import pytest

import nbtape  # noqa: F401 (loads the rule table)
from nbtape.core.reads import positional_params, used_names, vjp_reads
from nbtape.core.registry import RULES, _derivative_vjp


# --- used_names ----------------------------------------------------------------------------------
def test_used_names_of_a_lambda_are_the_arguments_it_loads():
    assert used_names(lambda g, ans, x, y: g * y) == {"g", "y"}
    assert used_names(lambda g, ans, x: 2.0) == set()


def test_used_names_look_inside_nested_functions_and_closures():
    def vjp(g, ans, x, y):
        def inner():
            return ans * x
        return g * inner()
    names = used_names(vjp)
    assert {"g", "ans", "x"} <= names and "y" not in names

    scale = 3.0

    def closes(g, ans, x):
        return g * scale
    assert {"g", "scale"} <= used_names(closes) and "x" not in used_names(closes)


def test_used_names_of_code_it_cannot_read_is_none():
    assert used_names(np.add) is None
    assert used_names(len) is None


# --- positional_params ---------------------------------------------------------------------------
def test_positional_params_list_the_positional_names_only():
    def f(g, ans, x, y=1, *, keyword=2, **kw):
        return g
    assert positional_params(f) == ["g", "ans", "x", "y"]
    assert positional_params(lambda a, /, b: a) == ["a", "b"]


def test_positional_params_of_varargs_or_unreadable_functions_are_none():
    assert positional_params(lambda g, *a: g) is None
    assert positional_params(print) is None           # print(*args, sep=...)


# --- vjp_reads ------------------------------------------------------------------------------------
def test_each_vjp_reads_by_its_own_position_not_by_its_names():
    # the second VJP calls its arguments a, b: still positions 0 and 1
    assert vjp_reads([lambda g, ans, x, y: g, lambda g, out, a, b: g * a]) == ((True, False), False)


def test_none_vjps_are_skipped_and_all_none_reads_nothing():
    assert vjp_reads([None, lambda g, ans, x, y: g * ans]) == ((False, False), True)
    assert vjp_reads([None, None]) is None
    assert vjp_reads([]) is None


def test_a_vjp_with_fewer_arguments_reads_only_those():
    assert vjp_reads([lambda g, ans, x, y, z: g * z, lambda g, ans, x: g * x]) == \
        ((True, False, True), False)


@pytest.mark.parametrize("vjp", [lambda g, *args: g, lambda g: g, np.negative],
                         ids=["varargs", "no ans", "ufunc"])
def test_an_unreadable_vjp_keeps_everything(vjp):
    assert vjp_reads([lambda g, ans, x: g, vjp]) is None


def test_a_vjp_made_from_a_derivative_is_read_through_the_derivative():
    assert vjp_reads([_derivative_vjp(lambda ans, x: ans)]) == ((False,), True)
    assert vjp_reads([_derivative_vjp(lambda ans, x, y: np.cos(y))]) == ((False, True), False)
    # a derivative taking one argument fewer than a VJP is still read
    assert vjp_reads([_derivative_vjp(lambda ans: 1.0)]) == ((), False)


def test_the_registered_rules_save_what_their_vjps_read():
    assert (RULES[np.sin].save, RULES[np.sin].save_ans) == ((True,), False)
    assert (RULES[np.exp].save, RULES[np.exp].save_ans) == ((False,), True)
    assert RULES[np.add].save == (False, False) and not RULES[np.add].save_ans
    assert RULES[np.multiply].save == (True, True)
