"""Every operand of every rule, by keyword and by position, against finite differences.

The rule registry says which of numpy's parameters each rule differentiates
(``Rule.differentiated()``).  For every registered numpy function this test calls it
with those parameters given by keyword, then by position, and checks reverse and
forward mode against central differences.  Every other parameter that numpy lets
hold a float array must refuse (``NoGradientRuleError`` naming the function and the
parameter) when a gradient or tangent flows into it: never a silently dropped one.

A new rule is checked for free when the generic example (one array of shape (3, 4),
values in (0.1, 0.9), as the first argument) suits it; otherwise it needs an entry
in ``EXAMPLES``: ``test_every_rule_and_operand_has_an_example`` says so for a
differentiated parameter it lacks, and the sweep for a call numpy rejects.
"""
import math

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_forward, check_reverse
from nbtape.core.registry import RULES


class Arr:
    """An operand: a float array made inside each test from its own seeded generator."""

    def __init__(self, *shape, kind="unit"):
        self.shape, self.kind = shape, kind

    def make(self, rng):
        n = math.prod(self.shape)
        # distinct values: no ties for max, sort, median
        unit = (0.1 + 0.8 * (rng.permutation(n) + rng.uniform(0.2, 0.8, n)) / n).reshape(self.shape)
        if self.kind == "unit":
            return unit
        if self.kind == "above1":
            return 1.5 + unit
        if self.kind == "normal":
            return (unit - 0.5) * 4
        if self.kind == "sorted":
            return np.sort(unit.ravel()).reshape(self.shape) * 3
        if self.kind == "square":       # well conditioned
            return unit + 2 * np.eye(self.shape[-1])
        if self.kind == "spd":
            a = unit - 0.5
            return a @ np.swapaxes(a, -1, -2) + self.shape[-1] * np.eye(self.shape[-1])
        if self.kind == "complex":
            return unit + 1j * (rng.permutation(n).reshape(self.shape) / n + 0.05)
        raise ValueError(self.kind)

    def __repr__(self):
        return f"Arr{self.shape}"


A = Arr
MASK = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])


def first(out):
    return out[0]


