"""Keras-style optimizers: ``opt.apply_gradients(zip(grads, variables))``.

The update formulas are Keras 3's (SGD with momentum/Nesterov, Adam with
epsilon added to ``sqrt(v)`` and the bias correction folded into the step
size, RMSprop).  Updates are plain numpy on the variables' values and go in
through ``assign``/``assign_sub``, so they are never recorded on a tape.

Each optimizer keeps its state (momenta, moment estimates) per variable, in
non-trainable ``Variable`` slots created on the first update of that variable;
``optimizer.variables`` lists them after the ``iterations`` counter.
"""
import abc
import copy
import inspect
import warnings

import numpy as np

from ..diagnostics.errors import InvalidArgumentError, user_facing
from ..display.numbers import number
from ..core.state import keeps_every_call, only_recording_all, tls, tracing
from ..core.tensor import TensorLike
from ..core.variable import Variable
from .clip import clip_by_global_norm, clip_by_norm


def _plain(g):
    return np.asarray(g._value if isinstance(g, TensorLike) else g)


def _now(slot):
    """A slot variable's value for an update: its plain array, or, while the update is
    traced (only the tracer on the stack), a read the tracer records."""
    stack = tls.stack
    return slot.value() if stack and keeps_every_call(stack[-1]) else slot._value


def _weak(lr, g):
    """The learning rate as it meets the gradient ``g``: eagerly a Python float, which
    numpy 2 treats as a weak scalar (a float32 gradient stays float32, the rate rounded
    to float32 first); traced, a schedule's rate is a float64 0-d tensor, which numpy
    would not treat so, so it is cast to ``g``'s float dtype first: the same bits."""
    if isinstance(lr, TensorLike) and lr.dtype != g.dtype and g.dtype.kind == "f":
        return lr.astype(g.dtype)
    return lr


def _takes_step(schedule):
    """Whether a callable learning rate takes the iteration count (a schedule) or nothing."""
    try:
        sig = inspect.signature(schedule)
    except (TypeError, ValueError):     # a callable Python cannot look into: a schedule
        return True
    try:
        sig.bind(0)
        return True
    except TypeError:
        pass
    try:
        sig.bind()
        return False
    except TypeError:
        raise TypeError(
            f"learning_rate is a callable of signature {sig}, but it must take either the "
            "iteration count (a schedule, e.g. lambda step: 0.1 / (1 + step)) or nothing "
            "(e.g. lambda: 0.01); it is called at each step.") from None


