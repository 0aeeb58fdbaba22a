"""Indexing (``t[idx]``) and nbtape/rules/indexing.py (selections, sort, where), both modes."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtape as nt
from gradcheck import (check_both, check_hvp, check_reverse_over_forward, needs_numpy, numpy_param,
                       randn)



# --- t[idx] -------------------------------------------------------------------------------
MASK = np.array([[True, False, True, False],
                 [False, False, True, True],
                 [True, True, False, False]])
INDEXES = [
    (lambda x: x[1], (3, 4)),
    (lambda x: x[-1, 2], (3, 4)),
    (lambda x: x[1:, ::2], (3, 4)),
    (lambda x: x[::-1], (3, 4)),
    (lambda x: x[2:0:-1, ::-3], (3, 4)),
    (lambda x: x[..., 1], (2, 3, 4)),
    (lambda x: x[0, ..., ::2], (2, 3, 4)),
    (lambda x: x[None, :, np.newaxis], (3, 4)),
    (lambda x: x[..., None], (3,)),
    (lambda x: x[[0, 2, 0, 0]], (3, 4)),                      # repeats accumulate
    (lambda x: x[np.array([[1, 1], [0, 2]])], (3,)),
    (lambda x: x[[0, 1, 1], [3, 3, 0]], (3, 4)),
    (lambda x: x[:, [2, 2, -1]], (3, 4)),
    (lambda x: x[[0, 2], 1:3], (3, 4)),
    (lambda x: x[1:, [0, 0], None], (3, 4)),
    (lambda x: x[:, [0, 1], :, [1, 1]], (2, 3, 2, 2)),          # advanced axes split by a slice
    (lambda x: x[MASK], (3, 4)),
    (lambda x: x[MASK[0]], (4,)),
    (lambda x: x[:, MASK[1]], (3, 4)),
    (lambda x: x[x > 0], (3, 4)),                               # a mask made from x itself
    (lambda x: x[np.array([True, False, True]), ::-1], (3, 4)),
    (lambda x: x[()], ()),
]


@pytest.mark.parametrize("f, shape", INDEXES)
def test_indexing(f, shape, rng):
    check_both(f, randn(rng, *shape))


@pytest.mark.parametrize("f, shape", INDEXES[::3])
def test_second_order_through_indexing(f, shape, rng):
    check_hvp(f, randn(rng, *shape))
    check_reverse_over_forward(lambda x: f(x) ** 2, randn(rng, *shape))


def test_repeated_fancy_indices_accumulate():
    x = nt.constant([1.0, 2.0, 3.0])
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.sum(x[[0, 0, 0, 2]])
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [3.0, 0.0, 1.0])


@pytest.mark.parametrize("index, shape", [
    (nt.constant([2, 0, 2]), (3, 2)),
    (nt.constant([[True, False, True], [False, True, False]]), (2, 3)),
    (nt.constant(1), (3, 2)),
    ((slice(None), nt.constant([1, 1])), (2, 3)),
    ([nt.constant(0), nt.constant(1)], (2, 3)),
    ((nt.constant([0, 1]), Ellipsis, None), (2, 3)),
])
def test_tensor_indices(index, shape, rng):
    def plain(i):
        if isinstance(i, (tuple, list)):
            return type(i)(plain(j) for j in i)
        return i.numpy() if isinstance(i, nt.Tensor) else i
    x_val = randn(rng, *shape)
    w = randn(rng, *np.shape(x_val[plain(index)]))
    x = nt.constant(x_val)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x[index] * w)
    want = np.zeros_like(x_val)
    np.add.at(want, plain(index), w)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want)
    with nt.ForwardAccumulator(x, np.ones_like(x_val)) as acc:
        z = x[index]
    np.testing.assert_allclose(acc.jvp(z).numpy(), np.ones_like(x_val)[plain(index)])


def test_watched_integer_index_has_no_gradient():
    x, i = nt.constant([1.0, 2.0, 3.0]), nt.constant([2, 0])
    with nt.GradientTape() as t:
        t.watch([x, i])
        y = np.sum(x[i])
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        gx, gi = t.gradient(y, [x, i])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 0.0, 1.0])
    assert gi is None


# --- selections ---------------------------------------------------------------------------
IDX = np.array([[0, 2], [1, 1]])
SELECTIONS = [
    (lambda x: np.take(x, [3, 0, 3]), (2, 3)),
    (lambda x: np.take(x, IDX, axis=1), (2, 3)),
    (lambda x: np.take(x, [-1, 5], axis=0, mode="wrap"), (3, 2)),
    (lambda x: np.take(x, [7, -4], mode="clip"), (2, 2)),
    (lambda x: x.take([1, 1]), (3,)),
    (lambda x: np.take_along_axis(x, np.array([[0, 0, 2], [1, 2, 2]]), axis=1), (2, 3)),
    (lambda x: np.take_along_axis(x, np.array([[1], [1]]), axis=0), (3, 2)),
    (lambda x: np.take_along_axis(x, np.argsort(x, axis=-1), axis=-1), (2, 3)),
    (lambda x: np.compress([True, False, True], x, axis=0), (3, 2)),
    (lambda x: np.compress([False, True, True], x), (2, 2)),
    (lambda x: np.extract(np.arange(6).reshape(2, 3) % 2 == 0, x), (2, 3)),
    (lambda x: np.delete(x, [0, 2], axis=1), (2, 4)),
    (lambda x: np.delete(x, 1), (2, 2)),
    (np.diagonal, (3, 3)),
    (lambda x: np.diagonal(x, 1), (3, 4)),
    (lambda x: np.diagonal(x, -1, axis1=2, axis2=0), (3, 2, 4)),
    (lambda x: x.diagonal(), (2, 3)),
    numpy_param("linalg.diagonal", (2, 3, 3)),
    pytest.param(lambda x: np.linalg.diagonal(x, offset=-1), (4, 3),
                 marks=needs_numpy("linalg.diagonal")),
    (np.diag, (3,)),
    (lambda x: np.diag(x, -2), (3,)),
    (np.diag, (3, 4)),
    (lambda x: np.diag(x, 1), (4, 3)),
    (np.diagflat, (2, 2)),
    (lambda x: np.diagflat(x, -1), (3,)),
    (np.triu, (3, 4)),
    (lambda x: np.tril(x, -1), (2, 3, 3)),
    (lambda x: np.triu(x, 1), (3,)),
    (np.trace, (3, 3)),
    (lambda x: np.trace(x, 1), (3, 4)),
    (lambda x: np.trace(x, -1, axis1=1, axis2=2), (2, 3, 3)),
    (lambda x: np.trace(x, 0, 2, 0), (3, 2, 4)),
    (lambda x: x.trace(), (4, 4)),
    numpy_param("linalg.trace", (2, 3, 3)),
    pytest.param(lambda x: np.linalg.trace(x, offset=1), (3, 3), marks=needs_numpy("linalg.trace")),
]


@pytest.mark.parametrize("f, shape", SELECTIONS)
def test_selections(f, shape, rng):
    check_both(f, randn(rng, *shape))


@pytest.mark.parametrize("f, shape", SELECTIONS[1::4])
def test_second_order_through_selections(f, shape, rng):
    check_hvp(f, randn(rng, *shape))
    check_reverse_over_forward(lambda x: f(x) ** 2, randn(rng, *shape))


# --- sort ---------------------------------------------------------------------------------
@pytest.mark.parametrize("f, shape", [
    (np.sort, (5,)),
    (lambda x: np.sort(x, axis=0), (3, 4)),
    (lambda x: np.sort(x, axis=None), (3, 2)),
    (lambda x: np.sort(x, kind="stable")[..., ::-1], (2, 3)),
    (lambda x: np.sort(x, axis=1), (2, 3, 2)),
])
def test_sort(f, shape, rng):
    check_both(f, randn(rng, *shape))
    check_hvp(f, randn(rng, *shape))
    check_reverse_over_forward(lambda x: f(x) ** 2, randn(rng, *shape))


def test_sort_gradient_follows_the_values():
    x = nt.constant([3.0, 1.0, 2.0])
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.sort(x) * np.array([1.0, 10.0, 100.0])
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [100.0, 1.0, 10.0])


# --- where --------------------------------------------------------------------------------
C = np.array([[True, False, True]])


@pytest.mark.parametrize("f, shapes", [
    (lambda x, y: np.where(x > 0, x, y), [(2, 3), (2, 3)]),
    (lambda x, y: np.where(C, x, y), [(2, 3), (3,)]),          # condition and y broadcast
    (lambda x, y: np.where(x > y, x, 0.0), [(3,), (2, 1)]),
    (lambda x, y: np.where(C, 1.0, y), [(1,), (2, 1)]),
    (lambda x, y: np.where(C, x * y, x - y), [(2, 1), (3,)]),
])
def test_where(f, shapes, rng):
    check_both(f, *[randn(rng, *s) for s in shapes])


def test_where_with_tensor_condition_and_second_order(rng):
    c = nt.constant(C)
    check_both(lambda x, y: np.where(c, x, y), randn(rng, 2, 3), randn(rng, 3))
    check_hvp(lambda x: np.where(x > 0, x ** 3, -x), randn(rng, 2, 3))


def test_condition_gets_no_gradient():
    x = nt.constant([1.0, -2.0])
    c = nt.constant([1.0, 0.0])
    with nt.GradientTape() as t:
        t.watch([x, c])
        y = np.sum(np.where(c, x, 2 * x))
    gx, gc = t.gradient(y, [x, c])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 2.0])
    assert gc is None


# --- full_like, copy, constant-valued functions -------------------------------------------
def test_full_like_is_differentiable_in_its_fill_value_only(rng):
    a, v = randn(rng, 2, 3), randn(rng)
    check_both(lambda a, v: np.full_like(a, v), a, np.asarray(v))
    check_both(lambda a, v: np.full_like(a, v), a, randn(rng, 3))
    check_both(np.copy, a)


@pytest.mark.parametrize("f", [np.zeros_like, np.ones_like, lambda x: np.full_like(x, 2.0),
                               lambda x: np.empty_like(x) * 0])
def test_arrays_like_x_do_not_depend_on_x(f, rng):
    x = nt.constant(randn(rng, 4))
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.sum(f(x))
    assert t.gradient(y, x) is None


@pytest.mark.parametrize("f", [np.argmax, np.argmin, np.argsort, np.argwhere, np.flatnonzero,
                               lambda x: np.nonzero(x > 0), lambda x: np.argpartition(x, 2),
                               lambda x: np.searchsorted(np.array([-0.5, 0.5]), x),
                               lambda x: np.digitize(x, np.array([0.0]))])
def test_index_functions_are_constants(f, rng):
    x_val = randn(rng, 4)
    index = f(x_val)
    w = randn(rng, *np.shape(x_val[index]))
    x = nt.constant(x_val)
    with nt.GradientTape() as t:
        t.watch(x)
        i = f(x)
        y = np.sum(x[i] * w)
    want = np.zeros(4)
    np.add.at(want, index, w)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), want)
    assert len(t) == 3      # getitem, multiply, sum: the index function is not recorded


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 5), data=st.data())
def test_random_fancy_indices(n, data):
    rng = np.random.default_rng(0)
    idx = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6))
    start = data.draw(st.integers(-n, n))
    step = data.draw(st.sampled_from([1, 2, -1, -2]))
    x = randn(rng, n, 2)
    check_both(lambda v: v[idx] * v[idx, ::-1], x)
    check_both(lambda v: v[start::step], x)
