"""Dask arrays on the tape: recording and both passes stay lazy, run on a cluster, and
give numpy's numbers (issue 17).

``python tests/test_dask.py --table`` measures every registered rule on chunked Dask
arrays and prints the table that docs/backends.md holds.
"""
import collections
import sys
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import nbtape as nt                                         # noqa: E402
from gradcheck import numeric_grad                          # noqa: E402
from nbtape.diagnostics.errors import NoGradientRuleError               # noqa: E402


class Materialized(AssertionError):
    pass


def _forbid(*args, **kwargs):
    raise Materialized("a Dask array was computed")


def lazy():
    """Inside: any compute of a Dask array (np.asarray, .compute(), a function Dask lacks
    falling back to numpy) raises, so a rule that materializes fails the test."""
    return dask.config.set(scheduler=_forbid)


def chunked(x, parts=2, axes=None):
    """``x`` as a Dask array split in ``parts`` along every axis of length > 1 (along
    ``axes`` only, when given: "first" or "last")."""
    x = np.asarray(x)
    split = {None: range(x.ndim), "first": range(min(x.ndim, 1)),
             "last": range(x.ndim - 1, x.ndim)}[axes]
    return da.from_array(x, chunks=tuple(max(1, -(-n // parts)) if i in split else n
                                         for i, n in enumerate(x.shape)))


# the layouts the backends table is re-checked on: halves along every axis (what it was
# measured on), along the first axis only, along the last axis only
LAYOUTS = {"halves": {}, "first": {"axes": "first"}, "last": {"axes": "last"}}


def is_dask(t):
    return isinstance(t.data if isinstance(t, (nt.Tensor, nt.Variable)) else t, da.Array)


# --- the cluster -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    cl = distributed.Client(cluster, set_as_default=False)   # other tests keep theirs
    try:
        yield cl
    finally:
        cl.close()
        cluster.close()


def _logistic_gradient(X, y, w):
    with nt.GradientTape() as tape:
        p = 1.0 / (1.0 + np.exp(-(nt.constant(X) @ w)))
        loss = -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
    return loss, tape.gradient(loss, w)


def test_logistic_regression_runs_lazily_on_the_cluster(client):
    rng = np.random.default_rng(17)
    Xn = rng.standard_normal((40_000, 20))
    yn = (Xn @ rng.standard_normal(20) + rng.standard_normal(40_000) > 0).astype(float)
    X = da.from_array(Xn, chunks=(5_000, 20))
    y = da.from_array(yn, chunks=5_000)
    w = nt.Variable(rng.standard_normal(20) * 0.1)
    with lazy():
        loss, g = _logistic_gradient(X, y, w)
    assert is_dask(loss) and is_dask(g) and g.shape == (20,)
    tasks_before = _tasks_run(client)
    got = client.compute(g.data).result()
    assert _tasks_run(client) > tasks_before + 8, "the gradient did not run on the workers"
    loss_n, g_n = _logistic_gradient(Xn, yn, w)
    np.testing.assert_allclose(got, g_n.numpy(), rtol=1e-10)
    np.testing.assert_allclose(loss.numpy(), loss_n.numpy(), rtol=1e-12)


def _tasks_run(client):
    """Tasks the workers have finished so far (their task logs, summed)."""
    logs = client.run(lambda dask_worker: sum(
        1 for t in dask_worker.state.log if len(t) > 2 and t[2] == "memory"))
    return sum(logs.values())


def test_the_cluster_has_two_worker_processes(client):
    info = client.scheduler_info()["workers"]
    assert len(info) == 2
    assert all(a.startswith("tcp://127.0.0.1") for a in info)


def _graph_sizes(ops, chunks, op):
    """Tasks in the value's and in the gradient's graph after ``ops`` recorded
    elementwise ops on a 40,000 x 20 array in ``chunks`` chunks."""
    x = nt.constant(da.ones((40_000, 20), chunks=(40_000 // chunks, 20)))
    with lazy():
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(ops):
                y = op(y)
            loss = np.sum(y)
        g = tape.gradient(loss, x)
    return len(y.data.__dask_graph__()), len(g.data.__dask_graph__())


@pytest.mark.parametrize("op, recorded", [(np.tanh, 1), (lambda y: y * 0.9, 1),
                                          (lambda y: np.exp(-y) + y, 3)])
def test_the_task_graph_grows_linearly_with_the_tape(op, recorded):
    """The README's numbers: each recorded op adds a fixed number of tasks (at most a few
    per chunk) to the value's graph and to the gradient's, so the graph grows linearly
    with the tape (Dask fuses chains of elementwise tasks, so often fewer)."""
    for chunks in (4, 8):
        sizes = [_graph_sizes(n, chunks, op) for n in (10, 20, 30)]
        (v1, g1), (v2, g2), (v3, g3) = sizes
        assert v3 - v2 == v2 - v1 and g3 - g2 == g2 - g1      # linear
        assert (v3 - v2) / (10 * recorded) == chunks     # one task per chunk per op
        assert 0 < (g3 - g2) / (10 * recorded) <= 4 * chunks


# --- gradients on chunked arrays against finite differences ------------------------------
def _check_lazy(f, *xs, rtol=1e-6, atol=1e-8, layout=None, weight=None):
    """Reverse and forward mode of ``sum(f(*xs) * w)`` on chunked Dask inputs: lazy while
    recorded and differentiated, Dask-typed, equal to central differences.  (Give a
    number as ``weight`` when ``f`` picks with a mask: Dask does not know how many.)"""
    layout = layout or {}
    rng = np.random.default_rng(len(xs))
    w = weight if weight is not None else rng.standard_normal(np.shape(f(*xs)))
    vs = [rng.standard_normal(np.shape(x)) for x in xs]
    ds = [nt.constant(chunked(x, **layout)) for x in xs]
    with lazy():
        with nt.GradientTape() as tape:
            tape.watch(ds)
            y = np.sum(f(*ds) * w)
        grads = tape.gradient(y, ds)
        with nt.ForwardAccumulator(ds, [chunked(v, **layout) for v in vs]) as acc:
            y2 = np.sum(f(*ds) * w)
        jvp = acc.jvp(y2)
    assert all(is_dask(g) for g in grads) and is_dask(jvp) and is_dask(y)

    def h(*a):
        return np.sum(f(*a) * w)
    for k, (x, g) in enumerate(zip(xs, grads)):
        np.testing.assert_allclose(g.numpy(), numeric_grad(h, list(xs), k, 1e-6),
                                   rtol=rtol, atol=atol)
    fd = sum(np.sum(numeric_grad(h, list(xs), k, 1e-6) * v) for k, v in enumerate(vs))
    np.testing.assert_allclose(jvp.numpy(), fd, rtol=1e-5, atol=1e-7)


def test_broadcasting_over_chunks():
    rng = np.random.default_rng(1)
    _check_lazy(lambda a, b: a * b + np.sin(a - b), rng.standard_normal((6, 5)),
                rng.standard_normal((1, 5)))
    _check_lazy(lambda a, b: a / (b * b + 1.0), rng.standard_normal((4, 6)),
                rng.standard_normal(6))


@pytest.mark.parametrize("axis, keepdims", [(0, False), (1, True), (None, False), ((0, 1), True)])
def test_reductions_over_chunked_axes(axis, keepdims):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 4))
    _check_lazy(lambda a: np.sum(a ** 2, axis=axis, keepdims=keepdims), x)
    _check_lazy(lambda a: np.mean(np.tanh(a), axis=axis, keepdims=keepdims), x)
    _check_lazy(lambda a: np.max(a, axis=axis, keepdims=keepdims), x)


def test_matmul_over_chunks():
    rng = np.random.default_rng(3)
    _check_lazy(np.matmul, rng.standard_normal((6, 4)), rng.standard_normal((4, 3)))
    _check_lazy(lambda a, b: a @ b, rng.standard_normal((5, 4)), rng.standard_normal(4))
    _check_lazy(lambda a: a.T @ a, rng.standard_normal((6, 3)))


def test_indexing_over_chunks():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5))
    _check_lazy(lambda a: a[1:5, ::2], x)
    _check_lazy(lambda a: a[[0, 3, 3, 5]], x)     # a repeated index accumulates
    _check_lazy(lambda a: a[1:, 2] * a[4], x)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_dask_index_array_over_chunked_axes(layout):
    """Repeated positions in a Dask index array add up, lazily (numpy and repeated fancy
    indices, np.take, np.tile and np.repeat: the backends table)."""
    x = np.random.default_rng(6).standard_normal((6, 5))
    _check_lazy(lambda a: a[da.from_array(np.array([0, 0, 3]), chunks=2)], x,
                layout=LAYOUTS[layout])


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("pick", [
    lambda a: np.sin(a[a > 0]),                      # a Dask boolean mask of x's shape
    lambda a: a[np.sum(a, axis=1) > 0] ** 2,         # ... of its rows
    lambda a: np.exp(a[:, a[0] > 0]),                # ... of its columns
    lambda a: a[MASK] * 3.0,
    lambda a: np.extract(a > 0.5, a),
    lambda a: np.compress(a[:, 1] > 0, a, axis=0),
], ids=["mask", "row-mask", "column-mask", "numpy-mask", "extract", "compress"])
def test_masks_over_chunked_axes(pick, layout):
    """A mask's pick has lengths Dask does not know until it computes: the gradient adds
    the adjoint back block by block, lazily."""
    x = np.random.default_rng(7).standard_normal((6, 5))
    _check_lazy(pick, x, layout=LAYOUTS[layout], weight=1.7)


MASK = np.random.default_rng(8).standard_normal((6, 5)) > 0


def test_take_without_an_axis_on_dask_is_refused_by_name():
    """Dask's np.take takes along axis 0 when no axis is given (numpy: the flattened
    array), so its value is not numpy's: the gradient says so instead of a raw ValueError."""
    x = nt.constant(chunked(np.ones((6, 5))))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.take(x, [0, 0, 2]))
    with pytest.raises(NoGradientRuleError, match=r"np\.take gave a value of shape "
                                                  r"\(3, 5\).*numpy gives shape \(3,\).*axis="):
        tape.gradient(y, x)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", ["sigmoid", "softplus", "softmax", "log_softmax", "logsumexp"])
