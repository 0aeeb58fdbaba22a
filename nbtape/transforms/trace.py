"""``nt.function``'s tracer: a recorder that keeps every numpy call a step makes.

While ``nt.function`` traces, a ``Tracer`` sits at the bottom of the recording stack.
Every numpy call on tensors reaches it (dispatch offers it the calls no tape keeps too,
comparisons and ``argmax``: its ``records_all``), and so do the reads and assignments
of variables.  It turns them into *steps*: an input, a read of a variable (at replay
time, never its value at trace time), a call of a numpy function on earlier steps and
constants, an assignment of a variable.  A call whose arguments are all constants is
not kept: its result is a constant of the program too.

A gradient computed inside the traced function is computed on tensors (a tape computes
its pass that way while another recorder is active), so the backward pass's numpy
calls are steps as well: the program of a training step is its forward pass, its
backward pass and its update, one straight line of numpy calls.

Values are followed by identity: a step's result is known by its tensor, its tensor's
id, or its array (the backward pass wraps a saved array in a new tensor with the old
id; a tape's snapshot copy of an index or a mask is told to the tracer, ``note_copy``;
an integer a value picked, ``np.argmax``'s, is held as a 0-d array, the object an index
made of it is).  A rule that computes positions from an index in numpy gets the index
as a tensor of the program (``follow``), so that computation is recorded too.
Anything else the tracer does not know is a constant of the program (a literal, an
array made inside the step from constants, a closed-over array: ``program.captured``).  A value of the
program that leaves for Python (``float(t)``, ``bool(t)``, ``np.asarray(t)``) would be
frozen at its traced value: the tracer refuses the trace there (``TracingError``),
naming the user's line.  Text is the one way out it lets pass (``print(loss)`` in a step
is useful): it notes where (``note_shown``), and ``second_trace.check_shown`` refuses a
number parsed back out of the text.
"""
import inspect
from typing import NamedTuple

import numpy as np

from ..core.recorder import Listener
from ..core.state import next_id
from ..core.arrays import is_foreign
from ..core.tensor import Tensor
from ..core.variable import Variable
from ..diagnostics.errors import NbtapeError
from ..diagnostics.user_line import caller, describe, source_line
from ..tape.backward import step_in_progress
from .randomness import same_state, state_of
from .refusals import inside_nbtape, refusal_message


def wrap(value):
    """A new tensor of ``value`` (``Tensor(value)`` without its ``__init__`` call).

    >>> wrap(np.float64(2.0))
    nt.Tensor(2.0, shape=(), dtype=float64)
    """
    t = object.__new__(Tensor)
    t._value = value
    t._id = next_id()
    return t


class TracingError(NbtapeError, RuntimeError):
    """``nt.function`` refused a trace: the program would have frozen a value."""


class Slot:
    """A value of the program: the result of step ``n`` (in a step's arguments)."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return f"v{self.n}"


# the steps of a program, one kind each (``kind`` first: ``step[0]`` says which)
class Input(NamedTuple):
    """The program's argument ``label`` (a parameter's name), held in slot ``out``."""
    kind: str
    out: int
    label: str


class Read(NamedTuple):
    """A read of ``variable``'s value at replay time, into slot ``out``."""
    kind: str
    out: int
    variable: object


class Call(NamedTuple):
    """``out = fn(*args, **kwargs)`` (templates of ``Slot``s and constants); ``name`` is
    numpy's name, ``phase`` the pass (forward, backward), ``where`` the user's line."""
    kind: str
    out: object
    name: str
    fn: object
    args: tuple
    kwargs: object
    phase: str
    where: object = None


class Assign(NamedTuple):
    """``variable.how(src)`` (assign, assign_add, assign_sub; ``cur`` the slot of the
    value it updates), its new value in slot ``out``, of ``dtype``; ``fresh`` when
    numpy's result already is that new value (no cast)."""
    kind: str
    out: int
    variable: object
    how: str
    cur: object
    src: object
    dtype: object
    fresh: bool


# numpy functions whose Python result depends on shapes and dtypes only (part of the
# signature), never on values: a traced function may use them freely
_SHAPE_ONLY = frozenset(("shape", "ndim", "size", "result_type", "iscomplexobj",
                         "isrealobj", "min_scalar_type", "can_cast", "broadcast_shapes"))

_SUM_KEYWORDS = frozenset(("axis", "keepdims", "dtype"))
ADD_REDUCE = np.add.reduce      # (one bound method: one name in a program)

