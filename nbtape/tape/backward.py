"""The reverse pass: one loop over the tape, newest op first (never recursive).

Cost is linear in the number of recorded ops.  Only ops that lie downstream of
a source are visited, and an op's output adjoint is dropped as soon as the op
has passed it on, so memory stays at what is live.
"""
import sys
import warnings

import numpy as np

from ..diagnostics.user_line import describe, source_line
from ..core.arrays import SCALAR_METAS, UNIMPLEMENTED, is_foreign, unimplemented_error
from .breaks import ObjectArrayRule, object_array_error
from ..diagnostics.errors import NbtapeError, NoGradientRuleError, NumericsError, shown_from_user
from .nan_patterns import derivative_raised
from .records import ANS, ARGS, IN_IDS, OUT_IDS, RAW_ARGS, RULE, WHERE, saved_id
from .snapshot import check_kept, check_op
from ..rules.util import unbroadcast
from ..core.tensor import Tensor


_meta = SCALAR_METAS.get
_ndarray = np.ndarray


def _tensor_with_id(value, tid):
    t = Tensor(value)
    t._id = tid     # the recorded tensor again: a recorder sees the same id
    return t


def saved_tensors(op):
    """``(args, ans)`` of ``op`` (an ``Op`` view) with its operands and output as the
    recorded tensors (the tape saves their arrays), for a pass that records itself.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * 3.0
    >>> args, _ = saved_tensors(tape.ops[0])
    >>> args[0]._id == tape.ops[0].in_ids[0], float(args[0]), args[1]
    (True, 2.0, 3.0)
    """
    return _saved(op.rule, op.record)


def _saved(rule, rec):
    args, ans = rec[ARGS], rec[ANS]
    if rec[RAW_ARGS]:
        ids = [saved_id(rec, k) for k in range(len(args))]
        args = tuple(_tensor_with_id(a, i) if i is not None and a is not None
                     and type(a) is not Tensor else a for a, i in zip(args, ids))
    if ans is not None and not rule.multi and type(ans) is not Tensor:
        ans = _tensor_with_id(ans, rec[OUT_IDS][0])
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


def forward_reach(records, source_ids):
    """The ops downstream of the sources, and every id they reach.

    Returns ``(positions, reach)``: the tape positions of those ops in tape order,
    and ``{id: position of the op that first reached it}`` (``None`` for a source).
    ``backward`` visits only these ops; a Jacobian computes them once for all its
    rows; explain and the pictures follow the same reach.  ``records`` is the tape's
    ``Records`` (``tape.op_records``), as for every pass below.

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    ...     z = y + 1.0
    >>> x_id, = tape.watched            # the ids of what the tape watches
    >>> forward_reach(tape.op_records, [x_id])[0]
    [0, 1]
    """
    reach = dict.fromkeys(source_ids)
    positions = []
    stops = records.stops
    for k, (rule, _, _, _, in_ids, _, out_ids, _, _, _, _) in enumerate(records):
        if stops[rule]:
            continue
        for i in in_ids:
            if i is not None and i in reach:
                positions.append(k)
                for o in out_ids:
                    if o is not None and o not in reach:
                        reach[o] = k
                break
    return positions, reach


def whole_reach(records, tracked):
    """``forward_reach(records, sources)`` for sources that include every id the tape
    watches (its usual gradient: the loss against all its variables), without the walk:
    every recorded op had an operand the tape tracked, so every op but a stop is
    downstream of them, and what they reach is what the tape tracks (``tracked``, its
    live set: a pass a tape records into itself adds only ids no old op reads).

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    ...     z = nt.stop_gradient(y) + y
    >>> x_id, = tape.watched
    >>> list(whole_reach(tape.op_records, set())[0]) == forward_reach(tape.op_records, [x_id])[0]
    True
    """
    stops = records.stops
    positions = (range(len(records)) if not any(stops) else
                 [k for k, rec in enumerate(records) if not stops[rec[RULE]]])
    return positions, tracked


