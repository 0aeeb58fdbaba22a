"""``nt.function``: a traced step replays eager's numpy calls, bit for bit, or is refused.

Every replay here runs at inputs other than the traced ones (a replay at the traced
inputs could not tell a frozen value from a replayed one), and is compared with an
eager run at those inputs with ``np.array_equal``: the same numpy calls in the same
order give the same bits.
"""
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import NUMPY
from gradcheck.programs import Chooser, build
from gradcheck.traced import compare, same
from nbtape.transforms.trace import TracingError

# rules whose own code looks at their operands' values in Python (a singular-matrix or
# a has-a-zero check picks a formula, a quantile's weights pick sorted positions): a trace
# through them is refused, saying so, never replayed with what they saw at trace time
REFUSED = {"np.linalg.det", "np.linalg.cond", "np.linalg.qr", "np.linalg.slogdet",
           "np.cumprod", "np.cumulative_prod", "np.nancumprod", "np.multiply.accumulate",
           "np.interp", "np.median", "np.nanmedian", "np.quantile", "np.nanquantile",
           "np.percentile", "np.nanpercentile"}

# the random programs' table is written for numpy 2's functions (linalg.vector_norm...)
if NUMPY >= "2.0.0":
    from gradcheck.program_table import makers
    _TABLE = makers()
else:
    _TABLE = {}


def _example(name):
    """A one-call program of the registry entry ``name`` (its example)."""
    k = sorted(_TABLE).index(name)
    for s in range(8):
        prog = build(Chooser(seed=[k, s]), {name: _TABLE[name]}, max_calls=1)
        if prog is not None:
            return prog
    return None


@pytest.mark.parametrize("name", sorted(_TABLE) or [pytest.param(
    None, marks=pytest.mark.skip(reason="the program table needs numpy 2"))])
def test_every_rules_example_replays_eagers_bits_in_both_modes(name):
    prog = _example(name)
    if prog is None:
        pytest.skip("the maker made no program with a tensor operand")
    outcome = compare(prog)
    for mode, o in outcome.items():
        if isinstance(o, TracingError):
            assert name in REFUSED, f"{mode}: {o}"
            assert "nbtape's own" in str(o) and "outside the traced function" in str(o)
        else:
            assert o in ("ok", "eager fails"), (mode, o, prog.source())


