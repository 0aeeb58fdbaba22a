"""``custom_gradient`` and ``stop_gradient``."""
import functools

import numpy as np

from ._state import tls
from .rules.registry import VARARGS, Rule, rule_for
from .structure import flatten, unflatten
from .tensor import Tensor, TensorLike
from .variable import Variable


def _identity(x):
    return x


_STOP = rule_for(_identity)
_STOP.name = "stop_gradient"
_STOP.stop = True
_STOP.nargs = 1
_STOP.save, _STOP.save_ans, _STOP.save_all = (), False, False


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
        return Tensor(np.asarray(x))
    from .dispatch import apply
    return apply(_STOP, (x,))


class _VariableWatcher:
    """Collects the variables a function reads (TensorFlow's VariableWatcher)."""

    def __init__(self):
        self.variables = {}

    def on_variable_read(self, v):
        if v.trainable:         # as TensorFlow: only trainable variables are reported
            self.variables.setdefault(v._id, v)

    def record(self, *a):
        pass

    def note_escape(self, t, how):
        pass

    def on_assign(self, var, source, how):
        pass


def custom_gradient(f):
    """Decorator: ``f(*args)`` returns ``(y, grad_fn)``; ``grad_fn(dy)`` gives the gradients.

    If ``f`` reads variables, ``grad_fn(dy, variables=None)`` must return
    ``(input_grads, variable_grads)``, as in TensorFlow.

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
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        watcher = _VariableWatcher()
        tls.stack.append(watcher)
        try:
            result, grad_fn = f(*args, **kwargs)
        finally:
            tls.stack.remove(watcher)
        arg_ids = {a._id for a in args if isinstance(a, Variable)}
        variables = [v for i, v in watcher.variables.items() if i not in arg_ids]
        flat_out = flatten(result)
        outs = [Tensor(o._value if isinstance(o, TensorLike) else np.asarray(o))
                for o in flat_out]
        stack = tls.stack
        if stack:
            inputs = [a._read(stack) if isinstance(a, Variable) else a for a in args]
            tensor_inputs = [a for a in inputs if isinstance(a, Tensor)]
            var_reads = [v._tensor for v in variables]
            operands = tensor_inputs + var_reads
            rule = _custom_rule(f, grad_fn, len(tensor_inputs), variables, len(outs))
            ids = [t._id for t in operands]
            rec_outs = tuple(outs) if rule.multi else outs[0]
            for rec in stack:
                rec.record(rule, operands, None, operands, ids, rec_outs)
        return unflatten(result, outs) if isinstance(result, (list, tuple, dict)) else outs[0]
    return wrapper


def _custom_rule(f, grad_fn, n_inputs, variables, n_outs):
    rule = Rule(f, name=f"custom_gradient({getattr(f, '__name__', 'f')})")
    rule.kind, rule.start, rule.multi = VARARGS, 0, n_outs > 1

    def vjp_all(g, ans, args, kwargs, needs):
        dys = list(g) if rule.multi else [g]
        dys = [d if isinstance(d, TensorLike) else Tensor(np.asarray(d)) for d in dys]
        if variables:
            in_grads, var_grads = grad_fn(*dys, variables=variables)
        else:
            in_grads, var_grads = grad_fn(*dys), []
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != n_inputs:
            raise ValueError(
                f"the gradient function of {rule.name} returned {len(in_grads)} input "
                f"gradient(s) for {n_inputs} tensor argument(s); return one per argument.")
        grads = in_grads + list(var_grads or [])
        return [_plainish(x) for x in grads]
    rule.vjp_all = vjp_all
    return rule


def _plainish(x):
    if x is None or isinstance(x, TensorLike):
        return x
    return np.asarray(x)