def test_activations_stay_lazy(name, layout):
    x = np.random.default_rng(9).standard_normal((6, 5)) * 3
    _check_lazy(getattr(nt.nn, name), x, layout=LAYOUTS[layout])


def test_recompute_grad_stays_lazy():
    block = nt.recompute_grad(lambda a, b: np.tanh(a @ b) * a[:, :1])
    rng = np.random.default_rng(10)
    _check_lazy(block, rng.standard_normal((6, 4)), rng.standard_normal((4, 3)))
    _check_lazy(nt.recompute_grad(lambda a: a), rng.standard_normal(5))   # passed through


def test_numpy_weights_with_dask_data():
    rng = np.random.default_rng(5)
    Xn = rng.standard_normal((30, 4))
    w = nt.Variable(rng.standard_normal((4, 2)))
    b = nt.Variable(np.zeros(2))
    with lazy():
        with nt.GradientTape() as tape:
            loss = np.sum(np.tanh(nt.constant(chunked(Xn, 3)) @ w + b) ** 2)
        gw, gb = tape.gradient(loss, [w, b])
    assert is_dask(gw) and is_dask(gb)
    with nt.GradientTape() as tape:
        loss_n = np.sum(np.tanh(nt.constant(Xn) @ w + b) ** 2)
    gw_n, gb_n = tape.gradient(loss_n, [w, b])
    np.testing.assert_allclose(gw.numpy(), gw_n.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), gb_n.numpy(), rtol=1e-12)
    # a bare Dask array on the left hands the op to the tensor (Dask defers to it)
    with lazy():
        with nt.GradientTape() as tape:
            loss2 = np.sum(chunked(Xn, 3) @ w)
        assert is_dask(loss2) and is_dask(tape.gradient(loss2, w))
    # a numpy variable stays numpy: the step computes the Dask gradient into it
    w.assign_sub(0.1 * gw)
    assert type(w.data) is np.ndarray


