"""nt.recompute_grad: the values and gradients of f, with only f's inputs and outputs taped."""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import nbtape as nt
from nbtape.transforms.recompute import RecomputeMismatchError
from gradcheck import check_both, check_hvp


def block(x, w):
    return np.tanh(x @ w) * np.sum(np.sin(x))


def grads_of(fn, x, w):
    with nt.GradientTape() as tape:
        tape.watch([x, w])
        loss = np.sum(fn(x, w) ** 2)
    return loss, tape.gradient(loss, [x, w])


def test_values_and_gradients_equal_those_of_f():
    rng = np.random.default_rng(0)
    x = nt.constant(rng.standard_normal((3, 4)))
    w = nt.constant(rng.standard_normal((4, 2)))
    plain_loss, plain = grads_of(block, x, w)
    loss, got = grads_of(nt.recompute_grad(block), x, w)
    assert float(loss) == float(plain_loss)
    for g, p in zip(got, plain):
        assert g.shape == p.shape and g.dtype == p.dtype
        np.testing.assert_allclose(g.numpy(), p.numpy(), rtol=1e-12)


def test_gradients_match_finite_differences_in_both_modes():
    rng = np.random.default_rng(1)
    wrapped = nt.recompute_grad(block)
    check_both(wrapped, rng.standard_normal((3, 4)), rng.standard_normal((4, 2)))
    check_both(nt.recompute_grad(lambda a, b: a * b + np.exp(a)),
               rng.standard_normal((2, 3)), rng.standard_normal(3))     # broadcasting


def _kept_intermediates(wrap):
    kept = []

    def f(v):
        a = np.exp(v)
        b = np.cos(a)
        kept.extend(weakref.ref(t) for t in (a, b))
        return np.sin(b)
    x = nt.constant(np.linspace(0.1, 1.0, 5))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = wrap(f)(x)
    gc.collect()
    alive = sum(r() is not None for r in kept)
    return alive, tape.gradient(y, x)


def test_the_tape_keeps_no_intermediate_of_f():
    alive, plain = _kept_intermediates(lambda f: f)
    assert alive == 2           # the tape holds exp(x) and cos(exp(x)) for sin's and cos's rules
    alive, got = _kept_intermediates(nt.recompute_grad)
    assert alive == 0
    np.testing.assert_allclose(got.numpy(), plain.numpy(), rtol=1e-14)


def test_the_backward_pass_runs_f_again():
    calls = []

    def f(x):
        calls.append(1)
        return np.sin(x) * x
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = nt.recompute_grad(f)(x)
    assert len(calls) == 1
    g = tape.gradient(y, x)
    assert len(calls) == 2
    assert float(g) == pytest.approx(np.cos(2.0) * 2.0 + np.sin(2.0), rel=1e-14)


def test_second_order_by_nested_tapes():
    f = nt.recompute_grad(lambda v: v ** 3)
    for x0, first, second in [(1.0, 3.0, 6.0), (5.0, 75.0, 30.0)]:
        x = nt.Variable(x0)
        with nt.GradientTape() as outer:
            with nt.GradientTape() as inner:
                y = f(x)
            dy = inner.gradient(y, x)
        assert float(dy) == pytest.approx(first)
        assert float(outer.gradient(dy, x)) == pytest.approx(second)


def test_hessian_vector_products_through_recompute():
    rng = np.random.default_rng(2)
    wrapped = nt.recompute_grad(lambda v: np.sum(np.sin(v) * v[::-1]) + np.sum(v ** 3))
    check_hvp(wrapped, rng.standard_normal(5))
    h = nt.hessian(wrapped)(rng.standard_normal(4))
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h, np.transpose(h), atol=1e-12)


def test_variables_read_inside_f_get_gradients():
    v = nt.Variable(2.0, name="v")
    w = nt.Variable([1.0, -1.0], name="w")
    f = nt.recompute_grad(lambda x: x * v * v + np.sum(w * x))
    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.watched_variables() == (v, w)       # auto-watched, in creation order
    gx, gv, gw = tape.gradient(y, [x, v, w])
    assert float(gx) == pytest.approx(4.0 + 0.0)
    assert float(gv) == pytest.approx(12.0)
    np.testing.assert_allclose(gw.numpy(), [3.0, 3.0])


def test_a_variable_passed_as_an_argument_and_an_unwatching_tape():
    v = nt.Variable([0.5, 1.5])
    f = nt.recompute_grad(lambda a: np.sum(np.exp(a)))
    with nt.GradientTape() as tape:
        y = f(v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), np.exp([0.5, 1.5]))
    with nt.GradientTape(watch_accessed_variables=False) as tape:
        y = f(v)
    assert tape.gradient(y, v) is None


