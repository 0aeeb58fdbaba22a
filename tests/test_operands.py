"""nbtape/core/operands.py: which arguments of a numpy call are operands.

Operands given by keyword are bound to numpy's positions (``bind``), so
``np.diff(x, prepend=p)`` differentiates ``p`` as ``np.diff(x, 0, -1, p)`` would.  A
tensor in a parameter the rule does not differentiate (``np.var(x, ddof=t)``) is
recorded as an operand of a variant of the rule that raises ``NoGradientRuleError``
naming the function and the parameter, when and only when a gradient or a tangent
flows into it.
"""
import numpy as np
import pytest

import nbtape as nt
from nbtape.core.operands import bind, carries_tensor, refusal, rule_and_operands
from nbtape.core.registry import RULES
from gradcheck import check_both

X = np.array([1.0, 2.5, 4.0, 3.0])


@pytest.mark.parametrize("value, carries", [
    (nt.constant(1.0), True),
    (nt.Variable(1.0), True),
    ([1.0, nt.constant(2.0)], True),
    ((nt.Variable(1.0),), True),
    ([1.0, 2.0], False),
    ([[nt.constant(1.0)]], False),          # one level only: np.stack(arrays=[x, y])
    (np.ones(2), False),
    (2, False),
    (None, False),
])
def test_carries_tensor(value, carries):
    assert carries_tensor(value) is carries


def test_bind_moves_keyword_operands_to_their_positions_with_numpys_defaults():
    args, kwargs = bind(RULES[np.diff], [], {"a": 1.0, "prepend": 0.0, "axis": 0})
    assert args == [1.0, 1, 0, 0.0] and kwargs == {}
    x = nt.constant(X)
    args, kwargs = bind(RULES[np.diff], [x], {"append": x})
    assert args[0] is x and args[-1] is x and kwargs == {}


def test_bind_leaves_options_and_positional_calls_alone():
    x = nt.constant(X)
    args, kwargs = bind(RULES[np.diff], [x, 1], {})
    assert args == [x, 1] and kwargs == {}
    args, kwargs = bind(RULES[np.stack], [[x, x]], {"axis": 0})
    assert kwargs == {"axis": 0}


def test_rule_and_operands_of_a_plain_call_is_the_rule_itself():
    x = nt.constant(X)
    rule, operands = rule_and_operands(RULES[np.sin], [x], {})
    assert rule is RULES[np.sin] and list(operands) == [x]


def test_a_keyword_operand_with_a_rule_makes_a_kept_variant():
    x, m = nt.constant(X), nt.constant(2.0)
    rule, operands = rule_and_operands(RULES[np.var], [x], {"mean": m})
    again, _ = rule_and_operands(RULES[np.var], [x], {"mean": m})
    assert rule is not RULES[np.var] and rule.name == "np.var" and again is rule
    assert operands[0] is x and operands[-1] is m


def test_a_refused_operand_makes_a_fresh_variant_naming_its_call():
    x, d = nt.constant(X), nt.constant(1.0)
    first, operands = rule_and_operands(RULES[np.var], [x], {"ddof": d})
    second, _ = rule_and_operands(RULES[np.var], [x], {"ddof": d})
    assert first is not second and operands[-1] is d


@pytest.mark.parametrize("call", [
    lambda x, p: np.diff(x, prepend=p),
    lambda x, p: np.diff(x, append=p),
    lambda x, p: np.diff(a=x, prepend=p, append=p),
    lambda x, p: np.diff(x, 1, -1, p),
])
def test_keyword_operands_are_differentiated_like_positional_ones(call):
    check_both(call, X, np.array([0.5]))


def test_a_keyword_operand_given_by_keyword_is_recorded_once():
    x, p = nt.constant(X), nt.constant(np.array([0.5]))
    with nt.GradientTape() as tape:
        tape.watch([x, p])
        y = np.sum(np.diff(x, prepend=p) ** 2)
    gx, gp = tape.gradient(y, [x, p])
    d = np.diff(X, prepend=0.5)
    np.testing.assert_allclose(gp.numpy(), [-2 * d[0]])
    np.testing.assert_allclose(gx.numpy(), 2 * d - 2 * np.append(d[1:], 0.0))


def test_a_tensor_where_nbtape_does_not_differentiate_refuses_only_when_a_gradient_flows():
    x, d = nt.constant(X), nt.constant(1.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch([x, d])
        y = np.var(x, ddof=d)
    assert [op.name for op in tape.ops] == ["np.var"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * (X - X.mean()) / (len(X) - 1))
    with pytest.raises(nt.NoGradientRuleError, match=r"np.var with respect to its ddof= argument"):
        tape.gradient(y, d)
    assert np.isclose(float(y), np.var(X, ddof=1))


def test_the_refusal_holds_in_forward_mode_too():
    x, d = nt.constant(X), nt.constant(1.0)
    with nt.ForwardAccumulator(x, np.ones(4)) as acc:
        y = np.var(x, ddof=d)
    assert float(acc.jvp(y)) == pytest.approx(0.0)      # a shift leaves the variance
    with nt.ForwardAccumulator(d, 1.0) as acc:
        y = np.var(x, ddof=d)
    with pytest.raises(nt.NoGradientRuleError, match="ddof= argument"):
        acc.jvp(y)


def test_a_positional_tensor_past_the_operands_refuses_too():
    x, n = nt.constant(X), nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([x, n])
        y = np.sum(np.round(x, 0) * 1.0) + np.var(x, None, None, None, n)
    with pytest.raises(nt.NoGradientRuleError, match="np.var"):
        tape.gradient(y, n)


def test_an_integer_tensor_in_an_option_is_just_a_value():
    x = nt.constant(np.arange(6.0).reshape(2, 3))
    axis = nt.constant(1)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sum(x, axis=int(axis)) ** 2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               np.repeat(2 * x.numpy().sum(1, keepdims=True), 3, axis=1))


def test_refusal_message_names_the_parameter_and_the_call():
    msg = refusal("np.sum", "axis", " in f(x)")
    assert msg.startswith("nbtape cannot differentiate np.sum with respect to its axis= "
                          "argument in f(x),")
    assert "nt.stop_gradient" in msg
    assert refusal("np.sum", "axis").count(" argument,") == 1