# --- the tensor keeps the array ------------------------------------------------------------
def test_tensor_and_variable_keep_the_dask_array():
    d = chunked(np.arange(6.0).reshape(2, 3))
    with lazy():
        t, v = nt.constant(d), nt.Variable(d, name="d")
        assert t.data is d and v.data is d
        assert t.shape == (2, 3) and t.dtype == np.float64 and t.size == 6 and v.ndim == 2
        assert is_dask(nt.constant(d, dtype="float32")) and \
            nt.constant(d, dtype="float32").dtype == np.float32
        v.assign_add(1.0)
        assert is_dask(v)
        v.assign(np.full((2, 3), 7.0))      # a Dask variable stays Dask
        assert is_dask(v)
        v.assign_sub(nt.constant(np.full((2, 3), 6.0)))
    assert type(t.numpy()) is np.ndarray
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(v.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(t), t.numpy())     # explicit: computes


def test_showing_a_dask_tensor_does_not_compute_it():
    d = chunked(np.ones((4, 2)))
    with lazy():
        t, v = np.sin(nt.constant(d)), nt.Variable(d, name="d")
        assert "dask.array<" in repr(t) and "shape=(4, 2)" in repr(t)
        assert "dask.array<" in repr(v) and "dask.array&lt;" in t._repr_html_()


