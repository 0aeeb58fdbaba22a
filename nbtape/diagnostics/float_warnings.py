"""numpy's floating-point warnings from a recorded op, said at the user's line.

numpy warns about an overflow, a division by zero or an invalid value from inside the
ufunc, and Python attributes the warning to the frame that called it: for a recorded
op that is nbtape's dispatch (``core/dispatch.py``), for a derivative one of the
rules.  So nbtape adds two warnings filters (after any the user has, so the user's own
filters still win):

- a floating-point warning raised in ``core/dispatch.py`` becomes an exception there,
  which dispatch catches: it computes the op again with the warning off and warns
  again with numpy's words at the user's line, naming the op (``reissue``);
- one raised while a rule computes a derivative (``nbtape.rules``, the registry's
  derivative wrappers in ``core/registry.py``, ``nbtape.tape``) is
  not shown: a NaN or inf it makes reaches the gradient, and nbtape's own warning
  says where it was born and why (numerics.py); one it does not reach was harmless;
- one raised by the finite check of a gradient (``tape/numerics.py``: a dot that
  overflows or meets a NaN) is not shown either: the check itself says what it found.

No per-op cost: the filters are looked at only when numpy warns.  ``install()`` runs
at import, and again wherever a block of code replaced the warnings filters (pytest
does per test).
"""
import warnings

import numpy as np

from .errors import warn_user

_DISPATCH = r"nbtape\.core\.dispatch\Z"
# rule modules, the registry's derivative wrappers (defderiv's VJPs run there), and the
# tape's passes and its finite check (tape/numerics.py)
_DERIVATIVES = r"nbtape\.(rules|tape)\.|nbtape\.core\.registry\Z"


def install():
    """Add the two filters (once: a filter already there is not added again).

    >>> with warnings.catch_warnings():
    ...     install(); install()
    ...     sum(1 for action, _, category, module, _ in warnings.filters
    ...         if category is RuntimeWarning and module is not None
    ...         and module.pattern.startswith("nbtape"))
    2
    """
    warnings.filterwarnings("error", category=RuntimeWarning, module=_DISPATCH, append=True)
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=_DERIVATIVES,
                            append=True)


def reissue(warning, name, compute, *args, **kwargs):
    """``compute(*args, **kwargs)`` again with numpy's floating-point warnings off, after
    warning at the user's line with ``warning``'s words and the op's ``name``."""
    warn_user(f"{warning} (in {name})", RuntimeWarning)
    with np.errstate(all="ignore"):
        return compute(*args, **kwargs)