# --- training steps: layers, losses, optimizers -------------------------------------------
def _train(traced, dtype, make_opt, steps=4, loss="sparse"):
    model = nt.Sequential([nt.layers.Dense(8, activation="relu", seed=1, dtype=dtype),
                           nt.layers.Dense(3, seed=2, dtype=dtype)])
    opt = make_opt()

    def step(x, y):
        with nt.GradientTape() as tape:
            out = model(x)
            if loss == "sparse":
                value = np.mean(nt.losses.sparse_categorical_crossentropy(y, out, from_logits=True))
            else:
                value = np.mean(nt.losses.mean_squared_error(nt.nn.one_hot(y, 3, dtype), out))
        grads = tape.gradient(value, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return value

    f = nt.function(step) if traced else step
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(steps):
        x = rng.normal(size=(6, 5)).astype(dtype)
        y = rng.integers(0, 3, size=6)
        seen.append(f(x, y))
    seen += list(model.trainable_variables) + list(opt.variables)
    return seen, f


OPTIMIZERS = {
    "sgd": lambda: nt.optimizers.SGD(0.1),
    "momentum": lambda: nt.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: nt.optimizers.Adam(0.01, amsgrad=True),
    "rmsprop": lambda: nt.optimizers.RMSprop(0.01, centered=True, momentum=0.5),
    "schedule": lambda: nt.optimizers.SGD(lambda step: 0.1 / (1.0 + step)),
    "clipped": lambda: nt.optimizers.Adam(0.01, global_clipnorm=0.5),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_a_training_step_replays_eager_training_bit_for_bit(dtype, opt):
    if opt == "schedule" and dtype == "float32":
        pytest.skip("a traced schedule's rate is a float64 tensor (eager's is a Python float)")
    eager, _ = _train(False, dtype, OPTIMIZERS[opt])
    traced, f = _train(True, dtype, OPTIMIZERS[opt])
    assert all(same(a, b) for a, b in zip(eager, traced))
    # the first call built the model's weights (random initial values): it ran eagerly,
    # the second traced, the rest replayed
    assert f.trace_count == 1


def test_a_mean_squared_error_step_with_one_hot_labels():
    eager, _ = _train(False, "float64", OPTIMIZERS["sgd"], loss="mse")
    traced, _ = _train(True, "float64", OPTIMIZERS["sgd"], loss="mse")
    assert all(same(a, b) for a, b in zip(eager, traced))


def test_a_changed_learning_rate_traces_again():
    w = nt.Variable([1.0, 2.0])
    opt = nt.optimizers.SGD(0.1)

    @nt.function
    def step():
        with nt.GradientTape() as tape:
            loss = np.sum(w * w)
        opt.apply_gradients([(tape.gradient(loss, w), w)])

    step()
    step()
    opt.learning_rate = 0.5
    step()
    assert step.trace_count == 2
    np.testing.assert_allclose(w.numpy(), np.array([1.0, 2.0]) * 0.8 * 0.8 * 0.0)


# --- everything the engine offers, inside -------------------------------------------------
def _both(fn, *calls):
    """``fn``'s results eagerly and through nt.function, for each argument tuple."""
    f = nt.function(fn)
    traced = [f(*args) for args in calls]
    eager = [fn(*[nt.constant(a) for a in args]) for args in calls]
    return eager, traced, f


def _all_same(eager, traced):
    from nbtape.core.structure import flatten
    a, b = flatten(eager), flatten(traced)
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def test_nested_tapes_give_second_derivatives():
    def f(x):
        with nt.GradientTape() as outer:
            outer.watch(x)
            with nt.GradientTape() as inner:
                inner.watch(x)
                y = np.sum(np.sin(x) * x ** 3)
            g = inner.gradient(y, x)
            s = np.sum(g * g)
        return y, g, outer.gradient(s, x)

    eager, traced, _ = _both(f, (np.array([0.5, 1.0]),), (np.array([0.3, -2.0]),))
    assert _all_same(eager, traced)


def test_jacobian_and_batch_jacobian():
    w = nt.Variable(np.arange(6.0).reshape(2, 3) / 7)

    def f(x):
        with nt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = np.tanh(x @ w)
        return tape.jacobian(y, x), tape.batch_jacobian(y, x), tape.jacobian(y, w)

    rng = np.random.default_rng(1)
    eager, traced, _ = _both(f, (rng.normal(size=(4, 2)),), (rng.normal(size=(4, 2)),))
    assert _all_same(eager, traced)


def test_forward_mode_and_forward_over_reverse():
    def f(x, v):
        with nt.ForwardAccumulator(x, v) as acc:
            with nt.GradientTape() as tape:
                tape.watch(x)
                y = np.sum(np.exp(x) * x)
            g = tape.gradient(y, x)
        return y, acc.jvp(y), acc.jvp(g)

    eager, traced, _ = _both(f, (np.array([0.1, 0.2]), np.array([1.0, 0.0])),
                             (np.array([0.7, -0.2]), np.array([0.0, 1.0])))
    assert _all_same(eager, traced)


def test_custom_gradient_and_recompute_grad():
    @nt.custom_gradient
    def clipped_identity(x):
        def grad(g):
            return np.clip(g, -0.5, 0.5)
        return x * 1.0, grad

    block = nt.recompute_grad(lambda x: np.tanh(x) * np.sin(x))

    def f(x):
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(block(clipped_identity(x) * 3.0))
        return y, tape.gradient(y, x)

    eager, traced, _ = _both(f, (np.array([0.1, 2.0]),), (np.array([-1.0, 0.4]),))
    assert _all_same(eager, traced)


def test_grad_and_value_and_grad():
    def f(x):
        return nt.value_and_grad(lambda a: np.sum(np.cos(a) ** 2))(x)

    eager, traced, _ = _both(f, (np.array([0.1, 2.0]),), (np.array([-1.0, 0.4]),))
    assert _all_same(eager, traced)


def test_comparisons_and_argmax_are_replayed_not_frozen():
    def f(x):
        return np.where(x > 0, x, 0.1 * x), np.argmax(x), np.maximum(x, 0.0)

    eager, traced, _ = _both(f, (np.array([1.0, -2.0, 3.0]),), (np.array([-1.0, 5.0, -3.0]),))
    assert _all_same(eager, traced)


def test_iterating_a_tensor_replays_its_rows():
    def f(x):
        return sum(row * k for k, row in enumerate(x))

    eager, traced, _ = _both(f, (np.ones((3, 2)),), (np.arange(6.0).reshape(3, 2),))
    assert _all_same(eager, traced)


# --- the signature ----------------------------------------------------------------------------
def test_the_signature_shapes_dtypes_python_values_and_variables():
    calls = []

    @nt.function
    def f(x, scale, v):
        calls.append(scale)          # a Python side effect: at trace time only
        return x * scale + v

    v, u = nt.Variable(1.0), nt.Variable(2.0)
    assert float(f(np.array(1.0), 2.0, v)) == 3.0
    assert float(f(np.array(5.0), 2.0, v)) == 11.0           # replayed
    v.assign(10.0)
    assert float(f(np.array(5.0), 2.0, v)) == 20.0           # read at replay
    assert f.trace_count == 1 and calls == [2.0]
    f(np.array(5.0), 3.0, v)                                 # a new Python value
    f(np.ones(2), 3.0, v)                                    # a new shape
    f(np.array(5.0, dtype=np.float32), 3.0, v)               # a new dtype
    with pytest.warns(UserWarning, match="traced 5 times"):
        f(np.array(5.0), 3.0, u)                             # another variable
    assert f.trace_count == 5 and f.experimental_get_tracing_count() == 5
    assert calls == [2.0, 3.0, 3.0, 3.0, 3.0]


def test_python_side_effects_run_at_trace_time_only():
    printed = []

    @nt.function
    def f(x):
        printed.append("traced")
        return np.sin(x)

    for k in range(4):
        f(np.array(float(k)))
    assert printed == ["traced"]


def test_many_retraces_warn_once_naming_the_argument():
    @nt.function
    def f(x, n):
        return x * n

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(8):
            f(np.array(1.0), n)
    msgs = [str(w.message) for w in caught if "traced" in str(w.message)]
    assert len(msgs) == 1
    assert "traced 5 times" in msgs[0] and "n (was 3, now 4)" in msgs[0]
    assert [w.filename for w in caught if "traced" in str(w.message)] == [__file__]


def test_inside_a_recording_tape_the_function_runs_eagerly():
    f = nt.function(lambda x: np.sin(x) * 2.0)
    x = nt.Variable(0.5)
    with nt.GradientTape() as tape:
        y = f(x)
    assert float(tape.gradient(y, x)) == pytest.approx(2 * np.cos(0.5))
    assert f.trace_count == 0


def test_a_decorated_method():
    class Model:
        def __init__(self):
            self.w = nt.Variable(3.0)

        @nt.function
        def __call__(self, x):
            return self.w * x

    m = Model()
    assert float(m(np.array(2.0))) == 6.0 and float(m(np.array(4.0))) == 12.0


# --- refusals ---------------------------------------------------------------------------------
def _refused(fn, *args):
    with pytest.raises(TracingError) as info:
        nt.function(fn)(*args)
    return str(info.value)


def test_an_if_on_a_tensor_is_refused_at_its_line():
    def f(x):
        loss = np.sum(x)
        if loss > 0:
            return loss
        return -loss

    msg = _refused(f, np.ones(2))
    assert "if loss > 0:" in msg and "np.where" in msg and "test_function.py" in msg


@pytest.mark.parametrize("how, body", [
    ("float()", lambda x: float(np.sum(x)) * x),
    ("int()", lambda x: x * int(np.sum(x))),
    (".item()", lambda x: x * np.sum(x).item()),
    (".numpy()", lambda x: x * np.sum(x.numpy())),
    ("np.asarray", lambda x: x * np.sum(np.asarray(x))),
    ("bool()", lambda x: x if np.all(x > 0) else -x),
    ("a Python value", lambda x: x * np.array_equal(x, x)),
])
def test_each_way_out_of_the_program_is_refused(how, body):
    msg = _refused(body, np.ones(2))
    assert "nt.function cannot trace this function" in msg
    assert "frozen" in msg and "Instead" in msg


def test_a_refused_trace_leaves_the_variables_unchanged():
    w = nt.Variable([1.0, 2.0])
    opt = nt.optimizers.Adam(0.1)

    def step(x):
        with nt.GradientTape() as tape:
            loss = np.sum(w * x)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        w.assign_add(x)
        if loss > 0:                     # refused, after the updates ran
            return loss
        return loss

    opt.apply_gradients([(np.zeros(2), w)])     # the slots exist before the trace
    before = [v.numpy() for v in [w] + opt.variables]
    _refused(step, np.ones(2))
    assert all(same(a, b.numpy()) for a, b in zip(before, [w] + opt.variables))


def test_a_caught_refusal_is_still_refused():
    def f(x):
        try:
            float(x)
        except TracingError:
            pass
        return x

    _refused(f, np.array(1.0))


@pytest.mark.parametrize("draw", ["legacy", "generator"])
def test_random_numbers_drawn_inside_are_refused_not_frozen(draw):
    rng = np.random.default_rng(0)

    def f(x):
        if draw == "legacy":
            mask = np.random.rand(*x.shape) < 0.5
        else:
            mask = rng.random(x.shape) < 0.5
        return x * mask

    msg = _refused(f, np.ones(3))
    assert "random numbers" in msg and "pass them in as an argument" in msg


def test_a_mask_passed_in_is_fresh_at_every_call():
    f = nt.function(lambda x, mask: x * mask)
    rng = np.random.default_rng(0)
    masks = [rng.random(4) < 0.5 for _ in range(3)]
    assert all(same(f(np.ones(4), m), np.ones(4) * m) for m in masks)
    assert f.trace_count == 1


def test_dask_arrays_are_refused_clearly():
    da = pytest.importorskip("dask.array")
    msg = _refused(lambda x: x * 2.0, nt.constant(da.ones(3, chunks=2)))
    assert "Dask or CuPy" in msg and "without nt.function" in msg


# --- the program, shown -------------------------------------------------------------------
def _small_step():
    w = nt.Variable([0.5, -0.5], name="w")

    @nt.function
    def step(x):
        with nt.GradientTape() as tape:
            loss = np.sum((x * w) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss
    return step, w


def test_program_lists_forward_backward_and_update_in_numpys_words():
    step, w = _small_step()
    text = str(step.program(np.ones(2)))
    assert text.startswith("{ lambda x:float64[2] .")
    assert "read <variable w>" in text and "np.multiply(x, v1)" in text
    assert "# backward pass" in text and "<variable w>.assign_sub(" in text
    assert text.rstrip().endswith("in v4 }")
    # showing the program traced it, and gave the variable its value back
    assert step.trace_count == 1 and same(w, np.array([0.5, -0.5]))


def test_graph_draws_the_program():
    step, _ = _small_step()
    g = step.graph(np.ones(2))
    src = g.source
    assert "np.multiply" in src and "w.assign_sub" in src and "#fde0c5" in src
