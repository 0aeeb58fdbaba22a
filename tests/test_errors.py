"""Errors that explain a mistake: missing rules, plain values, used-up tapes."""
import os

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.registry import RULES

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


# --- output_gradients ------------------------------------------------------------------------------------
def _doubled(shape=(3,), dtype=float):
    x = nt.constant(np.ones(shape, dtype=dtype))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    return tape, x, y


@pytest.mark.parametrize("og", ["abc", np.array(["a", "b", "c"]), {"w": "a"}, object()])
def test_output_gradients_that_are_not_numbers_say_so(og):
    tape, x, y = _doubled()
    with pytest.raises(TypeError) as info:
        tape.gradient(y, x, output_gradients=og)
    message = str(info.value)
    assert "output_gradients holds a" in message and "it must be numbers" in message
    assert "np.ones((3,))" in message
    np.testing.assert_array_equal(tape.gradient(y, x, output_gradients=[np.ones(3)]).numpy(),
                                  [2.0, 2.0, 2.0])       # the tape is still usable


def test_complex_output_gradients_for_a_real_target_are_refused():
    tape, x, y = _doubled()
    with pytest.raises(ValueError) as info:
        tape.gradient(y, x, output_gradients=np.array([1j, 1.0, 1.0]))
    assert "complex" in str(info.value) and "imaginary part" in str(info.value)
    with pytest.raises(ValueError, match="complex"):
        tape.gradient(y, x, output_gradients=nt.constant(np.ones(3, dtype=complex)))


def test_complex_output_gradients_for_a_complex_target_are_fine():
    tape, x, y = _doubled(dtype=complex)
    g = tape.gradient(y, x, output_gradients=np.array([1j, 1.0, 2.0]))
    np.testing.assert_allclose(g.numpy(), [2j, 2.0, 4.0])


def test_output_gradients_as_a_list_of_numbers_for_one_target_says_what_to_pass():
    tape, x, y = _doubled()
    with pytest.raises(ValueError, match=r"for one target, pass one array of its shape"):
        tape.gradient(y, x, output_gradients=[1.0, 2.0, 3.0])
    g = tape.gradient(y, x, output_gradients=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0, 6.0])
    g = tape.gradient(y, x, output_gradients=np.array([1, 0, 1]))     # integer weights: fine
    np.testing.assert_array_equal(g.numpy(), [2.0, 0.0, 2.0])


# --- where errors and warnings point -------------------------------------------------------------------
def test_argument_errors_start_at_the_users_line():
    tape, x, y = _doubled()
    with pytest.raises(ValueError) as info:
        tape.gradient(y, x, output_gradients=np.ones(2))
    files = {os.path.basename(str(e.path)) for e in info.traceback}
    assert "gradient_tape.py" not in files and os.path.basename(__file__) in files


def test_warnings_point_at_the_users_line():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = nt.constant(np.asarray(x) * 2.0)
    with pytest.warns(UserWarning, match="left the tape") as caught:
        assert tape.gradient(y, x) is None
    assert caught[0].filename == __file__


IPYTHON_CELLS = [
    ("t.gradient(y, x, output_gradients=np.ones(2))", "ValueError", "output_gradients entry"),
    ("t.gradient(y, x, output_gradients='abc')", "TypeError", "it must be numbers"),
    ("t.gradient(y, 3.0)", "TypeError", "got a plain float as its source"),
    ("t.watch(np.ones(2))", "TypeError", "nt.constant"),
    ("t.batch_jacobian(np.sum(y), x)", "ValueError", "the target is a scalar"),
    ("nt.grad(lambda a: a * 2.0)(3)", "TypeError", "did you mean 3.0"),
    ("nt.check_gradients(np.sin, np.array([1, 2]))", "TypeError", "nothing to check"),
    ("nt.losses.mean_squared_error(np.ones((4, 3)), np.ones((4, 2)))", "ValueError",
     "same shape"),
    ("d = nt.layers.Dense(2)\nd(np.ones((1, 3)))\nd(np.ones((1, 4)))", "ValueError",
     "built for inputs with 3 features"),
    ("u = nt.GradientTape()\nwith u:\n    u.watch(x)\n    z = x * x\nu.gradient(z, x)\n"
     "u.gradient(z, x)", "TapeConsumedError", "not persistent"),
]


@pytest.fixture
def ipython():
    # the numpy-1.26 venv (tests/test_numpy_versions.py) has no IPython: the engine is
    # what it checks, and these run in every other environment
    InteractiveShell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell
    sh = InteractiveShell.instance()
    sh.run_line_magic("colors", "NoColor")
    sh.run_cell("import numpy as np\nimport nbtape as nt\nx = nt.constant([1.0, 2.0, 3.0])\n"
                "with nt.GradientTape(persistent=True) as t:\n    t.watch(x)\n    y = x * 2.0")
    yield sh
    for name in ("x", "y", "t", "d", "u", "z"):
        sh.user_ns.pop(name, None)


def _traceback_of(sh, code):
    from IPython.utils.capture import capture_output
    with capture_output() as cap:
        result = sh.run_cell(code, store_history=True)
    return result, cap.stdout + cap.stderr


@pytest.mark.parametrize("code, kind, words", IPYTHON_CELLS, ids=[c[0][:30] for c in IPYTHON_CELLS])
def test_ipython_tracebacks_show_the_users_line_and_no_nbtape_frame(ipython, code, kind, words):
    result, text = _traceback_of(ipython, code)
    assert type(result.error_in_exec).__name__ == kind
    package = os.path.dirname(nt.__file__)
    assert package not in text, text                  # no frame of nbtape, not even the wrapper
    assert "Cell In[" in text and words in text
    last_line = code.splitlines()[-1]
    assert f"----> {len(code.splitlines())} {last_line}" in text, text


def test_ipython_tracebacks_keep_the_users_own_frames(ipython):
    code = "def f(a):\n    return a / undefined_name\nnt.grad(f)(1.0)"
    result, text = _traceback_of(ipython, code)
    assert isinstance(result.error_in_exec, NameError)
    assert "----> 2     return a / undefined_name" in text    # the user's function is shown


def test_other_errors_inside_nbtape_keep_their_frames(monkeypatch):
    """An AttributeError in nbtape's code is a bug of nbtape's: its frames stay for the report."""
    from nbtape.tape import jacobians
    monkeypatch.setattr(jacobians, "_as_target", dict.fromkeys)    # a dict: a planted bug
    tape, x, y = _doubled((2, 3))
    with pytest.raises(AttributeError) as info:
        tape.batch_jacobian(y, x)
    assert "jacobians.py" in {os.path.basename(str(e.path)) for e in info.traceback}
