"""nbtape/rules/core_ops.py: the rules behind Python's operators, indexing, casting,
matmul, complex parts, transpose and sum, each against central differences in reverse
and forward mode (float64, random shapes that broadcast, every operand that can carry
a tensor); also ``primitive``, the constant-valued comparisons and ``OPERATOR_RULES``.

The rules checked are read from the registry (those whose VJPs or JVPs this module
defines): a rule added to core_ops without a case here fails
``test_every_rule_of_the_module_has_a_case``.
"""
import operator

import numpy as np
import pytest

import nbtape as nt
from gradcheck import broadcast_pair, check_both, check_reverse, gradients_of_sum, rule_case_tests
from nbtape.rules import core_ops
from nbtape.core.registry import RULES


def normal(rng, shape):
    return rng.standard_normal(shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def nonzero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)


def complex_(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def binary(f, dx=normal, dy=normal):
    """Cases for a broadcasting binary function: two random shape pairs, and a scalar."""
    def make(rng):
        out = []
        for _ in range(2):
            sx, sy = broadcast_pair(rng)
            out.append((f, dx(rng, sx), dy(rng, sy)))
        out.append((f, dx(rng, ()), dy(rng, (2, 3))))
        return out
    return make


def unary(f, domain=normal, shapes=((3, 4), (2,), ())):
    return lambda rng: [(f, domain(rng, s)) for s in shapes]


def getitem_cases(rng):
    x = rng.standard_normal((4, 5))
    return [(lambda a, i=i: a[i], x)
            for i in [1, (slice(1, 3), -1), (Ellipsis, None, 2), np.array([0, 2, 2, 3]),
                      (np.array([3, 3]), np.array([1, 1])), x[:, 0] > 0]]


def scatter_add_cases(rng):
    return [(lambda g: core_ops.scatter_add(g, np.array([0, 2, 0]), (4, 2)),
             rng.standard_normal((3, 2))),
            (lambda g: core_ops.scatter_add(g, (slice(1, 3), 1), (3, 3)), rng.standard_normal(2))]


def astype_cases(rng):
    return [(lambda x: x.astype(np.complex128) * (1 + 2j), rng.standard_normal((2, 3))),
            (lambda x: x.astype("float64") ** 2, rng.standard_normal(4))]


def matmul_cases(rng):
    pairs = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
             ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4)),
             ((2, 2, 3), (3,))]
    out = [(np.matmul, rng.standard_normal(a), rng.standard_normal(b)) for a, b in pairs]
    out.append((operator.matmul, complex_(rng, (2, 3)), complex_(rng, (3, 2))))
    return out


def transpose_cases(rng):
    x = rng.standard_normal((2, 3, 4))
    return [(np.transpose, x), (lambda a: np.transpose(a, (1, 2, 0)), x),
            (lambda a: np.transpose(a, (-1, 0, -2)), x), (lambda a: a.T, x[0])]


def sum_cases(rng):
    x = rng.standard_normal((2, 3, 4))
    out = [(lambda a, ax=ax, k=k: np.sum(a, axis=ax, keepdims=k), x)
           for ax in (None, 0, -1, (0, 2)) for k in (False, True)]
    out.append((lambda a: np.sum(a, axis=1, where=a > 0), x))
    out.append((lambda a, i: np.sum(a, axis=1, initial=i), x, rng.standard_normal()))
    out.append((lambda a: a.sum(axis=0), complex_(rng, (3, 2))))
    return out


