"""The gradient-rule table, one module per family of numpy functions.

``nbtape/__init__.py`` imports every module listed in ``MODULES``; registering a
rule is importing its module.
"""
MODULES = ("core_ops", "ufuncs", "reductions", "shapes")


def load_all():
    import importlib
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
