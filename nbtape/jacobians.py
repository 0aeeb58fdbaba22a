"""Jacobians from a tape: one reverse pass per target element (or per batch column).

The tape calls these with itself stepped aside (so nothing here is recorded) and
reads only its public view; using the tape up afterwards is the tape's own job.
"""
import numpy as np

from ._state import tls
from .backward import backward, forward_reach
from .errors import warn_user
from .structure import flatten, unflatten
from .tape_args import UnconnectedGradients, int_source_message, not_a_tensor_message
from .tensor import Tensor, TensorLike


def _one_hot(shape, dtype, index):
    e = np.zeros(shape, dtype=dtype)
    e[index] = 1
    return e


def _stack_rows(rows, lead_shape, source, tensor_mode, policy):
    """Stack per-row gradients into ``lead_shape + source.shape`` (None if all unconnected)."""
    if not rows:            # an empty target: an empty Jacobian
        return Tensor(np.zeros(lead_shape + source.shape, dtype=source.dtype))
    if all(r is None for r in rows):
        if policy is UnconnectedGradients.ZERO:
            return Tensor(np.zeros(lead_shape + source.shape, dtype=source.dtype))
        return None
    zero = np.zeros(source.shape, dtype=source.dtype)
    rows = [zero if r is None else r for r in rows]
    if tensor_mode:
        out = np.reshape(np.stack(rows), lead_shape + source.shape)
        return out if isinstance(out, Tensor) else Tensor(np.asarray(out))
    out = np.stack([np.asarray(r, dtype=source.dtype) for r in rows])
    return Tensor(out.reshape(lead_shape + source.shape))


def _source_ids(tape, sources):
    flat = flatten(sources)
    for s in flat:
        if not isinstance(s, TensorLike):
            raise TypeError(not_a_tensor_message("jacobian", s, role="source"))
    return flat, [s._id for s in flat]


def _as_target(method, target):
    """A tensor target; a plain number or array (it left the tape) is a constant, as in TF."""
    if isinstance(target, TensorLike):
        return target
    if isinstance(target, (int, float, complex, np.ndarray, np.generic)):
        return Tensor(np.asarray(target))
    raise TypeError(not_a_tensor_message(method, target, role="target"))


def tape_jacobian(tape, target, sources, policy):
    """``(the Jacobians, the float sources no path reached)``: see ``GradientTape.jacobian``."""
    flat, ids = _source_ids(tape, sources)
    target = _as_target("jacobian", target)
    tshape, tdtype = target.shape, target.dtype
    if tdtype.kind not in "fc":
        raise ValueError(f"the target's dtype is {tdtype}; only float targets have Jacobians.")
    rows = [[] for _ in flat]
    connected = tape.tracks(target)
    ops = list(tape.ops)     # a list: the rows index it many times
    tensor_mode = bool(tls.stack)
    reached = forward_reach(ops, ids)
    for index in np.ndindex(*tshape):
        adj = {}
        if connected:
            seeds = {target._id: _one_hot(tshape, tdtype, index)}
            adj = backward(ops, seeds, ids, tensor_mode, reached=reached)
        for k, i in enumerate(ids):
            rows[k].append(adj.get(i))
    results = [_stack_rows(r, tshape, s, tensor_mode, policy) if s.dtype.kind in "fc"
               else _int_source(s) for r, s in zip(rows, flat)]
    unconnected = [s for r, s in zip(rows, flat)
                   if s.dtype.kind in "fc" and all(g is None for g in r)]
    return unflatten(sources, results), unconnected


def _int_source(source):
    warn_user(int_source_message(source))
    return None


def tape_batch_jacobian(tape, target, source, policy):
    """The per-example Jacobians: see ``GradientTape.batch_jacobian``."""
    if not isinstance(source, TensorLike):
        raise TypeError(not_a_tensor_message("batch_jacobian", source, role="source"))
    target = _as_target("batch_jacobian", target)
    _check_batch_shapes(target.shape, source.shape)
    if source.dtype.kind not in "fc":
        return _int_source(source)
    tshape, sshape = target.shape, source.shape
    batch = tshape[0]
    connected = tape.tracks(target)
    rows = []
    ops = list(tape.ops)     # a list: the rows index it many times
    tensor_mode = bool(tls.stack)
    reached = forward_reach(ops, [source._id])
    for index in np.ndindex(*tshape[1:]):
        g = None
        if connected:
            seed = np.zeros(tshape, dtype=target.dtype)
            seed[(slice(None),) + index] = 1
            g = backward(ops, {target._id: seed}, [source._id], tensor_mode,
                         reached=reached).get(source._id)
        rows.append(g)
    if all(r is None for r in rows):
        if policy is UnconnectedGradients.ZERO:
            return Tensor(np.zeros((batch,) + tshape[1:] + sshape[1:], dtype=source.dtype))
        return None
    zero = np.zeros(sshape, dtype=source.dtype)
    rows = [zero if r is None else r for r in rows]
    # rows: one (batch,) + sshape[1:] gradient per target column
    stacked = np.stack(rows, axis=1)          # (batch, ncols) + sshape[1:]
    out = np.reshape(stacked, (batch,) + tshape[1:] + sshape[1:])
    return out if isinstance(out, Tensor) else Tensor(np.asarray(out, dtype=source.dtype))


def _check_batch_shapes(tshape, sshape):
    """Both need the same first (batch) axis; say which is wrong and what to use instead."""
    for role, shape in (("target", tshape), ("source", sshape)):
        if not shape:
            raise ValueError(
                f"batch_jacobian needs a {role} with a batch axis first (shape (batch, ...)), "
                f"but the {role} is a scalar (shape ()). It pairs row i of the target with "
                "row i of the source; for a scalar use tape.gradient(target, source), and "
                "for every derivative of any target tape.jacobian(target, source).")
    if tshape[0] != sshape[0]:
        raise ValueError(
            f"batch_jacobian pairs row i of the target with row i of the source, so both need "
            f"the same first (batch) axis; got target shape {tshape} and source shape "
            f"{sshape}. Use tape.jacobian(target, source) for the full Jacobian.")
