"""The training examples of the TensorFlow autodiff guides, redone with nbtape (acceptance)."""

import numpy as np
import pytest

import nbtape as nt


# --- seed example 13: clip a gradient inside a custom gradient -----------------------------------
def test_seed_13_identity_with_gradient_clipped_by_norm():
    @nt.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return nt.clip_by_norm(dy, 0.5)
        return y, backward

    v = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        output = clip_gradients(v * v)
    assert float(tape.gradient(output, v)) == 2.0          # 0.5 * d(v*v)/dv, not 4

    with nt.GradientTape() as tape:
        plain = v * v
    assert float(tape.gradient(plain, v)) == 4.0


# --- seed example 17: the three-point SGD loop ---------------------------------------------------
DATA = np.array([[5.0, 2.0], [3.0, 3.0], [4.0, 1.5]])
Y_TRUE = np.array([0.75, 0.5, 0.4])
EXPECTED_17 = np.array([[0.029952], [0.473857]])


def test_seed_17_three_point_sgd_loop_with_assign_sub():
    w = nt.Variable([[0.55], [0.75]])
    for x, y_true in zip(DATA, Y_TRUE):
        with nt.GradientTape() as tape:
            loss = (y_true - x[None, :] @ w) ** 2
        w.assign_sub(0.01 * tape.gradient(loss, w))
    np.testing.assert_allclose(w.numpy(), EXPECTED_17, atol=5e-7)
    assert w.dtype == np.float64


def test_seed_17_three_point_sgd_loop_with_the_optimizer():
    w = nt.Variable([[0.55], [0.75]], name="w")
    opt = nt.optimizers.SGD(learning_rate=0.01)
    for x, y_true in zip(DATA, Y_TRUE):
        with nt.GradientTape() as tape:
            loss = (y_true - x[None, :] @ w) ** 2
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    np.testing.assert_allclose(w.numpy(), EXPECTED_17, atol=5e-7)
    assert np.array2string(w.numpy().round(6).ravel()) == "[0.029952 0.473857]"


# --- seed example 18: find the line y = 2x - 8 from ten points -----------------------------------
X_LINE = np.arange(1.0, 11.0)
Y_LINE = 2 * X_LINE - 8


def test_seed_18_acceptance_sgd_on_squared_error_converges():
    m, c = nt.Variable(0.0, name="m"), nt.Variable(0.0, name="c")
    opt = nt.optimizers.SGD(learning_rate=0.02)
    for _ in range(1000):
        with nt.GradientTape() as tape:
            loss = nt.losses.mean_squared_error(Y_LINE, m * X_LINE + c)
        opt.apply_gradients(zip(tape.gradient(loss, [m, c]), [m, c]))
    assert abs(float(m.numpy()) - 2) < 0.05
    assert abs(float(c.numpy()) + 8) < 0.2
    assert float(loss) < 1e-4


def test_seed_18_the_posts_absolute_error_run_stops_short_of_the_line():
    # Gowri Shankar's post *Automatic Differentiation Using Gradient Tapes*: |y - y_hat|
    # (summed by the tape), m and c from random numbers in [0, 1), 2000 epochs of plain
    # gradient steps with lr 0.001.  Each step moves c by at most 0.01, so it ends near the
    # line but not on it (the post printed about 1.90, -7.55).
    m0, c0 = np.random.default_rng(0).random(2)
    m, c = nt.Variable(m0, name="m"), nt.Variable(c0, name="c")
    for _ in range(2000):
        with nt.GradientTape() as tape:
            loss = np.abs(Y_LINE - (m * X_LINE + c))
        dm, dc = tape.gradient(loss, [m, c])
        m.assign_sub(dm * 0.001)
        c.assign_sub(dc * 0.001)
    assert float(m.numpy()) == pytest.approx(1.898962, abs=1e-6)
    assert float(c.numpy()) == pytest.approx(-7.264213, abs=1e-6)
    assert abs(float(m.numpy()) - 2) > 0.05                # short of the line


# --- seed example 21: a dense layer --------------------------------------------------------------
def test_seed_21_dense_layer_gradients_have_the_shapes_of_the_weights():
    rng = np.random.default_rng(0)
    w = nt.Variable(rng.standard_normal((3, 2)), name="w")
    b = nt.Variable(np.zeros(2), name="b")
    x = np.array([[1.0, 2.0, 3.0]])
    with nt.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = np.mean(y ** 2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    assert dl_dw.shape == (3, 2) and dl_db.shape == (2,)
    y0 = x @ w.numpy()
    np.testing.assert_allclose(dl_dw.numpy(), x.T @ y0, rtol=1e-12)     # d mean(y^2) = y dy
    np.testing.assert_allclose(tape.gradient(loss, {"w": w, "b": b})["b"].numpy(), y0[0])

    layer = nt.layers.Dense(2, activation="relu", seed=0)
    with nt.GradientTape() as tape:
        loss = np.mean(layer(nt.constant([[1.0, 2.0, 3.0]])) ** 2)
    grads = tape.gradient(loss, layer.trainable_variables)
    assert [(v.name, g.shape) for v, g in zip(layer.trainable_variables, grads)] == [
        ("dense/kernel", (3, 2)), ("dense/bias", (2,))]


# --- seed examples 22 and 23: a digits classifier ------------------------------------------------
def _digits_model(seed):
    rng = np.random.default_rng(seed)
    return nt.Sequential([nt.layers.Dense(64, activation="relu", seed=rng),
                          nt.layers.Dense(10, seed=rng)]), rng


def _batches(n, batch_size, rng):
    order = rng.permutation(n)
    return [order[k:k + batch_size] for k in range(0, n, batch_size)]


def test_seed_22_digits_mlp_with_adam_reaches_95_percent():
    (x_train, y_train), (x_test, y_test) = nt.datasets.load_digits(test_fraction=0.2, seed=0)
    model, rng = _digits_model(seed=0)
    optimizer = nt.optimizers.Adam(learning_rate=0.005)
    for epoch in range(20):
        for batch in _batches(len(x_train), 32, rng):
            with nt.GradientTape() as tape:
                logits = model(x_train[batch])
                loss = np.mean(nt.losses.sparse_categorical_crossentropy(
                    y_train[batch], logits, from_logits=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy = np.mean(np.argmax(model(x_test).numpy(), axis=-1) == y_test)
    assert accuracy >= 0.95, accuracy
    assert int(optimizer.iterations.numpy()) == 20 * 45


def test_seed_23_clip_by_global_norm_before_apply_gradients():
    (x_train, y_train), _ = nt.datasets.load_digits(seed=1)
    model, rng = _digits_model(seed=1)
    optimizer = nt.optimizers.SGD(learning_rate=0.5)
    clip = 0.5
    norms = []
    for batch in _batches(len(x_train), 64, rng)[:10]:
        with nt.GradientTape() as tape:
            loss = np.mean(nt.losses.sparse_categorical_crossentropy(
                y_train[batch], model(x_train[batch]), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        clipped, norm = nt.clip_by_global_norm(grads, clip)
        assert float(nt.global_norm(clipped)) <= clip * (1 + 1e-6)
        for g, cg in zip(grads, clipped):
            assert cg.shape == g.shape and cg.dtype == g.dtype
        norms.append(float(norm))
        optimizer.apply_gradients(zip(clipped, model.trainable_variables))
    assert max(norms) > clip          # the clipping did act
