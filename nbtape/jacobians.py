"""Jacobians from a tape: one reverse pass per target element (or per batch column)."""
import numpy as np

from ._state import suspended, tls
from .backward import backward, plan
from .structure import flatten, unflatten
from .tensor import Tensor, TensorLike


def _one_hot(shape, dtype, index):
    e = np.zeros(shape, dtype=dtype)
    e[index] = 1
    return e


def _stack_rows(rows, lead_shape, source, tensor_mode, policy):
    """Stack per-row gradients into ``lead_shape + source.shape`` (None if all unconnected)."""
    from .tape import UnconnectedGradients
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
            from .tape import _not_a_tensor
            raise TypeError(_not_a_tensor("jacobian", s, role="source"))
    return flat, [s._id for s in flat]


def tape_jacobian(tape, target, sources, policy):
    tape._check_usable("jacobian")
    flat, ids = _source_ids(tape, sources)
    tshape, tdtype = target.shape, target.dtype
    if tdtype.kind not in "fc":
        raise ValueError(f"the target's dtype is {tdtype}; only float targets have Jacobians.")
    rows = [[] for _ in flat]
    connected = target._id in tape._tracked
    with suspended(tape):
        tensor_mode = bool(tls.stack)
        planned = plan(tape._ops, ids)
        for index in np.ndindex(*tshape):
            adj = {}
            if connected:
                seeds = {target._id: _one_hot(tshape, tdtype, index)}
                adj = backward(tape._ops, seeds, ids, tensor_mode, planned=planned)
            for k, i in enumerate(ids):
                rows[k].append(adj.get(i))
    results = [_stack_rows(r, tshape, s, tensor_mode, policy) if s.dtype.kind in "fc"
               else _int_source(s) for r, s in zip(rows, flat)]
    tape._finish()
    return unflatten(sources, results)


def _int_source(source):
    import warnings
    from .tape import _int_source_message
    warnings.warn(_int_source_message(source), UserWarning, stacklevel=5)
    return None


def tape_batch_jacobian(tape, target, source, policy):
    tape._check_usable("batch_jacobian")
    if not isinstance(source, TensorLike):
        from .tape import _not_a_tensor
        raise TypeError(_not_a_tensor("batch_jacobian", source, role="source"))
    if source.dtype.kind not in "fc":
        tape._finish()
        return _int_source(source)
    tshape, sshape = target.shape, source.shape
    if not tshape or not sshape or tshape[0] != sshape[0]:
        raise ValueError(f"batch_jacobian needs target and source with the same leading batch "
                         f"dimension; got shapes {tshape} and {sshape}.")
    batch = tshape[0]
    connected = target._id in tape._tracked
    rows = []
    with suspended(tape):
        tensor_mode = bool(tls.stack)
        planned = plan(tape._ops, [source._id])
        for index in np.ndindex(*tshape[1:]):
            g = None
            if connected:
                seed = np.zeros(tshape, dtype=target.dtype)
                seed[(slice(None),) + index] = 1
                g = backward(tape._ops, {target._id: seed}, [source._id], tensor_mode,
                             planned=planned).get(source._id)
            rows.append(g)
    tape._finish()
    from .tape import UnconnectedGradients
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
