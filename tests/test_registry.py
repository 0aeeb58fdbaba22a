"""nbtape/core/registry.py: the rule table and the ``def*`` functions that fill it
(numpy_function, rule_for, defalias, defprimitive, defvjp/defjvp/defderiv/deflinear,
defparam, defrule, defmodes, defvariant, defcomposite, defseveral, defnondiff, defzero,
operand_names, variant).  Rules are registered for functions made in each test, and the
``table`` fixture takes them out again: the registry is global."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import NUMPY, check_both
from nbtape.diagnostics.errors import NoGradientRuleError
from nbtape.extend import primitive
from nbtape.core import registry
from nbtape.core.registry import (POSITIONAL, RULES, SEQUENCE, VARARGS, Rule, defalias,
                                   defcomposite, defderiv, defjvp, deflinear, defmodes,
                                   defnondiff, defparam, defprimitive, defrule, defseveral,
                                   defvariant, defvjp, defzero, numpy_function, operand_names,
                                   rule_for, variant)


@pytest.fixture
def table():
    """The registry as it was before the test, restored after it."""
    before = dict(RULES)
    yield RULES
    RULES.clear()
    RULES.update(before)


def f2(x, y):
    return x * y


def f3(a, n=1, axis=-1, prepend=None):
    return a


# --- numpy_function --------------------------------------------------------------------------
def test_numpy_function_finds_dotted_paths_or_gives_none():
    assert numpy_function("sin") is np.sin
    assert numpy_function("linalg.norm") is np.linalg.norm
    assert numpy_function("add.reduce") == np.add.reduce
    assert numpy_function("no_such_function") is None
    assert numpy_function("linalg.no_such_function") is None
    assert numpy_function("no_such_module.norm") is None


def test_def_functions_skip_a_missing_numpy_function(table):
    n = len(table)
    missing = numpy_function("no_such_function")
    for d in (defvjp, defjvp, defderiv, deflinear):
        assert d(missing, lambda *a: None) is None
    assert defparam(missing, "p", None) is None and defrule(missing) is None
    assert defmodes(missing, None, {}) is None and defseveral(missing, None, None) is None
    assert defvariant(missing, None, "m", None, None) is None
    defnondiff(missing)
    defzero(missing)
    defcomposite(missing, None)
    defalias(None, np.sin)
    assert len(table) == n


# --- rule_for, defalias, defprimitive --------------------------------------------------------
def test_rule_for_makes_one_rule_per_function(table):
    assert rule_for(f2, create=False) is None and f2 not in table
    r = rule_for(f2)
    assert isinstance(r, Rule) and table[f2] is r and rule_for(f2) is r
    assert rule_for(f2, create=False) is r


def test_defalias_shares_the_rule_object(table):
    r = defvjp(f2, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)

    def alias(x, y):
        return x * y
    defalias(alias, f2)
    assert table[alias] is r
    defalias(f2, f2)                       # an alias of itself: no change
    assert table[f2] is r
    assert RULES[np.round] is not None and np.round in RULES


def test_defprimitive_names_and_computes(table):
    r = defprimitive(f2, "my f2")
    assert r.name == "my f2" and r.fn is f2 and r.compute is f2
    defprimitive(f2, fn=f3)
    assert r.fn is f3 and r.compute is f3 and r.name == "my f2"
    defprimitive(f2, compute=len)
    assert r.fn is f3 and r.compute is len
    assert RULES[np.add].compute is not np.add      # Python's operator, faster on scalars


# --- defvjp, defjvp, defderiv, deflinear -------------------------------------------------------
def test_defvjp_sets_positional_operands_and_what_to_save(table):
    r = defvjp(f2, lambda g, ans, x, y: g * y, None)
    assert r.kind is POSITIONAL and r.nargs == 2 and len(r.vjps) == 2
    assert (r.save, r.save_ans, r.save_all) == ((False, True), False, False)
    assert r.has_vjp and not r.has_jvp and r.fast == 2
    defvjp(f2, lambda g, ans, x, y: g * y * x, lambda g, ans, x, y: g * ans, name="f-two")
    assert (r.save, r.save_ans, r.save_all, r.name) == ((True, True), True, True, "f-two")


def test_defvjp_of_an_unreadable_vjp_saves_everything(table):
    r = defvjp(f2, lambda g, *args: g)
    assert r.save is None and r.save_ans


def test_defjvp_counts_operands(table):
    r = defjvp(f2, lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
    assert r.nargs == 2 and r.has_jvp and not r.has_vjp


def test_defderiv_gives_vjp_with_conjugate_and_jvp_without():
    own = primitive(lambda x: x)            # a fresh function (the rule is not reused)
    r = defderiv(own.raw, lambda ans, x: 2j * x)
    try:
        z, g = np.array([1 + 1j]), np.array([3.0])
        np.testing.assert_allclose(r.vjps[0](g, None, z), g * np.conj(2j * z))
        np.testing.assert_allclose(r.jvps[0](g, None, z), g * 2j * z)
        assert r.save == (True,) and not r.save_ans
    finally:
        del RULES[own.raw]


def test_defderiv_with_more_arguments_and_none(table):
    r = defderiv(f2, lambda ans, x, y: y, None)
    assert r.nargs == 2 and r.vjps[1] is None and r.jvps[1] is None
    assert r.vjps[0](2.0, None, 3.0, 5.0) == 10.0 and r.jvps[0](2.0, None, 3.0, 5.0) == 10.0
    assert r.save == (False, True)


def test_deflinear_applies_the_function_to_the_tangent(table):
    r = deflinear(f3)
    t = np.array([1.0, 2.0])
    np.testing.assert_array_equal(r.jvps[0](t, None, np.zeros(2), 5), f3(t, 5))
    assert not r.has_vjp
    deflinear(f3, vjp=lambda g, ans, a, *rest: g, call=lambda t, *a: -t)
    np.testing.assert_array_equal(r.jvps[0](t, None, np.zeros(2)), -t)
    assert r.has_vjp


def test_a_registered_rule_is_what_the_tape_differentiates_with(rng):
    @primitive
    def scaled_sin(x, y):
        return np.sin(x) * y
    try:
        defderiv(scaled_sin.raw, lambda ans, x, y: np.cos(x) * y, lambda ans, x, y: np.sin(x))
        check_both(scaled_sin, rng.standard_normal((2, 3)), rng.standard_normal((3,)))
    finally:
        del RULES[scaled_sin.raw]


# --- defparam ----------------------------------------------------------------------------------
def test_defparam_puts_a_positional_parameter_in_its_place(table):
    defvjp(f3, lambda g, ans, a, *r: g)
    r = defparam(f3, "prepend", lambda g, ans, a, *r: -g, lambda t, ans, a, *r: -t)
    assert r.nargs == 4 and r.refused == {1, 2}
    assert r.vjps[1] is None and r.vjps[2] is None and r.vjps[3] is not None
    assert r.jvps[3] is not None and r.fast == 1
    assert sorted(operand_names(r)) == ["a", "prepend"]


def test_defparam_of_a_keyword_only_parameter_is_a_keyword_operand(table):
    def kw_only(x, *, scale=1.0):
        return x * scale
    defvjp(kw_only, lambda g, ans, x, scale=1.0: g * scale)
    r = defparam(kw_only, "scale", lambda g, ans, x, scale=1.0: g * x)
    assert set(r.kwvjps) == {"scale"} and r.kwjvps is None and r.nargs == 1
    defparam(kw_only, "scale", r.kwvjps["scale"], lambda t, ans, x, scale=1.0: t * x)
    assert set(r.kwjvps) == {"scale"}
    assert r.differentiated() == ["x", "scale"]


# --- whole-function rules, modes, variants -------------------------------------------------------
def test_defrule_sets_the_layout_and_keeps_everything(table):
    vjp_all = lambda g, ans, args, kw, needs: [g for _ in args[0]]  # noqa: E731
    r = defrule(f2, vjp_all, kind=SEQUENCE, name="f2 seq")
    assert (r.kind, r.nargs, r.multi, r.name, r.vjp_all) == (SEQUENCE, 1, False, "f2 seq", vjp_all)
    assert r.save is None and r.save_ans and r.fast == -1 and r.has_vjp and not r.has_jvp
    r = defrule(f2, None, lambda ts, ans, args, kw: ts[0], kind=VARARGS, start=1, multi=True)
    assert r.vjp_all is vjp_all and r.has_jvp and (r.kind, r.start, r.multi) == (VARARGS, 1, True)
    r = defrule(f2, vjp_all, kind=POSITIONAL, nargs=2)
    assert r.fast == 2


def test_defmodes_and_defvariant_choose_a_rule_per_call(table):
    other = Rule(f2, "f2 other")
    r = defmodes(f2, lambda args, kwargs: "other" if kwargs.get("flag") else None,
                 {"other": other})
    assert r.variants == {"other": other}
    assert r.choose((), {"flag": True}) == "other" and r.choose((), {}) is None
    mode = defvariant(f2, lambda args, kwargs: kwargs.get("half", False), "f2 half",
                      lambda g, ans, x, y: g / 2, lambda t, ans, x, y: t / 2)
    assert mode.name == "f2 half" and mode.nargs == 1
    assert (mode.save, mode.save_ans) == ((False, False), False)
    assert set(r.variants) == {"other", "f2 half"}        # the earlier mode stays
    assert r.choose((), {"half": True}) == "f2 half"
    assert r.choose((), {}) is None and r.choose((), None) is None
    assert f2 in RULES and all(v is not RULES[f2] for v in r.variants.values())


def test_variant_is_made_once_and_kept():
    r = Rule(f2)
    calls = []

    def make():
        calls.append(1)
        return Rule(f2, base=r)
    v = variant(r, ("k",), make)
    assert variant(r, ("k",), make) is v and calls == [1] and v.base is r
    w = variant(r, ("j",), make)
    assert w is not v and set(r.variants) == {("k",), ("j",)}


def test_defcomposite_and_defseveral(table):
    impl = lambda x, y: x * y  # noqa: E731
    defcomposite(f2, impl)
    assert RULES[f2].composite is impl and RULES[f2].has_vjp and RULES[f2].has_jvp
    several = defseveral(f2, lambda *a: None, lambda *a: None, nargs=2)
    assert RULES[f2].several is several and several is not RULES[f2]
    assert several.multi and several.nargs == 2
    assert several.name == "f2 (returning several arrays)"


def test_defnondiff_and_defzero(table):
    def g1(x):
        return x

    defnondiff(f2, None)
    defzero(g1)
    assert RULES[f2].nondiff and not RULES[f2].zero
    r = RULES[g1]
    assert r.zero and r.save == () and not r.save_ans and r.fast == -1
    assert r.has_vjp and r.has_jvp


def test_a_zero_rule_gives_zero_gradients_and_nondiff_none():
    x = nt.constant([1.5, -2.5])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = np.floor(x)                       # defzero
        c = np.sum(x * np.less(x, 0.0))       # defnondiff: the mask is a constant
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(c, x).numpy(), [0.0, 1.0])


# --- operand_names --------------------------------------------------------------------------------
def test_operand_names_by_kind():
    assert operand_names(RULES[np.linalg.solve]) == {"a", "b"}
    assert operand_names(RULES[np.diff]) == {"a", "prepend", "append"}
    if NUMPY >= "2.0.0":        # numpy 1's concatenate has no signature nbtape can read
        assert operand_names(RULES[np.concatenate]) == {"arrays"}
    assert operand_names(RULES[np.einsum]) == frozenset()


def test_a_function_without_a_rule_raises_on_the_gradient():
    @primitive
    def ruleless(x):
        return x + 1.0
    try:
        x = nt.constant(1.0)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = ruleless(x)
        with pytest.raises(NoGradientRuleError):
            tape.gradient(y, x)
    finally:
        RULES.pop(ruleless.raw, None)


def test_module_reexports_the_rule_kinds():
    assert registry.Kind.SEQUENCE is SEQUENCE and registry.name_of(np.sin) == "np.sin"
