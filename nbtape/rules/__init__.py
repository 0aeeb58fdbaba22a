"""The gradient-rule table, one module per family of numpy functions.

Registering a rule is importing its module; ``load_all`` imports every module
in this package (``nbtape/__init__.py`` calls it), so a new family of rules is
just a new file here.

How a rule is made lives in ``nbtape.core`` (``rule``, ``registry``, ``signature``,
``reads``), with ``nbtape.extend`` as its public face; here:

- ``util`` and ``matrix_util``: helpers rules share (``unbroadcast``, ``conj``...).

The families:

- ``ufuncs`` (elementwise ufuncs, one line per derivative), ``elementwise`` (clip,
  round, sinc...), ``scimath`` (``np.emath``), ``special`` (``np.i0``);
- ``operators`` (gives tensors their Python operators), ``core_ops`` (their rules,
  sums, casts) and ``index_primitives`` (what
  ``x[idx]`` records), ``indexing``, ``selections``, ``shapes``, ``padding``;
- ``reductions``, ``nanreductions``, ``cumulative``, ``order_stats``,
  ``statistics``, ``differences``, ``slopes``, ``ufunc_methods``;
- ``products``, ``cross``, ``linalg``, ``norms``, ``eigen``, ``factorizations``;
- ``fft``, ``signal``, ``grids``;
- ``scipy_special`` (scipy.special's ufuncs), loaded late: see ``load_late``.
"""
import sys

from ..core.registry import set_late_loader

# rule modules for libraries nbtape does not depend on: module -> the library it needs
LATE = {"scipy_special": "scipy.special"}
_pending = dict(LATE)


def load_all():
    import importlib
    import pkgutil
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name not in ("util", "matrix_util") \
                and info.name not in LATE:
            importlib.import_module(f"{__name__}.{info.name}")


def load_late(force=False):
    """Register the rules of the libraries in ``LATE`` that are in use (imported by the
    user: their functions can reach a tensor only then) or, with ``force``, installed.
    True when it registered something new.  Importing scipy takes most of a second, so
    ``import nbtape`` leaves it to the first call that needs it.

    >>> load_late() in (True, False)
    True
    """
    if not _pending:
        return False
    import importlib
    import importlib.util
    done = False
    for name, lib in list(_pending.items()):
        if lib in sys.modules or (force and importlib.util.find_spec(lib.split(".")[0])):
            try:
                importlib.import_module(f"{__name__}.{name}")
            except ImportError:     # installed but broken: its functions stay without rules
                pass
            del _pending[name]
            done = True
    return done


set_late_loader(load_late)      # the dispatcher asks the core, which asks here
