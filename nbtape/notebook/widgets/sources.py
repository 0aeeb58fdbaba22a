"""What ``nt.inspect(x)`` shows: the variables behind a tape, a model, a list or a dict.

Some sources grow: a tape watches more variables as it records, and a Keras
style model creates its weights on its first call (often inside the very loop
being watched).  ``Sources.variables()`` therefore re-reads them each time.
"""
from ...tape.gradient_tape import GradientTape
from ...core.tensor import Tensor
from ...core.variable import Variable


class Sources:
    """The objects handed to ``nt.inspect``, and the variables they stand for.

    >>> import nbtape as nt
    >>> w, b = nt.Variable(1.0, name="w"), nt.Variable(0.0)
    >>> src = Sources([{"bias": b}, w])
    >>> [(name, v.name) for name, v in src.variables()]
    [('bias', 'Variable'), (None, 'w')]
    """

    def __init__(self, objects):
        self.tapes = []
        self.models = []
        self.fixed = []            # (name given by a dict key or None, Variable)
        self._collect(objects, None)

    def _collect(self, x, key):
        if isinstance(x, Variable):
            self.fixed.append((key, x))
        elif isinstance(x, GradientTape):
            self.tapes.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                self._collect(v, str(k) if isinstance(v, Variable) else None)
        elif isinstance(x, (list, tuple)):
            for v in x:
                self._collect(v, None)
        elif _is_model(x):
            self.models.append(x)
        else:
            raise TypeError(_not_inspectable(x))

    @property
    def growing(self):
        """True when some source may still gain variables (a tape or a model)."""
        return bool(self.tapes or self.models)

    @property
    def waiting(self):
        """True when a model has no variables yet (its layers build on first call)."""
        return any(not _model_variables(m) for m in self.models)

    def variables(self):
        """``[(name or None, Variable)]`` in a stable order, each variable once."""
        out, seen = [], set()

        def add(name, v):
            if isinstance(v, Variable) and v._id not in seen:
                seen.add(v._id)
                out.append((name, v))
        for name, v in self.fixed:
            add(name, v)
        for m in self.models:
            for v in _model_variables(m):
                add(None, v)
        for t in self.tapes:
            for v in t.watched_variables():
                add(None, v)
        return out


def _is_model(x):
    # the class attribute first: an unbuilt model's property may raise on access
    return hasattr(type(x), "trainable_variables") or hasattr(x, "trainable_variables")


def _model_variables(model):
    try:
        return list(model.trainable_variables or ())
    except (AttributeError, ValueError, TypeError):
        # a model that cannot list its weights yet (not built) has none to show
        return []


def _not_inspectable(x):
    kind = type(x).__name__
    if isinstance(x, Tensor):
        return ("nt.inspect shows variables, whose values change while a loop runs, and "
                "this is an nt.Tensor, which never changes. Print it instead, or make it an "
                "nt.Variable if your loop updates it.")
    return (f"nt.inspect cannot show a {kind}. Give it an nt.Variable, a GradientTape (its "
            "watched variables), a model with trainable_variables (such as nt.Sequential), "
            "or a list or dict of these; plain numbers and numpy arrays have to become "
            "nt.Variable objects first so that their changes can be followed.")


def namespace_names(shell, variables):
    """``{variable id: name}`` for variables bound to a name in the user's namespace.

    Unnamed ``nt.Variable(2.0)`` objects then show as ``w`` when the notebook
    said ``w = nt.Variable(2.0)``.  Private names (``_``, ``_3``) are skipped.

    >>> import nbtape as nt
    >>> class Shell: user_ns = {"w": nt.Variable(1.0), "_": None}
    >>> w = Shell.user_ns["w"]
    >>> namespace_names(Shell(), [w]) == {w._id: "w"}
    True
    """
    ns = getattr(shell, "user_ns", None) or {}
    wanted = {v._id for v in variables}
    found = {}
    for k, v in list(ns.items()):
        if isinstance(v, Variable) and not k.startswith("_") and v._id in wanted:
            found.setdefault(v._id, k)
    return found