def test_unconnected_zero_and_output_gradients_stay_lazy():
    d = nt.constant(chunked(np.ones((4, 2))))
    e = nt.constant(chunked(np.ones(3)))
    with lazy():
        with nt.GradientTape(persistent=True) as tape:
            tape.watch([d, e])
            y = np.sin(d)
        gd, ge = tape.gradient(y, [d, e], output_gradients=chunked(np.full((4, 2), 2.0)),
                               unconnected_gradients="zero")
        assert is_dask(gd) and is_dask(ge)
    np.testing.assert_allclose(gd.numpy(), 2 * np.cos(1.0) * np.ones((4, 2)))
    np.testing.assert_array_equal(ge.numpy(), np.zeros(3))


def test_a_plain_dask_operand_is_kept_lazily():
    """The snapshot of a plain (untaped) Dask operand is a lazy copy, not a compute."""
    x = nt.constant(np.ones(4))
    d = chunked(np.arange(4.0))
    with lazy():
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(x * d)
        d[0] = 100.0            # rebinds the Dask array in place: the tape kept the old one
        g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), np.arange(4.0))


def test_custom_gradients_and_stop_gradient_stay_lazy():
    @nt.custom_gradient
    def clipped_identity(x):
        return x, lambda dy: np.clip(dy, -1.0, 1.0)
    x = nt.constant(chunked(np.arange(4.0)))
    with lazy():
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(clipped_identity(x) * 3.0 + nt.stop_gradient(x) * x)
        g = tape.gradient(y, x)
    assert is_dask(g)
    np.testing.assert_array_equal(g.numpy(), np.ones(4) + np.arange(4.0))


# --- no silent materialization -------------------------------------------------------------
def test_a_rule_that_materializes_fails_the_lazy_guard():
    """The guard can fail: a VJP that converts its Dask adjoint to numpy is caught."""
    from nbtape.core.registry import RULES
    rule = RULES[np.sin]
    saved = rule.vjps
    rule.vjps = (lambda g, ans, x: np.asarray(g) * np.cos(np.asarray(x)),)
    try:
        x = nt.constant(chunked(np.ones(4)))
        with lazy(), pytest.raises(Materialized):
            with nt.GradientTape() as tape:
                tape.watch(x)
                y = np.sin(x)
            tape.gradient(y, x)
    finally:
        rule.vjps = saved