# key -> list of (arguments, post): arguments by numpy's parameter names ("*": positional
# arguments of a function whose signature Python cannot read); post picks what to check
EXAMPLES = {
    np.sum: [dict(a=A(3, 4), axis=0), dict(a=A(3, 4), axis=1, initial=A(), keepdims=True),
             dict(a=A(3, 4), initial=A(), where=MASK)],
    np.prod: [dict(a=A(3, 4), axis=1, initial=A())],
    np.nansum: [dict(a=A(3, 4), axis=0, initial=A())],
    np.nanprod: [dict(a=A(3, 4), axis=0, initial=A())],
    np.max: [dict(a=A(3, 4), axis=1, initial=A()), dict(a=A(3, 4), initial=A(kind="above1"))],
    np.min: [dict(a=A(3, 4), axis=0, initial=A())],
    np.amax: [dict(a=A(3, 4), axis=1, initial=A())],
    np.amin: [dict(a=A(3, 4), axis=0, initial=A())],
    np.nanmax: [dict(a=A(3, 4), axis=1, initial=A())],
    np.nanmin: [dict(a=A(3, 4), axis=0, initial=A())],
    np.var: [dict(a=A(3, 4), axis=1, mean=A(3, 1)), dict(a=A(3, 4), ddof=1, where=MASK)],
    np.std: [dict(a=A(3, 4), axis=1, mean=A(3, 1)), dict(a=A(3, 4), ddof=1, where=MASK)],
    np.nanvar: [dict(a=A(3, 4), axis=0, mean=A(1, 4))],
    np.nanstd: [dict(a=A(3, 4), axis=0, mean=A(1, 4))],
    np.mean: [dict(a=A(3, 4), axis=1), dict(a=A(3, 4), where=MASK)],
    np.nanmean: [dict(a=A(3, 4), axis=1, where=MASK)],
    np.average: [dict(a=A(3, 4), axis=1, weights=A(3, 4)), dict(a=A(3, 4), axis=0, weights=A(3)),
                 (dict(a=A(3, 4), axis=1, weights=A(4), returned=True), None)],
    np.diff: [dict(a=A(3, 4), prepend=A(3, 1), append=A(3, 2)),
              dict(a=A(3, 4), n=2, axis=0, prepend=A(), append=A(2, 4))],
    np.ediff1d: [dict(ary=A(3, 4), to_end=A(2), to_begin=A(3))],
    np.clip: [dict(a=A(3, 4), a_min=A(4), a_max=A(3, 1, kind="above1")),
              dict(a=A(3, 4), min=A(), max=A(3, 1, kind="above1"))],
    # numpy dispatches nan_to_num on x alone, so x is a tensor holding the NaNs and infinities
    np.nan_to_num: [dict(x=A(4), nan=A(), posinf=A(), neginf=A(), _pre=dict(
        x=lambda x: np.where([True, False, False, False], np.nan, x) + np.array(
            [0.0, 0.0, np.inf, -np.inf]))), dict(x=A(3, 4))],
    np.interp: [dict(x=A(5, kind="normal"), xp=A(4, kind="sorted"), fp=A(4), left=A(),
                     right=A())],
    np.pad: [dict(array=A(3, 4), pad_width=((1, 2), (2, 1)), constant_values=A(2, 2)),
             dict(array=A(3, 4), pad_width=1, mode="constant", constant_values=A()),
             dict(array=A(3, 4), pad_width=2, mode="reflect")],
    np.full_like: [dict(a=A(3, 4), fill_value=A())],
    np.where: [dict(condition=MASK, x=A(3, 4), y=A(4))],
    np.compress: [dict(condition=[True, False, True], a=A(3, 4), axis=0)],
    np.extract: [dict(condition=MASK, arr=A(3, 4))],
    np.take: [dict(a=A(3, 4), indices=[2, 0, 2], axis=1)],
    np.take_along_axis: [dict(arr=A(3, 4), indices=np.array([[0], [3], [1]]), axis=1)],
    np.delete: [dict(arr=A(3, 4), obj=1, axis=1)],
    np.append: [dict(arr=A(3, 4), values=A(3, 2), axis=1)],
    np.reshape: [dict(a=A(3, 4), shape=(2, 6))],
    np.swapaxes: [dict(a=A(3, 4), axis1=0, axis2=1)],
    np.moveaxis: [dict(a=A(2, 3, 4), source=0, destination=-1)],
    np.rollaxis: [dict(a=A(2, 3, 4), axis=2)],
    np.expand_dims: [dict(a=A(3, 4), axis=1)],
    np.squeeze: [dict(a=A(3, 1, 4))],
    np.broadcast_to: [dict(array=A(4), shape=(3, 4))],
    np.tile: [dict(A=A(3, 4), reps=(2, 1))],
    np.repeat: [dict(a=A(3, 4), repeats=2, axis=0)],
    np.roll: [dict(a=A(3, 4), shift=1, axis=1)],
    np.rot90: [dict(m=A(3, 4), k=1)],
    np.split: [(dict(ary=A(4, 3), indices_or_sections=2), None)],
    np.array_split: [(dict(ary=A(5, 3), indices_or_sections=2), None)],
    np.hsplit: [(dict(ary=A(3, 4), indices_or_sections=2), None)],
    np.vsplit: [(dict(ary=A(4, 3), indices_or_sections=2), None)],
    np.dsplit: [(dict(ary=A(2, 3, 4), indices_or_sections=2), None)],
    np.concatenate: [dict(arrays=[A(3, 4), A(2, 4)]), dict(arrays=[A(3, 4), A(3, 2)], axis=1)],
    np.stack: [dict(arrays=[A(3, 4), A(3, 4)], axis=1)],
    np.hstack: [dict(tup=[A(3, 4), A(3, 2)])],
    np.vstack: [dict(tup=[A(3, 4), A(2, 4)])],
    np.dstack: [dict(tup=[A(3, 4), A(3, 4)])],
    np.column_stack: [dict(tup=[A(3), A(3, 2)])],
    np.linalg.multi_dot: [dict(arrays=[A(2, 3), A(3, 4), A(4, 2)])],
    np.broadcast_arrays: [({"*": [A(3, 1), A(4)]}, None)],
    np.einsum: [{"*": ["ij,jk->ik", A(2, 3), A(3, 4)]}],
    np.matmul: [dict(x1=A(2, 3), x2=A(3, 4))],
    np.divmod: [(dict(x1=A(3, 4, kind="above1"), x2=A(4)), first)],
    np.dot: [dict(a=A(2, 3), b=A(3, 4))],
    np.inner: [dict(a=A(2, 3), b=A(4, 3))],
    np.vdot: [dict(a=A(3, 4), b=A(3, 4))],
    np.tensordot: [dict(a=A(2, 3, 4), b=A(3, 4, 2), axes=2)],
    np.cross: [dict(a=A(4, 3), b=A(3)), dict(a=A(3, 4), b=A(4, 3), axisa=0, axisc=0)],
    np.convolve: [dict(a=A(5), v=A(3)), dict(a=A(3), v=A(5), mode="same")],
    np.correlate: [dict(a=A(5), v=A(3)), dict(a=A(3), v=A(4), mode="full")],
    # np.gradient takes its spacings as *varargs (by position), f= also by keyword
    np.gradient: [({"*": [A(3, 4)]}, first), ({"*": [A(3, 4), A()]}, lambda out: out[1]),
                  dict(f=A(3, 4), axis=0, edge_order=2)],
    np.select: [dict(condlist=[MASK, ~MASK], choicelist=[A(3, 4), A(4)], default=A())],
    np.choose: [dict(a=np.array([[0, 1, 2, 0], [1, 1, 0, 2], [2, 0, 1, 1]]),
                     choices=[A(3, 4), A(4), A(3, 1)]),
                dict(a=np.array([0, 3, 1, 2]), choices=[A(4), A(4)], mode="wrap")],
    np.partition: [dict(a=A(3, 4), kth=1, axis=0), dict(a=A(3, 4), kth=[0, 2])],
    np.logspace: [dict(start=A(3), stop=A(3, kind="above1"), num=4, base=A(kind="above1"),
                       axis=1)],
    np.kron: [dict(a=A(2, 2), b=A(3, 2))],
    np.outer: [dict(a=A(3), b=A(4))],
    np.cov: [dict(m=A(2, 5), y=A(2, 5)), dict(m=A(2, 5), aweights=A(5)),
             dict(m=A(5, 2), rowvar=False, ddof=0, fweights=np.array([1, 2, 1, 3, 1]),
                  aweights=A(5))],
    np.corrcoef: [dict(x=A(2, 5), y=A(2, 5))],
    np.trapezoid if hasattr(np, "trapezoid") else np.trapz: [
        dict(y=A(3, 4), x=A(4, kind="sorted")), dict(y=A(3, 4), dx=A())],
    np.quantile: [dict(a=A(3, 4), q=A(2), axis=1)],
    np.nanquantile: [dict(a=A(3, 4), q=A(2), axis=1)],
    np.percentile: [dict(a=A(3, 4), q=A(), axis=0)],
    np.nanpercentile: [dict(a=A(3, 4), q=A(), axis=0)],
    np.diag: [dict(v=A(3, 4), k=1), dict(v=A(4))],
    np.diagflat: [dict(v=A(2, 2), k=-1)],
    np.triu: [dict(m=A(3, 4), k=1)],
    np.tril: [dict(m=A(3, 4))],
    np.trace: [dict(a=A(3, 4), offset=1)],
    np.angle: [dict(z=A(3, 4, kind="complex"))],
    np.real: [dict(val=A(3, 4, kind="complex"))],
    np.imag: [dict(val=A(3, 4, kind="complex"))],
    np.real_if_close: [dict(a=A(3, 4))],
    np.linalg.inv: [dict(a=A(3, 3, kind="square"))],
    np.linalg.det: [dict(a=A(3, 3, kind="square"))],
    np.linalg.slogdet: [(dict(a=A(3, 3, kind="square")), lambda out: out[1])],
    np.linalg.solve: [dict(a=A(3, 3, kind="square"), b=A(3, 2))],
    np.linalg.pinv: [dict(a=A(3, 3, kind="square"))],
    np.linalg.matrix_power: [dict(a=A(3, 3), n=3)],
    # these read one triangle: symmetric inputs keep the check about keywords
    np.linalg.cholesky: [dict(a=A(3, 3, kind="spd"), _pre=dict(a=lambda a: (a + a.T) / 2))],
    np.linalg.eigh: [(dict(a=A(3, 3, kind="spd"), _pre=dict(a=lambda a: (a + a.T) / 2)),
                      first)],
    np.linalg.eigvalsh: [dict(a=A(3, 3, kind="spd"), _pre=dict(a=lambda a: (a + a.T) / 2))],
    np.linalg.eig: [(dict(a=A(3, 3, kind="square")), first)],
    np.linalg.eigvals: [dict(a=A(3, 3, kind="square"))],
    # made well conditioned: the 6 x 6 matrix they invert is near 3 I
    np.linalg.tensorinv: [dict(a=A(2, 3, 6), ind=2, _pre=dict(
        a=lambda a: a + 3 * np.eye(6).reshape(2, 3, 6)))],
    np.linalg.tensorsolve: [dict(a=A(2, 3, 6), b=A(2, 3), _pre=dict(
        a=lambda a: a + 3 * np.eye(6).reshape(2, 3, 6)))],
    np.linalg.svd: [({"*": [A(3, 3, kind="square")]}, lambda out: out[1])],
    np.linalg.qr: [({"*": [A(4, 3, kind="normal")]}, lambda out: out[1])],
    np.linalg.norm: [dict(x=A(3, 4), axis=1)],
    np.linalg.cond: [dict(x=A(3, 3, kind="square")), dict(x=A(2, 3, 3, kind="square"), p=-2),
                     dict(x=A(2, 3, 3, kind="square"), p="fro"),
                     dict(x=A(3, 3, kind="square"), p=np.inf)],
    np.emath.logn: [dict(n=A(kind="above1"), x=A(3, 4))],
    np.emath.power: [dict(x=A(3, 4), p=A(3, 4))],
    np.fft.irfft: [dict(a=A(3, 4, kind="complex"))],
    np.fft.hfft: [dict(a=A(3, 4, kind="complex"))],
    np.fft.irfft2: [dict(a=A(3, 4, kind="complex"))],
    np.fft.irfftn: [dict(a=A(3, 4, kind="complex"))],
    np.arccosh: [dict(x=A(3, 4, kind="above1"))],
    np.ldexp: [dict(x1=A(3, 4), x2=np.array([1, 2, 0, 3]))],
    np.heaviside: [dict(x1=A(3, 4, kind="normal"), x2=A(4))],
    (np.add, "outer"): [dict(A=A(3), B=A(2, 2))],
    (np.subtract, "outer"): [dict(A=A(3), B=A(2))],
    (np.multiply, "outer"): [dict(A=A(3), B=A(2))],
    (np.divide, "outer"): [dict(A=A(3), B=A(2))],
    (np.add, "reduce"): [dict(array=A(3, 4), axis=1, initial=A())],
    (np.multiply, "reduce"): [dict(array=A(3, 4), axis=1, initial=A())],
    (np.maximum, "reduce"): [dict(array=A(3, 4), axis=0, initial=A())],
    (np.minimum, "reduce"): [dict(array=A(3, 4), axis=1, initial=A())],
    (np.fmax, "reduce"): [dict(array=A(3, 4), initial=A())],
    (np.fmin, "reduce"): [dict(array=A(3, 4), initial=A())],
    (np.add, "accumulate"): [dict(array=A(3, 4), axis=1)],
    (np.multiply, "accumulate"): [dict(array=A(3, 4))],
}
for _name, _ex in (("linalg.tensordot", [dict(x1=A(2, 3, 4), x2=A(3, 4, 2))]),
                   ("linalg.vecdot", [dict(x1=A(3, 4), x2=A(4))]),
                   ("linalg.outer", [dict(x1=A(3), x2=A(4))]),
                   ("linalg.cross", [dict(x1=A(4, 3), x2=A(3))]),
                   ("vecmat", [dict(x1=A(3), x2=A(3, 4))]),
                   ("matvec", [dict(x1=A(4, 3), x2=A(3))]),
                   ("linalg.matmul", [dict(x1=A(2, 3), x2=A(3, 4))]),
                   ("unstack", [(dict(x=A(3, 4), axis=1), None)]),
                   ("cumulative_sum", [dict(x=A(3, 4), axis=1, include_initial=True)]),
                   ("cumulative_prod", [dict(x=A(3, 4), axis=0)]),
                   ("astype", [dict(x=A(3, 4), dtype=np.float64)])):
    _fn = np
    for _part in _name.split("."):
        _fn = getattr(_fn, _part, None)
    if _fn is not None:
        EXAMPLES[_fn] = _ex