class Optimizer(abc.ABC):
    """The shared machinery of ``SGD``, ``Adam`` and ``RMSprop`` (subclasses define ``_update``).

    ``learning_rate`` is a number, a schedule (a callable taking the iteration
    count, 0 on the first update, and returning the rate) or a callable of no
    arguments, called at each update (as Keras allows).  At most one
    of ``clipnorm`` (per gradient), ``clipvalue`` (elementwise) and
    ``global_clipnorm`` (over all gradients together) clips the gradients
    before each update, as in Keras.

    >>> import nbtape as nt
    >>> opt = nt.optimizers.SGD(learning_rate=lambda step: 0.1 / (1 + step))
    >>> v = nt.Variable(1.0)
    >>> _ = opt.apply_gradients([(1.0, v)]); _ = opt.apply_gradients([(1.0, v)])
    >>> round(float(v.numpy()), 6), int(opt.iterations.numpy())
    (0.85, 2)
    """

    def __init__(self, learning_rate, name, clipnorm=None, clipvalue=None,
                 global_clipnorm=None):
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of clipnorm, clipvalue and global_clipnorm can be set: they are "
                "three different ways of clipping gradients. Pick one.")
        for label, c in (("clipnorm", clipnorm), ("clipvalue", clipvalue),
                         ("global_clipnorm", global_clipnorm)):
            if c is not None and not c > 0:
                raise ValueError(f"{label} must be a positive number, got {c!r}.")
        self.name = name
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.learning_rate = learning_rate
        self.iterations = Variable(0, trainable=False, dtype="int64", name=f"{name}/iterations")
        # variable id -> (the variable, {slot name: Variable}); the variable is kept so
        # that a copy of the optimizer (made with its model) re-keys its slots to the
        # copied variables (__setstate__), never sharing them with the originals
        self._slots = {}
        self._slot_order = []     # slot Variables in creation order, for .variables
        self._copied_from = {}    # in a deepcopy: original variable id -> its copy's id

    # learning rate -----------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The current learning rate (a schedule is evaluated at the current iteration)."""
        lr = self._learning_rate
        if callable(lr):
            # a schedule takes the iteration count; a zero-argument callable (Keras
            # accepts one too) is called as it is, at each step
            value = lr(int(self.iterations._value)) if self._lr_takes_step else lr()
            return float(_plain(value))
        return lr

    @learning_rate.setter
    def learning_rate(self, value):
        if callable(value):
            self._lr_takes_step = _takes_step(value)
        else:
            try:
                # (float() of a tensor: inside nt.function a traced rate is refused at
                # the user's line, since a replay never runs this setter again)
                value = float(value)
            except (TypeError, ValueError):
                raise TypeError(
                    f"learning_rate must be a number or a schedule (a callable of the "
                    f"iteration count), not {type(value).__name__}.") from None
            if value < 0:
                raise ValueError(f"learning_rate must be >= 0, got {value}.")
        self._learning_rate = value

    # state -------------------------------------------------------------------------------------
    @property
    def variables(self):
        """``iterations`` followed by every slot variable, in creation order."""
        return [self.iterations] + list(self._slot_order)

    def slot(self, variable, name):
        """The optimizer's state ``name`` (e.g. ``"m"``) for ``variable``, created as zeros."""
        entry = self._slots.get(variable._id)
        if self._copied_from:
            entry = self._claim(variable, entry)
        if entry is None:
            entry = self._slots[variable._id] = (variable, {})
        slots = entry[1]
        s = slots.get(name)
        if s is None:
            s = Variable(np.zeros(variable.shape, dtype=variable.dtype), trainable=False,
                         name=f"{variable.name}/{name}")
            slots[name] = s
            self._slot_order.append(s)
        return s

    def __setstate__(self, state):
        # copy.deepcopy and pickle: the slots belong to the variables they were copied
        # with, whose identities (_id) are new, so key them again
        self.__dict__.update(state)
        self._slots = {v._id: (v, slots) for v, slots in self._slots.values()}
        self._copied_from = {}

    def __deepcopy__(self, memo):
        # A copy made alone (copy.deepcopy(opt)) is then used with the original
        # variables, a copy made with its model with the model's copies: which one
        # cannot be told here (the model may be copied after the optimizer).  So each
        # copied state remembers the variable it was copied from, and the first of the
        # two to take a step with this optimizer takes it over (the other starts
        # afresh, never sharing it): the step counter and the slots go on together.
        # (Only within a process: pickle's _ids would name other variables elsewhere.)
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        old_ids = list(self._slots)
        new.__setstate__(copy.deepcopy(self.__dict__, memo))
        new._copied_from = {old: v._id for old, (v, _) in zip(old_ids, new._slots.values())}
        return new

    def _claim(self, variable, entry):
        """The copied state that ``variable`` (a copy's variable or its original) takes over."""
        copies = self._copied_from
        if entry is not None:               # the copied variable steps: its original may not
            for old in [o for o, n in copies.items() if n == variable._id]:
                del copies[old]
            return entry
        new_id = copies.pop(variable._id, None)
        taken = self._slots.pop(new_id, None) if new_id is not None else None
        if taken is None:
            return None
        entry = self._slots[variable._id] = (variable, taken[1])
        return entry

    # applying gradients --------------------------------------------------------------------------
    @user_facing
    def apply_gradients(self, grads_and_vars):
        """Update each variable from its gradient; ``None`` gradients are skipped with a warning.

        Returns the ``iterations`` counter after the update.
        """
        pairs = list(grads_and_vars)
        for g, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError(
                    f"apply_gradients updates nt.Variable objects, but got a "
                    f"{type(v).__name__} paired with a gradient. Pass zip(grads, variables) "
                    "with the variables themselves (e.g. model.trainable_variables), not "
                    "values computed from them.")
        missing = [v.name for g, v in pairs if g is None]
        if missing and len(missing) == len(pairs):
            raise ValueError(
                f"No gradients provided for any variable ({missing}): every gradient is "
                "None, so the loss does not depend on these variables as recorded. Check "
                "that the loss was computed inside the tape from the variables (not from "
                "np.asarray copies); tape.explain(loss, variable) says where the path breaks.")
        if missing:
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the loss, "
                "so they were not updated. A None gradient means the loss does not depend "
                "on the variable as recorded; tape.explain(loss, variable) says why.",
                UserWarning, stacklevel=3)   # past @user_facing
        pairs = [(g, v) for g, v in pairs if g is not None]
        variables = [v for _, v in pairs]
        if tracing():
            return self._traced_update(pairs, variables)
        grads = [self._checked(g, v) for g, v in pairs]
        grads = self._clip(grads)
        lr = self.learning_rate
        for g, v in zip(grads, variables):
            self._update(v, g, lr)
        self.iterations.assign_add(1)
        return self.iterations

    def _traced_update(self, pairs, variables):
        # the same update on tensors, seen by nt.function's tracer alone (no tape
        # records an update); a learning rate changed later traces again (a guard)
        with only_recording_all():
            for rec in tls.stack:
                rec.guard(self, "_learning_rate")
            grads = [self._checked(g, v, traced=True) for g, v in pairs]
            grads = self._clip(grads)
            lr = self._learning_rate
            if callable(lr):
                # a schedule of the (traced) iteration count, or a callable of nothing
                lr = lr(self.iterations.value()) if self._lr_takes_step else lr()
                lr = lr if isinstance(lr, TensorLike) else float(_plain(lr))
            for g, v in zip(grads, variables):
                self._update(v, g, lr)
            self.iterations.assign_add(1)
        return self.iterations

    def apply(self, grads, variables):
        """``apply_gradients(zip(grads, variables))`` (Keras 3's spelling)."""
        return self.apply_gradients(zip(grads, variables))

    def minimize(self, loss, var_list, tape=None):
        """Compute the gradient of ``loss`` and apply it.

        ``loss`` is a zero-argument callable (run under a new tape), or a tensor
        computed under ``tape``.

        >>> import nbtape as nt
        >>> x = nt.Variable(3.0)
        >>> opt = nt.optimizers.SGD(learning_rate=0.25)
        >>> _ = opt.minimize(lambda: x * x, [x])
        >>> float(x.numpy())
        1.5
        """
        from ..tape.gradient_tape import GradientTape
        if callable(loss):
            with GradientTape() as tape:
                value = loss()
        elif tape is None:
            raise ValueError(
                "minimize() got a loss tensor but no tape: pass the GradientTape that "
                "recorded it (minimize(loss, var_list, tape=tape)), or pass the loss as a "
                "function of no arguments so that minimize records it itself.")
        else:
            value = loss
        var_list = list(var_list)
        grads = tape.gradient(value, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def _checked(self, g, v, traced=False):
        g = g if traced and isinstance(g, TensorLike) else _plain(g)
        if v.dtype.kind not in "fc":
            raise InvalidArgumentError(
                f"{type(self).__name__} cannot update variable {v.name!r}: its dtype is "
                f"{v.dtype}, and an optimizer step (a fraction of the gradient) would be "
                "truncated to integers. Make it a float variable (nt.Variable(1.0), or "
                "dtype='float32'), or leave it out of the variables you pass.")
        if g.dtype.kind not in "biufc":
            raise InvalidArgumentError(
                f"the gradient for variable {v.name!r} is a {type(g).__name__} of dtype "
                f"{g.dtype}, not numbers; pass the gradients tape.gradient returned.")
        if g.dtype.kind == "c" and v.dtype.kind != "c":
            raise InvalidArgumentError(
                f"the gradient for variable {v.name!r} is complex ({g.dtype}) but the "
                f"variable is real ({v.dtype}): updating it would drop the imaginary part. "
                "Pass a real gradient (np.real(g) if that is what you mean), or make the "
                "variable complex.")
        if g.shape != v.shape:
            raise ValueError(
                f"the gradient for variable {v.name!r} has shape {g.shape}, but the variable "
                f"has shape {v.shape}; each gradient must match its variable. Check that "
                "grads and variables are zipped in the same order.")
        if g.dtype != v.dtype:
            g = g.astype(v.dtype)
        return g

    def _clip(self, grads):
        if self.clipnorm is not None:
            return [clip_by_norm(g, self.clipnorm) for g in grads]
        if self.clipvalue is not None:
            return [np.clip(g, -self.clipvalue, self.clipvalue) for g in grads]
        if self.global_clipnorm is not None:
            return clip_by_global_norm(grads, self.global_clipnorm)[0]
        return grads

    @abc.abstractmethod
    def _update(self, variable, gradient, lr):
        """Apply one step to ``variable`` from its (clipped, plain-array) ``gradient``."""

    def __repr__(self):
        return (f"<nt.optimizers.{type(self).__name__} "
                f"learning_rate={number(self.learning_rate)}>")


class SGD(Optimizer):
    """Gradient descent, optionally with (Nesterov) momentum, as ``keras.optimizers.SGD``.

    Without momentum: ``v -= lr * g``.  With momentum ``mu``: the velocity
    ``m = mu * m - lr * g``, then ``v += m`` (or ``v += mu * m - lr * g`` with
    ``nesterov=True``).

    >>> import nbtape as nt
    >>> w = nt.Variable(1.0)
    >>> opt = nt.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     _ = opt.apply_gradients([(nt.constant(1.0), w)])
    >>> round(float(w.numpy()), 6)       # 1 - 0.1 - (0.09 + 0.1)
    0.71
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        if not 0.0 <= float(momentum) <= 1.0:
            raise ValueError(f"`momentum` must be a float between [0, 1], got {momentum}.")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _update(self, variable, g, lr):
        lr = _weak(lr, g)
        if self.momentum == 0.0:
            variable.assign_sub(g * lr)
            return
        m = self.slot(variable, "momentum")
        m_new = _now(m) * self.momentum - g * lr
        m.assign(m_new)
        if self.nesterov:
            variable.assign_add(m_new * self.momentum - g * lr)
        else:
            variable.assign_add(m_new)


class Adam(Optimizer):
    """Adam, as ``keras.optimizers.Adam`` (defaults lr 0.001, betas 0.9/0.999, epsilon 1e-7).

    Keras's form of the update: ``m += (g - m)(1 - beta_1)``,
    ``v += (g^2 - v)(1 - beta_2)``,
    ``alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)`` and
    ``var -= alpha * m / (sqrt(v) + epsilon)``, so epsilon is added to the
    uncorrected ``sqrt(v)``.  ``amsgrad=True`` uses the running maximum of ``v``.

    >>> import nbtape as nt
    >>> w = nt.Variable(1.0)
    >>> _ = nt.optimizers.Adam(learning_rate=0.1).apply_gradients([(2.0, w)])
    >>> round(float(w.numpy()), 6)      # the first step is about lr, whatever g's size
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="Adam", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        self.epsilon = float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _update(self, variable, g, lr):
        it = _now(self.iterations)
        step = it + 1 if isinstance(it, TensorLike) else int(it) + 1
        b1, b2 = self.beta_1, self.beta_2
        # np.power, not **: a traced replay computes beta**t with np.power on an int64
        # array, whose result can differ from Python's float ** int in the last bit
        alpha = lr * np.sqrt(1.0 - np.power(b2, step)) / (1.0 - np.power(b1, step))
        m, v = self.slot(variable, "m"), self.slot(variable, "v")
        m_now, v_now = _now(m), _now(v)
        m_new = m_now + (g - m_now) * (1.0 - b1)
        v_new = v_now + (np.square(g) - v_now) * (1.0 - b2)
        m.assign(m_new)
        v.assign(v_new)
        if self.amsgrad:
            v_hat = self.slot(variable, "v_hat")
            v_new = np.maximum(_now(v_hat), v_new)
            v_hat.assign(v_new)
        variable.assign_sub(m_new * alpha / (np.sqrt(v_new) + self.epsilon))


