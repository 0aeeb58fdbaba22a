"""nbtape/core/signature.py: numpy's own parameters for a rule's function (plain
functions, ufuncs, ufunc methods, and functions Python cannot read), and which
keywords a ``Signature`` accepts."""
import inspect

import numpy as np
import pytest

from gradcheck import since_numpy
from nbtape.core.signature import Signature, signature_of

_EMPTY = inspect.Parameter.empty


def test_a_python_function_gives_its_names_defaults_and_keywords():
    def f(a, b=2, /, c=3, *, d=4, **kw):
        return a
    s = signature_of(f)
    assert s.names == ("a", "b", "c") and s.defaults == (_EMPTY, 2, 3)
    assert s.positional == 2 and s.keyword_only == {"d"} and s.more_keywords
    assert s.index == {"a": 0, "b": 1, "c": 2}


def test_numpy_diff_operands_by_name():
    s = signature_of(np.diff)
    assert s.names == ("a", "n", "axis", "prepend", "append")
    assert s.defaults[1:3] == (1, -1)
    assert s.positional == 0 and not s.more_keywords


@pytest.mark.parametrize("u, names", [(np.sin, ("x",)), (np.add, ("x1", "x2")),
                                      (np.modf, ("x",)), (np.divmod, ("x1", "x2"))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_ufunc_takes_its_inputs_by_position_only(u, names):
    s = signature_of(u)
    assert s.names == names and s.positional == u.nin and s.more_keywords
    assert s.accepts("out") and s.accepts("where")         # numpy's ufunc keywords


@pytest.mark.parametrize("method", ["reduce", "accumulate", "reduceat"])
def test_ufunc_methods_bound_or_as_keys_read_the_same(method):
    bound, key = signature_of(getattr(np.multiply, method)), signature_of((np.multiply, method))
    assert bound.names == key.names and bound.names[0] == "array"
    assert bound.positional == 0 and bound.more_keywords       # numpy takes array= too
    assert bound.index["axis"] == (2 if method == "reduceat" else 1)


def test_outer_takes_its_two_operands_by_position():
    s = signature_of((np.add, "outer"))
    assert s.names == ("A", "B") and s.positional == 2 and s.more_keywords
    assert signature_of(np.subtract.outer).names == ("A", "B")


def test_an_unknown_ufunc_method_has_no_parameters():
    s = signature_of((np.add, "no_such_method"))
    assert s.names == () and s.more_keywords


def test_a_function_taking_star_args_needs_a_fallback():
    def f(*arrays, axis=0):
        return arrays
    assert signature_of(f) is None
    s = signature_of(f, lambda g, ans, x, y, *, axis=0: g)
    # the fallback names the operands of *args, positional only; keywords stay keywords
    assert s.names == ("x", "y") and s.positional == 2 and s.keyword_only == {"axis"}
    assert not s.accepts("x") and s.accepts("axis")
    s = signature_of(f, lambda g, ans, x, y=None: g)
    assert s.names == ("x", "y") and s.positional == 2 and s.defaults == (_EMPTY, None)


def test_an_unreadable_builtin_borrows_the_fallbacks_names():
    fn = print                              # print(*args, ...): a builtin with *args
    assert signature_of(fn) is None
    s = signature_of(fn, lambda g, ans, value, sep=" ": g)
    assert s.names == ("value", "sep") and s.positional == 2
    assert signature_of(fn, lambda *a: None) is not None
    assert signature_of(fn, 3) is None      # a fallback without a signature either


def test_signature_accepts_keywords_numpy_takes():
    s = Signature([("a", _EMPTY), ("b", 1), ("c", 2)], positional=1, keyword_only=["d"])
    assert [s.accepts(n) for n in "abcde"] == [False, True, True, True, False]
    more = Signature([("x", _EMPTY)], positional=1, more_keywords=True)
    assert more.accepts("anything") and more.accepts("x")


@since_numpy("2.0.0", "concatenate's text signature")
def test_signature_of_concatenate_reads_numpy_s_own_text_signature():
    s = signature_of(np.concatenate)
    assert s.names[:2] == ("arrays", "axis") and s.accepts("axis") and s.accepts("dtype")
