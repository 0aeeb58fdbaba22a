"""@nt.custom_gradient and nt.stop_gradient."""
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_reverse, nbtape_frames
from nbtape.diagnostics.errors import InvalidArgumentError


# --- custom_gradient ----------------------------------------------------------------------------------
@nt.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad


def naive_log1pexp(x):
    return np.log(1 + np.exp(x))


def test_example_14_float32_naive_is_nan_custom_is_one():
    x = nt.constant(100.0, dtype="float32")
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = naive_log1pexp(x)
        naive = tape.gradient(y, x)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = log1pexp(x)
        custom = tape.gradient(y, x)
    assert naive.dtype == np.float32 and np.isnan(float(naive))
    assert custom.dtype == np.float32 and float(custom) == 1.0


def test_custom_gradient_value_is_the_function_value():
    x = nt.constant([0.0, 1.0])
    y = log1pexp(x)
    assert type(y) is nt.Tensor
    np.testing.assert_allclose(y.numpy(), np.log1p(np.exp([0.0, 1.0])))


def test_custom_gradient_receives_the_upstream_gradient():
    seen = []

    @nt.custom_gradient
    def double(x):
        def grad(dy):
            seen.append(np.array(dy))
            return dy * 2.0
        return x * 2.0, grad

    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(double(x) * np.array([3.0, 5.0]))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [6.0, 10.0])
    np.testing.assert_array_equal(seen[0], [3.0, 5.0])


def test_custom_gradient_is_used_instead_of_the_real_one():
    @nt.custom_gradient
    def fake(x):
        return x * x, lambda dy: dy * 100.0

    x = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = fake(x)
    assert float(y) == 9.0
    assert float(tape.gradient(y, x)) == 100.0


