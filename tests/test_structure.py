"""nbtape/core/structure.py: nested sources and targets, flattened and rebuilt.

``flatten`` lists the leaves of lists, tuples and dicts in order (dicts by insertion
order); ``unflatten`` puts leaves back into the same shape, keeping each container's
type (a tuple stays a tuple, a namedtuple its class, a dict subclass its class).
``tape.gradient`` answers in the structure of its sources through them.
"""
import collections

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.structure import flatten, unflatten

Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("structure, leaves", [
    (5, [5]),
    ("text", ["text"]),
    (None, [None]),
    ([1, 2, 3], [1, 2, 3]),
    ((1, 2), [1, 2]),
    ([], []),
    ({}, []),
    ([1, [2, [3, [4]]]], [1, 2, 3, 4]),
    ({"b": 1, "a": (2, [3, {"z": 4, "y": 5}])}, [1, 2, 3, 4, 5]),
    (Point(1, [2, 3]), [1, 2, 3]),
    ([(), [], {}, 7], [7]),
])
def test_flatten_lists_the_leaves_in_order(structure, leaves):
    assert flatten(structure) == leaves


def test_flatten_gives_a_new_list():
    flat = [1, 2]
    out = flatten(flat)
    assert out == flat and out is not flat
    out.append(3)
    assert flat == [1, 2]


def test_an_array_is_one_leaf():
    a = np.ones((2, 3))
    assert len(flatten(a)) == 1 and flatten([a, (a,)])[1] is a


@pytest.mark.parametrize("structure", [
    5,
    [0, 0, 0],
    (0, 0),
    [0, [0, [0, [0]]]],
    {"b": 0, "a": (0, [0, {"z": 0, "y": 0}])},
    Point(0, 0),
    Point(0, [0, 0]),
    collections.OrderedDict([("q", 0), ("p", (0, 0))]),
    [(), 0, []],
])
def test_unflatten_rebuilds_the_structure_with_its_types(structure):
    leaves = list(range(10, 10 + len(flatten(structure))))
    rebuilt = unflatten(structure, leaves)
    assert flatten(rebuilt) == leaves
    _same_shape(rebuilt, structure)


def _same_shape(a, b):
    assert type(a) is type(b)
    if isinstance(b, dict):
        assert list(a) == list(b)
        for k in b:
            _same_shape(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_shape(x, y)


def test_unflatten_of_a_leaf_is_the_first_leaf():
    assert unflatten(0, ["x"]) == "x"


def test_round_trip_keeps_the_leaves_themselves():
    x, y, z = nt.constant(1.0), nt.Variable(2.0), nt.constant(3.0)
    structure = {"w": [x, y], "b": (z,)}
    back = unflatten(structure, flatten(structure))
    assert back["w"][0] is x and back["w"][1] is y and back["b"][0] is z


def test_gradient_answers_in_the_structure_of_its_sources():
    w = nt.Variable(np.array([1.0, 2.0]))
    b = nt.Variable(0.5)
    c = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(c)
        y = np.sum(w * w) * c + b
    grads = tape.gradient(y, {"layer": Point(w, b), "scale": [c]})
    assert type(grads) is dict and list(grads) == ["layer", "scale"]
    assert type(grads["layer"]) is Point and type(grads["scale"]) is list
    np.testing.assert_array_equal(grads["layer"].x.numpy(), [6.0, 12.0])
    assert float(grads["layer"].y) == 1.0 and float(grads["scale"][0]) == 5.0
    with nt.GradientTape() as tape:
        y = np.sum(w) + b
    single = tape.gradient(y, (w, b))
    assert type(single) is tuple and len(single) == 2
