import os

import numpy as np
import pytest

import nbtape as nt
from nbtape.training.layers import Dense, Layer, Sequential


def test_dense_builds_on_first_call_from_the_input_width():
    layer = Dense(4, seed=0)
    assert not layer.built and layer.variables == []
    y = layer(np.ones((2, 3)))
    assert layer.built and y.shape == (2, 4)
    assert [(v.name, v.shape) for v in layer.trainable_variables] == [
        ("dense/kernel", (3, 4)), ("dense/bias", (4,))]
    assert layer.kernel is layer.trainable_variables[0]
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(4))
    np.testing.assert_allclose(y.numpy(), np.ones((2, 3)) @ layer.kernel.numpy(), rtol=1e-5, atol=1e-7)   # float32 vs float64 products


def test_dense_kernel_is_glorot_uniform():
    layer = Dense(300, seed=0)
    layer.build((None, 200))
    k = layer.kernel.numpy()
    limit = np.sqrt(6 / (200 + 300))
    assert np.abs(k).max() <= limit and np.abs(k).max() > 0.99 * limit
    assert k.var() == pytest.approx(limit ** 2 / 3, rel=0.02)
    assert abs(k.mean()) < 0.01 * limit


def test_dense_weights_are_reproducible_from_a_seed_or_a_shared_generator():
    a, b, c = Dense(3, seed=7), Dense(3, seed=7), Dense(3, seed=8)
    for layer in (a, b, c):
        layer.build((None, 5))
    np.testing.assert_array_equal(a.kernel.numpy(), b.kernel.numpy())
    assert not np.array_equal(a.kernel.numpy(), c.kernel.numpy())

    def model(seed):
        rng = np.random.default_rng(seed)
        m = Sequential([Dense(4, "relu", seed=rng), Dense(2, seed=rng)])
        m.build((None, 3))
        return m.get_weights()
    w1, w2 = model(0), model(0)
    for x, y in zip(w1, w2):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(w1[0][:, :2], w1[2][:2, :])      # layers differ from each other


def test_dense_is_float32_like_keras_and_casts_inputs():
    layer = Dense(2, seed=0)
    y = layer(np.ones((1, 3)))                 # float64 input
    assert layer.kernel.dtype == np.float32 and y.dtype == np.float32
    y64 = Dense(2, dtype="float64", seed=0)(np.ones((1, 3), dtype="float32"))
    assert y64.dtype == np.float64
    x = nt.constant(np.ones((1, 3)))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    assert tape.gradient(y, x).dtype == np.float64   # the cast is recorded


@pytest.mark.parametrize("activation, f", [
    (None, lambda z: z), ("linear", lambda z: z), ("relu", lambda z: np.maximum(z, 0)),
    ("sigmoid", lambda z: 1 / (1 + np.exp(-z))), ("tanh", np.tanh),
    ("softmax", lambda z: np.exp(z) / np.exp(z).sum(-1, keepdims=True)),
    (np.sin, np.sin),
])
def test_dense_activations(activation, f):
    layer = Dense(3, activation=activation, dtype="float64", seed=1)
    x = np.random.default_rng(0).standard_normal((4, 2))
    y = layer(x)
    z = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(np.asarray(y), f(z), rtol=1e-12)


def test_dense_without_bias_and_with_custom_initializers():
    layer = Dense(2, use_bias=False, kernel_initializer="ones")
    layer(np.ones((1, 3)))
    assert [v.name for v in layer.variables] == ["dense/kernel"]
    np.testing.assert_array_equal(layer.kernel.numpy(), np.ones((3, 2)))
    layer = Dense(2, kernel_initializer=lambda shape, dtype: np.full(shape, 0.5, dtype))
    np.testing.assert_array_equal(layer(np.ones((1, 2))).numpy(), [[1.0, 1.0]])


def test_dense_user_mistakes():
    with pytest.raises(ValueError, match="unknown activation 'relux'"):
        Dense(2, activation="relux")
    with pytest.raises(ValueError, match="positive whole number"):
        Dense(0)
    with pytest.raises(ValueError, match="unknown initializer"):
        Dense(2, kernel_initializer="orthogonalish")(np.ones((1, 2)))
    with pytest.raises(ValueError, match="known last dimension"):
        Dense(2).build((None, None))


