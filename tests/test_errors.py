"""Errors that explain a mistake: missing rules, plain values, used-up tapes."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.rules.registry import RULES

# Obscure numpy functions with a real (non-zero) derivative that nbtape may not cover.
# Rules are being added all the time, so each test picks the first one still uncovered.
# Each call sits on a line of its own and goes through getattr, so that the user's source
# line, which the error quotes, does not itself contain the name the error must give.
FUNCTION_CANDIDATES = [
    ("np.i0",
     lambda x: getattr(np, "i0")(x),
     np.i0),
    ("np.polyval",
     lambda x: getattr(np, "polyval")(x, 2.0),
     np.polyval),
    ("np.trapezoid",
     lambda x: getattr(np, "trapezoid")(x * x),
     getattr(np, "trapezoid", None)),
    ("np.interp",
     lambda x: getattr(np, "interp")(x, [0.0, 10.0], [0.0, 30.0]),
     np.interp),
    ("np.convolve",
     lambda x: getattr(np, "convolve")(x, [1.0, 2.0]),
     np.convolve),
    ("np.vander",
     lambda x: getattr(np, "vander")(x, 3),
     np.vander),
]
UFUNC_METHOD_CANDIDATES = [
    ("logaddexp.accumulate",
     lambda x: getattr(np, "logaddexp").accumulate(x),
     (np.logaddexp, "accumulate")),
    ("hypot.outer",
     lambda x: getattr(np, "hypot").outer(x, x),
     (np.hypot, "outer")),
    ("power.accumulate",
     lambda x: getattr(np, "power").accumulate(x),
     (np.power, "accumulate")),
    ("arctan2.outer",
     lambda x: getattr(np, "arctan2").outer(x, x),
     (np.arctan2, "outer")),
]

def _uncovered(candidates):
    for name, call, key in candidates:
        if key is None:
            continue
        rule = RULES.get(key)
        if rule is None or not (rule.has_vjp or rule.nondiff or rule.zero):
            return name, call
    pytest.skip("every candidate function has gained a gradient rule; add a new candidate")


@pytest.fixture(params=["function", "ufunc method"])
def no_rule(request):
    return _uncovered(FUNCTION_CANDIDATES if request.param == "function"
                      else UFUNC_METHOD_CANDIDATES)


# --- functions without a gradient rule ------------------------------------------------------------------
def test_function_without_rule_computes_a_tensor(no_rule):
    name, call = no_rule
    x0 = np.array([0.5, 1.0, 1.5])
    r = call(nt.constant(x0))
    assert isinstance(r, nt.Tensor)
    np.testing.assert_allclose(r.numpy(), call(x0))


@pytest.mark.parametrize("kind", ["function", "ufunc method"])
def test_function_without_rule_raises_naming_it_when_gradient_needed(kind):
    name, call = _uncovered(FUNCTION_CANDIDATES if kind == "function"
                            else UFUNC_METHOD_CANDIDATES)
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(call(x) * 2.0)
    with pytest.raises(nt.NoGradientRuleError) as info:
        tape.gradient(y, x)
    assert name in str(info.value)
    assert isinstance(info.value, nt.NbtapeError)


def test_function_without_rule_error_points_at_the_user_line():
    name, call = _uncovered(FUNCTION_CANDIDATES)
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(call(x))     # the line the error should name
    with pytest.raises(nt.NoGradientRuleError) as info:
        tape.gradient(y, x)
    assert "test_errors.py" in str(info.value)


def test_function_without_rule_raises_from_jacobian(no_rule):
    name, call = no_rule
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = call(x)
    with pytest.raises(nt.NoGradientRuleError):
        tape.jacobian(y, x)


@pytest.mark.parametrize("kind", ["function", "ufunc method"])
def test_function_without_rule_raises_in_forward_mode(kind):
    name, call = _uncovered(FUNCTION_CANDIDATES if kind == "function"
                            else UFUNC_METHOD_CANDIDATES)
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.ForwardAccumulator(x, np.ones(3)) as acc:
        y = np.sum(call(x))
    with pytest.raises(nt.NoGradientRuleError) as info:
        acc.jvp(y)
    assert name in str(info.value)


def test_function_without_rule_raises_in_functional_grad():
    name, call = _uncovered(FUNCTION_CANDIDATES)
    with pytest.raises(nt.NoGradientRuleError):
        nt.grad(lambda x: np.sum(call(x)))(np.array([0.5, 1.0, 1.5]))


def test_function_without_rule_off_the_gradient_path_is_fine(no_rule):
    name, call = no_rule
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        _ = call(x)                 # computed, but the target does not use it
        y = np.sum(x * x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 2.0, 3.0])


def test_function_without_rule_on_unwatched_values_is_fine(no_rule):
    name, call = no_rule
    x = nt.constant([0.5, 1.0, 1.5])
    c = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x * np.sum(call(c)))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.full(3, np.sum(call(c.numpy()))))


def test_function_without_rule_behind_stop_gradient_is_fine(no_rule):
    name, call = no_rule
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x * np.sum(nt.stop_gradient(call(x))))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               np.full(3, np.sum(call(x.numpy()))))


def test_function_without_rule_wrapped_in_custom_gradient_works():
    name, call = _uncovered(FUNCTION_CANDIDATES)

    @nt.custom_gradient
    def wrapped(x):
        return np.sum(call(x)), lambda dy: dy * np.ones(3) * 7.0

    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = wrapped(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [7.0, 7.0, 7.0])


# --- plain values where tensors are needed ---------------------------------------------------------------
def test_watch_numpy_array_says_to_use_constant():
    with nt.GradientTape() as tape:
        with pytest.raises(TypeError) as info:
            tape.watch(np.ones(3))
    assert "nt.constant" in str(info.value)


def test_watch_python_number_says_to_use_constant_or_variable():
    with nt.GradientTape() as tape:
        with pytest.raises(TypeError) as info:
            tape.watch(3.0)
    message = str(info.value)
    assert "nt.constant" in message and "nt.Variable" in message


def test_item_assignment_explains_immutability():
    with pytest.raises(TypeError, match="immutable"):
        nt.constant([1.0, 2.0])[0] = 3.0


# --- tapes -------------------------------------------------------------------------------------------------
def test_used_tape_error_says_persistent():
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, x)


def test_output_gradients_error_names_both_shapes():
    x = nt.constant(np.ones((2, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError) as info:
        tape.gradient(y, x, output_gradients=np.ones((3, 2)))
    assert "(3, 2)" in str(info.value) and "(2, 3)" in str(info.value)


def test_error_classes():
    assert issubclass(nt.NoGradientRuleError, nt.NbtapeError)
    assert issubclass(nt.NbtapeError, Exception)
