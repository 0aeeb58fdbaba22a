"""Discrete Fourier transforms (``np.fft``).

Every transform is linear, so its JVP is the transform of the tangent.  The
adjoint of a DFT is the inverse DFT with the opposite normalization: the adjoint
of ``fft(x)`` (unscaled) is ``n * ifft(g)``, which is ``ifft(g, norm="forward")``,
and "ortho" is unitary.  Padding or truncating the input to ``n`` is undone by
truncating or zero-padding the adjoint.

The real transforms keep half a spectrum.  rfft's adjoint zero-fills the missing
half before the inverse transform (its real part is the adjoint on real inputs).
irfft reads bins ``1 .. n/2-1`` twice, once as ``x_k`` and once as ``conj(x_k)``,
and the imaginary parts of bins 0 and n/2 not at all; in TensorFlow's convention
for complex inputs its adjoint is therefore ``rfft(g)`` with those bins counted twice.
"""
import numpy as np

from ..extend import defjvp, defvjp
from ..core.arrays import is_foreign
from .util import shape_of

F = np.fft

_ADJOINT_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _axes_sizes(a, s, axes):
    """The transformed axes (non-negative) and their lengths after padding."""
    nd = len(shape_of(a))
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    axes = [ax % nd for ax in axes]
    sizes = [shape_of(a)[ax] for ax in axes] if s is None else list(s)
    return axes, sizes


def _fit(g, sizes, axes):
    """Truncate or zero-pad ``g`` to ``sizes`` along ``axes``."""
    for ax, n in zip(axes, sizes):
        have = shape_of(g)[ax]
        if have > n:
            g = g[(slice(None),) * ax + (slice(0, n),)]
        elif have < n:
            g = np.pad(g, [(0, n - have) if k == ax else (0, 0) for k in range(len(shape_of(g)))])
    return g


def _whole(g, axes):
    """``g`` in one chunk along ``axes`` where it is a Dask array: Dask transforms only
    along unchunked axes, and zero-padding the adjoint (``_fit``) adds a chunk."""
    rechunk = getattr(g, "rechunk", None) if is_foreign(g) else None
    return rechunk({ax: -1 for ax in axes}) if rechunk is not None else g


def _own_sizes(a, axes):
    return [shape_of(a)[ax] for ax in axes]


def _half_weights(n, ax, nd):
    """How often irfft reads each of the n//2 + 1 bins, shaped to broadcast along ``ax``."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return np.reshape(w, (-1,) + (1,) * (nd - 1 - ax))


def _complex_vjp(inverse):
    def vjp(g, a, s, axes, norm):
        axes, _ = _axes_sizes(a, s, axes)
        return _fit(inverse(_whole(g, axes), axes=axes, norm=_ADJOINT_NORM[norm]),
                    _own_sizes(a, axes), axes)
    return vjp


def _real_vjp(g, a, s, axes, norm, conj_input=False):
    """Adjoint of rfftn (of ihfft when ``conj_input``) on a real input."""
    axes, sizes = _axes_sizes(a, s, axes)
    g = np.conj(g) if conj_input else g
    full = _fit(g, sizes[-1:], axes[-1:])           # the missing half is zeros
    out = F.ifftn(_whole(full, axes), axes=axes, norm=norm if conj_input else _ADJOINT_NORM[norm])
    return _fit(np.real(out), _own_sizes(a, axes), axes)


def _halfspectrum_vjp(g, a, s, axes, norm, conj_input=False):
    """Adjoint of irfftn (of hfft when ``conj_input``), in TensorFlow's complex convention."""
    axes, _ = _axes_sizes(a, s, axes)
    # the output length along the last axis: given, or 2 (m - 1) from the half spectrum's m
    n = s[-1] if s is not None else 2 * (shape_of(a)[axes[-1]] - 1)
    h = F.rfftn(_whole(g, axes), axes=axes, norm=norm if conj_input else _ADJOINT_NORM[norm])
    h = h * _half_weights(n, axes[-1], len(shape_of(g)))
    return _fit(np.conj(h) if conj_input else h, _own_sizes(a, axes), axes)


def _register(fn, vjp):
    """A 1-D transform is the n-D one over ``[axis]`` with ``s=[n]``."""
    if fn in (F.fft, F.ifft, F.rfft, F.irfft, F.hfft, F.ihfft):
        defvjp(fn, lambda g, ans, a, n=None, axis=-1, norm=None, out=None:
               vjp(g, a, None if n is None else [n], [axis], norm))
        defjvp(fn, lambda t, ans, a, n=None, axis=-1, norm=None, out=None: fn(t, n, axis, norm))
        return
    default = (-2, -1) if fn in (F.fft2, F.ifft2, F.rfft2, F.irfft2) else None
    defvjp(fn, lambda g, ans, a, s=None, axes=default, norm=None, out=None:
           vjp(g, a, s, axes, norm))
    defjvp(fn, lambda t, ans, a, s=None, axes=default, norm=None, out=None: fn(t, s, axes, norm))


for _fn in (F.fft, F.fft2, F.fftn):
    _register(_fn, _complex_vjp(F.ifftn))
for _fn in (F.ifft, F.ifft2, F.ifftn):
    _register(_fn, _complex_vjp(F.fftn))
for _fn in (F.rfft, F.rfft2, F.rfftn):
    _register(_fn, _real_vjp)
for _fn in (F.irfft, F.irfft2, F.irfftn):
    _register(_fn, _halfspectrum_vjp)

# hfft(a) = irfft(conj(a)) and ihfft(a) = conj(rfft(a)), with the norms swapped
_register(F.hfft, lambda g, a, s, axes, norm: _halfspectrum_vjp(g, a, s, axes, norm, True))
_register(F.ihfft, lambda g, a, s, axes, norm: _real_vjp(g, a, s, axes, norm, True))

# the shifts are rolls: each undoes the other
defvjp(F.fftshift, lambda g, ans, x, axes=None: F.ifftshift(g, axes))
defjvp(F.fftshift, lambda t, ans, x, axes=None: F.fftshift(t, axes))
defvjp(F.ifftshift, lambda g, ans, x, axes=None: F.fftshift(g, axes))
defjvp(F.ifftshift, lambda t, ans, x, axes=None: F.ifftshift(t, axes))
