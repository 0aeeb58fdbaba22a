"""nbtape/rules/differences.py: np.diff (with n, axis, prepend=, append=), np.ediff1d
(with to_end=, to_begin=) and np.trapezoid (in y, the sample points x and the spacing
dx) against central differences in reverse and forward mode, on random shapes and
axes; and ``diff_transpose``, the adjoint of one difference step.

The rules checked are read from the registry: a rule added to differences.py without
a case here fails ``test_every_rule_of_the_module_has_a_case``.
"""
import numpy as np

from gradcheck import gradients_of_sum, rule_case_tests
from nbtape.rules import differences
from nbtape.core.registry import RULES


def random_shape(rng, min_side=1):
    return tuple(int(n) for n in rng.integers(min_side, 5, rng.integers(1, 4)))


def diff_cases(rng):
    out = []
    for _ in range(3):
        shape = random_shape(rng, min_side=3)
        axis = int(rng.integers(-len(shape), len(shape)))
        n = int(rng.integers(1, 3))
        x = rng.standard_normal(shape)
        side = list(shape)
        side[axis] = int(rng.integers(1, 3))
        p, a = rng.standard_normal(side), rng.standard_normal(side)
        out += [(lambda x, n=n, axis=axis: np.diff(x, n=n, axis=axis), x),
                (lambda x, p, a, n=n, axis=axis: np.diff(x, n, axis, prepend=p, append=a), x, p, a),
                (lambda x, p, n=n, axis=axis: np.diff(x, n, axis, prepend=p), x,
                 rng.standard_normal()),                        # a scalar stretched along
                (lambda x, a, axis=axis: np.diff(x, axis=axis, append=a), x, a)]
    return out


def ediff1d_cases(rng):
    x = rng.standard_normal(random_shape(rng, min_side=2))
    return [(np.ediff1d, x),
            (lambda x, e, b: np.ediff1d(x, to_end=e, to_begin=b), x, rng.standard_normal(2),
             rng.standard_normal(3)),
            (lambda x, e: np.ediff1d(x, e), x, rng.standard_normal()),
            (lambda x, b: np.ediff1d(x, to_begin=b), x, rng.standard_normal((2, 2)))]


def trapezoid_cases(rng):
    trap = differences.trapezoid
    out = []
    for _ in range(2):
        shape = random_shape(rng, min_side=2)
        axis = int(rng.integers(-len(shape), len(shape)))
        y = rng.standard_normal(shape)
        n = shape[axis]
        x1 = np.cumsum(rng.uniform(0.2, 1.0, n))
        out += [(lambda y, axis=axis: trap(y, axis=axis), y),
                (lambda y, d, axis=axis: trap(y, dx=d, axis=axis), y, rng.uniform(0.5, 2.0)),
                (lambda y, x, axis=axis: trap(y, x, axis=axis), y, x1),
                (lambda y, x, axis=axis: trap(y, x, axis=axis), y,
                 np.cumsum(rng.uniform(0.2, 1.0, shape), axis=axis))]
    y = rng.standard_normal((3, 4))                   # x broadcast against y
    out += [(differences.trapezoid, y, np.cumsum(rng.uniform(0.2, 1.0, (1, 4)), axis=-1)),
            (lambda y, x: trap(y, x, axis=0), y.T,
             np.cumsum(rng.uniform(0.2, 1.0, (4, 1)), axis=0))]
    y = rng.standard_normal((3, 2))                   # two samples, and two points
    out += [(lambda y, x: trap(y, x, axis=0), y, np.array([0.0, 1.5])),
            (lambda y, x: trap(y, x), y, np.array([0.3, 1.1]))]
    return out


# np.trapezoid is np.trapz before numpy 2: the case goes under the rule's own name
CASES = {"np.diff": diff_cases, "np.ediff1d": ediff1d_cases,
         RULES[differences.trapezoid].name: trapezoid_cases}
test_every_rule_has_a_case, test_rule_matches_finite_differences = \
    rule_case_tests(differences, CASES)


def test_diff_transpose_is_the_adjoint_of_one_difference_step(rng):
    for shape, axis in (((5,), 0), ((3, 4), 1), ((4, 2, 3), 0)):
        x = rng.standard_normal(shape)
        g = rng.standard_normal(np.diff(x, axis=axis).shape)
        back = differences.diff_transpose(g, axis)
        assert back.shape == shape
        np.testing.assert_allclose(np.sum(np.diff(x, axis=axis) * g), np.sum(x * back))
    np.testing.assert_array_equal(differences.diff_transpose(np.array([1.0, 10.0]), 0),
                                  [-1.0, -9.0, 10.0])


def test_known_gradients():
    # sum(diff(x)) = x[-1] - x[0]; twice: x[-1] - x[-2] - x[1] + x[0]
    g, = gradients_of_sum(np.diff, [1.0, 5.0, 2.0, 7.0])
    np.testing.assert_array_equal(g, [-1, 0, 0, 1])
    g, = gradients_of_sum(lambda x: np.diff(x, n=2), [1.0, 5.0, 2.0, 7.0])
    np.testing.assert_array_equal(g, [1, -1, -1, 1])
    g, p = gradients_of_sum(lambda x, p: np.diff(x, prepend=p), [1.0, 5.0], 3.0)
    np.testing.assert_array_equal(g, [0, 1])
    np.testing.assert_array_equal(p, -1)
    # trapezoid weights: dx/2 at the ends, dx inside
    g, d = gradients_of_sum(lambda y, d: differences.trapezoid(y, dx=d), [1.0, 2.0, 4.0], 0.5)
    np.testing.assert_array_equal(g, [0.25, 0.5, 0.25])
    np.testing.assert_array_equal(d, 4.5)


def test_trapezoid_gives_dx_no_gradient_when_x_is_given():
    y, x, d = gradients_of_sum(lambda y, x, d: differences.trapezoid(y, x, dx=d),
                               [1.0, 2.0], [0.0, 2.0], 3.0)
    np.testing.assert_array_equal(d, 0.0)
    np.testing.assert_array_equal(y, [1.0, 1.0])
    np.testing.assert_array_equal(x, [-1.5, 1.5])


def test_old_spellings_share_the_rule():
    trapz = getattr(np, "trapz", None)
    if trapz is not None:
        assert RULES[trapz] is RULES[differences.trapezoid]
    assert RULES[np.diff].differentiated() == ["a", "prepend", "append"]
