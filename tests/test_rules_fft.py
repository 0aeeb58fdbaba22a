"""nbtape/rules/fft.py: every transform, norm and length against finite differences."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, check_hvp, check_reverse_over_forward, crandn, randn

F = np.fft
NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("fn", [F.fft, F.ifft])
@pytest.mark.parametrize("shape, kw", [
    ((5,), {}), ((2, 4), {}), ((3, 4), {"axis": 0}), ((4,), {"n": 6}), ((2, 5), {"n": 3}),
    ((3, 2), {"n": 4, "axis": -2}),
])
def test_complex_transforms_1d(fn, norm, shape, kw, rng):
    check_both(lambda x: fn(x, norm=norm, **kw), crandn(rng, *shape))
    check_both(lambda x: fn(x, norm=norm, **kw), randn(rng, *shape))       # real in, complex out


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("fn", [F.fft2, F.ifft2, F.fftn, F.ifftn])
@pytest.mark.parametrize("shape, kw", [
    ((3, 4), {}), ((2, 3, 2), {}), ((2, 3, 2), {"axes": (0, 2)}),
    ((3, 4), {"s": (2, 5), "axes": (0, 1)}),
    ((2, 3, 4), {"s": (4,), "axes": (-2,)}),
])
def test_complex_transforms_nd(fn, norm, shape, kw, rng):
    check_both(lambda x: fn(x, norm=norm, **kw), crandn(rng, *shape))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape, kw", [
    ((6,), {}), ((5,), {}), ((2, 5), {"axis": 0}), ((4,), {"n": 7}), ((6,), {"n": 4}),
])
def test_rfft_and_ihfft(norm, shape, kw, rng):
    check_both(lambda x: F.rfft(x, norm=norm, **kw), randn(rng, *shape))
    check_both(lambda x: F.ihfft(x, norm=norm, **kw), randn(rng, *shape))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape, kw", [
    ((4,), {}), ((4,), {"n": 7}), ((4,), {"n": 6}), ((5,), {"n": 4}), ((3,), {"n": 9}),
    ((2, 4), {"axis": 0}), ((3, 2), {"axis": 0, "n": 5}), ((1,), {"n": 1}), ((2,), {}),
])
def test_irfft_and_hfft(norm, shape, kw, rng):
    check_both(lambda x: F.irfft(x, norm=norm, **kw), crandn(rng, *shape))
    check_both(lambda x: F.hfft(x, norm=norm, **kw), crandn(rng, *shape))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape, kw", [
    ((3, 4), {}), ((2, 3, 4), {"axes": (0, 2)}), ((3, 4), {"s": (4, 3), "axes": (0, 1)}),
    ((2, 3, 5), {}),
])
def test_real_transforms_nd(norm, shape, kw, rng):
    fwd = F.rfft2 if len(shape) == 2 and "axes" not in kw else F.rfftn
    inv = F.irfft2 if fwd is F.rfft2 else F.irfftn
    check_both(lambda x: fwd(x, norm=norm, **kw), randn(rng, *shape))
    check_both(lambda x: inv(x, norm=norm, **kw), crandn(rng, *shape))


def test_round_trips_and_real_inputs_give_real_gradients(rng):
    x = nt.constant(randn(rng, 6))
    with nt.GradientTape() as t:
        t.watch(x)
        y = F.irfft(F.rfft(x) * np.array([1.0, 2.0, 0.5, 1.0]), n=6)
        loss = np.sum(y * np.arange(6.0))
    g = t.gradient(loss, x)
    assert g.dtype == np.float64
    check_both(lambda x: F.irfft(F.rfft(x) * np.array([1.0, 2.0, 0.5, 1.0]), n=6), randn(rng, 6))
    check_both(lambda x: F.ifft(F.fft(x, norm="ortho"), norm="ortho").real, randn(rng, 2, 3))


@pytest.mark.parametrize("fn", [F.fftshift, F.ifftshift])
@pytest.mark.parametrize("shape, kw", [((5,), {}), ((3, 4), {}), ((3, 4), {"axes": 0}),
                                       ((2, 3, 5), {"axes": (0, 2)})])
def test_shifts(fn, shape, kw, rng):
    check_both(lambda x: fn(x, **kw), randn(rng, *shape))


def test_second_order_through_transforms(rng):
    check_hvp(lambda x: np.abs(F.fft(x)), randn(rng, 5))
    check_hvp(lambda x: F.irfft(F.rfft(x) ** 2, n=5), randn(rng, 5))
    check_hvp(lambda x: F.fftshift(F.fftn(x, norm="ortho")).real, randn(rng, 2, 3))
    check_reverse_over_forward(lambda x: np.abs(F.fft(x, n=6)) ** 2, randn(rng, 5))
    check_reverse_over_forward(lambda x: F.irfft(F.rfft(x) ** 2, n=5), randn(rng, 5))