# Rules for nbtape's own primitives (indexing, casting, nt.nn's functions, ...) are
# keyed by the plain function behind the public one; their modules test them.


def _registered():
    """``(key, callable, rule)`` of every rule with a derivative, once per rule."""
    seen, out = set(), []
    for key, rule in RULES.items():
        if id(rule) in seen or rule.nondiff or rule.zero or rule.stop or \
                not rule.name.startswith("np."):
            continue
        seen.add(id(rule))
        fn = getattr(*key) if isinstance(key, tuple) else key
        out.append((key, fn, rule))
    return out


def _examples(key, rule):
    given = EXAMPLES.get(key)
    if given is None:
        sig = rule.signature
        given = [dict(zip(sig.names[:rule.nargs], [A(3, 4)] * rule.nargs))] if sig else []
    return [ex if isinstance(ex, tuple) else (ex, None) for ex in given]


CASES = [(key, k) for key, fn, rule in _registered() for k in range(len(_examples(key, rule)))]
IDS = [f"{RULES[key].name}-{k}" for key, k in CASES]


def _materialize(args, rng):
    def make(v):
        if isinstance(v, Arr):
            return v.make(rng)
        if type(v) is list:
            return [make(x) for x in v]
        return v
    return {k: make(v) if k != "_pre" else v for k, v in args.items()}


