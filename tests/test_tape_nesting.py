"""Tapes and accumulators inside each other: higher-order and mixed-mode derivatives."""
import contextlib

import numpy as np
import pytest

import nbtape as nt


def f_vec(x):
    """A smooth R^3 -> R function with a dense, non-trivial Hessian."""
    return np.sum(np.sin(x) * x[0]) + x[1] * x[2] ** 3 + np.sum(np.exp(x * 0.5))


def hessian_f_vec(x):
    x0, x1, x2 = x
    H = np.diag(-x0 * np.sin(x) + 0.25 * np.exp(x * 0.5))
    H[0, 0] += 2 * np.cos(x0)
    H[0, 1] += np.cos(x1)
    H[1, 0] += np.cos(x1)
    H[0, 2] += np.cos(x2)
    H[2, 0] += np.cos(x2)
    H[2, 2] += 6 * x1 * x2
    H[1, 2] += 3 * x2 ** 2
    H[2, 1] += 3 * x2 ** 2
    return H


X0 = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 2.0, -0.5])


def test_hessian_reference_is_right():
    """Check the hand-written Hessian above against finite differences of nt.grad."""
    eps = 1e-5
    g = nt.grad(f_vec)
    num = np.stack([(g(X0 + eps * e) - g(X0 - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(hessian_f_vec(X0), num, rtol=1e-6, atol=1e-7)


# --- reverse over reverse ------------------------------------------------------------------------
@pytest.mark.parametrize("x0, d1, d2", [(1.0, 3.0, 6.0), (5.0, 75.0, 30.0), (-2.0, 12.0, -12.0)])
def test_second_derivative_with_a_variable(x0, d1, d2):
    x = nt.Variable(x0)
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = x ** 3
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    assert float(dy) == d1 and float(d2y) == d2


def test_second_derivative_with_a_watched_constant():
    x = nt.constant(2.0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = np.sin(x) * x
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    np.testing.assert_allclose(float(dy), np.cos(2.0) * 2.0 + np.sin(2.0))
    np.testing.assert_allclose(float(d2y), -np.sin(2.0) * 2.0 + 2 * np.cos(2.0))


def test_third_derivative_with_three_tapes():
    x = nt.Variable(2.0)
    with nt.GradientTape() as t3:
        with nt.GradientTape() as t2:
            with nt.GradientTape() as t1:
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (float(d1), float(d2), float(d3)) == (32.0, 48.0, 48.0)


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 6])
def test_nth_derivative_to_any_depth(depth):
    """d^n/dx^n of x^6 at x = 1 is 6!/(6-n)!, by n tapes inside each other."""
    derivative = _nested_derivative(lambda v: v ** 6, nt.constant(1.0), depth)
    assert float(derivative) == np.prod(np.arange(6, 6 - depth, -1))


def test_tapes_opened_with_an_exit_stack():
    """Five tapes opened at once; each gradient is recorded by every tape still open."""
    x = nt.constant(0.7)
    with contextlib.ExitStack() as stack:
        tapes = [stack.enter_context(nt.GradientTape()) for _ in range(5)]
        for t in tapes:
            t.watch(x)
        d = np.sin(x)
        for t in reversed(tapes[1:]):
            d = t.gradient(d, x)
    d = tapes[0].gradient(d, x)
    # d^5/dx^5 sin = cos
    np.testing.assert_allclose(float(d), np.cos(0.7))


def _nested_derivative(f, x, n):
    """The n-th derivative of f at x using n nested GradientTapes."""
    if n == 0:
        return f(x)
    with nt.GradientTape() as tape:
        tape.watch(x)
        inner = _nested_derivative(f, x, n - 1)
    return tape.gradient(inner, x)


def test_fourth_derivative_of_exp_is_exp():
    x = nt.constant(0.5)
    np.testing.assert_allclose(float(_nested_derivative(np.exp, x, 4)), np.exp(0.5))


def test_hessian_by_nested_tapes_is_symmetric_and_right():
    x = nt.constant(X0)
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = f_vec(x)
        g = inner.gradient(y, x)
    H = outer.jacobian(g, x).numpy()
    assert H.shape == (3, 3)
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    np.testing.assert_allclose(H, hessian_f_vec(X0), rtol=1e-10, atol=1e-12)


def test_gradient_of_gradient_norm():
    """A common second-order pattern: penalise the norm of a gradient."""
    w = nt.Variable([1.0, 2.0])
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            loss = np.sum(w ** 3)
        g = inner.gradient(loss, w)               # 3 w^2
        penalty = np.sum(g * g)                   # 9 sum w^4
    np.testing.assert_allclose(outer.gradient(penalty, w).numpy(), 36 * np.array([1.0, 8.0]))


def test_inner_persistent_outer_persistent():
    x = nt.Variable(3.0)
    with nt.GradientTape(persistent=True) as outer:
        with nt.GradientTape(persistent=True) as inner:
            y = x ** 3
            z = x ** 2
        dy = inner.gradient(y, x)
        dz = inner.gradient(z, x)
    assert float(outer.gradient(dy, x)) == 18.0
    assert float(outer.gradient(dz, x)) == 2.0
    assert float(outer.gradient(y, x)) == 27.0      # the outer tape saw the forward too


def test_inner_gradient_taken_outside_the_outer_tape_is_not_recorded():
    x = nt.Variable(3.0)
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = x ** 3
    dy = inner.gradient(y, x)
    assert float(dy) == 27.0
    assert outer.gradient(dy, x) is None


def test_outer_tape_only_sees_what_it_watched():
    a = nt.constant(2.0)
    b = nt.constant(3.0)
    with nt.GradientTape() as outer:
        outer.watch(b)
        with nt.GradientTape() as inner:
            inner.watch(a)
            y = a * a * b
        ga = inner.gradient(y, a)     # 2ab
    assert float(ga) == 12.0
    assert float(outer.gradient(ga, b)) == 4.0     # d(2ab)/db = 2a


def test_inner_tape_does_not_see_outer_watches():
    a = nt.constant(2.0)
    with nt.GradientTape() as outer:
        outer.watch(a)
        with nt.GradientTape() as inner:
            y = a * a
    assert inner.gradient(y, a) is None
    assert float(outer.gradient(y, a)) == 4.0


def test_second_derivative_through_matmul_and_broadcasting():
    W = nt.Variable(np.array([[0.5, -1.0], [2.0, 0.3]]))
    x = np.array([1.0, 2.0])
    with nt.GradientTape() as outer:
        with nt.GradientTape() as inner:
            y = np.sum(np.tanh(W @ x) ** 2)
        g = inner.gradient(y, W)
        s = np.sum(g)
    h = outer.gradient(s, W).numpy()
    eps = 1e-6

    def s_of(w):
        wv = nt.Variable(w)
        with nt.GradientTape() as t:
            yy = np.sum(np.tanh(wv @ x) ** 2)
        return float(np.sum(t.gradient(yy, wv)))
    W0 = W.numpy()
    num = np.zeros_like(W0)
    for i in np.ndindex(2, 2):
        wp, wm = W0.copy(), W0.copy()
        wp[i] += eps
        wm[i] -= eps
        num[i] = (s_of(wp) - s_of(wm)) / (2 * eps)
    np.testing.assert_allclose(h, num, rtol=1e-5, atol=1e-7)


def test_outer_jacobian_of_inner_jacobian():
    """Third-order tensor: d/dx of the Jacobian of x -> x**3 (elementwise)."""
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as outer:
        outer.watch(x)
        with nt.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        J = inner.jacobian(y, x)             # diag(3x^2)
    T = outer.jacobian(J, x).numpy()         # T[i, j, k] = d J[i, j] / d x[k]
    assert T.shape == (2, 2, 2)
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 0] = 6.0
    expected[1, 1, 1] = 12.0
    np.testing.assert_allclose(T, expected)


# --- mixed forward / reverse -------------------------------------------------------------------------
def test_forward_over_reverse_hvp_equals_H_at_v():
    x = nt.constant(X0)
    with nt.ForwardAccumulator(x, V) as acc:
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = f_vec(x)
        g = tape.gradient(y, x)
    hvp = acc.jvp(g)
    np.testing.assert_allclose(hvp.numpy(), hessian_f_vec(X0) @ V, rtol=1e-10)


def test_forward_over_reverse_with_variable():
    w = nt.Variable(X0)
    with nt.ForwardAccumulator(w, V) as acc:
        with nt.GradientTape() as tape:
            y = f_vec(w)
        g = tape.gradient(y, w)
    np.testing.assert_allclose(acc.jvp(g).numpy(), hessian_f_vec(X0) @ V, rtol=1e-10)


def test_reverse_over_forward_hvp_equals_H_at_v():
    x = nt.constant(X0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        with nt.ForwardAccumulator(x, V) as acc:
            y = f_vec(x)
        jvp = acc.jvp(y)                 # <grad f, v>
    hvp = tape.gradient(jvp, x)
    np.testing.assert_allclose(float(jvp), np.dot(nt.grad(f_vec)(X0), V), rtol=1e-12)
    np.testing.assert_allclose(hvp.numpy(), hessian_f_vec(X0) @ V, rtol=1e-10)


def test_forward_over_forward_second_directional_derivative():
    x = nt.constant(X0)
    u = np.array([0.5, -1.0, 2.0])
    with nt.ForwardAccumulator(x, u) as outer:
        with nt.ForwardAccumulator(x, V) as inner:
            y = f_vec(x)
        d = inner.jvp(y)                 # v . grad f
    dd = outer.jvp(d)                    # u^T H v
    np.testing.assert_allclose(float(dd), u @ hessian_f_vec(X0) @ V, rtol=1e-10)


def test_tape_inside_accumulator_inside_tape():
    """Third order, mixed: d/dx [ (H(x) v) . w ] by reverse over forward over reverse."""
    x = nt.constant(np.array([0.4, 0.9]))
    v = np.array([1.0, -1.0])
    w = np.array([2.0, 0.5])

    def f(x):
        return np.sum(x ** 4) + x[0] ** 2 * x[1] ** 3

    with nt.GradientTape() as outermost:
        outermost.watch(x)
        with nt.ForwardAccumulator(x, v) as acc:
            with nt.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        hv = acc.jvp(g)
        s = np.sum(hv * w)
    third = outermost.gradient(s, x).numpy()

    def s_plain(p):
        xx = nt.constant(p)
        with nt.ForwardAccumulator(xx, v) as a:
            with nt.GradientTape() as t:
                t.watch(xx)
                yy = f(xx)
            gg = t.gradient(yy, xx)
        return float(np.sum(a.jvp(gg).numpy() * w))
    eps = 1e-6
    num = np.array([(s_plain(x.numpy() + eps * e) - s_plain(x.numpy() - eps * e)) / (2 * eps)
                    for e in np.eye(2)])
    np.testing.assert_allclose(third, num, rtol=1e-6, atol=1e-8)


def test_accumulator_records_on_outer_tape_only_where_connected():
    x = nt.constant(1.5)
    other = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(other)
        with nt.ForwardAccumulator(x, np.array(1.0)) as acc:
            y = np.sin(x) * other
        t = acc.jvp(y)
    np.testing.assert_allclose(float(t), np.cos(1.5) * 2.0)
    np.testing.assert_allclose(float(tape.gradient(t, other)), np.cos(1.5))