def test_a_function_dask_lacks_is_named_in_the_error(monkeypatch):
    """Where a rule needs a function Dask lacks (np.split here), the error names it and
    says how out, instead of Dask computing everything in memory."""
    from nbtape.core.registry import RULES
    monkeypatch.setattr(RULES[np.sin], "vjps",
                        (lambda g, ans, x: np.concatenate(np.split(g * np.cos(x), 2)),))
    x = nt.constant(chunked(np.ones(4)))
    with lazy():
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.sin(x)
        with pytest.raises(NoGradientRuleError, match=r"gradient of np\.sin needs "
                           r"numpy\.split, which Dask does not implement.*\.numpy\(\)"):
            tape.gradient(y, x)


def test_a_function_dask_lacks_in_forward_mode_is_named_too(monkeypatch):
    from nbtape.core.registry import RULES
    monkeypatch.setattr(RULES[np.sin], "jvps",
                        (lambda t, ans, x: np.concatenate(np.split(t * np.cos(x), 2)),))
    x = nt.constant(chunked(np.ones(4)))
    with lazy():
        with nt.ForwardAccumulator(x, chunked(np.ones(4))) as acc:
            y = np.sin(x)
        with pytest.raises(NoGradientRuleError, match=r"forward-mode gradient of np\.sin "
                                                      r"needs numpy\.split"):
            acc.jvp(y)