def _operand_paths(args):
    """Where the float operands are: ``(name, None)`` or ``(name, index in its list)``."""
    paths = []
    for k, v in args.items():
        if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
            paths.append((k, None))
        elif type(v) is list:
            paths += [(k, i) for i, x in enumerate(v) if isinstance(x, np.ndarray)
                      and x.dtype.kind in "fc"]
    return paths


def _caller(fn, rule, args, paths, mode, post):
    """``f(*operands)``: ``fn`` called with ``args``, operands in ``paths`` replaced."""
    sig = rule.signature

    def call(*ops):
        a = {k: (list(v) if type(v) is list else v) for k, v in args.items() if k != "_pre"}
        for (name, i), op in zip(paths, ops):
            if i is None:
                a[name] = op
            else:
                a[name][i] = op
        for name, f in args.get("_pre", {}).items():
            a[name] = f(a[name])
        out = _invoke(fn, sig, a, mode)
        return post(out) if post is not None else out
    return call


def _invoke(fn, sig, a, mode):
    """``fn(**a)``, with every parameter numpy takes by position given by position in
    ``"positional"`` mode (numpy's defaults in between), and only those it must otherwise."""
    a = dict(a)
    positional = list(a.pop("*", []))
    if sig is not None:
        last = max((sig.index[k] for k in a if k in sig.index), default=-1)
        upto = last + 1 if mode == "positional" else sig.positional
        for k in range(len(positional), upto):
            name = sig.names[k]
            positional.append(a.pop(name) if name in a else sig.defaults[k])
    return fn(*positional, **a)


