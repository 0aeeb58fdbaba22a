"""The reverse pass: one loop over the tape, newest op first (never recursive).

Cost is linear in the number of recorded ops.  Only ops that lie downstream of
a source are visited, and an op's output adjoint is dropped as soon as the op
has passed it on, so memory stays at what is live.
"""
import warnings
import weakref

import numpy as np

from ._where import LazyWhere, describe, source_line
from .arrays import SCALAR_METAS, UNIMPLEMENTED, is_foreign, unimplemented_error
from .breaks import ObjectArrayRule, object_array_error
from .errors import NoGradientRuleError
from .rules.util import unbroadcast
from .tensor import Tensor


_new = object.__new__
_meta = SCALAR_METAS.get
_ndarray = np.ndarray


class Op(LazyWhere):
    """One recorded operation: what its VJP needs, and where it happened (made by
    ``new_op``, which a tape calls for every op it records)."""

    __slots__ = ("rule", "args", "kwargs", "ans", "in_ids", "metas", "out_ids", "_where", "_out",
                 "all_ids", "raw_args")

    @property
    def name(self):
        return self.rule.name


    def saved_id(self, k):
        """The id of the tensor whose array the tape saved as ``args[k]`` (it keeps an
        operand tensor's array, not the tensor), or None."""
        ids = self.all_ids
        return ids[k] if self.raw_args and k < len(ids) else None

    @property
    def kept_output(self):
        """False when the op did not keep its output (a long tape, a big array)."""
        return self._out is not None

    @property
    def out(self):
        """The op's output (Tensor or tuple), or None once freed and collected."""
        out = self._out
        return out() if type(out) is weakref.ref else out

    def free(self, keep_output=False):
        """Drop saved values; the structure stays (for explain and pictures).  The
        output stays if ``keep_output``, else only while something else (the
        user's own variable) keeps it alive."""
        self.args = self.kwargs = self.ans = None
        out = self._out
        if not keep_output:
            self._out = weakref.ref(out) if type(out) is Tensor else None


def new_op(rule, args, kwargs, ans, in_ids, metas, out_ids, where, out, all_ids, raw_args):
    """An ``Op``, its slots filled without an ``__init__`` frame (one per recorded op).

    ``where`` is ``(code, lasti)`` until first asked for, then decoded; ``out`` the
    output tensor(s), kept on small tapes for pictures; ``all_ids`` the operand ids
    before untracked ones became None (pictures link them to their ops), None when equal
    to ``in_ids``; ``raw_args`` True when ``args[k]`` is the array of the tensor
    ``all_ids[k]`` where that is not None (a single output's ``ans`` is always its
    array; ``saved_tensors`` rebuilds the tensors).

    >>> op = new_op(None, (1.0,), None, None, (7,), None, (8,), None, None, None, False)
    >>> op.all_ids, op.out_ids, op.kept_output
    ((7,), (8,), False)
    """
    op = _new(Op)
    op.rule = rule
    op.args = args
    op.kwargs = kwargs
    op.ans = ans
    op.in_ids = in_ids
    op.metas = metas
    op.out_ids = out_ids
    op._where = where
    op._out = out
    op.all_ids = all_ids if all_ids is not None else in_ids
    op.raw_args = raw_args
    return op


def _tensor_with_id(value, tid):
    t = Tensor(value)
    t._id = tid     # the recorded tensor again: a recorder sees the same id
    return t


def saved_tensors(op):
    """``(args, ans)`` of ``op`` with its operands and output as the recorded tensors
    (the tape saves their arrays), for a pass that records itself.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * 3.0
    >>> args, _ = saved_tensors(tape.ops[0])
    >>> args[0]._id == tape.ops[0].in_ids[0], float(args[0]), args[1]
    (True, 2.0, 3.0)
    """
    args, ans = op.args, op.ans
    if op.raw_args:
        args = tuple(_tensor_with_id(a, op.saved_id(k)) if op.saved_id(k) is not None
                     and a is not None and type(a) is not Tensor else a
                     for k, a in enumerate(args))
    if ans is not None and not op.rule.multi and type(ans) is not Tensor:
        ans = _tensor_with_id(ans, op.out_ids[0])
    return args, ans


def raw_value(a):
    t = type(a)
    if t is Tensor:
        return a._value
    if t is list:
        return [x._value if type(x) is Tensor else x for x in a]
    return a


def raw_output(ans):
    if type(ans) is Tensor:
        return ans._value
    if isinstance(ans, (tuple, list)):
        return type(ans)(*[raw_value(a) for a in ans]) if hasattr(ans, "_fields") \
            else type(ans)(raw_value(a) for a in ans)
    return ans