def test_forward_mode_and_forward_over_reverse():
    f = nt.recompute_grad(lambda v: np.sin(v) ** 3)
    x = nt.constant(0.7)
    with nt.ForwardAccumulator(x, nt.constant(1.0)) as acc:
        y = f(x)
    assert float(acc.jvp(y)) == pytest.approx(3 * np.sin(0.7) ** 2 * np.cos(0.7), rel=1e-13)
    with nt.ForwardAccumulator(x, nt.constant(1.0)) as acc:
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    expected = 6 * np.sin(0.7) * np.cos(0.7) ** 2 - 3 * np.sin(0.7) ** 3
    assert float(acc.jvp(g)) == pytest.approx(expected, rel=1e-12)


def test_forward_mode_with_a_variable_read_inside():
    v = nt.Variable(2.0)
    f = nt.recompute_grad(lambda x: x * v ** 2)
    x = nt.constant(3.0)
    with nt.ForwardAccumulator(v, nt.constant(1.0)) as acc:
        y = f(x)
    assert float(acc.jvp(y)) == pytest.approx(12.0)


def test_persistent_tape_gives_every_gradient_and_differentiates_its_own():
    f = nt.recompute_grad(lambda a: a ** 4)
    x = nt.constant(2.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
        g = tape.gradient(y, x)         # inside the block: recorded on the same tape
    assert float(g) == 32.0
    assert float(tape.gradient(y, x)) == 32.0
    assert float(tape.gradient(g, x)) == 48.0


def test_keyword_arguments_and_several_outputs():
    def f(a, *, scale, shift=0.0):
        return a * scale + shift, np.exp(a) * scale
    wrapped = nt.recompute_grad(f)
    a, s, c = nt.constant([1.0, 2.0]), nt.constant(3.0), nt.constant(0.5)
    with nt.GradientTape() as tape:
        tape.watch([a, s, c])
        u, e = wrapped(a, scale=s, shift=c)
        loss = np.sum(u) + np.sum(e * e)
    ga, gs, gc = tape.gradient(loss, [a, s, c])
    np.testing.assert_allclose(u.numpy(), [3.5, 6.5])
    np.testing.assert_allclose(ga.numpy(), 3.0 + 2 * 9.0 * np.exp([2.0, 4.0]))
    assert float(gs) == pytest.approx(3.0 + 2 * 3.0 * np.sum(np.exp([2.0, 4.0])))
    assert float(gc) == 2.0


def test_nested_outputs_keep_their_structure_and_an_unused_output_is_fine():
    f = nt.recompute_grad(lambda a: {"sq": a * a, "parts": (a + 1, np.sin(a))})
    a = nt.constant(0.3)
    with nt.GradientTape() as tape:
        tape.watch(a)
        out = f(a)
    assert set(out) == {"sq", "parts"} and isinstance(out["parts"], tuple)
    assert float(tape.gradient(out["sq"], a)) == pytest.approx(0.6)


def test_an_input_returned_unchanged_is_a_new_value():
    f = nt.recompute_grad(lambda a, b: (a, a * b))
    a, b = nt.constant(2.0), nt.constant(5.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        same, prod = f(a, b)
        loss = same * 10.0 + prod
    assert same is not a
    assert [float(g) for g in tape.gradient(loss, [a, b])] == [15.0, 2.0]


def test_tensors_f_closes_over_get_their_gradients():
    x, w = nt.constant(2.0), nt.constant(3.0)

    def loss(wrap):
        with nt.GradientTape() as tape:
            tape.watch([x, w])
            h = w * 1.5                     # made outside f, used inside it
            y = wrap(lambda v: v * w + np.sin(v * h))(x) + w
        return [float(g) for g in tape.gradient(y, [x, w])]
    assert loss(nt.recompute_grad) == pytest.approx(loss(lambda f: f), rel=1e-14)
    with nt.ForwardAccumulator(w, nt.constant(1.0)) as acc:
        y = nt.recompute_grad(lambda v: v * w ** 2)(x)
    assert float(acc.jvp(y)) == pytest.approx(12.0)


def test_jacobians_through_a_recomputed_op():
    rng = np.random.default_rng(4)
    f = nt.recompute_grad(lambda v: np.tanh(v) * v[..., ::-1])
    x = nt.constant(rng.standard_normal((2, 3)))
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, plain = f(x), np.tanh(x) * x[..., ::-1]
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), tape.jacobian(plain, x).numpy(),
                               rtol=1e-13)
    np.testing.assert_allclose(tape.batch_jacobian(y, x).numpy(),
                               tape.batch_jacobian(plain, x).numpy(), rtol=1e-13)


