"""nbtape/extend.py: adding a primitive from outside nbtape, checked against central
finite differences in reverse and forward mode; misuse gives clear errors at the
user's line.  Every rule added here is removed again (the registry is global, and
tests/test_random_programs.py checks what it holds)."""
import ast
import os
import pathlib
import re

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, check_reverse
from nbtape.diagnostics.errors import InvalidArgumentError, NoGradientRuleError
from nbtape.extend import (defderiv, defjvp, deflinear, defnondiff, defvjp, defzero, primitive,
                           unregister)
from nbtape.core.registry import RULES, Kind, Rule

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def registry():
    """Leave the registry as it was: every rule a test adds is removed afterwards."""
    before = dict(RULES)
    yield
    for key in [k for k in RULES if k not in before]:
        del RULES[key]
    RULES.update(before)


def _softplus():
    @primitive
    def softplus(x):
        return np.logaddexp(0.0, x)
    return softplus


def _shapes(rng):
    """A random shape of up to 3 axes (0-d included)."""
    return tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 4)))


# --- a function of one's own --------------------------------------------------------------
def test_a_new_function_by_its_derivative_works_in_both_modes(registry, rng):
    softplus = _softplus()
    defderiv(softplus, lambda ans, x: 1 / (1 + np.exp(-x)))
    for _ in range(3):
        check_both(softplus, rng.standard_normal(_shapes(rng)))
    assert nt.check_gradients(softplus, np.array([-2.0, 0.5, 3.0])) < 1e-8
    assert softplus(0.0) == np.log(2.0)         # plain values: the function itself


def test_a_new_function_by_its_vjp_and_jvp_broadcasts(registry, rng):
    @primitive
    def blend(x, y, w):
        return w * x + (1 - w) * y * y
    # the VJPs return full-size adjoints: the engine sums them down to each shape
    defvjp(blend, lambda g, ans, x, y, w: g * w,
           lambda g, ans, x, y, w: g * (1 - w) * 2 * y,
           lambda g, ans, x, y, w: g * (x - y * y))
    defjvp(blend, lambda t, ans, x, y, w: t * w,
           lambda t, ans, x, y, w: t * (1 - w) * 2 * y,
           lambda t, ans, x, y, w: t * (x - y * y))
    check_both(blend, rng.standard_normal((2, 3)), rng.standard_normal((3,)),
               rng.standard_normal((2, 1)))
    check_both(blend, rng.standard_normal(()), rng.standard_normal((4,)), 0.25, wrt=[0, 1])


def test_several_derivatives_one_per_parameter(registry, rng):
    @primitive
    def weighted(x, y):
        return x * np.exp(y)
    defderiv(weighted, lambda ans, x, y: np.exp(y), lambda ans, x, y: ans)
    check_both(weighted, rng.standard_normal((3, 1)), rng.standard_normal((4,)))
    check_both(weighted, rng.standard_normal(3) + 1j * rng.standard_normal(3),
               rng.standard_normal(3))


def test_a_derivative_rule_records_so_second_derivatives_work(registry, rng):
    softplus = _softplus()
    defderiv(softplus, lambda ans, x: 1 / (1 + np.exp(-x)))
    check_hvp(lambda x: np.sum(softplus(x) * x), rng.standard_normal(4))


def test_a_linear_function_is_its_own_jvp(registry, rng):
    @primitive
    def rsum(x, axis=0):
        return np.cumsum(x, axis=axis)
    deflinear(rsum, lambda g, ans, x, axis=0:
              np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis))
    check_both(rsum, rng.standard_normal((3, 4)))
    check_both(lambda x: rsum(x, 1), rng.standard_normal((2, 5)))
    check_both(lambda x: rsum(x, axis=1), rng.standard_normal((2, 5)))


def test_a_named_primitive_shows_its_name_on_the_tape(registry):
    @primitive(name="my_square")
    def square(x):
        return x * x
    defderiv(square, lambda ans, x: 2 * x)
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    assert float(tape.gradient(y, x)) == 6.0 and "my_square" in str(tape.explain(y, x))


def test_unregister_forgets_the_rule(registry):
    softplus = _softplus()
    defderiv(softplus, lambda ans, x: 1 / (1 + np.exp(-x)))
    unregister(softplus)
    assert softplus.raw not in RULES


# --- a numpy function nbtape lacks --------------------------------------------------------
def _polyval_rules():
    def vjp_p(g, ans, p, x):
        powers = np.arange(len(p) - 1, -1, -1)
        terms = np.asarray(g)[..., None] * np.asarray(x)[..., None] ** powers
        return terms.reshape(-1, len(p)).sum(axis=0)
    defvjp(np.polyval, vjp_p, lambda g, ans, p, x: g * np.polyval(np.polyder(p), x))
    defjvp(np.polyval, lambda t, ans, p, x: np.polyval(t, x),
           lambda t, ans, p, x: t * np.polyval(np.polyder(p), x))