def _modes(rule, args):
    sig = rule.signature
    if sig is None or "*" in args:
        return ["positional"]
    if all(sig.index.get(k, sig.positional) < sig.positional for k in args if k != "_pre"):
        return ["positional"]       # a ufunc: numpy takes its operands by position only
    return ["keyword", "positional"]


@pytest.mark.parametrize("key, k", CASES, ids=IDS)
def test_operands_by_keyword_and_by_position_match_finite_differences(key, k):
    rule = RULES[key]
    fn = getattr(*key) if isinstance(key, tuple) else key
    args, post = _examples(key, rule)[k]
    checked = []
    for mode in _modes(rule, args):
        rng = np.random.default_rng(7)
        values = _materialize(args, rng)
        paths = _operand_paths(values)
        ops = [values[n] if i is None else values[n][i] for n, i in paths]
        f = _caller(fn, rule, values, paths, mode, post)
        try:
            f(*ops)
        except TypeError:       # this numpy does not take these arguments so (numpy 1)
            continue
        checked.append(mode)
        np.testing.assert_allclose(np.asarray(_first_array(f(*[nt.constant(o) for o in ops]))),
                                   np.asarray(_first_array(f(*ops))), err_msg=mode)
        check_reverse(f, *ops, rtol=1e-4, atol=1e-6)
        check_forward(f, *ops, rtol=1e-4, atol=1e-6)
    if not checked:
        # the generic example not fitting a rule would leave it unchecked
        assert key in EXAMPLES, f"the generic example does not suit {rule.name}: add EXAMPLES"
        pytest.skip(f"numpy {np.__version__} does not take these arguments")


