"""nbtape/core/rule.py: a ``Rule`` (what it can differentiate, its signature, its
operands), the operand layouts ``Kind``, and ``name_of``.  Every rule here is made by
the constructor, so none is registered."""
import numpy as np
import pytest

from nbtape.core.registry import RULES
from nbtape.core.rule import POSITIONAL, SEQUENCE, VARARGS, Kind, Rule, name_of


def own(x, y=1.0):
    return x * y


def test_kind_members_are_their_names_as_strings():
    assert [k.value for k in Kind] == ["positional", "sequence", "varargs"]
    assert POSITIONAL is Kind.POSITIONAL and SEQUENCE == "sequence" and VARARGS == "varargs"


def test_a_new_rule_has_no_derivatives_and_is_not_registered():
    r = Rule(own)
    assert own not in RULES
    assert not r.has_vjp and not r.has_jvp
    assert (r.fn, r.compute, r.name, r.kind, r.nargs) == (own, own, "own", POSITIONAL, 0)
    assert not r.nondiff and not r.zero and not r.multi
    assert r.fast == 0       # derived at once: calls with no positional argument are in place
    assert repr(r) == "<nbtape rule for own>"


@pytest.mark.parametrize("field, value, vjp, jvp", [
    ("vjps", (lambda g, ans, x: g,), True, False),
    ("jvps", (lambda t, ans, x: t,), False, True),
    ("vjp_all", lambda g, ans, args, kw, needs: [g], True, False),
    ("jvp_all", lambda ts, ans, args, kw: ts[0], False, True),
    ("zero", True, True, True),
    ("composite", lambda x, y=1.0: x, True, True),
])
def test_has_vjp_and_has_jvp_follow_the_fields_set(field, value, vjp, jvp):
    r = Rule(own)
    setattr(r, field, value)
    assert (r.has_vjp, r.has_jvp) == (vjp, jvp)


def test_constructor_fields():
    f = lambda g, ans, args, kw, needs: None  # noqa: E731
    r = Rule(own, "mine", kind=VARARGS, start=1, multi=True, nargs=3, vjp_all=f,
             save_ans=False)
    assert (r.name, r.kind, r.start, r.multi, r.nargs, r.vjp_all, r.save_ans) == \
        ("mine", VARARGS, 1, True, 3, f, False)
    assert r.has_vjp and not r.has_jvp


def test_signature_is_numpy_s_read_once():
    r = Rule(np.diff)
    s = r.signature
    assert s.names == ("a", "n", "axis", "prepend", "append") and r.signature is s


def test_signature_falls_back_on_the_first_vjp_for_star_args():
    def stacked(*arrays):
        return arrays
    r = Rule(stacked)
    r.vjps = (None, lambda g, ans, first, second: g)
    assert r.signature.names == ("first", "second")
    assert Rule(stacked).signature is None           # no VJP to read: unknown


def test_differentiated_names_numpy_s_parameters():
    r = Rule(own)
    r.nargs, r.vjps = 2, (lambda g, ans, x, y=1.0: g, None)
    assert r.differentiated() == ["x"]
    r.jvps = (None, lambda t, ans, x, y=1.0: t)
    assert r.differentiated() == ["x", "y"]
    r.kwvjps = {"scale": None}
    assert r.differentiated() == ["x", "y", "scale"]
    assert RULES[np.sin].differentiated() == ["x"]
    assert RULES[np.diff].differentiated() == ["a", "prepend", "append"]


@pytest.mark.parametrize("field", ["nondiff", "stop", "zero"])
def test_constant_rules_differentiate_nothing(field):
    r = Rule(own)
    r.nargs, r.vjps = 1, (lambda g, ans, x: g,)
    setattr(r, field, True)
    assert r.differentiated() == []


def test_differentiated_for_other_kinds():
    assert Rule(own, kind=VARARGS).differentiated() == ["*args"]
    whole = Rule(own, kind=SEQUENCE, vjp_all=lambda *a: None)
    assert whole.differentiated() == ["x"]
    unnamed = Rule(lambda *a: a, nargs=2, kind=POSITIONAL, jvp_all=lambda *a: None)
    assert unnamed.differentiated() == ["argument 0", "argument 1"]


def test_operands_by_kind():
    args = ("a", "b", "c", "d")
    assert Rule(own, nargs=2).operands(args) == ("a", "b")
    zero = Rule(own, nargs=1)
    zero.zero = True
    assert zero.operands(args) == args                  # every argument, all constants
    assert Rule(own, kind=SEQUENCE).operands((["x", "y"], 0)) == ["x", "y"]
    assert Rule(own, kind=SEQUENCE).operands(()) == ()
    assert Rule(own, kind=VARARGS, start=1).operands(args) == ("b", "c", "d")


@pytest.mark.parametrize("fn, name", [
    (np.sin, "np.sin"), (np.add, "np.add"), (np.diff, "np.diff"),
    (np.linalg.norm, "np.linalg.norm"), (np.fft.fft, "np.fft.fft"),
    (np.concatenate, "np.concatenate"),
    (own, "own")], ids=lambda v: getattr(v, "__name__", str(v)))
def test_name_of(fn, name):
    assert name_of(fn) == name


def test_name_of_something_without_a_name_is_its_repr():
    class Thing:
        __module__ = ""

        def __repr__(self):
            return "<thing>"
    assert name_of(Thing()) == "<thing>"
