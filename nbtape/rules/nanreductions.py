"""NaN-ignoring reductions: nansum, nanmean, nanprod, nanmax/nanmin, nanvar/nanstd.

Each is its plain reduction over the non-NaN elements, so a NaN element gets a
zero gradient and the others get what the plain reduction would give them.
"""
import numpy as np

from .reductions import (NV, argmax_share, kept, masked, normalize_axis, refuse, reduce_back,
                         spread, twice_std, var_jvp, var_vjp, prod_parts)
from .registry import defjvp, defnondiff, defvjp
from .util import conj, shape_of


def _ok(x, where=NV):
    ok = ~np.isnan(x)
    return ok & where if masked(where) else ok


defvjp(np.nansum, lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False,
       initial=NV, where=NV: spread(g, x, axis, keepdims) * _ok(x, where))
defjvp(np.nansum, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False,
       initial=NV, where=NV: reduce_back(np.where(_ok(x, where), t, 0), x, axis, keepdims))


def _nanmean_share(x, axis, where):
    if masked(where):
        refuse("np.nanmean", "the where= argument")
    ok = _ok(x)
    return ok / np.sum(ok, axis=normalize_axis(axis, len(shape_of(x))), keepdims=True)


defvjp(np.nanmean, lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False, *,
       where=NV: spread(g, x, axis, keepdims) * _nanmean_share(x, axis, where))
defjvp(np.nanmean, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False, *,
       where=NV: reduce_back(np.where(_ok(x), t, 0) * _nanmean_share(x, axis, where),
                             x, axis, keepdims))


# a NaN never equals the maximum, so the tie-sharing weights of max skip NaNs already
defvjp(np.nanmax, lambda g, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV:
       spread(g, x, axis, keepdims) * argmax_share(x, ans, axis, keepdims, where))
defjvp(np.nanmax, lambda t, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV:
       reduce_back(t * argmax_share(x, ans, axis, keepdims, where), x, axis, keepdims))
defvjp(np.nanmin, lambda g, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV:
       spread(g, x, axis, keepdims) * argmax_share(x, ans, axis, keepdims, where))
defjvp(np.nanmin, lambda t, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV:
       reduce_back(t * argmax_share(x, ans, axis, keepdims, where), x, axis, keepdims))


def _nanprod_parts(x, axis, initial, where):
    ok = _ok(x)
    return prod_parts(np.where(ok, x, 1), axis, initial, where) * ok


defvjp(np.nanprod, lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False,
       initial=NV, where=NV:
       spread(g, x, axis, keepdims) * conj(_nanprod_parts(x, axis, initial, where)))
defjvp(np.nanprod, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False,
       initial=NV, where=NV:
       reduce_back(np.where(_ok(x), t, 0) * _nanprod_parts(x, axis, initial, where),
                   x, axis, keepdims))

defvjp(np.nanvar, lambda g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       *, where=NV, mean=NV, correction=NV:
       var_vjp(g, x, axis, ddof, keepdims, correction, where, "np.nanvar", nan=True))
defjvp(np.nanvar, lambda t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       *, where=NV, mean=NV, correction=NV:
       var_jvp(t, x, axis, ddof, keepdims, correction, where, "np.nanvar", nan=True))
defvjp(np.nanstd, lambda g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       *, where=NV, mean=NV, correction=NV:
       var_vjp(g, x, axis, ddof, keepdims, correction, where, "np.nanstd", nan=True)
       / twice_std(kept(ans, shape_of(x), axis, keepdims)))
defjvp(np.nanstd, lambda t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       *, where=NV, mean=NV, correction=NV:
       var_jvp(t, x, axis, ddof, keepdims, correction, where, "np.nanstd", nan=True)
       / twice_std(ans))


defnondiff(np.nanargmax, np.nanargmin)