def _first_array(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def test_every_rule_and_operand_has_an_example():
    missing = []
    for key, fn, rule in _registered():
        covered = set()
        for args, post in _examples(key, rule):
            covered.update(k for k, v in args.items()
                           if isinstance(v, Arr) or (type(v) is list and any(
                               isinstance(x, Arr) for x in v)))
            if "*" in args:
                covered.update(f"argument {i}" for i, v in enumerate(args["*"])
                               if isinstance(v, Arr))
                covered.update(rule.differentiated()[:1] if any(
                    isinstance(v, Arr) for v in args["*"]) else [])
        names = set(rule.differentiated())
        if rule.signature is None and covered:      # numpy 1's C functions: names unknown
            names = set()
        lacking = names - covered
        if lacking:
            missing.append(f"{rule.name}: {sorted(lacking)}")
    assert not missing, ("add EXAMPLES entries passing these differentiated parameters: "
                         + "; ".join(missing))


# --- parameters that are not operands refuse ----------------------------------------------
def _candidates(rule, args):
    """Non-operand parameters and a float array numpy accepts there (plain arrays)."""
    sig = rule.signature
    if sig is None:
        return []
    operands = set(rule.differentiated())
    out = []
    for k, name in enumerate(sig.names):
        if k < sig.positional or name in operands or name == "out":
            continue
        value = args.get(name, sig.defaults[k])
        if value is None and name not in args:
            value = 1.0                 # an optional parameter (np.unwrap's discont=)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float)):
            continue
        out.append((name, np.asarray(float(value))))
    for name in sorted(sig.keyword_only):
        value = args.get(name)
        if name not in operands and isinstance(value, (int, float)) and \
                not isinstance(value, bool):
            out.append((name, np.asarray(float(value))))
    return out


REFUSALS = [(key, k) for key, k in CASES
            if "*" not in _examples(key, RULES[key])[k][0]]


@pytest.mark.parametrize("key, k", REFUSALS, ids=[f"{RULES[key].name}-{k}" for key, k in REFUSALS])
def test_a_tensor_where_no_rule_differentiates_refuses_by_name(key, k):
    rule = RULES[key]
    fn = getattr(*key) if isinstance(key, tuple) else key
    args, post = _examples(key, rule)[k]
    rng = np.random.default_rng(3)
    values = _materialize(args, rng)
    for name, value in _candidates(rule, args):
        value.flags.writeable = False       # as a tensor's value is (np.rot90 writes into k)
        plain = dict(values, **{name: value})
        try:
            expected = fn(**plain)
        except Exception:           # numpy itself does not take a float array there
            continue
        ops = {n: nt.constant(v) if isinstance(v, np.ndarray) and v.dtype.kind in "fc" else v
               for n, v in plain.items()}
        q = ops[name]
        for mode in _modes(rule, args):
            with nt.GradientTape() as tape:
                tape.watch(q)
                y = _first_array(_invoke(fn, rule.signature, ops, mode))
                loss = np.sum(y * 1.0)
            np.testing.assert_allclose(np.asarray(y), np.asarray(_first_array(expected)))
            with pytest.raises(nt.NoGradientRuleError) as info:
                tape.gradient(loss, q)
            assert rule.name in str(info.value) and f"{name}=" in str(info.value), info.value
            with nt.ForwardAccumulator(q, np.ones_like(value)) as acc:
                y = _first_array(_invoke(fn, rule.signature, ops, mode))
            with pytest.raises(nt.NoGradientRuleError) as info:
                acc.jvp(y)
            assert rule.name in str(info.value) and f"{name}=" in str(info.value), info.value


# --- the reported cases -----------------------------------------------------------------------
def _grad(f, x):
    x = nt.constant(np.asarray(x, dtype=float))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


def test_diff_prepend_is_differentiated():
    g = _grad(lambda x: np.sum(np.diff(x, prepend=x[:1] * 3) ** 2), [1.0, 2.5, 4.0])
    np.testing.assert_allclose(g.numpy(), [5.0, 0.0, 3.0])


@pytest.mark.parametrize("f, expected", [
    (lambda x: np.sum(a=x ** 2), [2.0, 5.0]),
    (lambda x: np.mean(a=x ** 2), [1.0, 2.5]),
    (lambda x: np.sum(np.cumsum(a=x)), [2.0, 1.0]),
    (lambda x: np.sum(np.take(a=x, indices=[1, 1])), [0.0, 2.0]),
    (lambda x: np.max(a=x), [0.0, 1.0]),
    (lambda x: np.sum(np.repeat(a=x, repeats=2)), [2.0, 2.0]),
    (lambda x: np.sum(np.tile(A=x, reps=3)), [3.0, 3.0]),
    (lambda x: np.sum(np.broadcast_to(array=x, shape=(2, 2))), [2.0, 2.0]),
    (lambda x: np.sum(np.transpose(a=x) * x), [2.0, 5.0]),
    (lambda x: np.nansum(a=x * x), [2.0, 5.0]),
    (lambda x: x.prod(initial=x[0]), [2 * 2.5, 1.0]),
    (lambda x: np.sum(np.stack(arrays=[x, 2 * x])), [3.0, 3.0]),
    (lambda x: np.sum(np.hstack(tup=[x, 2 * x])), [3.0, 3.0]),
    (lambda x: np.sum(np.vstack(tup=[x, 2 * x])), [3.0, 3.0]),
    (lambda x: np.sum(np.column_stack(tup=[x, 2 * x])), [3.0, 3.0]),
    (lambda x: np.sum(x, where=x > 1.5), [0.0, 1.0]),
    (lambda x: np.sum(np.add.reduce(array=x * x, axis=0)), [2.0, 5.0]),
    (lambda x: np.maximum.reduce(array=x, axis=0), [0.0, 1.0]),
    (lambda x: np.sum(np.linalg.solve(np.diag(x), b=np.ones(2))), [-1.0, -0.16]),
    (lambda x: np.sum(np.linalg.solve(a=np.diag(x), b=x * x)), [1.0, 1.0]),
    (lambda x: np.sum(np.astype(x, np.float64) * x), [2.0, 5.0]) if hasattr(np, "astype")
    else (lambda x: np.sum(x * x), [2.0, 5.0]),
    (lambda x: np.sum(np.sin(x, where=True)), np.cos([1.0, 2.5])),
    (lambda x: np.average(x, returned=True)[0], [0.5, 0.5]),
    (lambda x: np.sum(np.clip(x, [x[1] - 1, 2.0], 3.0)), [0.0, 2.0]),
])
def test_operands_by_keyword_and_plain_numpy_spellings(f, expected):
    np.testing.assert_allclose(_grad(f, [1.0, 2.5]).numpy(), expected)


@pytest.mark.parametrize("f, expected", [
    (lambda x: np.stack(arrays=[x, x]), np.ones((2, 2))),
    (lambda x: np.hstack(tup=[x, x]), np.ones(4)),
    (lambda x: np.dstack(tup=[x, x]), np.ones((1, 2, 2))),
    (lambda x: np.add.reduce(array=np.stack([x, x + 2]), axis=0), [4.0, 4.0]),
    (lambda x: np.fmin.reduce(array=x), 1.0),
    (lambda x: np.sum(x * np.array([1.0, 2.0]), where=x * np.array([1.0, 2.0]) > 1.5), 2.0),
])
def test_plain_numpy_code_runs_on_tensors_without_a_tape(f, expected):
    out = f(nt.constant([1.0, 1.0]))
    np.testing.assert_allclose(np.asarray(out), expected)
    assert isinstance(out, nt.Tensor)


@pytest.mark.parametrize("op", [lambda s: 1j * s, lambda s: 1j + s, lambda s: 1j / s,
                                lambda s: 1j ** s])
def test_a_python_complex_on_the_left_stays_on_the_tape(op):
    x = nt.constant([0.5, 0.2])
    with nt.GradientTape() as tape:
        tape.watch(x)
        s = np.sum(x)
        y = op(s)
        assert isinstance(y, nt.Tensor) and y.dtype == np.complex128
        z = np.imag(np.exp(1j * s))
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), np.cos(0.7) * np.ones(2))
    check_reverse(lambda v: np.real(op(np.sum(v)) * (1 - 2j)), np.array([0.5, 0.2]))