CASES = {
    "getitem": getitem_cases,
    "scatter_add": scatter_add_cases,
    "astype": astype_cases,
    "np.add": binary(np.add),
    "np.subtract": binary(np.subtract),
    "np.multiply": binary(np.multiply),
    "np.divide": binary(np.divide, normal, nonzero),
    "np.negative": unary(np.negative),
    "np.positive": unary(np.positive),
    "np.power": binary(np.power, positive, normal),
    "np.remainder": binary(np.remainder, normal, positive),
    "np.absolute": lambda rng: unary(np.absolute, nonzero)(rng) + unary(np.abs, complex_)(rng),
    "np.matmul": matmul_cases,
    "np.real": lambda rng: unary(np.real, complex_)(rng) + unary(np.real)(rng),
    "np.imag": lambda rng: unary(np.imag, complex_)(rng),
    "np.conjugate": lambda rng: unary(np.conjugate, complex_)(rng) + unary(np.conj)(rng),
    "np.transpose": transpose_cases,
    "np.sum": sum_cases,
}
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(core_ops, CASES)


OPERATORS = [(operator.add, normal, normal), (operator.sub, normal, normal),
             (operator.mul, normal, normal), (operator.truediv, normal, nonzero),
             (operator.pow, positive, normal), (operator.mod, normal, positive)]


@pytest.mark.parametrize("op, dx, dy", OPERATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_python_operators_use_the_same_rules(op, dx, dy, rng):
    sx, sy = broadcast_pair(rng)
    check_both(op, dx(rng, sx), dy(rng, sy))
    check_both(lambda a: op(a, 1.5), dx(rng, sx))                # a Python number beside it
    check_both(lambda b: op(1.5, b), dy(rng, sy))


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.truediv, np.power])
def test_float32_gradients_stay_float32_and_unbroadcast(op, rng):
    x = nt.constant(rng.uniform(0.5, 2.0, (3, 1)).astype(np.float32))
    y = nt.constant(rng.uniform(0.5, 2.0, (4,)).astype(np.float32))
    with nt.GradientTape() as tape:
        tape.watch([x, y])
        z = np.sum(op(x, y))
    gx, gy = tape.gradient(z, [x, y])
    assert (gx.shape, gx.dtype, gy.shape, gy.dtype) == ((3, 1), np.float32, (4,), np.float32)


def test_power_derivatives_at_zero_are_finite():
    g, = gradients_of_sum(lambda x: x ** 0, [0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])
    g, = gradients_of_sum(lambda x: np.power(x, np.array([0.0, 2.0])), [0.0, 0.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])
    gx, gy = gradients_of_sum(np.power, [0.0, 2.0], [2.0, 3.0])
    np.testing.assert_allclose(gx, [0.0, 12.0])
    np.testing.assert_allclose(gy, [0.0, 8.0 * np.log(2.0)])


def test_abs_of_a_real_zero_has_gradient_zero_and_of_complex_z_is_z_over_abs():
    g, = gradients_of_sum(np.abs, [0.0, -2.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, -1.0, 1.0])
    check_reverse(np.abs, np.array([3 + 4j, -1j]))


def test_comparisons_carry_no_gradient_and_floor_divide_a_zero_one(rng):
    x = nt.constant(rng.standard_normal(5))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        masked = np.sum(x * (x > 0) * np.logical_not(x < -1))
        floored = np.sum(x // 0.5)
    want = (x.numpy() > 0) & ~(x.numpy() < -1)
    np.testing.assert_array_equal(tape.gradient(masked, x).numpy(), want.astype(float))
    np.testing.assert_array_equal(tape.gradient(floored, x).numpy(), np.zeros(5))
    for fn in (np.less, np.equal, np.logical_xor, np.bitwise_and, np.invert):
        assert RULES[fn].nondiff and RULES[fn].differentiated() == []
    assert RULES[np.floor_divide].zero


def test_operator_rules_are_the_registered_rules_of_their_functions():
    for name, rule in core_ops.OPERATOR_RULES.items():
        if name not in ("getitem", "astype"):          # nbtape's own primitives
            assert rule is RULES[getattr(np, name)], name
    assert core_ops.OPERATOR_RULES["getitem"].name == "getitem"
    assert RULES[np.add].compute is operator.add and RULES[np.add].fn is np.add
