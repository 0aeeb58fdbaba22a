"""nbtape: TensorFlow's GradientTape, rebuilt on numpy, for watching autodiff happen.

>>> import numpy as np, nbtape as nt
>>> x = nt.Variable(3.0)
>>> with nt.GradientTape() as tape:
...     y = x ** 3
>>> float(tape.gradient(y, x))
27.0
"""
from .rules import operators as _operators  # noqa: F401  (gives tensors their operators)
from .core.tensor import Tensor, constant
from .core.variable import Variable
from .rules import load_all as _load_rules
_load_rules()
from .tape.gradient_tape import GradientTape, UnconnectedGradients
from .tape.forward import ForwardAccumulator
from .transforms.custom import custom_gradient, stop_gradient
from .transforms.functional import grad, value_and_grad, jacobian, hessian
from .transforms.check import check_gradients
from .transforms.recompute import recompute_grad
from .transforms.function import function
from .diagnostics.errors import NbtapeError, NoGradientRuleError
from .display import cards as _cards  # noqa: F401  (registers the values' reprs)
from .display import pictures as _pictures
from .diagnostics import float_warnings as _float_warnings
from .tape.check_numerics import check_numerics, NumericsError

# numpy's floating-point warnings from a recorded op are said at the user's line
_float_warnings.install()

# The engine never imports the notebook layer; the facade may. tape.graph() and the
# tape's HTML card ask nbtape.display.pictures for the drawing, which nbtape.notebook.graph
# registers when it is imported: this loader imports it on first need, so that
# `import nbtape` alone is enough for tape.graph() (and costs nothing until then).
_pictures.set_loader(lambda: __import__("nbtape.notebook.graph"))

__version__ = "0.1.0"

# Names that live in optional or heavier modules, imported on first use so that
# ``import nbtape`` stays cheap and the engine never imports the notebook layer.
_LAZY = {
    "coverage": ("nbtape.display.coverage", "coverage"),
    "optimizers": ("nbtape.training.optimizers", None),
    "losses": ("nbtape.training.losses", None),
    "nn": ("nbtape.training.nn", None),
    "layers": ("nbtape.training.layers", None),
    "random": ("nbtape.training.random", None),      # nt.random.Generator(seed)
    "datasets": ("nbtape.training.datasets", None),
    "Sequential": ("nbtape.training.layers", "Sequential"),
    "clip_by_value": ("nbtape.training.clip", "clip_by_value"),
    "clip_by_norm": ("nbtape.training.clip", "clip_by_norm"),
    "clip_by_global_norm": ("nbtape.training.clip", "clip_by_global_norm"),
    "global_norm": ("nbtape.training.clip", "global_norm"),
    "inspect": ("nbtape.notebook.widgets", "inspect"),
    "TrainingMonitor": ("nbtape.notebook.widgets", "TrainingMonitor"),
    "TapePlayer": ("nbtape.notebook.widgets", "TapePlayer"),
    "tape_cell": ("nbtape.notebook.tape_cell", "tape_cell"),   # %%tape where no magics are
    "render": ("nbtape.notebook.graph", "render"),     # the package's public entry
    "exercises": ("nbtape.notebook.exercises", None),  # the tutorials' check cells
    "plot_style": ("nbtape.notebook.plot_style", None),  # the tutorials' one plot style
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        mod = importlib.import_module(module)
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'nbtape' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))

__all__ = [
    "Tensor", "constant", "Variable", "GradientTape", "UnconnectedGradients",
    "ForwardAccumulator", "custom_gradient", "stop_gradient", "grad", "value_and_grad",
    "jacobian", "hessian", "check_gradients", "recompute_grad", "function", "NbtapeError", "NoGradientRuleError",
    "check_numerics", "NumericsError",
]


def load_ipython_extension(ipython):
    """``%load_ext nbtape``: register the %%tape magic."""
    from .notebook.magics import load_ipython_extension as _load
    _load(ipython)


def unload_ipython_extension(ipython):
    from .notebook.magics import unload_ipython_extension as _unload
    _unload(ipython)
