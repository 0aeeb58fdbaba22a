"""Arrays of other libraries (Dask, CuPy): carried as they are, never converted behind
the user's back.

numpy's dispatch protocols (NEP 18 ``__array_function__``, NEP 13 ``__array_ufunc__``)
let ``np.sin(d)`` run on a Dask array lazily, or on a CuPy array on a GPU. nbtape's
rules are written with ``np.*`` calls, so a tensor can hold such an array and every
recorded op and gradient stays in that library. This module recognises them by
protocol, not by importing any of them (the engine imports only numpy).

>>> import numpy as np
>>> is_foreign(np.ones(2)), is_foreign(2.0), backend_name(np.ones(2))
(False, False, 'numpy')
>>> to_numpy([1.0, 2.0])
array([1., 2.])
"""
import numpy as np


# types that are never another library's array: a set lookup answers the common case
# (most values the engine sees are ndarrays, numpy scalars and Python numbers) before
# the attribute probes below, which cost far more when the attribute is missing
_PLAIN = frozenset({np.ndarray, float, int, complex, bool, type(None), list, tuple, dict, str}
                   | {t for t in np.sctypeDict.values() if isinstance(t, type)})

# numpy's number scalars -> their (shape, dtype): a scalar's shape and dtype are fixed by
# its type, and reading them off a scalar costs more than this lookup (the tape keeps
# them per operand of every recorded op)
SCALAR_METAS = {t: ((), np.dtype(t)) for t in set(np.sctypeDict.values())
                if isinstance(t, type) and issubclass(t, (np.number, np.bool_))
                and not issubclass(t, (np.datetime64, np.timedelta64))}
# ... those of them a gradient can flow through (float and complex)
FLOAT_SCALARS = frozenset(t for t, (_, dtype) in SCALAR_METAS.items() if dtype.kind in "fc")


def is_foreign(x):
    """True for an array of another library that numpy dispatches to (NEP 13 and 18):
    a Dask or CuPy array, not an ``np.ndarray`` (or subclass) nor a number.

    >>> is_foreign(np.zeros(2)), is_foreign(np.float64(1.0)), is_foreign(1.0)
    (False, False, False)
    """
    t = type(x)
    if t in _PLAIN:
        return False
    return (hasattr(t, "__array_function__")
            and hasattr(t, "__array_ufunc__") and hasattr(t, "dtype")
            and not issubclass(t, (np.ndarray, np.generic)) and not hasattr(t, "_leaf"))


def backend_name(x):
    """The library an array belongs to (``"numpy"``, ``"dask"``, ``"cupy"``, ...)."""
    if isinstance(x, (np.ndarray, np.generic)) or not is_foreign(x):
        return "numpy"
    return type(x).__module__.split(".")[0]


def to_numpy(x):
    """``x`` as an ``np.ndarray``: a Dask array is computed (by the scheduler in use),
    a CuPy array is copied to the host; anything else goes through ``np.asarray``."""
    if is_foreign(x):
        compute = getattr(x, "compute", None)
        if callable(compute):
            x = compute()
        get = getattr(x, "get", None)      # CuPy's device-to-host copy
        if is_foreign(x) and callable(get):
            x = get()
    return np.asarray(x)


def mixed_backends_error(name, values, exc):
    """A clear TypeError when ``name`` failed on arrays of libraries that cannot mix
    (CuPy with numpy), else None (the failure was something else)."""
    kinds = []
    for v in _flat(values):
        if hasattr(v, "dtype") and getattr(v, "ndim", 0):
            b = backend_name(v)
            if b not in kinds:
                kinds.append(b)
    if len(kinds) < 2:
        return None
    return TypeError(
        f"{name} got arrays of different libraries ({' and '.join(kinds)}), and they cannot "
        f"be mixed in one operation ({type(exc).__name__}: {exc}). Put the values in one "
        "library first: for numpy, t.numpy() (it computes a Dask array, copies a CuPy "
        "array to the host); for the other library, convert the numpy array with its own "
        "function (e.g. cupy.asarray(w)) before making the nt.Variable.")


def _flat(values):
    for v in values:
        if type(v) in (list, tuple):
            yield from _flat(v)
        else:
            yield v


# what Dask says (in a FutureWarning) before computing a function it lacks in memory
UNIMPLEMENTED = "is not implemented by Dask array"


def unimplemented_error(rule_name, warning, mode="reverse"):
    """The error for a gradient rule that needs a function the array library lacks
    (Dask warns, then computes in memory: nbtape refuses instead of materializing)."""
    from ..diagnostics.errors import NoGradientRuleError
    msg = str(warning)
    fn = msg.split("`")[1] if msg.count("`") >= 2 else "a numpy function"
    return NoGradientRuleError(
        f"the {mode}-mode gradient of {rule_name} needs {fn}, which Dask does not implement "
        "(Dask would compute the whole array into memory to run it). Compute that value "
        "first (t.numpy(), or x.compute() / x.persist() on the Dask array) and differentiate "
        "the in-memory array, or write that step with functions Dask implements "
        "(see docs/backends.md).")


def shape_of(x):
    """The shape of an array, a tensor, a number or a list, read without a conversion.

    >>> shape_of(np.zeros((2, 3))), shape_of(2.0), shape_of([[1, 2]])
    ((2, 3), (), (1, 2))
    """
    s = getattr(x, "shape", None)
    return s if s is not None else np.shape(x)
