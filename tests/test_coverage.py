"""nt.coverage(): built from numpy's lists and the rule registry, never stale."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_forward, check_reverse
from nbtape.display.coverage import KINDS, STATUSES, Coverage, Row
from nbtape.diagnostics.errors import NoGradientRuleError
from nbtape.core.primitive import primitive
from nbtape.core.registry import POSITIONAL, RULES, defjvp, defnondiff, defrule, defvjp


def test_table_shape_and_totals():
    table = nt.coverage()
    assert isinstance(table, Coverage) and len(table) > 300
    assert all(isinstance(r, Row) and r.kind in KINDS and r.status in STATUSES for r in table)
    counts = table.summary()
    assert list(counts) == list(STATUSES) and sum(counts.values()) == len(table)
    assert sum(sum(c.values()) for c in table.by_kind().values()) == len(table)
    assert len({r.name for r in table}) == len(table)


def test_every_numpy_ufunc_has_one_row():
    ufuncs = {u.__name__ for u in vars(np).values() if isinstance(u, np.ufunc)}
    rows = nt.coverage(kind="ufunc")
    assert {r.name for r in rows} >= {"np." + n for n in ufuncs}
    assert "np.divide" in rows and "np.true_divide" not in rows     # one object, one row


@pytest.mark.parametrize("name, kind, reverse, forward, status", [
    ("np.sin", "ufunc", "yes", "yes", "differentiable"),
    ("np.matmul", "ufunc", "yes", "yes", "differentiable"),
    ("np.floor", "ufunc", "zero", "zero", "non-differentiable"),
    ("np.isnan", "ufunc", "none", "none", "non-differentiable"),
    ("np.cumprod", "function", "yes", "yes", "differentiable"),
    ("np.median", "function", "yes", "yes", "differentiable"),
    ("np.emath.sqrt", "function", "yes", "yes", "differentiable"),
    ("np.add.reduce", "ufunc method", "yes", "yes", "differentiable"),
    ("np.multiply.accumulate", "ufunc method", "yes", "yes", "differentiable"),
    ("np.busday_count", "function", "no", "no", "unsupported"),
])
def test_well_known_entries(name, kind, reverse, forward, status):
    assert nt.coverage()[name] == Row(name, kind, reverse, forward, status)


def test_linalg_and_fft_are_listed():
    names = {r.name for r in nt.coverage()}
    assert {"np.linalg.inv", "np.linalg.svd", "np.fft.fft", "np.fft.irfft"} <= names


def test_registering_a_rule_changes_the_table():
    def triple(x):
        return 3 * x
    wrapped = primitive(triple)
    key = wrapped.raw
    try:
        name = RULES[key].name
        assert nt.coverage()[name] == Row(name, "nbtape", "no", "no", "unsupported")
        defvjp(key, lambda g, ans, x: 3 * g)
        assert nt.coverage()[name] == Row(name, "nbtape", "yes", "via VJP", "differentiable")
        x = nt.constant([1.0, 2.0])
        with nt.ForwardAccumulator(x, nt.constant([1.0, 1.0])) as acc:   # the claim holds
            y = wrapped(x)
        np.testing.assert_array_equal(acc.jvp(y).numpy(), [3.0, 3.0])
        defjvp(key, lambda t, ans, x: 3 * t)
        assert nt.coverage()[name].forward == "yes"
    finally:
        del RULES[key]
    assert name not in nt.coverage()


def test_a_numpy_function_moves_when_a_rule_is_added():
    fn = np.busday_count
    assert RULES.get(fn) is None
    try:
        defnondiff(fn)
        assert nt.coverage()["np.busday_count"].status == "non-differentiable"
    finally:
        del RULES[fn]
    assert nt.coverage()["np.busday_count"].status == "unsupported"


def test_multi_output_rule_without_jvp_has_no_forward_mode():
    def pair(x):
        return x, 2 * x
    try:
        defrule(pair, lambda g, ans, args, kw, needs: [g[0] + 2 * g[1]], kind=POSITIONAL,
                multi=True)
        row = nt.coverage("pair")["pair"]
        assert (row.reverse, row.forward, row.status) == ("yes", "no", "differentiable")
    finally:
        del RULES[pair]


# sample points away from kinks, ties and domain edges: both signs where the function takes
# them (so |x| and sign-dependent rules show), else positive; arccosh lives above 1
_MIXED, _FIRST, _SECOND = np.array([-0.3, 0.6]), np.array([0.3, 0.6]), np.array([0.45, 0.35])
_SHIFT = {"arccosh": 1.0}


def _finite(u, args):
    with np.errstate(all="ignore"):
        out = u(*args)
    return all(np.all(np.isfinite(o)) for o in (out if isinstance(out, tuple) else (out,))
               if np.dtype(o.dtype).kind in "fc")


def _sample(u):
    """Arguments ``u`` accepts: floats where it takes them (ldexp: then ints) and gives finite
    values, else ints, else datetimes (isnat)."""
    name = u.__name__
    if u.signature:      # generalized ufuncs (matmul, vecdot, ...): 2 or 3 along each core axis
        cores = u.signature.split("->")[0].split("),(")
        shapes = [(2,) * (c.count(",") + 1 if c.strip("()") else 0) for c in cores]
        candidates = [[np.linspace(0.1, 0.9, int(np.prod(s))).reshape(s) + k
                       for k, s in enumerate(shapes)]]
    else:
        floats = [_FIRST + _SHIFT.get(name, 0.0), _SECOND][:u.nin]
        mixed = [_MIXED, _SECOND][:u.nin]
        candidates = [mixed, floats, [_MIXED, np.array([1, -2])][:u.nin],
                      [floats[0], np.array([1, -2])][:u.nin],
                      [np.array([3, 6]), np.array([5, 4])][:u.nin],
                      [np.array(["2020-01-01", "NaT"], dtype="datetime64[D]")] * u.nin]
    for args in candidates:
        try:
            finite = _finite(u, args)
        except TypeError:
            continue
        if finite or args[0].dtype.kind != "f":
            return args
    raise AssertionError(f"no sample arguments for np.{name}")


def _one_output(u):
    """``u`` with its float outputs summed with weights 1, 2, ...: one array to check."""
    if u.nout == 1:
        return u

    def f(*args):
        outs = [o for o in u(*args) if np.dtype(o.dtype).kind == "f"]
        return sum(o * (k + 1) for k, o in enumerate(outs))
    return f


# (scipy.special's ufunc rows: tests/test_rules_scipy_special.py)
@pytest.mark.parametrize("row", [r for r in nt.coverage(kind="ufunc").rows
                                 if r.name.startswith("np.")], ids=lambda r: r.name)
def test_ufunc_rows_tell_the_truth(row):
    """Every ufunc row, multi-output ones included, against what the tape does: recorded or
    not, refused, zero, or (for "yes") the same values as central differences, reverse and
    forward."""
    u = getattr(np, row.name[3:])
    args = _sample(u)
    f = _one_output(u)
    xs = [nt.constant(a) for a in args]
    floats = [x for x in xs if x.dtype.kind == "f"]
    with np.errstate(all="ignore"), nt.GradientTape() as tape:
        tape.watch(floats)
        y = f(*xs)
        total = np.sum(y) if y.dtype.kind == "f" else None
    if row.reverse == "none":
        assert len(tape._ops) == 0
        return
    assert floats, f"{row.name} is listed as differentiable but takes no floats"
    if row.status == "unsupported":
        with pytest.raises(NoGradientRuleError, match=row.name):
            tape.gradient(total, floats)
        return
    if row.reverse == "zero":
        assert all(np.all(g.numpy() == 0) for g in tape.gradient(total, floats))
        return
    assert (row.reverse, row.forward) == ("yes", "yes")
    check_reverse(f, *args)
    check_forward(f, *args)


def test_filters():
    linalg = nt.coverage("linalg")
    # numpy 2 added the array API's np.linalg functions (vecdot, matrix_norm, ...)
    at_least = 25 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 20
    assert len(linalg) >= at_least and all("linalg" in r.name for r in linalg)
    unsupported = nt.coverage(status="unsupported")
    assert all(r.status == "unsupported" for r in unsupported)
    assert nt.coverage("np.fft.").summary() == nt.coverage().filter("np.fft.").summary()
    both = nt.coverage("cum", status="differentiable", forward="yes")
    assert "np.cumsum" in both and all(r.forward == "yes" for r in both)
    with pytest.raises(ValueError, match="status='bogus' is not one of"):
        nt.coverage(status="bogus")
    with pytest.raises(KeyError, match="np.sin"):
        nt.coverage("cos")["np.sin"]


def test_text_view_groups_and_totals():
    text = str(nt.coverage())
    counts = nt.coverage().summary()
    assert f"differentiable      {counts['differentiable']:4d}" in text
    for group in ("ufuncs (", "functions (", "np.linalg (", "np.fft (", "ufunc methods ("):
        assert group in text
    assert "np.tanh" in text and repr(nt.coverage("np.tanh")).startswith("<nbtape coverage")


def test_html_view():
    page = nt.coverage("np.sin")._repr_html_()
    assert "<table>" in page and "<code>np.sin</code>" in page and "differentiable" in page


def test_callable_even_after_the_module_is_imported():
    import nbtape.display.coverage  # noqa: F401  (must not shadow nt.coverage)
    assert nt.coverage("np.sin")["np.sin"].status == "differentiable"