def backward_steps(records, target_ids, source_ids):
    """Positions of the ops the reverse pass visits from the targets back to the
    sources, in its order (newest first).

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * x
    ...     z = y + x
    >>> x_id, = tape.watched
    >>> z_id = tape.ops[-1].out_ids[0]
    >>> backward_steps(tape.op_records, [z_id], [x_id])
    [1, 0]
    """
    positions, _ = forward_reach(records, source_ids)
    need = set(target_ids)
    steps = []
    for k in reversed(positions):
        rec = records[k]
        if any(o is not None and o in need for o in rec[OUT_IDS]):
            steps.append(k)
            need.update(i for i in rec[IN_IDS] if i is not None)
    return steps


def reverse_step(op, g, needs, tensor_mode=False):
    """One step of the reverse pass: the adjoint ``g`` of ``op``'s output (a tuple
    for a multi-output op) becomes one adjoint per operand, ``None`` where ``needs``
    says it is not wanted, each with its operand's shape and dtype.  ``op`` is an
    ``Op`` view (``tape.ops[k]``).

    In ``tensor_mode`` the rule computes on the saved Tensors (so that a recorder
    sees it); otherwise on plain arrays.  It is the pass's own step (``_step``),
    collecting by operand position instead of adding into the pass's adjoints.

    >>> import numpy as np, nbtape as nt
    >>> x = nt.Variable([1.0, 2.0])
    >>> with nt.GradientTape() as tape:
    ...     y = x * 3.0
    >>> reverse_step(tape.ops[0], np.ones(2), [True, False])
    [array([3., 3.]), None]
    """
    rule = op.rule
    if not rule.has_vjp:
        raise _no_rule(op)
    check_op(op)
    grads = {}
    _step(rule, op.record, g, range(len(needs)), {k for k, n in enumerate(needs) if n},
          grads, tensor_mode)
    return [grads.get(k) for k in range(len(needs))]


def _step(rule, rec, g, keys, wanted, adj, tensor_mode):
    """The reverse step, the only one in the source: the adjoint ``g`` of the output of
    the op recorded as ``rec`` becomes one adjoint per operand, fitted to the operand's
    shape and dtype (``unbroadcast``) and added into ``adj[keys[k]]`` for each operand
    ``k`` whose key is in ``wanted``.  The pass gives the operand ids as keys and what
    its sources reach as ``wanted``; ``reverse_step`` gives operand positions.

    Written out for its common case (a positional rule with one or two arguments, on
    plain arrays): this runs once per op of every pass, and each call or list shows.
    """
    _, args, kwargs, ans, _, metas, _, _, _, _, _ = rec
    if tensor_mode:         # the saved arrays as the recorded tensors, for an outer recorder
        args, ans = _saved(rule, rec)
    else:
        if ans is not None:         # most rules keep no output: spare the call
            ans = raw_output(ans)
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
        if kwargs:
            kwargs = {k: raw_value(v) for k, v in kwargs.items()}
    vjps = rule.vjps
    grads = None
    try:
        if rule.vjp_all is not None or rule.zero:   # a whole-function rule: all at once
            grads = call_vjp(rule, g, ans, args, kwargs,
                             [i is not None and i in wanted for i in keys])
        k = 0
        for i in keys:
            if i is not None and i in wanted:
                if grads is not None:
                    gi = grads[k]
                else:
                    f = vjps[k]
                    gi = None if f is None else (
                        f(g, ans, *args, **kwargs) if kwargs else f(g, ans, *args))
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
    except FutureWarning as w:      # raised only in a lazy pass (see backward)
        if UNIMPLEMENTED not in str(w):
            raise
        raise unimplemented_error(rule.name, w) from None
    except FloatingPointError as e:     # np.errstate(...="raise") inside a rule
        raise derivative_error(rule.name, rec[WHERE], e, "backward pass") from None


