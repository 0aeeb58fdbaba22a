import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_forward
from nbtape import losses



def _sig(z):
    return 1 / (1 + np.exp(-z))


# --- values (Keras's documented examples and the formulas) ---------------------------------------
def test_keras_documented_values():
    np.testing.assert_allclose(
        losses.binary_crossentropy([[0.0, 1.0], [0.0, 0.0]], [[0.6, 0.4], [0.4, 0.6]]),
        [0.916291, 0.713558], rtol=1e-5)
    np.testing.assert_allclose(
        losses.categorical_crossentropy([[0, 1, 0], [0, 0, 1]],
                                        [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]),
        [0.051293, 2.302585], rtol=1e-5)
    np.testing.assert_allclose(
        losses.sparse_categorical_crossentropy([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]),
        [0.051293, 2.302585], rtol=1e-5)


def test_regression_losses_reduce_the_last_axis_only(rng):
    yt, yp = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(losses.mean_squared_error(yt, yp), ((yt - yp) ** 2).mean(-1))
    np.testing.assert_allclose(losses.mean_absolute_error(yt, yp), np.abs(yt - yp).mean(-1))
    yt3, yp3 = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 3))
    assert losses.mean_squared_error(yt3, yp3).shape == (2, 4)
    assert losses.mean_squared_error(yt[0], yp[0]).shape == ()      # one sample
    assert float(losses.mean_squared_error(2.0, 5.0)) == 9.0        # a scalar stays a scalar


def test_targets_of_shape_n_line_up_with_predictions_of_shape_n_1():
    y_true = np.arange(5.0)
    y_pred = (np.arange(5.0) + 1)[:, None]
    out = losses.mean_squared_error(y_true, y_pred)
    assert out.shape == (5,)                     # not a broadcast (5, 5)
    np.testing.assert_allclose(out, np.ones(5))
    assert losses.binary_crossentropy(np.ones((3, 1)), np.full(3, 0.5)).shape == (3,)


def test_y_true_takes_the_prediction_dtype():
    yp = nt.constant(np.array([[0.2, 0.7]], dtype="float32"))
    for loss in (losses.mean_squared_error, losses.mean_absolute_error,
                 losses.binary_crossentropy):
        assert loss(np.array([[0, 1]]), yp).dtype == np.float32, loss.__name__
    assert losses.sparse_categorical_crossentropy([1], yp).dtype == np.float32


def test_tensors_in_give_tensors_plain_in_give_plain():
    assert isinstance(losses.mean_squared_error([1.0], nt.constant([2.0])), nt.Tensor)
    assert isinstance(losses.mean_squared_error(nt.Variable([1.0]), [2.0]), nt.Tensor)
    assert not isinstance(losses.mean_squared_error([1.0], [2.0]), nt.Tensor)


def test_binary_crossentropy_probabilities_agree_with_logits(rng):
    z = rng.standard_normal((3, 4)) * 2
    y = (rng.uniform(size=(3, 4)) > 0.5).astype(float)
    np.testing.assert_allclose(losses.binary_crossentropy(y, z, from_logits=True),
                               losses.binary_crossentropy(y, _sig(z)), rtol=1e-6)
    np.testing.assert_allclose(
        losses.binary_crossentropy(y, z, from_logits=True),
        np.mean(-(y * np.log(_sig(z)) + (1 - y) * np.log(1 - _sig(z))), -1), rtol=1e-10)


def test_categorical_probabilities_agree_with_logits(rng):
    z = rng.standard_normal((3, 4))
    labels = np.array([0, 3, 2])
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    a = losses.sparse_categorical_crossentropy(labels, z, from_logits=True)
    np.testing.assert_allclose(a, losses.sparse_categorical_crossentropy(labels, p), rtol=1e-6)
    np.testing.assert_allclose(a, losses.categorical_crossentropy(np.eye(4)[labels], z,
                                                                  from_logits=True), rtol=1e-10)
    np.testing.assert_allclose(a, losses.categorical_crossentropy(np.eye(4)[labels], p),
                               rtol=1e-6)
    np.testing.assert_allclose(a, -np.log(p[np.arange(3), labels]), rtol=1e-10)


def test_probabilities_are_clipped_so_log_never_sees_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bce = losses.binary_crossentropy([[1.0, 0.0]], [[0.0, 1.0]])
        scce = losses.sparse_categorical_crossentropy([0], [[0.0, 1.0]])
    np.testing.assert_allclose(bce, [-np.log(1e-7)], rtol=1e-6)
    np.testing.assert_allclose(scce, [-np.log(1e-7)], rtol=1e-6)


def test_label_smoothing_and_ignore_class(rng):
    z = np.array([[2.0, -1.0]])
    y = np.array([[1.0, 0.0]])
    np.testing.assert_allclose(losses.binary_crossentropy(y, z, from_logits=True,
                                                          label_smoothing=0.2),
                               losses.binary_crossentropy([[0.9, 0.1]], z, from_logits=True))
    np.testing.assert_allclose(
        losses.categorical_crossentropy(y, z, from_logits=True, label_smoothing=0.2),
        losses.categorical_crossentropy([[0.9, 0.1]], z, from_logits=True))
    logits = rng.standard_normal((3, 4))
    full = losses.sparse_categorical_crossentropy([1, 2, 3], logits, from_logits=True)
    out = losses.sparse_categorical_crossentropy([1, -1, 3], logits, from_logits=True,
                                                 ignore_class=-1)
    np.testing.assert_allclose(out, [full[0], 0.0, full[2]])


def test_sparse_labels_may_carry_a_trailing_axis_of_one(rng):
    z = rng.standard_normal((3, 4))
    np.testing.assert_allclose(
        losses.sparse_categorical_crossentropy([[1], [0], [3]], z, from_logits=True),
        losses.sparse_categorical_crossentropy([1, 0, 3], z, from_logits=True))