def test_a_refusal_names_the_function_the_parameter_and_the_line():
    x = nt.constant([1.0, 2.0, 4.0])
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = np.var(x, ddof=x[0] * 0)
        z = np.sin(x)
    assert tape.gradient(z, x) is not None        # the refusal waits for a gradient through it
    with pytest.raises(nt.NoGradientRuleError, match=r"np\.var .*ddof= .*test_keyword_operands"):
        tape.gradient(y, x)


def test_a_plain_array_given_as_out_to_numpys_own_code_is_written():
    # np.nanvar(plain, mean=tensor) runs np.subtract(..., out=plain) inside numpy
    if "mean" not in RULES[np.nanvar].signature.keyword_only:
        pytest.skip("numpy 1's nanvar has no mean=")
    m = nt.constant([[0.5]])
    plain = np.array([[1.0, 2.0, np.nan]])
    np.testing.assert_allclose(np.nanvar(plain, axis=1, keepdims=True, mean=m),
                               np.nanvar(plain, axis=1, keepdims=True, mean=np.array([[0.5]])))


def test_a_keyword_numpy_does_not_dispatch_on_warns_instead_of_a_silent_none():
    # np.nan_to_num dispatches on x alone: with a plain x, nan=t goes through
    # np.copyto into a plain array, which the tape cannot follow
    t = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(t)
        y = nt.constant(1.0) * np.nan_to_num(np.array([np.nan, 1.0]), nan=t * 2)
    with pytest.warns(UserWarning, match="np.copyto"):
        assert tape.gradient(y, t) is None


# --- vectorized Jacobians: one batched reverse pass against one pass per row ----------------
def _rows_jacobian(tape, y, xs):
    """The Jacobian row by row: one ``tape.gradient`` per element of ``y``, seeded one-hot."""
    rows = []
    for index in np.ndindex(*y.shape):
        e = np.zeros(y.shape, dtype=y.dtype)
        e[index] = 1
        gs = tape.gradient(y, xs, output_gradients=e,
                           unconnected_gradients=nt.UnconnectedGradients.ZERO)
        rows.append([np.asarray(g) for g in gs])
    return [np.reshape([r[k] for r in rows], y.shape + x.shape) if rows
            else np.zeros(y.shape + x.shape) for k, x in enumerate(xs)]


def _check_batched_jacobian(f, ops):
    """``tape.jacobian`` (batched) equals the per-row Jacobian, or both raise alike."""
    xs = [nt.constant(o) for o in ops]
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = _first_array(f(*xs))
    if not isinstance(y, nt.Tensor) or y.dtype.kind not in "fc":
        return False
    try:
        expected = _rows_jacobian(tape, y, xs)
    except Exception as e:          # e.g. a rule that refuses complex values
        with pytest.raises(type(e)):
            tape.jacobian(y, xs, unconnected_gradients=nt.UnconnectedGradients.ZERO)
        return True
    got = tape.jacobian(y, xs, unconnected_gradients=nt.UnconnectedGradients.ZERO)
    for j, e, x in zip(got, expected, xs):
        assert j.shape == e.shape and j.dtype == x.dtype
        np.testing.assert_allclose(j.numpy(), e, rtol=1e-10, atol=1e-12)
    return True


def _complexified(ops, rng):
    return [o + 1j * (0.05 + 0.3 * rng.permutation(o.ravel()).reshape(o.shape))
            if o.dtype.kind == "f" else o for o in ops]


