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

Where numpy cannot warn at all (WebAssembly has no floating-point exception flags, so
numpy under Pyodide, in JupyterLite, never sees an overflow), ``NUMPY_IS_SILENT`` is
true (found once, at import, by dividing by zero) and dispatch calls
``say_for_numpy`` on each op's result: a NaN or inf the op made from inputs without
one is said at the user's line in numpy's words, under numpy's error state, as numpy
would have.  Where numpy warns that costs one test of a constant per op.
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


def _numpy_warns():
    """Whether this numpy notices a division by zero (it does wherever the platform
    has floating-point exception flags)."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(divide="warn"):
        warnings.simplefilter("always")
        np.divide(np.ones(1), np.zeros(1))
    return bool(caught)


NUMPY_IS_SILENT = not _numpy_warns()
# the ufuncs whose inf from finite inputs numpy calls a division by zero (at a 0 input)
_DIVIDING = frozenset({"divide", "true_divide", "floor_divide", "reciprocal", "log", "log2",
                       "log10", "power", "float_power", "remainder", "fmod"})
_WORDS = (("divide", "divide by zero"), ("over", "overflow"), ("invalid", "invalid value"))


def _has(values, test):
    for v in values:
        if isinstance(v, (np.ndarray, np.generic, int, float)):
            try:
                if np.any(test(v)):
                    return True
            except TypeError:           # strings, objects: not numbers numpy checks
                pass
    return False


def say_for_numpy(name, raw, out):
    """Say what numpy would have said about ``out``, a result of op ``name`` on ``raw``,
    where numpy cannot (``NUMPY_IS_SILENT``).

    A NaN from inputs without one is an invalid value; an inf from inputs without one
    a division by zero (a dividing op with a 0 among its inputs) or an overflow.  Each
    follows ``np.geterr()`` as numpy's warning does: ignored, a warning at the user's
    line, or a ``FloatingPointError``.

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     say_for_numpy("np.exp", [np.float32(100)], np.float32(np.inf))
    >>> str(caught[0].message)
    'overflow encountered in exp (in np.exp)'
    >>> with np.errstate(invalid="raise"):
    ...     say_for_numpy("np.sqrt", [np.array([-1.0])], np.array([np.nan]))
    Traceback (most recent call last):
    FloatingPointError: invalid value encountered in sqrt
    """
    values = out if isinstance(out, (tuple, list)) else (out,)
    for v in values:        # the common case first, in one look: every result finite
        if (isinstance(v, (np.ndarray, np.inexact)) and v.dtype.kind in "fc"
                and not np.isfinite(v).all()):
            break
    else:
        return
    raw = [np.asarray(r) if isinstance(r, (list, tuple)) else r for r in raw]
    ufunc = name.rsplit(".", 1)[-1].split(" ", 1)[0]
    found = {}
    if _has(values, np.isinf) and not _has(raw, np.isinf):
        zero = ufunc in _DIVIDING and _has(raw, lambda v: np.asarray(v) == 0)
        found["divide" if zero else "over"] = True
    if _has(values, np.isnan) and not _has(raw, np.isnan):
        found["invalid"] = True
    state = np.geterr()
    for kind, words in _WORDS:
        if kind not in found or state[kind] == "ignore":
            continue
        text = f"{words} encountered in {ufunc}"
        if state[kind] == "raise":
            raise FloatingPointError(text)
        warn_user(f"{text} (in {name})", RuntimeWarning)


def reissue(warning, name, compute, *args, **kwargs):
    """``compute(*args, **kwargs)`` again with numpy's floating-point warnings off, after
    warning at the user's line with ``warning``'s words and the op's ``name``."""
    warn_user(f"{warning} (in {name})", RuntimeWarning)
    with np.errstate(all="ignore"):
        return compute(*args, **kwargs)