def call_vjp(rule, g, ans, args, kwargs, needs):
    """Adjoints of the rule's operands, a new list (``None`` where not needed)."""
    kw = kwargs or {}
    if rule.vjp_all is not None:
        return [r if n else None for r, n in zip(rule.vjp_all(g, ans, args, kw, needs), needs)]
    if rule.zero:
        return [np.zeros_like(g) if n else None for n in needs]
    vjps = rule.vjps
    return [vjps[k](g, ans, *args, **kw) if n and vjps[k] is not None else None
            for k, n in enumerate(needs)]


def _no_rule(op):
    if isinstance(op.rule, ObjectArrayRule):
        return object_array_error(op.rule)
    where = op.where
    line = source_line(where)
    at = describe(where) + (f": {line}" if line else "")
    return NoGradientRuleError(
        f"nbtape has no gradient rule for {op.rule.name}, and the gradient you asked "
        f"for flows through it (called at {at}). Rewrite that step with functions "
        "nbtape can differentiate (nt.coverage() lists them), wrap it in "
        "@nt.custom_gradient with your own derivative, or cut the path with "
        "nt.stop_gradient if no gradient should flow there.")


def forward_reach(ops, source_ids):
    """The ops downstream of the sources, and every id they reach.

    Returns ``(positions, reach)``: the tape positions of those ops in tape order,
    and ``{id: position of the op that first reached it}`` (``None`` for a source).
    ``backward`` visits only these ops; a Jacobian computes them once for all its
    rows; explain and the pictures follow the same reach.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    ...     z = y + 1.0
    >>> x_id, = tape.watched            # the ids of what the tape watches
    >>> forward_reach(tape.ops, [x_id])[0]
    [0, 1]
    """
    reach = dict.fromkeys(source_ids)
    positions = []
    for k, op in enumerate(ops):
        if op.rule.stop:
            continue
        for i in op.in_ids:
            if i is not None and i in reach:
                positions.append(k)
                for o in op.out_ids:
                    if o is not None and o not in reach:
                        reach[o] = k
                break
    return positions, reach


def backward_steps(ops, target_ids, source_ids):
    """Positions of the ops the reverse pass visits from the targets back to the
    sources, in its order (newest first).

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    ...     z = y + x
    >>> x_id, = tape.watched
    >>> z_id = tape.ops[-1].out_ids[0]
    >>> backward_steps(tape.ops, [z_id], [x_id])
    [1, 0]
    """
    positions, _ = forward_reach(ops, source_ids)
    need = set(target_ids)
    steps = []
    for k in reversed(positions):
        op = ops[k]
        if any(o is not None and o in need for o in op.out_ids):
            steps.append(k)
            need.update(i for i in op.in_ids if i is not None)
    return steps


def reverse_step(op, g, needs, tensor_mode=False):
    """One step of the reverse pass: the adjoint ``g`` of ``op``'s output (a tuple
    for a multi-output op) becomes one adjoint per operand, ``None`` where ``needs``
    says it is not wanted, each with its operand's shape and dtype.

    In ``tensor_mode`` the rule computes on the saved Tensors (so that a recorder
    sees it); otherwise on plain arrays.
    """
    kwargs = op.kwargs
    if tensor_mode:
        args, ans = saved_tensors(op)
    else:
        args, ans = op.args, op.ans
        if ans is not None:         # most rules keep no output: spare the call
            ans = raw_output(ans)
        args = [a._value if type(a) is Tensor else (raw_value(a) if type(a) is list else a)
                for a in args]
        if kwargs:
            kwargs = {k: raw_value(v) for k, v in kwargs.items()}
    try:
        grads = call_vjp(op.rule, g, ans, args, kwargs, needs)     # a new list
    except FutureWarning as w:      # raised only in a lazy pass (see backward)
        if UNIMPLEMENTED not in str(w):
            raise
        raise unimplemented_error(op.rule.name, w) from None
    metas = op.metas
    k = 0
    for gi in grads:    # in place, with no inner function: this runs for every op of a pass
        if gi is not None:
            m = metas[k]
            if getattr(gi, "shape", None) != m[0] or gi.dtype != m[1]:
                grads[k] = unbroadcast(gi, m[0], m[1])
        k += 1
    return grads


def take_adjoint(adj, op, keep):
    """``op``'s output adjoint, taken out of ``adj`` (left there for the ids in ``keep``):
    one array, or for a several-output op a list with None where none arrived; None
    when nothing arrived."""
    if not op.rule.multi:
        o = op.out_ids[0]
        return adj.get(o) if o in keep else adj.pop(o, None)
    gs = [(adj.get(o) if o in keep else adj.pop(o, None)) if o is not None else None
          for o in op.out_ids]
    return None if all(x is None for x in gs) else gs


