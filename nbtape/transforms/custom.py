"""``custom_gradient`` and ``stop_gradient``."""
import functools
import inspect

import numpy as np

from ..diagnostics import user_line
from ..core.state import recording, tls
from ..core.recorder import Listener
from ..core.arrays import is_foreign
from ..diagnostics.errors import InvalidArgumentError, user_facing
from ..core.registry import VARARGS, Rule, defstop
from ..core.structure import flatten, unflatten
from ..core.tensor import Tensor, TensorLike
from ..core.variable import Variable


def _identity(x):
    return x


_STOP = defstop(_identity, "stop_gradient")


def stop_gradient(x):
    """The same value, with no gradient flowing through it.

    >>> import nbtape as nt
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = x * nt.stop_gradient(x)
    >>> float(t.gradient(y, x))
    2.0
    """
    if isinstance(x, (list, tuple)):
        return type(x)(stop_gradient(v) for v in x)
    if not isinstance(x, TensorLike):
        return Tensor(_array(x))
    from ..core.dispatch import apply
    return apply(_STOP, (x,))


class _VariableWatcher(Listener):
    """Collects the variables a function reads (TensorFlow's VariableWatcher); a
    ``Recorder`` (nbtape/core/recorder.py) that records nothing."""

    def __init__(self):
        self.variables = {}

    def on_variable_read(self, v):
        if v.trainable:         # as TensorFlow: only trainable variables are reported
            self.variables.setdefault(v._id, v)


def custom_gradient(f):
    """Decorator: ``f(*args)`` returns ``(y, grad_fn)``; ``grad_fn(dy)`` gives the gradients.

    ``grad_fn`` returns one gradient per tensor argument, each of its argument's
    shape (a single value when there is one).  An argument that is a list, tuple or
    dict of tensors gets gradients with its structure (as TensorFlow flattens them, a
    flat list of one gradient per tensor, in order, is taken too; a dict's tensors come
    in sorted-key order, as ``tf.nest.flatten`` puts them).  A tensor passed by keyword
    (``f(x, s=s)``) is an argument too, after the positional ones (keywords in sorted
    order, as TensorFlow's eager ``custom_gradient`` flattens them): TensorFlow gives
    it no gradient, so a ``grad_fn`` may leave it out, but when a gradient reaches it
    the missing one is refused by name instead of a silent None.  If ``f`` reads variables,
    ``grad_fn(dy, variables=None)`` must return ``(input_grads, variable_grads)``,
    as in TensorFlow.

    >>> import numpy as np, nbtape as nt
    >>> @nt.custom_gradient
    ... def log1pexp(x):
    ...     e = np.exp(x)
    ...     return np.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))
    >>> x = nt.constant(100.0)
    >>> with nt.GradientTape() as t:
    ...     t.watch(x); y = log1pexp(x)
    >>> float(t.gradient(y, x))
    1.0
    """
    @user_facing
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        with recording(_VariableWatcher()) as watcher:
            returned = f(*args, **kwargs)
        result, grad_fn = _result_and_grad_fn(f, returned)
        leaves = _leaves(args)
        nested = len(leaves) != len(args) or any(
            isinstance(a, (list, tuple, dict)) for a in args)
        by_keyword = [(a, key + path) for key, v in _sorted_items(kwargs)
                      for a, _, path in _leaves([v]) if isinstance(a, TensorLike)]
        arg_ids = {a._id for a in [a for a, _, _ in leaves] + [a for a, _ in by_keyword]
                   if isinstance(a, Variable)}
        variables = [v for i, v in watcher.variables.items() if i not in arg_ids]
        if variables and not _takes_variables(grad_fn):
            raise InvalidArgumentError(_needs_variables_message(f, variables))
        flat_out = flatten(result)
        outs = [Tensor(o._value if isinstance(o, TensorLike) else _array(o))
                for o in flat_out]
        stack = tls.stack
        if stack:
            # a list/tuple/dict argument: each tensor in it is an operand of its own
            inputs = [a._read(stack) if isinstance(a, Variable) else a
                      for a in ([a for a, _, _ in leaves] if nested else args)]
            positions = [k for k, a in enumerate(inputs) if isinstance(a, Tensor)]
            names = _arg_names(f, [leaves[k][1] for k in positions] if nested else positions)
            if nested:
                names = [n + leaves[k][2] for n, k in zip(names, positions)]
            var_reads = [v._tensor for v in variables]
            keyword_inputs = [a._read(stack) if isinstance(a, Variable) else a
                              for a, _ in by_keyword]
            operands = [inputs[k] for k in positions] + keyword_inputs + var_reads
            keywords = [name for _, name in by_keyword]
            rule = _custom_rule(f, grad_fn, names, keywords, nested, variables, len(outs),
                                user_line.caller())
            ids = [t._id for t in operands]
            rec_outs = tuple(outs) if rule.multi else outs[0]
            for rec in stack:
                rec.record(rule, operands, None, operands, ids, rec_outs)
        return unflatten(result, outs) if isinstance(result, (list, tuple, dict)) else outs[0]
    return wrapper


