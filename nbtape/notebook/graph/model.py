"""What a picture of a tape is about, before any drawing: the tape read as a graph.

Leaves, producers and consumers of every tensor, the ops on a path from the
sources to the target, the adjoints of the latest gradient (or recomputed for
the picture while the tape still holds its values), tangents of a forward
accumulator, and each op's local partial derivatives.  Everything is keyed by
tape position and tensor id, never ``id()``, so the same tape reads the same.
"""
import contextlib

import numpy as np

from ...tape.view import not_recording
from ...core.registry import SEQUENCE, VARARGS
from ...core.structure import flatten
from ...core.tensor import Tensor, TensorLike


class Leaf:
    """A tensor that enters the tape without being computed on it."""

    __slots__ = ("tid", "index", "kind")

    def __init__(self, tid, index, kind):
        self.tid, self.index, self.kind = tid, index, kind   # kind: variable|watched|constant


@contextlib.contextmanager
def quiet():
    """Run rules for the picture with no recorder listening on this thread.

    >>> import nbtape as nt
    >>> x = nt.constant(2.0)
    >>> with nt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with quiet():
    ...         y = x * x
    >>> len(tape)
    0
    """
    with not_recording():
        yield


def ids_of(value, role):
    """The tensors and variables in a target/sources argument, in order.

    >>> import nbtape as nt
    >>> a, b = nt.constant(1.0), nt.Variable(2.0)
    >>> [t is a or t is b for t in ids_of({"a": a, "b": [b]}, "sources")]
    [True, True]
    """
    out = []
    for t in flatten(value):
        if not isinstance(t, TensorLike):
            raise TypeError(f"tape.graph() needs nbtape tensors or variables as {role}, not "
                            f"{type(t).__name__}: pass the same objects you would pass to "
                            "tape.gradient().")
        out.append(t)
    return out


def name_table(names):
    """``{tensor id: label}`` from ``{tensor: "y"}`` (or ``{"y": tensor}``).

    >>> import nbtape as nt
    >>> y = nt.constant(1.0)
    >>> name_table({y: "y"}) == name_table({"y": y}) == {y._id: "y"}
    True
    """
    if names is None:
        return {}
    if not hasattr(names, "items"):
        raise TypeError("names must be a dict such as {y: 'y'} (a tensor or variable to "
                        f"the label to show), not {type(names).__name__}.")
    table = {}
    for key, label in names.items():
        if isinstance(key, str) and isinstance(label, TensorLike):
            key, label = label, key
        if not isinstance(key, TensorLike):
            raise TypeError(f"names maps tensors or variables to labels; the key {key!r} "
                            "is neither. Use the object itself as the key: names={y: 'y'}.")
        table[key._id] = str(label)
    return table


def operand_arg(op, k):
    """The saved value of operand ``k`` of ``op`` (None when not kept).

    >>> import nbtape as nt
    >>> x = nt.Variable(2.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * 5.0
    >>> operand_arg(tape.ops[0], 1)
    5.0
    """
    args = op.args
    if args is None:        # a used tape's: gone, but for its small constants
        return op.small_constant(k)
    kind = op.rule.kind
    try:
        if kind is SEQUENCE or kind == SEQUENCE:
            return args[0][k]
        if kind is VARARGS or kind == VARARGS:
            return args[op.rule.start + k]
        return args[k]
    except (IndexError, TypeError, KeyError):
        return None


def _plain(v):
    return v._value if isinstance(v, TensorLike) else v