def test_a_numpy_function_nbtape_lacks(registry, rng):
    assert np.polyval not in RULES            # pick another if nbtape gains this one
    _polyval_rules()
    check_both(np.polyval, rng.standard_normal(4), rng.standard_normal((2, 3)))
    check_both(np.polyval, rng.standard_normal(3), rng.standard_normal(()))


def test_a_numpy_ufunc_needs_no_primitive(registry):
    assert primitive(np.sin) is np.sin and primitive(np.polyval) is np.polyval


# --- mistakes -------------------------------------------------------------------------------
def _raised_here(info):
    files = {os.path.basename(str(e.path)) for e in info.traceback}
    return os.path.basename(__file__) in files and "registry.py" not in files \
        and "extend.py" not in files


def test_a_rule_for_a_function_nbtape_never_sees(registry):
    def softplus(x):
        return np.logaddexp(0.0, x)
    with pytest.raises(InvalidArgumentError, match=r"never sees the calls of softplus.*"
                                                   r"@nbtape.extend.primitive") as info:
        defvjp(softplus, lambda g, ans, x: g)
    assert _raised_here(info) and softplus not in RULES
    with pytest.raises(InvalidArgumentError, match="defderiv"):
        defderiv(softplus, lambda ans, x: 1.0)


@pytest.mark.parametrize("define, words", [
    (lambda f: defvjp(f, lambda g, x: g), r"cannot be called as f\(g, ans, x\)"),
    (lambda f: defjvp(f, lambda t: t), r"cannot be called as f\(t, ans, x\)"),
    (lambda f: defderiv(f, lambda x: 1.0), r"cannot be called as f\(ans, x\)"),
    (lambda f: defvjp(f, lambda g, ans, x: g, lambda g, ans, x: g), r"got 2 VJPs.*takes 1"),
    (lambda f: defderiv(f, "1 / (1 + exp(-x))"), r"is a str, not a function"),
])
def test_rules_of_the_wrong_arity(registry, define, words):
    softplus = _softplus()
    with pytest.raises(InvalidArgumentError, match=words) as info:
        define(softplus)
    assert _raised_here(info)


