"""The gradient-rule table, one module per family of numpy functions.

Registering a rule is importing its module; ``load_all`` imports every module
in this package (``nbtape/__init__.py`` calls it), so a new family of rules is
just a new file here.

How a rule is made (read first):

- ``rule``: a ``Rule``, everything nbtape knows about differentiating one function;
- ``registry``: the table and the ``def*`` functions that fill it (``nbtape.extend``
  is their public face); ``reads`` tells which arguments a VJP reads, ``signature``
  binds keywords to numpy's own parameters;
- ``util`` and ``matrix_util``: helpers rules share (``unbroadcast``, ``conj``...).

The families:

- ``ufuncs`` (elementwise ufuncs, one line per derivative), ``elementwise`` (clip,
  round, sinc...), ``scimath`` (``np.emath``), ``special`` (``np.i0``);
- ``core_ops`` (Python's operators, sums, casts) and ``index_primitives`` (what
  ``x[idx]`` records), ``indexing``, ``selections``, ``shapes``, ``padding``;
- ``reductions``, ``nanreductions``, ``cumulative``, ``order_stats``,
  ``statistics``, ``differences``, ``slopes``, ``ufunc_methods``;
- ``products``, ``cross``, ``linalg``, ``norms``, ``eigen``, ``factorizations``;
- ``fft``, ``signal``, ``grids``.
"""


def load_all():
    import importlib
    import pkgutil
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name not in ("registry", "util", "matrix_util", "reads", "signature"):
            importlib.import_module(f"{__name__}.{info.name}")
