"""nbtape/core/primitive.py: ``primitive`` passes plain values through and records a
call on tensors, refusing a gradient until a rule is given."""
import pytest

import nbtape as nt
from nbtape.core.primitive import primitive
from nbtape.core.registry import RULES, defvjp
from nbtape.diagnostics.errors import NoGradientRuleError


def test_primitive_passes_plain_values_and_records_tensors():
    calls = []

    @primitive
    def twice(x, scale=1.0):
        calls.append(type(x))
        return 2 * x * scale
    try:
        assert twice(3.0) == 6.0 and calls == [float] and twice.__name__ == "twice"
        assert twice.raw(3.0) == 6.0 and RULES[twice.raw].name == "twice"
        x = nt.constant(1.5)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = twice(x, 2.0)
        assert isinstance(y, nt.Tensor) and calls[-1] is not nt.Tensor
        with pytest.raises(NoGradientRuleError, match="no gradient rule for twice"):
            tape.gradient(y, x)                                     # no rule yet
        defvjp(twice.raw, lambda g, ans, x, scale=1.0: 2 * g * scale)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = twice(x, scale=2.0)
        assert float(y) == 6.0 and float(tape.gradient(y, x)) == 4.0
    finally:
        RULES.pop(twice.raw, None)


def test_a_primitive_without_a_rule_refuses_a_tensor_keyword_argument():
    @primitive
    def twice(x, scale=1.0):
        return 2 * x * scale
    try:
        x = nt.constant(1.5)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = twice(x, scale=nt.constant(2.0))
        with pytest.raises(NoGradientRuleError, match="twice"):
            tape.gradient(y, x)
    finally:
        RULES.pop(twice.raw, None)