def test_gradients_flow_through_a_dense_layer():
    layer = Dense(2, activation="sigmoid", dtype="float64", seed=3)
    x = np.random.default_rng(1).standard_normal((3, 4))
    assert nt.check_gradients(layer, x) < 1e-6
    with nt.GradientTape() as tape:
        y = np.sum(layer(x) ** 2)
    gk, gb = tape.gradient(y, layer.trainable_variables)
    assert gk.shape == (4, 2) and gb.shape == (2,)


def test_sequential_calls_layers_in_order_and_collects_variables():
    model = nt.Sequential([Dense(5, "relu", seed=0), Dense(3, seed=1)])
    assert model.trainable_variables == [] and not model.built
    x = np.random.default_rng(0).standard_normal((4, 2))
    y = model(x)
    l1, l2 = model.layers
    manual = np.maximum(x @ l1.kernel.numpy() + l1.bias.numpy(), 0) @ l2.kernel.numpy() \
        + l2.bias.numpy()
    np.testing.assert_allclose(y.numpy(), manual, rtol=1e-5)
    assert [v.name for v in model.trainable_variables] == [
        "dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
    assert model.variables == model.trainable_variables
    assert model.count_params() == 2 * 5 + 5 + 5 * 3 + 3


def test_sequential_accepts_functions_and_add():
    model = Sequential([Dense(3, seed=0)])
    model.add(nt.nn.softmax)
    model.add(lambda t: t * 2)
    y = model(np.ones((2, 4)))
    np.testing.assert_allclose(np.sum(y.numpy(), axis=-1), [2.0, 2.0], rtol=1e-6)
    assert [layer.name for layer in model.layers] == ["dense", "softmax", "lambda"]
    with pytest.raises(TypeError, match="layers or functions"):
        model.add(3)
    with pytest.raises(ValueError, match="already has a layer named 'out'"):
        Sequential([Dense(2, name="out"), Dense(3, name="out")])


def test_summary_is_a_readable_table():
    model = Sequential([Dense(64, "relu", seed=0), Dense(10, seed=0)], name="digits")
    lines = []
    model.summary(print_fn=lines.append)
    text = lines[0]
    assert 'Model: "digits"' in text and "0 (unbuilt)" in text
    model.build((None, 64))
    lines.clear()
    model.summary(print_fn=lines.append)
    text = lines[0]
    assert "dense (Dense)" in text and "(None, 64)" in text and "4160" in text
    assert "dense_1 (Dense)" in text and "(None, 10)" in text and "650" in text
    assert "Total params: 4,810" in text and "Trainable params: 4,810" in text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_freezing_a_layer_removes_its_variables_from_training():
    model = Sequential([Dense(3, seed=0), Dense(2, seed=1)])
    model(np.ones((1, 2)))
    first, second = model.layers
    first.trainable = False
    assert model.trainable_variables == second.trainable_variables
    assert model.non_trainable_variables == first.variables
    with nt.GradientTape() as tape:
        y = np.sum(model(np.ones((1, 2))))
    assert set(tape.watched_variables()) == set(second.trainable_variables)
    model.trainable = False
    assert model.trainable_variables == []
    model.trainable = True
    assert len(model.trainable_variables) == 4


def test_get_and_set_weights_round_trip():
    model = Sequential([Dense(3, seed=0)])
    model(np.ones((1, 2)))
    saved = model.layers[0].get_weights()
    model.layers[0].set_weights([np.zeros((2, 3)), np.ones(3)])
    np.testing.assert_array_equal(model(np.ones((1, 2))).numpy(), [[1.0, 1.0, 1.0]])
    model.layers[0].set_weights(saved)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), saved[0])
    with pytest.raises(ValueError, match="has 2 weights"):
        model.layers[0].set_weights([np.zeros((2, 3))])


def test_a_custom_layer():
    class Scale(Layer):
        def build(self, input_shape):
            self.s = self.add_weight("s", (input_shape[-1],), "ones")

        def call(self, x):
            return x * self.s
    model = Sequential([Scale(), Dense(1, kernel_initializer="ones")])
    with nt.GradientTape() as tape:
        y = np.sum(model(np.array([[1.0, 2.0]])))
    g = tape.gradient(y, model.trainable_variables)
    np.testing.assert_allclose(g[0].numpy(), [1.0, 2.0])
    assert model.trainable_variables[0].name == "scale/s"


