"""NaN-ignoring reductions: nansum, nanmean, nanprod, nanmax/nanmin, nanvar/nanstd.

Each is its plain reduction over the non-NaN elements, so a NaN element gets a
zero gradient and the others get what the plain reduction would give them.
"""
import numpy as np

from ..extend import defjvp, defnondiff, defvjp
from .reductions import (argmax_share, def_extreme_initial, def_prod_initial, defvariance,
                         reduce_back, spread, prod_parts)
from ..core.registry import defparam
from .util import NV, conj, masked, normalize_axis, shape_of


def _ok(x, where=NV):
    ok = ~np.isnan(x)
    return ok & where if masked(where) else ok


defvjp(np.nansum, lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False,
       initial=NV, where=NV: spread(g, x, axis, keepdims) * _ok(x, where))
defjvp(np.nansum, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False,
       initial=NV, where=NV: reduce_back(np.where(_ok(x, where), t, 0), x, axis, keepdims))


def _nanmean_share(x, axis, where):
    ok = _ok(x, where)
    return ok / np.sum(ok, axis=normalize_axis(axis, len(shape_of(x))), keepdims=True)


defvjp(np.nanmean, lambda g, ans, x, axis=None, dtype=None, out=None, keepdims=False, *,
       where=NV: spread(g, x, axis, keepdims) * _nanmean_share(x, axis, where))
defjvp(np.nanmean, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=False, *,
       where=NV: reduce_back(np.where(_ok(x, where), t, 0) * _nanmean_share(x, axis, where),
                             x, axis, keepdims))


# a NaN never equals the maximum, so the tie-sharing weights of max skip NaNs already
defparam(np.nansum, "initial", lambda g, ans, x, *args, **kw: g,
         lambda t, ans, x, *args, **kw: t)
for _f in (np.nanmax, np.nanmin):
    defvjp(_f, lambda g, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV:
           spread(g, x, axis, keepdims) * argmax_share(x, ans, axis, keepdims, where, initial))
    defjvp(_f, lambda t, ans, x, axis=None, out=None, keepdims=False, initial=NV, where=NV:
           reduce_back(t * argmax_share(x, ans, axis, keepdims, where, initial),
                       x, axis, keepdims))
    def_extreme_initial(_f)


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
def_prod_initial(np.nanprod, np.nanprod)

defvariance(np.nanvar, std=False, nan=True)
defvariance(np.nanstd, std=True, nan=True)


defnondiff(np.nanargmax, np.nanargmin)
