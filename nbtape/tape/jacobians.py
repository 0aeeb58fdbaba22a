"""Jacobians from a tape: one reverse pass over a batch of one-hot cotangents (``batched``).

Under another recorder (a Jacobian taken inside a tape, to be differentiated again)
each row runs its own reverse pass on tensors, so that the outer recorder sees it.
The tape calls these with itself stepped aside (so nothing here is recorded) and
reads only its public view; using the tape up afterwards is the tape's own job.
"""
import numpy as np

from ..core.state import tls
from .backward import backward, forward_reach
from .batched import backward_batched, chunk_size
from ..diagnostics.errors import warn_user
from ..core.structure import flatten, unflatten
from .arguments import UnconnectedGradients, int_source_message, not_a_tensor_message
from ..core.tensor import Tensor, TensorLike


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
    """``(the Jacobians, the float sources no path reached)``: see ``GradientTape.jacobian``.

    A nested target (a list, tuple or dict of targets, as TensorFlow takes) gives the
    same structure of Jacobians, one per target, each with the structure of ``sources``."""
    if isinstance(target, (list, tuple, dict)):
        parts = [tape_jacobian(tape, t, sources, policy) for t in flatten(target)]
        unconnected = list({id(s): s for p in parts for s in p[1]}.values())   # each once
        return unflatten(target, [p[0] for p in parts]), unconnected
    flat, ids = _source_ids(tape, sources)
    target = _as_target("jacobian", target)
    tshape, tdtype = target.shape, target.dtype
    if tdtype.kind not in "fc":
        raise ValueError(f"the target's dtype is {tdtype}; only float targets have Jacobians.")
    # a target that is a source is connected, watched or not (see GradientTape._seeds)
    connected = tape.tracks(target) or target._id in ids
    ops = tape.op_records
    tensor_mode = bool(tls.stack)
    reached = forward_reach(ops, ids)
    if not tensor_mode:
        size = _size(tshape)
        seeds = np.eye(size, dtype=tdtype).reshape((size,) + tshape)
        blocks = _batched(ops, target._id, seeds, ids, reached, connected)
        results = [_from_block(b, tshape, s, policy) if s.dtype.kind in "fc"
                   else _int_source(s) for b, s in zip(blocks, flat)]
        unconnected = [s for b, s in zip(blocks, flat) if s.dtype.kind in "fc" and b is None]
        return unflatten(sources, results), unconnected
    rows = [[] for _ in flat]
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


def _batched(ops, target_id, seeds, ids, reached, connected):
    """The adjoints ``(rows,) + source.shape`` of each id for the cotangents ``seeds``
    (one per row), a chunk of rows per reverse pass; None where no row reaches an id."""
    rows = seeds.shape[0]
    if not connected or not rows:
        return [None] * len(ids)
    step = chunk_size(rows, ops, reached, seeds[0].size)
    parts = [backward_batched(ops, {target_id: seeds[lo:lo + step]}, ids, reached)
             for lo in range(0, rows, step)]
    return [np.concatenate([p[i] for p in parts]) if i in parts[0] else None for i in ids]


def _from_block(block, lead_shape, source, policy):
    """A Jacobian tensor ``lead_shape + source.shape`` from a block of adjoint rows."""
    if block is None:
        if policy is UnconnectedGradients.ZERO or not _size(lead_shape):
            return Tensor(np.zeros(lead_shape + source.shape, dtype=source.dtype))
        return None
    return Tensor(np.asarray(block, dtype=source.dtype).reshape(lead_shape + source.shape))


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


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
    connected = tape.tracks(target) or target._id == source._id
    ops = tape.op_records
    tensor_mode = bool(tls.stack)
    reached = forward_reach(ops, [source._id])
    if not tensor_mode:
        # cotangent c is 1 at column c of every batch row: (columns, batch) + tshape[1:]
        cols = _size(tshape[1:])
        seeds = np.zeros((cols, batch, cols), dtype=target.dtype)
        seeds[np.arange(cols), :, np.arange(cols)] = 1
        (block,) = _batched(ops, target._id, seeds.reshape((cols,) + tshape), [source._id],
                            reached, connected)
        rows = [None] * cols if block is None else list(block)
    else:
        rows = []
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