def _name(f):
    return getattr(f, "__name__", "f")


def _result_and_grad_fn(f, returned):
    if isinstance(returned, (tuple, list)) and len(returned) == 2 and callable(returned[1]):
        return returned
    what = (f"a {type(returned).__name__} of {len(returned)} items"
            if isinstance(returned, (tuple, list)) else f"one {type(returned).__name__}")
    if isinstance(returned, (tuple, list)) and len(returned) == 2:
        what = f"a pair whose second item is a {type(returned[1]).__name__}, not a function"
    raise InvalidArgumentError(
        f"{_name(f)} is decorated with @nt.custom_gradient, so it must return a pair "
        f"(y, grad_fn): its result and the function that turns the result's gradient dy "
        f"into the gradients of its arguments. It returned {what}. End it with "
        "`return y, grad_fn` (several results go in a tuple: `return (y1, y2), grad_fn`).")


def _takes_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):     # no signature to read (a builtin): let it try
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


def _needs_variables_message(f, variables):
    names = ", ".join(repr(v.name) for v in variables)
    return (f"@nt.custom_gradient grad_fn must accept keyword argument 'variables', since "
            f"function {_name(f)} uses variables ({names}) that are not among its arguments "
            "(TensorFlow's rule). Write `def grad_fn(dy, variables=None):` and return "
            "(input_gradients, variable_gradients), one gradient per variable in the order "
            "of `variables`; without it their gradients would be silently missing. Or pass "
            "the variables to the function as arguments.")


def _leaves(args):
    """``(leaf, argument position, path in it)`` of each leaf of ``args``, in the order
    of ``flatten(args)`` but dicts in sorted-key order (TensorFlow's):
    ``(t, 0, "[1]")`` for ``t`` in ``f([s, t])``."""
    out = []

    def walk(x, k, path):
        if isinstance(x, dict):
            for key, v in _sorted_items(x):
                walk(v, k, f"{path}[{key!r}]")
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, k, f"{path}[{i}]")
        else:
            out.append((x, k, path))
    for k, a in enumerate(args):
        walk(a, k, "")
    return out


def _sorted_items(d):
    """A dict's items in sorted-key order, as ``tf.nest.flatten`` takes them (insertion
    order for keys that do not sort, e.g. of mixed types)."""
    try:
        return sorted(d.items(), key=lambda kv: kv[0])
    except TypeError:
        return list(d.items())


def _flat_gradients(grads):
    """The leaves of what grad_fn returned, dicts in sorted-key order (as ``_leaves``
    takes the arguments): a dict of gradients meets its dict argument key by key."""
    return [g for g, _, _ in _leaves([grads])]