def derivative_error(name, where, error, mode):
    """``error``, numpy's ``FloatingPointError`` from inside ``name``'s derivative, as
    nbtape's ``NumericsError`` naming it (one already nbtape's passes unchanged).

    >>> type(derivative_error("np.sqrt", None, FloatingPointError("divide by zero"),
    ...                       "backward pass")).__name__
    'NumericsError'
    """
    if isinstance(error, NbtapeError):
        return error
    return shown_from_user(NumericsError(derivative_raised(name, where, error, mode)))


def step_in_progress():
    """``(rule name, user's line)`` of the recorded op whose reverse step is running on
    this thread now (the innermost), or None: for an error raised from inside a step
    (``nt.check_numerics``) to name the forward op whose derivative it was computing.

    >>> step_in_progress() is None
    True
    """
    f = sys._getframe(1)
    while f is not None:
        if f.f_code is _step.__code__:
            local = f.f_locals
            return local["rule"].name, local["rec"][WHERE]
        f = f.f_back
    return None


def take_adjoint(adj, rule, rec, keep):
    """The output adjoint of the op recorded as ``rec``, taken out of ``adj`` (left there
    for the ids in ``keep``): one array, or for a several-output op a list with None
    where none arrived; None when nothing arrived."""
    out_ids = rec[OUT_IDS]
    if not rule.multi:
        o = out_ids[0]
        return adj.get(o) if o in keep else adj.pop(o, None)
    gs = [(adj.get(o) if o in keep else adj.pop(o, None)) if o is not None else None
          for o in out_ids]
    return None if all(x is None for x in gs) else gs


def backward(records, seeds, source_ids, tensor_mode, keep_all=False, reached=None):
    """Run the reverse pass; return ``{id: adjoint}`` for the sources reached.

    ``seeds`` maps target ids to their output gradients; with ``keep_all`` every
    adjoint is kept (for pictures), not just the sources'.  In ``tensor_mode``
    (another recorder is active) the rules compute on Tensors so that the outer
    recorder sees this pass; otherwise they run on plain arrays.  ``reached`` is
    ``forward_reach(records, source_ids)`` when the caller already has it.
    """
    for s in seeds.values():
        if is_foreign(s._value if type(s) is Tensor else s):
            # a lazy (Dask) pass: a function Dask lacks would compute everything into
            # memory with a FutureWarning; make that an error naming the function
            with warnings.catch_warnings():
                warnings.filterwarnings("error", message=".*" + UNIMPLEMENTED,
                                        category=FutureWarning)
                return _backward(records, seeds, source_ids, tensor_mode, keep_all, reached)
    return _backward(records, seeds, source_ids, tensor_mode, keep_all, reached)


def _backward(records, seeds, source_ids, tensor_mode, keep_all, reached):
    positions, reach = reached if reached is not None else forward_reach(records, source_ids)
    guards = records.guards     # the big plain operands kept by reference (most tapes: none)
    keep = reach if keep_all else set(source_ids)
    adj = dict(seeds)
    rules = records.rules
    for k in reversed(positions):
        rec = records[k]
        key, _, _, ans, in_ids, _, out_ids, _, _, _, _ = rec
        rule = rules[key]
        if not rule.multi:       # take_adjoint, inlined: this runs once per op of a pass
            oid = out_ids[0]
            g = adj.get(oid) if oid in keep else adj.pop(oid, None)
            if g is None:
                continue
        else:
            gs = take_adjoint(adj, rule, rec, keep)
            if gs is None:
                continue
            ans = ans if tensor_mode else raw_output(ans)
            g = [x if x is not None else np.zeros_like(a) for x, a in zip(gs, ans)]
            g = type(ans)(*g) if hasattr(ans, "_fields") else type(ans)(g)
        if not rule.vjps and not rule.has_vjp:
            raise _no_rule(records.view(k))
        if guards and k in guards:
            check_kept(records, k)
        _step(rule, rec, g, in_ids, reach, adj, tensor_mode)
    return adj