@pytest.mark.parametrize("key, k", CASES, ids=IDS)
@pytest.mark.parametrize("kind", ["float64", "complex128"])
@pytest.mark.filterwarnings("ignore:Casting complex values")
def test_batched_jacobian_matches_one_pass_per_row(key, k, kind):
    rule = RULES[key]
    fn = getattr(*key) if isinstance(key, tuple) else key
    args, post = _examples(key, rule)[k]
    rng = np.random.default_rng(11)
    values = _materialize(args, rng)
    paths = _operand_paths(values)
    ops = [values[n] if i is None else values[n][i] for n, i in paths]
    if kind == "complex128":
        ops = _complexified(ops, rng)
    f = _caller(fn, rule, values, paths, "positional", post)
    try:
        f(*ops)
    except Exception:
        pytest.skip(f"numpy does not take these {kind} arguments")
    if not _check_batched_jacobian(f, ops):
        pytest.skip("no float output")


BINARY_UFUNCS = [key for key, fn, rule in _registered()
                 if isinstance(fn, np.ufunc) and fn.nin == 2 and rule.nargs == 2]


@pytest.mark.parametrize("key", BINARY_UFUNCS, ids=[RULES[k].name for k in BINARY_UFUNCS])
@pytest.mark.parametrize("shapes", [((3, 1), (4,)), ((), (2, 3)), ((2, 1, 3), (4, 1))],
                         ids=str)
def test_batched_jacobian_of_broadcasting_ufuncs(key, shapes):
    rng = np.random.default_rng(5)
    ops = [A(*s).make(rng) + 0.5 for s in shapes]
    for values in (ops, _complexified(ops, rng)):
        try:
            key(*values)
        except Exception:
            continue                # numpy refuses (ldexp's float exponent, complex arctan2)
        _check_batched_jacobian(key, values)


@pytest.mark.parametrize("f, shapes", [
    (lambda x, y: np.sum(x[:, None] * y, axis=0), [(3,), (3, 4)]),
    (lambda x, y: np.mean(np.tanh(x @ y), axis=-1, keepdims=True), [(2, 3, 4), (4, 5)]),
    (lambda x, y: x @ y, [(4,), (2, 4, 3)]),
    (lambda x, y: x @ y, [(2, 4, 3), (3,)]),
    (lambda x, y: x @ y + x[0] * y[::-1], [(3,), (3,)]),
    (lambda x, y: x[np.array([0, 0, 2])] * y[1, 1:], [(3,), (3, 4)]),
    (lambda x, y: x[..., None, 1:] ** 2 + np.sum(y), [(3, 4), (2,)]),
    (lambda x, y: np.concatenate([np.sort(x), np.cumsum(y)]) * np.floor(3 * x[0]), [(3,), (4,)]),
    (lambda x, y: np.stack(np.linalg.eigh(x @ x.T)[1:] + (y,)), [(3, 3), (3, 3)]),
    (lambda x, y: np.transpose(x, (-1, 0, 1)) @ y.T + x.T[:, :1, 1:2], [(2, 3, 4), (5, 3)]),
    (lambda x, y: np.reshape(x, (4, 3)) * y.reshape(-1)[:3] + x.reshape((3, 4), order="F").T,
     [(3, 4), (3,)]),
    (lambda x, y: np.sum((x + 1j * y[:, None]) ** 2, axis=0), [(3, 2), (3,)]),
], ids=["sum-axis", "mean-matmul", "vec@batch", "batch@vec", "vec@vec", "fancy-index",
        "basic-index", "sort-cumsum-floor", "eigh", "transpose", "reshape", "real-to-complex"])
def test_batched_jacobian_through_structural_and_fallback_ops(f, shapes):
    rng = np.random.default_rng(9)
    ops = [A(*s, kind="normal").make(rng) for s in shapes]
    assert _check_batched_jacobian(f, ops)
    complex_ops = _complexified(ops, rng)
    try:
        f(*complex_ops)
    except TypeError:
        return                      # numpy refuses complex values here (floor, sort order)
    assert _check_batched_jacobian(f, complex_ops)


def test_batched_jacobian_in_small_chunks_matches(monkeypatch):
    import nbtape.tape.batched
    rng = np.random.default_rng(4)
    ops = [A(4, 3, kind="normal").make(rng), A(3, kind="normal").make(rng)]

    def f(x, y):
        return np.tanh(x @ y) * np.sum(x, axis=1)

    assert _check_batched_jacobian(f, ops)
    monkeypatch.setattr(nbtape.tape.batched, "CHUNK_ELEMENTS", 7)   # one row of 4 at a time
    assert _check_batched_jacobian(f, ops)
    x = nt.constant(ops[0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.tanh(x * 2.0)
    np.testing.assert_allclose(tape.batch_jacobian(y, x).numpy(),
                               np.stack([np.diag(r) for r in 2 / np.cosh(2 * ops[0]) ** 2]))
