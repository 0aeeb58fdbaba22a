"""nbtape/rules/shapes.py: every shape function against finite differences, both modes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtape as nt
from gradcheck import (check_both, check_hvp, check_reverse_over_forward, needs_numpy, numpy_param,
                       randn, since_numpy)



# --- one array in, one out ----------------------------------------------------------------
PAD_DICT = since_numpy("2.4.0", "np.pad(x, {axis: width})")
UNARY = [
    (lambda x: np.reshape(x, (3, 2)), (2, 3)),
    (lambda x: np.reshape(x, (-1,), order="F"), (2, 3)),
    (lambda x: np.reshape(x, (2, 6), "F"), (3, 4)),
    (lambda x: np.reshape(np.transpose(x), (6,), order="A"), (2, 3)),
    (lambda x: x.reshape(2, 2, 2), (4, 2)),
    (np.ravel, (2, 3)),
    (lambda x: np.ravel(x, order="F"), (2, 3, 2)),
    (lambda x: np.ravel(np.transpose(x), order="K"), (2, 3)),
    (lambda x: np.ravel(np.transpose(x, (1, 0, 2)), order="K"), (2, 3, 2)),
    (lambda x: np.transpose(x, (-1, 0, 1)), (3, 3, 3)),     # negative axes; a cube hides no mistake
    (lambda x: np.ravel(np.transpose(x), order="A"), (3, 2)),
    (lambda x: x.flatten(), (2, 2)),
    (np.squeeze, (1, 3, 1)),
    (lambda x: np.squeeze(x, axis=-1), (2, 1)),
    (lambda x: np.expand_dims(x, 1), (2, 3)),
    (lambda x: np.expand_dims(x, (0, -1)), (2,)),
    (np.atleast_1d, ()),
    (np.atleast_2d, (3,)),
    (np.atleast_3d, ()),
    (np.atleast_3d, (3,)),
    (np.atleast_3d, (2, 3)),
    (lambda x: np.swapaxes(x, 0, 2), (2, 3, 4)),
    (lambda x: np.moveaxis(x, 0, -1), (2, 3, 4)),
    (lambda x: np.moveaxis(x, [0, 1], [2, 0]), (2, 3, 4)),
    (lambda x: np.rollaxis(x, 2), (2, 3, 4)),
    (lambda x: np.rollaxis(x, 0, 3), (2, 3, 4)),
    (lambda x: np.rollaxis(x, -1, 1), (2, 3, 4)),
    (lambda x: np.rollaxis(x, 1, -1), (2, 3, 4, 1)),
    numpy_param("matrix_transpose", (2, 3, 4)),
    numpy_param("linalg.matrix_transpose", (3, 2)),
    (lambda x: np.broadcast_to(x, (4, 2, 3)), (2, 1)),
    (lambda x: np.tile(x, 2), (3,)),
    (lambda x: np.tile(x, (2, 1, 3)), (2, 2)),
    (lambda x: np.repeat(x, 3), (2, 2)),
    (lambda x: np.repeat(x, [1, 0, 2], axis=1), (2, 3)),
    (lambda x: np.repeat(x, 2, axis=-1), (2, 3)),
    (np.flip, (2, 3)),
    (lambda x: np.flip(x, 1), (2, 3)),
    (lambda x: np.flip(x, (0, 2)), (2, 3, 2)),
    (np.fliplr, (2, 3)),
    (np.flipud, (3, 2)),
    (np.rot90, (2, 3)),
    (lambda x: np.rot90(x, 2), (2, 3)),
    (lambda x: np.rot90(x, -1, axes=(1, 2)), (2, 3, 4)),
    (lambda x: np.rot90(x, 3, axes=(2, 0)), (2, 3, 4)),
    (lambda x: np.roll(x, 2), (2, 3)),
    (lambda x: np.roll(x, -1, axis=1), (2, 3)),
    (lambda x: np.roll(x, (1, 2), axis=(0, 1)), (2, 3)),
    (lambda x: np.pad(x, 1), (2, 3)),
    (lambda x: np.pad(x, (1, 2), constant_values=5.0), (2, 3)),
    (lambda x: np.pad(x, ((0, 1), (2, 0))), (2, 3)),
    (lambda x: np.pad(x, ((1, 2),), mode="constant"), (3,)),
    pytest.param(lambda x: np.pad(x, {1: (1, 2), -3: 1}), (2, 2, 3), marks=PAD_DICT),
    pytest.param(lambda x: np.pad(x, {0: 2}, mode="reflect"), (3, 2), marks=PAD_DICT),
    (lambda x: np.pad(x, 2, mode="edge"), (2, 3)),
    (lambda x: np.pad(x, (2, 3), mode="reflect"), (4,)),
    (lambda x: np.pad(x, ((1, 2), (3, 1)), mode="symmetric"), (2, 3)),
    (lambda x: np.pad(x, 4, mode="wrap"), (3, 2)),
    (np.copy, (2, 3)),
]


@pytest.mark.parametrize("f, shape", UNARY)
def test_unary_shape_functions(f, shape, rng):
    check_both(f, randn(rng, *shape))


@pytest.mark.parametrize("f, shape", UNARY[::6])
def test_second_order_through_shape_rules(f, shape, rng):
    check_hvp(f, randn(rng, *shape))


@pytest.mark.parametrize("f, shape", UNARY[3::6])
def test_reverse_over_forward_through_shape_rules(f, shape, rng):
    check_reverse_over_forward(lambda x: f(x) ** 2, randn(rng, *shape))


# --- joining ------------------------------------------------------------------------------
JOINS = [
    (lambda a, b: np.concatenate([a, b]), [(2, 3), (1, 3)]),
    (lambda a, b: np.concatenate((a, b), axis=1), [(2, 3), (2, 1)]),
    (lambda a, b: np.concatenate([a, b], axis=-1), [(2, 2, 3), (2, 2, 2)]),
    (lambda a, b: np.concatenate([a, b], axis=None), [(2, 3), (4,)]),
    pytest.param(lambda a, b: np.concat([a, b, a]), [(2,), (3,)], marks=needs_numpy("concat")),
    (lambda a, b: np.stack([a, b]), [(2, 3), (2, 3)]),
    (lambda a, b: np.stack([a, b, a], axis=1), [(2, 3), (2, 3)]),
    (lambda a, b: np.stack((a, b), axis=-1), [(2, 3), (2, 3)]),
    (lambda a, b: np.hstack([a, b]), [(2,), (3,)]),
    (lambda a, b: np.hstack([a, b]), [(2, 1), (2, 3)]),
    (lambda a, b: np.hstack([a, b]), [(), (2,)]),
    (lambda a, b: np.vstack([a, b]), [(3,), (3,)]),
    (lambda a, b: np.vstack([a, b]), [(3,), (2, 3)]),
    (lambda a, b: np.dstack([a, b]), [(3,), (3,)]),
    (lambda a, b: np.dstack([a, b]), [(2, 3), (2, 3, 2)]),
    (lambda a, b: np.column_stack([a, b]), [(3,), (3, 2)]),
    (lambda a, b: np.append(a, b), [(2, 2), (3,)]),
    (lambda a, b: np.append(a, b, axis=0), [(2, 2), (1, 2)]),
    (lambda a, b: np.append(a, b, axis=1), [(2, 2), (2, 3)]),
]


@pytest.mark.parametrize("f, shapes", JOINS)
def test_joining(f, shapes, rng):
    check_both(f, *[randn(rng, *s) for s in shapes])


def test_join_with_constants_and_one_watched_operand(rng):
    c = randn(rng, 2, 3)
    check_both(lambda a: np.concatenate([c, a, [[1.0, 2.0, 3.0]]]), randn(rng, 1, 3))
    check_both(lambda a: np.stack([c, a]), randn(rng, 2, 3))
    check_both(lambda a: np.vstack([np.ones(3), a]), randn(rng, 3))


def test_broadcast_arrays(rng):
    f = lambda a, b: (lambda p, q: 2.0 * p + q * q)(*np.broadcast_arrays(a, b))
    check_both(f, randn(rng, 3, 1), randn(rng, 4))
    check_both(lambda a, b: np.broadcast_arrays(a, b)[1], randn(rng, 2, 1, 3), randn(rng, 3))


# --- splitting ----------------------------------------------------------------------------
def weighted_sum(parts):
    return sum((k + 1.0) * p for k, p in enumerate(parts))


SPLITS = [
    (lambda x: weighted_sum(np.split(x, 3)), (6, 2)),
    (lambda x: weighted_sum(np.split(x, 2, axis=1)), (3, 4)),
    (lambda x: weighted_sum(np.split(x, 2, axis=-1)), (3, 4)),
    (lambda x: np.split(x, [1, 3], axis=0)[1], (5, 2)),
    (lambda x: np.concatenate(np.array_split(x, 3)[::2]), (7,)),
    (lambda x: weighted_sum(np.hsplit(x, 2)), (4,)),
    (lambda x: weighted_sum(np.hsplit(x, [1])), (2, 3)),
    (lambda x: np.vsplit(x, 2)[0], (4, 2)),
    (lambda x: weighted_sum(np.dsplit(x, 2)), (2, 1, 4)),
    pytest.param(lambda x: weighted_sum(np.unstack(x)), (3, 2), marks=needs_numpy("unstack")),
    pytest.param(lambda x: np.unstack(x, axis=1)[2], (2, 3), marks=needs_numpy("unstack")),
]


@pytest.mark.parametrize("f, shape", SPLITS)
def test_splitting(f, shape, rng):
    check_both(f, randn(rng, *shape))


def test_second_order_through_join_and_split(rng):
    check_hvp(lambda x: np.concatenate([x, 2.0 * x[::-1]], axis=0), randn(rng, 3, 2))
    check_hvp(lambda x: weighted_sum(np.split(x, 2, axis=1)), randn(rng, 2, 4))
    check_reverse_over_forward(lambda x: np.concatenate([x, x[::-1] ** 2], axis=1),
                               randn(rng, 2, 2))
    check_reverse_over_forward(lambda x: weighted_sum(np.split(x ** 2, 2, axis=1)),
                               randn(rng, 2, 4))


# --- errors and dtypes --------------------------------------------------------------------
def test_pad_modes_without_a_rule_say_so(rng):
    x = nt.constant(randn(rng, 3))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.pad(x, 1, mode="empty")
    with pytest.raises(nt.NoGradientRuleError, match="np.pad.*mode='empty'"):
        t.gradient(y, x)


def test_atleast_with_several_tensors_is_a_clear_error():
    a, b = nt.constant(1.0), nt.constant([1.0, 2.0])
    assert np.atleast_2d(a).shape == (1, 1)
    with pytest.raises(TypeError, match="one array at a time"):
        np.atleast_2d(a, b)


def test_gradients_keep_float32():
    x = nt.constant(np.ones((2, 3), np.float32))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.concatenate([np.tile(x, 2), np.flip(x, 0)], axis=1)
    g = t.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), np.full((2, 3), 3.0, np.float32))


def test_forward_with_one_tangent_into_a_join_keeps_float32():
    x = nt.constant(np.ones(2, np.float32))
    c = nt.constant(np.zeros(3, np.float32))
    with nt.ForwardAccumulator(x, np.ones(2, np.float32)) as acc:
        y = np.concatenate([c, x])
    assert acc.jvp(y).dtype == np.float32
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [0, 0, 0, 1, 1])


# --- random shapes ------------------------------------------------------------------------
shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)


@settings(max_examples=15, deadline=None)
@given(shape=shapes, data=st.data())
def test_random_transposes_and_reshapes(shape, data):
    rng = np.random.default_rng(0)
    perm = data.draw(st.permutations(range(len(shape))))
    x = randn(rng, *shape)
    check_both(lambda v: np.reshape(np.transpose(v, perm), (-1, shape[0])), x)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check_both(lambda a, b: np.concatenate([a, b], axis=axis), x, randn(rng, *shape))