def test_several_arguments():
    @nt.custom_gradient
    def mul(a, b):
        def grad(dy):
            return dy * b, dy * a
        return a * b, grad

    a, b = nt.constant(2.0), nt.constant(5.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        y = mul(a, b) * 3.0
    ga, gb = tape.gradient(y, [a, b])
    assert (float(ga), float(gb)) == (15.0, 6.0)


def test_several_arguments_gradient_for_one_only():
    @nt.custom_gradient
    def weighted(a, b):
        return a * 2.0 + b * 7.0, lambda dy: (dy * 2.0, dy * 7.0)

    a, b = nt.constant(1.0), nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(b)
        y = weighted(a, b)
    assert float(tape.gradient(y, b)) == 7.0


def test_wrong_number_of_gradients_is_a_clear_error():
    @nt.custom_gradient
    def bad(a, b):
        return a * b, lambda dy: dy      # one gradient for two arguments

    a, b = nt.constant(2.0), nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        y = bad(a, b)
    with pytest.raises(ValueError, match="gradient"):
        tape.gradient(y, [a, b])


def test_with_variables_grad_fn_gets_variables_and_returns_both():
    w = nt.Variable(3.0, name="w")
    received = {}

    @nt.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            received["variables"] = variables
            return dy * w, [dy * x * 10.0]     # deliberately 10x the true dy/dw
        return x * w, grad

    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    gx, gw = tape.gradient(y, [x, w])
    assert float(y) == 6.0
    assert float(gx) == 3.0
    assert float(gw) == 20.0
    assert list(received["variables"]) == [w]


def test_with_two_variables():
    w = nt.Variable(2.0)
    b = nt.Variable(1.0)

    @nt.custom_gradient
    def affine(x):
        def grad(dy, variables=None):
            grads = {id(w): dy * x, id(b): dy}
            return dy * w, [grads[id(v)] for v in variables]
        return x * w + b, grad

    x = nt.constant(5.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = affine(x) * 2.0
    gx, gw, gb = tape.gradient(y, [x, w, b])
    assert (float(gx), float(gw), float(gb)) == (4.0, 10.0, 2.0)


def test_multiple_outputs():
    @nt.custom_gradient
    def both(x):
        def grad(dy1, dy2):
            return dy1 * 2.0 + dy2 * 3.0
        return (x * 2.0, x * 3.0), grad

    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        a, b = both(x)
        y = a * 10.0 + b
    assert (float(a), float(b)) == (2.0, 3.0)
    assert float(tape.gradient(y, x)) == 23.0


def test_second_derivative_through_custom_gradient():
    """The gradient function is itself differentiated by the outer tape."""
    x = nt.constant(0.7)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        g = inner.gradient(y, x)            # sigmoid(x)
    h = outer.gradient(g, x)                # sigmoid(x) (1 - sigmoid(x))
    s = 1 / (1 + np.exp(-0.7))
    np.testing.assert_allclose(float(g), s)
    np.testing.assert_allclose(float(h), s * (1 - s))


def test_custom_gradient_inside_nested_tapes_with_variable():
    v = nt.Variable(0.3)
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = log1pexp(v * 2.0)
        g = inner.gradient(y, v)             # 2 sigmoid(2v)
    h = outer.gradient(g, v)                 # 4 s (1 - s)
    s = 1 / (1 + np.exp(-0.6))
    np.testing.assert_allclose(float(g), 2 * s)
    np.testing.assert_allclose(float(h), 4 * s * (1 - s))


def test_custom_gradient_non_scalar():
    x0 = np.array([-2.0, 0.0, 3.0])
    x = nt.constant(x0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(log1pexp(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 1 / (1 + np.exp(-x0)))


def test_custom_gradient_of_variable_argument():
    """TensorFlow: grad_fn gets variables= only for variables that are not arguments."""
    v = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = log1pexp(v)
    np.testing.assert_allclose(float(tape.gradient(y, v)), 1 / (1 + np.exp(-1.0)))


def test_custom_gradient_identity_with_clipped_gradient():
    @nt.custom_gradient
    def clip_grad(x):
        return x * 1.0, lambda dy: np.clip(dy, -0.5, 0.5)

    v = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(v)
        y = clip_grad(v * v)
    assert float(y) == 4.0
    assert float(tape.gradient(y, v)) == 2.0 * 2.0 * 0.5


# --- stop_gradient --------------------------------------------------------------------------------------
def test_stop_gradient_same_value():
    x = nt.constant([1.0, 2.0])
    s = nt.stop_gradient(x)
    assert type(s) is nt.Tensor
    np.testing.assert_array_equal(s.numpy(), [1.0, 2.0])


def test_stop_gradient_blocks_the_gradient():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * nt.stop_gradient(x)
        z = nt.stop_gradient(x * x)
    assert float(tape.gradient(y, x)) == 3.0
    assert tape.gradient(z, x) is None
    assert float(tape.gradient(z, x, unconnected_gradients="zero")) == 0.0


def test_stop_gradient_of_a_variable():
    v = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = v * v + nt.stop_gradient(v) * 10.0
    assert float(y) == 24.0
    assert float(tape.gradient(y, v)) == 4.0


def test_stop_gradient_in_nested_tapes():
    x = nt.constant(2.0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = x * x * nt.stop_gradient(x)
        g = inner.gradient(y, x)     # 2 x * x_stopped = 8
    assert float(g) == 8.0
    assert float(outer.gradient(g, x)) == 4.0     # d(2 x c)/dx with c stopped


def test_stop_gradient_in_forward_mode():
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        y = x * nt.stop_gradient(x)
    assert float(acc.jvp(y)) == 2.0


def test_non_trainable_variable_is_not_passed_to_grad_fn():
    """TensorFlow only reports trainable variables to a custom gradient's watcher."""
    scale = nt.Variable(3.0, trainable=False)

    @nt.custom_gradient
    def scaled(x):
        return x * scale, lambda dy: dy * scale

    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    assert float(tape.gradient(y, x)) == 3.0


def test_grad_fn_without_variables_keyword_when_variables_are_read_is_type_error():
    w = nt.Variable(3.0)

    @nt.custom_gradient
    def scaled(x):
        return x * w, lambda dy: dy * w

    x = nt.constant(2.0)
    with pytest.raises(TypeError, match="variables"):
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = scaled(x)
        tape.gradient(y, x)


def test_stop_gradient_of_a_list():
    a, b = nt.constant(1.0), nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        sa, sb = nt.stop_gradient([a, b])
        y = sa * b + a * sb
    ga, gb = tape.gradient(y, [a, b])
    assert (float(ga), float(gb)) == (2.0, 1.0)


# --- what f and grad_fn return is checked, at the user's line (issue 11, item 6) ---------------------
def _gradient_of(fn, *values):
    xs = [nt.constant(v) for v in values]
    with nt.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
    return tape.gradient(y, xs)


def test_gradient_of_the_wrong_shape_names_function_argument_and_shape():
    @nt.custom_gradient
    def total(x):
        return np.sum(x), lambda dy: dy * np.ones((2, 2))     # (2, 2) for a (2,) argument

    with pytest.raises(ValueError) as info:
        _gradient_of(total, [1.0, 2.0])
    text = str(info.value)
    assert "custom_gradient(total)" in text and "argument 'x'" in text
    assert "(2, 2)" in text and "shape (2,)" in text and "test_custom.py" in text
    assert not nbtape_frames(info.value)


def test_scalar_gradient_for_an_array_argument_is_refused():
    @nt.custom_gradient
    def total(x):
        return np.sum(x), lambda dy: dy
    with pytest.raises(ValueError, match=r"shape \(\) for argument 'x'.*np.ones_like"):
        _gradient_of(total, [1.0, 2.0])


def test_wrong_count_names_the_arguments():
    @nt.custom_gradient
    def mul(a, b):
        return np.sum(a * b), lambda dy: dy * b
    with pytest.raises(ValueError, match=r"custom_gradient\(mul\).*1 input gradient.*\(a, b\)") \
            as info:
        _gradient_of(mul, [1.0, 2.0], [3.0, 4.0])
    assert not nbtape_frames(info.value)


@pytest.mark.parametrize("bad", ["oops", {"x": 1.0}, object(), ([[1.0], [2.0, 3.0]],)])
def test_gradient_that_is_not_numbers_is_refused(bad):
    @nt.custom_gradient
    def f(x):
        return x * 2.0, lambda dy: bad
    with pytest.raises(TypeError, match=r"custom_gradient\(f\).*argument 'x', not numbers"):
        _gradient_of(f, [1.0, 2.0])


def test_star_args_are_named_by_position():
    @nt.custom_gradient
    def prod(*xs):
        return np.sum(xs[0] * xs[1]), lambda dy: (dy * xs[1], np.ones(3))
    with pytest.raises(ValueError, match=r"argument 'xs\[1\]', which has shape \(2,\)"):
        _gradient_of(prod, [1.0, 2.0], [3.0, 4.0])


@pytest.mark.parametrize("returned", ["one value", "a triple", "not callable"])
def test_f_that_does_not_return_y_and_grad_fn_is_refused_at_the_call(returned):
    @nt.custom_gradient
    def f(x):
        if returned == "one value":
            return x * 2.0
        if returned == "a triple":
            return x, x, lambda dy: dy
        return x * 2.0, x

    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match=r"f is decorated with @nt.custom_gradient.*\(y, "
                                            r"grad_fn\)") as info:
            f(x)
    assert not nbtape_frames(info.value)


def test_grad_fn_reading_variables_without_the_keyword_fails_at_the_call():
    w = nt.Variable(3.0, name="w")

    @nt.custom_gradient
    def scaled(x):
        return x * w, lambda dy: dy * w

    x = nt.constant(2.0)
    with pytest.raises(TypeError, match=r"must accept keyword argument 'variables'.*'w'") as info:
        scaled(x)           # TensorFlow checks when the function runs, tape or not
    assert not nbtape_frames(info.value)


def test_grad_fn_with_keyword_arguments_may_take_variables():
    w = nt.Variable(3.0, name="w")

    @nt.custom_gradient
    def scaled(x):
        def grad(dy, **kwargs):
            return dy * w, [dy * x]
        return x * w, grad

    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    assert [float(g) for g in tape.gradient(y, [x, w])] == [3.0, 2.0]


def test_variable_gradients_are_checked_too():
    w = nt.Variable([1.0, 2.0], name="w")

    @nt.custom_gradient
    def dot(x):
        return np.sum(x * w), lambda dy, variables=None: (dy * w, [dy])

    with nt.GradientTape() as tape:
        x = nt.constant([1.0, 1.0])
        tape.watch(x)
        y = dot(x)
    with pytest.raises(ValueError, match=r"shape \(\) for variable 'w', which has shape \(2,\)"):
        tape.gradient(y, [x, w])


def test_none_gradients_are_allowed():
    @nt.custom_gradient
    def first(a, b):
        return a * 1.0, lambda dy: (dy, None)
    ga, gb = _gradient_of(first, [1.0, 2.0], [3.0, 4.0])
    np.testing.assert_array_equal(ga.numpy(), [1.0, 1.0])
    assert gb is None


def test_right_custom_gradients_with_broadcasting_match_finite_differences():
    @nt.custom_gradient
    def scaled_sin(a, b):                 # a (2, 3), b (3,): the gradient of b is reduced
        def grad(dy):
            return dy * np.cos(a) * b, np.sum(dy * np.sin(a), axis=0)
        return np.sin(a) * b, grad

    rng = np.random.default_rng(5)
    check_reverse(scaled_sin, rng.standard_normal((2, 3)), rng.standard_normal(3))


def test_a_primitive_records_tensors_passed_by_keyword_and_leaves_plain_calls_alone():
    from nbtape.core.primitive import primitive
    from nbtape.core.registry import RULES, defvjp

    def triple(x, scale=1.0):
        return 3 * np.asarray(x) * scale        # opaque to the tape: only its rule can tell
    f = primitive(triple)
    try:
        defvjp(f.raw, lambda g, ans, x, scale=1.0: 3 * g * scale)
        x = nt.constant(2.0)
        with nt.GradientTape() as tape:
            tape.watch(x)
            by_name, by_position = f(x=x), f(x, scale=2.0)
        assert float(tape.gradient([by_name, by_position], x)) == 9.0
        assert not isinstance(f(2.0, scale=3.0), nt.Tensor)   # plain in, plain out
    finally:
        del RULES[f.raw]


# --- arguments that are lists, tuples or dicts of tensors ------------------------------------
@nt.custom_gradient
def _product_of_list(xs):
    a, b = xs
    return a * b * b, lambda dy: [dy * b * b, 2 * dy * a * b]      # the argument's structure


@nt.custom_gradient
def _product_of_dict(d, c, scale):
    # a dict argument, a tensor argument and a plain one: TensorFlow's flat list of
    # gradients, one per tensor in order
    y = d["a"] * d["b"] * c * scale
    return y, lambda dy: [dy * d["b"] * c * scale, dy * d["a"] * c * scale,
                          dy * d["a"] * d["b"] * scale]


@pytest.mark.parametrize("pack", [list, tuple])
def test_a_list_or_tuple_argument_gets_a_gradient_per_tensor(pack, rng):
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    check_both(lambda a, b: _product_of_list(pack([a, b])), a, b)
    x1, x2 = nt.Variable(3.0), nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = _product_of_list(pack([x1, x2]))
    assert [float(g) for g in tape.gradient(y, [x1, x2])] == [4.0, 12.0]


def test_a_dict_argument_among_others_gets_a_gradient_per_tensor(rng):
    check_both(lambda a, b, c: _product_of_dict({"a": a, "b": b}, c, 2.0),
               rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2))


def test_a_list_argument_given_too_few_gradients_names_each_tensor():
    @nt.custom_gradient
    def f(xs):
        return xs[0] * xs[1], lambda dy: dy * xs[1]
    x1, x2 = nt.constant(2.0), nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch([x1, x2])
        y = f([x1, x2])
    with pytest.raises(InvalidArgumentError, match=r"1 input gradient\(s\) for 2 tensor "
                                                   r"argument\(s\) \(xs\[0\], xs\[1\]\)"):
        tape.gradient(y, [x1, x2])


# --- tensors by keyword, dicts in sorted-key order (TensorFlow's nest.flatten) ---------------
@nt.custom_gradient
def _scaled(x, s=1.0):
    # grad_fn gives the positional gradient, then the keyword one
    return x * s, lambda dy: (dy * s, np.sum(dy * x))


def test_a_tensor_passed_by_keyword_gets_its_gradient(rng):
    x, s = rng.standard_normal(3), rng.standard_normal(())
    check_both(lambda x, s: _scaled(x, s=s), x, s)
    xs, ss = nt.constant([1.0, 2.0]), nt.Variable(3.0)
    with nt.GradientTape() as tape:
        tape.watch(xs)
        y = np.sum(_scaled(xs, s=ss))
    gx, gs = tape.gradient(y, [xs, ss])
    assert gx.numpy().tolist() == [3.0, 3.0] and float(gs) == 3.0


def test_a_keyword_tensor_that_grad_fn_leaves_out_is_refused_when_a_gradient_reaches_it():
    @nt.custom_gradient
    def f(x, s=1.0):
        return x * s, lambda dy: dy * s             # TensorFlow's: positional ones only
    x, s = nt.constant(2.0), nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = f(x, s=s)                               # s not followed: nothing is lost
    assert float(tape.gradient(y, x)) == 3.0
    with nt.GradientTape() as tape:
        tape.watch([x, s])
        y = f(x, s=s)
    with pytest.raises(InvalidArgumentError, match=r"was given s by keyword.*pass it by "
                                                   r"position"):
        tape.gradient(y, [x, s])


def test_a_dict_argument_flattens_in_sorted_key_order_as_tensorflow_does():
    @nt.custom_gradient
    def f(d):
        y = d["a"] * 2.0 + d["b"] * 5.0
        return y, lambda dy: [dy * 2.0, dy * 5.0]   # a's, then b's: sorted keys
    a, b = nt.constant(1.0), nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        y = f({"b": b, "a": a})                     # inserted b first
    assert [float(g) for g in tape.gradient(y, [a, b])] == [2.0, 5.0]

    @nt.custom_gradient
    def g(d):
        y = d["a"] * 2.0 + d["b"] * 5.0
        return y, lambda dy: {"a": dy * 2.0, "b": dy * 5.0}     # by key, any order
    with nt.GradientTape() as tape:
        tape.watch([a, b])
        y = g({"b": b, "a": a})
    assert [float(x) for x in tape.gradient(y, [a, b])] == [2.0, 5.0]