# --- calls with the wrong number of features ---------------------------------------------------
def test_dense_called_with_another_feature_count_says_so_at_the_users_line():
    layer = Dense(2, seed=0, name="hidden")
    layer(np.ones((5, 3)))
    with pytest.raises(ValueError) as info:
        layer(np.ones((5, 4)))
    message = str(info.value)
    assert "Dense layer 'hidden' was built for inputs with 3 features" in message
    assert "got shape (5, 4), with 4 features" in message
    assert "(batch, 3)" in message and "new Dense layer for 4-feature inputs" in message
    files = {os.path.basename(e.path) for e in info.traceback}
    assert not files & {"layers.py", "dispatch.py", "tensor.py"}
    with pytest.raises(ValueError, match="got a scalar"):
        layer(2.0)
    assert layer(np.ones((1, 3))).shape == (1, 2)        # the layer still works


def test_a_model_called_with_another_feature_count_names_the_layer():
    model = Sequential([Dense(4, seed=0), Dense(2, seed=1)])
    model(np.ones((2, 3)))
    with pytest.raises(ValueError, match="'dense' was built for inputs with 3 features"):
        model(np.ones((2, 5)))


def test_errors_from_a_custom_layers_own_code_keep_its_frames():
    class Broken(Layer):
        def call(self, x):
            return x @ np.ones((7, 1))
    with pytest.raises(ValueError) as info:
        Broken()(np.ones((2, 3)))
    assert any(e.name == "call" for e in info.traceback)


# --- a copied model is a new model (a DQN target network, an EMA or teacher model) ------------
def _model(rng, layers=(2,)):
    m = Sequential([Dense(n, activation="tanh" if k < len(layers) - 1 else None)
                    for k, n in enumerate(layers)])
    m(nt.constant(rng.standard_normal((1, 3)).astype("float32")))
    return m


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("layers", [(2,), (4, 1)])
def test_a_target_network_copy_sends_no_gradient_into_the_model(how, layers, rng):
    import copy
    import pickle
    model = _model(rng, layers)
    target = (copy.deepcopy(model) if how == "deepcopy"
              else pickle.loads(pickle.dumps(model)))
    x = nt.constant(rng.standard_normal((5, 3)).astype("float32"))
    for a, b in zip(model.variables, target.variables):
        assert a is not b and a.name == b.name and a.trainable == b.trainable
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with nt.GradientTape() as tape:
        y = np.sum((model(x) - target(x) * 0.5) ** 2)
    grads = tape.gradient(y, model.trainable_variables)
    # the target's outputs are constants: the gradient of sum((m - c)**2), c = 0.5 m
    frozen = nt.constant(target(x).numpy() * 0.5)
    with nt.GradientTape() as tape:
        y = np.sum((model(x) - frozen) ** 2)
    expected = tape.gradient(y, model.trainable_variables)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5)



# Dropout, and training= reaching the layers that take it ---------------------------------------
def test_dropout_is_the_identity_unless_training():
    drop = nt.layers.Dropout(0.5, seed=0)
    x = np.arange(6.0).reshape(2, 3)
    for out in (drop(x), drop(x, training=False), drop(x, training=None)):
        assert isinstance(out, nt.Tensor) and np.array_equal(out.numpy(), x)
    assert drop.count_params() == 0 and drop.variables == []


def test_dropout_drops_about_rate_and_scales_the_rest():
    drop = nt.layers.Dropout(0.3, seed=1)
    x = np.ones((400, 500))
    y = drop(x, training=True).numpy()
    kept = y != 0
    assert np.allclose(y[kept], 1 / 0.7)
    assert abs(kept.mean() - 0.7) < 5 * np.sqrt(0.21 / x.size)
    assert abs(y.mean() - 1.0) < 0.01               # the scaling keeps the mean
    assert not np.array_equal(drop(x, training=True).numpy(), y)     # a new mask per call


def test_dropout_keeps_its_inputs_dtype_and_noise_shape_shares_the_mask():
    drop = nt.layers.Dropout(0.5, noise_shape=(None, 1), seed=2)
    y = drop(np.ones((50, 4), np.float32), training=True).numpy()
    assert y.dtype == np.float32
    assert all(len(set(row)) == 1 for row in y)          # one choice per row
    assert set(np.unique(y)) <= {0.0, 2.0}
    with pytest.raises(ValueError, match="noise_shape"):
        drop(np.ones((2, 3, 4)), training=True)


