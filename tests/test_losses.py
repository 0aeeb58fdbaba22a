import os
import warnings

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_forward
from nbtape.training import losses



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


# --- a non-default axis is honoured -----------------------------------------------------------
def _bce_formula(y, p, axis):
    return np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p)), axis=axis)


def test_binary_crossentropy_reduces_the_axis_it_is_given():
    gen = np.random.default_rng(11)
    y = (gen.uniform(size=(3, 4)) > 0.5).astype(float)
    p = gen.uniform(0.05, 0.95, size=(3, 4))
    z = gen.standard_normal((3, 4))
    out = losses.binary_crossentropy(y, p, axis=0)
    assert out.shape == (4,)
    np.testing.assert_allclose(out, _bce_formula(y, p, 0), rtol=1e-10)
    np.testing.assert_allclose(out, losses.binary_crossentropy(y.T, p.T), rtol=1e-12)
    np.testing.assert_allclose(losses.binary_crossentropy(y, z, from_logits=True, axis=0),
                               _bce_formula(y, _sig(z), 0), rtol=1e-8)
    smoothed = losses.binary_crossentropy(y, p, label_smoothing=0.2, axis=0)
    np.testing.assert_allclose(smoothed, _bce_formula(y * 0.8 + 0.1, p, 0), rtol=1e-10)
    y3, p3 = np.stack([y, 1 - y]), np.stack([p, p[::-1]])      # (2, 3, 4): the middle axis
    np.testing.assert_allclose(losses.binary_crossentropy(y3, p3, axis=1),
                               _bce_formula(y3, p3, 1), rtol=1e-10)


def test_categorical_crossentropy_uses_the_axis_it_is_given_for_classes():
    gen = np.random.default_rng(12)
    labels = np.array([0, 2, 1, 2])
    y = np.eye(3)[labels].T                        # (3 classes, 4 samples): classes on axis 0
    p = gen.uniform(0.1, 1.0, size=(3, 4))
    z = gen.standard_normal((3, 4))
    out = losses.categorical_crossentropy(y, p, axis=0)
    assert out.shape == (4,)
    q = p / p.sum(axis=0)                          # renormalised over the class axis
    np.testing.assert_allclose(out, -np.log(q[labels, np.arange(4)]), rtol=1e-10)
    np.testing.assert_allclose(out, losses.categorical_crossentropy(y.T, p.T), rtol=1e-12)
    logp = z - np.log(np.exp(z).sum(axis=0))
    np.testing.assert_allclose(losses.categorical_crossentropy(y, z, from_logits=True, axis=0),
                               -logp[labels, np.arange(4)], rtol=1e-10)
    # smoothing spreads over the 3 classes of axis 0, not the 4 samples of the last axis
    smooth = y * 0.7 + 0.3 / 3
    np.testing.assert_allclose(
        losses.categorical_crossentropy(y, z, from_logits=True, label_smoothing=0.3, axis=0),
        -np.sum(smooth * logp, axis=0), rtol=1e-10)
    np.testing.assert_allclose(losses.categorical_crossentropy(y, p, label_smoothing=0.3, axis=0),
                               -np.sum(smooth * np.log(q), axis=0), rtol=1e-10)
    y3 = np.stack([y, y[::-1]], axis=0)            # (2, 3, 4): classes on the middle axis
    p3 = np.stack([p, p[::-1]], axis=0)
    np.testing.assert_allclose(
        losses.categorical_crossentropy(y3, p3, axis=1),
        losses.categorical_crossentropy(np.moveaxis(y3, 1, -1), np.moveaxis(p3, 1, -1)),
        rtol=1e-12)


@pytest.mark.parametrize("name, f", [
    ("bce", lambda p: losses.binary_crossentropy(np.eye(4)[:3], p, axis=0)),
    ("bce logits", lambda p: losses.binary_crossentropy(np.eye(4)[:3], p, True, axis=0)),
    ("cce", lambda p: losses.categorical_crossentropy(np.eye(4)[:3], p, axis=0)),
    ("cce logits", lambda p: losses.categorical_crossentropy(np.eye(4)[:3], p, True, axis=0)),
])
def test_gradients_with_a_non_default_axis(name, f):
    p = np.random.default_rng(13).uniform(0.1, 0.9, size=(3, 4))
    assert nt.check_gradients(f, p) < 1e-6
    check_forward(f, p)


# --- mismatched shapes: one paragraph at the user's line ----------------------------------------
@pytest.mark.parametrize("loss", [losses.mean_squared_error, losses.mean_absolute_error,
                                  losses.binary_crossentropy, losses.categorical_crossentropy])
@pytest.mark.parametrize("t, p, hint", [
    ((4, 3), (4, 2), "same number of values per sample"),
    ((5, 3), (4, 3), "same batch"),
    ((3,), (3, 3), "pair every target with every prediction"),
    ((4, 3), (3,), "broadcast them to (4, 3)"),
])
def test_mismatched_shapes_say_what_happened_and_what_to_do(loss, t, p, hint):
    if loss is losses.categorical_crossentropy and t == p[:-1]:
        hint = "use sparse_categorical_crossentropy"      # class numbers, most likely
    with pytest.raises(ValueError) as info:
        loss(np.zeros(t), np.full(p, 0.5))
    message = str(info.value)
    assert f"{loss.__name__} needs y_true and y_pred of the same shape" in message
    assert f"y_true of shape {t} and y_pred of shape {p}" in message and hint in message
    assert "losses.py" not in {os.path.basename(e.path) for e in info.traceback}


def test_class_numbers_given_to_categorical_crossentropy_point_to_the_sparse_loss():
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy"):
        losses.categorical_crossentropy([0, 2], np.full((2, 3), 1 / 3))


def test_shapes_that_still_line_up():
    p = np.full((4, 3), 0.25)
    assert losses.mean_squared_error(0.5, p).shape == (4,)               # one target for all
    assert losses.mean_squared_error(np.zeros((1, 3)), p).shape == (4,)  # one row for all
    assert losses.binary_crossentropy(np.ones(4), np.full((4, 1), 0.5)).shape == (4,)