def backward(ops, seeds, source_ids, tensor_mode, keep_all=False, reached=None):
    """Run the reverse pass; return ``{id: adjoint}`` for the sources reached.

    ``seeds`` maps target ids to their output gradients; with ``keep_all`` every
    adjoint is kept (for pictures), not just the sources'.  In ``tensor_mode``
    (another recorder is active) the rules compute on Tensors so that the outer
    recorder sees this pass; otherwise they run on plain arrays.  ``reached`` is
    ``forward_reach(ops, source_ids)`` when the caller already has it.
    """
    for s in seeds.values():
        if is_foreign(s._value if type(s) is Tensor else s):
            # a lazy (Dask) pass: a function Dask lacks would compute everything into
            # memory with a FutureWarning; make that an error naming the function
            with warnings.catch_warnings():
                warnings.filterwarnings("error", message=".*" + UNIMPLEMENTED,
                                        category=FutureWarning)
                return _backward(ops, seeds, source_ids, tensor_mode, keep_all, reached)
    return _backward(ops, seeds, source_ids, tensor_mode, keep_all, reached)


def _backward(ops, seeds, source_ids, tensor_mode, keep_all, reached):
    positions, reach = reached if reached is not None else forward_reach(ops, source_ids)
    keep = reach if keep_all else set(source_ids)
    adj = dict(seeds)
    for k in reversed(positions):
        op = ops[k]
        rule = op.rule
        out_ids = op.out_ids
        if not rule.multi:       # take_adjoint, inlined: this runs once per op of a pass
            oid = out_ids[0]
            g = adj.get(oid) if oid in keep else adj.pop(oid, None)
            if g is None:
                continue
        else:
            gs = take_adjoint(adj, op, keep)
            if gs is None:
                continue
            ans = op.ans if tensor_mode else raw_output(op.ans)
            g = [x if x is not None else np.zeros_like(a) for x, a in zip(gs, ans)]
            g = type(ans)(*g) if hasattr(ans, "_fields") else type(ans)(g)
        vjps = rule.vjps
        if vjps and not tensor_mode and rule.vjp_all is None and not rule.zero:
            # reverse_step inlined for its common case (a positional rule on plain
            # arrays): this loop runs once per op of a pass, and each call shows
            _positional_step(op, vjps, g, reach, adj)
            continue
        if not rule.has_vjp:
            raise _no_rule(op)
        in_ids = op.in_ids
        needs = [i is not None and i in reach for i in in_ids]
        for i, gi in zip(in_ids, reverse_step(op, g, needs, tensor_mode)):
            if gi is not None:
                if i in adj:
                    adj[i] = adj[i] + gi
                else:
                    adj[i] = gi
    return adj


def _positional_step(op, vjps, g, reach, adj):
    """``reverse_step`` for a positional rule on plain arrays, adding each operand's
    adjoint into ``adj``: what ``call_vjp`` and ``reverse_step`` do, without the lists."""
    ans = op.ans
    if ans is not None:
        ans = raw_output(ans)
    args = op.args
    if len(args) == 2:
        a, b = args
        ta, tb = type(a), type(b)
        args = (a._value if ta is Tensor else (raw_value(a) if ta is list else a),
                b._value if tb is Tensor else (raw_value(b) if tb is list else b))
    elif len(args) == 1:
        a = args[0]
        ta = type(a)
        args = (a._value if ta is Tensor else (raw_value(a) if ta is list else a),)
    else:
        args = [a._value if type(a) is Tensor else (raw_value(a) if type(a) is list else a)
                for a in args]
    kwargs = op.kwargs
    if kwargs:
        kwargs = {k: raw_value(v) for k, v in kwargs.items()}
    metas = op.metas
    k = 0
    for i in op.in_ids:
        if i is not None and i in reach:
            f = vjps[k]
            if f is not None:
                try:
                    gi = f(g, ans, *args, **kwargs) if kwargs else f(g, ans, *args)
                except FutureWarning as w:      # raised only in a lazy pass (see backward)
                    if UNIMPLEMENTED not in str(w):
                        raise
                    raise unimplemented_error(op.rule.name, w) from None
                if gi is not None:
                    m = metas[k]
                    t = type(gi)
                    if t is _ndarray:
                        if gi.shape != m[0] or gi.dtype != m[1]:
                            gi = unbroadcast(gi, m[0], m[1])
                    # a numpy scalar of the operand's own type has the (shape, dtype) of
                    # the table the tape took the metas from: no need to read them off it
                    elif _meta(t) is not m and (
                            getattr(gi, "shape", None) != m[0] or gi.dtype != m[1]):
                        gi = unbroadcast(gi, m[0], m[1])
                    if i in adj:
                        adj[i] = adj[i] + gi
                    else:
                        adj[i] = gi
        k += 1


def free_ops(ops, keep_output=False):
    """``op.free(keep_output)`` for every op of a tape, in one loop (a used
    non-persistent tape frees all its ops at once)."""
    for op in ops:
        op.args = op.kwargs = op.ans = None
        if not keep_output:
            out = op._out
            op._out = weakref.ref(out) if type(out) is Tensor else None