def test_dropout_with_the_same_seed_drops_the_same_and_a_shared_generator_moves_on():
    x = np.ones((3, 5))
    a = nt.layers.Dropout(0.5, seed=4)(x, training=True)
    b = nt.layers.Dropout(0.5, 4)(x, training=True)        # API.md: Dropout(rate, seed=None)
    assert np.array_equal(a.numpy(), b.numpy())
    gen = nt.random.Generator(4)
    first, second = nt.layers.Dropout(0.5, seed=gen), nt.layers.Dropout(0.5, seed=gen)
    assert first.generator is gen
    assert not np.array_equal(first(x, training=True).numpy(), second(x, training=True).numpy())
    from_numpy = [nt.layers.Dropout(0.5, seed=np.random.default_rng(3))(x, training=True)
                  for _ in range(2)]
    assert np.array_equal(from_numpy[0].numpy(), from_numpy[1].numpy())


def test_dropouts_gradient_is_the_mask_scaled_in_both_modes():
    from gradcheck import check_both
    x = np.random.default_rng(0).standard_normal((4, 6))
    check_both(lambda x: nt.layers.Dropout(0.4, seed=7)(x, training=True), x)


@pytest.mark.parametrize("rate", [1.0, -0.1, 1.5, "0.5", None, True])
def test_a_rate_outside_0_1_is_said_at_the_users_line(rate):
    from gradcheck import nbtape_frames
    with pytest.raises(ValueError, match=r"\[0, 1\)") as info:
        nt.layers.Dropout(rate)
    assert nbtape_frames(info.value) == []


def test_a_bad_dropout_seed_is_said_at_the_users_line():
    from gradcheck import nbtape_frames
    with pytest.raises(TypeError, match="whole number") as info:
        nt.layers.Dropout(0.5, seed=1.5)
    assert nbtape_frames(info.value) == []


def test_a_model_with_dropout_summarises_it_without_weights():
    model = Sequential([Dense(4, "relu", seed=0), nt.layers.Dropout(0.2, seed=1), Dense(2, seed=1)])
    model.build((None, 3))
    lines = []
    model.summary(print_fn=lines.append)
    assert "dropout (Dropout)            (None, 4)                 0" in lines[0]
    assert model.count_params() == 26


def test_training_reaches_the_layers_whose_call_takes_it():
    seen = []

    class Noisy(Layer):
        def call(self, x, training=None):
            seen.append(training)
            return x

    model = Sequential([Dense(2, seed=0), Noisy(), nt.nn.relu, nt.layers.Dropout(0.5, seed=0)])
    model(np.ones((1, 3)), training=True)
    model(np.ones((1, 3)))
    assert seen[-2:] == [True, None]      # (a first None: Sequential.build measured its shape)
    assert model.count_params() == 8


def _dropout_model():
    model = Sequential([Dense(8, "relu", seed=1, dtype="float64"), nt.layers.Dropout(0.5, seed=3),
                        Dense(1, seed=2, dtype="float64")])
    model(np.zeros((1, 4)))
    return model


@pytest.mark.parametrize("make_optimizer", [lambda: nt.optimizers.SGD(0.1, momentum=0.9),
                                            lambda: nt.optimizers.Adam(0.01)],
                         ids=["SGD", "Adam"])
def test_a_traced_training_step_with_dropout_is_the_eager_one_bit_for_bit(make_optimizer):
    import copy
    eager_model = _dropout_model()
    traced_model = copy.deepcopy(eager_model)
    assert traced_model.layers[1].generator.state is not eager_model.layers[1].generator.state
    eager_opt, traced_opt = make_optimizer(), make_optimizer()

    def step(model, opt, x, y):
        with nt.GradientTape() as tape:
            loss = np.mean((model(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    traced = nt.function(step)
    rng = np.random.default_rng(0)
    losses = set()
    for _ in range(7):
        x, y = rng.standard_normal((5, 4)), rng.standard_normal((5, 1))
        want, got = step(eager_model, eager_opt, x, y), traced(traced_model, traced_opt, x, y)
        assert got.numpy().tobytes() == want.numpy().tobytes()
        for a, b in zip(eager_model.variables + [eager_model.layers[1].generator.state],
                        traced_model.variables + [traced_model.layers[1].generator.state]):
            assert a.numpy().tobytes() == b.numpy().tobytes()
        losses.add(float(got))
    assert traced.trace_count == 1 and len(losses) == 7
    assert "nt.random.random(" in str(traced.program(traced_model, traced_opt, x, y))