class TapeModel:
    """A tape read as a graph (cheap: one pass over the ops).

    >>> import numpy as np, nbtape as nt
    >>> x = nt.Variable(3.0, name="x")
    >>> with nt.GradientTape(persistent=True) as tape:
    ...     y = x * x
    ...     z = np.sin(y)
    >>> m = TapeModel(tape, names={z: "z"})
    >>> m.producer[z._id], m.name(z._id), m.name(x._id), float(m.value(y._id))
    ((1, 0), 'z', 'x', 9.0)
    >>> sorted(m.path([x._id], [z._id])[0])
    [0, 1]
    >>> [float(p) for p in m.partials(0)[0]]
    [3.0, 3.0]
    """

    def __init__(self, tape, names=None, objects=()):
        self.tape = tape
        self.ops = ops = list(tape.ops)
        self.names = name_table(names)
        self.objects = {o._id: o for o in objects}
        producer, consumers, leaves, links = {}, {}, {}, {}
        watched = tape.watched
        for i, op in enumerate(ops):
            for k, tid in enumerate(op.in_ids):
                if tid is None:
                    # An operand the tape did not track (a stop_gradient result, say) is
                    # a constant for this op; when its value was saved, link it to the
                    # op that computed it, so the picture can still draw where it came from.
                    orig = op.all_ids[k]
                    if orig is not None and orig in producer:
                        links[(i, k)] = orig
                    continue
                consumers.setdefault(tid, []).append((i, k))
                if tid not in producer and tid not in leaves:
                    w = watched.get(tid)
                    kind = "constant" if w is None else \
                        "variable" if w.kind == "variable" else "watched"
                    leaves[tid] = Leaf(tid, len(leaves), kind)
            for m, o in enumerate(op.out_ids):
                if o is not None and o not in producer:
                    producer[o] = (i, m)
        self.producer, self.consumers, self.leaves = producer, consumers, leaves
        self._paths = {}
        self.unused = set()     # sources drawn although no op used them
        self.links = links      # {(op, operand): tensor id} of untracked, computed operands
        self.link_users = {}
        for (i, _), tid in links.items():
            self.link_users.setdefault(tid, []).append(i)

    def add_leaf(self, tid):
        """Make source ``tid``, which the tape never used, a leaf of the picture."""
        if tid not in self.leaves and tid not in self.producer:
            obj = self.objects.get(tid)
            kind = ("variable" if self._variable(tid) is not None or hasattr(obj, "trainable")
                    else "watched")
            self.leaves[tid] = Leaf(tid, len(self.leaves), kind)
            self.unused.add(tid)

    def known(self, tid):
        return tid in self.producer or tid in self.leaves

    # names and values ---------------------------------------------------------------
    def name(self, tid):
        """The user's name for a tensor: ``names``, else a variable's own name."""
        if tid in self.names:
            return self.names[tid]
        var = self._variable(tid)
        if var is None:
            var = self.objects.get(tid)
        if var is not None and hasattr(var, "trainable"):
            return var.name
        return None

    def value(self, tid):
        """The tensor's value as a plain array, or None when the tape kept none."""
        obj = self.objects.get(tid)
        if obj is None:
            obj = self.tape.watched_object(tid)
            if self._variable(tid) is not None:
                obj = None      # a variable shows the value its (latest) use saw, below
        if obj is not None:
            return obj._value
        where = self.producer.get(tid)
        if where is not None:
            op = self.ops[where[0]]
            out = op.out if op.out is not None else op.ans
            if out is not None:
                return _plain(out[where[1]] if op.rule.multi else out)
        # the latest use first: a variable read in a loop shows the value the last
        # (drawn) iteration used
        for j, k in reversed(self.consumers.get(tid, ())):
            op = self.ops[j]
            arg = operand_arg(op, k)
            if isinstance(arg, Tensor):
                return arg._value
            if arg is not None and op.saved_id(k) == tid:
                return arg      # the tape saved the operand's array
        var = self._variable(tid)
        return var._value if var is not None else None

    def _variable(self, tid):
        w = self.tape.watched.get(tid)
        return self.tape.watched_object(tid) if w is not None and w.kind == "variable" else None

    def meta(self, tid):
        """``(shape, dtype)`` from any op that used the tensor, or None."""
        for j, k in self.consumers.get(tid, ()):
            m = self.ops[j].metas[k]
            if m is not None:
                return m
        v = self.value(tid)
        return (np.shape(v), np.asarray(v).dtype) if v is not None else None

    # paths ----------------------------------------------------------------------------
    def downstream(self, start, through_stop=False, ops=None):
        """Ops (positions) and tensors reachable forward from tensor ids ``start``."""
        if not through_stop and ops is None:     # the gradient's own reach, as backward's
            positions, reach = self.tape.reach(start)
            return set(positions), set(reach)
        reach, hit = set(start), set()
        for i in (range(len(self.ops)) if ops is None else sorted(ops)):
            op = self.ops[i]
            if op.rule.stop and not through_stop:
                continue
            for k, t in enumerate(op.in_ids):
                if t is None and through_stop:
                    t = self.links.get((i, k))
                if t is not None and t in reach:
                    hit.add(i)
                    reach.update(o for o in op.out_ids if o is not None)
                    break
        return hit, reach

    def upstream(self, targets, through_stop=False):
        """Ops (positions) and tensors the tensors ``targets`` depend on."""
        need, hit = set(targets), set()
        ops = self.ops
        for i in range(len(ops) - 1, -1, -1):
            op = ops[i]
            if op.rule.stop and not through_stop:
                continue
            for o in op.out_ids:
                if o is not None and o in need:
                    hit.add(i)
                    need.update(t for t in op.in_ids if t is not None)
                    if through_stop:
                        need.update(t for (j, _), t in self._links_of(i))
                    break
        return hit, need

    def _links_of(self, i):
        op = self.ops[i]
        return [((i, k), self.links[(i, k)]) for k, t in enumerate(op.in_ids)
                if t is None and (i, k) in self.links]

    def path(self, sources, targets):
        """Ops and tensors on a gradient path from ``sources`` to ``targets``."""
        key = (frozenset(sources), frozenset(targets))
        if key not in self._paths:
            f_ops, f_tensors = self.downstream(sources)
            b_ops, b_tensors = self.upstream(targets)
            self._paths[key] = (f_ops & b_ops, f_tensors & b_tensors)
        return self._paths[key]

    # gradients ---------------------------------------------------------------------
    def adjoints(self, target_ids, source_ids, path_tensors):
        """``(adjoints, note)``: the latest gradient's, or recomputed for the picture."""
        record = self.tape.last_gradient
        if record is not None and set(record.target_ids) == set(target_ids) \
                and set(source_ids) <= set(record.source_ids):
            adj = record.adjoints
            if record.complete or all(t in adj for t in path_tensors):
                return adj, None
        missing = self._recompute(target_ids, source_ids)
        if isinstance(missing, dict):
            return missing, None
        if record is not None and set(record.target_ids) == set(target_ids):
            return record.adjoints, ("gradients of intermediate values are kept only for "
                                     "tapes of up to 1000 ops; record with "
                                     "GradientTape(persistent=True) to see them all")
        return None, missing

    def _recompute(self, target_ids, source_ids):
        path_ops, _ = self.path(source_ids, target_ids)
        if any(self.ops[i].args is None for i in path_ops):
            return ("gradients are not shown: this tape freed its saved values in "
                    "gradient(); call tape.gradient(target, sources) with these target and "
                    "sources, or record with GradientTape(persistent=True)")
        seeds = {}
        for t in target_ids:
            v = self.value(t)
            m = self.meta(t)
            if v is None and m is None:
                return "gradients are not shown: the target's value is not known"
            shape, dtype = (np.shape(v), np.asarray(v).dtype) if v is not None else m
            seeds[t] = np.ones(shape, dtype=dtype)
        try:
            with quiet():
                adj = self.tape.adjoints(seeds, source_ids)
        except Exception as e:   # a missing rule: the picture still draws, and says so
            return f"gradients are not shown: {type(e).__name__}: {str(e)[:200]}"
        return {k: _plain(v) for k, v in adj.items()}

    # local derivatives ----------------------------------------------------------------
    def partials(self, i):
        """``(per-operand partials, problem)`` of op ``i``: d(result)/d(operand) for
        a scalar result, from the rule's VJP with g = 1; ``problem`` says why not."""
        op = self.ops[i]
        rule = op.rule
        n = len(op.in_ids)
        if rule.stop:
            return [None] * n, "stop"
        if rule.multi:
            return [None] * n, "multi"
        out = self.value(op.out_ids[0])
        if out is None or op.args is None:
            return [None] * n, "freed"
        if np.size(out) != 1:
            return [None] * n, "nonscalar"
        if not rule.has_vjp:
            return [None] * n, "norule"
        needs = [t is not None and m is not None and m[1].kind in "fc"
                 for t, m in zip(op.in_ids, op.metas)]
        try:
            with quiet():
                grads = self.tape.step_back(op, np.ones_like(out), needs)
            result = [np.asarray(g) if g is not None else None for g in grads]
        except Exception:   # a rule that needs a value the tape did not keep
            return [None] * n, "freed"
        return result, None

    def tangent(self, accumulator, tid):
        """The accumulator's tangent of ``tid``: an array, "norule", or None."""
        t = accumulator.tangents.get(tid)
        if t is None:
            return None
        if not isinstance(t, (np.ndarray, np.generic, TensorLike)) and hasattr(t, "where"):
            return "norule"
        return np.asarray(_plain(t))