def test_reverse_over_forward():
    f = nt.recompute_grad(lambda v: np.sin(v) * v[::-1])
    x = nt.constant(np.linspace(0.1, 1.0, 4))

    def grad_of_jvp(fn):
        with nt.GradientTape() as tape:
            tape.watch(x)
            with nt.ForwardAccumulator(x, np.ones(4)) as acc:
                y = fn(x)
            jv = acc.jvp(y)
        return tape.gradient(jv, x).numpy()
    np.testing.assert_allclose(grad_of_jvp(f), grad_of_jvp(lambda v: np.sin(v) * v[::-1]),
                               rtol=1e-13)


def test_an_integer_output_beside_a_float_one():
    f = nt.recompute_grad(lambda v: (v * 2.0, np.argmax(v)))
    x = nt.constant([0.5, 3.0, 1.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        doubled, where = f(x)
        loss = np.sum(doubled)
    assert int(where) == 1
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [2.0, 2.0, 2.0])
    with nt.ForwardAccumulator(x, np.ones(3)) as acc:
        doubled, where = f(x)
    np.testing.assert_array_equal(acc.jvp(doubled).numpy(), [2.0, 2.0, 2.0])
    assert acc.jvp(where) is None


def test_outside_any_tape_it_is_just_f():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    np.testing.assert_array_equal(np.asarray(nt.recompute_grad(block)(x, w)), block(x, w))


def test_no_path_gives_none_and_int_inputs_are_constants():
    f = nt.recompute_grad(lambda a, n: a * n)
    a, other = nt.constant(2.0), nt.constant(1.0)
    n = nt.constant(np.array(3))
    with nt.GradientTape() as tape:
        tape.watch([a, other])
        y = f(a, n)
    ga, go = tape.gradient(y, [a, other])
    assert float(ga) == 3.0 and go is None


def _peak(step, depth, size):
    x = nt.constant(np.linspace(0.0, 1.0, size))
    tracemalloc.start()
    try:
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(depth):
                y = step(y)
            loss = np.sum(y)
        g = tape.gradient(loss, x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, g.numpy()


def test_checkpointed_segments_save_memory_on_a_deep_chain():
    def segment(v):         # eight layers whose intermediates a tape would keep
        for _ in range(8):
            v = np.sin(v) * 1.01
        return v
    plain_peak, plain = _peak(segment, 8, 50_000)
    peak, got = _peak(nt.recompute_grad(segment), 8, 50_000)
    np.testing.assert_array_equal(got, plain)
    # 64 layers kept versus 8 checkpoints plus one segment re-run: about a fifth
    assert peak < 0.5 * plain_peak, (peak, plain_peak)


def test_f_must_be_callable():
    with pytest.raises(TypeError, match="takes a function, not a float"):
        nt.recompute_grad(3.0)
    with pytest.raises(TypeError, match="no parentheses"):
        nt.recompute_grad(None)


def test_f_must_return_numbers():
    f = nt.recompute_grad(lambda a: "done")
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(nt.NbtapeError, match="must return tensors or arrays"):
            f(x)
    with nt.GradientTape() as tape, pytest.raises(nt.NbtapeError, match="returned a NoneType"):
        tape.watch(x)
        nt.recompute_grad(lambda a: None)(x)


def test_an_error_inside_f_leaves_recording_as_it_was():
    def f(a):
        raise ValueError("bad input")
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ValueError, match="bad input"):
            nt.recompute_grad(f)(x)
        y = x * 2.0
    assert float(tape.gradient(y, x)) == 2.0


def test_it_keeps_the_name_and_docstring_of_f():
    def layer(a):
        """One layer."""
        return a
    wrapped = nt.recompute_grad(layer)
    assert wrapped.__name__ == "layer" and wrapped.__doc__ == "One layer."


def test_a_model_whose_variables_are_made_inside_f():
    x = np.random.default_rng(5).standard_normal((4, 3))

    def grads(wrap):
        r = np.random.default_rng(1)
        model = nt.Sequential([nt.layers.Dense(5, activation="tanh", seed=r, dtype="float64"),
                               nt.layers.Dense(2, seed=r, dtype="float64")])
        call = wrap(model)                  # the layers build on this first call
        with nt.GradientTape() as tape:
            loss = np.sum(call(x) ** 2)
        return tape.gradient(loss, model.trainable_variables)
    for got, plain in zip(grads(nt.recompute_grad), grads(lambda m: m)):
        np.testing.assert_allclose(got.numpy(), plain.numpy(), rtol=1e-13)


def test_gradients_keep_the_sources_dtype():
    x = nt.constant(np.array([0.5, 1.5], dtype=np.float32))
    z = nt.constant(np.array([1 + 2j, 0.5 - 1j]))
    with nt.GradientTape() as tape:
        tape.watch([x, z])
        y = nt.recompute_grad(lambda a, b: np.sum(np.exp(a)) + np.sum(np.abs(b * b) ** 2))(x, z)
    gx, gz = tape.gradient(y, [x, z])
    assert gx.dtype == np.float32 and gz.dtype == np.complex128
    np.testing.assert_allclose(gx.numpy(), np.exp([0.5, 1.5]), rtol=1e-6)
    np.testing.assert_allclose(gz.numpy(), [20 + 40j, 2.5 - 5j])     # d|z|^4/dz = 4|z|^2 z


# --- the re-run computes what the first run computed -------------------------------------------
_SHARED = None          # a test puts here the generator f finds among its globals


def _noisy(source):
    """f(x, rng) scaling x by a random draw, drawing from ``source`` as code does."""
    if source == "global np.random":
        return lambda x, rng: x * np.random.uniform(size=np.shape(x))
    if source == "Generator argument":
        return lambda x, rng: x * rng.uniform(size=np.shape(x))
    if source == "Generator in the closure":
        closed = np.random.default_rng(3)
        return lambda x, rng: x * closed.uniform(size=np.shape(x))
    return lambda x, rng: x * _SHARED.uniform(size=np.shape(x))


_SOURCES = ["global np.random", "Generator argument", "Generator in the closure",
            "Generator among the globals", "RandomState among the globals"]


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setitem(globals(), "_SHARED", None)
    return lambda source: globals().update(_SHARED=np.random.default_rng(7) if "Generator"
                                           in source else np.random.RandomState(7))


@pytest.mark.parametrize("source", _SOURCES)
def test_f_drawing_random_numbers_gets_the_gradient_of_its_draw(source, shared):
    shared(source)
    f = _noisy(source)
    rng = np.random.default_rng(11)
    x = nt.Variable(np.full(3, 2.0))
    with nt.GradientTape() as tape:
        y = nt.recompute_grad(f)(x, rng)
    after_forward = (np.random.get_state()[1].copy(), rng.bit_generator.state)
    g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), y.numpy() / 2.0)     # the draw itself
    # the re-run leaves the streams where the forward pass left them
    np.testing.assert_array_equal(np.random.get_state()[1], after_forward[0])
    assert rng.bit_generator.state == after_forward[1]