class RMSprop(Optimizer):
    """RMSprop, as ``keras.optimizers.RMSprop`` (defaults lr 0.001, rho 0.9, epsilon 1e-7).

    ``a = rho * a + (1 - rho) g^2``; the step is ``lr * g / sqrt(a + epsilon)``
    (with ``centered=True``, ``a`` minus the squared running mean of ``g``),
    optionally accumulated with ``momentum``.

    >>> import nbtape as nt
    >>> w = nt.Variable(1.0)
    >>> _ = nt.optimizers.RMSprop(learning_rate=0.01).apply_gradients([(2.0, w)])
    >>> round(float(w.numpy()), 6)      # the first step is lr / sqrt(1 - rho)
    0.968377
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="RMSprop", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.momentum = float(rho), float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)

    def _update(self, variable, g, lr):
        rho = self.rho
        a = self.slot(variable, "velocity")
        a_new = rho * _now(a) + (1.0 - rho) * np.square(g)
        a.assign(a_new)
        denominator = a_new + self.epsilon
        if self.centered:
            mg = self.slot(variable, "average_gradient")
            mg_new = rho * _now(mg) + (1.0 - rho) * g
            mg.assign(mg_new)
            denominator = denominator - np.square(mg_new)
        increment = _weak(lr, g) * g / np.sqrt(denominator)
        if self.momentum > 0:
            mom = self.slot(variable, "momentum")
            mom_new = self.momentum * _now(mom) + increment
            mom.assign(mom_new)
            increment = mom_new
        variable.assign_sub(increment)