def test_sparse_label_errors_are_clear():
    with pytest.raises(ValueError, match="one integer label per sample"):
        losses.sparse_categorical_crossentropy([0, 1, 2], np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        losses.sparse_categorical_crossentropy([0, 3], np.zeros((2, 3)), from_logits=True)
    with pytest.raises(ValueError, match="last axis"):
        losses.sparse_categorical_crossentropy([0, 1], np.zeros((3, 2)), axis=0)


# --- gradients: every loss passes check_gradients, also at extreme inputs ------------------------
YT = np.random.default_rng(11).uniform(size=(3, 4))
YP = np.random.default_rng(12).uniform(0.05, 0.95, size=(3, 4))
LABELS = np.array([2, 0, 3])
LOGITS = np.random.default_rng(13).standard_normal((3, 4)) * 2
EXTREME = np.array([[1000.0, -1000.0, 0.0, 999.0], [-1000.0, -1000.0, -1000.0, 1000.0],
                    [0.5, -0.5, 1000.0, -1000.0]])


@pytest.mark.parametrize("name, f, args", [
    ("mse", losses.mean_squared_error, (YT, YP)),
    ("mae", losses.mean_absolute_error, (YT, YP)),
    ("bce", losses.binary_crossentropy, (YT, YP)),
    ("bce logits", lambda t, p: losses.binary_crossentropy(t, p, from_logits=True), (YT, LOGITS)),
    ("cce", losses.categorical_crossentropy, (YT, YP)),
    ("cce logits", lambda t, p: losses.categorical_crossentropy(t, p, from_logits=True),
     (YT, LOGITS)),
    ("scce", lambda p: losses.sparse_categorical_crossentropy(LABELS, p), (YP,)),
    ("scce logits",
     lambda p: losses.sparse_categorical_crossentropy(LABELS, p, from_logits=True), (LOGITS,)),
])
def test_check_gradients(name, f, args):
    assert nt.check_gradients(f, *args) < 1e-6


@pytest.mark.parametrize("name, f", [
    ("bce", lambda p: losses.binary_crossentropy(np.eye(4)[[2, 0, 3]], p, from_logits=True)),
    ("cce", lambda p: losses.categorical_crossentropy(np.eye(4)[[2, 0, 3]], p, from_logits=True)),
    ("scce", lambda p: losses.sparse_categorical_crossentropy(LABELS, p, from_logits=True)),
])
def test_from_logits_at_plus_minus_1000_no_nan_and_correct_gradients(name, f):
    x = nt.constant(EXTREME)
    with nt.GradientTape() as tape:
        tape.watch(x)
        loss = f(x)
    g = tape.gradient(loss, x).numpy()
    assert np.all(np.isfinite(loss.numpy())) and np.all(np.isfinite(g))
    assert nt.check_gradients(f, EXTREME, atol=1e-5) < 1e-5


@pytest.mark.parametrize("f", [losses.mean_squared_error, losses.mean_absolute_error])
def test_regression_losses_at_extreme_inputs(f):
    # values near 1e6: finite differences carry ~1e-4 of round-off, so compare relatively
    nt.check_gradients(f, EXTREME / 3, EXTREME[::-1] + 0.25, rtol=1e-6, atol=1e-3)


@pytest.mark.parametrize("f, args", [
    (losses.mean_squared_error, (YT, YP)),
    (losses.mean_absolute_error, (YT, YP)),
    (losses.binary_crossentropy, (YT, YP)),
    (lambda t, p: losses.binary_crossentropy(t, p, from_logits=True), (YT, LOGITS)),
    (losses.categorical_crossentropy, (YT, YP)),
    (lambda p: losses.sparse_categorical_crossentropy(LABELS, p, from_logits=True), (LOGITS,)),
])
def test_forward_mode_agrees(f, args):
    check_forward(f, *args)


def test_extreme_logit_values_are_exact():
    # the wrong class at 2000 logits apart costs exactly 2000
    loss = losses.sparse_categorical_crossentropy([1], np.array([[1000.0, -1000.0]]),
                                                  from_logits=True)
    assert loss[0] == 2000.0
    bce = losses.binary_crossentropy([[1.0, 0.0]], np.array([[-1000.0, -1000.0]]),
                                     from_logits=True)
    assert bce[0] == 500.0


def test_probability_losses_near_zero_and_one_check_gradients():
    p = np.array([[1e-4, 1 - 1e-4, 0.5]])
    y = np.array([[1.0, 0.0, 1.0]])
    assert nt.check_gradients(lambda q: losses.binary_crossentropy(y, q), p, eps=1e-9,
                              rtol=1e-4) < 1e-2
    g = nt.grad(lambda q: np.sum(losses.binary_crossentropy(y, q)))(p)
    np.testing.assert_allclose(np.asarray(g), [[-1e4 / 3, 1e4 / 3, -2 / 3]], rtol=1e-6)
    probs = np.array([[1e-4, 0.5 - 1e-4, 0.5]])
    assert nt.check_gradients(lambda q: losses.sparse_categorical_crossentropy([0], q), probs,
                              eps=1e-9, rtol=1e-4) < 1e-2
    assert nt.check_gradients(lambda q: losses.categorical_crossentropy([[1.0, 0, 0]], q), probs,
                              eps=1e-9, rtol=1e-4) < 1e-2


def test_gradient_with_respect_to_targets_too():
    assert nt.check_gradients(lambda t: losses.mean_squared_error(t, YP), YT) < 1e-6
    assert nt.check_gradients(
        lambda t: losses.binary_crossentropy(t, LOGITS, from_logits=True), YT) < 1e-6
