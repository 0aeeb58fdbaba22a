"""nbtape/rules/ufunc_methods.py: ``reduce`` of add, multiply, maximum, minimum, fmax
and fmin, ``accumulate`` of add and multiply, and ``outer`` of add, subtract, multiply
and divide against central differences in reverse and forward mode, on random shapes,
axes (numpy's default axis=0 included), keepdims, where= masks and tensor initial=
values; and ``method_key``.

The rules checked are read from the registry: a method registered here without a case
fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np

from gradcheck import gradients_of_sum, rule_case_tests
from nbtape.rules import ufunc_methods
from nbtape.core.registry import RULES


def distinct(rng, shape):
    """Values with no ties, away from 0 (products) and from each other (max)."""
    n = int(np.prod(shape))
    signs = rng.choice([-1.0, 1.0], n)
    return (signs * (0.5 + rng.permutation(n) / n) + 0.001 * rng.standard_normal(n)).reshape(shape)


def random_shape(rng, lo=1):
    return tuple(int(n) for n in rng.integers(lo, 4, rng.integers(1, 4)))


def reduce_cases(u, initial):
    def make(rng):
        out = []
        for _ in range(3):
            shape = random_shape(rng)
            nd = len(shape)
            axis = [0, None, int(rng.integers(-nd, nd)),
                    tuple(int(a) for a in rng.choice(nd, int(rng.integers(1, nd + 1)),
                                                     replace=False))][int(rng.integers(0, 4))]
            keep = bool(rng.integers(0, 2))
            out.append((lambda x, axis=axis, keep=keep: u.reduce(x, axis=axis, keepdims=keep),
                        distinct(rng, shape)))
        x = distinct(rng, (3, 4))
        out.append((u.reduce, x))                                     # axis=0 by default
        out.append((lambda x: u.reduce(x, 1, where=x > -0.9, initial=initial), x))
        if u in (np.add, np.multiply, np.maximum, np.minimum):
            out.append((lambda x, i: u.reduce(x, axis=1, initial=i), x,
                        np.array(initial if u not in (np.add, np.multiply) else 1.3)))
        return out
    return make


def accumulate_cases(u):
    def make(rng):
        out = []
        for _ in range(3):
            shape = random_shape(rng)
            axis = int(rng.integers(-len(shape), len(shape)))
            out.append((lambda x, axis=axis: u.accumulate(x, axis=axis), distinct(rng, shape)))
        out.append((u.accumulate, distinct(rng, (3, 2))))
        out.append((lambda x: u.accumulate(x, None), distinct(rng, (4,))))
        return out
    return make


def outer_cases(u):
    def make(rng):
        out = []
        for _ in range(2):
            out.append((u.outer, distinct(rng, random_shape(rng)),
                        distinct(rng, random_shape(rng))))
        out.append((u.outer, distinct(rng, ()), distinct(rng, (2, 3))))
        out.append((u.outer, distinct(rng, (3,)), distinct(rng, ())))
        z = distinct(rng, (2, 2)) + 1j * distinct(rng, (2, 2))
        out.append((u.outer, z, distinct(rng, (3,)) - 0.5j))
        return out
    return make


CASES = {
    "np.add.reduce": reduce_cases(np.add, 0.5),
    "np.multiply.reduce": reduce_cases(np.multiply, 2.0),
    "np.maximum.reduce": reduce_cases(np.maximum, -0.95),
    "np.minimum.reduce": reduce_cases(np.minimum, 0.95),
    "np.fmax.reduce": reduce_cases(np.fmax, -0.95),
    "np.fmin.reduce": reduce_cases(np.fmin, 0.95),
    "np.add.accumulate": accumulate_cases(np.add),
    "np.multiply.accumulate": accumulate_cases(np.multiply),
    "np.add.outer": outer_cases(np.add),
    "np.subtract.outer": outer_cases(np.subtract),
    "np.multiply.outer": outer_cases(np.multiply),
    "np.divide.outer": outer_cases(np.divide),
}
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(ufunc_methods, CASES)


def test_method_key_registers_the_bound_method():
    key = ufunc_methods.method_key(np.add, "reduce")
    assert key == (np.add, "reduce")
    r = RULES[key]
    assert r.name == "np.add.reduce" and r.fn == np.add.reduce and r.compute == np.add.reduce
    assert r.signature.names[:2] == ("array", "axis")
    assert r.differentiated() == ["array", "initial"]


def test_known_answers():
    # reduce defaults to axis 0; a product's gradient is the product of the others
    g, = gradients_of_sum(np.multiply.reduce, [[2.0, 3.0], [5.0, 7.0]])
    np.testing.assert_array_equal(g, [[5.0, 7.0], [2.0, 3.0]])
    g, = gradients_of_sum(np.add.accumulate, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(g, [3.0, 2.0, 1.0])
    gx, gy = gradients_of_sum(np.subtract.outer, [1.0, 2.0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(gx, [3.0, 3.0])
    np.testing.assert_array_equal(gy, [-2.0, -2.0, -2.0])
    g, = gradients_of_sum(lambda x: np.fmax.reduce(x, axis=None), [1.0, np.nan, 4.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])