def _arg_names(f, positions):
    """Names of the arguments at ``positions`` (``args[2]`` past a ``*args``)."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")
    return [named[k] if k < len(named) else f"{star}[{k - len(named)}]" for k in positions]


def _custom_rule(f, grad_fn, names, keywords, nested, variables, n_outs, where):
    name = f"custom_gradient({_name(f)})"
    # errors name the call, since they surface at the later tape.gradient line
    called = f"{name} (called at {user_line.describe(where)})"
    multi = n_outs > 1
    n_positional = len(names)
    names = names + keywords
    n_inputs = len(names)

    def vjp_all(g, ans, args, kwargs, needs):
        dys = list(g) if multi else [g]
        dys = [d if isinstance(d, TensorLike) else Tensor(_array(d)) for d in dys]
        if variables:
            returned = grad_fn(*dys, variables=variables)
            if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
                raise InvalidArgumentError(
                    f"the grad_fn of {called} was called with variables=, so it must "
                    "return a pair (input_gradients, variable_gradients); it returned a "
                    f"{type(returned).__name__}.")
            in_grads, var_grads = returned
        else:
            in_grads, var_grads = grad_fn(*dys), []
        if nested:      # the arguments' structure, or TensorFlow's flat list: its leaves
            in_grads = _flat_gradients(in_grads)
        else:
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        if keywords and len(in_grads) == n_positional:
            # TensorFlow's grad_fn: gradients for the positional arguments only
            missing = [k for k, n in zip(keywords, needs[n_positional:n_inputs]) if n]
            if missing:
                raise InvalidArgumentError(
                    f"{called} was given {', '.join(missing)} by keyword, and a gradient "
                    "reaches it, but its grad_fn returned gradients for the positional "
                    f"arguments only ({', '.join(names[:n_positional]) or 'none'}), as "
                    "TensorFlow expects "
                    "(it gives keyword arguments no gradient). Return one more gradient per "
                    f"keyword tensor, after the positional ones ({', '.join(keywords)}), or "
                    "pass it by position.")
            in_grads = in_grads + [None] * len(keywords)
        if len(in_grads) != n_inputs:
            one = (" (for one argument, return an array, not a list)"
                   if n_inputs == 1 else "")
            raise InvalidArgumentError(
                f"the grad_fn of {called} returned {len(in_grads)} input gradient(s) for "
                f"{n_inputs} tensor argument(s) ({', '.join(names)}); return one per "
                f"argument, in order{one}.")
        if len(var_grads) != len(variables):
            raise InvalidArgumentError(
                f"the grad_fn of {called} returned {len(var_grads)} variable gradient(s) "
                f"for the {len(variables)} variable(s) it was given "
                f"({', '.join(repr(v.name) for v in variables)}); return one per variable, "
                "in the order of `variables`.")
        labels = [f"argument {n!r}" for n in names] + [f"variable {v.name!r}"
                                                         for v in variables]
        return [_checked(called, label, x, np.shape(a))
                for label, x, a in zip(labels, in_grads + var_grads, args)]
    return Rule(f, name, kind=VARARGS, multi=multi, vjp_all=vjp_all)


def _checked(name, label, grad, shape):
    """A custom gradient as the engine takes it, if it is numbers of the right shape."""
    if grad is None:
        return None
    if not isinstance(grad, TensorLike) and not is_foreign(grad):
        try:
            value = np.asarray(grad)
        except (TypeError, ValueError):         # e.g. a ragged list
            value = np.asarray(None)
        if value.dtype.kind not in "biufc":
            raise InvalidArgumentError(
                f"the grad_fn of {name} returned a {type(grad).__name__} ({grad!r:.40}) as "
                f"the gradient for {label}, not numbers; return an array of shape {shape} "
                "(or None for no gradient).")
        grad = value
    if grad.shape != shape:
        raise InvalidArgumentError(
            f"the grad_fn of {name} returned a gradient of shape {grad.shape} for {label}, "
            f"which has shape {shape}: a gradient has the shape of what it is the gradient "
            "of. Reduce or reshape it in grad_fn (e.g. np.sum over the axes that "
            "broadcasting added, or dy * np.ones_like(x) to spread a scalar).")
    return grad


def _array(x):
    """``x`` as an array: a Dask or CuPy array stays itself (a Dask one stays lazy)."""
    return x if is_foreign(x) else np.asarray(x)