@pytest.mark.parametrize("source", _SOURCES)
def test_f_drawing_random_numbers_gets_the_tangent_of_its_draw(source, shared):
    shared(source)
    f = _noisy(source)
    x = nt.constant(np.full(3, 2.0))
    with nt.ForwardAccumulator(x, np.ones(3)) as acc:
        y = nt.recompute_grad(f)(x, np.random.default_rng(11))
        np.testing.assert_array_equal(acc.jvp(y).numpy(), y.numpy() / 2.0)


def test_a_variable_assigned_after_the_forward_pass_is_read_as_it_was():
    v = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = nt.recompute_grad(lambda: v * v)()
    v.assign(12.5)
    assert float(tape.gradient(y, v)) == 4.0
    assert float(v.numpy()) == 12.5                 # and the variable holds its new value


def test_several_variables_assigned_after_the_forward_pass_are_read_as_they_were():
    v, w = nt.Variable(2.0), nt.Variable(3.0)
    with nt.GradientTape() as tape:
        y = nt.recompute_grad(lambda a: a * v * w)(nt.constant(1.5))
    v.assign(-1.0)
    w.assign(7.0)
    assert [float(g) for g in tape.gradient(y, [v, w])] == [4.5, 3.0]


def test_f_with_a_side_effect_that_changes_its_result_raises():
    calls = []

    def f(x):
        calls.append(1)
        return x * len(calls)
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = nt.recompute_grad(f)(x)
    with pytest.raises(RecomputeMismatchError, match="f is wrapped with nt.recompute_grad.*"
                                                    "another value of its output 0"):
        tape.gradient(y, x)


def test_f_drawing_from_a_generator_nbtape_cannot_see_raises():
    def f(x):
        return x * np.random.default_rng().uniform()        # a fresh, unseeded generator
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = nt.recompute_grad(f)(x)
    with pytest.raises(RecomputeMismatchError):
        tape.gradient(y, x)
    with nt.ForwardAccumulator(x, 1.0):
        with pytest.raises(RecomputeMismatchError):
            nt.recompute_grad(f)(x)