def test_a_derivative_of_the_wrong_shape_names_the_function_and_argument(registry):
    softplus = _softplus()
    defderiv(softplus, lambda ans, x: np.ones(7))
    x = nt.constant(np.zeros(3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = softplus(x)
    with pytest.raises(InvalidArgumentError, match=r"softplus's argument x returned a value "
                                                   r"of shape \(7,\)") as info:
        tape.gradient(y, x)
    assert _raised_here(info)
    with nt.ForwardAccumulator(x, np.ones(3)):
        with pytest.raises(InvalidArgumentError, match=r"softplus's argument x"):
            softplus(x)


def test_a_vjp_of_the_wrong_shape_names_the_function_and_argument(registry):
    @primitive
    def total(x):
        return np.sum(x)
    defvjp(total, lambda g, ans, x: np.ones(2) * g)         # forgot to spread g over x
    defjvp(total, lambda t, ans, x: t)                      # forgot to sum the tangent
    x = nt.constant(np.zeros(3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = total(x)
    with pytest.raises(InvalidArgumentError, match=r"VJP given for total's argument x .*"
                                                   r"\(2,\).*\(3,\)"):
        tape.gradient(y, x)
    with nt.ForwardAccumulator(x, np.ones(3)):
        with pytest.raises(InvalidArgumentError, match=r"JVP given for total's argument x"):
            total(x)
    defvjp(total, lambda g, ans, x: g * np.ones_like(x))    # the fix passes the check
    check_reverse(total, np.arange(3.0))


def test_a_primitive_without_a_rule_refuses_its_gradient(registry):
    softplus = _softplus()
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = softplus(x)
    with pytest.raises(NoGradientRuleError, match="softplus"):
        tape.gradient(y, x)


def test_a_tensor_where_no_rule_was_given_refuses_naming_the_parameter(registry):
    @primitive
    def scale(x, a):
        return a * x
    defvjp(scale, lambda g, ans, x, a: g * a)       # no rule for a
    x, a = nt.constant(2.0), nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch([x, a])
        y = scale(x, a)
    with pytest.raises(NoGradientRuleError, match=r"scale with respect to its a= argument"):
        tape.gradient(y, a)


# --- rules as data ----------------------------------------------------------------------------
def test_every_rule_kind_is_a_kind():
    assert all(isinstance(r.kind, Kind) for r in RULES.values())
    assert {Kind.POSITIONAL, Kind.SEQUENCE, Kind.VARARGS} <= {r.kind for r in RULES.values()}


def _names_a_rule(node):
    """``rule_for(...)`` or ``RULES[...]``."""
    if isinstance(node, ast.Call):
        return getattr(node.func, "id", getattr(node.func, "attr", None)) == "rule_for"
    return isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "RULES"


def test_only_the_registry_sets_a_rules_fields():
    """No module but core/registry.py assigns to a Rule's fields (they are given to
    the constructor, or set by the def* functions)."""
    fields = set(Rule.__slots__) - {"name"}         # layers and variables have names too
    rule_names = {"rule", "r", "mode", "several", "v", "variant", "base"}
    offenders = []
    for path in sorted((ROOT / "nbtape").rglob("*.py")):
        if path.name == "registry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Assign, ast.AugAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for a in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(a, ast.Attribute) and a.attr in fields and (
                            (isinstance(a.value, ast.Name) and a.value.id in rule_names)
                            or _names_a_rule(a.value)):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def test_the_worked_example_in_the_api_reference_runs(registry):
    api = (ROOT / "docs" / "api.md").read_text()
    section = api.split("## Adding a function: `nbtape.extend`")[1].split("\n## ")[0]
    code = section.split("```python\n")[1].split("```")[0]
    space = {}
    exec(compile(code, "docs/api.md", "exec"), space)
    x = space["x"].numpy()
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(space["acc"].jvp(space["y"]).numpy(), s)      # the JVP
    assert space["softplus"].raw in RULES           # removed again by the fixture


# --- what a user's rule returns is checked, at the user's line -----------------------------
@pytest.mark.parametrize("arg_shape, out_shape, adjoint_shape", [
    ((3,), (3,), (3, 3)),           # summed down to (3,) by the engine: [12, 12, 12]
    ((3,), (3,), (1, 3)),           # a leading axis the call never added
    ((3, 1), (3, 1), (3, 4)),       # an axis of 1 the call never broadcast
    ((), (), (2,)),                 # a scalar's adjoint of many values
])
def test_a_vjp_that_only_the_engines_summing_would_fit_is_refused(registry, arg_shape,
                                                                   out_shape, adjoint_shape):
    @primitive
    def double(x):
        return 2.0 * x
    defvjp(double, lambda g, ans, x: 2.0 * g * np.ones(adjoint_shape))
    x = nt.constant(np.ones(arg_shape))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = double(x)
    assert np.shape(y) == out_shape
    with pytest.raises(InvalidArgumentError,
                       match=rf"VJP given for double's argument x .*{re.escape(str(adjoint_shape))}"
                             rf".*{re.escape(str(arg_shape))}") as info:
        tape.gradient(y, x)
    assert _raised_here(info)


def test_a_vjp_may_return_the_broadcast_adjoint_that_the_call_made(registry, rng):
    @primitive
    def scaled(x, w):
        return w * x            # x of shape (3,) against w of (2, 3): output (2, 3)
    # each VJP returns the output-shaped adjoint; the engine sums it to each argument
    defvjp(scaled, lambda g, ans, x, w: g * w, lambda g, ans, x, w: g * x)
    defjvp(scaled, lambda t, ans, x, w: t * w, lambda t, ans, x, w: t * x)
    check_both(scaled, rng.standard_normal(3), rng.standard_normal((2, 3)))


def _returns_none(define):
    @primitive
    def cube(x):
        return x ** 3
    {"defvjp": lambda: defvjp(cube, lambda g, ans, x: None),
     "defjvp": lambda: defjvp(cube, lambda t, ans, x: None),
     "defderiv": lambda: defderiv(cube, lambda ans, x: None)}[define]()
    return cube


@pytest.mark.parametrize("define", ["defvjp", "defderiv"])
def test_a_vjp_that_returns_none_names_the_rule_and_argument(registry, define):
    cube = _returns_none(define)
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = cube(x)
    with pytest.raises(InvalidArgumentError, match=r"given for cube's argument x returned "
                                                   r"None") as info:
        tape.gradient(y, x)
    assert _raised_here(info)


@pytest.mark.parametrize("define", ["defjvp", "defderiv"])
def test_a_jvp_that_returns_none_names_the_rule_and_argument(registry, define):
    cube = _returns_none(define)
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        with pytest.raises(InvalidArgumentError, match=r"given for cube's argument x "
                                                       r"returned None"):
            acc.jvp(cube(x))


# --- unregister undoes an override ---------------------------------------------------------
_OVERRIDES = {
    "defvjp": lambda f: defvjp(f, lambda g, ans, x, *rest: 5.0 * g),
    "defjvp": lambda f: defjvp(f, lambda t, ans, x, *rest: 5.0 * t),
    "defderiv": lambda f: defderiv(f, lambda ans, x, *rest: 5.0 + 0 * x),
    "deflinear": lambda f: deflinear(f, lambda g, ans, x, *rest: 5.0 * g),
    "defnondiff": lambda f: defnondiff(f),
    "defzero": lambda f: defzero(f),
}


@pytest.mark.parametrize("kind", sorted(_OVERRIDES))
@pytest.mark.parametrize("fn", [np.sin, np.add, np.cumsum], ids=["sin", "add", "cumsum"])
def test_unregistering_an_override_restores_the_built_in_rule(kind, fn, rng):
    before = RULES[fn].given()
    f = (lambda x: x + 2.0 * x) if fn is np.add else fn     # np.add through the operator
    try:
        _OVERRIDES[kind](fn)
        assert RULES[fn].given() != before      # the override took
    finally:
        unregister(fn)
    assert RULES[fn].given() == before
    check_both(f, rng.standard_normal(3))
    unregister(fn)                              # nothing to undo: the built-in rule stays
    check_both(f, rng.standard_normal(3))


def test_overriding_twice_then_unregistering_restores_the_built_in_rule(rng):
    try:
        defvjp(np.sin, lambda g, ans, x: 5.0 * g)
        defvjp(np.sin, lambda g, ans, x: 7.0 * g)
    finally:
        unregister(np.sin)
    check_both(np.sin, rng.standard_normal(3))


# --- a primitive that returns several arrays ----------------------------------------------
def _polar():
    @primitive
    def polar(x, y):
        return np.hypot(x, y), np.arctan2(y, x)
    return polar


def test_a_primitive_returning_several_arrays_takes_a_tuple_of_adjoints(registry, rng):
    polar = _polar()

    def vjp_x(g, ans, x, y):
        (gr, gt), (r, _) = g, ans
        return gr * x / r - gt * y / r ** 2

    def vjp_y(g, ans, x, y):
        (gr, gt), (r, _) = g, ans
        return gr * y / r + gt * x / r ** 2
    defvjp(polar, vjp_x, vjp_y)
    defjvp(polar, lambda t, ans, x, y: (t * x / ans[0], -t * y / ans[0] ** 2),
           lambda t, ans, x, y: (t * y / ans[0], t * x / ans[0] ** 2))

    def f(x, y):
        r, t = polar(x, y)
        return r * np.sin(t)
    check_both(f, rng.standard_normal(4), rng.standard_normal(4))
    check_both(lambda x, y: polar(x, y)[1], rng.standard_normal(3), rng.standard_normal(3))
    assert polar(3.0, 4.0)[0] == 5.0


def test_a_several_output_jvp_must_return_one_tangent_per_output(registry):
    polar = _polar()
    defjvp(polar, lambda t, ans, x, y: t, lambda t, ans, x, y: t)
    x = nt.constant(1.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        with pytest.raises(InvalidArgumentError, match="tuple of 2 tangents"):
            acc.jvp(polar(x, 2.0)[0])


# --- fewer rules than arguments, and a re-run cell -----------------------------------------------
def test_overriding_a_numpy_function_with_fewer_vjps_than_arguments_refuses_the_rest_by_name(rng):
    x, y = nt.constant(2.0), nt.constant(3.0)
    try:
        defvjp(np.multiply, lambda g, ans, x1, x2: g * x2)       # x1's only
        with nt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            z = np.multiply(x, y)
        assert float(tape.gradient(z, x)) == 3.0                 # the one given is used
        with pytest.raises(NoGradientRuleError, match=r"np.multiply.*x2"):
            tape.gradient(z, y)
        defjvp(np.multiply, lambda t, ans, x1, x2: t * x2)
        with nt.ForwardAccumulator(x, 1.0) as acc:
            z = np.multiply(x, y)
        assert float(acc.jvp(z)) == 3.0
        with pytest.raises(NoGradientRuleError, match=r"np.multiply.*x2"):
            with nt.ForwardAccumulator(y, 1.0) as acc:
                z = np.multiply(x, y)
            acc.jvp(z)
    finally:
        unregister(np.multiply)
    check_both(np.multiply, rng.standard_normal(3), rng.standard_normal(3))


def test_a_re_run_cell_primitive_wrong_rule_unregister_right_rule_just_works(registry):
    @primitive
    def double(x):
        return 2.0 * x
    defvjp(double, lambda g, ans, x: 100.0 * g)          # wrong
    x = nt.constant(1.5)
    assert float(nt.grad(double)(x)) == 100.0
    unregister(double)
    with nt.GradientTape() as tape:                       # no rule now: refused, not the old one
        tape.watch(x)
        y = double(x)
    with pytest.raises(NoGradientRuleError, match="double"):
        tape.gradient(y, x)
    defvjp(double, lambda g, ans, x: 2.0 * g)            # right: no "make it a primitive"
    assert float(nt.grad(double)(x)) == 2.0
    check_reverse(double, np.array([0.5, -1.0]))
