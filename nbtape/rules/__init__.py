"""The gradient-rule table, one module per family of numpy functions.

Registering a rule is importing its module; ``load_all`` imports every module
in this package (``nbtape/__init__.py`` calls it), so a new family of rules is
just a new file here.
"""


def load_all():
    import importlib
    import pkgutil
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name not in ("registry", "util", "matrix_util", "reads", "signature"):
            importlib.import_module(f"{__name__}.{info.name}")
