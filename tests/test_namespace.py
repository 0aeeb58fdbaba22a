"""Namespace names and the tape (nbtape.notebook.namespace)."""
import numpy as np
import pytest
from IPython.core.error import UsageError

import nbtape as nt
from nbtape.notebook import namespace as N


@pytest.mark.parametrize("value, dtype", [
    (2, np.float64), (2.5, np.float64), (1 + 1j, np.complex128),
    (np.float32(1.5), np.float32), (np.ones(3, dtype=np.float32), np.float32),
    ([1.0, 2.0], np.float64), ((1.5,), np.float64),
])
def test_watchable_rebinds_numbers_and_float_arrays(value, dtype):
    t = N.watchable("x", value)
    assert isinstance(t, nt.Tensor) and t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(value, dtype=dtype))


def test_watchable_keeps_tensors_and_variables():
    t, v = nt.constant(1.0), nt.Variable(2.0)
    assert N.watchable("t", t) is t and N.watchable("v", v) is v


@pytest.mark.parametrize("value, message", [
    (np.arange(3), "k is an int64 array"),
    (np.int64(3), "k is an int64 number"),
    ([1, 2], "k is a list of int64 values"),
    (True, "is a bool"),
    (np.bool_(True), "is a bool"),
    ("s", "is a str"),
    (None, "is a NoneType"),
    ([[1.0], [1.0, 2.0]], "is a list"),
    (nt.constant([1, 2]), "int64 tensor"),
    (nt.Variable(True), "bool variable"),
])
def test_watchable_refuses_what_cannot_be_differentiated(value, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        N.watchable("k", value)


def test_resolve_watch_checks_all_names_first():
    ns = {"a": 1.0, "b": np.arange(2)}
    with pytest.raises(UsageError, match="b is an int64 array"):
        N.resolve_watch(ns, ["a", "b"])
    assert ns == {"a": 1.0, "b": ns["b"]}
    with pytest.raises(UsageError, match="not a variable name"):
        N.resolve_watch(ns, ["a.b"])


def test_cell_results_by_identity():
    y, z = nt.constant(1.0), nt.constant(2.0)
    before = {"y": y, "z": z}
    after = {"y": y, "z": nt.constant(2.0), "w": nt.Variable(1.0), "n": 3, "tape": 0}
    assert [k for k, _ in N.cell_results(before, after, exclude={"w"})] == ["z"]


def test_tensor_names_and_labels():
    y, v = nt.constant(1.0), nt.Variable(1.0, name="kernel")
    names = N.tensor_names({"a": y, "b": y, "n": 3}, prefer=[("b", y)])
    assert names == {y: "b"}
    assert N.label(y, names) == "b"
    assert N.label(v, names) == "'kernel'"
    assert N.label(nt.constant(0.0), names) == "a tensor"


def test_watched_objects_in_watch_order():
    a, b = nt.constant(1.0), nt.constant(2.0)
    v = nt.Variable(3.0)
    with nt.GradientTape() as tape:
        tape.watch(b)
        y = v * a
        tape.watch(a)
    found = N.watched_objects(tape, [a, b, v.value()])
    assert [o is e for o, e in zip(found, [b, v, a])] == [True, True, True]
    assert len(N.watched_objects(tape, [])) == 1          # tensors need candidates


def test_visible_names_hide_ipython_and_underscores():
    class FakeShell:
        user_ns = {"In": [], "_i": "", "x": 1, "Out": {}}
        user_ns_hidden = {"In": user_ns["In"], "Out": {}}
    assert N.visible_names(FakeShell()) == {"x": 1, "Out": {}}