def _takes_nothing(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    try:
        sig.bind(0)
        return False
    except TypeError:
        pass
    try:
        sig.bind()
        return True
    except TypeError:
        return False


def kind_text(kind):
    """``(dtype, shape)`` as numpy's words for a value's type, ``float64[2, 3]``.

    >>> kind_text((np.dtype("float32"), (2, 3))), kind_text((np.dtype("int64"), ()))
    ('float32[2, 3]', 'int64')
    """
    if kind is None:
        return "?"
    dtype, shape = kind
    return f"{dtype}{list(shape)}" if shape else f"{dtype}"


def altered(v):
    """Another value of ``v``'s dtype and shape, every element different, most of them
    with more digits (what a checking trace shows as text: ``Tracer.note_shown``).

    >>> altered(np.array([0.5, -2.0])), altered(np.array([True, False])), altered(np.int16(7))
    (array([  6.5 , -19.75]), array([False,  True]), np.int16(71))
    """
    v = np.asarray(v)
    kind = v.dtype.kind
    with np.errstate(all="ignore"):
        if kind == "b":
            out = ~v
        elif kind in "iu":
            out = (v * 10 + 1).astype(v.dtype)
        elif kind in "fc":
            out = (v * 10.5 + 1.25).astype(v.dtype)
        else:
            return v
    return out if out.ndim else out[()]


def _kind(v):
    return (getattr(v, "dtype", None), np.shape(v))


class Tracer(Listener):
    """The recorder of a trace: ``steps`` is the program, in the order it ran.

    >>> import nbtape as nt
    >>> from nbtape.core.state import tls
    >>> tr = Tracer()
    >>> x = nt.constant([1.0, 2.0]); tr.add_input(x, "x")
    >>> tls.stack.append(tr)
    >>> y = np.sin(x) * 2.0
    >>> _ = tls.stack.pop()
    >>> [s[0] for s in tr.steps], tr.steps[2][2]
    (['input', 'call', 'call'], 'np.multiply')
    """

    __slots__ = ("steps", "before", "guards", "refused", "kinds", "created", "raised", "shown",
                 "alter", "watch", "drawn_at", "_calm", "_start",
                 "_by_obj", "_by_tid", "_by_arr",
                 "_keep", "_count", "_var_ids")
    records_all = True      # dispatch offers it the calls no tape keeps (comparisons)

    def __init__(self, alter=False, watch=None):
        self.steps = []
        self.before = {}        # id(variable) -> (variable, the tensor it held first)
        self.guards = []        # (object, attribute, value): a changed one retraces
        self.refused = None     # the first refusal (kept if the user's code caught it)
        self.kinds = {}         # slot -> (dtype, shape) of its value, for the listing
        self.created = False    # whether a variable made during the trace was used
        self.raised = None      # (name, where, error) of the first call on program values that raised
        self.shown = None       # the line where a value of the program was first shown as text
        self.alter = alter      # show other values as text (the trace that checks ``shown``)
        self.watch = watch      # (generator, its state): note where a draw from it shows
        self.drawn_at = None    # (the last call's line before the watched state moved, the first after)
        self._calm = None
        self._start = next_id()     # ids after it were made during the trace
        self._by_obj, self._by_tid, self._by_arr = {}, {}, {}
        self._keep = []         # what the maps key by id() stays alive while tracing
        self._count = 0
        self._var_ids = set()   # tensor ids that are variables (shared by every read)

    # the program's values ------------------------------------------------------------
    def _new(self, t):
        """A new slot holding the tensor ``t``."""
        n = self._count
        self._count += 1
        self._keep.append(t)
        self._by_obj[id(t)] = n
        if t._id not in self._var_ids:
            self._by_tid[t._id] = n
        v = t._value
        if isinstance(v, np.generic) and v.dtype.kind in "biu":
            # an integer picked by a value (np.argmax's): held as a 0-d array, the one
            # object an index made of it (x[i] unwraps it) is, so the tracer knows it
            v = t._value = np.asarray(v)
        if type(v) is np.ndarray:
            # (a tape's copy of it, for its backward pass, is told: note_copy)
            # the array is kept too: a tape may give the tensor a copy of its own later
            # (a view's result), and a freed array's id would be another's
            self._keep.append(v)
            self._by_arr[id(v)] = n
        self.kinds[n] = _kind(v)
        return n

    def find(self, a):
        """The slot holding ``a`` (a tensor or an array), or None for a constant."""
        t = type(a)
        if t is Tensor:
            n = self._by_obj.get(id(a))
            if n is None:
                if a._id not in self._var_ids:
                    n = self._by_tid.get(a._id)
                if n is None and type(a._value) is np.ndarray:
                    n = self._by_arr.get(id(a._value))
            return n
        if t is np.ndarray:
            return self._by_arr.get(id(a))
        if t is Variable:
            self.on_variable_read(a)
            return self.find(a._tensor)
        return None

    def note_copy(self, a, copy):
        """A tape kept ``copy`` of the array ``a`` (snapshot): if ``a`` is a value of the
        program, so is the copy (its backward pass reads the copy)."""
        n = self._by_arr.get(id(a))
        if n is not None:
            self._keep.append(copy)
            self._by_arr[id(copy)] = n

    def follow(self, a):
        """``a`` (a tensor or an array) as a tensor of the program, or None when it is
        not one of its values (``state.program_value``)."""
        n = self.find(a) if type(a) is not Variable else None
        if n is None:
            return None
        if type(a) is Tensor:
            return a
        t = wrap(a)
        self._by_tid[t._id] = n
        self._keep.append(t)
        return t

    def template(self, a):
        """``(template, dynamic)``: ``a`` with each value of the program a ``Slot`` and
        each constant tensor its array; ``dynamic`` when it holds a slot."""
        t = type(a)
        if t is Tensor or t is np.ndarray or t is Variable:
            n = self.find(a)
            if n is not None:
                return Slot(n), True
            return (a._value if t is Tensor else a), False
        if t is list or t is tuple:
            # (a loop, not comprehensions and any(): this runs for every recorded call)
            out, dynamic = [], False
            for x in a:
                x, d = self.template(x)
                out.append(x)
                dynamic = dynamic or d
            return t(out), dynamic
        if t is dict:
            out, dynamic = {}, False
            for k, x in a.items():
                out[k], d = self.template(x)
                dynamic = dynamic or d
            return out, dynamic
        return a, False

    def add_input(self, t, label):
        """``t`` (a tensor made of an argument) is the program's input ``label``."""
        self.steps.append(Input("input", self._new(t), label))

    def finish(self):
        if self.watch is not None:
            self._watch(end=True)
        self._keep = []

    def guard(self, obj, attr):
        """Retrace when ``obj.attr`` changes (an optimizer's learning rate); when it is a
        callable of no arguments (a learning rate read from elsewhere), when what it
        returns changes too (the replay calls it, as eager calls it at each step)."""
        value = getattr(obj, attr)
        self.guards.append((obj, attr, value))
        if callable(value) and _takes_nothing(value):
            self.guards.append((value, None, value()))

    # the hooks ---------------------------------------------------------------------
    def record(self, rule, args, kwargs, operands, ids, outs):
        if self.watch is not None:
            self._watch()
        targs, dynamic = self.template(tuple(args))
        tkw = None
        if kwargs is not None:
            tkw, dkw = self.template(dict(kwargs))
            dynamic = dynamic or dkw
        if not dynamic:
            return      # constants only: the result is a constant of the program
        fn = rule.fn if kwargs is not None else rule.compute
        if self._known(outs):
            # results the program already computed (custom_gradient's and
            # recompute_grad's: the calls of their function were recorded one by one)
            return
        if type(outs) is Tensor:
            out = self._new(outs)
        elif rule.name.rpartition(".")[2] in _SHAPE_ONLY:
            return
        elif isinstance(outs, (tuple, list)) and outs and all(
                type(o) is Tensor or o is None for o in outs):
            out = tuple(self._new(o) if o is not None else None for o in outs)
        elif outs is None:
            out = None
        else:
            self.refuse(
                "np.asarray", f"the Python value {rule.name} returned, computed from "
                "the function's arguments or variables,")
        if fn is np.sum and len(targs) == 1 and type(args[0]) is Tensor and \
                type(args[0]._value) is np.ndarray and set(tkw or ()) <= _SUM_KEYWORDS:
            # np.sum of an array is np.add.reduce (numpy's own wrapper calls it): the
            # replay skips the wrapper, the costlier half of a small sum
            fn = ADD_REDUCE      # (the program passes axis=None where np.sum's default was)
        # a reverse step runs inside the backward pass's _step: shown as its own phase
        phase = "backward" if step_in_progress() is not None else "forward"
        self.steps.append(Call("call", out, rule.name, fn, targs, tkw, phase, caller()))

    def _watch(self, end=False):
        # (only in the trace that looks for a draw's line: a state read per call)
        gen, state = self.watch
        if self.drawn_at is None:
            if not same_state(state, state_of(gen)):
                self.drawn_at = (self._calm, None if end else caller())
            elif not end:
                self._calm = caller()

    def _known(self, outs):
        if type(outs) is Tensor:
            return self.find(outs) is not None
        if isinstance(outs, (tuple, list)) and outs and all(type(o) is Tensor for o in outs):
            if all(self.find(o) is not None for o in outs):
                for o in outs:      # known under their new tensors' ids too
                    self._by_tid[o._id] = self.find(o)
                return True
        return False

    def on_variable_read(self, variable):
        self._read(variable, variable._tensor)

    def _read(self, variable, t):
        """A read of ``variable`` holding the tensor ``t`` (a new slot unless known)."""
        if id(t) in self._by_obj:
            return
        if is_foreign(t._value):
            self.refuse_foreign()
        if variable._id > self._start:
            self.created = True
        self._var_ids.add(variable._id)
        self.steps.append(Read("read", self._new(t), variable))

    def note_raised(self, rule, args, kwargs, error):
        """A numpy call raised: kept when it was a call on values of the program (if the
        function's own code catches it, the trace is refused: see ``raised_message``)."""
        if self.raised is None:
            dynamic = self.template(tuple(args))[1] or (
                kwargs is not None and self.template(dict(kwargs))[1])
            if dynamic:
                self.raised = (rule.name, caller(), error)

    def raised_message(self):
        """The refusal of a trace whose function caught a numpy error itself."""
        name, where, error = self.raised
        line = source_line(where) if where is not None else None
        at = "" if where is None else f" at {describe(where)}" + (
            f" (`{line.strip()}`)" if line else "")
        return (f"nt.function cannot trace this function: {name}{at} raised "
                f"{type(error).__name__} on a value of the traced call, and the "
                "function's own try/except caught it, so only the branch this call took "
                "was traced: every later call would replay that branch, whatever its "
                "values. Instead, decide outside the traced function (call it eagerly "
                "for the check, or pass the choice in as a Python argument: one trace per "
                "value), or compute both branches with numpy and choose with np.where. "
                "The variables were left as they were before this call.")

    def note_shown(self, value):
        """``value`` is about to be shown as text (``state.shown_value``): a value of the
        program is noted (``shown``, its line), and in a checking trace (``alter``) another
        value is shown, so that a number the function parses back out of the text
        differs from the first trace's (``second_trace.check_shown`` refuses it)."""
        t = value
        if type(t) is Variable:
            self.on_variable_read(t)
            t = t._tensor
        if type(t) is not Tensor or self.find(t) is None:
            return value
        if self.shown is None:
            self.shown = caller()
        if not self.alter or type(t._value) is not np.ndarray and not isinstance(
                t._value, np.generic):
            return value
        return wrap(altered(t._value))

    def note_escape(self, tensor, how):
        if self.find(tensor) is not None:
            self.refuse(how)

    def on_assign(self, variable, source, how, before):
        if self.watch is not None:
            self._watch()
        # (told after the assignment: ``variable`` holds its new value, ``before`` the old)
        if id(variable) not in self.before:
            self.before[id(variable)] = (variable, before)
        cur = None
        if how != "assign":
            self._read(variable, before)        # the value it updates
            cur = self.find(before)
        src, _ = self.template(source)
        raw = source._value if isinstance(source, Tensor) else source
        now = before._value
        # the new value is what numpy gives (cur + delta) when it already has the
        # variable's dtype and is an array; otherwise np.array casts it, as assign does
        fresh = how != "assign" and np.ndim(now) > 0 and np.result_type(now, raw) == now.dtype
        self._var_ids.add(variable._id)
        n = self._new(variable._tensor)         # its new value is this slot
        self.steps.append(Assign("assign", n, variable, how, cur, src, now.dtype, fresh))

    # refusals ----------------------------------------------------------------------
    def refuse(self, how, what=None):
        where = caller()
        msg = refusal_message(how, where) if what is None else refusal_message(how, where, what)
        inside = inside_nbtape() if what is None else ""
        if inside:
            line = source_line(where) if where is not None else None
            at = "" if where is None else f", reached from {describe(where)}" + (
                f" (`{line.strip()}`)" if line else "")
            msg = (f"nt.function cannot trace this function: nbtape's own {inside}{at} "
                   f"looks at a traced value in Python ({how}), so a replay would reuse "
                   "what it saw at this first call. Compute that part outside the traced "
                   "function (eagerly) and pass its result in as an argument. The "
                   "variables were left as they were before this call.")
        err = TracingError(msg)
        if self.refused is None:
            self.refused = err
        raise err

    def refuse_foreign(self):
        err = TracingError(
            "nt.function cannot trace Dask or CuPy arrays yet: their numpy calls build "
            "lazy graphs or run on a device, which a replay of numpy calls cannot "
            "reproduce. Call the function without nt.function (eagerly); everything "
            "else about it works the same. The variables were left as they were before "
            "this call.")
        if self.refused is None:
            self.refused = err
        raise err

    def restore(self):
        """Give every variable the trace assigned the value it had before the trace."""
        for variable, tensor in self.before.values():
            variable._tensor = tensor