# --- mixing libraries that cannot mix ----------------------------------------------------------
class Strict(np.lib.mixins.NDArrayOperatorsMixin):
    """A minimal NEP 18 array that, like CuPy, refuses numpy arrays as operands."""

    def __init__(self, a):
        self.a = np.asarray(a)

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(isinstance(i, np.ndarray) for i in inputs):
            raise TypeError(f"Unsupported type {np.ndarray}")
        return Strict(getattr(ufunc, method)(*[i.a if isinstance(i, Strict) else i
                                                for i in inputs], **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented


Strict.__module__ = "strictarray"


def test_libraries_that_cannot_mix_give_a_clear_error():
    s = nt.constant(Strict([1.0, 2.0]))
    assert type(s.data) is Strict
    with pytest.raises(TypeError, match=r"different libraries \(strictarray and numpy\).*"
                                        r"t\.numpy\(\)"):
        s * nt.Variable(np.ones(2))


# --- which families work: every registered rule on chunked arrays ----------------------------
def _programs(maker, n=8, seed=20261123):
    """Up to ``n`` example calls (the random programs' makers: operands positional or by
    keyword, options drawn from numpy's signature)."""
    from gradcheck.programs import Builder, Chooser, Reject
    for attempt in range(200):
        b = Builder(Chooser(seed=[seed, attempt]))
        try:
            b.add(maker(b))
        except Reject:
            continue
        prog = b.program()
        if prog.targets:
            yield prog
            n -= 1
            if not n:
                return


def _target(prog, env):
    ys = [np.sum(np.real(env[i])) for i in prog.targets
          if isinstance(env[i], nt.Tensor) and env[i].dtype.kind in "fc"]
    return sum(ys[1:], ys[0]) if ys else None


def _value(prog, xs):
    return _target(prog, prog.run([nt.constant(x) for x in xs]))


def _reverse(prog, xs):
    ts = [nt.constant(x) for x in xs]
    with nt.GradientTape() as tape:
        tape.watch(ts)
        y = _target(prog, prog.run(ts))
    return tape.gradient(y, ts) if y is not None else None


def _forward(prog, xs, vs):
    ts = [nt.constant(x) for x in xs]
    with nt.ForwardAccumulator(ts, vs) as acc:
        y = _target(prog, prog.run(ts))
    return acc.jvp(y) if y is not None else None


def _why(e):
    if isinstance(e, Materialized):
        return "computes in memory"
    msg = str(e)
    if "needs numpy." in msg:
        return "needs " + msg.split("needs ")[1].split(",")[0]
    return type(e).__name__


def dask_verdict(maker, layout=LAYOUTS["halves"]):
    """(value, reverse, forward) on chunked Dask inputs: "lazy" (stays a Dask graph and
    equals numpy) or why not.  Judged on the first example whose value Dask computes
    lazily (Dask's own functions take fewer keywords than numpy's); without one, the
    first example's."""
    first = None
    for prog in _programs(maker):
        verdict = _verdict(prog, layout)
        if verdict[0] == "lazy":
            return verdict
        first = first or verdict
    return first or ("no example",) * 3


def _verdict(prog, layout):
    rng = np.random.default_rng(0)
    xs = prog.inputs
    vs = [rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype) for x in xs]
    ds, dvs = [chunked(x, **layout) for x in xs], [chunked(v, **layout) for v in vs]
    runs = [(_value, (prog, xs), (prog, ds)), (_reverse, (prog, xs), (prog, ds)),
            (_forward, (prog, xs, vs), (prog, ds, dvs))]
    out = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for run, plain, lazy_args in runs:
            try:
                ref = run(*plain)
            except Exception:
                out.append("numpy refuses")
                continue
            try:
                with lazy():
                    got = run(*lazy_args)
            except Exception as e:
                out.append(_why(e))
                continue
            out.append(_same(ref, got))
    return tuple(out)


def _same(r, g):
    rs, gs = (list(r), list(g)) if isinstance(r, list) else ([r], [g])
    for a, b in zip(rs, gs):
        if (a is None) != (b is None):
            return "wrong"
        if a is None:
            continue
        if not is_dask(b):
            return "numpy result"
        if not np.allclose(b.numpy(), a.numpy(), rtol=1e-9, atol=1e-12, equal_nan=True):
            return "wrong"
    return "lazy"


def measure():
    from gradcheck.program_table import makers
    return {name: dask_verdict(maker) for name, maker in sorted(makers().items())}


def table_rows(text):
    """{name: (value, reverse, forward)} from docs/backends.md's table."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] and cells[0] not in ("function", "---"):
            rows[cells[0]] = tuple(cells[1:])
    return rows


# Dask itself refuses these functions' values on some layouts (tensorsolve: chunks
# along one axis only), so there they have nothing for nbtape to keep lazy
DASK_REFUSES_SOME_LAYOUTS = {"np.linalg.tensorsolve"}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_backends_table_is_measured(layout):
    """Every rule docs/backends.md says works lazily on Dask still does, on each layout of
    chunks (split along every axis, along the first only, along the last only), and every
    rule with a gradient has a row (a new rule shows up here: rerun with --table)."""
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "docs", "backends.md")
    with open(path) as f:
        rows = table_rows(f.read())
    from gradcheck.program_table import makers
    table = makers()
    assert set(table) <= set(rows), sorted(set(table) - set(rows))
    claimed = [n for n, r in rows.items() if r == ("lazy", "lazy", "lazy") and n in table]
    assert len(claimed) > 50
    broken = {n: dask_verdict(table[n], LAYOUTS[layout]) for n in claimed}
    broken = {n: v for n, v in broken.items() if v != ("lazy", "lazy", "lazy")
              and not (layout != "halves" and n in DASK_REFUSES_SOME_LAYOUTS
                       and v[0] != "lazy")}
    assert not broken, broken


def print_table(results, out=sys.stdout):
    counts = collections.Counter(v == ("lazy",) * 3 for v in results.values())
    out.write(f"{counts[True]} of {len(results)} rules stay lazy in all three modes.\n\n")
    out.write("| function | value | reverse | forward |\n|---|---|---|---|\n")
    for name, v in results.items():
        if v[0] != "lazy":          # Dask cannot run the function itself: nothing to judge
            v = (v[0], "-", "-")
        out.write(f"| `{name}` | {' | '.join(v)} |\n")


if __name__ == "__main__" and "--table" in sys.argv:
    import os
    sys.path.insert(0, os.path.dirname(__file__))
    print_table(measure())
