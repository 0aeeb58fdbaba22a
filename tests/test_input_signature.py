"""``nbtape.transforms.input_signature``: calls bound as Python binds them, keyed as
``tf.function`` keys its traces, their arrays in one order for the key and the program."""
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

import nbtape as nt
from nbtape.core.state import tls
from nbtape.transforms.input_signature import Binder, ById, inputs, signature
from nbtape.transforms.trace import Tracer


def test_positional_keyword_and_default_bind_alike():
    b = Binder(lambda x, y, scale=2.0, *, k=1: None)
    want = b.bind((1, 2), {})
    assert b.bind((1,), {"y": 2}) == want == b.bind((), {"y": 2, "x": 1})
    assert want == ((1, 2, 2.0), {"k": 1})


def test_leaves_follow_the_key_whatever_the_keyword_order():
    s, bias = np.ones(2), np.zeros(2)
    k1, leaves1 = signature((), {"scale": s, "bias": bias})
    k2, leaves2 = signature((), {"bias": bias, "scale": s})
    assert k1 == k2 and leaves1[0] is leaves2[0] is bias


def test_namedtuples_and_dataclasses_are_keyed_by_structure():
    P = namedtuple("P", "a b")

    @dataclass
    class D:
        a: np.ndarray

    assert signature((P(np.ones(2), 1),), {})[0] == signature((P(np.zeros(2), 1),), {})[0]
    assert signature((D(np.ones(2)),), {})[0] == signature((D(np.zeros(2)),), {})[0]
    assert signature((D(np.ones(2)),), {})[0] != signature((D(np.ones(3)),), {})[0]


def test_an_unhashable_object_is_keyed_by_identity_and_kept_alive():
    class Unhashable:
        __hash__ = None

    obj = Unhashable()
    key = signature((obj,), {})[0]
    assert any(isinstance(k[1], ById) and k[1].obj is obj for k in key)
    assert key != signature((Unhashable(),), {})[0]


def test_inputs_are_copies_added_in_the_keys_order():
    tr = Tracer()
    x = np.ones(2)
    targs, tkwargs = inputs(tr, (x,), {"b": np.zeros(2), "a": np.ones(3)},
                            Binder(lambda x, **kw: None).labels)
    assert targs[0]._value is not x and np.array_equal(targs[0]._value, x)
    assert [s.label for s in tr.steps] == ["x", "a", "b"]
    assert list(tkwargs) == ["b", "a"] and not tls.stack
    assert isinstance(tkwargs["a"], nt.Tensor)
