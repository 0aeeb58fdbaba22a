"""Why is my gradient NaN? (nbtape/tape/numerics.py): one warning at the user's
line that names the source, how many elements, where the first NaN or inf was born (the
op, its line, the element, the local values), the pattern and the fix; the same story
in ``tape.explain``; for ``gradient``, ``jacobian``, ``batch_jacobian``, ``acc.jvp`` and
the functional forms, float32 and float64, persistent and non-persistent tapes, through
``custom_gradient``, ``recompute_grad`` and nested tapes.  The values stay TensorFlow's
(a NaN stays a NaN).
"""
import inspect
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import log1pexp
from nbtape.tape import numerics


def _line():
    return inspect.currentframe().f_back.f_lineno


def _only_nbtape_warning(caught):
    ours = [w for w in caught if "has " in str(w.message) and "element(s)" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    return ours[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("persistent", [False, True])
def test_the_where_trap_is_named_with_its_fix_at_the_users_line(dtype, persistent):
    x = nt.Variable(np.array([0.0, 4.0], dtype=dtype), name="x")
    with nt.GradientTape(persistent=persistent) as tape:
        y = np.sum(np.where(x > 0, np.sqrt(x), 0.0)); op_line = _line()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tape.gradient(y, x); asked_at = _line()
    w = _only_nbtape_warning(caught)
    assert w.category is RuntimeWarning
    assert w.filename == __file__ and w.lineno == asked_at
    text = str(w.message)
    assert "`x`" in text and "1 NaN element(s) (of 2)" in text
    assert "backward pass at np.sqrt" in text and f"line {op_line} of test_numerics.py" in text
    assert "element [0]" in text and "cotangent = 0.0" in text
    assert "0 x inf" in text and "np.sqrt(np.where(x > 0, x, 1.0))" in text
    # TensorFlow's values: the NaN stays a NaN, the rest is right
    assert np.isnan(g.numpy()[0]) and g.numpy()[1] == pytest.approx(0.25)
    assert g.dtype == dtype
    birth = tape.last_nonfinite
    assert (birth.phase, birth.name, birth.index) == ("backward", "np.sqrt", (0,))
    story = str(tape.explain(y, x))       # explain tells the same story, used tape or not
    assert "But the gradient is not finite" in story and "0 x inf" in story


def test_the_double_where_gives_a_finite_gradient_and_no_warning():
    x = nt.Variable(np.array([0.0, 4.0]))
    with nt.GradientTape() as tape:
        y = np.sum(np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), [0.0, 0.25])


def test_the_seed_example_log_one_plus_exp_in_float32():
    # seed example 14: NaN in float32 (the forward value already overflowed)
    x = nt.Variable(np.float32(100.0), name="x")
    with nt.GradientTape() as tape:
        y = np.log(1 + np.exp(x))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tape.gradient(y, x)
    assert np.isnan(g.numpy()) and g.dtype == np.float32
    text = str(_only_nbtape_warning(caught).message)
    assert "target's own value is not finite" in text
    assert "backward pass at np.exp" in text and "overflow in exp" in text.lower()
    assert "np.logaddexp(0, x)" in text


def test_a_nan_the_forward_pass_carried_in_is_born_where_the_forward_pass_made_it():
    # a naive softmax overflows forward: the backward pass meets NaN inputs at np.log and
    # np.divide (carried there, not born), so the story is the forward overflow at np.exp
    logits = nt.Variable(np.array([1000.0, 1001.0, 1002.0]), name="logits")
    with nt.GradientTape() as tape:
        e = np.exp(logits)
        p = e / np.sum(e)
        loss = -np.log(p[2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tape.gradient(loss, logits)
    text = str(_only_nbtape_warning(caught).message)
    assert "forward pass at np.exp" in text and "overflow in exp" in text.lower()
    assert "np.log" not in text.split("Fix")[0].split("born")[1]


def test_the_stable_custom_gradient_keeps_example_14_finite():
    x = nt.Variable(np.float32(100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the forward overflow, said elsewhere
        with nt.GradientTape() as tape:
            y = log1pexp(x)
        g = tape.gradient(y, x)
    assert float(g) == 1.0


@pytest.mark.parametrize("make, pattern", [
    (lambda x: np.sum(np.log(x)), "log at 0"),
    (lambda x: np.sum(1.0 / x), "division by 0"),
    (lambda x: np.sum(np.sqrt(x)), "sqrt at 0"),
    (lambda x: np.sum(x ** 0.5), "a power at 0"),
])
def test_derivatives_infinite_at_zero_are_named(make, pattern):
    x = nt.Variable(np.array([0.0, 1.0]))
    with nt.GradientTape() as tape:
        y = make(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tape.gradient(y, x)
    assert pattern in str(_only_nbtape_warning(caught).message).lower()


def test_a_custom_gradient_that_returns_nan_is_named():
    @nt.custom_gradient
    def bad(x):
        def grad(dy):
            return dy * np.nan
        return x * 2.0, grad

    x = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = bad(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tape.gradient(y, x)
    text = str(_only_nbtape_warning(caught).message)
    assert "custom_gradient" in text and "returned a non-finite value" in text


def test_recompute_grad_and_nested_tapes_say_it_too():
    block = nt.recompute_grad(lambda v: np.sqrt(v))
    x = nt.Variable(np.array([0.0, 1.0]))
    with nt.GradientTape() as tape:
        y = np.sum(block(x))
    with pytest.warns(RuntimeWarning, match="inf element"):
        tape.gradient(y, x)
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = np.sum(np.sqrt(x))
        with pytest.warns(RuntimeWarning, match="(?i)sqrt at 0"):
            g = inner.gradient(y, x)
        z = np.sum(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = outer.gradient(z, x)        # the second derivative of sqrt at 0: not finite
    assert not np.isfinite(h.numpy()[0]) and h.numpy()[1] == pytest.approx(-0.25)


def test_jacobians_tangents_and_functional_forms_warn():
    x = nt.Variable(np.array([0.0, 4.0]))
    with nt.GradientTape(persistent=True) as tape:
        y = np.sqrt(x)
    with pytest.warns(RuntimeWarning, match="The Jacobian .* born in the backward pass at np.sqrt"):
        tape.jacobian(y, x)
    X = nt.Variable(np.array([[0.0], [4.0]]))
    with nt.GradientTape() as tape:
        Y = np.sqrt(X)
    with pytest.warns(RuntimeWarning, match="The batch Jacobian"):
        tape.batch_jacobian(Y, X)
    c = nt.constant(np.array([0.0, 4.0]))
    with nt.ForwardAccumulator(c, nt.constant(np.ones(2))) as acc:
        y = np.sqrt(c)
    with pytest.warns(RuntimeWarning, match=r"tangent \(acc.jvp\).*check_numerics"):
        t = acc.jvp(y)
    assert np.isinf(t.numpy()[0])
    with pytest.warns(RuntimeWarning, match="(?i)sqrt at 0"):
        g = nt.grad(lambda v: np.sum(np.sqrt(v)))(np.array([0.0, 1.0]))
    assert np.isinf(g[0])


def test_a_finite_gradient_costs_one_check_and_says_nothing():
    x = nt.Variable(np.array([1.0, 2.0]))
    with nt.GradientTape() as tape:
        y = np.sum(np.sqrt(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tape.gradient(y, x)
    assert tape.last_nonfinite is None


def test_helpers_count_and_find_the_first_bad_element():
    a = np.array([[1.0, np.nan], [np.inf, 2.0]])
    assert numerics.count(a) == (1, 1, 4)
    assert numerics.first_bad(a) == (0, 1)
    assert not numerics.finite(a) and numerics.finite(np.ones(3)) and numerics.finite(None)
    assert numerics.finite(np.array([1, 2])) and not numerics.finite(float("nan"))
    assert numerics.nonfinite_results([None, nt.constant(1.0), nt.constant(np.nan)]) == [2]
    assert numerics.value_at(np.array([3.0]), (1,), (2,)) == 3.0    # broadcast to shape
    big = np.ones(5000)
    assert numerics.finite(big) and numerics.finite(np.full(5000, 1e200))   # dot overflows
    for bad in (np.nan, np.inf, -np.inf):
        big[1234] = bad
        assert not numerics.finite(big) and not numerics.finite(big.astype(np.float32))


# --- the true cause, said first and short ------------------------------------------------------
def _warning_text(make, x0, **gradient_kw):
    x = nt.Variable(np.asarray(x0, dtype=float), name="x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with nt.GradientTape() as tape:
            y = make(x)
        g = tape.gradient(y, x, **gradient_kw)
    return str(_only_nbtape_warning(caught).message), g, tape


def test_a_nan_in_the_users_data_is_named_not_an_overflow():
    data = np.array([1.0, np.nan, 2.0])
    text, g, _ = _warning_text(lambda x: np.sum(x * data), [1.0, 2.0, 3.0])
    assert "overflow" not in text.lower()
    assert "came in with the data" in text.splitlines()[0] and "np.multiply" in text
    # masked away forward, it still reaches the gradient as 0 x NaN: the data is named too
    text, g, _ = _warning_text(lambda x: np.sum(np.where(np.isnan(data), 0.0, x * data)),
                               [1.0, 2.0, 3.0])
    assert "came in with the data" in text.splitlines()[0] and "0 x inf" not in text
    assert np.isnan(g.numpy()[1]) and g.numpy()[0] == 1.0


def test_a_nan_the_forward_pass_made_is_said_first_in_a_learners_words():
    text, g, _ = _warning_text(lambda x: np.sum(np.log(x) * np.sqrt(x)), [0.0, -1.0, 2.0])
    head = text.splitlines()[0]
    assert "overflow" not in text.lower()
    assert "forward pass" in head and "np.log" in head
    assert "log of 0" in text or "log of a negative number" in text
    # the closed form where it is finite: d(log x sqrt x)/dx = (1 + log(x)/2) / sqrt(x)
    assert g.numpy()[2] == pytest.approx((1 + np.log(2.0) / 2) / np.sqrt(2.0))


def test_a_nan_seed_in_output_gradients_is_named():
    text, g, _ = _warning_text(lambda x: x * 2.0, [1.0, 2.0],
                               output_gradients=[np.array([np.nan, 1.0])])
    assert "output_gradients" in text.splitlines()[0] and "could not find" not in text
    assert g.numpy()[1] == 2.0


def test_the_first_line_says_where_what_and_the_fix_in_at_most_120_characters():
    text, _, tape = _warning_text(lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)),
                                  [0.0, 4.0])
    head, detail = text.split("\n", 1)
    assert len(head) <= 120, head
    assert "np.sqrt" in head and "line" in head and "Fix" in head and "0 x inf" in head
    assert "element [0]" in detail and "cotangent = 0.0" in detail     # the detail follows


@pytest.mark.parametrize("make", [lambda x: np.sum(np.sqrt(x)),
                                  lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0))])
def test_the_advice_is_the_double_where_and_says_what_an_epsilon_costs(make):
    text, _, _ = _warning_text(make, [0.0, 4.0])
    assert "np.sqrt(np.where(x > 0, x, 1.0))" in text
    # no bare np.sqrt(x + 1e-12) recommended: its slope at 0 is 1/(2 sqrt(1e-12)) = 5e5
    if "1e-12" in text or "eps" in text:
        assert "5e5" in text or "5e+05" in text or "500000" in text
    assert 0.5 / np.sqrt(1e-12) == pytest.approx(5e5)
